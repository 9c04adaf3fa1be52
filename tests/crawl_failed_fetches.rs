//! Issue 34, item 3: a request the archive holds no response for (wget writes the request
//! record of a fetch that got "No data received", and nothing else) is a failed fetch: the
//! crawl database has its crawl_log and request rows (exit code 102
//! error_reading_response, no HTTP status), so its URL does not look never crawled.

mod common;

use std::path::Path;

use common::{ok, sediment};
use rusqlite::Connection;

const SITE: &str = "http://127.0.0.1:47213";

/// One WARC record: type, target, record id, WARC-Concurrent-To, HTTP block.
fn record(kind: &str, url: &str, id: u32, concurrent: Option<u32>, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\n\
         WARC-Date: 2026-11-22T01:48:{:02}Z\r\n\
         WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{id:012}>\r\n",
        id % 60
    )
    .into_bytes();
    if let Some(to) = concurrent {
        out.extend_from_slice(
            format!("WARC-Concurrent-To: <urn:uuid:00000000-0000-4000-8000-{to:012}>\r\n")
                .as_bytes(),
        );
    }
    let msgtype = if kind == "request" {
        "request"
    } else {
        "response"
    };
    out.extend_from_slice(
        format!(
            "Content-Type: application/http; msgtype={msgtype}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn request(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nUser-Agent: Wget/1.21.3\r\nHost: 127.0.0.1:47213\r\n\r\n")
        .into_bytes()
}

fn response(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// wget's order (request, then the response naming it), a request that got nothing, and
/// Heritrix's order (response, then the request naming it).
fn write_crawl(path: &Path) {
    let url = |p: &str| format!("{SITE}{p}");
    let mut warc = Vec::new();
    warc.extend(record(
        "request",
        &url("/a.txt"),
        1,
        None,
        &request("/a.txt"),
    ));
    warc.extend(record(
        "response",
        &url("/a.txt"),
        2,
        Some(1),
        &response("a"),
    ));
    warc.extend(record(
        "request",
        &url("/lost.txt"),
        3,
        None,
        &request("/lost.txt"),
    ));
    warc.extend(record(
        "request",
        &url("/c.txt"),
        4,
        None,
        &request("/c.txt"),
    ));
    warc.extend(record(
        "response",
        &url("/c.txt"),
        5,
        Some(4),
        &response("c"),
    ));
    warc.extend(record("response", &url("/d.txt"), 6, None, &response("d")));
    warc.extend(record(
        "request",
        &url("/d.txt"),
        7,
        Some(6),
        &request("/d.txt"),
    ));
    // The last record of the file: nothing follows to answer it.
    warc.extend(record(
        "request",
        &url("/end.txt"),
        8,
        None,
        &request("/end.txt"),
    ));
    std::fs::write(path, warc).unwrap();
}

fn strings(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        Ok((0..n)
            .map(|i| match r.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Null => "NULL".to_string(),
                rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(" "))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// What the crawl database says of each URL: exit code, HTTP status, message.
fn outcomes(db: &Path) -> Vec<String> {
    strings(
        &Connection::open(db).unwrap(),
        "SELECT u.str_url, c.exit_code, r.exit_code, r.http_status_code, c.message,
                k.last_crawl_exit_code
         FROM crawl_log c JOIN url u USING (url_id) JOIN request r USING (crawl_log_id)
         LEFT JOIN crawl_candidate k ON k.url_id = c.url_id ORDER BY 1",
    )
}

#[test]
fn requests_without_response_are_failed_fetches_in_the_crawl_database() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl-00000.warc");
    write_crawl(&warc);
    let store = dir.path().join("store");
    let report: serde_json::Value = serde_json::from_str(&ok(
        &store,
        &["import-warc", "--json", warc.to_str().unwrap()],
    ))
    .unwrap();
    assert_eq!(report["counts"]["failed_fetches"], 2, "{report}");
    assert_eq!(report["counts"]["captures"], 3, "{report}");
    // Not captures: the CDX views do not list them.
    let lost = ok(&store, &["captures", "--url", "127.0.0.1:47213/lost.txt"]);
    assert_eq!(lost.trim(), "");

    let db = dir.path().join("crawl.db");
    let run = sediment(&store, &["project", "crawl", "-o", db.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let message = "no response: the archive holds the request only";
    assert_eq!(
        outcomes(&db),
        vec![
            format!("{SITE}/a.txt 20 20 200 NULL 20"),
            format!("{SITE}/c.txt 20 20 200 NULL 20"),
            format!("{SITE}/d.txt 20 20 200 NULL 20"),
            format!("{SITE}/end.txt 102 102 NULL {message} 102"),
            format!("{SITE}/lost.txt 102 102 NULL {message} 102"),
        ]
    );
    common::assert_consistent_database(&Connection::open(&db).unwrap(), "crawl database");
    // Projecting again adds nothing.
    let run = sediment(&store, &["project", "crawl", "-o", db.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(outcomes(&db).len(), 5);

    // A whole-store export carries them.
    let whole = dir.path().join("whole.jsonl");
    ok(
        &store,
        &["export", "--captures", "-o", whole.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&whole).unwrap();
    assert_eq!(text.matches("{\"failed_fetch\":").count(), 2, "{text}");
    let copy = dir.path().join("copy");
    ok(&copy, &["import-jsonl", whole.to_str().unwrap()]);
    let copied = dir.path().join("copied.db");
    let run = sediment(&copy, &["project", "crawl", "-o", copied.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(outcomes(&copied), outcomes(&db));
}
