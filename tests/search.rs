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

/// Index pages are not put after every article any more: on the bench crawl that buried
/// the pages with more list links than words / 50 (1,128 of 2,725, Erlang's module
/// references among them). Their score is lowered by their indexiness instead
/// (`search::INDEX_PAGE_HALF`; tests/relevance.rs measures the whole).
#[test]
fn titles_and_headlines_rank_above_body_text_and_index_pages_are_marked() {
    let db = ranking_site();
    let all = hits(&db, "okapi");
    assert_eq!(all.len(), 4);
    let index: Vec<_> = all.iter().filter(|h| h["index_page"] == true).collect();
    assert_eq!(index.len(), 1);
    assert_eq!(index[0]["url"], "http://zoo.example/index");
    let found: Vec<_> = all.iter().filter(|h| h["index_page"] == false).collect();
    let urls: Vec<&str> = found.iter().map(|h| h["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        [
            "http://zoo.example/title",
            "http://zoo.example/headline",
            "http://zoo.example/body",
        ]
    );
    // Scores are bm25 with the ranking's boosts (lower is better), in order.
    let scores: Vec<f64> = all.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{scores:?}");
    let scores: Vec<f64> = found.iter().map(|h| h["score"].as_f64().unwrap()).collect();
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
    // A query that starts with a minus may still go after `--`; options after the query
    // stay options.
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
            "-report",
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

/// Runs `sediment search --db DB ARGS…` as typed, without a `--`.
fn run_search(db: &Db, args: &[&str]) -> common::Run {
    let mut all = vec!["search", "--db", db.db.to_str().unwrap()];
    all.extend_from_slice(args);
    sediment(&db.store, &all)
}

#[test]
fn exclusions_need_no_double_dash_and_options_may_follow_the_query() {
    let db = ranking_site();
    let urls = |run: &common::Run| -> Vec<String> {
        assert_eq!(run.status, 0, "{}", run.stderr);
        json_lines(&run.stdout)
            .iter()
            .map(|h| h["url"].as_str().unwrap().to_string())
            .collect()
    };
    let all = urls(&run_search(&db, &["--json", "okapi"]));
    assert_eq!(all.len(), 4, "{all:?}");
    // `okapi -crossed`: the word exclusion, as the shell passes it.
    let without = urls(&run_search(&db, &["--json", "okapi", "-crossed"]));
    assert_eq!(without.len(), 3, "{without:?}");
    assert!(!without.contains(&"http://zoo.example/body".to_string()));
    // `okapi -"An okapi crossed"`: the shell took the quotes off; still a phrase.
    let without = urls(&run_search(&db, &["--json", "okapi", "-An okapi crossed"]));
    assert_eq!(without.len(), 3, "{without:?}");
    assert!(!without.contains(&"http://zoo.example/body".to_string()));
    // A phrase it is: the title page has "okapi" but not "An okapi crossed".
    let without = urls(&run_search(&db, &["--json", "okapi", "-sightings crossed"]));
    assert_eq!(without.len(), 4, "{without:?}");
    // A leading exclusion, and options after it.
    let run = run_search(&db, &["-report", "okapi", "--limit", "2", "--json"]);
    let two = urls(&run);
    assert_eq!(
        two,
        ["http://zoo.example/title", "http://zoo.example/headline"]
    );
    let run = run_search(&db, &["okapi", "-report", "--limit=1"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("1. Okapi sightings\n") && !run.stdout.contains("\n2. "));
    let run = run_search(&db, &["okapi", "--limit", "many"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--limit"), "{}", run.stderr);
}

#[test]
fn site_honours_a_port() {
    let db = fixture_crawls();
    let all = search(&db, "core");
    assert!(!all.is_empty());
    assert_eq!(search(&db, "core site:127.0.0.1:47213"), all);
    assert_eq!(search(&db, "core site:http://127.0.0.1:47213/x"), all);
    assert!(search(&db, "core site:127.0.0.1:47214").is_empty());
    // http's default port is 80, stored as no port.
    assert!(search(&db, "core site:127.0.0.1:80").is_empty());
}

#[test]
fn json_results_carry_the_capture_timestamp_and_payload_key() {
    let db = ranking_site();
    let found = hits(&db, "okapi sightings");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["timestamp"], "20240101000000");
    let key = found[0]["payload"].as_str().unwrap();
    assert_eq!(key.len(), 32, "base32 SHA-1: {key}");
    // The key reads back the page that was captured.
    let cat = sediment(&db.store, &["cat", key]);
    assert_eq!(cat.status, 0, "{}", cat.stderr);
    assert!(
        cat.stdout.contains("<title>Okapi sightings</title>"),
        "{}",
        cat.stdout
    );
    let found = hits(&db, "crossed");
    assert_eq!(found[0]["timestamp"], "20240101000002");
    assert_ne!(found[0]["payload"], key);
}

#[test]
fn the_same_text_under_several_urls_and_hosts_is_one_result_with_its_copies() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("copies.warc");
    let page = "<!DOCTYPE html><html lang=en><title>Tapir tracks</title><main><p>Tapir tracks lead to the river.</p></main>";
    let other =
        "<!DOCTYPE html><html lang=en><title>River notes</title><main><p>A tapir swam.</p></main>";
    write_warc(
        &warc,
        &[
            Response::html("http://a.example/tapir", "2024-01-01T00:00:00Z", page),
            Response::html("http://b.example:8080/tapir", "2024-01-01T00:00:01Z", page),
            Response::html(
                "http://a.example/mirror/tapir",
                "2024-01-01T00:00:02Z",
                page,
            ),
            Response::html("http://a.example/river", "2024-01-01T00:00:03Z", other),
        ],
    );
    let db = Db {
        store: dir.path().join("store"),
        db: dir.path().join("copies.db"),
        _dir: dir,
    };
    import_and_summarize(&db.store, &db.db, &[&warc]);
    let found = hits(&db, "tapir");
    let urls: Vec<&str> = found.iter().map(|h| h["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        ["http://a.example/mirror/tapir", "http://a.example/river"]
    );
    assert_eq!(found[0]["copies"], 2);
    assert_eq!(
        found[0]["copy_urls"],
        serde_json::json!(["http://a.example/tapir", "http://b.example:8080/tapir"])
    );
    assert_eq!(found[1]["copies"], 0);
    let run = run_search(&db, &["tapir", "tracks"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("\n   2 more copies: http://a.example/tapir http://b.example:8080/tapir\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_index_made_before_the_url_path_column_is_searched_and_then_made_again() {
    let db = fixture_crawls();
    let before = search(&db, "researchers");
    assert!(before.contains(&page("/about.html")), "{before:?}");
    {
        // The index as `project summary` made it before it had the url_path column (and
        // before the heavy columns' own index).
        let conn = open(&db.db);
        conn.execute_batch(
            "DROP TABLE sediment_heavy_index;
             DROP VIEW sediment_heavy_text;
             CREATE VIRTUAL TABLE old_index USING fts5(
                 text_pile_id UNINDEXED, any, title, description, text, secondary_text,
                 big_headlines, small_headlines, code_text, quote_text,
                 tokenize='porter unicode61');
             INSERT INTO old_index (rowid, text_pile_id, any, title, description, text,
                 secondary_text, big_headlines, small_headlines, code_text, quote_text)
             SELECT rowid, text_pile_id, any, title, description, text, secondary_text,
                 big_headlines, small_headlines, code_text, quote_text
             FROM full_text_entity_index;
             DROP TABLE full_text_entity_index;
             ALTER TABLE old_index RENAME TO full_text_entity_index;",
        )
        .unwrap();
    }
    assert_eq!(search(&db, "researchers"), before, "an old index is read");
    // The next run makes the index again, with every row and the new column.
    let counts = summarize(&db.store, &db.db);
    assert_eq!(
        count(&counts, "search_rows_written"),
        count(&counts, "search_rows")
    );
    let conn = open(&db.db);
    let url_path: String = conn
        .query_row(
            "SELECT f.url_path FROM full_text_entity_index f
             JOIN entity_generation eg ON eg.entity_generation_id = f.rowid
             JOIN url USING (url_id) WHERE url.str_url = ?1",
            [page("/about.html")],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(url_path, "/about");
    assert_eq!(search(&db, "researchers"), before);
    assert_eq!(
        search(&db, "about researchers").first(),
        Some(&page("/about.html"))
    );
}

#[test]
fn offset_and_facets_on_the_command_line() {
    let db = fixture_crawls();
    let run = |extra: &[&str]| {
        let mut args = vec!["search", "--db", db.db.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        args.push("the");
        let run = sediment(&db.store, &args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        json_lines(&run.stdout)
    };
    let all = run(&["--limit", "100"]);
    assert!(all.len() > 6);
    let page = run(&["--limit", "3", "--offset", "3", "--facets"]);
    assert_eq!(page.len(), 4, "three hits and the counts");
    assert_eq!(page[..3], all[3..6]);
    let counts = &page[3];
    assert_eq!(counts["total"].as_u64().unwrap() as usize, all.len());
    assert_eq!(counts["total_exact"], true);
    assert_eq!(counts["offset"], 3);
    assert_eq!(
        counts["facets"]["site"],
        serde_json::json!([{"value": "127.0.0.1:47213", "count": all.len()}])
    );
    assert!(!counts["facets"]["year"].as_array().unwrap().is_empty());
    // In text, the results are numbered from the offset, and the counts follow.
    let text = sediment(
        &db.store,
        &[
            "search",
            "--db",
            db.db.to_str().unwrap(),
            "--limit",
            "2",
            "--offset",
            "4",
            "--facets",
            "the",
        ],
    );
    assert_eq!(text.status, 0, "{}", text.stderr);
    assert!(text.stdout.starts_with("5. "), "{}", text.stdout);
    assert!(
        text.stdout
            .contains(&format!("{} results; these are 5–6", all.len())),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("site:127.0.0.1:47213 ("),
        "{}",
        text.stdout
    );
}

/// The heavy columns' own index (`sediment_heavy_index`: title, description, headlines,
/// URL path) is where a query with more matches than are ranked finds those to rank
/// first. A database made before it is searched as before, and the next `project summary`
/// run adds it, built from the search index; it then holds every search row and its
/// text, and the results are the same.
#[test]
fn the_heavy_columns_index_is_added_to_an_older_database_and_kept_with_the_search_index() {
    let db = fixture_crawls();
    let queries = [
        "researchers",
        "the",
        "\"four researchers\"",
        "lane -freezers",
    ];
    let before: Vec<Vec<String>> = queries.iter().map(|q| search(&db, q)).collect();
    assert!(before.iter().all(|hits| !hits.is_empty()), "{before:?}");
    let heavy_rows =
        |conn: &rusqlite::Connection| one(conn, "SELECT count(*) FROM sediment_heavy_index", &[]);
    {
        let conn = open(&db.db);
        assert_eq!(
            heavy_rows(&conn),
            one(&conn, "SELECT count(*) FROM full_text_entity_index", &[])
        );
        assert_sound(&conn);
        conn.execute_batch(
            "DROP TABLE sediment_heavy_index;
             DROP VIEW sediment_heavy_text;
             UPDATE unobtanium_database_info SET value = 'sediment-summary-3'
             WHERE key = 'sediment_summary_schema';",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let without: Vec<Vec<String>> = queries.iter().map(|q| search(&db, q)).collect();
    assert_eq!(without, before, "a database without it is searched");
    let counts = summarize(&db.store, &db.db);
    assert_eq!(count(&counts, "search_rows_written"), 0, "{counts}");
    let conn = open(&db.db);
    let rows = one(&conn, "SELECT count(*) FROM full_text_entity_index", &[]);
    assert!(rows >= 15, "{rows}");
    assert_eq!(heavy_rows(&conn), rows);
    assert_sound(&conn);
    // Every row's title is found there, by itself.
    let titles = one(
        &conn,
        "SELECT count(*) FROM full_text_entity_index f
         WHERE f.title <> '' AND f.rowid IN (
             SELECT rowid FROM sediment_heavy_index WHERE sediment_heavy_index MATCH
                 '{title} : \"' || replace(f.title, '\"', '\"\"') || '\"')",
        &[],
    );
    assert_eq!(titles, rows);
    drop(conn);
    let after: Vec<Vec<String>> = queries.iter().map(|q| search(&db, q)).collect();
    assert_eq!(after, before);
}

/// A query with a phrase of several words counts its first 1,000 matches (FTS5 compares
/// the words' positions at every row holding them all, so a phrase of common words costs
/// far more a match than a word: `search::facets::PHRASE_COUNT_CAP`); a word's matches
/// are counted to 10,000. The total then says "at least", and the facets count the
/// counted matches.
#[test]
fn a_phrase_is_counted_to_its_own_cap() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("okapis.warc");
    const PAGES: usize = 1_010;
    let urls: Vec<String> = (0..PAGES)
        .map(|i| format!("http://zoo{}.example/okapi/{i}", i % 3))
        .collect();
    let pages: Vec<Response> = urls
        .iter()
        .enumerate()
        .map(|(i, url)| {
            Response::html(
                url,
                "2024-01-01T00:00:00Z",
                format!(
                    "<!DOCTYPE html><html lang=en><title>Sighting {i}</title><main><p>A red okapi \
                     crossed the river at mile {i}, seen by ranger number {i}.</p></main>"
                ),
            )
        })
        .collect();
    write_warc(&warc, &pages);
    let db = Db {
        store: dir.path().join("store"),
        db: dir.path().join("okapis.db"),
        _dir: dir,
    };
    import_and_summarize(&db.store, &db.db, &[&warc]);
    let overview = |query: &str| {
        let run = run_search(&db, &["--json", "--facets", "--limit", "5", query]);
        assert_eq!(run.status, 0, "{query}: {}", run.stderr);
        let lines = json_lines(&run.stdout);
        assert_eq!(lines.len(), 6, "{query}: five hits and the counts");
        lines[5].clone()
    };
    let word = overview("okapi");
    assert_eq!(word["total"], PAGES as u64, "{word}");
    assert_eq!(word["total_exact"], true);
    let phrase = overview("\"red okapi\"");
    assert_eq!(phrase["total"], 1_000, "{phrase}");
    assert_eq!(phrase["total_exact"], false);
    let sites: u64 = phrase["facets"]["site"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["count"].as_u64().unwrap())
        .sum();
    assert_eq!(sites, 1_000, "{phrase}");
    // A phrase's page past its counted matches is still ranked.
    let run = run_search(
        &db,
        &[
            "--json",
            "--limit",
            "5",
            "--offset",
            "1003",
            "\"red okapi\"",
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(json_lines(&run.stdout).len(), 5, "{}", run.stdout);
}
