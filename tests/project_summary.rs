//! `sediment project summary` on the fixture crawls (the site crawled twice, see
//! fixtures/crawl/README.md) and on hand-written HTML pages.

mod common;
mod summary_support;

use std::path::Path;

use blake2::{Blake2b512, Digest};
use chrono::NaiveDateTime;
use common::{fixture, json_lines, ok};
use summary_support::*;

const SITE: &str = "http://127.0.0.1:47213";

fn unix(ts14: &str) -> i64 {
    NaiveDateTime::parse_from_str(ts14, "%Y%m%d%H%M%S")
        .unwrap()
        .and_utc()
        .timestamp()
}

/// Capture times of a URL, from the store's capture index, in order.
fn capture_times(store: &Path, path: &str) -> Vec<i64> {
    let out = ok(store, &["captures", "--url", &format!("{SITE}{path}")]);
    json_lines(&out)
        .iter()
        .map(|c| unix(c["ts"].as_str().unwrap()))
        .collect()
}

/// (first_seen, last_seen, confirmed_end, marked_duplicate) of a URL's generations.
fn generations(conn: &rusqlite::Connection, path: &str) -> Vec<(i64, i64, Option<i64>, bool)> {
    let mut stmt = conn
        .prepare(
            "SELECT first_seen_unix_utc, last_seen_unix_utc, confirmed_end_unix_utc, marked_duplicate
             FROM entity_generation JOIN url USING (url_id) WHERE str_url = ?1
             ORDER BY first_seen_unix_utc",
        )
        .unwrap();
    stmt.query_map([format!("{SITE}{path}")], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

struct Crawled {
    _dir: tempfile::TempDir,
    store: std::path::PathBuf,
    db: std::path::PathBuf,
    counts: serde_json::Value,
}

fn crawled_twice() -> Crawled {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    let counts = import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    Crawled {
        _dir: dir,
        store,
        db,
        counts,
    }
}

#[test]
fn crawl_twice_generations() {
    let c = crawled_twice();
    let conn = open(&c.db);
    // Every capture of the two crawls (117 response and revisit records) is summarized once.
    assert_eq!(count(&c.counts, "crawl_summaries"), 117);
    assert_eq!(one(&conn, "SELECT count(*) FROM crawl_summary", &[]), 117);
    assert_eq!(one(&conn, "SELECT count(*) FROM http_summary", &[]), 117);
    assert_eq!(
        count(&c.counts, "captures_skipped_not_http"),
        4,
        "wget's metadata:// records"
    );

    // Unchanged between the crawls: one open generation from the first capture to the last.
    for path in [
        "/contact.html",
        "/docs/manual.html",
        "/docs/guide.html",
        "/news.html",
        "/gallery.html",
        "/legacy/windows-1252.html",
        "/images/logo.png",
        "/static/style.css",
        "/papers/layers.pdf",
        "/old-page",
        "/gone",
    ] {
        let times = capture_times(&c.store, path);
        assert!(times.len() >= 2, "{path}");
        assert_eq!(
            generations(&conn, path),
            vec![(times[0], *times.last().unwrap(), None, false)],
            "{path}"
        );
    }
    // Changed: two generations, the first closed at the second's first_seen.
    for path in [
        "/",
        "/about.html",
        "/blog/",
        "/blog/2021/05/02/spring-notes.html",
        "/stream/live.html",
        "/feed.xml",
        "/papers/report-2021.pdf",
    ] {
        let g = generations(&conn, path);
        assert_eq!(g.len(), 2, "{path}: {g:?}");
        assert_eq!(
            g[0].2,
            Some(g[1].0),
            "{path}: closed at the next first_seen"
        );
        assert_eq!(g[1].2, None, "{path}: the second is open");
        assert!(g[0].1 <= g[1].0 && g[1].0 <= g[1].1, "{path}: {g:?}");
    }
    // /about.html was fetched twice in each crawl: each generation spans its crawl's two.
    let times = capture_times(&c.store, "/about.html");
    assert_eq!(
        generations(&conn, "/about.html"),
        vec![
            (times[0], times[1], Some(times[2]), false),
            (times[2], times[3], None, false)
        ]
    );
    // Removed in v2: the page's generation closes at the first 404, which opens an error
    // generation; the added page has one generation.
    let times = capture_times(&c.store, "/docs/old-notes.html");
    assert_eq!(
        generations(&conn, "/docs/old-notes.html"),
        vec![
            (times[0], times[0], Some(times[1]), false),
            (times[1], *times.last().unwrap(), None, false)
        ]
    );
    assert_eq!(
        generations(&conn, "/blog/2022/01/20/dating-the-flood-layer.html").len(),
        1
    );

    // Exit codes per capture.
    let exit_codes = |path: &str| -> Vec<String> {
        rows(
            &conn,
            "SELECT DISTINCT cs.exit_code FROM crawl_summary cs
             JOIN entity_generation eg USING (entity_generation_id) JOIN url USING (url_id)
             WHERE str_url = ?1 ORDER BY cs.exit_code",
            &[&format!("{SITE}{path}")],
        )
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
    };
    assert_eq!(exit_codes("/about.html"), ["20"]);
    assert_eq!(
        exit_codes("/docs/reference.html"),
        ["180"],
        "canonical elsewhere"
    );
    assert_eq!(exit_codes("/drafts/upcoming.html"), ["171"], "noindex");
    assert_eq!(exit_codes("/docs/old-notes.html"), ["20", "44"]);
    assert_eq!(exit_codes("/gone"), ["41"]);
    assert_eq!(exit_codes("/old-page"), ["31"]);
    assert_eq!(exit_codes("/moved"), ["32"]);
    // A PDF whose text is had is a document ingested like a page.
    assert_eq!(exit_codes("/papers/layers.pdf"), ["20"]);
    assert_eq!(
        one(
            &conn,
            "SELECT count(*) FROM crawl_summary WHERE crawl_type = 1",
            &[]
        ),
        2,
        "robots.txt fetches"
    );

    // Redirects.
    assert_eq!(
        rows(
            &conn,
            "SELECT f.str_url, t.str_url, rs.is_permanent, rs.information_source
             FROM redirect_summary rs
             JOIN entity_generation eg USING (entity_generation_id)
             JOIN url f ON f.url_id = eg.url_id JOIN url t ON t.url_id = rs.to_url_id
             ORDER BY f.str_url",
            &[]
        ),
        [
            [
                format!("{SITE}/moved"),
                format!("{SITE}/docs/guide.html"),
                "0".into(),
                "1".into()
            ],
            [
                format!("{SITE}/old-page"),
                format!("{SITE}/about.html"),
                "1".into(),
                "1".into()
            ],
            [
                format!("{SITE}/temp"),
                format!("{SITE}/news.html"),
                "0".into(),
                "1".into()
            ],
        ]
    );
}

#[test]
fn identical_pages_are_duplicates_of_the_first_url() {
    let c = crawled_twice();
    let conn = open(&c.db);
    let pairs = rows(
        &conn,
        "SELECT su.str_url, ou.str_url, ds.duplicate_status_start_unix_utc,
                ds.duplicate_status_end_unix_utc, s.first_seen_unix_utc, s.confirmed_end_unix_utc,
                s.marked_duplicate, o.marked_duplicate, s.text_pile_id = o.text_pile_id
         FROM duplicate_summary ds
         JOIN entity_generation s ON s.entity_generation_id = ds.subject_entity_generation_id
         JOIN entity_generation o ON o.entity_generation_id = ds.duplicate_of_entity_generation_id
         JOIN url su ON su.url_id = s.url_id JOIN url ou ON ou.url_id = o.url_id
         ORDER BY ds.duplicate_status_start_unix_utc, su.str_url",
        &[],
    );
    let blog = capture_times(&c.store, "/blog/index.html");
    let terms = capture_times(&c.store, "/policies/terms.html");
    let blog_slash = capture_times(&c.store, "/blog/");
    let s = |t: i64| t.to_string();
    // /blog/ sorts before /blog/index.html, /legal/ before /policies/: those are originals.
    let mut expected = vec![
        vec![
            format!("{SITE}/blog/index.html"),
            format!("{SITE}/blog/"),
            s(blog[0].max(blog_slash[0])),
            s(blog[1].min(blog_slash[1])),
            s(blog[0]),
            s(blog[1]),
            "0".into(),
            "0".into(),
            "1".into(),
        ],
        vec![
            format!("{SITE}/blog/index.html"),
            format!("{SITE}/blog/"),
            s(blog[1].max(blog_slash[1])),
            "NULL".into(),
            s(blog[1]),
            "NULL".into(),
            "1".into(),
            "0".into(),
            "1".into(),
        ],
        vec![
            format!("{SITE}/policies/terms.html"),
            format!("{SITE}/legal/terms.html"),
            s(terms[0].max(capture_times(&c.store, "/legal/terms.html")[0])),
            "NULL".into(),
            s(terms[0]),
            "NULL".into(),
            "1".into(),
            "0".into(),
            "1".into(),
        ],
    ];
    expected.sort_by(|a, b| (a[2].clone(), a[0].clone()).cmp(&(b[2].clone(), b[0].clone())));
    assert_eq!(pairs, expected);
    // Duplicates are not in the search index; their originals are.
    let indexed = |path: &str| {
        one(
            &conn,
            "SELECT count(*) FROM full_text_entity_index f
             JOIN entity_generation eg ON eg.entity_generation_id = f.rowid
             JOIN url USING (url_id) WHERE str_url = ?1",
            &[&format!("{SITE}{path}")],
        )
    };
    assert_eq!(indexed("/blog/index.html"), 0);
    assert_eq!(indexed("/policies/terms.html"), 0);
    assert_eq!(indexed("/blog/"), 1);
    assert_eq!(indexed("/legal/terms.html"), 1);
    // noindex pages and closed generations are not either.
    assert_eq!(indexed("/drafts/upcoming.html"), 0);
    assert_eq!(indexed("/docs/old-notes.html"), 0);
    // Search rows: exactly the open, non-duplicate generations with text that may be indexed
    // (not noindex, 171, nor canonical elsewhere, 180: docs/reference.html).
    assert_eq!(indexed("/docs/reference.html"), 0);
    assert_eq!(
        one(&conn, "SELECT count(*) FROM full_text_entity_index", &[]),
        one(
            &conn,
            "SELECT count(*) FROM entity_generation eg JOIN text_pile USING (text_pile_id)
             WHERE confirmed_end_unix_utc IS NULL AND marked_duplicate = 0
               AND NOT EXISTS (SELECT 1 FROM crawl_summary cs
                   WHERE cs.entity_generation_id = eg.entity_generation_id
                     AND exit_code IN (171, 180))",
            &[]
        )
    );
    assert_eq!(
        one(
            &conn,
            "SELECT count(*) FROM full_text_entity_index WHERE any <> 'any'",
            &[]
        ),
        0
    );
}

#[test]
fn text_piles_once_per_digest_and_tokens() {
    let c = crawled_twice();
    let conn = open(&c.db);
    // Each stored pile's digest is BLAKE2b-512 over its six fields joined by "\n\n\n".
    let piles = rows(
        &conn,
        "SELECT blake2b512_digest, text, secondary_text, big_headlines, small_headlines,
                code_text, quote_text, text_pile_id FROM text_pile",
        &[],
    );
    assert!(piles.len() >= 20, "{}", piles.len());
    for p in &piles {
        let digest = Blake2b512::digest(p[1..7].join("\n\n\n").as_bytes());
        assert_eq!(hex::encode(digest), p[0]);
    }
    // One pile per distinct text: the 28 + 9 HTML and other payloads of the two crawls
    // share piles where the text is equal (the /blog/ pair, the terms pair, revisits).
    assert_eq!(
        one(
            &conn,
            "SELECT count(DISTINCT text_pile_id) FROM entity_generation",
            &[]
        ),
        piles.len() as i64
    );
    // The windows-1252 page was decoded.
    let legacy = rows(
        &conn,
        "SELECT tp.text FROM text_pile tp JOIN entity_generation eg USING (text_pile_id)
         JOIN url USING (url_id) WHERE str_url = ?1",
        &[&format!("{SITE}/legacy/windows-1252.html")],
    );
    assert!(
        legacy[0][0].contains("„Der See vergisst nichts“"),
        "{legacy:?}"
    );

    // Token statistics: lower-cased porter stems counted per pile, equal to what SQLite's
    // own FTS5 tokenizer (here through Python's sqlite3 module) says.
    let about_pile = one(
        &conn,
        "SELECT text_pile_id FROM entity_generation JOIN url USING (url_id)
         WHERE str_url = ?1 AND confirmed_end_unix_utc IS NULL",
        &[&format!("{SITE}/about.html")],
    );
    let stats: Vec<(String, i64)> = rows(
        &conn,
        "SELECT token_text, occurances FROM token_statistics JOIN token USING (token_id)
         WHERE text_pile_id = ?1 ORDER BY token_text",
        &[&about_pile],
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].parse().unwrap()))
    .collect();
    assert!(
        stats.iter().any(|(t, n)| t == "research" && *n >= 1),
        "{stats:?}"
    );
    assert!(stats.iter().all(|(t, _)| *t == t.to_lowercase()));
    let fields = rows(
        &conn,
        "SELECT text, secondary_text, big_headlines, small_headlines, code_text, quote_text
         FROM text_pile WHERE text_pile_id = ?1",
        &[&about_pile],
    )
    .remove(0);
    // Without python3 (or FTS5) this is recorded as a skip: tokens not cross-checked.
    if let Some(expected) = python_fts5_counts(&fields.join("\n")) {
        assert_eq!(stats, expected);
    }
    // Every pile has statistics unless it is empty.
    assert_eq!(
        one(
            &conn,
            "SELECT count(*) FROM text_pile tp WHERE (text <> '' OR secondary_text <> '')
               AND NOT EXISTS (SELECT 1 FROM token_statistics ts WHERE ts.text_pile_id = tp.text_pile_id)",
            &[]
        ),
        0
    );
}

/// Token counts of a text by SQLite's FTS5 `porter unicode61` tokenizer, computed by
/// Python; `None` after `common::skip` without python3 or with a SQLite without FTS5.
#[track_caller]
fn python_fts5_counts(text: &str) -> Option<Vec<(String, i64)>> {
    let script = r#"
import sqlite3, sys, json
c = sqlite3.connect(':memory:')
c.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
c.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
c.execute("INSERT INTO t(body) VALUES (?)", (sys.stdin.read(),))
print(json.dumps(c.execute("SELECT term, cnt FROM v ORDER BY term").fetchall()))
"#;
    if !common::have_python(&["sqlite3"]) {
        return None;
    }
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run python3");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to python3");
    let out = child.wait_with_output().expect("python3's output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no such module: fts5") {
        common::skip(
            "FTS5 in python3's sqlite3 module",
            "a Python built with its SQLite's FTS5, as Debian's is (scripts/setup.sh)",
        );
        return None;
    }
    assert!(out.status.success(), "python3's FTS5 tokens: {stderr}");
    Some(serde_json::from_slice(&out.stdout).expect("the script's JSON"))
}

#[test]
fn incremental_run_matches_a_run_from_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("incremental.db");
    let first = import_and_summarize(&store, &db, &[&crawl("crawl1.warc.gz")]);
    assert_eq!(count(&first, "generations_opened"), 37);
    let conn = open(&db);
    let contact_before = rows(
        &conn,
        "SELECT entity_generation_id, last_seen_unix_utc FROM entity_generation
         JOIN url USING (url_id) WHERE str_url = ?1",
        &[&format!("{SITE}/contact.html")],
    );
    let piles_before = one(&conn, "SELECT count(*) FROM text_pile", &[]);
    drop(conn);

    let second = import_and_summarize(&store, &db, &[&crawl("crawl2.warc.gz")]);
    // Only the payloads new in crawl 2 are read: the six changed or added pages and the
    // revised PDF report.
    assert_eq!(count(&second, "payloads_analysed"), 7, "{second}");
    assert_eq!(count(&second, "captures_new"), 59);
    assert_eq!(count(&second, "generations_closed"), 9, "{second}");
    assert_eq!(count(&second, "generations_opened"), 10, "{second}");
    let conn = open(&db);
    assert_sound(&conn);
    let contact_after = rows(
        &conn,
        "SELECT entity_generation_id, last_seen_unix_utc FROM entity_generation
         JOIN url USING (url_id) WHERE str_url = ?1",
        &[&format!("{SITE}/contact.html")],
    );
    assert_eq!(contact_after.len(), 1);
    assert_eq!(
        contact_after[0][0], contact_before[0][0],
        "the row was extended, not rebuilt"
    );
    assert!(contact_after[0][1] > contact_before[0][1]);
    assert_eq!(
        one(&conn, "SELECT count(*) FROM text_pile", &[]),
        piles_before + 7,
        "six pages and the revised PDF"
    );

    // A third run finds nothing new and writes nothing.
    let third = summarize(&store, &db);
    assert_eq!(count(&third, "urls_unchanged"), 38, "{third}");
    assert_eq!(count(&third, "crawl_summaries"), 0);
    assert_eq!(count(&third, "search_rows_written"), 0);

    // Same content as summarizing both crawls at once.
    let scratch = dir.path().join("scratch.db");
    summarize(&store, &scratch);
    assert_same_content(&conn, &open(&scratch));
    // And whatever the batch size and the number of threads.
    let small = dir.path().join("small-batches.db");
    summarize_with(&store, &small, &["--batch", "1", "--threads", "1"]);
    assert_same_content(&conn, &open(&small));

    // A run interrupted after its batches leaves its work list behind (here: made by hand,
    // with the search rows and duplicates it had still to write gone); the next run
    // finishes it.
    conn.execute_batch(
        "INSERT INTO sediment_heavy_index (sediment_heavy_index) VALUES ('delete-all');
         DELETE FROM full_text_entity_index;
         DELETE FROM duplicate_summary;
         UPDATE entity_generation SET marked_duplicate = 0;
         INSERT INTO summary_work (kind, id) SELECT 1, entity_generation_id FROM entity_generation;
         INSERT INTO summary_work (kind, id) SELECT 2, text_pile_id FROM text_pile;",
    )
    .unwrap();
    let resumed = summarize(&store, &db);
    assert_eq!(count(&resumed, "urls_unchanged"), 38);
    assert_same_content(&conn, &open(&scratch));
    assert_sound(&conn);
}

/// Two summary databases hold the same rows (ids aside: compared through UUIDs and URLs).
fn assert_same_content(a: &rusqlite::Connection, b: &rusqlite::Connection) {
    for sql in [
        "SELECT u.str_url, hex(eg.entity_generation_uuid), first_seen_unix_utc, last_seen_unix_utc,
                confirmed_end_unix_utc, marked_duplicate, hex(content_key)
         FROM entity_generation eg JOIN url u USING (url_id) ORDER BY 1, 3",
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
        "SELECT count(*) FROM summary_work",
    ] {
        assert_eq!(rows(a, sql, &[]), rows(b, sql, &[]), "{sql}");
    }
}

/// The fixture HTML pages served by a made-up site, as one WARC.
fn html_fixture_site(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let warc = dir.join("pages.warc");
    let pages: Vec<(String, Vec<u8>)> = ["landmarks", "locations", "destinations", "rel"]
        .iter()
        .map(|name| {
            (
                format!("http://example.com/{name}.html"),
                std::fs::read(fixture(&format!("html/{name}.html"))).unwrap(),
            )
        })
        .collect();
    let responses: Vec<Response> = pages
        .iter()
        .map(|(url, body)| Response::html(url, "2024-05-01T10:00:00Z", body.clone()))
        .collect();
    write_warc(&warc, &responses);
    let store = dir.join("store");
    let db = dir.join("pages.db");
    import_and_summarize(&store, &db, &[&warc]);
    (store, db)
}

fn links_of(conn: &rusqlite::Connection, page: &str) -> Vec<Vec<String>> {
    rows(
        conn,
        "SELECT u.str_url, COALESCE(l.link_to_fragment, ''), l.html_tag_name, l.text,
                l.destination_type, l.link_locality, l.contains_headline,
                l.rel_nofollow || l.rel_me || l.rel_tag,
                l.in_header || l.in_footer || l.in_aside || l.in_nav || l.in_form || l.in_main
                || l.in_article || l.in_section || l.in_table || l.in_figure || l.in_address
                || l.in_code || l.in_headline || l.in_list || l.in_paragraph
         FROM link_summary l JOIN entity_generation eg USING (entity_generation_id)
         JOIN url p ON p.url_id = eg.url_id JOIN url u ON u.url_id = l.link_to_url
         WHERE p.str_url = ?1 ORDER BY l.link_summary_id",
        &[&format!("http://example.com/{page}.html")],
    )
}

#[test]
fn landmarks_page_pile_description_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, db) = html_fixture_site(dir.path());
    let conn = open(&db);
    let pile = rows(
        &conn,
        "SELECT text, secondary_text, big_headlines, small_headlines, code_text, quote_text
         FROM text_pile JOIN entity_generation USING (text_pile_id) JOIN url USING (url_id)
         WHERE str_url = 'http://example.com/landmarks.html'",
        &[],
    );
    // main → text (its header stays), the page header and asides → secondary text,
    // nav, footer, script, style, hidden, template and noscript → dropped.
    assert_eq!(
        pile,
        [[
            "By the author\nFirst paragraph with emphasis and a link.\nSecond paragraph\nafter a break.\nCall run() now.\nHe said twice.\ncell one cell two",
            "Site banner\nMain aside\nAside text",
            "Main headline\nSection headline\nAside headline",
            "Small headline",
            "let x = 1;\nlet y = 2;",
            "A block quote.\nhello",
        ]]
    );
    let description = rows(
        &conn,
        "SELECT title, primary_headline, primary_language, indexiness, description
         FROM document_description JOIN entity_generation USING (entity_generation_id)
         JOIN url USING (url_id) WHERE str_url = 'http://example.com/landmarks.html'",
        &[],
    );
    assert_eq!(
        description,
        [["Landmarks test", "Main headline", "en-gb", "-0.48", "NULL"]]
    );
    // flags: header footer aside nav form main article section table figure address code
    // headline list paragraph
    assert_eq!(
        links_of(&conn, "landmarks"),
        [
            [
                "http://example.com/",
                "",
                "a",
                "Home",
                "1",
                "1",
                "0",
                "000",
                "100100000000000"
            ],
            [
                "http://example.com/about",
                "",
                "a",
                "About",
                "1",
                "1",
                "0",
                "000",
                "100100000000000"
            ],
            [
                "http://example.com/other",
                "",
                "a",
                "link",
                "1",
                "1",
                "0",
                "000",
                "000001000000001"
            ],
        ]
    );
}

#[test]
fn every_location_flag_destination_type_and_rel_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, db) = html_fixture_site(dir.path());
    let conn = open(&db);
    assert_sound(&conn);
    let locations: Vec<(String, String, String)> = links_of(&conn, "locations")
        .into_iter()
        .map(|r| {
            (
                r[0].trim_start_matches("http://example.com").to_string(),
                r[8].clone(),
                r[6].clone(),
            )
        })
        .collect();
    let flag = |i: usize| {
        let mut s = vec!['0'; 15];
        s[i] = '1';
        s.into_iter().collect::<String>()
    };
    let l = |path: &str, flags: String, wraps: &str| (path.to_string(), flags, wraps.to_string());
    assert_eq!(
        locations,
        vec![
            l("/header", flag(0), "0"),
            l("/footer", flag(1), "0"),
            l("/aside", flag(2), "0"),
            l("/nav", flag(3), "0"),
            l("/form", flag(4), "0"),
            l("/main", flag(5), "0"),
            l("/article", flag(6), "0"),
            l("/section", flag(7), "0"),
            l("/table", flag(8), "0"),
            l("/figure", flag(9), "0"),
            l("/address", flag(10), "0"),
            l("/code", flag(11), "0"),
            l("/headline", flag(12), "0"),
            l("/list", flag(13), "0"),
            l("/paragraph", flag(14), "0"),
            l("/wraps", "0".repeat(15), "1"),
            l("/role-nav", flag(3), "0"),
            l("/nested", "000000110000001".into(), "0"),
            l("/none", "0".repeat(15), "0"),
        ]
    );
    // Destination types: 0 file, 1 document, 2 feed, 3 stylesheet, 4 script, 100 media,
    // 101 image, 102 audio, 103 video, 1000 communication; locality 0 self, 1 site, 2 other.
    let destinations: Vec<(String, String, String)> = links_of(&conn, "destinations")
        .into_iter()
        .map(|r| (r[2].clone(), r[0].clone(), r[4].clone()))
        .collect();
    let d = |tag: &str, url: &str, t: &str| (tag.to_string(), url.to_string(), t.to_string());
    assert_eq!(
        destinations,
        vec![
            d("link", "http://example.com/style", "3"),
            d("link", "http://example.com/feed", "2"),
            d("link", "http://example.com/atom", "2"),
            d("link", "http://example.com/favicon", "101"),
            d("link", "http://example.com/preloaded", "4"),
            d("link", "http://example.com/page2", "1"),
            d("script", "http://example.com/app.js", "4"),
            d("a", "http://example.com/doc", "1"),
            d("a", "http://example.com/page.html", "1"),
            d("a", "http://example.com/paper.pdf", "0"),
            d("a", "http://example.com/download", "0"),
            d("a", "http://example.com/pic.JPG", "101"),
            d("a", "http://example.com/song.mp3", "102"),
            d("a", "http://example.com/clip.mp4", "103"),
            d("a", "http://example.com/news.rss", "2"),
            d("a", "http://example.com/movie.swf", "100"),
            d("a", "mailto:someone@example.com", "1000"),
            d("a", "tel:+1-555-0100", "1000"),
            d("a", "sms:+15550100", "1000"),
            d("a", "xmpp:someone@example.com", "1000"),
            d("img", "http://example.com/img", "101"),
            d("audio", "http://example.com/audio", "102"),
            d("video", "http://example.com/video", "103"),
            d("video", "http://example.com/poster", "101"),
            d("source", "http://example.com/video-source", "103"),
            d("source", "http://example.com/audio-source", "102"),
            d("source", "http://example.com/picture-source", "101"),
            d("img", "http://example.com/pic.png", "101"),
            d("source", "http://example.com/typed-source", "102"),
            d("iframe", "http://example.com/frame", "1"),
            d("embed", "http://example.com/embed", "100"),
            d("object", "http://example.com/object.svg", "101"),
        ]
    );
    let mail = links_of(&conn, "destinations")
        .into_iter()
        .find(|r| r[0].starts_with("mailto:"))
        .unwrap();
    assert_eq!(mail[5], "2", "other site");
    // rel flags (nofollow, me, tag) and locality.
    let rels: Vec<(String, String, String)> = links_of(&conn, "rel")
        .into_iter()
        .map(|r| (r[0].clone(), r[7].clone(), r[5].clone()))
        .collect();
    let r = |u: &str, f: &str, loc: &str| (u.to_string(), f.to_string(), loc.to_string());
    assert_eq!(
        rels,
        vec![
            r("http://example.com/author", "010", "1"),
            r("https://other.example/", "100", "2"),
            r("https://me.example/", "010", "2"),
            r("http://example.com/tags/rust", "001", "1"),
            r("http://example.com/x", "100", "1"),
            r("http://example.com/y", "000", "1"),
        ]
    );
}

#[test]
fn the_schema_has_the_seed_tables_indexes_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, db) = html_fixture_site(dir.path());
    let conn = open(&db);
    let names: Vec<String> = rows(
        &conn,
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view', 'index') ORDER BY name",
        &[],
    )
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    for table in [
        "entity_generation",
        "duplicate_summary",
        "crawl_summary",
        "http_summary",
        "file_summary",
        "redirect_summary",
        "link_summary",
        "document_description",
        "text_pile",
        "token",
        "token_statistics",
        "full_text_entity_index",
        "origin",
        "url",
        "mimetype",
        "mime_parameter",
        "database_info",
        "unobtanium_database_info",
        "entity_generation_by_uuid",
        "entity_generation_by_first_seen",
    ] {
        assert!(
            names.iter().any(|n| n == table),
            "{table} missing: {names:?}"
        );
    }
    let fts: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let squashed: String = fts.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        squashed.contains(
            "fts5( text_pile_id UNINDEXED, any, title, description, text, secondary_text, big_headlines, small_headlines, code_text, quote_text, url_path, tokenize='porter unicode61' )"
        ),
        "{squashed}"
    );
    // The checks hold: first_seen after last_seen, a second open generation of one URL.
    let url_id = one(&conn, "SELECT url_id FROM entity_generation LIMIT 1", &[]);
    for bad in [
        "INSERT INTO entity_generation (url_id, first_seen_unix_utc, last_seen_unix_utc,
             entity_generation_uuid, content_key) VALUES (?1, 10, 5, zeroblob(16), 'S1')",
        "INSERT INTO entity_generation (url_id, first_seen_unix_utc, last_seen_unix_utc,
             entity_generation_uuid, content_key) VALUES (?1, 10, 20, zeroblob(16), 'S1')",
        "INSERT INTO entity_generation (url_id, first_seen_unix_utc, last_seen_unix_utc,
             confirmed_end_unix_utc, entity_generation_uuid, content_key)
             VALUES (?1, 10, 20, 15, randomblob(16), 'S1')",
    ] {
        assert!(conn.execute(bad, [url_id]).is_err(), "{bad}");
    }
    // The checks that list their values (spelled out as OR chains) refuse the others and
    // take each listed one.
    let generation = one(
        &conn,
        "SELECT entity_generation_id FROM entity_generation LIMIT 1",
        &[],
    );
    let link = |destination_type: i64, locality: i64| {
        conn.execute(
            "INSERT INTO link_summary (entity_generation_id, link_to_url, destination_type,
                 link_locality) VALUES (?1, ?2, ?3, ?4)",
            [generation, url_id, destination_type, locality],
        )
    };
    for destination_type in [0, 1, 2, 3, 4, 100, 101, 102, 103, 1000] {
        assert!(link(destination_type, 2).is_ok(), "{destination_type}");
    }
    for (destination_type, locality) in [(5, 0), (99, 0), (1001, 0), (-1, 0), (0, 3), (0, -1)] {
        assert!(
            link(destination_type, locality).is_err(),
            "destination_type {destination_type}, link_locality {locality}"
        );
    }
    let crawl_summary = |crawl_type: i64, exit_code: i64| {
        conn.execute(
            "INSERT INTO crawl_summary (entity_generation_id, crawl_uuid, agent_uuid,
                 crawl_type, time_started_unix_utc, exit_code, was_robotstxt_approved)
             VALUES (?1, randomblob(16), randomblob(16), ?2, 0, ?3, 1)",
            [generation, crawl_type, exit_code],
        )
    };
    assert!(crawl_summary(2, 181).is_ok() && crawl_summary(0, -999).is_ok());
    for (crawl_type, exit_code) in [(3, 20), (0, 21), (0, 0), (0, 182)] {
        assert!(
            crawl_summary(crawl_type, exit_code).is_err(),
            "crawl_type {crawl_type}, exit_code {exit_code}"
        );
    }
    // The seed's indexes, with the seed's columns (unobtanium 3.0, initalize_summary_database).
    let index_columns = |index: &str| -> Vec<String> {
        rows(
            &conn,
            "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
            &[&index],
        )
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
    };
    for (index, columns) in [
        ("entity_generation_by_uuid", &["entity_generation_uuid"][..]),
        (
            "entity_generation_by_first_seen",
            &["url_id", "url_fragment", "first_seen_unix_utc"],
        ),
        (
            "entity_generation_by_text_pile",
            &["text_pile_id", "confirmed_end_unix_utc"],
        ),
        (
            "entity_generation_by_active",
            &["marked_duplicate", "confirmed_end_unix_utc"],
        ),
        (
            "duplicate_summary_by_duplicate",
            &[
                "subject_entity_generation_id",
                "duplicate_status_end_unix_utc",
            ],
        ),
        ("crawl_summary_by_crawl_uuid", &["crawl_uuid"]),
    ] {
        assert_eq!(index_columns(index), columns, "{index}");
    }
    // The seed's names and NULL rules: token.token_text, nullable link and description text.
    let column = |table: &str, name: &str| -> Vec<Vec<String>> {
        rows(
            &conn,
            "SELECT type, \"notnull\" FROM pragma_table_info(?1) WHERE name = ?2",
            &[&table, &name],
        )
    };
    assert_eq!(column("token", "token_text"), [["TEXT", "1"]]);
    assert_eq!(column("link_summary", "text"), [["TEXT", "0"]]);
    assert_eq!(
        column("link_summary", "html_tag_name"),
        [["VARCHAR(31)", "0"]]
    );
    assert_eq!(
        column("document_description", "primary_language"),
        [["VARCHAR(31)", "0"]]
    );
    assert_eq!(
        column("document_description", "indexiness"),
        [["INTEGER", "1"]]
    );
    assert!(column("duplicate_summary", "duplicate_summary_id").is_empty());
    for (table, text_column) in [
        ("link_summary", "text"),
        ("link_summary", "link_to_fragment"),
        ("document_description", "title"),
        ("document_description", "primary_headline"),
        ("document_description", "description"),
        ("document_description", "primary_language"),
    ] {
        assert_eq!(
            one(
                &conn,
                &format!("SELECT count(*) FROM {table} WHERE {text_column} = ''"),
                &[]
            ),
            0,
            "{table}.{text_column}: empty text is NULL"
        );
    }
    let info = rows(
        &conn,
        "SELECT key, value FROM database_info WHERE key LIKE 'unobtanium_%' ORDER BY key",
        &[],
    );
    assert_eq!(
        info,
        [
            ["unobtanium_base_schema_version", "0.1.0"],
            ["unobtanium_database_kind", "summary"],
            ["unobtanium_summary_schema_version", "0.0.0"]
        ],
        "the keys and values the seed's summary database records"
    );
}

/// (URL, HTTP status, ETag) of every http(s) response record of a WARC, read by warcio;
/// `None` after `common::skip` without python3/warcio.
#[track_caller]
fn warcio_responses(warc: &Path) -> Option<Vec<(String, i64, String)>> {
    let script = r#"
import json, sys
from warcio.archiveiterator import ArchiveIterator
out = []
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f):
        uri = r.rec_headers.get_header('WARC-Target-URI') or ''
        if r.rec_type == 'response' and uri.startswith('http') and r.http_headers:
            out.append((uri, int(r.http_headers.get_statuscode()), r.http_headers.get_header('ETag') or ''))
print(json.dumps(out))
"#;
    let out = common::python_output(
        &["warcio"],
        ["-c".as_ref(), script.as_ref(), warc.as_os_str()],
    )?;
    Some(serde_json::from_slice(&out).expect("the script's JSON"))
}

#[test]
fn real_heritrix_crawl() {
    let Some(warc) = common::corpus("warcbase/example.warc.gz") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    let counts = import_and_summarize(&store, &db, &[&warc]);
    // SOURCE.md: 299 responses, 38 of them dns: records, 261 http.
    assert_eq!(count(&counts, "crawl_summaries"), 261);
    assert_eq!(count(&counts, "captures_skipped_not_http"), 38);
    let conn = open(&db);
    assert_sound(&conn);
    // Each URL was fetched once: one generation each.
    assert_eq!(
        one(
            &conn,
            "SELECT count(DISTINCT url_id) FROM entity_generation",
            &[]
        ),
        261
    );
    // Without python3/warcio this is recorded as a skip: statuses not cross-checked.
    if let Some(responses) = warcio_responses(&warc) {
        assert_eq!(responses.len(), 261);
        let mut expected: Vec<Vec<String>> = responses
            .into_iter()
            .map(|(url, status, etag)| {
                let url = url::Url::parse(&url).unwrap();
                let etag = if etag.is_empty() { "NULL".into() } else { etag };
                vec![url.to_string(), status.to_string(), etag]
            })
            .collect();
        expected.sort();
        let got = rows(
            &conn,
            "SELECT str_url, status_code, COALESCE(etag, 'NULL') FROM http_summary
             JOIN crawl_summary USING (crawl_summary_id)
             JOIN entity_generation USING (entity_generation_id) JOIN url USING (url_id)
             ORDER BY 1, 2, 3",
            &[],
        );
        assert_eq!(got, expected);
    }
    // Exit codes follow the statuses; HTML with text has descriptions and links.
    assert_eq!(
        one(
            &conn,
            "SELECT count(*) FROM crawl_summary JOIN http_summary USING (crawl_summary_id)
             WHERE (status_code = 404) <> (exit_code = 44)
                OR (status_code = 301) <> (exit_code = 31)
                OR (status_code IN (302, 303, 307)) <> (exit_code = 32)",
            &[]
        ),
        0
    );
    assert_eq!(
        one(
            &conn,
            "SELECT count(*) FROM entity_generation eg
             WHERE text_pile_id IS NOT NULL AND NOT EXISTS
                 (SELECT 1 FROM document_description dd
                  WHERE dd.entity_generation_id = eg.entity_generation_id)",
            &[]
        ),
        0
    );
    assert!(count(&counts, "links") > 10_000, "{counts}");
    let run = common::sediment(
        &store,
        &[
            "search",
            "--db",
            db.to_str().unwrap(),
            "--json",
            "copyright agent",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let hits = json_lines(&run.stdout);
    assert_eq!(hits[0]["url"], "http://www.archive.org/about/terms.php");
}

#[test]
fn missing_warcs_degrade_to_payload_digests_and_warc_dir_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    let original = dir.path().join("crawl1.warc.gz");
    std::fs::copy(crawl("crawl1.warc.gz"), &original).unwrap();
    let store = dir.path().join("store");
    ok(&store, &["import-warc", original.to_str().unwrap()]);
    std::fs::rename(&original, moved.join("crawl1.warc.gz")).unwrap();

    // Without the WARC: every capture is still summarized, HTML pages by payload digest.
    let blind = dir.path().join("blind.db");
    let counts = summarize(&store, &blind);
    assert_eq!(count(&counts, "crawl_summaries"), 58);
    assert!(
        count(&counts, "bodies_unavailable_warc_not_found") > 0,
        "{counts}"
    );
    assert_eq!(count(&counts, "text_piles"), 0);
    let conn = open(&blind);
    assert_eq!(
        one(&conn, "SELECT count(*) FROM full_text_entity_index", &[]),
        0
    );
    assert_eq!(
        one(
            &conn,
            "SELECT count(DISTINCT url_id) FROM entity_generation",
            &[]
        ),
        37
    );

    // With --warc-dir the bodies are read from where the WARC is now.
    let seeing = dir.path().join("seeing.db");
    let counts = summarize_with(&store, &seeing, &["--warc-dir", moved.to_str().unwrap()]);
    assert_eq!(
        count(&counts, "bodies_unavailable_warc_not_found"),
        0,
        "{counts}"
    );
    // 18 HTML pages and 3 PDFs.
    assert_eq!(count(&counts, "text_piles"), 21, "{counts}");
}

/// Issue 18: the smallest memory budget (every cache evicted again and again, analyses
/// read again) writes the same database, row for row and id for id, as the default one.
#[test]
fn a_tiny_memory_budget_gives_the_same_database() {
    let c = crawled_twice();
    let tiny = c.db.with_file_name("tiny.db");
    let counts = summarize_with(&c.store, &tiny, &["--memory-mb", "1", "--batch", "3"]);
    assert!(count(&counts, "crawl_summaries") > 0, "{counts}");
    let (a, b) = (open(&c.db), open(&tiny));
    let tables: Vec<String> = rows(
        &a,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             AND name NOT LIKE 'full_text_entity_index_%' ORDER BY name",
        &[],
    )
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    assert!(tables.contains(&"token".to_string()));
    for table in tables {
        let sql = format!("SELECT * FROM {table}");
        assert_eq!(rows(&a, &sql, &[]), rows(&b, &sql, &[]), "{table}");
    }
    // the search index holds the same rows (its shadow tables' layout may differ)
    let sql = "SELECT rowid, * FROM full_text_entity_index ORDER BY rowid";
    assert_eq!(rows(&a, sql, &[]), rows(&b, sql, &[]));
}

/// A round's analyses are written from the round, whatever the analysis cache keeps: with
/// the smallest cache (16 analyses) and rounds of 24 pages (3 threads, 8 each), no page is
/// read and analysed a second time for the URL it was analysed for.
#[test]
fn a_round_larger_than_the_analysis_cache_analyses_each_page_once() {
    let c = crawled_twice();
    let small = c.db.with_file_name("small-cache.db");
    let counts = summarize_with(&c.store, &small, &["--memory-mb", "1", "--threads", "3"]);
    for name in ["payloads_analysed", "payloads_analysed_again_for_url"] {
        assert_eq!(
            count(&counts, name),
            count(&c.counts, name),
            "{name}: {counts}"
        );
    }
    // more pages than the cache holds, in one round
    assert!(count(&counts, "payloads_analysed") > 16, "{counts}");
}

#[test]
fn indexes_left_out_of_an_interrupted_first_run_come_back() {
    // A fresh database is filled without its random-keyed secondary indexes, which are
    // built at the end; a first run interrupted before the end leaves them out, and the
    // next run (here: with nothing new to add) builds them.
    let c = crawled_twice();
    let index_names = |conn: &rusqlite::Connection| -> Vec<Vec<String>> {
        rows(
            conn,
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name",
            &[],
        )
    };
    let complete = index_names(&open(&c.db));
    for deferred in [
        "url_string",
        "entity_generation_by_uuid",
        "crawl_summary_by_crawl_uuid",
    ] {
        assert!(
            complete.iter().any(|r| r[0] == deferred),
            "{deferred} after a complete run"
        );
    }
    {
        let conn = open(&c.db);
        conn.execute_batch(
            "DROP INDEX url_string; DROP INDEX entity_generation_by_uuid;
             DROP INDEX crawl_summary_by_crawl_uuid;",
        )
        .unwrap();
    }
    let counts = summarize_with(&c.store, &c.db, &[]);
    assert_eq!(count(&counts, "crawl_summaries"), 0, "{counts}");
    let conn = open(&c.db);
    assert_eq!(index_names(&conn), complete);
    assert_sound(&conn);
}
