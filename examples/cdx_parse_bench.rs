//! Micro-benchmark of the CDX line parser: generates a CDX of N lines (default 5,000,000)
//! in memory from the real lines of sandcrawler/example.cdx (digests, URLs and timestamps
//! varied per line) and parses it single-threaded, reporting lines per second for the
//! 11-column format, for the same data as CDXJ, for the line reader alone, and for `surt()`.
//!
//! Run: cargo run --release --example cdx_parse_bench [-- LINES [TEMPLATE.cdx]]
//! (TEMPLATE: another 11-column CDX whose lines serve as models, e.g. pywb's iana.cdx,
//! whose lines are shorter.) Rates are per CPU second of the benchmark thread, so other
//! processes on a shared machine count less. For profiling, CDX_BENCH_ONLY=generate |
//! parse | reader | hot runs one part only (`hot`: the first 64 KB parsed repeatedly).

use std::hint::black_box;
use std::time::Instant;

use sediment::cdx::lines::{LineReader, lines};
use sediment::cdx::{CdxLine, CdxParser};
use sediment::surt::surt_into;

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/sandcrawler/example.cdx"
);

const FALLBACK: &str = "edu,cmu,cs,adm,reports-archive)/anon/usr0/ftp/usr0/anon/2002/cmu-cs-02-119.pdf 20170706005950 http://reports-archive.adm.cs.cmu.edu/anon/usr0/ftp/usr0/anon/2002/CMU-CS-02-119.pdf application/pdf 200 MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V - - 361006 17120058 CITESEERX-CRAWL-2017-06-20-20170706004100259-00924-00932-wbgrp-svc284/CITESEERX-CRAWL-2017-06-20-20170706005946792-00926-31209~wbgrp-svc284.us.archive.org~8443.warc.gz";

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn generate(templates: &[Vec<String>], n: usize, cdxj: bool) -> Vec<u8> {
    const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::with_capacity(n * 300);
    for i in 0..n {
        let t = &templates[i % templates.len()];
        let r = rng.next();
        let digest: String = (0..32)
            .map(|k| char::from(B32[((r >> (k % 12 * 5)) as usize + k) % 32]))
            .collect();
        let ts = format!(
            "20{:02}{:02}{:02}{:02}{:02}{:02}",
            10 + r % 14,
            1 + r % 12,
            1 + r % 28,
            r % 24,
            r % 60,
            (r >> 8) % 60
        );
        let key = format!("{}/{}", t[0], i);
        let url = format!("{}/{}", t[2], i);
        let offset = r % 1_000_000_000;
        if cdxj {
            let status = if t[4] == "-" {
                String::new()
            } else {
                format!(", \"status\": \"{}\"", t[4])
            };
            out.extend_from_slice(
                format!(
                    "{key} {ts} {{\"url\": \"{url}\", \"mime\": \"{}\"{status}, \"digest\": \"{digest}\", \"length\": \"{}\", \"offset\": \"{offset}\", \"filename\": \"{}\"}}\n",
                    t[3], t[8], t[10]
                )
                .as_bytes(),
            );
        } else {
            out.extend_from_slice(
                format!(
                    "{key} {ts} {url} {} {} {digest} {} {} {} {offset} {}\n",
                    t[3], t[4], t[6], t[7], t[8], t[10]
                )
                .as_bytes(),
            );
        }
    }
    out
}

fn parse_all(buf: &[u8]) -> (u64, u64) {
    let mut parser = CdxParser::new();
    let mut records = 0u64;
    let mut checksum = 0u64;
    for (_, line) in lines(buf, 1) {
        if let Ok(CdxLine::Record(r)) = parser.parse_line(line) {
            records += 1;
            checksum = checksum
                .wrapping_add(r.offset.unwrap_or(0))
                .wrapping_add(u64::from(r.digest.map_or(0, |d| d.0[0])))
                .wrapping_add(r.url.len() as u64);
        }
    }
    (records, checksum)
}

/// Time this thread spent on a CPU (Linux: /proc/thread-self/schedstat), so that other
/// processes sharing the machine do not count; wall time where unavailable.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Measures `f`: (wall seconds, CPU seconds of this thread).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let cpu0 = cpu_seconds();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    (out, wall, cpu)
}

fn report(what: &str, count: u64, (wall, cpu): (f64, f64), bytes: usize) {
    println!(
        "{what:<38} {count:>8} lines, {wall:6.3} s wall, {cpu:6.3} s CPU: {:5.2} M lines/s per core, {:6.1} MB/s",
        count as f64 / cpu / 1e6,
        bytes as f64 / cpu / 1e6
    );
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5_000_000);
    let template = std::env::args()
        .nth(2)
        .unwrap_or_else(|| EXAMPLE.to_string());
    let text = std::fs::read_to_string(&template).unwrap_or_else(|_| {
        eprintln!("corpus not found, using a built-in line");
        FALLBACK.to_string()
    });
    let templates: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect::<Vec<_>>())
        .filter(|cols| cols.len() == 11)
        .collect();

    let cdx = generate(&templates, n, false);
    println!(
        "generated {n} CDX-11 lines, {:.1} MB (average {} bytes per line)",
        cdx.len() as f64 / 1e6,
        cdx.len() / n.max(1)
    );

    // For instruction counts with `perf stat`: generation only, or one parse only.
    match std::env::var("CDX_BENCH_ONLY").as_deref() {
        Ok("generate") => return,
        Ok("parse") => {
            black_box(parse_all(black_box(&cdx)));
            return;
        }
        Ok("reader") => {
            let mut reader = LineReader::new(&cdx[..]).expect("reader");
            let mut parser = CdxParser::new();
            let mut count = 0u64;
            while let Some((_, line)) = reader.next_line().expect("read") {
                if let Ok(CdxLine::Record(r)) = parser.parse_line(line) {
                    count += 1;
                    black_box(&r);
                }
            }
            black_box(count);
            return;
        }
        Ok("hot") => {
            // The first 64 KB parsed again and again: CPU cost without memory traffic.
            let end = cdx[..(64 << 10).min(cdx.len())]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let hot = &cdx[..end];
            let per_pass = lines(hot, 1).count() as u64;
            let passes = (n as u64 / per_pass.max(1)).max(1);
            let (_, wall, cpu) = timed(|| {
                for _ in 0..passes {
                    black_box(parse_all(black_box(hot)));
                }
            });
            report(
                "CDX-11 in cache (hot)",
                passes * per_pass,
                (wall, cpu),
                end * passes as usize,
            );
            return;
        }
        _ => {}
    }

    // Best of three runs, single-threaded.
    let mut best = (f64::MAX, f64::MAX);
    let mut records = 0;
    for _ in 0..3 {
        let ((count, _), wall, cpu) = timed(|| black_box(parse_all(black_box(&cdx))));
        records = count;
        if cpu < best.1 {
            best = (wall, cpu);
        }
    }
    assert_eq!(records, n as u64, "every generated line parses");
    report("CDX-11: lines() + parse_line", records, best, cdx.len());

    let (count, wall, cpu) = timed(|| {
        let mut reader = LineReader::new(&cdx[..]).expect("reader");
        let mut count = 0u64;
        while let Some((_, line)) = reader.next_line().expect("read") {
            count += 1;
            black_box(line);
        }
        count
    });
    report("LineReader::next_line alone", count, (wall, cpu), cdx.len());

    let (count, wall, cpu) = timed(|| {
        let mut reader = LineReader::new(&cdx[..]).expect("reader");
        let mut parser = CdxParser::new();
        let mut count = 0u64;
        while let Some((_, line)) = reader.next_line().expect("read") {
            if let Ok(CdxLine::Record(r)) = parser.parse_line(line) {
                count += 1;
                black_box(&r);
            }
        }
        count
    });
    report(
        "CDX-11: LineReader + parse_line",
        count,
        (wall, cpu),
        cdx.len(),
    );

    // Gzip input: the line reader (member-aware) against plain flate2 inflation (the floor).
    let gz_lines = lines(&cdx, 1)
        .take(n / 5)
        .map(|(_, l)| l.len() + 1)
        .sum::<usize>();
    let gz = {
        use std::io::Write as _;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&cdx[..gz_lines]).expect("gzip");
        enc.finish().expect("gzip")
    };
    let (inflated, wall, cpu) = timed(|| {
        use std::io::Read as _;
        let mut d = flate2::read::MultiGzDecoder::new(&gz[..]);
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0usize;
        loop {
            match d.read(&mut buf) {
                Ok(0) | Err(_) => break total,
                Ok(k) => total += k,
            }
        }
    });
    assert_eq!(inflated, gz_lines);
    report(
        "gzip: flate2 inflate only (floor)",
        (n / 5) as u64,
        (wall, cpu),
        gz_lines,
    );
    let (count, wall, cpu) = timed(|| {
        let mut reader = LineReader::new(&gz[..]).expect("reader");
        let mut count = 0u64;
        while let Some((_, line)) = reader.next_line().expect("read") {
            count += 1;
            black_box(line);
        }
        count
    });
    report("gzip: LineReader::next_line", count, (wall, cpu), gz_lines);
    let (count, wall, cpu) = timed(|| {
        let mut reader = LineReader::new(&gz[..]).expect("reader");
        let mut parser = CdxParser::new();
        let mut count = 0u64;
        while let Some((_, line)) = reader.next_line().expect("read") {
            if let Ok(CdxLine::Record(r)) = parser.parse_line(line) {
                count += 1;
                black_box(&r);
            }
        }
        count
    });
    report(
        "gzip: LineReader + parse_line",
        count,
        (wall, cpu),
        gz_lines,
    );

    let cdxj = generate(&templates, n / 5, true);
    let ((records, _), wall, cpu) = timed(|| black_box(parse_all(&cdxj)));
    assert_eq!(records, (n / 5) as u64);
    report(
        "CDXJ: lines() + parse_line",
        records,
        (wall, cpu),
        cdxj.len(),
    );

    let mut out = String::new();
    let urls: Vec<String> = lines(&cdx, 1)
        .take(n / 5)
        .map(|(_, l)| {
            String::from_utf8_lossy(l.split(|&b| b == b' ').nth(2).unwrap_or(b"")).into_owned()
        })
        .collect();
    let (_, wall, cpu) = timed(|| {
        for u in &urls {
            surt_into(u, &mut out);
            black_box(&out);
        }
    });
    report(
        "surt_into() of the original URLs",
        urls.len() as u64,
        (wall, cpu),
        0,
    );
}
