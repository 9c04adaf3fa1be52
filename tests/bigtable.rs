//! The Bigtable backend (issue 16), against the Cloud Bigtable emulator: the seed's table
//! as `cbt` sees it, every command on `bigtable://` giving what it gives on RocksDB, and
//! two writers importing into one table at once.

mod common;
mod serve_support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::emulator::Emulator;
use common::{corpus, fixture, json_lines, ok};
use serve_support::{SITE, Server, enc};
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

/// Files of the fixture crawl that the shared corpus's GROBID replies are imported for.
const PDFS: [&str; 3] = [
    "G7ZJQB5QZECDT7S5KINMIAZ3VS4Z23VK",
    "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A",
    "ZU7MYY6R5K3HR4GC6TVCZKK5RDXZQVWO",
];

/// Every file under `dir` with its bytes, by relative path.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                pending.push(p);
            } else {
                let name = p.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn enrichment_projections_and_serve_give_on_bigtable_what_they_give_on_rocksdb() {
    let Some(emulator) = Emulator::start() else {
        return;
    };
    let teis: Option<Vec<_>> = [
        "grobid/23b29ea36382680716be08fc71aa81bd226e8a85.xml",
        "grobid/example.tei.xml",
        "grobid/062RoisinAronAmericanNaturalist03.grobid.tei.xml",
    ]
    .iter()
    .map(|name| corpus(name))
    .collect();
    let (Some(teis), Some(catalog)) = (teis, corpus("sandcrawler/crossref_sample.bibjson")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let bigtable = emulator.store("enriched");
    emulator.ok(&bigtable, &["bigtable", "create"]);
    let crawls = [
        fixture("crawl/crawl1.warc.gz").display().to_string(),
        fixture("crawl/crawl2.warc.gz").display().to_string(),
    ];
    let tei_dir = dir.path().join("tei");
    std::fs::create_dir(&tei_dir).unwrap();
    for (key, tei) in PDFS.iter().zip(&teis) {
        let raw = data_encoding::BASE32_NOPAD.decode(key.as_bytes()).unwrap();
        std::fs::copy(tei, tei_dir.join(format!("{}.tei.xml", hex::encode(raw)))).unwrap();
    }
    let warc_dir = fixture("crawl").display().to_string();
    let (tei_dir, catalog) = (path(&tei_dir), path(&catalog));
    let steps: [&[&str]; 4] = [
        &["import-warc", &crawls[0], &crawls[1]],
        &["import-tei", tei_dir],
        &["catalog", "load", catalog],
        &["match"],
    ];
    for step in steps {
        ok(&rocks, step);
        emulator.ok(&bigtable, step);
    }
    let export = ok(&rocks, &["export"]);
    assert_eq!(
        json_lines(&ok(&rocks, &["export", "--families", "grobid0"])).len(),
        3
    );
    assert!(export.contains("match0:mstatus"), "{export}");
    assert_eq!(emulator.ok(&bigtable, &["export"]), export, "export");

    // The summary database, and the word indexes of the two older engines, file for file.
    let out = |name: &str| dir.path().join(name).display().to_string();
    let (a, b) = (out("rocks-summary.db"), out("bigtable-summary.db"));
    ok(
        &rocks,
        &["project", "summary", "-o", &a, "--warc-dir", &warc_dir],
    );
    emulator.ok(
        &bigtable,
        &["project", "summary", "-o", &b, "--warc-dir", &warc_dir],
    );
    assert_eq!(table_counts(Path::new(&a)), table_counts(Path::new(&b)));
    for engine in ["locust", "jdbm"] {
        let (a, b) = (
            out(&format!("rocks-{engine}")),
            out(&format!("bigtable-{engine}")),
        );
        ok(
            &rocks,
            &["project", engine, "-o", &a, "--warc-dir", &warc_dir],
        );
        emulator.ok(
            &bigtable,
            &["project", engine, "-o", &b, "--warc-dir", &warc_dir],
        );
        let (a, b) = (tree(Path::new(&a)), tree(Path::new(&b)));
        assert!(!a.is_empty());
        assert!(a == b, "{engine}: the outputs differ");
    }

    // The wayback CDX server over each store.
    let envs = [("BIGTABLE_EMULATOR_HOST", emulator.host.as_str())];
    let served = |store: &std::ffi::OsStr| {
        let server = Server::start_with(store, &[], &envs);
        let query = format!(
            "/cdx?url={}&matchType=prefix&output=json",
            enc(&format!("{SITE}/"))
        );
        let reply = server.get(&query);
        assert_eq!(reply.status, 200);
        let exact = server.get(&format!("/cdx?url={}", enc(&format!("{SITE}/"))));
        assert_eq!(exact.status, 200);
        assert!(!exact.lines().is_empty());
        let row = server.get(&format!("/sha1/{}", PDFS[1]));
        let payload = server.get(&format!("/payload/{}", PDFS[1]));
        assert_eq!((row.status, payload.status), (200, 200));
        (reply.text(), row.text(), payload.body)
    };
    let from_rocks = served(rocks.as_os_str());
    assert!(from_rocks.0.lines().count() > 10, "{}", from_rocks.0);
    assert_eq!(served(std::ffi::OsStr::new(&bigtable)), from_rocks, "serve");
}

#[test]
fn a_bad_emulator_address_is_an_error_not_a_panic() {
    for host in ["", "localhost", "127.0.0.1:1/x"] {
        let run = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .env("BIGTABLE_EMULATOR_HOST", host)
            .args(["--store", "bigtable://p/i/t", "stats"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{host:?}: {stderr}");
        assert!(
            stderr.contains("BIGTABLE_EMULATOR_HOST") && !stderr.contains("panicked"),
            "{stderr}"
        );
    }
}
