//! `sediment search` over summary databases of the fixture crawls and of made-up pages.

mod common;
mod summary_support;

use std::path::{Path, PathBuf};

use common::{json_lines, sediment};
use summary_support::*;

const SITE: &str = "http://127.0.0.1:47213";

struct Db {
    _dir: tempfile::TempDir,
    store: PathBuf,
    db: PathBuf,
}

fn fixture_crawls() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    Db {
        _dir: dir,
        store,
        db,
    }
}

/// Runs `sediment search --json`; the URLs of the hits, best first.
fn search(db: &Db, query: &str) -> Vec<String> {
    hits(db, query)
        .iter()
        .map(|h| h["url"].as_str().unwrap().to_string())
        .collect()
}

fn hits(db: &Db, query: &str) -> Vec<serde_json::Value> {
    let run = sediment(
        &db.store,
        &[
            "search",
            "--db",
            db.db.to_str().unwrap(),
            "--json",
            "--limit",
            "50",
            "--",
            query,
        ],
    );
    assert_eq!(run.status, 0, "search {query:?}: {}", run.stderr);
    json_lines(&run.stdout)
}

fn page(path: &str) -> String {
    format!("{SITE}{path}")
}

#[test]
fn a_sentence_finds_its_page_first() {
    let db = fixture_crawls();
    for (sentence, path) in [
        (
            "Jonas measured caesium-137 in half-centimetre slices of core",
            "/blog/2022/01/20/dating-the-flood-layer.html",
        ),
        (
            "We are four researchers, one aluminium boat and two chest freezers full of mud",
            "/about.html",
        ),
        (
            "wrapping a tape measure around a frozen sediment core",
            "/blog/2021/03/14/pi-day.html",
        ),
        ("The boathouse is at the end of Shore Lane", "/contact.html"),
    ] {
        let words = search(&db, sentence);
        assert_eq!(words.first(), Some(&page(path)), "{sentence}: {words:?}");
        let phrase = search(&db, &format!("\"{sentence}\""));
        assert_eq!(phrase, vec![page(path)], "\"{sentence}\"");
    }
}

#[test]
fn a_phrase_exclusion_removes_the_page() {
    let db = fixture_crawls();
    let caesium = search(&db, "caesium");
    let dating = page("/blog/2022/01/20/dating-the-flood-layer.html");
    let spring = page("/blog/2021/05/02/spring-notes.html");
    assert!(
        caesium.contains(&dating) && caesium.contains(&spring),
        "{caesium:?}"
    );
    let without = search(&db, "caesium -\"half-centimetre slices\"");
    assert!(!without.contains(&dating), "{without:?}");
    assert!(without.contains(&spring), "{without:?}");
    // A word exclusion, and exclusions alone (through the `any` column).
    assert!(!search(&db, "caesium -slices").contains(&dating));
    let no_lake = search(&db, "-lake");
    assert!(!no_lake.is_empty());
    let conn = open(&db.db);
    for url in &no_lake {
        let lake = one(
            &conn,
            "SELECT count(*) FROM entity_generation eg JOIN url USING (url_id)
             JOIN token_statistics ts ON ts.text_pile_id = eg.text_pile_id
             JOIN token USING (token_id)
             WHERE str_url = ?1 AND eg.confirmed_end_unix_utc IS NULL AND token_text = 'lake'",
            &[url],
        );
        assert_eq!(lake, 0, "{url} has the word lake");
    }
}

#[test]
fn only_current_non_duplicate_versions_are_found() {
    let db = fixture_crawls();
    // v1 of /about.html said "three researchers, one aluminium boat"; that generation is
    // closed (v2 still says "three researchers, one boat" in its meta description).
    assert!(search(&db, "\"three researchers, one aluminium boat\"").is_empty());
    assert_eq!(
        search(&db, "\"three researchers, one boat\""),
        vec![page("/about.html")]
    );
    assert_eq!(
        search(&db, "\"four researchers\""),
        vec![page("/about.html")]
    );
    // /policies/terms.html is a duplicate of /legal/terms.html.
    let terms = search(&db, "\"reused with attribution\"");
    assert_eq!(terms, vec![page("/legal/terms.html")]);
    // noindex
    assert!(
        !search(&db, "upcoming")
            .iter()
            .any(|u| u.ends_with("/drafts/upcoming.html"))
    );
}

#[test]
fn filters() {
    let db = fixture_crawls();
    assert_eq!(
        search(&db, "lang:de"),
        vec![page("/legacy/windows-1252.html")]
    );
    assert_eq!(
        search(&db, "See lang:de"),
        vec![page("/legacy/windows-1252.html")]
    );
    let english = search(&db, "researchers lang:en");
    assert!(
        english.contains(&page("/about.html")),
        "en matches en-GB: {english:?}"
    );
    assert!(search(&db, "researchers lang:fr").is_empty());
    assert!(!search(&db, "core site:127.0.0.1").is_empty());
    assert!(!search(&db, "core site:http://127.0.0.1:47213/").is_empty());
    assert!(search(&db, "core site:example.org").is_empty());
    // The fixture site's PDFs are searchable too (issue 37).
    let mut pdfs = search(&db, "core mime:application/pdf");
    pdfs.sort();
    assert_eq!(
        pdfs,
        vec![
            page("/papers/report-2021.pdf"),
            page("/papers/sediment-overview.pdf")
        ]
    );
    assert_eq!(
        search(&db, "core mime:text/html").len() + pdfs.len(),
        search(&db, "core").len()
    );
    assert_eq!(
        search(&db, "core mime:html").len() + pdfs.len(),
        search(&db, "core").len()
    );
    assert_eq!(search(&db, "core mime:pdf").len(), pdfs.len());
}

/// A made-up site for ranking: the same word in a title, a headline, body text, and on an
/// index page.
fn ranking_site() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("ranking.warc");
    let filler = "Plain words about rivers and hills fill this paragraph. ".repeat(20);
    let title_page = format!(
        "<!DOCTYPE html><html lang=en><title>Okapi sightings</title><main><p>{filler}</p></main>"
    );
    let headline_page = format!(
        "<!DOCTYPE html><html lang=en><title>Field notes</title><main><h2>The okapi</h2><p>{filler}</p></main>"
    );
    let body_page = format!(
        "<!DOCTYPE html><html lang=en><title>Forest log</title><main><p>{filler} An okapi crossed.</p></main>"
    );
    let items: String = (0..12)
        .map(|i| format!("<li><a href=\"/okapi/{i}\">Okapi report {i}</a></li>"))
        .collect();
    let index_page = format!(
        "<!DOCTYPE html><html lang=en><title>Okapi okapi index</title><main><h1>Okapi</h1><ul>{items}</ul></main>"
    );
    write_warc(
        &warc,
        &[
            Response::html(
                "http://zoo.example/title",
                "2024-01-01T00:00:00Z",
                title_page,
            ),
            Response::html(
                "http://zoo.example/headline",
                "2024-01-01T00:00:01Z",
                headline_page,
            ),
            Response::html("http://zoo.example/body", "2024-01-01T00:00:02Z", body_page),
            Response::html(
                "http://zoo.example/index",
                "2024-01-01T00:00:03Z",
                index_page,
            ),
        ],
    );
    let store = dir.path().join("store");
    let db = dir.path().join("ranking.db");
    import_and_summarize(&store, &db, &[&warc]);
    Db {
        _dir: dir,
        store,
        db,
    }
}

#[test]
fn titles_and_headlines_rank_above_body_text_and_index_pages_come_last() {
    let db = ranking_site();
    let found = hits(&db, "okapi");
    let urls: Vec<&str> = found.iter().map(|h| h["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        [
            "http://zoo.example/title",
            "http://zoo.example/headline",
            "http://zoo.example/body",
            "http://zoo.example/index"
        ]
    );
    assert_eq!(found[3]["index_page"], true);
    assert!(found[..3].iter().all(|h| h["index_page"] == false));
    // Scores are bm25 (lower is better), in order among the articles.
    let scores: Vec<f64> = found[..3]
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert!(scores[0] < scores[1] && scores[1] < scores[2], "{scores:?}");
    // The snippet comes from the body text when it matches, with the match marked.
    assert!(
        found[2]["snippet"]
            .as_str()
            .unwrap()
            .contains("An [okapi] crossed.")
    );
    assert_eq!(found[1]["snippet"], "The [okapi]");
    assert_eq!(found[0]["title"], "Okapi sightings");
    assert_eq!(found[0]["first_seen"], 1_704_067_200);
    assert_eq!(found[0]["captures"], 1);
}

#[test]
fn text_output_and_bad_queries() {
    let db = ranking_site();
    let run = sediment(
        &db.store,
        &[
            "search",
            "--db",
            db.db.to_str().unwrap(),
            "--limit",
            "1",
            "okapi",
            "crossed",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "1. Forest log\n   http://zoo.example/body\n   …An [okapi] [crossed].\n   captured 2024-01-01 00:00:02 (1 capture)\n"
    );
    let empty = sediment(
        &db.store,
        &["search", "--db", db.db.to_str().unwrap(), "\"\""],
    );
    assert_ne!(empty.status, 0);
    assert!(empty.stderr.contains("empty query"), "{}", empty.stderr);
    let missing = sediment(
        &db.store,
        &[
            "search",
            "--db",
            Path::new("/nonexistent/x.db").to_str().unwrap(),
            "a",
        ],
    );
    assert_ne!(missing.status, 0);
    assert!(
        missing.stderr.contains("summary database"),
        "{}",
        missing.stderr
    );
    // A query that starts with a minus goes after `--`; options after the query stay
    // options.
    let run = sediment(
        &db.store,
        &["search", "--db", db.db.to_str().unwrap(), "--", "-okapi"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty() && run.stderr.contains("no results"));
    let run = sediment(
        &db.store,
        &[
            "search",
            "--db",
            db.db.to_str().unwrap(),
            "okapi",
            "--limit",
            "2",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("1. Okapi sightings\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\n2. ") && !run.stdout.contains("\n3. "));
}
