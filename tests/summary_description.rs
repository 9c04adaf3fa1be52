//! The search index's `description` column follows summary.sql: a page without a
//! description has NULL there, as in `document_description`, never an empty string.

mod common;
mod summary_support;

use summary_support::*;

#[test]
fn search_rows_have_null_not_empty_descriptions() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    let conn = open(&db);
    let indexed = one(&conn, "SELECT count(*) FROM full_text_entity_index", &[]);
    assert!(indexed > 0, "the fixture crawls make search rows");
    assert_eq!(
        one(
            &conn,
            "SELECT count(*) FROM full_text_entity_index WHERE description = ''",
            &[]
        ),
        0,
        "no empty descriptions"
    );
    let without = one(
        &conn,
        "SELECT count(*) FROM full_text_entity_index WHERE description IS NULL",
        &[],
    );
    assert!(
        without > 0 && without < indexed,
        "{without} of {indexed} rows without a description: most fixture pages have none, \
         some have one"
    );
    // Each row's description is its generation's, NULL for NULL.
    let differing = rows(
        &conn,
        "SELECT f.rowid, f.description, dd.description FROM full_text_entity_index f
         LEFT JOIN document_description dd ON dd.entity_generation_id = f.rowid
         WHERE f.description IS NOT dd.description",
        &[],
    );
    assert!(differing.is_empty(), "{differing:?}");
}
