//! Issue 33, item 5: a mistyped `--store` creates no store. Commands that only change what
//! a store holds (relocate, grobid, match) refuse a path without a store; commands that
//! bring content create one only when they write something into it.

mod common;

use std::path::Path;

use common::{fixture, ok, sediment};

fn assert_no_store(store: &Path, stderr: &str, what: &str) {
    assert!(!store.exists(), "{what} left {}", store.display());
    assert!(
        stderr.contains(&format!("no Sediment store at {}", store.display())),
        "{what}: {stderr}"
    );
}

#[test]
fn commands_that_only_change_a_store_never_create_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("mistyped");
    let runs: [(&str, Vec<&str>); 4] = [
        (
            "relocate --dry-run",
            vec!["relocate", "/old/", "/new/", "--dry-run"],
        ),
        ("relocate", vec!["relocate", "/old/", "/new/"]),
        // The service is never called: the store is opened first.
        ("grobid", vec!["grobid", "--url", "http://127.0.0.1:9/"]),
        ("match", vec!["match"]),
    ];
    for (what, args) in runs {
        let run = sediment(&store, &args);
        assert_eq!(run.status, 1, "{what}: {}", run.stderr);
        assert_no_store(&store, &run.stderr, what);
    }
    // Nor in an existing empty directory (nothing is put into it).
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = sediment(&empty, &["match"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
}

/// An import with nothing to write (its inputs missing) leaves no store; the next import
/// that writes creates it, and a later run with nothing to write keeps it.
#[test]
fn imports_create_a_store_only_when_they_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("new");
    let missing = dir.path().join("no-such-input");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["import-tei", missing],
        vec!["import-warc", missing],
        vec!["backfill-cdx", missing],
        vec!["import-jsonl", missing],
    ] {
        let run = sediment(&store, &args);
        assert_ne!(run.status, 0, "{args:?}: {}", run.stderr);
        assert!(!store.exists(), "{args:?} left {}", store.display());
        if args[0] == "import-tei" {
            assert_no_store(&store, &run.stderr, args[0]);
        }
    }
    // In an empty directory, the directory stays, empty.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = sediment(&empty, &["import-tei", missing]);
    assert_ne!(run.status, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);

    let warc = fixture("corrupt/warc-missing-record-id.warc");
    let run = sediment(&store, &["import-warc", warc.to_str().unwrap()]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let before = ok(&store, &["export"]);
    let run = sediment(&store, &["import-tei", missing]);
    assert_ne!(run.status, 0, "{}", run.stderr);
    assert_eq!(ok(&store, &["export"]), before);
    // The commands that only change a store work on it.
    ok(&store, &["relocate", "/old/", "/new/", "--dry-run"]);
}
