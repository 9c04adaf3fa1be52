//! Issue 33, item 2: `project summary` keeps the same per-page limits as `project crawl`
//! (`--max-body-bytes`, `--max-text-bytes`, the 100-fold cap on a Content-Encoding's
//! expansion), counts every cut, and so turns a small WARC of gzip bombs into a small
//! database.

mod common;
mod summary_support;

use std::path::Path;
use std::process::Command;

use common::ok;
use summary_support::{assert_sound, count, open, summarize_with};

const PAGES: u64 = 20;

/// Text bytes of the largest pile.
fn largest_pile(db: &Path) -> i64 {
    open(db)
        .query_row(
            "SELECT max(length(CAST(text AS BLOB)) + length(CAST(secondary_text AS BLOB))
                 + length(CAST(big_headlines AS BLOB)) + length(CAST(small_headlines AS BLOB))
                 + length(CAST(code_text AS BLOB)) + length(CAST(quote_text AS BLOB)))
             FROM text_pile",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn gzip_bombs_are_capped_per_page_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("bombs.warc.gz");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-gzip-bomb-warc.py");
    // Pages of 20 MiB of text each once decoded, as in the issue.
    match Command::new("python3")
        .arg(&script)
        .arg(&warc)
        .args([PAGES.to_string(), "20".to_string()])
        .status()
    {
        Ok(status) if status.success() => {}
        other => {
            common::skip(
                &format!("python3 to run scripts/make-gzip-bomb-warc.py ({other:?})"),
                "scripts/setup.sh",
            );
            return;
        }
    }
    let warc_bytes = std::fs::metadata(&warc).unwrap().len();
    assert!(warc_bytes < 50_000, "a small archive: {warc_bytes} bytes");
    let store = dir.path().join("store");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);

    let db = dir.path().join("summary.db");
    let counts = summarize_with(&store, &db, &[]);
    assert_eq!(count(&counts, "payloads_analysed"), PAGES, "{counts}");
    assert_eq!(
        count(&counts, "html_bodies_cut_expansion"),
        PAGES,
        "{counts}"
    );
    assert_eq!(
        count(&counts, "text_piles_cut_at_max_text_bytes"),
        PAGES,
        "{counts}"
    );
    assert_sound(&open(&db));
    assert_eq!(largest_pile(&db), 1 << 20);
    let db_bytes = std::fs::metadata(&db).unwrap().len();
    // A page's text is stored in its pile and in the search index, with its tokens.
    assert!(
        db_bytes < PAGES * 4 * (1 << 20) + (4 << 20),
        "the database stays within the per-page caps: {db_bytes} bytes"
    );

    // Smaller caps are honoured, and counted the same way.
    let small = dir.path().join("small.db");
    let counts = summarize_with(
        &store,
        &small,
        &["--max-text-bytes", "1000", "--max-body-bytes", "100000"],
    );
    assert_eq!(count(&counts, "html_bodies_truncated"), PAGES, "{counts}");
    assert_eq!(
        count(&counts, "text_piles_cut_at_max_text_bytes"),
        PAGES,
        "{counts}"
    );
    assert_sound(&open(&small));
    assert_eq!(largest_pile(&small), 1000);
    let small_bytes = std::fs::metadata(&small).unwrap().len();
    assert!(small_bytes < 2 << 20, "{small_bytes} bytes");
}
