//! Measure the WARC reader against the floor (gzip inflate + SHA-1 of every decompressed
//! byte, single thread). Used by scripts/bench-warc-reader.sh.
//!
//! Usage: warc_bench floor|reader FILE

use std::fs::File;
use std::io::{BufReader, Read};
use std::time::Instant;

use flate2::read::MultiGzDecoder;
use sediment::warc::{DigestCheck, WarcReader};
use sha1::{Digest, Sha1};

fn floor(path: &str) -> String {
    let file = File::open(path).expect("open");
    let mut decoder = MultiGzDecoder::new(BufReader::with_capacity(2 << 20, file));
    let mut buf = vec![0u8; 1 << 20];
    let mut sha1 = Sha1::new();
    let mut total = 0u64;
    loop {
        let n = decoder.read(&mut buf).expect("inflate");
        if n == 0 {
            break;
        }
        sha1.update(&buf[..n]);
        total += n as u64;
    }
    let digest: [u8; 20] = sha1.finalize().into();
    format!("decompressed={total} sha1[0]={:02x}", digest[0])
}

fn reader(path: &str) -> String {
    let file = File::open(path).expect("open");
    let mut options = sediment::warc::ReaderOptions::default();
    if let Some(kb) = std::env::var("INFLATE_KB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        options.inflate_buffer = kb << 10;
    }
    let reader = WarcReader::with_options(file, options).expect("reader");
    let (mut records, mut errors, mut matched, mut payload) = (0u64, 0u64, 0u64, 0u64);
    for item in reader {
        match item {
            Ok(record) => {
                records += 1;
                if matches!(
                    record.digest_check,
                    DigestCheck::Match | DigestCheck::MatchDechunked
                ) {
                    matched += 1;
                }
                payload += record.payload.map_or(0, |p| p.length);
            }
            Err(_) => errors += 1,
        }
    }
    format!("records={records} errors={errors} digests_ok={matched} payload_bytes={payload}")
}

/// CPU seconds (user + system) used by this process so far, from /proc (Linux); the
/// machine is shared, so CPU time is steadier than wall time.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    // Clock ticks are 100 per second on Linux.
    Some((user + system) / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: warc_bench floor|reader FILE");
        std::process::exit(2);
    }
    let size = std::fs::metadata(&args[2]).expect("stat").len();
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let summary = match args[1].as_str() {
        "floor" => floor(&args[2]),
        "reader" => reader(&args[2]),
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => seconds,
    };
    println!(
        "{:<6} {:>8.1} MB/s per CPU second {:>8.1} MB/s wall  ({} bytes, {:.2} s CPU, {:.2} s wall; {summary})",
        args[1],
        size as f64 / 1e6 / cpu,
        size as f64 / 1e6 / seconds,
        size,
        cpu,
        seconds
    );
}
