//! What a user who gives the wrong thing is told: the kind of file and the command that
//! reads it, the directory without WARCs, the store not made for a file that is not
//! there, the digest that has captures but no row, the search without a database.

mod common;

use std::path::Path;

use common::{fixture, json_lines, ok, sediment};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_warc_given_to_backfill_cdx_names_import_warc() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let warc = fixture("crawl/crawl1.warc.gz");
    let run = sediment(&store, &["backfill-cdx", s(&warc)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("wrong_input_kind: this is a WARC file; use import-warc"),
        "{}",
        run.stderr
    );
    assert!(!store.exists(), "no store for a run that read nothing");
    // Beside a CDX the WARC is refused and the CDX is read.
    let cdx = fixture("crawl/crawl1.cdx");
    let run = sediment(&store, &["backfill-cdx", s(&warc), s(&cdx)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(run.stderr.contains("use import-warc"), "{}", run.stderr);
    let reference = dir.path().join("reference");
    ok(&reference, &["backfill-cdx", s(&cdx)]);
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

#[test]
fn a_cdx_given_to_import_warc_names_backfill_cdx() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let run = sediment(&store, &["import-warc", s(&fixture("crawl/crawl1.cdx"))]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("wrong_input_kind: this is a CDX file; use backfill-cdx"),
        "{}",
        run.stderr
    );
    assert!(!store.exists());
}

#[test]
fn a_directory_without_warcs_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let empty = dir.path().join("nothing-here");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a WARC").unwrap();
    let run = sediment(&store, &["import-warc", s(&empty)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "{}: no_inputs: no WARC files (*.warc, *.warc.gz, *.wacz) found",
            empty.display()
        )),
        "{}",
        run.stderr
    );
    assert!(!store.exists());
}

#[test]
fn a_missing_warc_leaves_no_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let missing = dir.path().join("missing.warc.gz");
    let run = sediment(&store, &["import-warc", s(&missing)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(run.stderr.contains("unreadable_input"), "{}", run.stderr);
    assert!(!store.exists(), "a store was made for nothing");
}

#[test]
fn get_of_a_digest_with_captures_but_no_row_points_to_captures() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // The second crawl alone: its revisits name payloads of the first crawl, which has
    // no row here.
    ok(
        &store,
        &["import-warc", s(&fixture("crawl/crawl2.warc.gz"))],
    );
    let rows = ok(&store, &["export"]);
    let captures = json_lines(&ok(&store, &["captures"]));
    let rowless = captures
        .iter()
        .filter(|c| c["kind"] == "revisit")
        .filter_map(|c| c["digest"].as_str())
        .find(|d| !rows.contains(d))
        .expect("a revisit of a payload this store has no row for")
        .to_string();
    let run = sediment(&store, &["get", &rowless]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains(&format!(
            "list them with `sediment captures --digest {rowless}`"
        )),
        "{}",
        run.stderr
    );
    let listed = ok(&store, &["captures", "--digest", &rowless]);
    assert!(!listed.is_empty());
    // A digest nothing knows is still just absent.
    let absent = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let run = sediment(&store, &["get", absent]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("no row with key"), "{}", run.stderr);
    assert!(!run.stderr.contains("captures --digest"), "{}", run.stderr);
}

#[test]
fn search_without_a_database_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("summary.db");
    let run = sediment(
        &dir.path().join("store"),
        &["search", "--db", s(&db), "anything"],
    );
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains(&format!(
            "there is no summary database {}: make one from a store with `sediment --store \
             STORE project summary -o {}`",
            db.display(),
            db.display()
        )),
        "{}",
        run.stderr
    );
    assert!(!db.exists(), "searching creates no database");
}
