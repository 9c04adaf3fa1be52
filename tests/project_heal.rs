//! Issue 34, item 1: a projection run that could not read the bodies (the WARCs were
//! moved) is healed by the next run that can (`--warc-dir`): the same database as a run
//! from scratch, for both the summary and the crawl projection.

mod common;
mod summary_support;

use std::path::{Path, PathBuf};

use common::{ok, sediment};
use summary_support::{count, crawl, open, rows, summarize_with};

/// A store of both fixture crawls whose WARCs have since moved to `moved/`.
fn store_with_moved_warcs(dir: &Path) -> (PathBuf, PathBuf) {
    let moved = dir.join("moved");
    std::fs::create_dir(&moved).unwrap();
    let store = dir.join("store");
    let mut args = vec!["import-warc".to_string()];
    for name in ["crawl1.warc.gz", "crawl2.warc.gz"] {
        let copy = dir.join(name);
        std::fs::copy(crawl(name), &copy).unwrap();
        args.push(copy.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&store, &args);
    for name in ["crawl1.warc.gz", "crawl2.warc.gz"] {
        std::fs::rename(dir.join(name), moved.join(name)).unwrap();
    }
    (store, moved)
}

/// What a summary database holds, ids aside (generations by UUID, URLs by text).
fn summary_content(conn: &rusqlite::Connection) -> Vec<(String, Vec<Vec<String>>)> {
    [
        "SELECT u.str_url, hex(eg.entity_generation_uuid), first_seen_unix_utc, last_seen_unix_utc,
                confirmed_end_unix_utc, marked_duplicate, hex(content_key), t.blake2b512_digest
         FROM entity_generation eg JOIN url u USING (url_id)
         LEFT JOIN text_pile t USING (text_pile_id) ORDER BY 1, 3",
        "SELECT hex(e.entity_generation_uuid), f.title, f.description, f.text, f.big_headlines
         FROM full_text_entity_index f JOIN entity_generation e ON e.entity_generation_id = f.rowid
         ORDER BY 1",
        "SELECT hex(s.entity_generation_uuid), hex(o.entity_generation_uuid),
                duplicate_status_start_unix_utc, duplicate_status_end_unix_utc
         FROM duplicate_summary d
         JOIN entity_generation s ON s.entity_generation_id = d.subject_entity_generation_id
         JOIN entity_generation o ON o.entity_generation_id = d.duplicate_of_entity_generation_id
         ORDER BY 1, 3",
        "SELECT hex(crawl_uuid), hex(agent_uuid), hex(e.entity_generation_uuid), exit_code,
                crawl_type, time_started_unix_utc, time_last_modified_unix_utc, status_code, etag
         FROM crawl_summary c JOIN entity_generation e USING (entity_generation_id)
         LEFT JOIN http_summary USING (crawl_summary_id) ORDER BY 1",
        "SELECT hex(e.entity_generation_uuid), u.str_url, l.link_to_fragment, l.text, l.in_nav,
                l.destination_type, l.link_locality
         FROM link_summary l JOIN entity_generation e USING (entity_generation_id)
         JOIN url u ON u.url_id = l.link_to_url ORDER BY 1, 2, 3, 4",
        "SELECT hex(blake2b512_digest), token_text, occurances FROM token_statistics
         JOIN token USING (token_id) JOIN text_pile USING (text_pile_id) ORDER BY 1, 2",
        "SELECT hex(blake2b512_digest), length(text) FROM text_pile ORDER BY 1",
        "SELECT hex(payload_sha1), hex(blake2b512_digest), robots_noindex FROM summary_payload
         JOIN text_pile USING (text_pile_id) ORDER BY 1",
        "SELECT hex(e.entity_generation_uuid), title, description, indexiness, primary_language,
                time_created_unix_utc, time_updated_unix_utc
         FROM document_description JOIN entity_generation e USING (entity_generation_id) ORDER BY 1",
        "SELECT hex(e.entity_generation_uuid), file_size, m.str_mimetype, c.str_url
         FROM file_summary f JOIN entity_generation e USING (entity_generation_id)
         LEFT JOIN mimetype m USING (mimetype_id) LEFT JOIN url c ON c.url_id = f.canonical_url_id
         ORDER BY 1",
        "SELECT hex(e.entity_generation_uuid), t.str_url, to_url_fragment, information_source,
                is_permanent, by_security_policy
         FROM redirect_summary r JOIN entity_generation e USING (entity_generation_id)
         JOIN url t ON t.url_id = r.to_url_id ORDER BY 1",
        "SELECT str_url FROM url ORDER BY 1",
        "SELECT count(*) FROM summary_work",
        "SELECT count(*) FROM sediment_unread_payload",
    ]
    .into_iter()
    .map(|sql| (sql.to_string(), rows(conn, sql, &[])))
    .collect()
}

fn assert_same(a: &[(String, Vec<Vec<String>>)], b: &[(String, Vec<Vec<String>>)]) {
    for ((sql, x), (_, y)) in a.iter().zip(b) {
        let only_a: Vec<_> = x.iter().filter(|r| !y.contains(r)).collect();
        let only_b: Vec<_> = y.iter().filter(|r| !x.contains(r)).collect();
        assert_eq!(
            x, y,
            "{sql}\nonly in the first: {only_a:?}\nonly in the second: {only_b:?}"
        );
    }
}

fn search(store: &Path, db: &Path, query: &str) -> String {
    let run = sediment(
        store,
        &[
            "search",
            "--db",
            db.to_str().unwrap(),
            "--json",
            "--",
            query,
        ],
    );
    assert_eq!(run.status, 0, "search {query:?}: {}", run.stderr);
    run.stdout
}

#[test]
fn a_summary_run_with_the_warcs_heals_one_without() {
    let dir = tempfile::tempdir().unwrap();
    let (store, moved) = store_with_moved_warcs(dir.path());
    let warc_dir = ["--warc-dir", moved.to_str().unwrap()];
    let db = dir.path().join("summary.db");
    // Without the WARCs: exit 3 (checked by summarize_with), no text.
    let blind = summarize_with(&store, &db, &[]);
    assert!(
        count(&blind, "bodies_unavailable_warc_not_found") > 0,
        "{blind}"
    );
    assert_eq!(count(&blind, "text_piles"), 0, "{blind}");
    let query = "caesium";
    assert_eq!(search(&store, &db, query).trim(), "", "nothing to find yet");

    // Again, with them: the text arrives.
    let healed = summarize_with(&store, &db, &warc_dir);
    assert_eq!(count(&healed, "bodies_unavailable_warc_not_found"), 0);
    assert!(count(&healed, "text_piles") > 0, "{healed}");
    assert!(count(&healed, "urls_retried_unread") > 0, "{healed}");
    assert!(
        search(&store, &db, query).contains("http://127.0.0.1:47213/"),
        "the text is found"
    );

    // The same database as a run from scratch.
    let scratch = dir.path().join("scratch.db");
    summarize_with(&store, &scratch, &warc_dir);
    let (a, b) = (open(&db), open(&scratch));
    summary_support::assert_sound(&a);
    assert_same(&summary_content(&a), &summary_content(&b));

    // Healed for good: the next run finds nothing to do.
    let again = summarize_with(&store, &db, &warc_dir);
    assert_eq!(count(&again, "urls_retried_unread"), 0, "{again}");
    assert_eq!(count(&again, "crawl_summaries"), 0, "{again}");
    assert_eq!(count(&again, "search_rows_written"), 0, "{again}");
}

/// Runs `project crawl`; exit 3 exactly when the summary line counts problems.
fn project_crawl(store: &Path, db: &Path, extra: &[&str]) -> String {
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

fn crawl_content(conn: &rusqlite::Connection) -> Vec<(String, Vec<Vec<String>>)> {
    [
        "SELECT hex(crawl_uuid), hex(a.agent_uuid), u.str_url, crawl_type, c.time_started_unix_utc,
                time_taken_ms, exit_code, message
         FROM crawl_log c JOIN agent a USING (agent_id) JOIN url u USING (url_id) ORDER BY 1",
        "SELECT hex(c.crawl_uuid), u.str_url, time_sent_unix_utc, request_duration_ms,
                robotstxt_approved, r.exit_code, server_last_modified_unix_utc, http_status_code,
                http_etag
         FROM request r JOIN crawl_log c USING (crawl_log_id) JOIN url u ON u.url_id = r.url_id
         ORDER BY 1",
        "SELECT hex(c.crawl_uuid), u.str_url, f.last_modified_unix_utc, file_size, m.str_mimetype,
                k.str_url, t.text
         FROM file f JOIN crawl_log c USING (crawl_log_id) JOIN url u ON u.url_id = f.url_id
         JOIN mimetype m USING (mimetype_id) LEFT JOIN url k ON k.url_id = f.canonical_url_id
         LEFT JOIN file_text t USING (file_id) ORDER BY 1",
        "SELECT hex(c.crawl_uuid), u.str_url, r.last_modified_unix_utc, t.str_url,
                information_source, is_permanent, by_security_policy, to_url_fragment
         FROM redirect r JOIN crawl_log c USING (crawl_log_id) JOIN url u ON u.url_id = r.url_id
         JOIN url t ON t.url_id = r.to_url_id ORDER BY 1, 4",
        "SELECT u.str_url, last_crawl_time_unix_utc, last_crawl_exit_code,
                last_contentful_crawl_time_unix_utc, last_contentful_http_etag
         FROM crawl_candidate JOIN url u USING (url_id) ORDER BY 1",
        "SELECT hex(agent_uuid), time_started_unix_utc, time_finished_unix_utc, name,
                http_user_agent FROM agent ORDER BY 1",
        "SELECT str_url FROM url ORDER BY 1",
        "SELECT count(*) FROM file_text",
    ]
    .into_iter()
    .map(|sql| (sql.to_string(), rows(conn, sql, &[])))
    .collect()
}

#[test]
fn a_crawl_projection_with_the_warcs_heals_one_without() {
    let dir = tempfile::tempdir().unwrap();
    let (store, moved) = store_with_moved_warcs(dir.path());
    let warc_dir = ["--warc-dir", moved.to_str().unwrap()];
    let db = dir.path().join("crawl.db");
    let blind = project_crawl(&store, &db, &[]);
    assert!(!blind.contains(" problems 0;"), "{blind}");
    let texts = |db: &Path| summary_support::one(&open(db), "SELECT count(*) FROM file_text", &[]);
    assert_eq!(texts(&db), 0);

    let healed = project_crawl(&store, &db, &warc_dir);
    assert!(healed.contains(" problems 0;"), "{healed}");
    assert!(texts(&db) > 0);

    let scratch = dir.path().join("scratch.db");
    project_crawl(&store, &scratch, &warc_dir);
    let (a, b) = (open(&db), open(&scratch));
    common::assert_consistent_database(&a, "healed crawl database");
    let (x, y) = (crawl_content(&a), crawl_content(&b));
    assert!(x[0].1.len() > 100, "every capture is there");
    assert_same(&x, &y);

    // Healed for good: nothing is taken out again.
    let again = project_crawl(&store, &db, &warc_dir);
    assert!(!again.contains("captures_retried_unread"), "{again}");
    assert_same(&crawl_content(&open(&db)), &y);
}
