//! WARC import (issue 4): rows against warcio, payload retrieval, CDX indexing against
//! cdxj-indexer, WARC ↔ CDX equivalence, corruption, idempotence and interruption.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{corpus, finished, fixture, json_lines, ok, ok_in_dir, sediment};
use serde_json::Value;
use sha1::{Digest, Sha1};

/// Runs a Python reference script that needs `modules`; `None` after `common::skip` when
/// python3 or a module is missing. The script failing fails the test.
#[track_caller]
fn python(modules: &[&str], args: &[&str]) -> Option<String> {
    if !common::have_python(modules) {
        return None;
    }
    let out = Command::new("python3")
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python3 {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
        .display()
        .to_string()
}

fn rows_by_key(store: &Path) -> BTreeMap<String, Value> {
    json_lines(&ok(store, &["export"]))
        .into_iter()
        .map(|row| (row["key"].as_str().unwrap().to_string(), row))
        .collect()
}

/// The MIME types of the default file filter, as `schemas/fulltext-types.json` lists them.
fn fulltext_types() -> std::collections::BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/fulltext-types.json");
    let list: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    list["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap().to_string())
        .collect()
}

/// Imports the files with `--all-types` and compares every row with the warcio reference,
/// then checks that the default filter keeps exactly the rows of full-text types.
fn check_against_warcio(files: &[PathBuf]) {
    let names: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec![script("warc_reference_rows.py")];
    args.extend(names.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(reference) = python(&["warcio"], &args) else {
        return;
    };
    let expected: BTreeMap<String, Value> = json_lines(&reference)
        .into_iter()
        .map(|r| (r["key"].as_str().unwrap().to_string(), r))
        .collect();

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let mut import = vec!["import-warc", "--all-types"];
    import.extend(&names);
    let run = sediment(&store, &import);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let rows = rows_by_key(&store);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "row keys of {names:?}"
    );
    // The default filter keeps the rows of full-text types, and all the captures.
    let default = dir.path().join("default");
    import.remove(1);
    let run = sediment(&default, &import);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let fulltext = fulltext_types();
    let full_text_rows: Vec<&String> = rows
        .iter()
        .filter(|(_, row)| {
            row["file:mime"]
                .as_str()
                .is_some_and(|m| fulltext.contains(m))
        })
        .map(|(key, _)| key)
        .collect();
    assert_eq!(
        rows_by_key(&default).keys().collect::<Vec<_>>(),
        full_text_rows,
        "full-text row keys of {names:?}"
    );
    // Every capture is kept either way (only whether it locates a file row differs).
    let without_filter_flag = |store: &Path| -> Vec<Value> {
        json_lines(&ok(store, &["captures"]))
            .into_iter()
            .map(|mut c| {
                c.as_object_mut().unwrap().remove("passes");
                c
            })
            .collect()
    };
    assert_eq!(without_filter_flag(&default), without_filter_flag(&store));
    for (key, want) in &expected {
        let row = &rows[key];
        assert_eq!(row["file:size"], want["size"], "{key} size");
        for (ours, theirs) in [("o", "o"), ("f", "f"), ("c", "c"), ("u", "u"), ("d", "d")] {
            assert_eq!(row["f:c"][ours], want[theirs], "{key} f:c.{ours}");
        }
        assert_eq!(row["file:cdx"]["offset"], want["o"], "{key}");
        assert!(
            row["f:c"]["i"].as_str().is_some_and(|i| !i.is_empty()),
            "{key} record id"
        );
        assert!(row["file:cdx"]["c_size"].as_u64().unwrap() > 0);
    }
}

#[test]
fn heritrix_warc_0_17_rows_equal_warcio() {
    let Some(warc) = corpus("warcbase/example.warc.gz") else {
        return;
    };
    check_against_warcio(&[warc]);
}

#[test]
fn wget_crawls_rows_equal_warcio_including_revisits() {
    check_against_warcio(&[
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]);
    check_against_warcio(&[fixture("crawl/crawl1-plain.warc")]);
}

#[test]
fn other_corpus_warcs_rows_equal_warcio() {
    for name in [
        "pywb/sample_archive/warcs/iana.warc.gz",
        "pywb/sample_archive/warcs/dupes.warc.gz",
        "warcio/test/data/example-iana.org-chunked.warc",
        "chatnoir-resiliparse/tests/data/warcfile.warc.gz",
        "jwarc/test-resources/org/netpreserve/jwarc/cc.warc.gz",
    ] {
        let Some(path) = corpus(name) else { return };
        check_against_warcio(&[path]);
    }
}

#[test]
fn cat_returns_the_payload_whose_sha1_is_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let warc = fixture("crawl/crawl1.warc.gz");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    let rows = rows_by_key(&store);
    assert!(rows.len() > 20);
    for (key, row) in &rows {
        let out = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .args(["--store", store.to_str().unwrap(), "cat", key])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{key}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let digest = data_encoding::BASE32_NOPAD.encode(&Sha1::digest(&out.stdout));
        assert_eq!(&digest, key);
        assert_eq!(out.stdout.len() as u64, row["file:size"].as_u64().unwrap());
    }
    // a WARC that moved is found under --warc-dir; a missing one is a clear error
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    let copy = dir.path().join("copy.warc.gz");
    std::fs::copy(&warc, &copy).unwrap();
    let store2 = dir.path().join("s2");
    ok(&store2, &["import-warc", copy.to_str().unwrap()]);
    std::fs::rename(&copy, moved.join("copy.warc.gz")).unwrap();
    let key = rows.keys().next().unwrap();
    let missing = sediment(&store2, &["cat", key]);
    assert_ne!(missing.status, 0);
    assert!(missing.stderr.contains("--warc-dir"), "{}", missing.stderr);
    ok(
        &store2,
        &["cat", key, "--warc-dir", moved.to_str().unwrap()],
    );
}

#[test]
fn chunked_bodies_are_hashed_as_stored_and_decoded_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let warc = fixture("crawl/crawl1.warc.gz");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    // /news.html is sent chunked by the fixture server; wget stores it chunk-encoded.
    let row = json_lines(&ok(&store, &["export"]))
        .into_iter()
        .find(|r| {
            r["f:c"]["u"]
                .as_str()
                .is_some_and(|u| u.ends_with("/news.html"))
        })
        .expect("news.html row");
    let key = row["key"].as_str().unwrap();
    let stored = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .args(["--store", store.to_str().unwrap(), "cat", key])
        .output()
        .unwrap();
    let decoded = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .args(["--store", store.to_str().unwrap(), "cat", "--decode", key])
        .output()
        .unwrap();
    assert!(stored.status.success() && decoded.status.success());
    assert!(decoded.stdout.len() < stored.stdout.len());
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(text.contains("</html>"), "{text}");
    // the de-chunked bytes are what the chunk framing carries
    let stored_text = String::from_utf8_lossy(&stored.stdout);
    assert!(
        stored_text.starts_with(|c: char| c.is_ascii_hexdigit()),
        "{stored_text:.40}"
    );
}

/// cdxj-indexer's output for the files; `None` after `common::skip` when it is not
/// installed.
#[track_caller]
fn cdxj_indexer(args: &[&str]) -> Option<String> {
    if !common::have_program("cdxj-indexer", common::SETUP) {
        return None;
    }
    let out = Command::new("cdxj-indexer")
        .args(args)
        .output()
        .expect("run cdxj-indexer");
    assert!(
        out.status.success(),
        "cdxj-indexer {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn cdx_equals_cdxj_indexer() {
    let mut files = vec![
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl1-plain.warc"),
        fixture("crawl/crawl2.warc.gz"),
    ];
    for name in [
        "warcbase/example.warc.gz",
        "pywb/sample_archive/warcs/iana.warc.gz",
        "pywb/sample_archive/warcs/dupes.warc.gz",
        "pywb/sample_archive/warcs/example.warc.gz",
        "pywb/sample_archive/warcs/example.warc",
        "pywb/sample_archive/warcs/post-test.warc.gz",
        "warcio/test/data/example-iana.org-chunked.warc",
        "warcio/test/data/example-resource.warc.gz",
        "chatnoir-resiliparse/tests/data/warcfile.warc.gz",
        "jwarc/test-resources/org/netpreserve/jwarc/cc.warc.gz",
    ] {
        if let Some(p) = corpus(name) {
            files.push(p);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let path = file.to_str().unwrap();
        for (flag, ours) in [
            ("-11", vec!["cdx", path]),
            ("", vec!["cdx", "--cdxj", path]),
        ] {
            let mut theirs = vec!["-s"];
            if !flag.is_empty() {
                theirs.insert(0, flag);
            }
            theirs.push(path);
            let Some(expected) = cdxj_indexer(&theirs) else {
                return;
            };
            let got = finished(&dir.path().join("unused"), &ours);
            assert_eq!(
                got, expected,
                "sediment {ours:?} vs cdxj-indexer {theirs:?}"
            );
        }
    }
}

#[test]
fn warc_import_and_wget_cdx_backfill_give_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let from_warc = dir.path().join("warc");
    let from_cdx = dir.path().join("cdx");
    // Run where the files are, so that the WARC path "as given" is the name wget wrote.
    let crawl = fixture("crawl");
    ok_in_dir(&crawl, &from_warc, &["import-warc", "crawl1.warc.gz"]);
    ok_in_dir(&crawl, &from_cdx, &["backfill-cdx", "crawl1.cdx"]);
    let warc_rows = rows_by_key(&from_warc);
    let cdx_rows = rows_by_key(&from_cdx);
    // wget's CDX lists response records only; the WARC's resource records (wget's own
    // log and arguments, `metadata://` URLs) are not files of the crawl: the same rows.
    assert_eq!(
        warc_rows.keys().collect::<Vec<_>>(),
        cdx_rows.keys().collect::<Vec<_>>()
    );
    for (key, cdx_row) in &cdx_rows {
        let warc_row = &warc_rows[key];
        for field in ["u", "d", "f", "o", "c", "i"] {
            assert_eq!(
                warc_row["f:c"][field], cdx_row["f:c"][field],
                "{key} f:c.{field}"
            );
        }
        for field in ["surt", "url", "dt", "warc", "offset"] {
            assert_eq!(
                warc_row["file:cdx"][field], cdx_row["file:cdx"][field],
                "{key} file:cdx.{field}"
            );
        }
        assert_eq!(warc_row["file:mime"], cdx_row["file:mime"], "{key}");
    }
    // both at once: the captures merge, nothing is counted twice
    let both = dir.path().join("both");
    ok_in_dir(&crawl, &both, &["backfill-cdx", "crawl1.cdx"]);
    ok_in_dir(&crawl, &both, &["import-warc", "crawl1.warc.gz"]);
    let merged = rows_by_key(&both);
    assert_eq!(merged, warc_rows);
}

/// wget's `metadata://` resource records (its arguments and log) are captures, listed and
/// exported as such, but no file rows (issue 34, item 10): not files of the crawl, and
/// skipped by every projection. The import counts them, with any filter.
#[test]
fn wget_metadata_records_are_captures_without_rows_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let warc = fixture("crawl/crawl1.warc.gz");
    for filter in [&[][..], &["--all-types", "--all-statuses"][..]] {
        let store = dir.path().join(format!("s{}", filter.len()));
        let mut args = vec!["import-warc", "--json", warc.to_str().unwrap()];
        args.extend(filter);
        let report: Value = serde_json::from_str(&ok(&store, &args)).unwrap();
        assert_eq!(
            report["counts"]["captures_not_web"], 2,
            "{filter:?}: {report}"
        );
        let rows = rows_by_key(&store);
        let not_web: Vec<&String> = rows
            .iter()
            .filter(|(_, r)| !r["f:c"]["u"].as_str().unwrap().starts_with("http"))
            .map(|(key, _)| key)
            .collect();
        assert!(not_web.is_empty(), "{filter:?}: rows of {not_web:?}");
        let metadata: Vec<Value> = json_lines(&ok(&store, &["captures"]))
            .into_iter()
            .filter(|c| c["url"].as_str().unwrap().starts_with("metadata://"))
            .collect();
        assert_eq!(metadata.len(), 2, "{filter:?}");
        assert!(
            metadata.iter().all(|c| c["passes"] == false),
            "{metadata:?}"
        );
    }
}

/// Record ids of the captures in a store.
fn capture_ids(store: &Path) -> Vec<String> {
    let mut ids: Vec<String> = json_lines(&ok(store, &["captures"]))
        .iter()
        .filter_map(|c| c["record_id"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    ids
}

#[test]
fn corrupt_warcs_report_offsets_and_keep_every_valid_record() {
    // The corrupt files are damaged copies of this one (scripts/make-corrupt-warcs.py).
    let Some(intact) = corpus("warcio/test/data/example.warc.gz") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let intact_store = dir.path().join("intact");
    ok(
        &intact_store,
        &["import-warc", "--all-statuses", intact.to_str().unwrap()],
    );
    let intact_ids = capture_ids(&intact_store);
    assert!(!intact_ids.is_empty());

    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("corrupt/manifest.json")).unwrap())
            .unwrap();
    let cases = manifest.as_array().expect("a list of cases");
    assert!(cases.len() >= 10);
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let path = fixture(&format!("corrupt/{file}"));
        let store = dir.path().join(file);
        let rejects = dir.path().join(format!("{file}.rejects"));
        let run = sediment(
            &store,
            &[
                "import-warc",
                "--all-statuses",
                path.to_str().unwrap(),
                "--rejects",
                rejects.to_str().unwrap(),
            ],
        );
        let problems = json_lines(&std::fs::read_to_string(&rejects).unwrap());
        // Finished, with the damage counted: exit status 3 exactly when something was skipped.
        let expected = if problems.is_empty() { 0 } else { 3 };
        assert_eq!(run.status, expected, "{file}: {}", run.stderr);
        assert!(
            case["errors"].as_array().unwrap().is_empty() || run.status == 3,
            "{file}"
        );
        for error in case["errors"].as_array().unwrap() {
            assert!(
                problems
                    .iter()
                    .any(|p| p["reason"] == error["kind"] && p["offset"] == error["offset"]),
                "{file}: expected {error} among {problems:?}"
            );
            assert!(
                run.stderr.contains(error["kind"].as_str().unwrap()),
                "{file}: {}",
                run.stderr
            );
        }
        for p in &problems {
            assert_eq!(p["file"], path.to_str().unwrap());
        }
        // Records read but not indexable are reported where they are, not captured.
        let bare = |v: &Value| {
            v.as_str()
                .unwrap()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        };
        let unindexed = case["unindexed"].as_array().cloned().unwrap_or_default();
        for skipped in &unindexed {
            assert!(
                problems
                    .iter()
                    .any(|p| p["reason"] == skipped["reason"] && p["offset"] == skipped["offset"]),
                "{file}: expected {skipped} among {problems:?}"
            );
        }
        let unindexed: Vec<String> = unindexed.iter().map(|u| bare(&u["id"])).collect();
        // every valid capture record before and after the damage is imported
        let valid: Vec<String> = case["valid_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(bare)
            .filter(|id| !unindexed.contains(id))
            .collect();
        let want: Vec<&String> = intact_ids.iter().filter(|id| valid.contains(id)).collect();
        let got = capture_ids(&store);
        let got: Vec<&String> = got.iter().collect();
        assert_eq!(got, want, "{file}");
        // and nothing else: no capture of a record stored inside another's payload
        let captures = json_lines(&ok(&store, &["captures"]));
        for uri in case["phantom_uris"].as_array().into_iter().flatten() {
            assert!(
                captures.iter().all(|c| &c["url"] != uri),
                "{file}: a capture of {uri}: {captures:?}"
            );
        }
    }
}

#[test]
fn reruns_are_no_ops_and_an_interrupted_run_completes() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = [
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ];
    let args: Vec<&str> = std::iter::once("import-warc")
        .chain(warcs.iter().map(|p| p.to_str().unwrap()))
        .collect();
    let clean = dir.path().join("clean");
    ok(&clean, &args);
    let expected = ok(&clean, &["export"]);
    let again = sediment(&clean, &args);
    assert!(
        again.stderr.contains("already ingested"),
        "{}",
        again.stderr
    );
    assert_eq!(ok(&clean, &["export"]), expected);

    if !cfg!(feature = "crash-points") {
        // The binary only has the simulated crash with the feature; without it the run
        // would complete and prove nothing.
        common::skip(
            "the crash-points feature",
            "cargo test --features crash-points (scripts/test.sh)",
        );
        return;
    }
    // A run that dies (simulated crash: the process exits without recording its inputs),
    // then the same command again: through SST files into the empty store (nothing is
    // written before the wave ends), and through the write path after writing some
    // batches (made durable, as a kill between two batches leaves them).
    for (name, extra) in [
        ("crashed-bulk", None),
        ("crashed-write-path", Some("--no-bulk")),
    ] {
        let crashed = dir.path().join(name);
        let run_args: Vec<&str> = args.iter().copied().chain(extra).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .env("SEDIMENT_TEST_CRASH_AFTER_CAPTURES", "40")
            .arg("--store")
            .arg(&crashed)
            .args(&run_args)
            .output()
            .unwrap();
        assert!(
            out.status.code() != Some(0)
                && String::from_utf8_lossy(&out.stderr).contains("simulated crash"),
            "{name}: the simulated crash stops the run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ok(&crashed, &run_args);
        assert_eq!(ok(&crashed, &["export"]), expected, "{name}");
    }
}

/// Everything a store shows of its captures, rows and crawl records, for comparing two
/// stores (its size on disk aside).
fn store_views(store: &Path) -> Vec<(&'static str, String)> {
    let mut stats: Value = serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
    stats.as_object_mut().unwrap().remove("store_bytes_on_disk");
    vec![
        ("export", ok(store, &["export"])),
        ("export --captures", ok(store, &["export", "--captures"])),
        ("captures", ok(store, &["captures"])),
        ("cdx", ok(store, &["captures", "--output", "cdx"])),
        ("stats", stats.to_string()),
    ]
}

#[test]
fn an_import_into_an_empty_store_through_sst_files_equals_the_write_path() {
    let corpus_warcs = [
        "warcbase/example.warc.gz",
        "pywb/sample_archive/warcs/iana.warc.gz",
        "pywb/sample_archive/warcs/dupes.warc.gz",
        "pywb/sample_archive/warcs/example-wget-1-14.warc.gz",
        "warcio/test/data/example-iana.org-chunked.warc",
        "chatnoir-resiliparse/tests/data/warcfile.warc.gz",
        "jwarc/test-resources/org/netpreserve/jwarc/cc.warc.gz",
    ];
    let Some(mut inputs) = corpus_warcs
        .iter()
        .map(|name| corpus(name))
        .collect::<Option<Vec<PathBuf>>>()
    else {
        return;
    };
    // wget crawls with revisits, request and metadata records, a request without its
    // response (a failed fetch) and warcinfo records; and a WACZ package of one.
    for name in [
        "crawl/crawl1.warc.gz",
        "crawl/crawl2.warc.gz",
        "crawl/crawl1-plain.warc",
        "crawl-run/run-00000.warc.gz",
        "crawl-run/run-00001.warc.gz",
        "crawl-run/run-00002.warc.gz",
        "crawl-run/run-meta.warc.gz",
    ] {
        inputs.push(fixture(name));
    }
    let dir = tempfile::tempdir().unwrap();
    let packaged = dir.path().join("packaged");
    ok(
        &packaged,
        &["import-warc", fixture("crawl-run").to_str().unwrap()],
    );
    let wacz = dir.path().join("run.wacz");
    ok(&packaged, &["export-wacz", "-o", wacz.to_str().unwrap()]);
    inputs.push(wacz);

    let args = |extra: &[&'static str]| -> Vec<String> {
        let mut args: Vec<String> = ["import-warc", "--all-types"].map(String::from).to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        args.extend(inputs.iter().map(|p| p.to_str().unwrap().to_string()));
        args
    };
    let run = |store: &Path, extra: &[&'static str]| {
        let args = args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = sediment(store, &args);
        assert_eq!(out.status, 0, "{}", out.stderr);
        out.stderr
    };
    let write_path = dir.path().join("write-path");
    let stderr = run(&write_path, &["--no-bulk"]);
    assert!(!stderr.contains("sst_files"), "{stderr}");
    let want = store_views(&write_path);
    assert!(want[2].1.lines().count() > 100, "{}", want[2].1);

    for (name, extra) in [
        ("one thread", &["--threads", "1"][..]),
        ("two threads", &["--threads", "2"][..]),
    ] {
        let bulk = dir.path().join(name);
        let stderr = run(&bulk, extra);
        assert!(stderr.contains("sst_files"), "{name}: {stderr}");
        for ((view, got), (_, want)) in store_views(&bulk).iter().zip(&want) {
            assert_eq!(got, want, "{name}: {view}");
        }
    }

    // A store that holds captures takes the next import through the write path.
    let second = run(&write_path, &["--force"]);
    assert!(!second.contains("sst_files"), "{second}");
}

#[test]
fn directories_and_standard_input_are_inputs_too() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = fixture("crawl");
    let files = dir.path().join("files");
    ok_in_dir(
        &crawl,
        &files,
        &[
            "import-warc",
            "crawl1.warc.gz",
            "crawl1-plain.warc",
            "crawl2.warc.gz",
        ],
    );
    let from_dir = dir.path().join("dir");
    let run = sediment(&from_dir, &["import-warc", crawl.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("inputs 3"),
        "the directory's three WARCs: {}",
        run.stderr
    );
    let keys = |store: &Path| rows_by_key(store).into_keys().collect::<Vec<_>>();
    assert_eq!(keys(&from_dir), keys(&files));

    let bytes = std::fs::read(fixture("crawl/crawl1.warc.gz")).unwrap();
    let from_stdin = dir.path().join("stdin");
    let run = common::sediment_in(
        &from_stdin,
        &["import-warc", "-", "--name", "crawl1.warc.gz"],
        Some(&bytes),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let single = dir.path().join("single");
    ok(
        &single,
        &[
            "import-warc",
            fixture("crawl/crawl1.warc.gz").to_str().unwrap(),
        ],
    );
    assert_eq!(keys(&from_stdin), keys(&single));
}

/// `import-warc --follow DIR`: a file a crawler is still writing (`*.open`) is left alone;
/// once renamed it is imported and published while the follower runs (a reader sees its
/// captures); SIGTERM stops it cleanly; after a restart the files already imported are
/// passed over without reading, and new ones are imported.
#[test]
fn follow_imports_each_warc_when_its_writer_closes_it_and_resumes_after_a_restart() {
    use std::time::{Duration, Instant};
    let (Some(first), Some(second)) = (
        corpus("warcbase/example.warc.gz"),
        corpus("pywb/sample_archive/warcs/example-wget-1-14.warc.gz"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    let store = dir.path().join("store");
    let captures = |store: &Path| -> u64 {
        let run = sediment(store, &["stats", "--json"]);
        if run.status != 0 {
            return 0;
        }
        let stats: Value = serde_json::from_str(&run.stdout).unwrap();
        stats["captures"].as_u64().unwrap()
    };
    let expected_first = {
        let reference = dir.path().join("reference");
        ok(&reference, &["import-warc", first.to_str().unwrap()]);
        captures(&reference)
    };
    assert!(expected_first > 0);
    let start = |settle: &str| {
        let child = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .arg("--store")
            .arg(&store)
            .args(["import-warc", "--json", "--settle", settle, "--follow"])
            .arg(&crawl)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        common::KilledOnDrop(child)
    };
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let until = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < until, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let stop = |mut follower: common::KilledOnDrop| -> (Value, String) {
        let pid = follower.0.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        let started = Instant::now();
        let child = std::mem::replace(&mut follower.0, Command::new("true").spawn().unwrap());
        let output = child.wait_with_output().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
        (report, stderr)
    };

    let follower = start("0.5");
    // Being written: never taken, however long it stays.
    let open = crawl.join("a.warc.gz.open");
    std::fs::copy(&first, &open).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(captures(&store), 0, "an .open file is still being written");
    std::fs::rename(&open, crawl.join("a.warc.gz")).unwrap();
    wait_for("the closed WARC's captures", &|| {
        captures(&store) == expected_first
    });
    let (report, stderr) = stop(follower);
    assert_eq!(report["counts"]["inputs"], 1, "{report} {stderr}");

    // A restart passes over the file it has (without reading it) and takes a new one.
    let follower = start("0.5");
    std::fs::copy(&second, crawl.join("b.warc.gz")).unwrap();
    wait_for("the second WARC's captures", &|| {
        captures(&store) > expected_first
    });
    let (report, stderr) = stop(follower);
    assert_eq!(report["counts"]["inputs_skipped"], 1, "{report} {stderr}");
    assert_eq!(report["counts"]["inputs"], 1, "{report} {stderr}");
    assert!(stderr.contains("already imported"), "{stderr}");
}
