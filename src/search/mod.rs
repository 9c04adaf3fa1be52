//! Searching a summary database (`sediment search`).
//!
//! The full-text index holds one row per open, non-duplicate generation; a result stands
//! for the copies of its text under other URLs ([`Hit::copies`]). Results are ranked by
//! FTS5's bm25 with per-column weights ([`COLUMN_WEIGHTS`]: title, headlines and URL path
//! count more than body text), then that score is raised for a page whose title holds
//! every term ([`TITLE_BOOST`]) and whose URL path does ([`URL_PATH_BOOST`]) — bm25 judges
//! the whole page's length, so a long reference page would otherwise lose to short pages
//! that mention its title — and lowered for index pages (positive indexiness: lists of
//! links), by [`INDEX_PAGE_HALF`]. Relevance is measured by tests/relevance.rs. Each hit
//! carries its URL, title, a snippet with the matches marked and the capture dates of its
//! generation.

pub mod docvalues;
pub mod facets;
pub mod query;
mod rank;
pub mod snippet;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params_from_iter, types::Value};
use serde::Serialize;

pub use docvalues::DocValues;
pub use query::{MAX_EXPRESSION_BYTES, MAX_FILTERS, MAX_WORDS, Query, QueryError, Term};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// bm25 weights in column order: text_pile_id (unindexed), any, title, description, text,
/// secondary_text, big_headlines, small_headlines, code_text, quote_text, url_path (an
/// index made before it had that column has the first ten).
pub const COLUMN_WEIGHTS: [f64; 11] = [0.0, 0.0, 10.0, 3.0, 1.0, 0.4, 5.0, 2.5, 0.5, 0.8, 5.0];

/// The score of a page whose title holds every included term is multiplied by
/// 1 + this.
pub const TITLE_BOOST: f64 = 1.0;
/// The same for the URL path.
pub const URL_PATH_BOOST: f64 = 0.5;
/// An index page's score is divided by 1 + indexiness / this: halved at this indexiness.
/// (Indexiness alone does not tell a list of links from a long article with many links:
/// Python's "What's New" pages and Erlang's module references score above 0.)
pub const INDEX_PAGE_HALF: f64 = 100.0;

/// Marks around matches in snippets.
pub const MATCH_START: &str = "[";
pub const MATCH_END: &str = "]";

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub url: String,
    pub title: String,
    pub snippet: String,
    /// First and last capture of this version of the page, unix seconds.
    pub first_seen: i64,
    pub last_seen: i64,
    /// How many captures saw this version.
    pub captures: i64,
    /// bm25 score with the ranking's boosts (lower is better).
    pub score: f64,
    pub index_page: bool,
    pub entity_generation_uuid: String,
    /// How many other URLs hold the same text now (on this host or others): one result
    /// stands for them all, "N more copies".
    pub copies: i64,
    /// The first [`MAX_COPY_URLS`] of them, in URL order.
    pub copy_urls: Vec<String>,
}

/// Most copies' URLs a hit lists.
pub const MAX_COPY_URLS: usize = 10;

/// Prepared statements a search connection keeps.
const STATEMENTS_KEPT: usize = 64;

/// Opens a summary database for reading.
pub fn open(path: &std::path::Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open the summary database {}", path.display()))?;
    // Ranking reads the index's document sizes and a few small rows per match: memory-map
    // the file rather than copying pages through read calls.
    conn.execute_batch("PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -65536;")?;
    // A search prepares a ranking and a counting statement for its shape of query (which
    // boosts and filters it has) and four per hit: room for the shapes in use, so that a
    // kept connection does not parse SQL again.
    conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
    // One plan per statement whatever its parameters: without this SQLite prepares a
    // statement again each time a parameter it might plan on (a LIKE pattern, say) gets
    // a new value, which was several per cent of a search's time.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    let has_index: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'full_text_entity_index')",
            [],
            |r| r.get(0),
        )
        .with_context(|| format!("{} is not an SQLite database", path.display()))?;
    if !has_index {
        anyhow::bail!(
            "{} has no full_text_entity_index: make it with `sediment project summary`",
            path.display()
        );
    }
    let index: String = conn.query_row(
        "SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'",
        [],
        |r| r.get(0),
    )?;
    snippet::register(&conn, index.contains("tokenize='porter unicode61'"))?;
    rank::register(&conn)?;
    Ok(conn)
}

/// When a running search must stop: at a deadline, or as soon as `cancel` is set (its
/// client went away, the server is stopping).
#[derive(Clone, Default)]
pub struct Stop {
    pub deadline: Option<Instant>,
    pub cancel: Vec<Arc<AtomicBool>>,
}

impl Stop {
    fn reason(&self) -> Option<&'static str> {
        if self.cancel.iter().any(|c| c.load(Ordering::Relaxed)) {
            Some("was cancelled")
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some("took longer than the time allowed")
        } else {
            None
        }
    }
}

/// A search cut short by its [`Stop`].
#[derive(Debug, thiserror::Error)]
#[error("the search was stopped: it {0}")]
pub struct Stopped(pub &'static str);

/// SQLite calls the progress handler after this many virtual machine steps (tens of
/// microseconds): how quickly a stop takes effect.
const STEPS_BETWEEN_CHECKS: i32 = 2000;

/// Runs a query; at most `limit` hits, best first.
pub fn search(conn: &Connection, query: &Query, limit: usize) -> Result<Vec<Hit>> {
    one_read(conn, |conn| {
        ranked(conn, query, (0, limit), &Stop::default(), None, None)
    })
}

/// [`search`] with at most `cap` matches ranked in index order (then as many, at most
/// [`FIRST_CAP`], holding every term in the title, the URL path, the heaviest columns), as
/// every search is past [`RANKED_CAP`]: how the cap is tested on an index smaller than it.
#[doc(hidden)]
pub fn search_ranking_at_most(
    conn: &Connection,
    query: &Query,
    limit: usize,
    cap: usize,
) -> Result<Vec<Hit>> {
    Ranking {
        conn,
        query,
        stop: &Stop::default(),
        docs: None,
        cap,
        site_driven_max: SITE_DRIVEN_MAX,
    }
    .page((0, limit), None)
}

/// One page of hits: at most `limit` after the first `offset` (see [`facets`] for the
/// total and the facets of the same query). `docs`, the [`DocValues`] of this state of
/// the database when the caller keeps them, make it faster and change nothing else.
pub fn search_page(
    conn: &mut Connection,
    docs: Option<&DocValues>,
    query: &Query,
    offset: usize,
    limit: usize,
    stop: &Stop,
) -> Result<Vec<Hit>> {
    interruptible(conn, stop, |conn| {
        ranked(conn, query, (offset, limit), stop, docs, None)
    })
}

/// [`search_page`] and the total and facets of the same query ([`facets::overview`]) in
/// one pass over the matches: what a first page of results shows.
pub fn search_page_with_overview(
    conn: &mut Connection,
    docs: Option<&DocValues>,
    query: &Query,
    offset: usize,
    limit: usize,
    stop: &Stop,
) -> Result<(Vec<Hit>, facets::Overview)> {
    page_with_overview(conn, docs, query, (offset, limit), stop, SITE_DRIVEN_MAX)
}

/// [`search_page_with_overview`] with a `site:` filter looked up by row id when it has at
/// most `site_driven_max` generations (rather than [`SITE_DRIVEN_MAX`]): how the two ways
/// of filtering by site are compared on one index.
#[doc(hidden)]
pub fn search_page_with_overview_sites_up_to(
    conn: &mut Connection,
    docs: &DocValues,
    query: &Query,
    page: (usize, usize),
    site_driven_max: usize,
) -> Result<(Vec<Hit>, facets::Overview)> {
    page_with_overview(
        conn,
        Some(docs),
        query,
        page,
        &Stop::default(),
        site_driven_max,
    )
}

/// One page of hits and the overview of its query, in one read (see
/// [`search_page_with_overview`]); a `site:` of at most `site_driven_max` generations is
/// looked up by row id.
fn page_with_overview(
    conn: &mut Connection,
    docs: Option<&DocValues>,
    query: &Query,
    page: (usize, usize),
    stop: &Stop,
    site_driven_max: usize,
) -> Result<(Vec<Hit>, facets::Overview)> {
    interruptible(conn, stop, |conn| {
        let mut tally = facets::Tally::new(facets::count_cap(query));
        let hits = Ranking {
            conn,
            query,
            stop,
            docs,
            cap: RANKED_CAP,
            site_driven_max,
        }
        .page(page, Some(&mut tally))?;
        Ok((hits, tally.finish(conn, docs, stop)?))
    })
}

/// [`search`], interrupted inside SQLite when `stop` says so ([`Stopped`]).
pub fn search_until(
    conn: &mut Connection,
    query: &Query,
    limit: usize,
    stop: &Stop,
) -> Result<Vec<Hit>> {
    interruptible(conn, stop, |conn| {
        ranked(conn, query, (0, limit), stop, None, None)
    })
}

/// Runs `work` on `conn` with SQLite checking `stop` every few thousand steps.
pub fn interruptible<T>(
    conn: &mut Connection,
    stop: &Stop,
    work: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    let watcher = stop.clone();
    conn.progress_handler(
        STEPS_BETWEEN_CHECKS,
        Some(move || watcher.reason().is_some()),
    )?;
    let own_transaction = conn.is_autocommit();
    let result = one_read(conn, work);
    conn.progress_handler(0, None::<fn() -> bool>)?;
    if own_transaction && !conn.is_autocommit() {
        // The read transaction's rollback, had the stop interrupted it too: a kept
        // connection must not go on reading an old state of the database.
        conn.execute_batch("ROLLBACK")?;
    }
    result.map_err(|e| match stop.reason() {
        Some(reason) if interrupted(&e) => anyhow::Error::new(Stopped(reason)),
        _ => e,
    })
}

/// Runs `work` in one read transaction: its statements see one state of the database, and
/// the read lock is taken once rather than by each statement (a search runs a dozen; at
/// 1 M pages taking and releasing it was 6 % of a common word's search).
fn one_read<T>(conn: &Connection, work: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
    if !conn.is_autocommit() {
        return work(conn);
    }
    let transaction = conn.unchecked_transaction()?;
    let result = work(&transaction)?;
    transaction.commit()?;
    Ok(result)
}

fn interrupted(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<rusqlite::Error>()
        .is_some_and(|e| e.sqlite_error_code() == Some(rusqlite::ErrorCode::OperationInterrupted))
        || error.is::<Stopped>()
}

/// Whether the query has a filter that [`push_filters`] writes a condition for.
fn has_filters(query: &Query) -> bool {
    !(query.sites.is_empty()
        && query.languages.is_empty()
        && query.mime_types.is_empty()
        && query.years.is_empty())
}

/// The conditions of a query's filters (site, language, type, year) on the generation
/// `eg`, appended to `sql` with their `values`: one definition for the ranked results and
/// for their total and facets, so that the two always agree.
pub(crate) fn push_filters(query: &Query, sql: &mut String, values: &mut Vec<Value>) {
    if !query.sites.is_empty() {
        // A port, when given, must be the origin's (a default port is stored as NULL).
        let alternatives: Vec<&str> = query
            .sites
            .iter()
            .map(|_| {
                "((o.host = ? OR o.host LIKE ? ESCAPE '\\') AND (? IS NULL OR \
                  COALESCE(o.port, CASE o.scheme WHEN 'http' THEN 80 WHEN 'https' THEN 443 END) = ?))"
            })
            .collect();
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM url JOIN origin o ON o.origin_id = url.origin_id
                          WHERE url.url_id = eg.url_id AND ({}))",
            alternatives.join(" OR ")
        ));
        for site in &query.sites {
            let (host, port) = site_host(site);
            values.push(Value::Text(host.to_string()));
            values.push(Value::Text(format!("%.{}", like_escape(host))));
            let port = port.map_or(Value::Null, |p| Value::Integer(i64::from(p)));
            values.push(port.clone());
            values.push(port);
        }
    }
    if !query.languages.is_empty() {
        let alternatives: Vec<&str> = query
            .languages
            .iter()
            .map(|_| "(lower(dl.primary_language) = ? OR lower(dl.primary_language) LIKE ? ESCAPE '\\')")
            .collect();
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM document_description dl
                          WHERE dl.entity_generation_id = eg.entity_generation_id AND ({}))",
            alternatives.join(" OR ")
        ));
        for language in &query.languages {
            values.push(Value::Text(language.clone()));
            values.push(Value::Text(format!("{}-%", like_escape(language))));
        }
    }
    if !query.mime_types.is_empty() {
        let alternatives: Vec<&str> = query
            .mime_types
            .iter()
            .map(|_| {
                "(m.mime_type || '/' || m.mime_subtype || COALESCE('+' || m.mime_suffix, '') = ? \
                  OR m.mime_subtype = ? OR m.mime_type = ?)"
            })
            .collect();
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM file_summary fm JOIN mimetype m ON m.mimetype_id = fm.mimetype_id
                          WHERE fm.entity_generation_id = eg.entity_generation_id AND ({}))",
            alternatives.join(" OR ")
        ));
        for mime in &query.mime_types {
            let essence = mime.split(';').next().unwrap_or("").trim().to_string();
            values.push(Value::Text(essence.clone()));
            values.push(Value::Text(essence.clone()));
            values.push(Value::Text(essence));
        }
    }
    facets::push_year_filter(query, sql, values);
}

/// Most matches ranked in index order per query (a page past them ranks as many as it
/// needs): a query with more ranks these and those likeliest to rank first, the matches
/// holding its terms in their title, URL path or headings (found in the heavy columns'
/// own index, [`HEAVY_RANKED_CAP`]; in a database made before it, up to [`FIRST_CAP`] of
/// each set), so that its work is bounded whatever the size of the index (issue 37).
/// With fewer matches, every match is ranked. The total and facets count on, without
/// scoring, to [`facets::count_cap`]: at 1 M pages ranking all 10,000 they count was most
/// of a common word's search (BENCHMARKS.md, "Search at 1 M pages, second round").
pub const RANKED_CAP: usize = 1_000;

/// In a database without the heavy columns' own index (made before it): most matches of
/// each of the title, URL-path and heaviest-columns sets ranked beside the first
/// [`RANKED_CAP`] (in index order), each set a pass of its own over the full index.
pub const FIRST_CAP: usize = 1_000;

/// In a database without the heavy columns' own index: most matches of a query with a
/// phrase read past the ranked ones for those holding every term in the title, the URL
/// path or the heaviest columns (counting stops at [`facets::count_cap`]): a phrase of two
/// common words is checked at every match of both, and reading all of them cost 180 ms at
/// 1 M pages (a set such as the URL path's may hold none of the phrase's hundreds of
/// thousands of matches). A query of words finds its sets in passes of their own
/// ([`FIRST_CAP`]).
pub const PHRASE_EXAMINED_CAP: usize = 50_000;

/// Most matches of a query's included terms read from `sediment_heavy_index` (its rows'
/// title, description, headlines and URL path), in index order, to choose those to rank
/// beside the first [`RANKED_CAP`]: where a query's best matches hold its terms.
pub const HEAVY_EXAMINED_CAP: usize = 1_000;

/// Most of those ranked: the best by their heavy columns alone (the score's arithmetic
/// over those columns' instances) among those not ranked already, each looked up in the
/// full index by row id and scored there (25 to 60 µs a lookup at 1 M pages).
pub const HEAVY_RANKED_CAP: usize = 100;

/// Most generations of a `site:` filter for which the index is asked by row id (with the
/// doc values, which know each origin's generations); a site with more is filtered as the
/// matches are read. A lookup costs what reading a few thousand matches of a single word
/// costs (40 to 100 µs at 1 M pages).
pub const SITE_DRIVEN_MAX: usize = 1_000;

/// How a query's matches are scored: the [`rank`] functions' spec and the IDFs of the
/// query's phrases, computed once for all the query's statements.
struct Scoring {
    spec: String,
    /// `spec` scoring only the matches that hold every term within one of the `first`
    /// column sets (NULL for the others).
    first_spec: String,
    idf: Vec<u8>,
    /// The columns whose matches are ranked too when there are more than are ranked in
    /// index order, as FTS5 column filters (`{title}`).
    first: Vec<&'static str>,
    /// The spec and IDFs scoring `sediment_heavy_index`'s rows by their heavy columns
    /// alone ([`heavy_candidates`]): the included terms' phrases (the query's first), the
    /// full index's weights and boosts of those columns, its IDFs and average row size.
    heavy: Option<(String, Vec<u8>)>,
}

impl Scoring {
    /// `None` when nothing matches `expression`.
    fn of(
        conn: &Connection,
        query: &Query,
        expression: &str,
        has_url_path: bool,
        first_cap: usize,
    ) -> Result<Option<Scoring>> {
        let (first_rowid, last_rowid): (Option<i64>, Option<i64>) = conn
            .prepare_cached(
                // Apart: SQLite finds a minimum or a maximum by one B-tree descent only
                // when the statement asks for nothing else (both at once scanned the table).
                "SELECT (SELECT min(entity_generation_id) FROM entity_generation),
                        (SELECT max(entity_generation_id) FROM entity_generation)",
            )?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let idf_spec = rank::IdfSpec {
            cap: rank::IDF_COUNT_CAP,
            phrase_cap: rank::IDF_PHRASE_COUNT_CAP,
            first_rowid: first_rowid.unwrap_or(0),
            last_rowid: last_rowid.unwrap_or(0),
        };
        let idf: Option<Vec<u8>> = conn
            .prepare_cached(
                "SELECT sediment_idf(full_text_entity_index, ?) FROM full_text_entity_index
                 WHERE full_text_entity_index MATCH ? LIMIT 1",
            )?
            .query_row(
                params_from_iter([
                    Value::Text(serde_json::to_string(&idf_spec)?),
                    Value::Text(expression.to_owned()),
                ]),
                |r| r.get(0),
            )
            .optional()?;
        let Some(idf) = idf else {
            return Ok(None);
        };
        let phrases = rank::Idf::from_blob(&idf).map_or(0, |idf| idf.idf.len());
        let columns = if has_url_path { 11 } else { 10 };
        let mut boosts = vec![(2, TITLE_BOOST)];
        // The title, the URL path, and the columns bm25 weighs most (each term in one of
        // them): where the best matches hold the terms. As FTS5 column filters and as
        // column numbers.
        let mut first = vec!["{title}"];
        let mut first_columns = vec![vec![2]];
        if has_url_path {
            boosts.push((10, URL_PATH_BOOST));
            first.push("{url_path}");
            first_columns.push(vec![10]);
            first.push("{title description big_headlines small_headlines url_path}");
            first_columns.push(vec![2, 3, 6, 7, 10]);
        } else {
            first.push("{title description big_headlines small_headlines}");
            first_columns.push(vec![2, 3, 6, 7]);
        }
        let mut terms = query.included_phrases();
        if terms.iter().flatten().flatten().any(|&p| p >= phrases) {
            // Phrases numbered otherwise than expected: bm25 alone.
            terms.clear();
            boosts.clear();
        }
        if terms.is_empty() {
            // No included term: nothing to boost, and every match holds what is looked for.
            boosts.clear();
            first.clear();
            first_columns.clear();
        }
        let heavy = match rank::Idf::from_blob(&idf) {
            Some(mut heavy_idf) if has_url_path && !terms.is_empty() => {
                let included = terms.iter().flatten().flatten().max().map_or(0, |p| p + 1);
                heavy_idf.idf.truncate(included);
                let spec = rank::RankSpec {
                    weights: HEAVY_INDEX_COLUMNS.map(|c| COLUMN_WEIGHTS[c]).to_vec(),
                    phrases: heavy_idf.idf.len(),
                    terms: terms.clone(),
                    boosts: vec![(0, TITLE_BOOST), (4, URL_PATH_BOOST)],
                    only_within: Vec::new(),
                    within_cap: 0,
                    average_size: true,
                };
                Some((serde_json::to_string(&spec)?, heavy_idf.to_blob()))
            }
            _ => None,
        };
        let mut spec = rank::RankSpec {
            weights: COLUMN_WEIGHTS[..columns].to_vec(),
            phrases,
            terms,
            boosts,
            only_within: Vec::new(),
            within_cap: 0,
            average_size: false,
        };
        let plain = serde_json::to_string(&spec)?;
        spec.only_within = first_columns;
        spec.within_cap = first_cap;
        Ok(Some(Scoring {
            spec: plain,
            first_spec: serde_json::to_string(&spec)?,
            idf,
            first,
            heavy,
        }))
    }
}

/// The ranking statement of `query` for the FTS5 expression `expression` (the query's,
/// or the query's with a condition added) and its parameters: every match's rowid and
/// score (NULL when `score` leaves it out); without `docs`, divided down for index pages,
/// with the index-page flag and, for `facets`, what the facets count.
fn ranking_statement(
    query: &Query,
    expression: &str,
    score: Score,
    docs: bool,
    facets: bool,
) -> (String, Vec<Value>) {
    let mut values: Vec<Value> = Vec::new();
    let spec = match score {
        Score::All(scoring) => Some((&scoring.spec, scoring)),
        Score::First(scoring) => Some((&scoring.first_spec, scoring)),
        Score::Omitted => None,
    };
    let score = match spec {
        Some((spec, scoring)) => {
            values.push(Value::Text(spec.clone()));
            values.push(Value::Blob(scoring.idf.clone()));
            "sediment_rank(full_text_entity_index, ?, ?)"
        }
        // FTS5 then reads no positions for a single term, and calls no function a row.
        None => "NULL",
    };
    let mut sql = match docs {
        // The generation is joined only for the filters' conditions; the index page
        // penalty is applied by the caller.
        true if !has_filters(query) => format!(
            "SELECT full_text_entity_index.rowid, {score}
             FROM full_text_entity_index
             WHERE full_text_entity_index MATCH ?"
        ),
        true => format!(
            "SELECT full_text_entity_index.rowid, {score}
             FROM full_text_entity_index
             JOIN entity_generation eg ON eg.entity_generation_id = full_text_entity_index.rowid
             WHERE full_text_entity_index MATCH ?"
        ),
        false => {
            let (facet_columns, facet_tables) = if facets {
                (
                    ", url.origin_id, fs.mimetype_id, eg.first_seen_unix_utc, eg.last_seen_unix_utc",
                    "JOIN url ON url.url_id = eg.url_id
                     LEFT JOIN file_summary fs ON fs.entity_generation_id = eg.entity_generation_id",
                )
            } else {
                ("", "")
            };
            format!(
                "SELECT full_text_entity_index.rowid,
                        {score} / (1 + max(COALESCE(dd.indexiness, 0), 0) / {INDEX_PAGE_HALF:?}) AS score,
                        COALESCE(dd.indexiness, 0) > 0 AS index_page{facet_columns}
                 FROM full_text_entity_index
                 JOIN entity_generation eg ON eg.entity_generation_id = full_text_entity_index.rowid
                 {facet_tables}
                 LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
                 WHERE full_text_entity_index MATCH ?
                   AND eg.confirmed_end_unix_utc IS NULL AND eg.marked_duplicate = 0"
            )
        }
    };
    values.push(Value::Text(expression.to_owned()));
    push_filters(query, &mut sql, &mut values);
    (sql, values)
}

/// Which matches a ranking statement scores.
#[derive(Clone, Copy)]
enum Score<'a> {
    All(&'a Scoring),
    /// Those holding every term within one of the first column sets.
    First(&'a Scoring),
    /// None: the statement counts.
    Omitted,
}

/// A match as ranked: generation, score, index page.
type Ranked = (i64, f64, bool);

/// Reads the matches of a ranking statement in index order, passing each (its generation,
/// its ranking unless the statement left its score out, and what the facets count:
/// origin, MIME type, first and last seen) to `each` until it answers false.
fn read_matches(
    conn: &Connection,
    (sql, values): (String, Vec<Value>),
    docs: Option<&DocValues>,
    mut each: impl FnMut(i64, Option<Ranked>, (i64, Option<i64>, i64, i64)) -> bool,
) -> Result<()> {
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    while let Some(row) = rows.next()? {
        let generation: i64 = row.get(0)?;
        let score: Option<f64> = row.get(1)?;
        let (score, index_page, facets) = match docs {
            Some(docs) => {
                // Not open, or a duplicate (the index is rewritten with them gone; until
                // then the generation table says so).
                let Some(doc) = docs.get(generation) else {
                    continue;
                };
                (
                    score.map(|score| score / (1.0 + doc.indexiness.max(0.0) / INDEX_PAGE_HALF)),
                    doc.indexiness > 0.0,
                    (doc.origin, doc.mimetype, doc.first_seen, doc.last_seen),
                )
            }
            // The SQL's own score, index-page flag and, when it selects them, the facets.
            None if row.as_ref().column_count() > 3 => (
                score,
                row.get(2)?,
                (row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?),
            ),
            None => (score, row.get(2)?, (0, None, 0, 0)),
        };
        let ranked = score.map(|score| (generation, score, index_page));
        if !each(generation, ranked, facets) {
            break;
        }
    }
    Ok(())
}

/// Ranking touches only the index and two small tables; titles, capture counts and
/// snippets are fetched afterwards for the hits that made the cut. With a `tally`, the
/// same pass over the matches counts them for the total and facets (and two more small
/// tables are read per match, as [`facets::overview`] reads them). With `docs`, what is
/// read per match comes from memory instead ([`docvalues`]), in the same order and with
/// the same arithmetic, so the results are the same. At most [`RANKED_CAP`] matches are
/// ranked in index order, then up to [`FIRST_CAP`] each of those holding every term in the
/// title, the URL path and the heaviest columns.
fn ranked(
    conn: &Connection,
    query: &Query,
    page: (usize, usize),
    stop: &Stop,
    docs: Option<&DocValues>,
    tally: Option<&mut facets::Tally>,
) -> Result<Vec<Hit>> {
    Ranking {
        conn,
        query,
        stop,
        docs,
        cap: RANKED_CAP,
        site_driven_max: SITE_DRIVEN_MAX,
    }
    .page(page, tally)
}

/// Counts the matches read for the total and facets, up to [`facets::count_cap`].
struct Counter<'a> {
    tally: Option<&'a mut facets::Tally>,
    cap: usize,
    read: usize,
    /// The last match counted.
    last: Option<i64>,
    /// Whether a match was read past the cap.
    beyond: bool,
}

impl Counter<'_> {
    /// Counts a match; false when it is past the cap (the total is then a lower bound).
    fn count(&mut self, generation: i64, facets: (i64, Option<i64>, i64, i64)) -> bool {
        if let Some(tally) = self.tally.as_deref_mut() {
            tally.add(facets.0, facets.1, facets.2, facets.3);
        }
        if self.read == self.cap {
            self.beyond = true;
            return false;
        }
        self.read += 1;
        self.last = Some(generation);
        true
    }
}

/// A query's ranking: on which connection, with which doc values, ranking how many
/// matches in index order at most.
struct Ranking<'a> {
    conn: &'a Connection,
    query: &'a Query,
    stop: &'a Stop,
    docs: Option<&'a DocValues>,
    cap: usize,
    /// Most generations of a `site:` filter looked up by row id ([`SITE_DRIVEN_MAX`]).
    site_driven_max: usize,
}

impl Ranking<'_> {
    fn page(
        &self,
        (offset, limit): (usize, usize),
        tally: Option<&mut facets::Tally>,
    ) -> Result<Vec<Hit>> {
        let Ranking {
            conn,
            query,
            stop,
            docs,
            cap,
            ..
        } = *self;
        // The rows' sizes that bm25 reads, from memory while this search runs.
        let _row_tokens = docs.map(DocValues::row_tokens_in_use);
        let expression = query.fts_expression();
        let first_cap = cap.min(FIRST_CAP);
        let Some(scoring) = Scoring::of(conn, query, &expression, has_url_path(conn)?, first_cap)?
        else {
            return Ok(Vec::new());
        };
        // A page past the first ranked matches ranks as many in index order as it needs.
        let cap = cap
            .max(offset.saturating_add(limit))
            .min(facets::COUNT_CAP.max(cap));
        // A `site:` whose generations are few: the index is asked for them by row id
        // rather than every match being read to find them (at 1 M pages a common word
        // on a small site read 800,000 matches, over a second).
        let driven = match docs {
            Some(docs) if !query.sites.is_empty() => {
                docs.site_generations(&query.sites, self.site_driven_max)
            }
            _ => None,
        };
        let mut filters = std::borrow::Cow::Borrowed(query);
        let mut rowids = None;
        if let Some(generations) = &driven {
            if generations.is_empty() {
                return Ok(Vec::new());
            }
            filters.to_mut().sites.clear();
            rowids = Some(serde_json::to_string(generations)?);
        }
        let statement = |expression: &str, score: Score, facets: bool, after: Option<i64>| {
            let (mut sql, mut values) =
                ranking_statement(&filters, expression, score, docs.is_some(), facets);
            if let Some(rowids) = &rowids {
                sql.push_str(
                    " AND full_text_entity_index.rowid IN (SELECT value FROM json_each(?))",
                );
                values.push(Value::Text(rowids.clone()));
            }
            if let Some(after) = after {
                sql.push_str(" AND full_text_entity_index.rowid > ?");
                values.push(Value::Integer(after));
            }
            (sql, values)
        };
        let main = statement(&expression, Score::All(&scoring), tally.is_some(), None);
        let mut all: Vec<Ranked> = Vec::new();
        let mut seen: rustc_hash::FxHashSet<i64> = rustc_hash::FxHashSet::default();
        let has_tally = tally.is_some();
        let mut counter = Counter {
            tally,
            cap: facets::count_cap(query),
            read: 0,
            last: None,
            beyond: false,
        };
        // Whether there are matches past the ranked ones.
        let mut more = false;
        read_matches(conn, main, docs, |generation, ranked, facets| {
            if all.len() == cap {
                more = true;
                return false;
            }
            // A phrase's count may end before a deep page's ranking does.
            if !counter.beyond {
                counter.count(generation, facets);
            }
            all.extend(ranked);
            true
        })?;
        if more {
            // The matches ranked so far: those added below are checked against them.
            seen.extend(all.iter().map(|r| r.0));
        }
        // A query with a phrase reads its matches' positions whatever it does with them:
        // one more pass over them counts them and ranks those likeliest to rank first
        // (up to FIRST_CAP each holding every term in the title, the URL path, the
        // heaviest columns), where a pass per set costs two evaluations of the phrase over
        // the whole index (at 1 M pages three quarters of the search of two common words).
        // With the heavy columns' own index the first-ranked matches are found there (a
        // lookup each), and a phrase's matches are read only as far as they are counted.
        let heavy = match &scoring.heavy {
            Some(heavy) if more && driven.is_none() && has_heavy_index(conn)? => Some(heavy),
            _ => None,
        };
        let flagging = heavy.is_none()
            && !scoring.first.is_empty()
            && query.include.iter().any(|t| t.words() > 1);
        // (A deep page's main pass may have counted to the cap itself.)
        let counting_left = has_tally && !counter.beyond;
        if let (true, Some(after), true) = (more, counter.last, counting_left || flagging) {
            let score = if flagging {
                Score::First(&scoring)
            } else {
                Score::Omitted
            };
            let sql = statement(&expression, score, has_tally, Some(after));
            // Every set has its FIRST_CAP once this many are ranked (fewer may do).
            let filled = scoring.first.len() * first_cap;
            let (mut first_ranked, mut examined) = (0, 0);
            read_matches(conn, sql, docs, |generation, ranked, facets| {
                let counting = !counter.beyond && counter.count(generation, facets);
                if let Some(ranked) = ranked
                    && seen.insert(generation)
                {
                    all.push(ranked);
                    first_ranked += 1;
                }
                examined += 1;
                counting || (flagging && first_ranked < filled && examined < PHRASE_EXAMINED_CAP)
            })?;
        }
        if let Some(heavy) = heavy {
            let candidates = heavy_candidates(conn, query, heavy, &seen)?;
            if !candidates.is_empty() {
                let (mut sql, mut values) =
                    statement(&expression, Score::All(&scoring), false, None);
                sql.push_str(
                    " AND full_text_entity_index.rowid IN (SELECT value FROM json_each(?))",
                );
                values.push(Value::Text(serde_json::to_string(&candidates)?));
                read_matches(conn, (sql, values), docs, |generation, ranked, _| {
                    if let Some(ranked) = ranked
                        && seen.insert(generation)
                    {
                        all.push(ranked);
                    }
                    true
                })?;
            }
        } else if more && !flagging {
            // Too many to rank them all: add those likeliest to rank first, the matches
            // holding every term in the title, the URL path, or the heaviest columns.
            for columns in &scoring.first {
                let Some(condition) = query.fts_included_in(columns) else {
                    continue;
                };
                let within = format!("({expression}) AND ({condition})");
                let sql = statement(&within, Score::All(&scoring), false, None);
                let mut taken = 0;
                read_matches(conn, sql, docs, |generation, ranked, _| {
                    if let Some(ranked) = ranked
                        && seen.insert(generation)
                    {
                        all.push(ranked);
                    }
                    taken += 1;
                    taken < first_cap
                })?;
            }
        }
        // As SQLite compares: -0.0 equals 0.0. Ties (equal scores) go to the older
        // generation: stable across runs.
        let order = |a: &Ranked, b: &Ranked| {
            a.1.partial_cmp(&b.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        };
        let end = offset.saturating_add(limit).min(all.len());
        if end < all.len() {
            if end > 0 {
                all.select_nth_unstable_by(end - 1, order);
            }
            all.truncate(end);
        }
        all.sort_unstable_by(order);
        all.drain(..offset.min(all.len()));
        let mut hits = Vec::with_capacity(all.len());
        for (generation, score, index_page) in all {
            if let Some(reason) = stop.reason() {
                return Err(Stopped(reason).into());
            }
            hits.push(hit(
                conn,
                &expression,
                generation,
                score,
                index_page,
                !query.include.is_empty(),
            )?);
        }
        Ok(hits)
    }
}

/// The columns of `sediment_heavy_index` (title, description, big and small headlines, URL
/// path, as `project summary` makes it), as columns of `full_text_entity_index`.
const HEAVY_INDEX_COLUMNS: [usize; 5] = [2, 3, 6, 7, 10];

/// The generations to rank beside the first ones when a query has more matches than are
/// ranked: of the first [`HEAVY_EXAMINED_CAP`] holding every included term in their heavy
/// columns (`sediment_heavy_index`), the [`HEAVY_RANKED_CAP`] not in `seen` that score
/// best by those columns alone (`sediment_rank` with `heavy`, the full score's arithmetic
/// without the other columns' instances), in row id order.
fn heavy_candidates(
    conn: &Connection,
    query: &Query,
    (spec, idf): &(String, Vec<u8>),
    seen: &rustc_hash::FxHashSet<i64>,
) -> Result<Vec<i64>> {
    let Some(expression) =
        query.fts_included_in("{title description big_headlines small_headlines url_path}")
    else {
        return Ok(Vec::new());
    };
    let mut statement = conn.prepare_cached(&format!(
        "SELECT rowid, sediment_rank(sediment_heavy_index, ?, ?)
         FROM sediment_heavy_index WHERE sediment_heavy_index MATCH ? LIMIT {HEAVY_EXAMINED_CAP}"
    ))?;
    let mut scored: Vec<(f64, i64)> = statement
        .query_map(
            params_from_iter([
                Value::Text(spec.clone()),
                Value::Blob(idf.clone()),
                Value::Text(expression),
            ]),
            |r| Ok((r.get(1)?, r.get(0)?)),
        )?
        .filter(|r| r.as_ref().map_or(true, |(_, rowid)| !seen.contains(rowid)))
        .collect::<rusqlite::Result<_>>()?;
    // Scores are negative (as bm25's), the best lowest.
    let order = |a: &(f64, i64), b: &(f64, i64)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    if scored.len() > HEAVY_RANKED_CAP {
        scored.select_nth_unstable_by(HEAVY_RANKED_CAP - 1, order);
        scored.truncate(HEAVY_RANKED_CAP);
    }
    let mut rowids: Vec<i64> = scored.into_iter().map(|(_, rowid)| rowid).collect();
    rowids.sort_unstable();
    Ok(rowids)
}

/// Whether the database has `sediment_heavy_index` (one made before it has not, until the
/// next `project summary` run adds it).
fn has_heavy_index(conn: &Connection) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE name = 'sediment_heavy_index'")?
        .exists([])?)
}

/// Whether the index has the `url_path` column (an index made before it does not, until
/// the next `project summary` run makes it again).
fn has_url_path(conn: &Connection) -> Result<bool> {
    let sql: String = conn
        .prepare_cached("SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'")?
        .query_row([], |r| r.get(0))?;
    Ok(sql.contains("url_path"))
}

/// Columns a snippet is taken from, in order of preference: body text first, the title
/// (which is shown anyway) never.
const SNIPPET_COLUMNS: [i64; 7] = [4, 5, 6, 7, 9, 8, 3];
/// Internal match marks (control characters cannot occur in the indexed text's words).
const MARK_START: char = '\u{2}';
const MARK_END: char = '\u{3}';

fn hit(
    conn: &Connection,
    expression: &str,
    generation: i64,
    score: f64,
    index_page: bool,
    has_terms: bool,
) -> Result<Hit> {
    let mut hit = conn
        .prepare_cached(
            "SELECT url.str_url,
                COALESCE(NULLIF(dd.title, ''), NULLIF(dd.primary_headline, ''), url.str_url),
                eg.first_seen_unix_utc, eg.last_seen_unix_utc,
                (SELECT count(*) FROM crawl_summary cs
                 WHERE cs.entity_generation_id = eg.entity_generation_id),
                eg.entity_generation_uuid
         FROM entity_generation eg
         JOIN url ON url.url_id = eg.url_id
         LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
         WHERE eg.entity_generation_id = ?1",
        )?
        .query_row([generation], |r| {
            let uuid: Vec<u8> = r.get(5)?;
            Ok(Hit {
                url: r.get(0)?,
                title: r.get(1)?,
                snippet: String::new(),
                first_seen: r.get(2)?,
                last_seen: r.get(3)?,
                captures: r.get(4)?,
                score,
                index_page,
                entity_generation_uuid: uuid::Uuid::from_slice(&uuid)
                    .map(|u| u.to_string())
                    .unwrap_or_default(),
                copies: 0,
                copy_urls: Vec::new(),
            })
        })?;
    // Duplicates are left out of the index; their original stands for them.
    let copies: Vec<(String, i64)> = conn
        .prepare_cached(
            "SELECT url.str_url, count(*) OVER ()
             FROM duplicate_summary ds
             JOIN entity_generation d ON d.entity_generation_id = ds.subject_entity_generation_id
             JOIN url ON url.url_id = d.url_id
             WHERE ds.duplicate_of_entity_generation_id = ?1
               AND ds.duplicate_status_end_unix_utc IS NULL
             ORDER BY url.str_url LIMIT ?2",
        )?
        .query_map(rusqlite::params![generation, MAX_COPY_URLS as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    hit.copies = copies.first().map_or(0, |(_, n)| *n);
    hit.copy_urls = copies.into_iter().map(|(url, _)| url).collect();
    // The first column with a match; without terms (or matches), the body text.
    let fallback: String = conn
        .prepare_cached(&format!(
            "SELECT sediment_snippet(full_text_entity_index, ?3, {})
             FROM full_text_entity_index
             WHERE full_text_entity_index MATCH ?1 AND rowid = ?2",
            SNIPPET_COLUMNS.map(|c| c.to_string()).join(", ")
        ))?
        .query_row(rusqlite::params![expression, generation, has_terms], |r| {
            r.get::<_, Option<String>>(0)
        })
        .optional()?
        .flatten()
        .unwrap_or_default();
    hit.snippet = fallback
        .replace(MARK_START, MATCH_START)
        .replace(MARK_END, MATCH_END);
    Ok(hit)
}

/// `site:` values may be written as URLs: `https://www.example.org:8080/x` →
/// (`example.org`, 8080) (a leading `www.` is dropped; subdomains match anyway). A port
/// is kept when written.
fn site_host(site: &str) -> (&str, Option<u16>) {
    let rest = site.split_once("://").map_or(site, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let (host, port) = if authority.starts_with('[') {
        let host = authority.split_inclusive(']').next().unwrap_or(authority);
        (host, authority[host.len()..].strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let host = host
        .strip_prefix("www.")
        .unwrap_or(host)
        .trim_end_matches('.');
    (host, port.and_then(|p| p.parse().ok()))
}

fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query that would run for minutes: a recursive count to ten billion.
    fn endless(conn: &Connection) -> Result<i64> {
        Ok(conn.query_row(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000000)
             SELECT count(*) FROM n",
            [],
            |r| r.get(0),
        )?)
    }

    #[test]
    fn a_stop_interrupts_sqlite_at_its_deadline_and_when_cancelled() {
        let mut conn = Connection::open_in_memory().unwrap();
        let started = Instant::now();
        let stop = Stop {
            deadline: Some(started + std::time::Duration::from_millis(100)),
            cancel: Vec::new(),
        };
        let e = interruptible(&mut conn, &stop, endless).unwrap_err();
        assert!(e.is::<Stopped>(), "{e:#}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // Cancelled from another thread, as a server does when its client goes away.
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Stop {
            deadline: None,
            cancel: vec![cancel.clone()],
        };
        let setter = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            cancel.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let e = interruptible(&mut conn, &stop, endless).unwrap_err();
        setter.join().unwrap();
        assert_eq!(e.to_string(), "the search was stopped: it was cancelled");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // The handler is gone afterwards: the connection works as before.
        let one: i64 = conn.query_row("SELECT 1", [], |r| r.get(0)).unwrap();
        assert_eq!(one, 1);
    }

    #[test]
    fn site_values() {
        assert_eq!(site_host("example.org"), ("example.org", None));
        assert_eq!(site_host("www.example.org."), ("example.org", None));
        assert_eq!(
            site_host("https://www.example.org:8080/x?y"),
            ("example.org", Some(8080))
        );
        assert_eq!(site_host("127.0.0.1:47213"), ("127.0.0.1", Some(47213)));
        assert_eq!(site_host("[::1]:80"), ("[::1]", Some(80)));
        assert_eq!(site_host("[::1]"), ("[::1]", None));
        assert_eq!(like_escape("a_b%c"), "a\\_b\\%c");
    }
}
