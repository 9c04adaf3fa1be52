//! The WARC reader against independent readers (warcio, fastwarc from pip) on every WARC of
//! the shared corpus, and on corrupted copies made by scripts/make-corrupt-warcs.py.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use sediment::warc::{
    Compression, ErrorKind, ReaderOptions, Record, WarcError, WarcReader, Warning,
};
use serde_json::Value;

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corrupt");

/// Every WARC of the shared corpus; `None` after `common::skip` without it.
#[track_caller]
fn corpus_warcs() -> Option<Vec<PathBuf>> {
    let root = common::corpus("")?;
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".warc")
                || name.ends_with(".warc.gz")
                || name.ends_with(".warc.gz.bad")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    Some(files)
}

/// Deterministic pseudo-random numbers (xorshift): `next(n)` is in `0..n`.
fn numbers(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    }
}

fn read_all(path: &Path) -> Vec<Result<Record, WarcError>> {
    let reader = WarcReader::new(File::open(path).unwrap()).unwrap();
    reader.collect()
}

/// Runs a Python reference script that needs `modules`; `None` after `common::skip` when
/// python3 or a module is not there. The script failing fails the test.
#[track_caller]
fn python_rows(modules: &[&str], args: &[&str]) -> Option<Vec<Value>> {
    if !common::have_python(modules) {
        return None;
    }
    let output = Command::new("python3")
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "python3 {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    Some(
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn short(path: &Path) -> String {
    path.strip_prefix(common::corpus_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Errors this reader reports where warcio reads on (with a warning) or gives up: each is
/// a deliberate difference, checked here so that nothing else goes unnoticed.
fn expected_errors(file: &str) -> Vec<ErrorKind> {
    use sediment::warc::MandatoryHeader::WarcRecordId;
    match file {
        // A gzip member cut short (no trailer): warcio returns the record, whose payload
        // digest then fails; here the record comes back inside a gzip-truncated error.
        "chatnoir-resiliparse/tests/data/clipped.warc.gz" => vec![ErrorKind::GzipTruncated],
        // The response's block is 2 bytes longer than its Content-Length.
        "warcio/test/data/example-trunc.warc" => vec![ErrorKind::ContentLengthMismatch],
        // The last request's block is longer than its Content-Length (320).
        "pywb/sample_archive/warcs/example.warc" => vec![ErrorKind::ContentLengthMismatch],
        // No record has a WARC-Record-ID (warcio gives up at the fifth record, whose HTTP
        // head has a bare LF line end it does not expect; this reader reads all eight).
        "webarchive-commons/src/test/resources/org/archive/resource/html/link-extraction-test.warc" =>
        {
            vec![ErrorKind::MissingHeader(WarcRecordId); 8]
        }
        _ => vec![],
    }
}

/// Files warcio cannot read (one gzip member for the whole file, or members that do not
/// line up with records): its rows are wrong, so they are compared with fastwarc instead
/// (`files_warcio_refuses_equal_fastwarc`).
const WARCIO_REFUSES: [&str; 4] = [
    "pywb/sample_archive/warcs/example-bad.warc.gz.bad",
    "warcio/test/data/example-bad.warc.gz.bad",
    "warcio/test/data/example-bad-non-chunked.warc.gz",
    "warcio/test/data/example-wrong-chunks.warc.gz",
];

/// Compare one record with warcio's row; differences go to `problems`.
fn compare_with_warcio(
    file: &str,
    ours: &Record,
    row: &Value,
    clean: bool,
    problems: &mut Vec<String>,
) {
    let clean = clean && !ours.warnings.contains(&Warning::LooseTerminator);
    let mut check = |what: &str, a: Value, b: &Value| {
        if &a != b {
            problems.push(format!(
                "{file} @{}: {what}: ours {a}, warcio {b}",
                ours.offset
            ));
        }
    };
    check("type", Value::from(ours.warc_type.as_str()), &row["type"]);
    // warcio drops the angle brackets wget 1.14 wrote and percent-encodes spaces; the
    // accessor drops the brackets and keeps the URI as written otherwise.
    let uri = ours.target_uri().map(|u| u.replace(' ', "%20"));
    check("uri", uri.into(), &row["uri"]);
    check("id", ours.record_id().into(), &row["id"]);
    // warcio's length of an uncompressed record stops before the CRLFCRLF after the
    // block; ours includes it (all the bytes the record occupies).
    let expected_length = match ours.compression {
        Compression::None => ours.header_length + ours.content_length,
        Compression::Gzip => ours.length,
    };
    if clean {
        check("length", expected_length.into(), &row["length"]);
    }
    if ours.warnings.contains(&Warning::HttpHeadUnparseable) {
        // A status line such as `HTTPX/1.1 200 OK` (pywb's example-extra.warc): warcio
        // takes it as HTTP, this reader does not (the whole block is the payload).
        return;
    }
    check("has_http", ours.http.is_some().into(), &row["has_http"]);
    if let Some(http) = &ours.http
        && (http.status().is_some() || !row["status"].is_null())
    {
        check("status", http.status().into(), &row["status"]);
    }
    let Some(payload) = &ours.payload else {
        problems.push(format!("{file} @{}: no payload summary", ours.offset));
        return;
    };
    check(
        "payload_sha1",
        hex(&payload.sha1).into(),
        &row["payload_sha1"],
    );
    check(
        "payload_length",
        payload.length.into(),
        &row["payload_length"],
    );
    check("chunked", payload.chunked.into(), &row["chunked"]);
    if !row["dechunked_sha1"].is_null() {
        check(
            "dechunked_sha1",
            payload.dechunked_sha1.map(|d| hex(&d)).into(),
            &row["dechunked_sha1"],
        );
    }
    check(
        "digest_check",
        ours.digest_check.name().into(),
        &row["digest_check"],
    );
}

#[test]
fn corpus_equals_warcio() {
    let Some(files) = corpus_warcs() else { return };
    let script = format!("{SCRIPTS}/warcio_dump.py");
    let mut problems = Vec::new();
    let mut compared = 0;
    for path in &files {
        let file = short(path);
        let Some(mut rows) = python_rows(&["warcio"], &[&script, path.to_str().unwrap()]) else {
            return;
        };
        let warcio_gave_up = rows.last().is_some_and(|r| r.get("error").is_some());
        if warcio_gave_up {
            rows.pop();
        }
        let items = read_all(path);
        let errors: Vec<ErrorKind> = items
            .iter()
            .filter_map(|i| i.as_ref().err().map(|e| e.kind))
            .collect();
        if errors != expected_errors(&file) {
            let shown: Vec<String> = items
                .iter()
                .filter_map(|i| i.as_ref().err())
                .map(|e| e.to_string())
                .collect();
            problems.push(format!("{file}: errors {shown:?}"));
        }
        if WARCIO_REFUSES.contains(&file.as_str()) {
            continue;
        }
        // Records by offset, including those returned inside errors (whose framing or
        // payload is known to be off, so only their headers are compared).
        let mut by_offset: HashMap<u64, (&Record, bool)> = HashMap::new();
        for item in &items {
            match item {
                Ok(record) => {
                    by_offset.insert(record.offset, (record, true));
                }
                Err(error) => {
                    if let Some(record) = &error.record {
                        let intact = matches!(error.kind, ErrorKind::MissingHeader(_));
                        by_offset.insert(record.offset, (record, intact));
                    }
                }
            }
        }
        for row in &rows {
            let offset = row["offset"].as_u64().unwrap();
            match by_offset.get(&offset) {
                Some((record, intact)) => {
                    let mut local = Vec::new();
                    compare_with_warcio(&file, record, row, *intact, &mut local);
                    if !intact {
                        local.retain(|p| {
                            [": type:", ": uri:", ": id:"].iter().any(|k| p.contains(k))
                        });
                    }
                    problems.extend(local);
                    compared += 1;
                }
                None => problems.push(format!(
                    "{file}: warcio has a record at {offset}, we do not"
                )),
            }
        }
        let ours_count = by_offset.len();
        if !warcio_gave_up && ours_count != rows.len() {
            problems.push(format!(
                "{file}: {ours_count} records, warcio {}",
                rows.len()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(compared > 1400, "compared only {compared} records");
}

const FASTWARC_IDS: &str = r#"
import json, sys
from fastwarc.warc import ArchiveIterator, WarcRecordType
for r in ArchiveIterator(open(sys.argv[1], 'rb'), record_types=WarcRecordType.any_type, parse_http=False):
    print(json.dumps({"type": r.headers.get('WARC-Type'), "id": r.headers.get('WARC-Record-ID')}))
"#;

/// Files warcio refuses (one gzip member for the whole file, members not aligned with
/// records): every record is read, as fastwarc reads them.
#[test]
fn files_warcio_refuses_equal_fastwarc() {
    let Some(_) = corpus_warcs() else { return };
    for file in WARCIO_REFUSES {
        let path = common::corpus_root().join(file);
        let Some(rows) = python_rows(&["fastwarc"], &["-c", FASTWARC_IDS, path.to_str().unwrap()])
        else {
            return;
        };
        let items = read_all(&path);
        let ours: Vec<Value> = items
            .iter()
            .map(|item| {
                let record = item.as_ref().unwrap_or_else(|e| panic!("{file}: {e}"));
                serde_json::json!({"type": record.header("WARC-Type"), "id": record.record_id()})
            })
            .collect();
        assert_eq!(ours, rows, "{file}");
        assert!(rows.len() >= 2, "{file}");
    }
}

/// Offsets and skips of records in files whose gzip members do not line up with records.
#[test]
fn unaligned_members_positions() {
    let Some(path) = common::corpus("warcio/test/data/example-wrong-chunks.warc.gz") else {
        return;
    };
    let records: Vec<Record> = read_all(&path).into_iter().map(Result::unwrap).collect();
    // Members: [0, 516), [516, 1130), [1130, 1575). The response spans all three (its
    // CRLFCRLF is in the third); the request starts 4 bytes into the third.
    assert_eq!((records[0].offset, records[0].skip), (0, 0));
    // It ends inside the third member, which holds the next record too: its length reaches
    // into that member, as far as the inflater had read (at most the member's end).
    assert!(
        records[0].length > 1130 && records[0].length <= 1575,
        "{}",
        records[0].length
    );
    assert_eq!(
        (records[1].offset, records[1].skip, records[1].length),
        (1130, 4, 445)
    );
    // Reading from a stored (offset, skip) gives the same record.
    let reader =
        WarcReader::open_at(File::open(&path).unwrap(), 1130, 4, Default::default()).unwrap();
    let again: Vec<Record> = reader.map(Result::unwrap).collect();
    assert_eq!(again, records[1..]);
}

/// Every corrupted fixture: the exact errors (reason, offset) and every other record.
#[test]
fn corrupt_fixtures() {
    let manifest_path = Path::new(FIXTURES).join("manifest.json");
    let manifest: Value = serde_json::from_reader(File::open(manifest_path).unwrap()).unwrap();
    let mut checked = 0;
    for case in manifest.as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let items = read_all(&Path::new(FIXTURES).join(file));
        let errors: Vec<Value> = items
            .iter()
            .filter_map(|i| i.as_ref().err())
            .map(|e| serde_json::json!({"kind": e.kind.name(), "offset": e.offset}))
            .collect();
        assert_eq!(&Value::from(errors), &case["errors"], "{file}: {items:#?}");
        let ids: Vec<Value> = items
            .iter()
            .filter_map(|i| i.as_ref().ok())
            .map(|r| r.record_id().unwrap().into())
            .collect();
        assert_eq!(&Value::from(ids), &case["valid_ids"], "{file}");
        for error in items.iter().filter_map(|i| i.as_ref().err()) {
            assert!(error.message.contains(&error.offset.to_string()), "{error}");
        }
        // A record stored in another record's payload is neither returned nor carried by
        // an error (where an importer might keep it).
        for uri in case["phantom_uris"].as_array().into_iter().flatten() {
            let carried = items.iter().filter_map(|i| match i {
                Ok(record) => Some(record),
                Err(error) => error.record.as_deref(),
            });
            for record in carried {
                assert_ne!(
                    record.target_uri(),
                    uri.as_str(),
                    "{file} @{}",
                    record.offset
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 20);
}

const WARCIO_IDS: &str = r#"
import json, sys
from warcio.archiveiterator import ArchiveIterator
try:
    for r in ArchiveIterator(open(sys.argv[1], 'rb')):
        print(json.dumps({"id": r.rec_headers.get_header('WARC-Record-ID')}))
except Exception as e:
    print(json.dumps({"error": str(e)}))
"#;

/// The corrupted fixtures against warcio: every record warcio reads from a damaged file
/// (up to where it gives up) is read here too, and the records the manifest says must
/// survive are records of the intact source as warcio reads it.
#[test]
fn corrupt_fixtures_keep_what_warcio_reads() {
    let Some(source) = common::corpus("warcio/test/data/example.warc.gz") else {
        return;
    };
    let ids_of = |rows: Vec<Value>| -> Vec<String> {
        rows.iter()
            .filter_map(|r| r["id"].as_str().map(str::to_string))
            .collect()
    };
    let Some(intact) = python_rows(&["warcio"], &["-c", WARCIO_IDS, source.to_str().unwrap()])
    else {
        return;
    };
    let intact = ids_of(intact);
    assert_eq!(intact.len(), 6);
    let manifest: Value =
        serde_json::from_reader(File::open(Path::new(FIXTURES).join("manifest.json")).unwrap())
            .unwrap();
    for case in manifest.as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let path = Path::new(FIXTURES).join(file);
        let ours: Vec<String> = read_all(&path)
            .iter()
            .filter_map(|i| i.as_ref().ok())
            .map(|r| r.record_id().unwrap().to_string())
            .collect();
        for id in case["valid_ids"].as_array().unwrap() {
            assert!(intact.iter().any(|i| i == id), "{file}: {id}");
        }
        let Some(theirs) = python_rows(&["warcio"], &["-c", WARCIO_IDS, path.to_str().unwrap()])
        else {
            return;
        };
        let valid: Vec<&str> = case["valid_ids"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for id in ids_of(theirs) {
            // warcio also returns records stored in a payload and a record whose length
            // disagrees with its gzip member (reported and left out here): those are not
            // losses. Every valid record it reads must be read here too.
            if valid.contains(&id.as_str()) {
                assert!(ours.contains(&id), "{file}: warcio reads {id}, we do not");
            }
        }
    }
}

/// The payload sink receives exactly the bytes that were hashed, record by record, and a
/// reader opened at each stored offset returns the same record.
#[test]
fn sink_and_reading_at_offsets() {
    use sediment::warc::PayloadSink;
    use sha1::{Digest, Sha1};

    struct Collect {
        current: Option<Sha1>,
        done: Vec<[u8; 20]>,
    }
    impl PayloadSink for Collect {
        fn begin(&mut self, _record: &Record) -> bool {
            if let Some(previous) = self.current.take() {
                self.done.push(previous.finalize().into());
            }
            self.current = Some(Sha1::new());
            true
        }
        fn payload(&mut self, bytes: &[u8]) {
            self.current.as_mut().unwrap().update(bytes);
        }
    }

    for file in [
        "warcbase/example.warc.gz",
        "pywb/sample_archive/warcs/iana.warc.gz",
        "chatnoir-resiliparse/tests/data/warcfile.warc",
    ] {
        let Some(path) = common::corpus(file) else {
            return;
        };
        let mut reader = WarcReader::new(File::open(&path).unwrap()).unwrap();
        let mut sink = Collect {
            current: None,
            done: Vec::new(),
        };
        let mut records = Vec::new();
        while let Some(item) = reader.next_record(Some(&mut sink)) {
            records.push(item.unwrap());
        }
        sink.begin(&records[0]);
        assert_eq!(sink.done.len(), records.len());
        for (record, sha1) in records.iter().zip(&sink.done) {
            assert_eq!(
                &record.payload.as_ref().unwrap().sha1,
                sha1,
                "{file} @{}",
                record.offset
            );
        }
        assert_eq!(reader.position(), std::fs::metadata(&path).unwrap().len());
        for record in records.iter().step_by(7) {
            let mut at = WarcReader::open_at(
                File::open(&path).unwrap(),
                record.offset,
                record.skip,
                Default::default(),
            )
            .unwrap();
            let again = at.next_record(None).unwrap().unwrap();
            assert_eq!(&again, record, "{file} @{}", record.offset);
        }
    }
}

/// ARC files and other compressions are refused with a clear error.
#[test]
fn arc_is_refused() {
    for file in [
        "pywb/sample_archive/warcs/example.arc",
        "pywb/sample_archive/warcs/example.arc.gz",
    ] {
        let Some(path) = common::corpus(file) else {
            return;
        };
        let error = match WarcReader::new(File::open(&path).unwrap()) {
            Err(error) => error,
            Ok(mut reader) => reader.next().unwrap().unwrap_err(),
        };
        assert_eq!(error.kind, ErrorKind::ArcNotSupported, "{file}");
        assert!(error.message.contains("ARC"));
    }
    let zstd = [0x28u8, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0];
    let error = WarcReader::new(&zstd[..]).err().unwrap();
    assert_eq!(error.kind, ErrorKind::UnsupportedCompression);
}

/// Random damage (flipped bytes, cuts, inserted bytes) to real files never makes the reader
/// panic or loop, and records far from the damage are still read.
#[test]
fn random_damage_never_panics() {
    let files = [
        "warcio/test/data/example.warc.gz",
        "warcio/test/data/example.warc",
        "chatnoir-resiliparse/tests/data/warcfile.warc.gz",
        "pywb/sample_archive/warcs/example-bad.warc.gz.bad",
    ];
    let mut next = numbers(0x2545_F491_4F6C_DD1Du64);
    for file in files {
        let Some(path) = common::corpus(file) else {
            return;
        };
        let original = std::fs::read(&path).unwrap();
        let intact = read_all(&path).len();
        for round in 0..400 {
            let mut data = original.clone();
            let damages = 1 + next(3);
            let mut only_flips = true;
            for _ in 0..damages {
                let at = next(data.len());
                let kind = next(4);
                only_flips &= kind == 0;
                match kind {
                    0 if at < data.len() => data[at] ^= 1 << next(8),
                    0 => {}
                    1 => data.truncate(at),
                    2 => {
                        let n = next(64);
                        data.drain(at..(at + n).min(data.len()));
                    }
                    _ => {
                        let junk: Vec<u8> = (0..next(64)).map(|_| next(256) as u8).collect();
                        data.splice(at..at, junk);
                    }
                }
            }
            let Ok(reader) = WarcReader::new(&data[..]) else {
                continue;
            };
            let items: Vec<_> = reader.take(10 * intact + 100).collect();
            assert!(
                items.len() < 10 * intact + 100,
                "{file} round {round}: runaway"
            );
            for item in &items {
                if let Err(error) = item {
                    assert!(
                        error.offset <= data.len() as u64,
                        "{file} round {round}: {error}"
                    );
                }
            }
            // One flipped bit costs at most the record it hits and the next one (except in
            // a file that is one gzip member, where everything after it is lost).
            if damages == 1 && only_flips && !file.ends_with(".bad") {
                let ok = items.iter().filter(|i| i.is_ok()).count();
                assert!(
                    ok + 2 >= intact,
                    "{file} round {round}: {ok} of {intact} records"
                );
            }
        }
    }
}

/// Everything read, as text, with gzip members inflated in one call where they can be
/// (`whole_members`) or all streamed.
fn read_as_text(data: &[u8], whole_members: bool) -> Vec<String> {
    let options = ReaderOptions {
        whole_members,
        ..ReaderOptions::default()
    };
    match WarcReader::with_options(data, options) {
        Ok(reader) => reader
            .take(100_000)
            .map(|item| format!("{item:?}"))
            .collect(),
        Err(error) => vec![format!("{error:?}")],
    }
}

/// The one-call inflater (libdeflate) and the streaming one (zlib-rs) give the same records,
/// errors and offsets: on every WARC of the corpus, the corrupted fixtures, and damaged
/// copies (bit flips, cuts, junk) of gzip WARCs.
#[test]
fn whole_member_and_streaming_inflate_agree() {
    let Some(mut files) = corpus_warcs() else {
        return;
    };
    for entry in std::fs::read_dir(FIXTURES).unwrap() {
        files.push(entry.unwrap().path());
    }
    for path in &files {
        let data = std::fs::read(path).unwrap();
        assert_eq!(
            read_as_text(&data, true),
            read_as_text(&data, false),
            "{}",
            short(path)
        );
    }
    let mut next = numbers(0x9E37_79B9_7F4A_7C15u64);
    let gzip_files: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".gz"))
        .collect();
    for round in 0..300 {
        let path = gzip_files[next(gzip_files.len())];
        let mut data = std::fs::read(path).unwrap();
        for _ in 0..1 + next(3) {
            let at = next(data.len());
            match next(3) {
                0 if at < data.len() => data[at] ^= 1 << next(8),
                1 => data.truncate(at.max(1)),
                _ => {
                    let junk: Vec<u8> = (0..next(64)).map(|_| next(256) as u8).collect();
                    data.splice(at..at, junk);
                }
            }
        }
        assert_eq!(
            read_as_text(&data, true),
            read_as_text(&data, false),
            "round {round}: damaged {}",
            short(path)
        );
    }
}

/// `text` with the value of every `, length: N` left out (see the `warc_reader` fuzz target:
/// a record ending inside a gzip member gets as its length what the inflater had read).
fn without_lengths(text: &str) -> String {
    const FIELD: &str = ", length: ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(FIELD) {
        out.push_str(&rest[..at + FIELD.len()]);
        rest = rest[at + FIELD.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Inputs on which the `warc_reader` fuzz target found the two inflaters to differ
/// (`fixtures/fuzz/`, as the fuzzer wrote them): a damaged member holding more than one
/// record, and a member with an invalid distance code, which libdeflate decodes and zlib-rs
/// rejects (the one-call path now takes only members whose trailer matches).
#[test]
fn fuzz_findings_read_alike_both_ways() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuzz");
    for name in [
        "warc-unaligned-damaged-member.bin",
        "warc-invalid-distance-code.bin",
    ] {
        let data = std::fs::read(dir.join(name)).unwrap();
        let read = |whole_members| -> Vec<String> {
            let options = ReaderOptions {
                read_buffer: 0,
                inflate_buffer: 0,
                whole_members,
                ..ReaderOptions::default()
            };
            WarcReader::with_options(&data[..], options)
                .unwrap()
                .map(|item| without_lengths(&format!("{item:?}")))
                .collect()
        };
        assert_eq!(read(true), read(false), "{name}");
    }
    let data = std::fs::read(dir.join("warc-invalid-distance-code.bin")).unwrap();
    let at_100: Vec<ErrorKind> = WarcReader::new(&data[..])
        .unwrap()
        .filter_map(|item| item.err())
        .filter(|error| error.offset == 100)
        .map(|error| error.kind)
        .collect();
    assert_eq!(at_100, vec![ErrorKind::GzipData]);
}
