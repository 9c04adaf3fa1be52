//! Projection 1: the store's captures as the crawl database of the seed schema
//! ("Crawler schema as of release 3.0"), DDL in `schemas/crawl.sql`, which also documents
//! how captures map to rows and what the values the archives do not record become.
//!
//! Captures are read in URL-then-time order and written in batches, one transaction per
//! batch, through cached prepared statements. HTML bodies are read back from their WARCs
//! and analysed in parallel, once per (payload digest, URL), through a bounded cache.
//! Crawl UUIDs are UUID v5 of the capture key ([`crate::project::identity`], shared with the
//! summary database), so projecting into an existing database adds only the captures it
//! does not hold yet.
//!
//! Healing: a capture whose HTML body could not be read is written with the message
//! `body not read: REASON` in crawl_log. An incremental run takes the captures whose WARC
//! was not found or not readable out again (with their request, file, file_text and
//! redirect rows) and projects them anew, so a run that can read the bodies
//! (`--warc-dir`) gives the database a run from scratch would have.

pub mod agents;
pub mod analysis;
pub mod values;

use std::collections::{HashMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use self::agents::Agents;
use self::analysis::{PageCache, PageFacts, PageKey, analyze_page};
use self::values::{http_date_to_unix, is_crawlable, redirect_target};
use crate::capture::{Capture, CaptureKind};
use crate::key::Sha1Key;
use crate::payload::WarcLocator;
use crate::project::base::{
    BASE_SQL, BaseIds, MediaType, create_base_tables, get_info, open_projection_db, set_info,
};
use crate::project::budget::MemoryBudget;
use crate::project::bulk_load::{UniqueColumn, defer_indexes, shrink_for_index_builds};
use crate::project::checkpoint::BackgroundCheckpoints;
use crate::project::exit_code::{HtmlVerdict, Outcome, exit_code_of, from_status, is_contentful};
use crate::project::identity::{self, IDENTITY_VERSION};
use crate::project::originals::Originals;
use crate::project::source::{BodyReader, Unavailable, for_each_capture, is_html_mime};
use crate::report::Report;
use crate::store::Store;

pub const CRAWL_SQL: &str = include_str!("../../../schemas/crawl.sql");

/// The seed's UNIQUE crawl UUIDs: a fresh database is filled without the constraint
/// (see [`crate::project::bulk_load`]).
const CRAWL_UUID: UniqueColumn = UniqueColumn {
    table: "crawl_log",
    column: "crawl_uuid",
    index: "sqlite_autoindex_crawl_log_1",
    schema: &[BASE_SQL, CRAWL_SQL],
};

/// The seed's crawler schema version, recorded as `unobtanium_crawler_schema_version`.
pub const CRAWLER_SCHEMA_VERSION: &str = "1.0.0";

pub use crate::project::limits::{DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_TEXT_BYTES};
use crate::text::cut_at_char;

/// By default a transaction also ends once it has written this much page text, whatever
/// its number of captures: the pages' text is most of what a crawl database holds, and
/// each commit lets the checkpoint thread copy it into the database file while the run
/// goes on — rather than all of it after the last commit, on one core.
pub const TEXT_BYTES_PER_COMMIT: usize = 16 << 20;

/// How a projection runs.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Directories holding the WARC files named by the captures.
    pub warc_dirs: Vec<PathBuf>,
    /// Threads reading and analysing HTML bodies.
    pub threads: usize,
    /// Bytes of one decoded body read at most (the rest is cut, and counted).
    pub max_body_bytes: usize,
    /// Bytes of one page's text stored in file_text at most (the rest is cut, and counted).
    pub max_text_bytes: usize,
    /// Captures per transaction at most.
    pub batch_size: usize,
    /// Bytes of page text per transaction at most (see [`TEXT_BYTES_PER_COMMIT`]).
    pub text_per_commit: usize,
    /// The memory budget every cache is sized from (`--memory-mb`).
    pub memory: MemoryBudget,
    /// Where the originals of revisits are sorted (next to the database).
    pub spill_dir: PathBuf,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            warc_dirs: Vec::new(),
            threads: 2,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
            batch_size: MemoryBudget::default().prefetch_captures(),
            text_per_commit: TEXT_BYTES_PER_COMMIT,
            memory: MemoryBudget::default(),
            spill_dir: std::env::temp_dir(),
        }
    }
}

/// Opens (creating if needed) a crawl database: base and crawler tables, schema versions.
/// Refuses a database of another kind (e.g. a summary database).
#[cfg(test)]
pub fn open_crawl_db(path: &Path) -> Result<Connection> {
    open_crawl_db_with(path, MemoryBudget::default())
}

/// [`open_crawl_db`] with SQLite's memory sized from `memory`.
pub fn open_crawl_db_with(path: &Path, memory: MemoryBudget) -> Result<Connection> {
    let conn = open_projection_db(path, "crawl", memory)?;
    check_reopened(&conn, path, ("crawl", "crawler"), "crawl_log")?;
    create_crawl_tables(&conn)?;
    // A first run that was interrupted left the constraint out.
    CRAWL_UUID.restore(&conn)?;
    Ok(conn)
}

/// Refuses to continue a database of another kind — `(name, recorded)`: what errors call
/// the expected kind, and the `unobtanium_database_kind` it records — or one whose rows
/// were identified by another derivation of the capture and agent UUIDs (an incremental
/// run would add every capture again); `table` holds its captures.
pub fn check_reopened(
    conn: &Connection,
    path: &Path,
    (name, recorded): (&str, &str),
    table: &str,
) -> Result<()> {
    let has_info: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'unobtanium_database_info'",
        [],
        |r| r.get(0),
    )?;
    if !has_info {
        return Ok(());
    }
    if let Some(kind) = get_info(conn, "unobtanium_database_kind")?
        && kind != recorded
    {
        bail!(
            "{} is a {kind} database, not a {name} database",
            path.display()
        );
    }
    let has_table: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = ?1",
        [table],
        |r| r.get(0),
    )?;
    if !has_table {
        return Ok(());
    }
    let rows: bool =
        conn.query_row(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), [], |r| {
            r.get(0)
        })?;
    let version = get_info(conn, "sediment_identity_version")?;
    if rows && version.as_deref() != Some(IDENTITY_VERSION) {
        bail!(
            "{} was written by an older sediment that identified captures differently; \
             project into a new file",
            path.display()
        );
    }
    Ok(())
}

/// Creates the base and crawler tables (idempotent) and records the schema versions.
pub fn create_crawl_tables(conn: &Connection) -> Result<()> {
    create_base_tables(conn)?;
    conn.execute_batch(CRAWL_SQL)
        .context("cannot create the crawl tables (schemas/crawl.sql)")?;
    set_info(conn, "unobtanium_database_kind", "crawler")?;
    set_info(
        conn,
        "unobtanium_crawler_schema_version",
        CRAWLER_SCHEMA_VERSION,
    )?;
    set_info(conn, "sediment_projection", "crawl")?;
    set_info(conn, "sediment_identity_version", IDENTITY_VERSION)?;
    Ok(())
}

/// Projects every capture of the store into `conn` (see the module documentation).
/// Counts go to `report`.
pub fn project_crawl(
    store: &Store,
    conn: &Connection,
    options: &CrawlOptions,
    report: &Report,
) -> Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .build()
        .context("cannot start the analysis threads")?;
    let already: i64 = conn.query_row("SELECT count(*) FROM crawl_log", [], |r| r.get(0))?;
    if already > 0 {
        let retried = take_out_unread(conn)?;
        if retried > 0 {
            report.count("captures_retried_unread", retried);
        }
    }
    if already == 0 {
        // First: it runs the schema again, which makes every index.
        CRAWL_UUID.load_without(conn)?;
        // The seed's index on URL strings repeats the UNIQUE one of str_url.
        defer_indexes(conn, &["url_string"])?;
    }
    let mut projector = Projector {
        store,
        conn,
        reader: BodyReader::new(WarcLocator::new(&options.warc_dirs), options.max_body_bytes),
        pool: Arc::new(pool),
        pages_ahead: options.threads.max(1) * 4,
        incremental: already > 0,
        max_text_bytes: options.max_text_bytes,
        base: BaseIds::with_limit(options.memory.id_cache_entries()),
        agents: Agents::default(),
        pages: PageCache::new(
            options.memory.page_cache_bytes(),
            options.memory.digest_entries(),
        ),
        originals: Originals::join(
            store,
            options.memory.digest_entries(),
            &options.spill_dir,
            options.memory.sort_run_bytes(),
        )?,
        max_cached_ids: options.memory.small_entries(),
        candidates: HashSet::new(),
        report,
        checkpoints: BackgroundCheckpoints::start(conn)?,
        text_since_commit: 0,
        text_per_commit: options.text_per_commit.max(1),
    };
    // Captures are read a window at a time, several transactions' worth: the file rows of
    // the window's revisits are then read in one ordered pass, which touches each block of
    // the store once where a batch's few digests would each cost a block of their own.
    let batch_size = options.batch_size.max(1);
    let window_size = options.memory.prefetch_captures().max(batch_size);
    let mut window = Vec::with_capacity(window_size);
    let run_window = |projector: &mut Projector, window: &mut Vec<Capture>| -> Result<()> {
        projector
            .originals
            .prefetch(projector.store, window.iter())?;
        for batch in window.chunks(batch_size) {
            projector.run_batch(batch)?;
        }
        window.clear();
        Ok(())
    };
    for_each_capture(store, |capture| {
        window.push(capture);
        if window.len() >= window_size {
            run_window(&mut projector, &mut window)?;
        }
        Ok(())
    })?;
    run_window(&mut projector, &mut window)?;
    // Failed fetches last, a transaction per chunk.
    let mut chunk = Vec::new();
    store.for_each_failed_fetch(|fetch| {
        chunk.push(fetch);
        if chunk.len() >= batch_size {
            projector.write_failed_fetches(&std::mem::take(&mut chunk))?;
        }
        Ok(true)
    })?;
    projector.write_failed_fetches(&chunk)?;
    projector.finish()
}

/// crawl_log.message of a failed fetch.
pub const FAILED_FETCH_MESSAGE: &str = "no response: the archive holds the request only";

/// The prefix of crawl_log.message for a capture whose HTML body was not read.
const UNREAD_MESSAGE: &str = "body not read: ";

/// Deletes the rows of the captures whose body an earlier run could not read because
/// their WARC was not found or not readable (a later run may be given it), so that this
/// run projects them again; returns how many. (Captures without any WARC location and
/// Content-Encodings this build cannot decode would fail again: they stay.) The crawl_candidate rows of their URLs are made again from the captures that
/// stay (in projection order), as if those had been projected alone: the captures
/// projected again then update them as in a run from scratch. One transaction, one pass
/// over each table: the seed has no index by crawl_log_id.
fn take_out_unread(conn: &Connection) -> Result<u64> {
    let work = || -> Result<u64> {
        conn.execute_batch(&format!(
            "CREATE TEMP TABLE IF NOT EXISTS sediment_retry (crawl_log_id INTEGER PRIMARY KEY);
             CREATE TEMP TABLE IF NOT EXISTS sediment_retry_url (url_id INTEGER PRIMARY KEY);
             DELETE FROM sediment_retry;
             DELETE FROM sediment_retry_url;
             INSERT INTO sediment_retry SELECT crawl_log_id FROM crawl_log
                 WHERE message IN ('{UNREAD_MESSAGE}{missing}', '{UNREAD_MESSAGE}{damaged}');",
            missing = Unavailable::WarcMissing.reason(),
            damaged = Unavailable::ReadError(String::new()).reason()
        ))?;
        let n: i64 = conn.query_row("SELECT count(*) FROM sediment_retry", [], |r| r.get(0))?;
        if n == 0 {
            return Ok(0);
        }
        conn.execute_batch(
            "INSERT INTO sediment_retry_url SELECT DISTINCT url_id FROM crawl_log
                 WHERE crawl_log_id IN (SELECT crawl_log_id FROM sediment_retry);
             DELETE FROM file_text WHERE file_id IN (SELECT file_id FROM file
                 WHERE crawl_log_id IN (SELECT crawl_log_id FROM sediment_retry));
             DELETE FROM file WHERE crawl_log_id IN (SELECT crawl_log_id FROM sediment_retry);
             DELETE FROM redirect WHERE crawl_log_id IN (SELECT crawl_log_id FROM sediment_retry);
             DELETE FROM request WHERE crawl_log_id IN (SELECT crawl_log_id FROM sediment_retry);
             DELETE FROM crawl_log WHERE crawl_log_id IN (SELECT crawl_log_id FROM sediment_retry);
             UPDATE crawl_candidate SET last_crawl_time_unix_utc = NULL,
                 last_crawl_exit_code = NULL, last_contentful_crawl_time_unix_utc = NULL,
                 last_contentful_http_etag = NULL
                 WHERE url_id IN (SELECT url_id FROM sediment_retry_url);",
        )?;
        let mut stays = conn.prepare(
            "SELECT c.url_id, c.time_started_unix_utc, c.exit_code, r.http_etag
             FROM crawl_log c LEFT JOIN request r USING (crawl_log_id)
             WHERE c.url_id IN (SELECT url_id FROM sediment_retry_url)
             ORDER BY c.crawl_log_id",
        )?;
        let mut upsert = conn.prepare(UPSERT_CRAWLED)?;
        let mut rows = stays.query([])?;
        while let Some(row) = rows.next()? {
            let (url_id, time, exit): (i64, i64, i64) = (row.get(0)?, row.get(1)?, row.get(2)?);
            let etag: Option<String> = row.get(3)?;
            let contentful = is_contentful(exit);
            upsert.execute(params![
                url_id,
                time,
                exit,
                contentful.then_some(time),
                if contentful { etag } else { None }
            ])?;
        }
        Ok(n as u64)
    };
    conn.execute_batch("BEGIN")?;
    match work() {
        Ok(n) => {
            conn.execute_batch(
                "DELETE FROM sediment_retry; DELETE FROM sediment_retry_url; COMMIT",
            )?;
            Ok(n)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// A page a batch needs analysed: its key, the URL it was fetched from, its Content-Type.
type Need = (PageKey, Url, Option<String>);

struct Planned<'a> {
    capture: &'a Capture,
    uuid: [u8; 16],
    time: i64,
    url: Url,
    outcome: Outcome,
    /// The normalized MIME type (a revisit's from its original when it names none).
    mime: Option<String>,
    is_html: bool,
    /// The analysis the capture needs (content HTML with a payload).
    page: Option<PageKey>,
}

struct Projector<'a> {
    store: &'a Store,
    conn: &'a Connection,
    reader: BodyReader,
    pool: Arc<rayon::ThreadPool>,
    /// Pages analysed at most ahead of the capture being written.
    pages_ahead: usize,
    /// The database held captures before this run: look each one up.
    incremental: bool,
    max_text_bytes: usize,
    base: BaseIds,
    agents: Agents,
    pages: PageCache,
    /// What the store's file rows say of the payloads revisits point at.
    originals: Originals,
    /// url_ids known to have a crawl_candidate row.
    candidates: HashSet<i64>,
    /// The candidates set starts over past this many entries.
    max_cached_ids: usize,
    report: &'a Report,
    checkpoints: BackgroundCheckpoints,
    /// Bytes of page text written in the open transaction.
    text_since_commit: usize,
    text_per_commit: usize,
}

impl Projector<'_> {
    fn run_batch(&mut self, batch: &[Capture]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.conn.execute_batch("BEGIN")?;
        self.write_batch(batch)
            .and_then(|()| self.commit())
            .inspect_err(|_| {
                let _ = self.conn.execute_batch("ROLLBACK");
            })
    }

    /// Commits the open transaction, with the agents' spans so far.
    fn commit(&mut self) -> Result<()> {
        self.agents.flush(self.conn)?;
        self.conn.execute_batch("COMMIT")?;
        self.checkpoints.committed();
        self.report.count("transactions", 1);
        self.text_since_commit = 0;
        Ok(())
    }

    fn plan<'c>(&mut self, capture: &'c Capture) -> Result<Option<Planned<'c>>> {
        let (url, time) = match identity::crawled(capture) {
            Ok(c) => (c.url, c.time),
            Err(skipped) => {
                self.report.count(skipped.counter(), 1);
                return Ok(None);
            }
        };
        let uuid = identity::crawl_uuid(capture);
        if self.incremental
            && self
                .conn
                .prepare_cached("SELECT 1 FROM crawl_log WHERE crawl_uuid = ?1")?
                .query_row([&uuid[..]], |_| Ok(()))
                .optional()?
                .is_some()
        {
            self.report.count("captures_already_present", 1);
            return Ok(None);
        }
        let outcome = from_status(
            capture.status,
            capture.digest.is_some(),
            capture.redirect.is_some(),
        );
        let mime = self.originals.mime_of(capture);
        let is_html = is_html_mime(mime.as_deref());
        let page = match (outcome, is_html, &capture.digest) {
            (Outcome::Content, true, Some(digest)) => Some((*digest, url.as_str().to_string())),
            _ => None,
        };
        Ok(Some(Planned {
            capture,
            uuid,
            time,
            url,
            outcome,
            mime,
            is_html,
            page,
        }))
    }

    fn write_batch(&mut self, batch: &[Capture]) -> Result<()> {
        self.originals.prefetch(self.store, batch)?;
        let mut planned = Vec::with_capacity(batch.len());
        for capture in batch {
            self.report.progress().inc(1);
            self.report.count("captures", 1);
            if let Some(p) = self.plan(capture)? {
                planned.push(p);
            }
        }
        // The analyses this batch needs, in first-use order, each once, and the capture
        // that first needs each.
        let mut needs: Vec<Need> = Vec::new();
        let mut needed_at: Vec<usize> = Vec::new();
        let mut needed = HashSet::new();
        for (i, p) in planned.iter().enumerate() {
            if let Some(page) = &p.page
                && self.pages.get(page).is_none()
                && needed.insert(page.clone())
            {
                needs.push((page.clone(), p.url.clone(), p.capture.content_type.clone()));
                needed_at.push(i);
            }
        }
        // The pages are analysed on the pool, at most `pages_ahead` ahead of the capture that
        // first needs each, while this thread writes the captures in order (SQLite takes
        // one writer). Each page is a task of its own: a batch of tasks waiting for its
        // slowest page would leave the other cores idle.
        let window = self.pages_ahead.max(1);
        let (store, reader, pool) = (self.store, self.reader.clone(), self.pool.clone());
        let (needs, reader) = (&needs, &reader);
        pool.in_place_scope(|scope| -> Result<()> {
            let (done, finished) = mpsc::channel();
            let analyse = |j: usize| {
                let done = done.clone();
                scope.spawn(move |_| {
                    let (key, url, content_type) = &needs[j];
                    // A panic goes to the writing thread, which would otherwise wait for
                    // this page forever.
                    let result = panic::catch_unwind(AssertUnwindSafe(|| {
                        analyze_page(store, reader, &key.0, url, content_type.as_deref())
                    }));
                    // The receiver is gone only when the writing stopped on an error.
                    let _ = done.send((j, result));
                });
            };
            let mut spawned = needs.len().min(window);
            (0..spawned).for_each(analyse);
            let mut arrived = HashMap::new();
            let mut next_need = 0;
            for (i, p) in planned.iter().enumerate() {
                if needed_at.get(next_need) == Some(&i) {
                    let result = loop {
                        if let Some(result) = arrived.remove(&next_need) {
                            break result;
                        }
                        let (j, result) = finished
                            .recv()
                            .expect("a sender lives as long as this loop");
                        arrived.insert(j, result);
                    };
                    let result = result.unwrap_or_else(|p| panic::resume_unwind(p))?;
                    self.count_analysis(&result);
                    self.pages
                        .insert(needs[next_need].0.clone(), result.map(Arc::new));
                    next_need += 1;
                    if spawned < needs.len() {
                        analyse(spawned);
                        spawned += 1;
                    }
                }
                let page = match &p.page {
                    None => None,
                    Some(key) => Some(self.page(key, p)?),
                };
                self.write_capture(p, page)?;
                if self.text_since_commit >= self.text_per_commit {
                    self.commit()?;
                    self.conn.execute_batch("BEGIN")?;
                }
            }
            Ok(())
        })
    }

    /// The analysis of a page: from the cache, else (evicted before use, when the pages
    /// analysed ahead outgrow the cache) analysed alone.
    fn page(&mut self, key: &PageKey, p: &Planned) -> Result<Result<Arc<PageFacts>, Unavailable>> {
        if let Some(found) = self.pages.get(key) {
            return Ok(found);
        }
        let result = analyze_page(
            self.store,
            &self.reader,
            &key.0,
            &p.url,
            p.capture.content_type.as_deref(),
        )?;
        self.count_analysis(&result);
        Ok(result.map(Arc::new))
    }

    fn count_analysis(&self, result: &Result<PageFacts, Unavailable>) {
        match result {
            Ok(page) => {
                self.report.count("html_parsed", 1);
                for counter in page.cuts.counters() {
                    self.report.count(counter, 1);
                }
            }
            Err(why) => self
                .report
                .count(&format!("bodies_unavailable_{}", why.reason()), 1),
        }
    }

    fn write_capture(
        &mut self,
        p: &Planned,
        page: Option<Result<Arc<PageFacts>, Unavailable>>,
    ) -> Result<()> {
        let c = p.capture;
        let conn = self.conn;
        let agent = self.agents.agent_for(conn, self.store, c, p.time)?;
        let url_id = self.base.url_id(conn, &p.url)?;
        let page_facts = page.as_ref().and_then(|r| r.as_ref().ok());
        // A document with text (HTML, PDF, text…) is ingested, as the summary counts it.
        let has_text = identity::crawl_type(&p.url) != 1
            && crate::doctext::kind_of(p.mime.as_deref()).is_some();
        let exit = exit_code_of(
            c,
            has_text,
            page_facts.map(|f| HtmlVerdict {
                noindex: f.signals.noindex,
                canonical_elsewhere: f.signals.canonical_elsewhere(&p.url),
            }),
        );
        let message = match &page {
            Some(Err(why)) => Some(format!("{UNREAD_MESSAGE}{}", why.reason())),
            _ => None,
        };
        let crawl_type = identity::crawl_type(&p.url);
        conn.prepare_cached(
            "INSERT INTO crawl_log (agent_id, url_id, crawl_type, crawl_uuid,
             time_started_unix_utc, time_taken_ms, exit_code, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            agent.id,
            url_id,
            crawl_type,
            &p.uuid[..],
            p.time,
            time_taken_ms(c),
            exit,
            message
        ])?;
        let crawl_log_id = conn.last_insert_rowid();
        let last_modified = c.last_modified.as_deref().and_then(http_date_to_unix);
        conn.prepare_cached(
            "INSERT INTO request (crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,
             robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code,
             http_etag) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![
            crawl_log_id,
            url_id,
            p.time,
            request_duration_ms(c),
            agent.robots_approved,
            exit,
            last_modified,
            c.status,
            c.etag
        ])?;
        let request_id = conn.last_insert_rowid();
        self.report.count("crawl_log_rows", 1);

        if let (Outcome::Content, Some(digest)) = (p.outcome, &c.digest) {
            self.write_file(
                p,
                digest,
                crawl_log_id,
                request_id,
                url_id,
                last_modified,
                &page,
            )?;
        }
        if matches!(c.status, Some(300..=399))
            && let Some(raw) = c.redirect.as_deref()
        {
            match redirect_target(raw, &p.url) {
                Some(target) => {
                    let redirect = Redirect {
                        crawl_log_id,
                        request_id,
                        url_id,
                        last_modified,
                        information_source: RESPONSE_HEADER,
                        is_permanent: matches!(c.status, Some(301 | 308)),
                    };
                    self.write_redirect(&redirect, &target)?;
                    self.report.count("redirects", 1);
                }
                None => self.report.count("redirects_unresolvable", 1),
            }
        }
        if let Some(target) = page_facts.and_then(|f| f.signals.refresh.as_ref()) {
            let redirect = Redirect {
                crawl_log_id,
                request_id,
                url_id,
                last_modified,
                information_source: FILE_BODY,
                is_permanent: false,
            };
            self.write_redirect(&redirect, target)?;
            self.report.count("redirects_meta_refresh", 1);
        }
        if is_crawlable(&p.url) {
            let contentful = is_contentful(exit);
            conn.prepare_cached(UPSERT_CRAWLED)?.execute(params![
                url_id,
                p.time,
                exit,
                contentful.then_some(p.time),
                if contentful { c.etag.as_deref() } else { None }
            ])?;
            self.remember_candidate(url_id);
        }
        if let Some(facts) = page_facts {
            for link in facts.links.iter().chain(facts.signals.canonical.iter()) {
                if is_crawlable(link) {
                    let id = self.base.url_id(conn, link)?;
                    self.discovered(id)?;
                }
            }
        }
        Ok(())
    }

    /// Failed fetches (request records without response), in one transaction.
    fn write_failed_fetches(&mut self, fetches: &[Capture]) -> Result<()> {
        if fetches.is_empty() {
            return Ok(());
        }
        self.conn.execute_batch("BEGIN")?;
        let written = fetches
            .iter()
            .try_for_each(|fetch| self.write_failed_fetch(fetch))
            .and_then(|()| self.commit());
        written.inspect_err(|_| {
            let _ = self.conn.execute_batch("ROLLBACK");
        })
    }

    /// A crawl_log and a request row of a fetch that got no response: exit code 102
    /// (error_reading_response), no HTTP status.
    fn write_failed_fetch(&mut self, fetch: &Capture) -> Result<()> {
        let (url, time) = match identity::crawled(fetch) {
            Ok(c) => (c.url, c.time),
            Err(skipped) => {
                self.report.count(skipped.counter(), 1);
                return Ok(());
            }
        };
        let uuid = identity::crawl_uuid(fetch);
        let conn = self.conn;
        if self.incremental
            && conn
                .prepare_cached("SELECT 1 FROM crawl_log WHERE crawl_uuid = ?1")?
                .query_row([&uuid[..]], |_| Ok(()))
                .optional()?
                .is_some()
        {
            self.report.count("failed_fetches_already_present", 1);
            return Ok(());
        }
        let exit = crate::project::exit_code::ERROR_READING_RESPONSE;
        let agent = self.agents.agent_for(conn, self.store, fetch, time)?;
        let url_id = self.base.url_id(conn, &url)?;
        conn.prepare_cached(
            "INSERT INTO crawl_log (agent_id, url_id, crawl_type, crawl_uuid,
             time_started_unix_utc, time_taken_ms, exit_code, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            agent.id,
            url_id,
            identity::crawl_type(&url),
            &uuid[..],
            time,
            time_taken_ms(fetch),
            exit,
            FAILED_FETCH_MESSAGE
        ])?;
        let crawl_log_id = conn.last_insert_rowid();
        conn.prepare_cached(
            "INSERT INTO request (crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,
             robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code,
             http_etag) VALUES (?1, ?2, ?3, NULL, ?4, ?5, NULL, NULL, NULL)",
        )?
        .execute(params![
            crawl_log_id,
            url_id,
            time,
            agent.robots_approved,
            exit
        ])?;
        if is_crawlable(&url) {
            conn.prepare_cached(UPSERT_CRAWLED)?.execute(params![
                url_id,
                time,
                exit,
                None::<i64>,
                None::<&str>
            ])?;
            self.remember_candidate(url_id);
        }
        self.report.count("failed_fetches", 1);
        self.report.count("crawl_log_rows", 1);
        Ok(())
    }

    /// A redirect row; its target becomes a crawl candidate.
    fn write_redirect(&mut self, r: &Redirect, target: &Url) -> Result<()> {
        let conn = self.conn;
        let to_url_id = self.base.url_id(conn, target)?;
        conn.prepare_cached(
            "INSERT INTO redirect (crawl_log_id, request_id, url_id,
             last_modified_unix_utc, to_url_id, information_source, is_permanent,
             by_security_policy, to_url_fragment)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8)",
        )?
        .execute(params![
            r.crawl_log_id,
            r.request_id,
            r.url_id,
            r.last_modified,
            to_url_id,
            r.information_source,
            r.is_permanent,
            target.fragment()
        ])?;
        if is_crawlable(target) {
            self.discovered(to_url_id)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn write_file(
        &mut self,
        p: &Planned,
        digest: &Sha1Key,
        crawl_log_id: i64,
        request_id: i64,
        url_id: i64,
        last_modified: Option<i64>,
        page: &Option<Result<Arc<PageFacts>, Unavailable>>,
    ) -> Result<()> {
        let c = p.capture;
        let conn = self.conn;
        let mimetype_id = match file_media_type(c.content_type.as_deref(), p.mime.as_deref()) {
            Some(raw) => self.base.mimetype_id(conn, &raw)?,
            None => None,
        };
        let mimetype_id = match mimetype_id {
            Some(id) => id,
            None => self
                .base
                .mimetype_id(conn, "application/octet-stream")?
                .context("application/octet-stream is a media type")?,
        };
        let size = match (c.kind, c.size) {
            (_, Some(size)) => Some(size),
            (CaptureKind::Revisit, None) => self.originals.get(digest).and_then(|o| o.size),
            _ => None,
        };
        let canonical_url_id = match page {
            Some(Ok(facts)) => match &facts.signals.canonical {
                Some(canonical) => Some(self.base.url_id(conn, canonical)?),
                None => None,
            },
            _ => None,
        };
        conn.prepare_cached(
            "INSERT INTO file (crawl_log_id, request_id, url_id, last_modified_unix_utc,
             file_size, mimetype_id, canonical_url_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            crawl_log_id,
            request_id,
            url_id,
            last_modified,
            size.map(|s| s as i64),
            mimetype_id,
            canonical_url_id
        ])?;
        let file_id = conn.last_insert_rowid();
        self.report.count("files", 1);
        match page {
            Some(Ok(facts)) => {
                let text = cut_at_char(&facts.text, self.max_text_bytes);
                if text.len() < facts.text.len() {
                    self.report.count("file_texts_cut_at_max_text_bytes", 1);
                }
                conn.prepare_cached("INSERT INTO file_text (file_id, text) VALUES (?1, ?2)")?
                    .execute(params![file_id, text])?;
                self.text_since_commit += text.len();
                self.report.count("file_texts", 1);
            }
            Some(Err(why)) => self
                .report
                .count(&format!("file_texts_missing_{}", why.reason()), 1),
            None if p.is_html => self.report.count("file_texts_missing_no_payload", 1),
            None => {}
        }
        Ok(())
    }

    /// A URL seen as a link, canonical or redirect target becomes a crawl candidate.
    fn discovered(&mut self, url_id: i64) -> Result<()> {
        if self.candidates.contains(&url_id) {
            return Ok(());
        }
        self.conn
            .prepare_cached("INSERT OR IGNORE INTO crawl_candidate (url_id) VALUES (?1)")?
            .execute([url_id])?;
        self.remember_candidate(url_id);
        Ok(())
    }

    /// Notes that the URL has a crawl_candidate row, in a set that starts over past its
    /// bound (every crawled URL went into it unbounded: 28 MB at 3 M captures).
    fn remember_candidate(&mut self, url_id: i64) {
        if self.candidates.len() >= self.max_cached_ids {
            self.candidates.clear();
        }
        self.candidates.insert(url_id);
    }

    fn finish(mut self) -> Result<()> {
        // The indexes a fresh database was filled without, built once the caches are
        // given back (see `shrink_for_index_builds`).
        self.base = BaseIds::with_limit(1);
        self.pages = PageCache::new(0, 1);
        self.originals = Originals::with_limit(1);
        self.candidates = HashSet::new();
        shrink_for_index_builds(self.conn)?;
        create_crawl_tables(self.conn)?;
        CRAWL_UUID.restore(self.conn)?;
        self.checkpoints.committed();
        let count = |table: &str| -> Result<i64> {
            Ok(self
                .conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?)
        };
        self.report
            .count("db_crawl_candidates", count("crawl_candidate")? as u64);
        self.report.count("db_agents", count("agent")? as u64);
        self.report.count("db_urls", count("url")? as u64);
        self.checkpoints.finish(self.conn)
    }
}

/// Records the latest crawl (and latest contentful crawl) of a URL; older captures
/// projected later (incremental runs) do not overwrite newer ones. On equal times the
/// later-projected capture wins. SQLite evaluates every SET expression on the old row.
const UPSERT_CRAWLED: &str = "
    INSERT INTO crawl_candidate (url_id, last_crawl_time_unix_utc, last_crawl_exit_code,
        last_contentful_crawl_time_unix_utc, last_contentful_http_etag)
    VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (url_id) DO UPDATE SET
        last_crawl_time_unix_utc = CASE
            WHEN last_crawl_time_unix_utc IS NULL
              OR excluded.last_crawl_time_unix_utc >= last_crawl_time_unix_utc
            THEN excluded.last_crawl_time_unix_utc ELSE last_crawl_time_unix_utc END,
        last_crawl_exit_code = CASE
            WHEN last_crawl_time_unix_utc IS NULL
              OR excluded.last_crawl_time_unix_utc >= last_crawl_time_unix_utc
            THEN excluded.last_crawl_exit_code ELSE last_crawl_exit_code END,
        last_contentful_crawl_time_unix_utc = CASE
            WHEN excluded.last_contentful_crawl_time_unix_utc IS NOT NULL
             AND (last_contentful_crawl_time_unix_utc IS NULL
              OR excluded.last_contentful_crawl_time_unix_utc >= last_contentful_crawl_time_unix_utc)
            THEN excluded.last_contentful_crawl_time_unix_utc
            ELSE last_contentful_crawl_time_unix_utc END,
        last_contentful_http_etag = CASE
            WHEN excluded.last_contentful_crawl_time_unix_utc IS NOT NULL
             AND (last_contentful_crawl_time_unix_utc IS NULL
              OR excluded.last_contentful_crawl_time_unix_utc >= last_contentful_crawl_time_unix_utc)
            THEN excluded.last_contentful_http_etag ELSE last_contentful_http_etag END";

/// The media type of a file row: the Content-Type as sent (with its parameters), else the
/// normalized MIME type; `None` when neither is a media type (e.g. `warc/revisit` in CDX).
fn file_media_type(content_type: Option<&str>, mime: Option<&str>) -> Option<String> {
    let usable = |raw: &str| {
        MediaType::parse(raw).filter(|m| {
            let essence = m.essence();
            essence != "warc/revisit" && essence != "application/x-unknown"
        })
    };
    content_type
        .and_then(usable)
        .or_else(|| mime.and_then(usable))
        .map(|m| m.canonical())
}

/// redirect.information_source values (seed): the Location header, the page's body.
const RESPONSE_HEADER: i64 = 1;
const FILE_BODY: i64 = 3;

/// The values of one redirect row besides its target.
struct Redirect {
    crawl_log_id: i64,
    request_id: i64,
    url_id: i64,
    last_modified: Option<i64>,
    information_source: i64,
    is_permanent: bool,
}

/// crawl_log.time_taken_ms (NOT NULL in the seed): the fetch duration the archive records
/// (Heritrix's `fetchTimeMs`), else 0, which stands for "not recorded" (wget and CDX files
/// record no duration).
fn time_taken_ms(capture: &Capture) -> i64 {
    capture
        .fetch_ms
        .map_or(0, |ms| ms.min(i64::MAX as u64) as i64)
}

/// request.request_duration_ms: the recorded fetch duration, else NULL (the seed allows it).
fn request_duration_ms(capture: &Capture) -> Option<i64> {
    capture.fetch_ms.map(|ms| ms.min(i64::MAX as u64) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_of_files() {
        assert_eq!(
            file_media_type(Some("text/HTML; charset=UTF-8"), Some("text/html")).as_deref(),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(
            file_media_type(Some("warc/revisit"), Some("text/html")).as_deref(),
            Some("text/html")
        );
        assert_eq!(file_media_type(None, None), None);
        assert_eq!(file_media_type(Some("unk"), None), None);
    }

    #[test]
    fn schema_creation_is_idempotent_and_refuses_other_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.db");
        drop(open_crawl_db(&path).unwrap());
        let conn = open_crawl_db(&path).unwrap();
        assert_eq!(
            get_info(&conn, "unobtanium_database_kind")
                .unwrap()
                .as_deref(),
            Some("crawler")
        );
        set_info(&conn, "unobtanium_database_kind", "summary").unwrap();
        drop(conn);
        let err = open_crawl_db(&path).unwrap_err().to_string();
        assert!(err.contains("summary database"), "{err}");
    }

    #[test]
    fn databases_with_other_capture_uuids_are_not_continued() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.db");
        let conn = open_crawl_db(&path).unwrap();
        conn.execute_batch(
            "INSERT INTO origin (scheme, str_origin) VALUES ('http', 'http://x');
             INSERT INTO url (origin_id, str_url) VALUES (1, 'http://x/');
             INSERT INTO agent (time_started_unix_utc, agent_uuid, name)
                 VALUES (0, zeroblob(16), 'a');
             INSERT INTO crawl_log (agent_id, url_id, crawl_type, crawl_uuid,
                 time_started_unix_utc, time_taken_ms, exit_code)
                 VALUES (1, 1, 0, zeroblob(16), 0, 0, 20);",
        )
        .unwrap();
        drop(conn);
        drop(open_crawl_db(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        set_info(&conn, "sediment_identity_version", "1").unwrap();
        drop(conn);
        let err = open_crawl_db(&path).unwrap_err().to_string();
        assert!(err.contains("identified captures differently"), "{err}");
    }
}
