//! The Bigtable backend (issue 16), against the Cloud Bigtable emulator: the seed's table
//! as `cbt` sees it, every command on `bigtable://` giving what it gives on RocksDB, and
//! two writers importing into one table at once.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::emulator::Emulator;
use common::{corpus, fixture, json_lines, ok};
use sha1::{Digest, Sha1};

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every input the comparisons import: the fixture crawls (CDX and WARC) and, when the
/// shared corpus is here, a real crawl's CDX and pywb's sample WARCs.
fn inputs() -> (Vec<String>, Vec<String>) {
    let mut cdx = vec![fixture("crawl/crawl1.cdx").display().to_string()];
    let mut warcs = vec![
        fixture("crawl/crawl1.warc.gz").display().to_string(),
        fixture("crawl/crawl2.warc.gz").display().to_string(),
    ];
    if let Some(c) = corpus("sandcrawler/example.cdx") {
        cdx.push(c.display().to_string());
    }
    for name in [
        "example.warc.gz",
        "example-wget-1-14.warc.gz",
        "dupes.warc.gz",
    ] {
        if let Some(w) = corpus(&format!("pywb/sample_archive/warcs/{name}")) {
            warcs.push(w.display().to_string());
        }
    }
    (cdx, warcs)
}

#[test]
fn the_seed_table_as_cbt_sees_it() {
    let Some(emulator) = Emulator::start() else {
        return;
    };
    let store = emulator.store("files");
    // Every command but `bigtable create` needs the tables.
    let run = emulator.sediment(&store, &["stats"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("does not exist") && run.stderr.contains("bigtable create"),
        "{}",
        run.stderr
    );
    let created = emulator.ok(&store, &["bigtable", "create"]);
    assert!(created.contains("created files\n"), "{created}");
    let again = emulator.ok(&store, &["bigtable", "create"]);
    assert!(again.contains("files is up to date"), "idempotent: {again}");

    let Some(tables) = emulator.cbt(&["ls"]) else {
        eprintln!("cbt not installed, skipping the rest");
        return;
    };
    let tables: BTreeSet<&str> = tables.lines().collect();
    for t in [
        "files",
        "files_capture",
        "files_capture_by_digest",
        "files_dirty",
        "files_meta",
        "files_catalog",
    ] {
        assert!(tables.contains(t), "{t} missing from {tables:?}");
    }
    let families = emulator.cbt(&["ls", "files"]).unwrap();
    for family in ["f", "file", "grobid0", "match0"] {
        let line = families
            .lines()
            .find(|l| l.split_whitespace().next() == Some(family))
            .unwrap_or_else(|| panic!("family {family} missing:\n{families}"));
        assert!(
            line.contains("versions() > 1"),
            "GC policy of {family}: {line}"
        );
    }

    emulator.ok(
        &store,
        &["backfill-cdx", path(&fixture("crawl/crawl1.cdx"))],
    );
    let stats: serde_json::Value =
        serde_json::from_str(&emulator.ok(&store, &["stats", "--json"])).unwrap();
    let count = emulator.cbt(&["count", "files"]).unwrap();
    assert_eq!(
        count.trim(),
        stats["rows"].to_string(),
        "cbt counts the rows sediment wrote"
    );
    // `cbt read` shows rows with their families and qualifiers as the seed describes.
    let read = emulator.cbt(&["read", "files", "count=3"]).unwrap();
    for column in ["f:c", "file:cdx", "file:mime"] {
        assert!(
            read.contains(column),
            "{column} missing from cbt read:\n{read}"
        );
    }
}

#[test]
fn every_command_gives_on_bigtable_what_it_gives_on_rocksdb() {
    let Some(emulator) = Emulator::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let bigtable = emulator.store("files");
    emulator.ok(&bigtable, &["bigtable", "create"]);
    let (cdx, warcs) = inputs();
    for file in &cdx {
        ok(&rocks, &["backfill-cdx", file]);
        emulator.ok(&bigtable, &["backfill-cdx", file]);
    }
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(String::as_str));
    ok(&rocks, &args);
    emulator.ok(&bigtable, &args);

    let export = ok(&rocks, &["export"]);
    assert!(json_lines(&export).len() > 20);
    assert_eq!(emulator.ok(&bigtable, &["export"]), export, "export");
    assert_eq!(
        emulator.ok(&bigtable, &["captures"]),
        ok(&rocks, &["captures"]),
        "captures"
    );
    // A PDF of the fixture crawl, whose WARC is here.
    let key = "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A";
    assert_eq!(
        emulator.ok(&bigtable, &["get", key]),
        ok(&rocks, &["get", key])
    );
    let payload = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .env("BIGTABLE_EMULATOR_HOST", &emulator.host)
        .args(["--store", &bigtable, "cat", key])
        .output()
        .unwrap();
    assert!(payload.status.success());
    assert_eq!(
        data_encoding::BASE32_NOPAD.encode(&Sha1::digest(&payload.stdout)),
        key,
        "cat reads the payload through the Bigtable row"
    );

    // A projection: the same crawl database.
    let (a, b) = (dir.path().join("rocks.db"), dir.path().join("bigtable.db"));
    // Exit 3: the corpus CDX names WARC files that are not here (counted as problems).
    let run = common::sediment(&rocks, &["project", "crawl", "-o", path(&a)]);
    assert!(matches!(run.status, 0 | 3), "{}", run.stderr);
    let run = emulator.sediment(&bigtable, &["project", "crawl", "-o", path(&b)]);
    assert!(matches!(run.status, 0 | 3), "{}", run.stderr);
    assert_eq!(table_counts(&a), table_counts(&b));

    // JSON lines back into another table reproduce the export.
    let second = emulator.store("copy");
    emulator.ok(&second, &["bigtable", "create"]);
    let exported = dir.path().join("export.jsonl");
    std::fs::write(&exported, &export).unwrap();
    emulator.ok(&second, &["import-jsonl", path(&exported)]);
    assert_eq!(emulator.ok(&second, &["export"]), export);
}

fn table_counts(db: &Path) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables
        .into_iter()
        .map(|t| {
            let n = conn
                .query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
                .unwrap();
            (t, n)
        })
        .collect()
}

#[test]
fn two_writers_at_once_end_with_the_rows_of_one_import() {
    let Some(emulator) = Emulator::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (cdx, warcs) = inputs();
    let reference = dir.path().join("reference");
    for file in &cdx {
        ok(&reference, &["backfill-cdx", file]);
    }
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(String::as_str));
    ok(&reference, &args);
    let expected_rows = ok(&reference, &["export"]);
    let expected_captures = ok(&reference, &["captures"]);

    // Every round, two processes import every WARC (in opposite orders, so they race on
    // the same payloads and the same derived rows) while a third backfills the CDX files
    // (whose lines describe captures of the same WARC records).
    let reversed: Vec<String> = warcs.iter().rev().cloned().collect();
    for round in 0..3 {
        let store = emulator.store(&format!("shared{round}"));
        emulator.ok(&store, &["bigtable", "create"]);
        let spawn = |command: &str, files: &[String]| {
            Command::new(env!("CARGO_BIN_EXE_sediment"))
                .env("BIGTABLE_EMULATOR_HOST", &emulator.host)
                .args(["--store", &store, command, "--threads", "1"])
                .args(files)
                .output()
                .unwrap()
        };
        let outputs = std::thread::scope(|s| {
            let a = s.spawn(|| spawn("import-warc", &warcs));
            let b = s.spawn(|| spawn("import-warc", &reversed));
            let c = s.spawn(|| spawn("backfill-cdx", &cdx));
            [a.join().unwrap(), b.join().unwrap(), c.join().unwrap()]
        });
        for out in &outputs {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            emulator.ok(&store, &["export"]),
            expected_rows,
            "round {round}: rows (first capture, duplicate counts) equal one import of every input"
        );
        assert_eq!(
            emulator.ok(&store, &["captures"]),
            expected_captures,
            "round {round}"
        );
    }
}
