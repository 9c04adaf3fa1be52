//! Hostile WARC inputs (issue 11): a Content-Length megabytes too large, an HTTP head over
//! the reader's limit, records `cdx` and `import-warc` cannot index. Each is made here from
//! intact records, and an independent reader (warcio) reading the intact version says
//! which records are valid: all of them must be present around the damage.

mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::path::Path;
use std::process::Command;

use common::{fixture, json_lines, ok, sediment};
use sediment::warc::{ErrorKind, WarcReader};
use serde_json::Value;
use sha1::{Digest, Sha1};

/// Runs Python with warcio and parses its JSON lines; `None` after `common::skip` when
/// python3 or warcio is missing.
#[track_caller]
fn python_rows(args: &[&str]) -> Option<Vec<Value>> {
    if !common::have_python(&["warcio"]) {
        return None;
    }
    let out = Command::new("python3")
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python3 with warcio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(json_lines(&String::from_utf8(out.stdout).unwrap()))
}

const WARCIO_RECORDS: &str = r#"
import hashlib, json, sys
from warcio.archiveiterator import ArchiveIterator
it = ArchiveIterator(open(sys.argv[1], 'rb'))
for r in it:
    body = r.raw_stream.read()
    print(json.dumps({"id": r.rec_headers.get_header('WARC-Record-ID'),
                      "offset": it.get_record_offset(),
                      "payload_sha1": hashlib.sha1(body).hexdigest()}))
"#;

/// (record id, payload SHA-1 in hex) of every record warcio reads.
#[track_caller]
fn warcio_records(path: &Path) -> Option<Vec<(String, String)>> {
    let rows = python_rows(&["-c", WARCIO_RECORDS, path.to_str().unwrap()])?;
    Some(
        rows.iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["payload_sha1"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn response(id: usize, head: &[u8], body: &[u8], length_error: i64) -> Vec<u8> {
    let mut block = head.to_vec();
    block.extend_from_slice(body);
    let declared = block.len() as i64 + length_error;
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{id:012}>\r\n\
         WARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Target-URI: http://hostile.example/{id}\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {declared}\r\n\r\n"
    )
    .into_bytes();
    out.extend_from_slice(&block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";

/// 99 records of about 100 KB; record `bad` gets `length_error` added to its Content-Length.
fn crawl(bad: usize, length_error: i64) -> Vec<u8> {
    (0..99)
        .flat_map(|i| {
            let body: Vec<u8> = format!("record {i} ").into_bytes().repeat(10_000);
            response(i, HEAD, &body, if i == bad { length_error } else { 0 })
        })
        .collect()
}

/// Record ids and errors (kind, offset) of a file, and the reader's resync count.
fn read(path: &Path) -> (Vec<String>, Vec<(ErrorKind, u64)>, u64) {
    let mut reader = WarcReader::new(File::open(path).unwrap()).unwrap();
    let mut ids = Vec::new();
    let mut errors = Vec::new();
    while let Some(item) = reader.next_record(None) {
        match item {
            Ok(record) => ids.push(record.record_id().unwrap().to_string()),
            Err(error) => errors.push((error.kind, error.offset)),
        }
    }
    (ids, errors, reader.resyncs())
}

/// Uncompressed, a Content-Length 3 MB too large (more than the reader's buffer can keep)
/// or past the end of the file costs its own record only: the records it swallowed are
/// read again, found by one counted resynchronization.
#[test]
fn a_content_length_megabytes_too_large_costs_only_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let intact = dir.path().join("intact.warc");
    std::fs::write(&intact, crawl(usize::MAX, 0)).unwrap();
    let (intact_ids, errors, _) = read(&intact);
    assert!(errors.is_empty());
    assert_eq!(intact_ids.len(), 99);
    if let Some(theirs) = warcio_records(&intact) {
        let theirs: Vec<String> = theirs.into_iter().map(|(id, _)| id).collect();
        assert_eq!(theirs, intact_ids);
    }
    let bad_offset: u64 = crawl(usize::MAX, 0)
        .windows(5)
        .enumerate()
        .filter(|(_, w)| w == b"WARC/")
        .nth(40)
        .unwrap()
        .0 as u64;
    for (name, error, kind) in [
        ("plus-3mb.warc", 3_000_000, ErrorKind::ContentLengthMismatch),
        ("past-the-end.warc", 1 << 40, ErrorKind::RecordTruncated),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, crawl(40, error)).unwrap();
        let (ids, errors, resyncs) = read(&path);
        let mut want = intact_ids.clone();
        want.remove(40);
        assert_eq!(ids, want, "{name}");
        assert_eq!(errors, [(kind, bad_offset)], "{name}");
        assert_eq!(resyncs, 1, "{name}");

        // The import keeps the 98 captures and counts the resynchronization.
        let store = dir.path().join(format!("{name}.store"));
        let run = sediment(&store, &["import-warc", path.to_str().unwrap(), "--json"]);
        assert_eq!(run.status, 3, "{name}: {}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(report["counts"]["resyncs"], 1, "{name}: {report}");
        assert_eq!(report["counts"]["captures"], 98, "{name}: {report}");
        assert_eq!(json_lines(&ok(&store, &["captures"])).len(), 98, "{name}");
    }
}

/// An HTTP head longer than the reader keeps (256 KiB) still ends where it ends: the row is
/// keyed by the SHA-1 of the payload after it (as warcio reads it), never of the block.
#[test]
fn an_http_head_over_the_limit_keys_the_row_by_its_payload() {
    let mut head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n".to_vec();
    let mut n = 0;
    while head.len() < 300_000 {
        head.extend_from_slice(
            format!("Set-Cookie: c{n}=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n").as_bytes(),
        );
        n += 1;
    }
    head.extend_from_slice(b"\r\n");
    let body = b"the payload after a very long head";
    let mut data = response(1, &head, body, 0);
    data.extend_from_slice(&response(2, HEAD, b"a short one", 0));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long-head.warc");
    std::fs::write(&path, &data).unwrap();

    let reader = WarcReader::new(File::open(&path).unwrap()).unwrap();
    let records: Vec<_> = reader.map(Result::unwrap).collect();
    let payload_sha1 = Sha1::digest(body);
    assert_eq!(records[0].payload.as_ref().unwrap().sha1, payload_sha1[..]);
    assert_eq!(records[0].http_status(), Some(200));
    if let Some(theirs) = warcio_records(&path) {
        assert_eq!(theirs[0].1, hex(&payload_sha1));
        assert_eq!(theirs.len(), records.len());
    }

    let store = dir.path().join("s");
    let run = sediment(
        &store,
        &[
            "import-warc",
            "--all-types",
            path.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["counts"]["http_heads_over_limit"], 1, "{report}");
    let keys: BTreeSet<String> = json_lines(&ok(&store, &["export"]))
        .iter()
        .map(|row| row["key"].as_str().unwrap().to_string())
        .collect();
    let key = |bytes: &[u8]| data_encoding::BASE32_NOPAD.encode(&Sha1::digest(bytes));
    let mut block = head.clone();
    block.extend_from_slice(body);
    assert!(keys.contains(&key(body)), "{keys:?}");
    assert!(keys.contains(&key(b"a short one")), "{keys:?}");
    assert!(!keys.contains(&key(&block)), "{keys:?}");
    assert_eq!(keys.len(), 2);
}

/// (offset, reason) of every problem in a rejects file.
fn problems(rejects: &Path) -> BTreeSet<(u64, String)> {
    json_lines(&std::fs::read_to_string(rejects).unwrap())
        .iter()
        .map(|p| {
            (
                p["offset"].as_u64().unwrap(),
                p["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `cdx` and `import-warc` index the same records of a damaged WARC (records without
/// WARC-Record-ID are indexed by both, records with a WARC-Date that is not a date or
/// without WARC-Target-URI by neither) and report the same problems at the same offsets.
#[test]
fn cdx_and_import_warc_agree_on_what_they_cannot_index() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("corrupt/manifest.json")).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut unindexed_seen = 0;
    for file in [
        "warc-unindexable-records.warc",
        "warc-missing-record-id.warc",
        "gz-missing-record-id.warc.gz",
        "warc-embedded-record.warc",
        "gz-bad-crc.warc.gz",
    ] {
        let path = fixture(&format!("corrupt/{file}"));
        let path = path.to_str().unwrap();
        let cdx = dir.path().join(format!("{file}.cdxj"));
        let cdx_rejects = dir.path().join(format!("{file}.cdx-rejects"));
        let run = sediment(
            &dir.path().join("unused"),
            &[
                "cdx",
                "--cdxj",
                path,
                "-o",
                cdx.to_str().unwrap(),
                "--rejects",
                cdx_rejects.to_str().unwrap(),
            ],
        );
        assert_eq!(run.status, 3, "{file}: {}", run.stderr);
        let store = dir.path().join(file);
        let import_rejects = dir.path().join(format!("{file}.import-rejects"));
        let run = sediment(
            &store,
            &[
                "import-warc",
                "--all-types",
                "--all-statuses",
                path,
                "--rejects",
                import_rejects.to_str().unwrap(),
            ],
        );
        assert_eq!(run.status, 3, "{file}: {}", run.stderr);

        let indexed: BTreeSet<u64> = std::fs::read_to_string(&cdx)
            .unwrap()
            .lines()
            .map(|line| {
                let json: Value =
                    serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap()).unwrap();
                json["offset"].as_str().unwrap().parse().unwrap()
            })
            .collect();
        let captured: BTreeSet<u64> = json_lines(&ok(&store, &["captures"]))
            .iter()
            .map(|c| c["offset"].as_u64().unwrap())
            .collect();
        assert_eq!(indexed, captured, "{file}");
        let reported = problems(&cdx_rejects);
        // Not vacuous: each file has records indexed or records reported (the unindexable
        // file's two capturable records are both damaged).
        assert!(!indexed.is_empty() || !reported.is_empty(), "{file}");
        assert_eq!(reported, problems(&import_rejects), "{file}");
        let case = manifest
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["file"] == file)
            .unwrap();
        for skipped in case["unindexed"].as_array().into_iter().flatten() {
            let offset = skipped["offset"].as_u64().unwrap();
            let reason = skipped["reason"].as_str().unwrap().to_string();
            assert!(
                reported.contains(&(offset, reason)),
                "{file}: {skipped} in {reported:?}"
            );
            assert!(!indexed.contains(&offset), "{file}: {skipped}");
            unindexed_seen += 1;
        }
        for error in case["errors"].as_array().unwrap() {
            let offset = error["offset"].as_u64().unwrap();
            let reason = error["kind"].as_str().unwrap().to_string();
            assert!(
                reported.contains(&(offset, reason)),
                "{file}: {error} in {reported:?}"
            );
        }
    }
    assert_eq!(unindexed_seen, 2);
}
