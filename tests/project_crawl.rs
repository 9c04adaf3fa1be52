//! `sediment project crawl` (issue 5): the crawl database of the fixture crawls and of a
//! real Heritrix WARC against an independent warcio/html.parser reference
//! (scripts/crawl_reference.py), the schema against the seed's, incremental re-projection,
//! and a CDX-only store.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_consistent_database, corpus, fixture, ok, ok_in_dir, sediment};
use rusqlite::Connection;
use serde_json::{Value, json};

/// The reference's view of some WARC files; `None` after `common::skip` without
/// python3/warcio.
#[track_caller]
fn reference(warcs: &[&Path]) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/crawl_reference.py");
    let mut args = vec![script.as_path()];
    args.extend(warcs);
    let out = common::python_output(&["warcio"], args)?;
    Some(serde_json::from_slice(&out).expect("reference JSON"))
}

/// Runs `project crawl` and returns its summary line (stderr). The run must finish, with
/// exit status 3 exactly when it counted problems (e.g. WARC files not found).
fn project(store: &Path, db: &Path, extra: &[&str]) -> String {
    let mut args = vec!["project", "crawl", "-o", db.to_str().unwrap()];
    args.extend(extra);
    let run = sediment(store, &args);
    let status = if run.stderr.contains(" problems 0;") {
        0
    } else {
        3
    };
    assert_eq!(run.status, status, "project crawl: {}", run.stderr);
    run.stderr
}

/// A counter of the run summary (`name N`), 0 when absent.
fn counter(summary: &str, name: &str) -> u64 {
    let line = summary
        .lines()
        .find(|l| l.starts_with("project crawl:"))
        .unwrap_or_else(|| panic!("no summary in {summary}"));
    line.split([':', ',', ';'])
        .map(str::trim)
        .find_map(|part| part.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0)
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn table_count(conn: &Connection, table: &str) -> i64 {
    count(conn, &format!("SELECT count(*) FROM {table}"))
}

/// Every capture as the reference describes it: one JSON object per crawl_log row.
fn capture_rows(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT u.str_url, c.time_started_unix_utc, r.http_status_code, c.exit_code,
                    c.crawl_type, f.file_id IS NOT NULL, f.file_size, ft.text, t.str_url,
                    rd.is_permanent, r.http_etag, r.server_last_modified_unix_utc
             FROM crawl_log c
             JOIN url u ON u.url_id = c.url_id
             JOIN request r ON r.crawl_log_id = c.crawl_log_id
             LEFT JOIN file f ON f.crawl_log_id = c.crawl_log_id
             LEFT JOIN file_text ft ON ft.file_id = f.file_id
             LEFT JOIN redirect rd ON rd.crawl_log_id = c.crawl_log_id
             LEFT JOIN url t ON t.url_id = rd.to_url_id",
        )
        .unwrap();
    let mut rows: Vec<String> = stmt
        .query_map([], |r| {
            Ok(json!({
                "url": r.get::<_, String>(0)?,
                "time": r.get::<_, i64>(1)?,
                "status": r.get::<_, Option<i64>>(2)?,
                "exit": r.get::<_, i64>(3)?,
                "crawl_type": r.get::<_, i64>(4)?,
                "file": r.get::<_, bool>(5)?,
                "file_size": r.get::<_, Option<i64>>(6)?,
                "text": r.get::<_, Option<String>>(7)?,
                "redirect": r.get::<_, Option<String>>(8)?,
                "permanent": r.get::<_, Option<bool>>(9)?,
                "etag": r.get::<_, Option<String>>(10)?,
                "last_modified": r.get::<_, Option<i64>>(11)?,
            })
            .to_string())
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows.sort();
    rows
}

fn strings(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap();
    let mut v: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    v.sort();
    v
}

fn candidate_urls(conn: &Connection) -> Vec<String> {
    strings(
        conn,
        "SELECT str_url FROM crawl_candidate JOIN url USING (url_id)",
    )
}

/// The database's content independent of row ids, for comparing two projections.
fn dump(conn: &Connection) -> Vec<String> {
    let mut all = capture_rows(conn);
    all.extend(strings(
        conn,
        "SELECT json_array(u.str_url, c.last_crawl_time_unix_utc, c.last_crawl_exit_code,
                c.last_contentful_crawl_time_unix_utc, c.last_contentful_http_etag)
         FROM crawl_candidate c JOIN url u USING (url_id)",
    ));
    all.extend(strings(
        conn,
        "SELECT json_array(hex(agent_uuid), name, http_user_agent, time_started_unix_utc,
                time_finished_unix_utc) FROM agent",
    ));
    all.extend(strings(
        conn,
        "SELECT json_array(hex(l.crawl_uuid), a.name, m.str_mimetype, cu.str_url, r.robotstxt_approved)
         FROM crawl_log l JOIN agent a USING (agent_id)
         JOIN request r ON r.crawl_log_id = l.crawl_log_id
         LEFT JOIN file f ON f.crawl_log_id = l.crawl_log_id
         LEFT JOIN mimetype m ON m.mimetype_id = f.mimetype_id
         LEFT JOIN url cu ON cu.url_id = f.canonical_url_id",
    ));
    all.extend(strings(conn, "SELECT str_url FROM url"));
    all.extend(strings(conn, "SELECT str_origin FROM origin"));
    all
}

/// integrity_check is ok, every reference resolves, no stored URL has a fragment.
fn assert_sound(conn: &Connection) {
    assert_consistent_database(conn, "crawl database");
    assert_eq!(
        count(conn, "SELECT count(*) FROM url WHERE str_url LIKE '%#%'"),
        0
    );
    assert_eq!(
        count(
            conn,
            "SELECT count(*) FROM crawl_log WHERE length(crawl_uuid) != 16"
        ),
        0
    );
}

/// Compares the projection of `warcs` with the reference: every capture row (URL, time,
/// status, exit code, file row and size, decoded HTML text, redirect, validators), the
/// crawl candidates, the agents and the row count of every table.
fn check_against_reference(warcs: &[&Path], expected: &Value) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut import = vec!["import-warc"];
    import.extend(warcs.iter().map(|p| p.to_str().unwrap()));
    ok(&store, &import);
    let db = dir.path().join("crawl.db");
    let summary = project(&store, &db, &[]);
    let conn = Connection::open(&db).unwrap();
    assert_sound(&conn);

    let captures = expected["captures"].as_array().unwrap();
    let n = |pred: &dyn Fn(&Value) -> bool| captures.iter().filter(|c| pred(c)).count() as i64;
    let counts = [
        ("crawl_log", captures.len() as i64),
        ("request", captures.len() as i64),
        ("file", n(&|c| c["file"] == true)),
        ("file_text", n(&|c| !c["text"].is_null())),
        ("redirect", n(&|c| !c["redirect"].is_null())),
        (
            "crawl_candidate",
            expected["candidates"].as_array().unwrap().len() as i64,
        ),
        ("agent", warcs.len() as i64),
    ];
    for (table, want) in counts {
        assert_eq!(table_count(&conn, table), want, "rows in {table}");
    }
    assert_eq!(
        counter(&summary, "captures") - counter(&summary, "captures_skipped_not_http"),
        captures.len() as u64,
        "every capture but the non-HTTP records (counted)"
    );
    assert_eq!(counter(&summary, "crawl_log_rows"), captures.len() as u64);

    let mut want_rows: Vec<String> = captures.iter().map(Value::to_string).collect();
    want_rows.sort();
    let got_rows = capture_rows(&conn);
    let got: BTreeSet<&String> = got_rows.iter().collect();
    let want: BTreeSet<&String> = want_rows.iter().collect();
    let only_db: Vec<_> = got.difference(&want).take(3).collect();
    let only_ref: Vec<_> = want.difference(&got).take(3).collect();
    assert!(
        only_db.is_empty() && only_ref.is_empty() && got_rows.len() == want_rows.len(),
        "captures differ\nonly in the database: {only_db:#?}\nonly in the reference: {only_ref:#?}"
    );
    assert_eq!(got_rows, want_rows, "the same rows, each as often");

    let want_candidates: Vec<String> = expected["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(candidate_urls(&conn), want_candidates);

    let mut agents: Vec<Value> = conn
        .prepare(
            "SELECT name, http_user_agent, time_started_unix_utc, time_finished_unix_utc
             FROM agent",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(json!({
                "name": r.get::<_, String>(0)?,
                "http_user_agent": r.get::<_, Option<String>>(1)?,
                "time_started": r.get::<_, i64>(2)?,
                "time_finished": r.get::<_, i64>(3)?,
            }))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut want_agents = expected["agents"].as_array().unwrap().clone();
    agents.sort_by_key(|a| a.to_string());
    want_agents.sort_by_key(|a| a.to_string());
    assert_eq!(agents, want_agents);
}

fn fixture_warcs() -> [PathBuf; 2] {
    [
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]
}

#[test]
fn fixture_crawls_match_the_reference() {
    let [w1, w2] = fixture_warcs();
    let Some(expected) = reference(&[&w1, &w2]) else {
        return;
    };
    check_against_reference(&[&w1, &w2], &expected);

    // Every status class of the fixture site, with the exit code the seed gives it.
    let mut by_status: BTreeMap<Option<i64>, BTreeSet<i64>> = BTreeMap::new();
    for c in expected["captures"].as_array().unwrap() {
        by_status
            .entry(c["status"].as_i64())
            .or_default()
            .insert(c["exit"].as_i64().unwrap());
    }
    let expect = |status: Option<i64>, codes: &[i64]| {
        assert_eq!(
            by_status[&status],
            codes.iter().copied().collect::<BTreeSet<_>>(),
            "status {status:?}"
        );
    };
    // 200: indexed HTML, noindex (drafts/upcoming.html), canonical elsewhere
    // (docs/reference.html), other types (PDF, PNG, CSS, JS, RSS, robots.txt)
    expect(Some(200), &[20, 29, 171, 180]);
    expect(Some(301), &[31]);
    expect(Some(302), &[32]);
    expect(Some(307), &[32]);
    expect(Some(404), &[44]);
    expect(Some(410), &[41]);
    // wget's metadata:// records (its log and arguments) are no crawls
    assert!(!by_status.contains_key(&None));
}

#[test]
fn heritrix_warc_matches_the_reference() {
    let Some(warc) = corpus("warcbase/example.warc.gz") else {
        return;
    };
    let Some(expected) = reference(&[&warc]) else {
        return;
    };
    check_against_reference(&[&warc], &expected);
}

#[test]
fn fixture_details() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let [w1, w2] = fixture_warcs();
    ok(
        &store,
        &["import-warc", w1.to_str().unwrap(), w2.to_str().unwrap()],
    );
    let db = dir.path().join("crawl.db");
    project(&store, &db, &[]);
    let conn = Connection::open(&db).unwrap();
    let one = |sql: &str| -> String { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    // <link rel=canonical> of docs/reference.html
    assert_eq!(
        one(
            "SELECT c.str_url FROM file f JOIN url u ON u.url_id = f.url_id
             JOIN url c ON c.url_id = f.canonical_url_id
             WHERE u.str_url LIKE '%/docs/reference.html' LIMIT 1"
        ),
        "http://127.0.0.1:47213/docs/manual.html"
    );
    // the windows-1252 page, declared only by <meta charset>, decoded
    let text = one(
        "SELECT t.text FROM file_text t JOIN file f USING (file_id) JOIN url u USING (url_id)
         WHERE u.str_url LIKE '%/legacy/windows-1252.html' LIMIT 1",
    );
    assert!(text.contains('€') && text.contains("„") && text.contains('ß'));
    assert!(!text.contains('\u{fffd}'));
    // the chunk-encoded page is stored de-chunked
    let news = one(
        "SELECT t.text FROM file_text t JOIN file f USING (file_id) JOIN url u USING (url_id)
         WHERE u.str_url LIKE '%/news.html' LIMIT 1",
    );
    let site = std::fs::read_to_string(fixture("site/v1/news.html")).unwrap();
    assert_eq!(news, site);
    // media types with their charset column; robots: classic → approved
    assert_eq!(
        one("SELECT charset FROM mimetype WHERE str_mimetype = 'text/html; charset=utf-8'"),
        "utf-8"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM request WHERE robotstxt_approved = 1"
        ),
        table_count(&conn, "request")
    );
    // robots.txt fetches are crawl type 1
    assert_eq!(
        count(&conn, "SELECT count(*) FROM crawl_log WHERE crawl_type = 1"),
        2
    );
    // revisits get their original's size and text: /docs/guide.html in crawl2
    let sizes: Vec<String> = strings(
        &conn,
        "SELECT f.file_size || ' ' || length(t.text) FROM file f JOIN url u USING (url_id)
         JOIN file_text t USING (file_id) WHERE u.str_url LIKE '%/docs/guide.html'",
    );
    assert_eq!(sizes.len(), 4, "two captures in each crawl");
    assert!(sizes.windows(2).all(|w| w[0] == w[1]), "{sizes:?}");
    // the permanent redirect to an absolute Location, in both crawls
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM redirect r JOIN url u ON u.url_id = r.url_id
             JOIN url t ON t.url_id = r.to_url_id
             WHERE u.str_url LIKE '%/old-page' AND t.str_url LIKE '%/about.html'
             AND r.is_permanent = 1 AND r.information_source = 1"
        ),
        2
    );
    // the database_info keys the reference engine checks when it opens a database
    for (key, value) in [
        ("unobtanium_database_kind", "crawler"),
        ("unobtanium_crawler_schema_version", "1.0.0"),
        ("unobtanium_base_schema_version", "0.1.0"),
    ] {
        assert_eq!(
            one(&format!(
                "SELECT value FROM unobtanium_database_info WHERE key = '{key}'"
            )),
            value
        );
        assert_eq!(
            one(&format!(
                "SELECT value FROM database_info WHERE key = '{key}'"
            )),
            value
        );
    }
    // UUIDs are version 5
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM crawl_log WHERE substr(hex(crawl_uuid), 13, 1) != '5'"
        ),
        0
    );
}

/// The seed's tables, in its column order: (name, declared type, NOT NULL, primary key).
/// From the reference implementation's DDL (unobtanium 3.0 `initalize_base_database` and
/// `initalize_crawler_database`). The one column sediment adds is marked.
type Column = (&'static str, &'static str, bool, bool);
const SEED: &[(&str, &[Column])] = &[
    (
        "unobtanium_database_info",
        &[("key", "TEXT", true, true), ("value", "TEXT", true, false)],
    ),
    (
        "origin",
        &[
            ("origin_id", "INTEGER", true, true),
            ("port", "INTEGER", false, false),
            ("scheme", "VARCHAR(7)", true, false),
            ("host", "VARCHAR(255)", false, false),
            ("str_origin", "TEXT", true, false),
        ],
    ),
    (
        "url",
        &[
            ("url_id", "INTEGER", true, true),
            ("origin_id", "INTEGER", true, false),
            ("path", "TEXT", false, false),
            ("query", "TEXT", false, false),
            ("username", "TEXT", false, false),
            ("password", "TEXT", false, false),
            ("str_url", "TEXT", true, false),
        ],
    ),
    (
        "mimetype",
        &[
            ("mimetype_id", "INTEGER", true, true),
            ("mime_type", "TEXT", true, false),
            ("mime_subtype", "TEXT", true, false),
            ("mime_suffix", "TEXT", false, false),
            ("charset", "TEXT", false, false),
            ("str_mimetype", "TEXT", true, false),
        ],
    ),
    (
        "mime_parameter",
        &[
            ("mime_parameter_id", "INTEGER", true, true),
            ("mimetype_id", "INTEGER", true, false),
            ("key", "TEXT", true, false),
            ("value", "TEXT", true, false),
        ],
    ),
    (
        "agent",
        &[
            ("agent_id", "INTEGER", true, true),
            ("time_started_unix_utc", "INTEGER", true, false),
            ("time_finished_unix_utc", "INTEGER", false, false),
            ("agent_uuid", "BLOB(16)", true, false),
            ("name", "TEXT", true, false),
            ("http_user_agent", "TEXT", false, false),
        ],
    ),
    (
        "crawl_log",
        &[
            ("crawl_log_id", "INTEGER", true, true),
            ("agent_id", "INTEGER", true, false),
            ("url_id", "INTEGER", true, false),
            ("crawl_type", "INTEGER", true, false),
            ("crawl_uuid", "BLOB(16)", true, false),
            ("time_started_unix_utc", "INTEGER", true, false),
            ("time_taken_ms", "INTEGER", true, false),
            ("exit_code", "INTEGER", true, false),
            ("message", "TEXT", false, false),
        ],
    ),
    (
        "request",
        &[
            ("request_id", "INTEGER", true, true),
            ("crawl_log_id", "INTEGER", true, false),
            ("url_id", "INTEGER", true, false),
            ("time_sent_unix_utc", "INTEGER", true, false),
            ("request_duration_ms", "INTEGER", false, false),
            ("robotstxt_approved", "BOOL", true, false),
            ("exit_code", "INTEGER", true, false),
            ("server_last_modified_unix_utc", "INTEGER", false, false),
            ("http_status_code", "INTEGER", false, false),
            ("http_etag", "VARCHAR(63)", false, false),
        ],
    ),
    (
        "file",
        &[
            ("file_id", "INTEGER", true, true),
            ("crawl_log_id", "INTEGER", true, false),
            ("request_id", "INTEGER", false, false),
            ("url_id", "INTEGER", true, false),
            ("last_modified_unix_utc", "INTEGER", false, false),
            ("file_size", "INTEGER", false, false),
            ("mimetype_id", "INTEGER", true, false),
            ("canonical_url_id", "INTEGER", false, false),
        ],
    ),
    (
        "redirect",
        &[
            ("redirect_id", "INTEGER", true, true),
            ("crawl_log_id", "INTEGER", true, false),
            ("request_id", "INTEGER", false, false),
            ("url_id", "INTEGER", true, false),
            ("last_modified_unix_utc", "INTEGER", false, false),
            ("to_url_id", "INTEGER", true, false),
            ("information_source", "INTEGER", true, false),
            ("is_permanent", "BOOL", true, false),
            ("by_security_policy", "BOOL", true, false),
            // sediment: the seed's reading code selects it, its DDL lacks it
            ("to_url_fragment", "TEXT", false, false),
        ],
    ),
    (
        "file_text",
        &[
            ("file_id", "INTEGER", true, true),
            ("text", "TEXT", true, false),
        ],
    ),
    (
        "crawl_candidate",
        &[
            ("url_id", "INTEGER", true, true),
            ("last_crawl_time_unix_utc", "INTEGER", false, false),
            ("last_crawl_exit_code", "INTEGER", false, false),
            (
                "last_contentful_crawl_time_unix_utc",
                "INTEGER",
                false,
                false,
            ),
            ("last_contentful_http_etag", "TEXT", false, false),
        ],
    ),
];

#[test]
fn schema_matches_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crawl.db");
    // an empty store projects into an empty database with the whole schema
    let store = dir.path().join("store");
    sediment::internals::Store::open(&store)
        .and_then(|s| s.close())
        .unwrap();
    project(&store, &db, &[]);
    let conn = Connection::open(&db).unwrap();
    let tables = strings(
        &conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    let mut seed_tables: Vec<String> = SEED.iter().map(|(t, _)| t.to_string()).collect();
    seed_tables.sort();
    assert_eq!(tables, seed_tables);
    for (table, columns) in SEED {
        let got: Vec<(String, String, bool, bool)> = conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, bool>(3)?,
                    r.get::<_, i64>(5)? > 0,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let want: Vec<(String, String, bool, bool)> = columns
            .iter()
            .map(|(n, t, nn, pk)| (n.to_string(), t.to_string(), *nn, *pk))
            .collect();
        assert_eq!(got, want, "columns of {table}");
    }
    // the seed's unique columns and indices
    let index_columns = |index: &str| {
        strings(
            &conn,
            &format!("SELECT seqno || ':' || name FROM pragma_index_info('{index}')"),
        )
    };
    assert_eq!(
        index_columns("crawl_log_quickinfo"),
        ["0:url_id", "1:time_started_unix_utc", "2:exit_code"]
    );
    assert_eq!(index_columns("url_string"), ["0:str_url", "1:url_id"]);
    assert_eq!(index_columns("origin_by_host"), ["0:host", "1:origin_id"]);
    assert_eq!(
        index_columns("mimetype_string"),
        ["0:str_mimetype", "1:mimetype_id"]
    );
    for (table, column) in [
        ("crawl_log", "crawl_uuid"),
        ("url", "str_url"),
        ("origin", "str_origin"),
        ("mimetype", "str_mimetype"),
    ] {
        let unique = count(
            &conn,
            &format!(
                "SELECT count(*) FROM pragma_index_list('{table}') l
                 JOIN pragma_index_info(l.name) i WHERE l.\"unique\" = 1 AND i.name = '{column}'"
            ),
        );
        assert_eq!(unique, 1, "{table}.{column} is unique");
    }
    // the schema is the embedded schemas/crawl.sql: the CHECKs reject bad conventions
    let bad_uuid = conn.execute(
        "INSERT INTO agent (time_started_unix_utc, agent_uuid, name) VALUES (0, x'00', 'a')",
        [],
    );
    assert!(bad_uuid.is_err(), "a UUID is 16 bytes");
}

#[test]
fn incremental_projection_adds_only_new_captures() {
    let [w1, w2] = fixture_warcs();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("crawl.db");
    ok(&store, &["import-warc", w1.to_str().unwrap()]);
    let first = project(&store, &db, &[]);
    assert_eq!(counter(&first, "crawl_log_rows"), 58);
    assert_eq!(counter(&first, "captures_skipped_not_http"), 2);
    ok(&store, &["import-warc", w2.to_str().unwrap()]);
    let second = project(&store, &db, &[]);
    assert_eq!(counter(&second, "captures_already_present"), 58);
    assert_eq!(counter(&second, "crawl_log_rows"), 59);
    let third = project(&store, &db, &[]);
    assert_eq!(counter(&third, "captures_already_present"), 117);
    assert_eq!(counter(&third, "crawl_log_rows"), 0);

    // the same content as one projection of both crawls
    let fresh = dir.path().join("fresh.db");
    project(&store, &fresh, &[]);
    let (a, b) = (
        Connection::open(&db).unwrap(),
        Connection::open(&fresh).unwrap(),
    );
    assert_sound(&a);
    for table in [
        "agent",
        "crawl_log",
        "request",
        "file",
        "file_text",
        "redirect",
        "crawl_candidate",
        "url",
        "origin",
        "mimetype",
    ] {
        assert_eq!(
            table_count(&a, table),
            table_count(&b, table),
            "rows in {table}"
        );
    }
    assert_eq!(dump(&a), dump(&b));

    // small batches (many transactions, analyses carried across them) and one thread
    let batched = dir.path().join("batched.db");
    project(&store, &batched, &["--batch", "7", "--threads", "1"]);
    assert_eq!(dump(&Connection::open(&batched).unwrap()), dump(&b));

    // Issue 18: the smallest memory budget (every cache evicted again and again) writes the
    // same database, row for row and id for id, as the default budget.
    let tiny = dir.path().join("tiny.db");
    project(&store, &tiny, &["--memory-mb", "1", "--batch", "5"]);
    assert_eq!(
        all_rows(&Connection::open(&tiny).unwrap()),
        all_rows(&b),
        "a 1 MiB budget gives the same database"
    );

    // transactions that end after a few KiB of page text, inside a batch
    let one_batch = dir.path().join("one-batch.db");
    assert_eq!(
        counter(&project(&store, &one_batch, &[]), "transactions"),
        1
    );
    let small = dir.path().join("small-commits.db");
    let run = project(&store, &small, &["--commit-text-kib", "4"]);
    assert!(counter(&run, "transactions") >= 10, "{run}");
    assert_eq!(
        all_rows(&Connection::open(&small).unwrap()),
        all_rows(&b),
        "commits inside a batch give the same database"
    );
}

/// Every row of every table, ids included, in rowid order: two databases with the same
/// rows are the same database.
fn all_rows(conn: &Connection) -> Vec<String> {
    let tables: Vec<String> = strings(
        conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    let mut out = Vec::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut row = vec![table.clone()];
                for i in 0..n {
                    row.push(format!("{:?}", r.get_ref(i)?));
                }
                Ok(row.join("|"))
            })
            .unwrap();
        for row in rows {
            out.push(row.unwrap());
        }
    }
    out
}

/// The capture lines of a wget CDX file: (status, mime, redirect field).
fn cdx_lines(path: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(" CDX") && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[4].to_string(), f[3].to_string(), f[6].to_string())
        })
        .collect()
}

#[test]
fn cdx_only_store_projects_without_file_text_and_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let cdx1 = fixture("crawl/crawl1.cdx");
    let cdx2 = fixture("crawl/crawl2.cdx");
    // run in an empty directory, so the CDX's relative WARC names resolve to nothing
    ok_in_dir(
        dir.path(),
        &store,
        &[
            "backfill-cdx",
            cdx1.to_str().unwrap(),
            cdx2.to_str().unwrap(),
        ],
    );
    let lines: Vec<_> = [&cdx1, &cdx2].iter().flat_map(|p| cdx_lines(p)).collect();
    let ok_lines = lines.iter().filter(|l| l.0 == "200").count() as i64;
    let html_lines = lines
        .iter()
        .filter(|l| l.0 == "200" && l.1 == "text/html")
        .count() as u64;
    let redirect_lines = lines
        .iter()
        .filter(|l| l.0.starts_with('3') && l.2 != "-")
        .count() as i64;
    assert_eq!((lines.len(), redirect_lines), (83, 3));

    let db = dir.path().join("crawl.db");
    let run = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .current_dir(dir.path())
        .args(["--store", store.to_str().unwrap(), "project", "crawl", "-o"])
        .arg(&db)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&run.stderr).into_owned();
    // The CDX names WARC files that are not here: done, with unresolved bodies.
    assert_eq!(run.status.code(), Some(3), "{summary}");
    assert!(summary.contains("--warc-dir"), "{summary}");
    let conn = Connection::open(&db).unwrap();
    assert_sound(&conn);
    assert_eq!(table_count(&conn, "crawl_log"), lines.len() as i64);
    assert_eq!(table_count(&conn, "request"), lines.len() as i64);
    assert_eq!(table_count(&conn, "file"), ok_lines);
    assert_eq!(table_count(&conn, "file_text"), 0);
    assert_eq!(table_count(&conn, "redirect"), redirect_lines);
    assert_eq!(
        counter(&summary, "file_texts_missing_warc_not_found"),
        html_lines,
        "{summary}"
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM crawl_log WHERE message = 'body not read: warc_not_found'"
        ),
        html_lines as i64
    );
    // the percent-encoded absolute redirect field of wget's CDX is decoded
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM redirect r JOIN url t ON t.url_id = r.to_url_id
             WHERE t.str_url = 'http://127.0.0.1:47213/about.html' AND r.is_permanent = 1"
        ),
        1
    );
    // one agent per CDX file, no User-Agent; CDX lines carry no file size
    assert_eq!(
        strings(
            &conn,
            "SELECT name FROM agent WHERE http_user_agent IS NULL"
        ),
        ["cdx: crawl1.cdx", "cdx: crawl2.cdx"]
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM file WHERE file_size IS NOT NULL"
        ),
        0
    );

    // with the WARC directory the same store gets the text of every HTML page
    let with_warcs = dir.path().join("with-warcs.db");
    let warc_dir = fixture("crawl");
    let summary = project(
        &store,
        &with_warcs,
        &["--warc-dir", warc_dir.to_str().unwrap()],
    );
    let conn = Connection::open(&with_warcs).unwrap();
    assert_eq!(table_count(&conn, "file_text"), html_lines as i64);
    assert_eq!(counter(&summary, "file_texts_missing_warc_not_found"), 0);
}

#[test]
fn cdx_revisits_take_the_type_of_their_original() {
    let dir = tempfile::tempdir().unwrap();
    let cdx = dir.path().join("revisits.cdx");
    let digest = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";
    std::fs::write(
        &cdx,
        format!(
            " CDX N b a m s k r M S V g\n\
             org,example)/a 20200101000000 http://example.org/a text/html 200 {digest} - - 100 0 x.warc.gz\n\
             org,example)/a 20200201000000 http://example.org/a warc/revisit - {digest} - - 90 500 x.warc.gz\n\
             org,example)/b 20200201000000 http://example.org/b warc/revisit - {digest} - - 90 900 x.warc.gz\n"
        ),
    )
    .unwrap();
    let store = dir.path().join("store");
    ok_in_dir(dir.path(), &store, &["backfill-cdx", cdx.to_str().unwrap()]);
    let db = dir.path().join("crawl.db");
    let summary = project(&store, &db, &[]);
    let conn = Connection::open(&db).unwrap();
    assert_sound(&conn);
    assert_eq!(
        strings(
            &conn,
            "SELECT u.str_url || ' ' || l.exit_code || ' ' || m.str_mimetype
             FROM file f JOIN crawl_log l USING (crawl_log_id) JOIN url u ON u.url_id = f.url_id
             JOIN mimetype m USING (mimetype_id)"
        ),
        [
            "http://example.org/a 20 text/html",
            "http://example.org/a 20 text/html",
            "http://example.org/b 20 text/html"
        ]
    );
    assert_eq!(counter(&summary, "file_texts_missing_warc_not_found"), 3);
}

/// Issue 11, item 12: a WARC of 100 `Content-Encoding: gzip` bomb pages (each about 16 MiB
/// decoded, the file ~60 KB) must not become a database of gigabytes. Decoding is cut at
/// 100 times the encoded size (at least 1 MiB) and file_text at 1 MiB per page, and the
/// report says so for every page.
#[test]
fn gzip_bombs_are_capped_per_page_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("bombs.warc.gz");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-gzip-bomb-warc.py");
    if common::python_output(&[], [&script, &warc]).is_none() {
        return;
    }
    let warc_bytes = std::fs::metadata(&warc).unwrap().len();
    assert!(warc_bytes < 200_000, "a small archive: {warc_bytes} bytes");
    let store = dir.path().join("store");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    let db = dir.path().join("crawl.db");
    let summary = project(&store, &db, &[]);
    assert_eq!(counter(&summary, "crawl_log_rows"), 100);
    assert_eq!(
        counter(&summary, "html_bodies_cut_expansion"),
        100,
        "{summary}"
    );
    assert_eq!(counter(&summary, "file_texts_cut_at_max_text_bytes"), 100);
    let conn = Connection::open(&db).unwrap();
    assert_eq!(table_count(&conn, "file_text"), 100);
    assert_eq!(
        count(
            &conn,
            "SELECT max(length(CAST(text AS BLOB))) FROM file_text"
        ),
        1 << 20
    );
    drop(conn);
    let db_bytes = std::fs::metadata(&db).unwrap().len();
    assert!(
        db_bytes < 100 * ((1 << 20) + (64 << 10)) + (4 << 20),
        "the database stays within the per-page caps: {db_bytes} bytes"
    );
    // a smaller cap is honoured
    let small = dir.path().join("small.db");
    let summary = project(&store, &small, &["--max-text-bytes", "1000"]);
    assert_eq!(counter(&summary, "file_texts_cut_at_max_text_bytes"), 100);
    let conn = Connection::open(&small).unwrap();
    assert_eq!(
        count(
            &conn,
            "SELECT max(length(CAST(text AS BLOB))) FROM file_text"
        ),
        1000
    );
}
