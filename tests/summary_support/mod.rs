//! Shared by the summary database and search tests: writing small WARCs by hand, running
//! `sediment project summary`, and reading the database.
#![allow(dead_code)]

use std::path::Path;

use rusqlite::Connection;

use crate::common::{fixture, ok};

/// One HTTP response to put in a WARC.
pub struct Response<'a> {
    pub url: &'a str,
    /// `YYYY-MM-DDTHH:MM:SSZ`
    pub date: &'a str,
    pub status: u16,
    pub headers: Vec<(&'a str, &'a str)>,
    pub body: Vec<u8>,
}

impl<'a> Response<'a> {
    pub fn html(url: &'a str, date: &'a str, body: impl Into<Vec<u8>>) -> Response<'a> {
        Response {
            url,
            date,
            status: 200,
            headers: vec![("Content-Type", "text/html; charset=utf-8")],
            body: body.into(),
        }
    }
}

/// Writes an uncompressed WARC/1.0 file of response records.
pub fn write_warc(path: &Path, responses: &[Response]) {
    let mut out = Vec::new();
    for (i, r) in responses.iter().enumerate() {
        let mut http = format!("HTTP/1.1 {} X\r\n", r.status).into_bytes();
        for (name, value) in &r.headers {
            http.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        http.extend_from_slice(format!("Content-Length: {}\r\n\r\n", r.body.len()).as_bytes());
        http.extend_from_slice(&r.body);
        out.extend_from_slice(
            format!(
                "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{:012}>\r\n\
                 WARC-Date: {}\r\nWARC-Target-URI: {}\r\n\
                 Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
                i,
                r.date,
                r.url,
                http.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&http);
        out.extend_from_slice(b"\r\n\r\n");
    }
    std::fs::write(path, out).expect("write WARC");
}

/// Imports WARCs into the store and summarizes it; returns the run's counts.
pub fn import_and_summarize(store: &Path, db: &Path, warcs: &[&Path]) -> serde_json::Value {
    let mut args = vec!["import-warc"];
    let names: Vec<String> = warcs.iter().map(|w| w.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    ok(store, &args);
    summarize(store, db)
}

pub fn summarize(store: &Path, db: &Path) -> serde_json::Value {
    summarize_with(store, db, &[])
}

/// Runs `project summary --json` and returns the run's counts. The run must finish, with
/// exit status 3 exactly when the report counts problems (e.g. WARC files not found).
pub fn summarize_with(store: &Path, db: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["project", "summary", "-o", db.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let run = crate::common::sediment(store, &args);
    let value: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON report ({e}); exit {}: {}", run.status, run.stderr));
    let status = if value["problems_total"] == 0 { 0 } else { 3 };
    assert_eq!(run.status, status, "{}", run.stderr);
    assert_eq!(value["exit_code"], status);
    value["counts"].clone()
}

pub fn count(counts: &serde_json::Value, name: &str) -> u64 {
    counts[name].as_u64().unwrap_or(0)
}

pub fn crawl(name: &str) -> std::path::PathBuf {
    fixture(&format!("crawl/{name}"))
}

pub fn open(db: &Path) -> Connection {
    Connection::open(db).expect("open summary database")
}

/// The database is sound (see `common::assert_consistent_database`).
pub fn assert_sound(conn: &Connection) {
    crate::common::assert_consistent_database(conn, "summary database");
    // The heavy columns' index holds what the search index's rows hold (FTS5 compares
    // the index with its content, read from the search index, when asked with rank 1).
    let heavy: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'sediment_heavy_index')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    if heavy {
        conn.execute(
            "INSERT INTO sediment_heavy_index (sediment_heavy_index, rank)
             VALUES ('integrity-check', 1)",
            [],
        )
        .expect("sediment_heavy_index holds the search index's rows");
    }
}

/// Rows of a query as vectors of text (NULL as "NULL").
pub fn rows(conn: &Connection, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Vec<Vec<String>> {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = stmt.column_count();
    stmt.query_map(params, |r| {
        (0..n)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    rusqlite::types::ValueRef::Blob(b) => hex::encode(b),
                })
            })
            .collect::<Result<Vec<String>, _>>()
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

pub fn one(conn: &Connection, sql: &str, params: &[&dyn rusqlite::ToSql]) -> i64 {
    conn.query_row(sql, params, |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}
