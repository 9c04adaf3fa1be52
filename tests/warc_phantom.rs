//! Phantom records (issue 33): a page that quotes a complete WARC record in its HTML, with
//! its own Content-Length wrong (not a number, missing, zero, too short, 10 bytes too long,
//! past the end of the file). Resynchronizing after the damage must never take the quoted
//! record as a capture: neither `import-warc` nor `cdx` may name its URL, the page is a
//! problem at its offset, and the records before and after it are all kept. Uncompressed
//! and whole-file gzip (gzip per record resynchronizes on member starts, see
//! `fixtures/corrupt/gz-embedded-record.warc.gz`).

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use common::{json_lines, ok, sediment};
use serde_json::Value;
use sha1::{Digest, Sha1};

const PHANTOM_URI: &str = "http://phantom.example/quoted";

fn base32(bytes: &[u8]) -> String {
    data_encoding::BASE32_NOPAD.encode(bytes)
}

fn record(id: &str, uri: &str, block: &[u8], extra: &str, length: Option<&str>) -> Vec<u8> {
    let length = match length {
        Some(value) => format!("Content-Length: {value}\r\n"),
        None => String::new(),
    };
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{id}>\r\n\
         WARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Target-URI: {uri}\r\n{extra}\
         Content-Type: application/http; msgtype=response\r\n{length}\r\n"
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";

/// A complete, valid response with both digests.
fn good(id: &str, uri: &str, body: &[u8]) -> Vec<u8> {
    let mut block = HEAD.to_vec();
    block.extend_from_slice(body);
    let extra = format!(
        "WARC-Block-Digest: sha1:{}\r\nWARC-Payload-Digest: sha1:{}\r\n",
        base32(&Sha1::digest(&block)),
        base32(&Sha1::digest(body))
    );
    record(id, uri, &block, &extra, Some(&block.len().to_string()))
}

/// The damaged page: its HTML quotes a complete record of `PHANTOM_URI` (with a matching
/// payload digest), in the middle of the page or at its very end.
fn page(damage: &str, digests: bool, quote_at_end: bool) -> Vec<u8> {
    let quoted = good(
        "00000000-0000-4000-8000-00000000beef",
        PHANTOM_URI,
        b"<html>a capture of another file</html>",
    );
    let mut html = b"<html><body><p>What a WARC record looks like:</p><pre>\r\n".to_vec();
    html.extend_from_slice(&quoted);
    if !quote_at_end {
        html.extend_from_slice(b"</pre><p>The end.</p></body></html>\r\n");
    }
    let mut block = HEAD.to_vec();
    block.extend_from_slice(&html);
    let extra = if digests {
        format!(
            "WARC-Block-Digest: sha1:{}\r\nWARC-Payload-Digest: sha1:{}\r\n",
            base32(&Sha1::digest(&block)),
            base32(&Sha1::digest(&html))
        )
    } else {
        String::new()
    };
    let quote_at = block.windows(8).position(|w| w == b"WARC/1.0").unwrap();
    let length = match damage {
        "non-numeric" => Some("12x4".to_string()),
        "missing" => None,
        "zero" => Some("0".to_string()),
        "short" => Some((HEAD.len() + 10).to_string()),
        "short-into-quote" => Some((quote_at + 100).to_string()),
        "long-by-10" => Some((block.len() + 10).to_string()),
        "past-the-end" => Some((block.len() + 100_000).to_string()),
        _ => unreachable!(),
    };
    record(
        "00000000-0000-4000-8000-0000000000aa",
        "http://site.example/page",
        &block,
        &extra,
        length.as_deref(),
    )
}

const DAMAGE: [(&str, &str); 7] = [
    ("non-numeric", "invalid-content-length"),
    ("missing", "missing-content-length"),
    ("zero", "content-length-mismatch"),
    ("short", "content-length-mismatch"),
    ("short-into-quote", "content-length-mismatch"),
    ("long-by-10", "content-length-mismatch"),
    ("past-the-end", "record-truncated"),
];

/// Two records, the damaged page, two records: (file bytes, offset of the page).
fn warc(damage: &str, digests: bool, quote_at_end: bool) -> (Vec<u8>, u64) {
    let mut data = good("1", "http://site.example/before-1", b"<html>one</html>");
    data.extend_from_slice(&good(
        "2",
        "http://site.example/before-2",
        b"<html>two</html>",
    ));
    let at = data.len() as u64;
    data.extend_from_slice(&page(damage, digests, quote_at_end));
    data.extend_from_slice(&good(
        "3",
        "http://site.example/after-1",
        b"<html>three</html>",
    ));
    data.extend_from_slice(&good(
        "4",
        "http://site.example/after-2",
        b"<html>four</html>",
    ));
    (data, at)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
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

const KEPT: [&str; 4] = [
    "http://site.example/before-1",
    "http://site.example/before-2",
    "http://site.example/after-1",
    "http://site.example/after-2",
];

#[test]
fn a_record_quoted_in_a_damaged_page_is_never_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let phantom_key = base32(&Sha1::digest(b"<html>a capture of another file</html>"));
    let mut cases = 0;
    for (damage, reason) in DAMAGE {
        // Without digests nothing tells a record quoted at the very end of the page from
        // the next record: only the quote inside the page is required to be refused then.
        for (digests, quote_at_end) in [(false, false), (true, false), (true, true)] {
            let (plain, page_at) = warc(damage, digests, quote_at_end);
            for gzipped in [false, true] {
                let case = format!(
                    "{damage}-{}-{}{}",
                    if digests { "digests" } else { "no-digests" },
                    if quote_at_end { "end" } else { "middle" },
                    if gzipped { ".warc.gz" } else { ".warc" }
                );
                let path = dir.path().join(&case);
                let (data, offset) = if gzipped {
                    (gzip(&plain), 0)
                } else {
                    (plain.clone(), page_at)
                };
                std::fs::write(&path, &data).unwrap();
                let path_str = path.to_str().unwrap();

                let store = dir.path().join(format!("{case}.store"));
                let import_rejects = dir.path().join(format!("{case}.import-rejects"));
                let run = sediment(
                    &store,
                    &[
                        "import-warc",
                        path_str,
                        "--rejects",
                        import_rejects.to_str().unwrap(),
                        "--json",
                    ],
                );
                assert_eq!(run.status, 3, "{case}: {}", run.stderr);
                let captures: BTreeSet<String> = json_lines(&ok(&store, &["captures"]))
                    .iter()
                    .map(|c| c["url"].as_str().unwrap().to_string())
                    .collect();
                let kept: BTreeSet<String> = KEPT.iter().map(|u| u.to_string()).collect();
                assert_eq!(captures, kept, "{case}");
                let keys: BTreeSet<String> = json_lines(&ok(&store, &["export"]))
                    .iter()
                    .map(|row| row["key"].as_str().unwrap().to_string())
                    .collect();
                assert!(!keys.contains(&phantom_key), "{case}: {keys:?}");
                assert_eq!(keys.len(), 4, "{case}: {keys:?}");
                let report: Value = serde_json::from_str(&run.stdout).unwrap();
                let imported = problems(&import_rejects);
                assert!(
                    imported.contains(&(offset, reason.to_string())),
                    "{case}: {imported:?}"
                );
                assert!(
                    report["problems_total"].as_u64().unwrap() >= 1,
                    "{case}: {report}"
                );

                let cdx = dir.path().join(format!("{case}.cdx"));
                let cdx_rejects = dir.path().join(format!("{case}.cdx-rejects"));
                let run = sediment(
                    &dir.path().join("unused"),
                    &[
                        "cdx",
                        path_str,
                        "-o",
                        cdx.to_str().unwrap(),
                        "--rejects",
                        cdx_rejects.to_str().unwrap(),
                    ],
                );
                assert_eq!(run.status, 3, "{case}: {}", run.stderr);
                let lines = std::fs::read_to_string(&cdx).unwrap();
                assert!(!lines.contains("phantom.example"), "{case}: {lines}");
                for uri in KEPT {
                    assert!(lines.contains(uri), "{case}: {uri} missing from {lines}");
                }
                assert_eq!(problems(&cdx_rejects), imported, "{case}");
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 42);
}
