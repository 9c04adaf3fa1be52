//! The synthetic crawl of issue 36's page benchmark (examples/gen_scale_warc.rs, used by
//! scripts/bench-scale-pages.sh) on a few hundred pages: its WARC files are valid (every
//! record's block digest, payload digest and Content-Length checked by hand and by the
//! reader), its pages all differ, it is the same whatever the number of threads, and
//! `import-warc` counts N captures whose unique tokens `project summary` makes searchable.

mod common;

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use data_encoding::BASE32;
use sediment::warc::{DigestCheck, WarcReader, WarcType};
use sha1::{Digest, Sha1};

const N: u64 = 300;

/// The generator `cargo test` built beside the binary (examples are built with the tests).
fn generator() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_sediment"));
    let path = bin.parent()?.join("examples/gen_scale_warc");
    path.is_file().then_some(path)
}

fn generate(generator: &Path, out: &Path, threads: &str) -> String {
    let output = Command::new(generator)
        .arg(N.to_string())
        .arg(out)
        .args(["--seed", "7", "--file-mb", "1"])
        .arg(common::corpus_root())
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("run gen_scale_warc");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn sha1_label(bytes: &[u8]) -> String {
    format!("sha1:{}", BASE32.encode(&Sha1::digest(bytes)))
}

/// Every record of a file, read without the library: (WARC headers, block).
/// A record's WARC headers (name, value) and its block.
type HandRecord = (Vec<(String, String)>, Vec<u8>);

fn records_by_hand(path: &Path) -> Vec<HandRecord> {
    let mut data = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut data)
        .unwrap();
    let mut records = Vec::new();
    let mut at = 0;
    while at < data.len() {
        assert!(
            data[at..].starts_with(b"WARC/1.0\r\n"),
            "{}: record at {at}",
            path.display()
        );
        let end = at + memchr::memmem::find(&data[at..], b"\r\n\r\n").unwrap();
        let headers: Vec<(String, String)> = std::str::from_utf8(&data[at..end])
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let (k, v) = l.split_once(": ").unwrap();
                (k.to_owned(), v.to_owned())
            })
            .collect();
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "Content-Length")
            .unwrap()
            .1
            .parse()
            .unwrap();
        let block = data[end + 4..end + 4 + length].to_vec();
        at = end + 4 + length;
        assert_eq!(
            &data[at..at + 4],
            b"\r\n\r\n",
            "{}: after the block",
            path.display()
        );
        at += 4;
        records.push((headers, block));
    }
    records
}

#[test]
fn a_few_hundred_generated_pages_are_a_valid_searchable_crawl() {
    let Some(generator) = generator() else {
        common::skip(
            "the gen_scale_warc example",
            "cargo test builds it; cargo build --release --example gen_scale_warc",
        );
        return;
    };
    let Some(_) = common::corpus("warcbase/example.warc.gz") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let warcs = work.path().join("warcs");
    let stderr = generate(&generator, &warcs, "2");
    assert!(stderr.contains(&format!("done: {N} pages")), "{stderr}");

    // Several files (1 MB each), named like a crawl's, each opened by a warcinfo record.
    let files = files(&warcs);
    assert!(files.len() >= 2, "{files:?}\n{stderr}");
    let mut urls = HashSet::new();
    let mut payloads = HashSet::new();
    let mut responses = 0u64;
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("SCALE-PAGES-") && name.ends_with("-sediment.warc.gz"),
            "{name}"
        );
        let records = records_by_hand(file);
        let kind = |h: &[(String, String)], k: &str| {
            h.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone())
        };
        assert_eq!(
            kind(&records[0].0, "WARC-Type").as_deref(),
            Some("warcinfo")
        );
        assert_eq!(kind(&records[0].0, "WARC-Filename").as_deref(), Some(name));
        for (headers, block) in &records[1..] {
            assert_eq!(kind(headers, "WARC-Type").as_deref(), Some("response"));
            assert_eq!(kind(headers, "WARC-Block-Digest"), Some(sha1_label(block)));
            let head_end = memchr::memmem::find(block, b"\r\n\r\n").unwrap() + 4;
            let (head, payload) = block.split_at(head_end);
            let head = std::str::from_utf8(head).unwrap();
            assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
            assert!(
                head.contains(&format!("\r\nContent-Length: {}\r\n", payload.len())),
                "{head}"
            );
            assert!(
                head.to_ascii_lowercase()
                    .contains("content-type: text/html"),
                "{head}"
            );
            assert_eq!(
                kind(headers, "WARC-Payload-Digest"),
                Some(sha1_label(payload))
            );
            assert!(urls.insert(kind(headers, "WARC-Target-URI").unwrap()));
            payloads.insert(<[u8; 20]>::from(Sha1::digest(payload)));
            responses += 1;
        }
        // The library's reader agrees: no error, no warning, every payload digest matches.
        let mut reader = WarcReader::new(std::fs::File::open(file).unwrap()).unwrap();
        let mut read = 0;
        while let Some(item) = reader.next_record(None) {
            let record = item.unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert!(record.warnings.is_empty(), "{:?}", record.warnings);
            if record.warc_type == WarcType::Response {
                assert_eq!(record.digest_check, DigestCheck::Match);
            }
            read += 1;
        }
        assert_eq!(read, records.len());
    }
    assert_eq!(responses, N);
    assert_eq!(urls.len() as u64, N, "every URL distinct");
    assert_eq!(payloads.len() as u64, N, "every payload distinct");

    // The same bytes on one thread.
    let again = work.path().join("again");
    generate(&generator, &again, "1");
    let second = self::files(&again);
    assert_eq!(files.len(), second.len());
    for (a, b) in files.iter().zip(&second) {
        assert_eq!(a.file_name(), b.file_name());
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{a:?} differs"
        );
    }

    // Imported: N captures; summarized: page 17's unique token finds that page alone.
    let store = work.path().join("store");
    common::ok(&store, &["import-warc", warcs.to_str().unwrap()]);
    let stats = common::ok(&store, &["stats"]);
    let captures = stats
        .lines()
        .find_map(|l| l.strip_prefix("captures "))
        .map(|v| v.trim().to_owned());
    assert_eq!(captures.as_deref(), Some(N.to_string().as_str()), "{stats}");
    let db = work.path().join("summary.db");
    let run = common::sediment(&store, &["project", "summary", "-o", db.to_str().unwrap()]);
    assert!(run.status == 0 || run.status == 3, "{}", run.stderr);
    // Page 17 is `sph0` (17 in base 36) in its text and `-h` at the end of its URL's slug;
    // page 28 is `sps0` and `-s` (without the `0`, the stemmer would make `sps` `sp`).
    for (token, slug_end) in [("sph0", "-h"), ("sps0", "-s")] {
        let found = common::ok(
            &store,
            &[
                "search",
                "--db",
                db.to_str().unwrap(),
                "--json",
                "--limit",
                "50",
                "--",
                token,
            ],
        );
        let urls: Vec<String> = common::json_lines(&found)
            .iter()
            .map(|hit| hit["url"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(urls.len(), 1, "{token}: {found}");
        let slug = urls[0].rsplit('/').next().unwrap();
        let slug = slug.split('.').next().unwrap();
        assert!(slug.ends_with(slug_end), "{token}: {}", urls[0]);
    }
}
