//! The CDX parser on every CDX/CDXJ file of the shared corpus and on the wget fixture:
//! record/skip/reject counts and every field of every record, compared with an
//! independent reading by scripts/cdx_reference.py; spot checks against the raw text;
//! every reject reason in a real file with hand-corrupted lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

mod common;

use sediment::cdx::lines::{LineReader, split_at_line_boundaries};
use sediment::cdx::{CdxLine, CdxParser, CdxRecord, Dialect, RejectReason, detect_dialect};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/cdx_reference.py");
const EMPTY_SHA1: &str = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";

/// The shared corpus; `None` after `common::skip` when it is not here.
#[track_caller]
fn corpus() -> Option<PathBuf> {
    common::corpus("")
}

/// Every CDX-like file of the corpus, and the wget fixture.
fn cdx_files(corpus: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let dirs = [
        "sandcrawler",
        "pywb/sample_archive/cdx",
        "pywb/sample_archive/cdxj",
        "pywb/sample_archive/non-surt-cdx",
        "pywb/sample_archive/zipcdx",
    ];
    for dir in dirs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus.join(dir))
            .expect("corpus dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".cdx") || name.ends_with(".cdxj") || name.ends_with(".cdx.gz")
            })
            .collect();
        entries.sort();
        files.extend(entries);
    }
    files.push(Path::new(FIXTURES).join("wget-cdx/crawl.cdx"));
    files
}

/// What the parser made of a file, in the reference script's shape.
#[derive(Default)]
struct Outcome {
    records: Vec<Value>,
    skipped: BTreeMap<String, u64>,
    rejected: BTreeMap<String, u64>,
    rejected_lines: Vec<(u64, RejectReason)>,
}

fn record_json(line: u64, r: &CdxRecord<'_>) -> Value {
    json!({
        "line": line,
        "key": r.key,
        "surt": r.surt,
        "timestamp": r.timestamp.as_str(),
        "url": r.url,
        "mime": r.mime,
        "status": r.status,
        "digest": r.digest.map(|d| d.to_string()),
        "size": r.compressed_size,
        "offset": r.offset,
        "filename": r.filename,
        "record_id": r.record_id,
        "redirect": r.redirect,
        "revisit": r.is_revisit,
    })
}

fn tally(out: &mut Outcome, parser: &mut CdxParser, no: u64, line: &[u8]) {
    match parser.parse_line(line) {
        Ok(CdxLine::Record(r)) => out.records.push(record_json(no, &r)),
        Ok(CdxLine::Skipped(why)) => *out.skipped.entry(why.name().to_string()).or_default() += 1,
        Err(e) => {
            *out.rejected.entry(e.reason.name().to_string()).or_default() += 1;
            out.rejected_lines.push((no, e.reason));
        }
    }
}

fn parse_reader(input: impl std::io::Read + Send) -> Outcome {
    let mut reader = LineReader::new(input).expect("open");
    let mut parser = CdxParser::new();
    let mut out = Outcome::default();
    while let Some((no, line)) = reader.next_line().expect("read") {
        tally(&mut out, &mut parser, no, line);
    }
    out
}

fn parse_file(path: &Path) -> Outcome {
    parse_reader(std::fs::File::open(path).expect("open file"))
}

#[track_caller]
fn reference(files: &[PathBuf]) -> Option<Value> {
    if !common::have_python(&[]) {
        return None;
    }
    let output = Command::new("python3")
        .arg(SCRIPT)
        .args(files)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "reference script failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("reference JSON"))
}

#[test]
fn every_corpus_file_matches_the_independent_reading() {
    let Some(corpus) = corpus() else {
        return;
    };
    let files = cdx_files(&corpus);
    assert!(files.len() >= 25, "{files:?}");
    let Some(reference) = reference(&files) else {
        return;
    };
    let mut total = 0;
    for path in &files {
        let expected = &reference[path.to_str().expect("path")];
        let got = parse_file(path);
        let name = path.display();
        let counts = &expected["counts"];
        assert_eq!(
            got.records.len() as u64,
            counts["records"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(json!(got.skipped), counts["skipped"], "{name}: skipped");
        assert_eq!(json!(got.rejected), counts["rejected"], "{name}: rejected");
        let want = expected["records"].as_array().expect("records");
        for (g, w) in got.records.iter().zip(want) {
            assert_eq!(g, w, "{name}");
        }
        total += got.records.len();
    }
    eprintln!(
        "{} files, {total} records, all equal to the reference",
        files.len()
    );
    assert!(total > 500);
}

#[test]
fn sandcrawler_example_spot_checks() {
    let Some(corpus) = corpus() else {
        return;
    };
    let path = corpus.join("sandcrawler/example.cdx");
    let raw = std::fs::read_to_string(&path).expect("read");
    let got = parse_file(&path);
    assert_eq!(got.records.len(), 20);
    assert!(got.skipped.is_empty() && got.rejected.is_empty());
    let empty: Vec<&Value> = got
        .records
        .iter()
        .filter(|r| r["digest"] == EMPTY_SHA1)
        .collect();
    assert_eq!(empty.len(), 4);
    assert_eq!(raw.matches(EMPTY_SHA1).count(), 4);
    // The whois line: status `-`, key not a SURT.
    let whois: Vec<&Value> = got
        .records
        .iter()
        .filter(|r| r["url"].as_str().unwrap().starts_with("whois://"))
        .collect();
    assert_eq!(whois.len(), 1);
    assert_eq!(whois[0]["status"], Value::Null);
    assert_eq!(whois[0]["surt"], Value::Null);
    assert_eq!(whois[0]["key"], whois[0]["url"]);
    // Every field of every line against the raw columns.
    for (line, rec) in raw.lines().zip(&got.records) {
        let cols: Vec<&str> = line.split(' ').collect();
        assert_eq!(rec["key"], cols[0]);
        assert_eq!(rec["timestamp"], cols[1]);
        assert_eq!(rec["url"], cols[2]);
        assert_eq!(rec["mime"], cols[3]);
        let status = cols[4].parse::<u64>().ok();
        assert_eq!(rec["status"].as_u64(), status);
        assert_eq!(rec["digest"], cols[5]);
        assert_eq!(rec["size"].as_u64(), cols[8].parse().ok());
        assert_eq!(rec["offset"].as_u64(), cols[9].parse().ok());
        assert_eq!(rec["filename"], cols[10]);
    }
    let mimes: Vec<&str> = got
        .records
        .iter()
        .map(|r| r["mime"].as_str().unwrap())
        .collect();
    assert_eq!(mimes.iter().filter(|m| **m == "application/pdf").count(), 7);
    assert_eq!(mimes.iter().filter(|m| **m == "unk").count(), 4);
}

#[test]
fn wget_fixture_has_no_surt_and_no_compressed_size() {
    let got = parse_file(&Path::new(FIXTURES).join("wget-cdx/crawl.cdx"));
    assert_eq!(got.skipped.get("header"), Some(&1));
    assert_eq!(got.records.len(), 7);
    for r in &got.records {
        assert_eq!(r["surt"], Value::Null);
        assert_eq!(r["size"], Value::Null);
        assert!(r["record_id"].as_str().unwrap().starts_with("urn:uuid:"));
        assert!(r["offset"].as_u64().is_some());
    }
    // The PDF's digest is the SHA-1 of the file wget fetched (sandcrawler's dummy.pdf).
    let pdf = got
        .records
        .iter()
        .find(|r| r["mime"] == "application/pdf")
        .expect("pdf line");
    assert_eq!(pdf["digest"], "SD75ENMQBDMCFGECDULLEF3YYXBZV3BW");
    let redirect = got
        .records
        .iter()
        .find(|r| r["status"] == 301)
        .expect("301");
    assert_eq!(redirect["redirect"], "/sub/");
    assert_eq!(redirect["mime"], Value::Null);
    assert_eq!(got.records.iter().filter(|r| r["status"] == 404).count(), 2);
}

#[test]
fn zipnum_blocks_end_lines() {
    let Some(corpus) = corpus() else {
        return;
    };
    let got = parse_file(&corpus.join("pywb/sample_archive/zipcdx/zipnum-sample.cdx.gz"));
    // 38 gzip blocks of 5 lines (the last one 3), none ending with a line break.
    assert_eq!(got.records.len(), 188);
    assert!(got.rejected.is_empty());
    let lines: Vec<u64> = got
        .records
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, (1..=188).collect::<Vec<_>>());
}

#[test]
fn gzip_input_equals_plain_input() {
    let Some(corpus) = corpus() else {
        return;
    };
    for name in [
        "sandcrawler/example.cdx",
        "pywb/sample_archive/cdxj/iana.cdxj",
    ] {
        let raw = std::fs::read(corpus.join(name)).expect("read");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&raw).expect("gzip");
        let gz = enc.finish().expect("gzip");
        let plain = parse_reader(&raw[..]);
        let zipped = parse_reader(&gz[..]);
        assert_eq!(plain.records, zipped.records, "{name}");
        assert!(!plain.records.is_empty());
    }
}

#[test]
fn chunked_parsing_equals_sequential_parsing() {
    let Some(corpus) = corpus() else {
        return;
    };
    let raw = std::fs::read(corpus.join("pywb/sample_archive/cdx/iana.cdx")).expect("read");
    let sequential = parse_reader(&raw[..]);
    let dialect = detect_dialect(&raw).expect("dialect");
    assert_eq!(dialect.describe(), Dialect::cdx11().describe());
    for target in [64, 1000, 5000] {
        let mut records = Vec::new();
        let mut skipped = 0;
        for chunk in split_at_line_boundaries(&raw, target, 1) {
            let mut parser = CdxParser::with_dialect(dialect);
            for (no, line) in chunk.lines() {
                match parser.parse_line(line).expect("valid line") {
                    CdxLine::Record(r) => records.push(record_json(no, &r)),
                    CdxLine::Skipped(_) => skipped += 1,
                }
            }
        }
        assert_eq!(records, sequential.records, "chunks of {target} bytes");
        assert_eq!(skipped, 1);
    }
}

#[test]
fn bad_lines_are_rejected_by_reason_and_nothing_valid_is_lost() {
    let Some(corpus) = corpus() else {
        return;
    };
    let raw = std::fs::read_to_string(corpus.join("sandcrawler/example.cdx")).expect("read");
    let good: Vec<&str> = raw.lines().collect();
    let first = good[0];
    let with = |col: usize, value: &str| {
        let mut cols: Vec<&str> = first.split(' ').collect();
        cols[col] = value;
        cols.join(" ")
    };
    // (bad line, reason) inserted after each good line in turn.
    let bad: Vec<(Vec<u8>, RejectReason)> = vec![
        (
            b"edu,cmu)/ 20170706005950 http://cmu.edu/".to_vec(),
            RejectReason::TooFewColumns,
        ),
        (
            format!("{first} extra").into_bytes(),
            RejectReason::TooManyColumns,
        ),
        (
            with(1, "2017-07-06").into_bytes(),
            RejectReason::BadTimestamp,
        ),
        (
            with(1, "20171306005950").into_bytes(),
            RejectReason::BadTimestamp,
        ),
        (with(9, "0x10").into_bytes(), RejectReason::BadOffset),
        (with(8, "12KB").into_bytes(), RejectReason::BadSize),
        (with(4, "20O").into_bytes(), RejectReason::BadStatus),
        (
            with(5, "MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3").into_bytes(),
            RejectReason::BadDigest,
        ),
        (
            with(5, "md5:d41d8cd98f00b204e9800998ecf8427e").into_bytes(),
            RejectReason::BadDigest,
        ),
        (with(2, "-").into_bytes(), RejectReason::MissingUrl),
        (
            {
                let mut b = first.as_bytes().to_vec();
                b[60] = 0xE9; // Latin-1 é
                b
            },
            RejectReason::NotUtf8,
        ),
        (b" CDX N b urlkey".to_vec(), RejectReason::BadHeader),
    ];
    let mut input = Vec::new();
    let mut expected_rejects = Vec::new();
    let mut line_no = 0u64;
    for (i, g) in good.iter().enumerate() {
        input.extend_from_slice(g.as_bytes());
        input.push(b'\n');
        line_no += 1;
        if let Some((b, reason)) = bad.get(i) {
            input.extend_from_slice(b);
            input.push(b'\n');
            line_no += 1;
            expected_rejects.push((line_no, *reason));
        }
    }
    // A `-` digest is not a reject.
    input.extend_from_slice(with(5, "-").as_bytes());
    input.push(b'\n');
    let got = parse_reader(&input[..]);
    assert_eq!(got.rejected_lines, expected_rejects);
    assert_eq!(got.records.len(), 21);
    assert_eq!(got.records[20]["digest"], Value::Null);
    let clean = parse_reader(raw.as_bytes());
    let strip = |v: &Vec<Value>| -> Vec<Value> {
        v.iter()
            .map(|r| {
                let mut r = r.clone();
                r["line"] = Value::Null;
                r
            })
            .collect()
    };
    assert_eq!(strip(&got.records)[..20], strip(&clean.records)[..]);
    assert!(got.skipped.is_empty());
    // Every reason but one (MissingTimestamp needs a header without `b`) occurred.
    let reasons: std::collections::HashSet<RejectReason> =
        got.rejected_lines.iter().map(|(_, r)| *r).collect();
    assert_eq!(reasons.len(), RejectReason::ALL.len() - 2); // and no BadJson in CDX
}
