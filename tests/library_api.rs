//! The public library API against the command line: a program that uses only
//! `sediment::{Store, CaptureQuery, …}` gets what the commands print for the same store.

mod common;

use std::collections::BTreeSet;

use common::{fixture, json_lines, ok};
use sediment::{CaptureQuery, CdxField, Error, IngestOptions, MatchType, Sha1Key, Store};

fn crawls() -> Vec<std::path::PathBuf> {
    vec![
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]
}

/// A store made through the API, closed.
fn api_store(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("api");
    let store = Store::create(&path).unwrap();
    let report = store
        .import_warc(&crawls(), &IngestOptions::default())
        .unwrap();
    assert!(report.count("captures") > 20, "{report:?}");
    assert_eq!(report.count("inputs"), 2, "{report:?}");
    assert!(report.problems.is_empty(), "{report:?}");
    store.close().unwrap();
    path
}

#[test]
fn an_api_import_equals_the_commands_import() {
    let dir = tempfile::tempdir().unwrap();
    let api = api_store(dir.path());
    let cli = dir.path().join("cli");
    let mut args = vec!["import-warc".to_string()];
    args.extend(crawls().iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&cli, &args);
    assert_eq!(
        ok(&api, &["export", "--captures"]),
        ok(&cli, &["export", "--captures"])
    );
    let stats = |store: &std::path::Path| {
        let mut stats: serde_json::Value =
            serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
        stats.as_object_mut().unwrap().remove("store_bytes_on_disk");
        stats
    };
    assert_eq!(stats(&api), stats(&cli));
}

#[test]
fn rows_and_captures_are_what_get_export_and_captures_print() {
    let dir = tempfile::tempdir().unwrap();
    let path = api_store(dir.path());
    let store = Store::open_reader(&path).unwrap();

    // Rows: the scan is `export` in key order, and each row is `get`'s object.
    let exported = json_lines(&ok(&path, &["export"]));
    let rows: Vec<_> = store.rows(b"").map(Result::unwrap).collect();
    assert_eq!(rows.len(), exported.len());
    for (row, line) in rows.iter().zip(&exported) {
        assert_eq!(line["key"], row.key.to_base32());
        let mut cells = serde_json::Map::new();
        for cell in &row.cells {
            cells.insert(
                format!("{}:{}", cell.family, cell.qualifier),
                cell.value.clone(),
            );
        }
        let mut expected = line.as_object().unwrap().clone();
        expected.remove("key");
        expected.remove("sha1hex");
        assert_eq!(cells, expected);
        let got = store.row(&row.key).unwrap().unwrap();
        assert_eq!(&got, row);
    }
    // A key prefix: the rows whose raw key starts with it.
    let first = rows[0].key;
    let prefixed: Vec<_> = store
        .rows(&first.as_bytes()[..1])
        .map(Result::unwrap)
        .collect();
    assert!(
        prefixed
            .iter()
            .all(|r| r.key.as_bytes()[0] == first.as_bytes()[0])
    );
    assert_eq!(
        prefixed.len(),
        rows.iter()
            .filter(|r| r.key.as_bytes()[0] == first.as_bytes()[0])
            .count()
    );
    let missing = Sha1Key::parse("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
    assert_eq!(store.row(&missing).unwrap(), None);

    // Captures: each query is `sediment captures --output json`, field by field.
    let host = "http://127.0.0.1:47213/";
    let queries: Vec<(CaptureQuery, Vec<&str>)> = vec![
        (CaptureQuery::url(host), vec!["--url", host]),
        (
            CaptureQuery::url(host).match_type(MatchType::Prefix),
            vec!["--url", host, "--match", "prefix"],
        ),
        (
            CaptureQuery::url(host)
                .match_type(MatchType::Prefix)
                .filter("mime:text/html")
                .limit(-3),
            vec![
                "--url",
                host,
                "--match",
                "prefix",
                "--filter",
                "mime:text/html",
                "--limit",
                "-3",
            ],
        ),
        (
            CaptureQuery::url(host)
                .match_type(MatchType::Host)
                .reverse(),
            vec!["--url", host, "--match", "host", "--reverse"],
        ),
        (
            CaptureQuery::url(host)
                .match_type(MatchType::Prefix)
                .param("collapse", "digest"),
            vec!["--url", host, "--match", "prefix", "--collapse", "digest"],
        ),
    ];
    for (query, options) in queries {
        let mut args = vec!["captures", "--output", "json"];
        args.extend(options.iter().copied());
        let answer: Vec<Vec<String>> = serde_json::from_str(&ok(&path, &args)).unwrap();
        let (header, lines) = answer.split_first().unwrap();
        let got: Vec<Vec<String>> = store
            .captures(&query)
            .unwrap()
            .iter()
            .map(|capture| {
                header
                    .iter()
                    .map(|name| {
                        let field = CdxField::parse(name).unwrap();
                        capture.get(field).unwrap_or_else(|| "-".to_string())
                    })
                    .collect()
            })
            .collect();
        assert!(!lines.is_empty(), "{options:?}");
        assert_eq!(got, lines, "{options:?}");
    }
}

#[test]
fn a_jsonl_round_trip_through_the_api_gives_an_equal_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = api_store(dir.path());
    let store = Store::open_reader(&path).unwrap();
    let mut out = Vec::new();
    let report = store.export_jsonl(&mut out, true).unwrap();
    assert!(
        report.count("rows") > 0 && report.count("captures") > 0,
        "{report:?}"
    );
    let file = dir.path().join("store.jsonl");
    std::fs::write(&file, &out).unwrap();

    let copy = dir.path().join("copy");
    let target = Store::create(&copy).unwrap();
    let report = target
        .import_jsonl(&[&file], &IngestOptions::default())
        .unwrap();
    assert!(
        report.count("captures") > 0 && report.count("rows") > 0,
        "{report:?}"
    );
    target.close().unwrap();
    assert_eq!(
        ok(&path, &["export", "--captures"]),
        ok(&copy, &["export", "--captures"])
    );
}

#[test]
fn errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    match Store::open_reader(dir.path().join("nothing")) {
        Err(Error::NoStore { message, .. }) => {
            assert!(message.contains("no Sediment store"), "{message}")
        }
        other => panic!("a missing store: {:?}", other.map(|_| ())),
    }
    let path = api_store(dir.path());
    assert!(
        matches!(Store::create(&path), Err(Error::Failed(m)) if m.contains("already holds a store"))
    );
    let writer = Store::open_writer(&path).unwrap();
    match Store::open_writer(&path) {
        Err(Error::Busy { message, .. }) => assert!(message.contains("another"), "{message}"),
        other => panic!("a second writer: {:?}", other.map(|_| ())),
    }
    writer.close().unwrap();
    let store = Store::open_reader(&path).unwrap();
    let bad = CaptureQuery::url("http://127.0.0.1:47213/").from("20x");
    assert!(matches!(bad.check(), Err(Error::BadQuery(_))));
    assert!(matches!(store.captures(&bad), Err(Error::BadQuery(_))));
    // Problems in inputs are reported, never errors: the valid records around are kept.
    let writer = Store::open_writer(&path).unwrap();
    let report = writer
        .import_warc(
            &[fixture("corrupt/gz-truncated-member.warc.gz")],
            &IngestOptions::default(),
        )
        .unwrap();
    assert!(!report.problems.is_empty(), "{report:?}");
    let problem = &report.problem_examples[0];
    assert!(
        problem.file.ends_with("gz-truncated-member.warc.gz"),
        "{problem:?}"
    );
    assert!(problem.offset.is_some(), "{problem:?}");
    writer.close().unwrap();
}

#[test]
fn a_capture_query_stops_when_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let path = api_store(dir.path());
    let store = Store::open_reader(&path).unwrap();
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let query = CaptureQuery::surt_prefix("").limit(-1).cancel_when(flag);
    assert!(matches!(
        store.for_each_capture(&query, |_| true),
        Err(Error::Cancelled)
    ));
    // Every capture, by SURT prefix, is the export's capture lines.
    let all = store.captures(&CaptureQuery::surt_prefix("")).unwrap();
    let exported: BTreeSet<String> = json_lines(&ok(&path, &["export", "--only-captures"]))
        .iter()
        .filter_map(|l| {
            l.get("capture")
                .map(|c| c["url"].as_str().unwrap().to_string())
        })
        .collect();
    let listed: BTreeSet<String> = all.iter().map(|c| c.url.clone()).collect();
    assert_eq!(listed, exported);
}
