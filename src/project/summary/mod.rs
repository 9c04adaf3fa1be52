//! Projection 2: the summary database (DDL in `schemas/summary.sql`).
//!
//! Every capture of the store, walked URL by URL in time order, becomes a crawl summary
//! attached to an entity generation (one version of one URL, see [`generations`]). HTML
//! payloads are read back from their WARCs and analysed once per digest ([`payloads`]);
//! their text piles are stored once per BLAKE2b-512 digest, their links and descriptions
//! per generation ([`rows`]). At the end of a run, duplicates across URLs, the full-text
//! search rows and the token statistics are brought up to date for what the run changed
//! ([`index`]).
//!
//! Incremental: a URL none of whose captures is new is skipped without reading anything.
//! A URL with new captures gets its generations planned again from all its captures (old
//! payloads are known from `summary_payload`, so nothing is read twice) and reconciled with
//! the stored ones: kept rows are extended or closed, new ones inserted, and only their
//! search rows, duplicates and tokens are touched. Work is committed per batch of URLs, and
//! what the end of the run must still do is recorded in the same transactions
//! (`summary_work`), so an interrupted run is completed by running it again.
//!
//! Healing: an HTML payload whose body could not be read (its WARC not found, say) is
//! summarized by payload digest and remembered in `sediment_unread_payload`; a later run
//! summarizes every URL with such a capture again, whether or not it has new captures, so
//! a run that can read the body (`--warc-dir`) gives the database a run from scratch
//! would have. Rows go once their payload has a text pile.

pub mod duplicates;
pub mod generations;
pub mod index;
pub mod keys;
pub mod payloads;
pub mod rows;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension};
use url::Url;

use crate::capture::Capture;
use crate::doctext::Kind;
use crate::doctext::pdf::{PdfLimits, PdfReader};
use crate::key::Sha1Key;
use crate::payload::WarcLocator;
use crate::project::base::{BASE_SQL, BaseIds, create_base_tables, open_projection_db, set_info};
use crate::project::budget::MemoryBudget;
use crate::project::bulk_load::{UniqueColumn, defer_indexes, shrink_for_index_builds};
use crate::project::checkpoint::BackgroundCheckpoints;
use crate::project::crawl::check_reopened;
use crate::project::crawl::values::http_date_to_unix;
use crate::project::exit_code::{HtmlVerdict, exit_code_of};
use crate::project::identity::{self, AgentResolver, IDENTITY_VERSION};
use crate::project::limits::PageLimits;
use crate::project::originals::Originals;
use crate::project::source::{BodyReader, for_each_capture, is_html_mime};
use crate::report::{Counts, Report};
use crate::store::Store;

use generations::{Observation, StoredGeneration, plan, reconcile};
use keys::{CaptureClass, ContentKey, classify};
use payloads::{
    AnalysisCache, AnalysisResult, Fifo, Job, Pages, PileRef, analyse, analyse_all, store_pile,
    stored_pile,
};
use rows::{CrawlRow, NewGeneration, WORK_DUPLICATES, WORK_SEARCH_ROW, WORK_TOKENS, add_work};

pub const SUMMARY_SQL: &str = include_str!("../../../schemas/summary.sql");
/// The seed's summary schema version, recorded as `unobtanium_summary_schema_version`.
pub const SUMMARY_SCHEMA_VERSION: &str = "0.0.0";
/// The version of sediment's additions, recorded as `sediment_summary_schema`.
pub const SEDIMENT_SUMMARY_SCHEMA: &str = "sediment-summary-4";

/// The seed's UNIQUE generation UUIDs: a fresh database is filled without the constraint
/// (see [`crate::project::bulk_load`]).
const GENERATION_UUID: UniqueColumn = UniqueColumn {
    table: "entity_generation",
    column: "entity_generation_uuid",
    index: "sqlite_autoindex_entity_generation_1",
    schema: &[BASE_SQL, SUMMARY_SQL],
};

/// How a summarizing run reads the store.
#[derive(Debug, Clone)]
pub struct SummaryOptions {
    /// Directories holding the WARC files named by the stored locations.
    pub warc_dirs: Vec<PathBuf>,
    /// How much of one page's body is read and of its text kept.
    pub limits: PageLimits,
    /// Captures per batch (one transaction, one round of parallel analysis).
    pub batch_captures: usize,
    /// The memory budget every cache is sized from (`--memory-mb`).
    pub memory: MemoryBudget,
    /// Where the originals of revisits are sorted (next to the database).
    pub spill_dir: PathBuf,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            warc_dirs: Vec::new(),
            limits: PageLimits::default(),
            batch_captures: MemoryBudget::default().prefetch_captures() / 2,
            memory: MemoryBudget::default(),
            spill_dir: std::env::temp_dir(),
        }
    }
}

/// [`open_database`] with SQLite's memory sized from `memory`.
pub fn open_database_with(path: &Path, memory: MemoryBudget) -> Result<Connection> {
    let conn = open_projection_db(path, "summary", memory)?;
    check_reopened(&conn, path, ("summary", "summary"), "crawl_summary")?;
    create_base_tables(&conn)?;
    add_text_source(&conn)?;
    conn.execute_batch(SUMMARY_SQL)
        .context("cannot create the summary tables (schemas/summary.sql)")?;
    remake_search_index_without_url_path(&conn)?;
    add_heavy_index(&conn)?;
    // A first run that was interrupted left the constraint out.
    GENERATION_UUID.restore(&conn)?;
    set_info(&conn, "unobtanium_database_kind", "summary")?;
    set_info(
        &conn,
        "unobtanium_summary_schema_version",
        SUMMARY_SCHEMA_VERSION,
    )?;
    set_info(&conn, "sediment_summary_schema", SEDIMENT_SUMMARY_SCHEMA)?;
    set_info(&conn, "sediment_identity_version", IDENTITY_VERSION)?;
    conn.execute_batch(UNREAD_SQL)
        .context("cannot create sediment_unread_payload")?;
    Ok(conn)
}

/// A database made before the search index had its `url_path` column (FTS5 tables cannot
/// gain one): the index is made again, empty, and every generation it may hold is put on the
/// work list, in one transaction, so the end of this run writes all the rows.
fn remake_search_index_without_url_path(conn: &Connection) -> Result<()> {
    let sql: Option<String> = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if sql.is_none_or(|sql| sql.contains("url_path")) {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(
        "DROP TABLE full_text_entity_index; DROP TABLE IF EXISTS sediment_heavy_index;
         DROP VIEW IF EXISTS sediment_heavy_text;",
    )?;
    tx.execute_batch(SUMMARY_SQL)
        .context("cannot create the summary tables (schemas/summary.sql)")?;
    tx.execute(
        "INSERT OR IGNORE INTO summary_work (kind, id)
         SELECT ?1, entity_generation_id FROM entity_generation
         WHERE confirmed_end_unix_utc IS NULL AND marked_duplicate = 0",
        [WORK_SEARCH_ROW],
    )?;
    tx.commit()?;
    Ok(())
}

/// sediment's own search index of each search row's heaviest columns (title, description,
/// headlines, URL path; not in the seed): a query with more matches than are ranked finds
/// those holding its terms there in this small index, rather than by reading on through
/// every match of the full one (at 1 M pages most of a common word's or a phrase's search,
/// issue 37). Its content is the search index's own, read through a view of that index's
/// content table (FTS5 names its columns `c0`…, in the order of the index's columns; an
/// FTS5 table cannot be the content of another directly), so nothing is stored twice.
/// Rows are written and deleted with the search index's, a deletion here first: FTS5 is
/// given the row's old text, which the search index still holds.
pub(crate) const HEAVY_INDEX_SQL: &str = "
CREATE VIEW sediment_heavy_text (rowid_, title, description, big_headlines, small_headlines,
    url_path) AS SELECT id, c2, c3, c6, c7, c10 FROM full_text_entity_index_content;
CREATE VIRTUAL TABLE sediment_heavy_index USING fts5(
    title, description, big_headlines, small_headlines, url_path,
    content='sediment_heavy_text', content_rowid='rowid_', tokenize='porter unicode61'
);";

/// The columns of `full_text_entity_index` that `sediment_heavy_index` holds, in its order.
pub(crate) const HEAVY_COLUMNS: &str =
    "title, description, big_headlines, small_headlines, url_path";

/// Removes the search rows `rowids` (an SQL expression giving row ids, with `?1`) from
/// `sediment_heavy_index`; before they leave `full_text_entity_index`, which holds their
/// text.
pub(crate) fn delete_heavy_rows(conn: &Connection, rowids: &str, param: i64) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO sediment_heavy_index (sediment_heavy_index, rowid, {HEAVY_COLUMNS})
         SELECT 'delete', rowid, {HEAVY_COLUMNS} FROM full_text_entity_index
         WHERE rowid IN ({rowids})"
    ))?
    .execute([param])?;
    Ok(())
}

/// A database made before `sediment_heavy_index` (sediment-summary-4) gets it, built from
/// the search index's rows in the same transaction.
fn add_heavy_index(conn: &Connection) -> Result<()> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'sediment_heavy_index')",
        [],
        |r| r.get(0),
    )?;
    if exists {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(HEAVY_INDEX_SQL)
        .context("cannot create sediment_heavy_index")?;
    tx.execute(
        "INSERT INTO sediment_heavy_index (sediment_heavy_index) VALUES ('rebuild')",
        [],
    )?;
    tx.commit()?;
    Ok(())
}

/// A database made before `summary_payload.text_source` (sediment-summary-2) gets the
/// column; its rows were all made from HTML, the column's default.
fn add_text_source(conn: &Connection) -> Result<()> {
    let (table, column): (bool, bool) = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'summary_payload'),
                EXISTS (SELECT 1 FROM pragma_table_info('summary_payload')
                        WHERE name = 'text_source')",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if table && !column {
        conn.execute_batch(&format!(
            "ALTER TABLE summary_payload ADD COLUMN {TEXT_SOURCE_COLUMN}"
        ))
        .context("cannot add summary_payload.text_source")?;
    }
    Ok(())
}

/// The definition of `summary_payload.text_source`, as in schemas/summary.sql.
const TEXT_SOURCE_COLUMN: &str = "text_source TEXT NOT NULL DEFAULT 'html'";

/// sediment's own side table (not in the seed): the HTML payloads whose body a run could
/// not read, for the reasons a later run may overcome; see the module documentation.
const UNREAD_SQL: &str = "CREATE TABLE IF NOT EXISTS sediment_unread_payload (
    payload_sha1 BLOB NOT NULL PRIMARY KEY,
    -- why the body was not read: warc_not_found, no_warc_location or warc_read_error
    reason TEXT NOT NULL,
    CHECK (length(payload_sha1) = 20)
) WITHOUT ROWID;";

/// Whether a later run may read a body this one could not: the WARC may be given with
/// `--warc-dir`, imported (a capture learned from CDX gets a location), or mended. A
/// Content-Encoding this build cannot decode stays unreadable.
fn may_heal(unavailable: &crate::project::source::Unavailable) -> bool {
    use crate::project::source::Unavailable;
    !matches!(unavailable, Unavailable::UnsupportedEncoding(_))
}

/// Summarizes the store into the database at `db_path`; counts go to `report`.
pub fn summarize(
    store: &Store,
    db_path: &Path,
    options: &SummaryOptions,
    report: &Report,
) -> Result<()> {
    let memory = options.memory;
    let conn = open_database_with(db_path, memory)?;
    let checkpoints = BackgroundCheckpoints::start(&conn)?;
    let search_was_empty: bool = conn.query_row(
        "SELECT NOT EXISTS (SELECT 1 FROM full_text_entity_index)",
        [],
        |r| r.get(0),
    )?;
    let fresh: bool =
        conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM crawl_summary)", [], |r| {
            r.get(0)
        })?;
    if fresh {
        // First: it runs the schema again, which makes every index.
        GENERATION_UUID.load_without(&conn)?;
        // Looked up by the UNIQUE indexes on the same keys, or not at all (a URL's crawl
        // UUIDs are read through its generations).
        defer_indexes(
            &conn,
            &[
                "url_string",
                "entity_generation_by_uuid",
                "crawl_summary_by_crawl_uuid",
                // Keyed by link target: every page's links land all over them.
                "link_summary_by_link_to_url",
                "redirect_summary_by_to_url",
            ],
        )?;
    }
    let heal_pending: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sediment_unread_payload)",
        [],
        |r| r.get(0),
    )?;
    let mut summarizer = Summarizer {
        store,
        conn,
        pages: Pages {
            bodies: BodyReader::new(
                WarcLocator::new(&options.warc_dirs),
                options.limits.max_body_bytes,
            ),
            max_text_bytes: options.limits.max_text_bytes,
            pdf: PdfReader::new(PdfLimits::default()),
        },
        ids: BaseIds::with_limit(memory.id_cache_entries()),
        analyses: Fifo::with_byte_limit(memory.analyses(), memory.page_cache_bytes()),
        round: HashMap::new(),
        retired: Vec::new(),
        piles: Fifo::new(memory.small_entries()),
        unavailable: HashSet::new(),
        max_unavailable: memory.small_entries(),
        token_cache: memory.id_cache_entries(),
        originals: Originals::join(
            store,
            memory.digest_entries(),
            &options.spill_dir,
            memory.sort_run_bytes(),
        )?,
        agents: AgentResolver::default(),
        heal_pending,
        counts: Counts::default(),
        report,
        checkpoints,
    };
    let mut batch = Batch::default();
    let mut surt_group: Vec<Capture> = Vec::new();
    let batch_captures = options.batch_captures.max(1);
    // The bar counts captures summarized, not read: reading runs a batch ahead, and a
    // bar that reached its end there would sit full while the last batch is written.
    let mut unprocessed = 0u64;
    for_each_capture(store, |capture| {
        if surt_group.first().is_some_and(|c| c.surt != capture.surt) {
            batch.add_surt_group(std::mem::take(&mut surt_group), &mut summarizer.counts);
            if batch.captures >= batch_captures {
                summarizer.process(std::mem::take(&mut batch))?;
                report.progress().inc(std::mem::take(&mut unprocessed));
            }
        }
        surt_group.push(capture);
        unprocessed += 1;
        Ok(())
    })?;
    batch.add_surt_group(surt_group, &mut summarizer.counts);
    summarizer.process(batch)?;
    report.progress().inc(unprocessed);
    summarizer.finish(search_was_empty)
}

/// The captures of one URL, in time order.
struct UrlCaptures {
    url: Url,
    captures: Vec<(Capture, i64)>,
}

#[derive(Default)]
struct Batch {
    urls: Vec<UrlCaptures>,
    captures: usize,
}

impl Batch {
    /// Splits the captures of one SURT (which may hold several spellings of a URL) by URL.
    fn add_surt_group(&mut self, group: Vec<Capture>, counts: &mut Counts) {
        let mut by_url: BTreeMap<String, UrlCaptures> = BTreeMap::new();
        for capture in group {
            let (url, time) = match identity::crawled(&capture) {
                Ok(c) => (c.url, c.time),
                Err(skipped) => {
                    counts.incr(skipped.counter());
                    continue;
                }
            };
            counts.incr("captures");
            self.captures += 1;
            by_url
                .entry(url.as_str().to_string())
                .or_insert_with(|| UrlCaptures {
                    url: url.clone(),
                    captures: Vec::new(),
                })
                .captures
                .push((capture, time));
        }
        for (_, mut u) in by_url {
            // Store order is time order per SURT; keep it stable for equal seconds.
            u.captures.sort_by_key(|(_, time)| *time);
            self.urls.push(u);
        }
    }
}

struct Summarizer<'a> {
    store: &'a Store,
    conn: Connection,
    pages: Pages,
    ids: BaseIds,
    /// Analyses by payload digest, for the generations that need them.
    analyses: AnalysisCache,
    /// The analyses made for the URLs being summarized now: held until they are written
    /// whatever the cache keeps, or a cache smaller than one round would send them to be
    /// made again, one at a time.
    round: HashMap<Sha1Key, Arc<payloads::Analysis>>,
    /// Analyses the cache let go during a round, freed with the round's.
    retired: Vec<Arc<payloads::Analysis>>,
    /// Text piles by payload digest.
    piles: Fifo<PileRef>,
    /// HTML payloads whose body could not be read in this run (forgotten past
    /// `max_unavailable`: they are then looked for again).
    unavailable: HashSet<Sha1Key>,
    max_unavailable: usize,
    /// Token ids cached at most by the end of the run.
    token_cache: usize,
    /// File rows of the payloads revisits point at (their type).
    originals: Originals,
    agents: AgentResolver,
    /// The database remembers payloads an earlier run could not read: URLs with captures
    /// of them are summarized again.
    heal_pending: bool,
    counts: Counts,
    report: &'a Report,
    checkpoints: BackgroundCheckpoints,
}

/// What a URL needs: its id if known, and the crawl UUIDs already summarized.
struct UrlState {
    url_id: Option<i64>,
    known: HashSet<[u8; 16]>,
}

impl Summarizer<'_> {
    fn remember_unavailable(
        &mut self,
        digest: Sha1Key,
        why: &crate::project::source::Unavailable,
    ) -> Result<()> {
        if self.unavailable.len() >= self.max_unavailable {
            self.unavailable.clear();
        }
        self.unavailable.insert(digest);
        if may_heal(why) {
            self.conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO sediment_unread_payload (payload_sha1, reason)
                     VALUES (?1, ?2)",
                )?
                .execute(rusqlite::params![digest.0.as_slice(), why.reason()])?;
        }
        Ok(())
    }

    /// The URL has a capture of an HTML payload an earlier run could not read.
    fn has_unread(&self, u: &UrlCaptures) -> Result<bool> {
        if !self.heal_pending {
            return Ok(false);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM sediment_unread_payload WHERE payload_sha1 = ?1")?;
        for (capture, _) in &u.captures {
            // A capture that names no WARC (a CDX line without one) can never be read:
            // retrying it would summarize its URL again in every run.
            let may_read = capture.location.is_some() || capture.warc.is_some();
            if let Some(digest) = capture.digest
                && may_read
                && classify(capture, &u.url) == CaptureClass::Content
                && self.text_kind(capture, &u.url).is_some()
                && stmt.exists([digest.0.as_slice()])?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The capture is HTML (a revisit that names no type: its original is).
    fn is_html(&self, capture: &Capture) -> bool {
        is_html_mime(self.originals.mime_of(capture).as_deref())
    }

    /// How the text of the capture's payload is had, if it has any: HTML and the other
    /// full-text types (a revisit's from its original's type). robots.txt files are plain
    /// text but no document.
    fn text_kind(&self, capture: &Capture, url: &Url) -> Option<Kind> {
        if identity::crawl_type(url) == 1 {
            return None;
        }
        crate::doctext::kind_of(self.originals.mime_of(capture).as_deref())
    }

    fn url_state(&self, url: &Url) -> Result<UrlState> {
        let url_id: Option<i64> = self
            .conn
            .prepare_cached("SELECT url_id FROM url WHERE str_url = ?1")?
            .query_row([url.as_str()], |r| r.get(0))
            .optional()?;
        let mut known = HashSet::new();
        if let Some(id) = url_id {
            let mut stmt = self.conn.prepare_cached(
                "SELECT cs.crawl_uuid FROM entity_generation eg
                 JOIN crawl_summary cs ON cs.entity_generation_id = eg.entity_generation_id
                 WHERE eg.url_id = ?1",
            )?;
            let rows = stmt.query_map([id], |r| r.get::<_, Vec<u8>>(0))?;
            for row in rows {
                if let Ok(uuid) = <[u8; 16]>::try_from(row?) {
                    known.insert(uuid);
                }
            }
        }
        Ok(UrlState { url_id, known })
    }

    /// The pile of an HTML payload, if it was analysed in this or an earlier run.
    fn pile_of(&mut self, digest: &Sha1Key) -> Result<Option<PileRef>> {
        if let Some(pile) = self.piles.get(digest) {
            return Ok(Some(*pile));
        }
        let pile = stored_pile(&self.conn, digest)?;
        if let Some(pile) = pile {
            self.piles.insert(*digest, pile);
        }
        Ok(pile)
    }

    fn process(&mut self, batch: Batch) -> Result<()> {
        // Which URLs have new captures, and which HTML payloads nobody has analysed yet.
        let mut todo = Vec::new();
        let mut jobs: Vec<Job> = Vec::new();
        let mut queued: HashSet<Sha1Key> = HashSet::new();
        self.originals.prefetch(
            self.store,
            batch
                .urls
                .iter()
                .flat_map(|u| u.captures.iter().map(|(c, _)| c)),
        )?;
        for u in batch.urls {
            let state = self.url_state(&u.url)?;
            let new = u
                .captures
                .iter()
                .filter(|(c, _)| !state.known.contains(&identity::crawl_uuid(c)))
                .count();
            if new == 0 {
                if !self.has_unread(&u)? {
                    self.counts.incr("urls_unchanged");
                    continue;
                }
                self.counts.incr("urls_retried_unread");
            }
            self.counts.add("captures_new", new as u64);
            for (capture, _) in &u.captures {
                if classify(capture, &u.url) != CaptureClass::Content {
                    continue;
                }
                let Some(kind) = self.text_kind(capture, &u.url) else {
                    continue;
                };
                let Some(digest) = capture.digest else {
                    continue;
                };
                if queued.contains(&digest)
                    || self.analyses.contains(&digest)
                    || self.unavailable.contains(&digest)
                    || self.pile_of(&digest)?.is_some()
                {
                    continue;
                }
                queued.insert(digest);
                jobs.push(Job {
                    digest,
                    url: u.url.clone(),
                    content_type: capture.content_type.clone(),
                    kind,
                });
            }
            todo.push((u, state, jobs.len()));
        }
        if todo.is_empty() {
            return Ok(());
        }
        // URLs are summarized a round at a time, right after the payloads their captures
        // need are analysed (a few per thread): the analyses of a whole batch would hold its
        // pages' text and links several times over (a gigabyte for 2,048 captures of HTML
        // documentation), and the cache that keeps them for later captures is bounded.
        let per_round = rayon::current_num_threads().max(1) * 8;
        let mut rounds: Vec<(Range<usize>, Range<usize>)> = Vec::new();
        let (mut first_url, mut first_job) = (0, 0);
        while first_url < todo.len() {
            let mut end_url = first_url;
            while end_url < todo.len()
                && (end_url == first_url || todo[end_url - 1].2 - first_job < per_round)
            {
                end_url += 1;
            }
            let end_job = todo[end_url - 1].2;
            rounds.push((first_url..end_url, first_job..end_job));
            (first_url, first_job) = (end_url, end_job);
        }
        let store = self.store;
        let pages = self.pages.clone();
        let analyse_round = |round: Option<&(Range<usize>, Range<usize>)>| {
            round.map(|(_, round_jobs)| {
                let started = Instant::now();
                let results = analyse_all(store, &pages, &jobs[round_jobs.clone()]);
                (results, started.elapsed())
            })
        };
        self.in_transaction(|s| {
            let mut analysed = analyse_round(rounds.first());
            for (i, (urls, round_jobs)) in rounds.iter().enumerate() {
                let (results, analysing) = analysed.take().unwrap_or_default();
                s.counts.add("ms_analysing", analysing.as_millis() as u64);
                // The next round is analysed while this one is written: SQLite takes one
                // writer, so writing would otherwise leave the other cores idle.
                let (written, next) = rayon::join(
                    || s.write_round(&jobs[round_jobs.clone()], results, &todo[urls.clone()]),
                    || analyse_round(rounds.get(i + 1)),
                );
                written?;
                analysed = next;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Stores a round's analyses, then summarizes its URLs.
    fn write_round(
        &mut self,
        jobs: &[Job],
        results: Vec<AnalysisResult>,
        urls: &[(UrlCaptures, UrlState, usize)],
    ) -> Result<()> {
        let started = Instant::now();
        for (job, result) in jobs.iter().zip(results) {
            self.take_analysis(job, result?)?;
        }
        for (u, state, _) in urls {
            self.summarize_url(u, state)?;
        }
        // Analyses are freed on the pool: the strings of a round's links (a million and
        // more in a crawl of HTML documentation) took a tenth of the writing thread's time.
        let mut retired = std::mem::take(&mut self.retired);
        retired.extend(self.round.drain().map(|(_, analysis)| analysis));
        rayon::spawn(move || drop(retired));
        self.counts
            .add("ms_writing", started.elapsed().as_millis() as u64);
        Ok(())
    }

    /// Runs `work` in one transaction, rolled back when it fails.
    fn in_transaction(&mut self, work: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        match work(self) {
            Ok(()) => {
                self.conn.execute_batch("COMMIT")?;
                self.checkpoints.committed();
                Ok(())
            }
            Err(e) => {
                // The error that made the work fail is the one worth reporting.
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Stores the pile of a fresh analysis and keeps the analysis for its generations.
    fn take_analysis(
        &mut self,
        job: &Job,
        result: Result<payloads::Analysis, crate::project::source::Unavailable>,
    ) -> Result<()> {
        match result {
            Ok(analysis) => {
                self.counts.incr("payloads_analysed");
                for counter in analysis.cuts.counters() {
                    self.counts.incr(counter);
                }
                if analysis.text_cut {
                    self.counts.incr("text_piles_cut_at_max_text_bytes");
                }
                self.counts
                    .incr(&format!("texts_from_{}", analysis.source.as_str()));
                // A PDF the library read without finding text (scanned pages, or a broken
                // file it tolerated): no search row; counted, as it is no error.
                if analysis.problem.is_none() && analysis.pile.is_empty() {
                    self.counts
                        .incr(&format!("texts_empty_{}", analysis.source.as_str()));
                }
                if let Some(problem) = &analysis.problem {
                    self.report
                        .problem(
                            crate::report::Location::named(format!(
                                "payload {} ({})",
                                job.digest, job.url
                            )),
                            problem.reason,
                            &problem.message,
                            None,
                        )
                        .map_err(anyhow::Error::from)?;
                }
                let (pile, new) = store_pile(&self.conn, &job.digest, &analysis)?;
                if new {
                    self.counts.incr("text_piles");
                    add_work(&self.conn, WORK_TOKENS, pile.text_pile_id)?;
                }
                self.piles.insert(job.digest, pile);
                let size = analysis.approx_bytes();
                let analysis = Arc::new(analysis);
                self.round.insert(job.digest, analysis.clone());
                let evicted = self.analyses.insert_sized(job.digest, analysis, size);
                self.retired.extend(evicted);
            }
            Err(unavailable) => {
                self.counts
                    .incr(&format!("bodies_unavailable_{}", unavailable.reason()));
                self.remember_unavailable(job.digest, &unavailable)?;
            }
        }
        Ok(())
    }

    /// The analysis of a payload for one URL (links and dates depend on the URL): from the
    /// cache when it was made for this URL, else read and analysed again.
    fn analysis_for(
        &mut self,
        digest: &Sha1Key,
        url: &Url,
        content_type: Option<&str>,
        kind: Kind,
    ) -> Result<Option<Arc<payloads::Analysis>>> {
        if let Some(a) = self.round.get(digest).or_else(|| self.analyses.get(digest))
            && a.url == url.as_str()
        {
            return Ok(Some(a.clone()));
        }
        if self.unavailable.contains(digest) {
            return Ok(None);
        }
        let job = Job {
            digest: *digest,
            url: url.clone(),
            content_type: content_type.map(str::to_string),
            kind,
        };
        match analyse(self.store, &self.pages, &job)? {
            Ok(analysis) => {
                self.counts.incr("payloads_analysed_again_for_url");
                let analysis = Arc::new(analysis);
                let size = analysis.approx_bytes();
                let evicted = self.analyses.insert_sized(*digest, analysis.clone(), size);
                self.retired.extend(evicted);
                Ok(Some(analysis))
            }
            Err(unavailable) => {
                self.counts
                    .incr(&format!("bodies_unavailable_{}", unavailable.reason()));
                self.remember_unavailable(*digest, &unavailable)?;
                Ok(None)
            }
        }
    }

    /// The generation key of one capture.
    fn key_of(
        &mut self,
        capture: &Capture,
        url: &Url,
        class: &CaptureClass,
    ) -> Result<Option<ContentKey>> {
        Ok(match class {
            CaptureClass::NotModified => None,
            CaptureClass::Redirect { permanent, target } => Some(ContentKey::Redirect {
                permanent: *permanent,
                target: target.as_str().to_string(),
            }),
            CaptureClass::Status(status) => Some(ContentKey::Status(*status)),
            CaptureClass::Content => {
                let pile = match (capture.digest, self.text_kind(capture, url)) {
                    // A file without text (a scanned PDF) stays a file: an empty pile
                    // would make every such file of a URL one generation.
                    (Some(digest), Some(kind)) => self
                        .pile_of(&digest)?
                        .filter(|p| kind == Kind::Html || !p.is_empty()),
                    _ => None,
                };
                Some(match (pile, keys::file_identity(capture)) {
                    (Some(pile), _) => ContentKey::Pile(pile.digest),
                    (None, Some(sha1)) => ContentKey::File(sha1),
                    (None, None) => ContentKey::Status(capture.status.unwrap_or(200)),
                })
            }
        })
    }

    fn stored_generations(&self, url_id: i64) -> Result<Vec<(StoredGeneration, Option<i64>)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT entity_generation_id, content_key, first_seen_unix_utc, last_seen_unix_utc,
                    confirmed_end_unix_utc, text_pile_id
             FROM entity_generation WHERE url_id = ?1 AND url_fragment IS NULL
             ORDER BY first_seen_unix_utc, entity_generation_id",
        )?;
        let rows = stmt.query_map([url_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Vec<u8>>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, key, first_seen, last_seen, confirmed_end, pile) = row?;
            // A key this build cannot read never matches, so the row is replaced.
            let key = ContentKey::from_bytes(&key).unwrap_or(ContentKey::Status(0));
            out.push((
                StoredGeneration {
                    id,
                    key,
                    first_seen,
                    last_seen,
                    confirmed_end,
                },
                pile,
            ));
        }
        Ok(out)
    }

    fn summarize_url(&mut self, u: &UrlCaptures, state: &UrlState) -> Result<()> {
        let conn_url_id = match state.url_id {
            Some(id) => id,
            None => self.ids.url_id(&self.conn, &u.url)?,
        };
        let mut classes = Vec::with_capacity(u.captures.len());
        let mut observations = Vec::with_capacity(u.captures.len());
        for (capture, time) in &u.captures {
            let class = classify(capture, &u.url);
            let key = self.key_of(capture, &u.url, &class)?;
            observations.push(Observation { time: *time, key });
            classes.push(class);
        }
        let planned = plan(&observations);
        let stored = match state.url_id {
            Some(id) => self.stored_generations(id)?,
            None => Vec::new(),
        };
        let stored_only: Vec<StoredGeneration> = stored.iter().map(|(g, _)| g.clone()).collect();
        let reconciliation = reconcile(&stored_only, &planned);

        // 1. Generations nothing continues go, with everything attached.
        for &i in &reconciliation.dropped {
            let (g, pile) = &stored[i];
            rows::delete_generation(&self.conn, g.id)?;
            if let Some(pile) = pile {
                add_work(&self.conn, WORK_DUPLICATES, *pile)?;
            }
            self.counts.incr("generations_dropped");
        }
        // 2. Kept generations get their new times; closing ones first, so that no URL
        //    ever has two open generations.
        let mut updates: Vec<(usize, usize)> = reconciliation
            .kept
            .iter()
            .enumerate()
            .filter_map(|(p, s)| s.map(|s| (p, s)))
            .collect();
        updates.sort_by_key(|&(p, _)| planned[p].confirmed_end.is_none());
        let mut generation_ids = vec![0i64; planned.len()];
        let mut canonical_elsewhere = vec![false; planned.len()];
        for (p, s) in updates {
            let (g, pile) = &stored[s];
            let plan_g = &planned[p];
            generation_ids[p] = g.id;
            canonical_elsewhere[p] = self.stored_canonical_elsewhere(g.id, conn_url_id)?;
            if g.first_seen == plan_g.first_seen
                && g.last_seen == plan_g.last_seen
                && g.confirmed_end == plan_g.confirmed_end
            {
                continue;
            }
            rows::update_generation_times(
                &self.conn,
                g.id,
                plan_g.first_seen,
                plan_g.last_seen,
                plan_g.confirmed_end,
            )?;
            if g.confirmed_end.is_none() && plan_g.confirmed_end.is_some() {
                self.counts.incr("generations_closed");
            } else {
                self.counts.incr("generations_extended");
            }
            // The search row depends on whether the generation is open, duplicates on when
            // it starts and ends; a later last_seen changes neither.
            if g.confirmed_end != plan_g.confirmed_end {
                add_work(&self.conn, WORK_SEARCH_ROW, g.id)?;
            }
            if let Some(pile) = pile
                && (g.first_seen != plan_g.first_seen || g.confirmed_end != plan_g.confirmed_end)
            {
                add_work(&self.conn, WORK_DUPLICATES, *pile)?;
            }
        }
        // 3. New generations, with the rows made from their first capture.
        for (p, plan_g) in planned.iter().enumerate() {
            if reconciliation.kept[p].is_some() {
                continue;
            }
            let (first, _) = &u.captures[plan_g.captures[0]];
            let first_class = &classes[plan_g.captures[0]];
            let text_pile_id = match (&plan_g.key, first.digest) {
                (ContentKey::Pile(_), Some(digest)) => {
                    self.pile_of(&digest)?.map(|p| p.text_pile_id)
                }
                _ => None,
            };
            let first_crawl = uuid::Uuid::from_bytes(identity::crawl_uuid(first));
            let uuid = keys::generation_uuid(u.url.as_str(), &first_crawl, &plan_g.key);
            let id = rows::insert_generation(
                &self.conn,
                &NewGeneration {
                    url_id: conn_url_id,
                    uuid,
                    key: &plan_g.key,
                    first_seen: plan_g.first_seen,
                    last_seen: plan_g.last_seen,
                    confirmed_end: plan_g.confirmed_end,
                    text_pile_id,
                },
            )?;
            generation_ids[p] = id;
            self.counts.incr("generations_opened");
            add_work(&self.conn, WORK_SEARCH_ROW, id)?;
            if let Some(pile) = text_pile_id {
                add_work(&self.conn, WORK_DUPLICATES, pile)?;
            }
            canonical_elsewhere[p] =
                self.write_generation_rows(id, &u.url, first, first_class, text_pile_id)?;
        }
        // 4. Every capture's crawl summary, pointing at its generation.
        for (p, plan_g) in planned.iter().enumerate() {
            for &c in &plan_g.captures {
                let (capture, time) = &u.captures[c];
                let class = &classes[c];
                let html = self.is_html(capture);
                let noindex = match (class, capture.digest) {
                    (CaptureClass::Content, Some(digest)) if html => {
                        self.pile_of(&digest)?.is_some_and(|p| p.noindex)
                    }
                    _ => false,
                };
                let verdict = HtmlVerdict {
                    noindex,
                    canonical_elsewhere: canonical_elsewhere[p],
                };
                let agent = self.agents.agent_of(self.store, capture)?;
                let crawl_uuid = identity::crawl_uuid(capture);
                let new = rows::upsert_crawl_summary(
                    &self.conn,
                    state.known.contains(&crawl_uuid),
                    &CrawlRow {
                        generation: generation_ids[p],
                        crawl_uuid: uuid::Uuid::from_bytes(crawl_uuid),
                        agent_uuid: uuid::Uuid::from_bytes(agent.uuid),
                        robots_approved: agent.robots_approved,
                        crawl_type: identity::crawl_type(&u.url),
                        time: *time,
                        // A document with text (HTML, PDF, text…) is ingested; only HTML
                        // can ask not to be.
                        exit_code: exit_code_of(
                            capture,
                            self.text_kind(capture, &u.url).is_some(),
                            html.then_some(verdict),
                        ),
                        request_duration_ms: capture.fetch_ms,
                        last_modified: capture.last_modified.as_deref().and_then(http_date_to_unix),
                        status: capture.status,
                        etag: capture.etag.clone(),
                    },
                )?;
                if new {
                    self.counts.incr("crawl_summaries");
                }
            }
        }
        self.counts.incr("urls_summarized");
        Ok(())
    }

    /// file_summary, document_description, links and redirect_summary of a new generation.
    /// Returns whether the page names another URL as canonical.
    fn write_generation_rows(
        &mut self,
        id: i64,
        url: &Url,
        first: &Capture,
        class: &CaptureClass,
        text_pile_id: Option<i64>,
    ) -> Result<bool> {
        match class {
            CaptureClass::Redirect { permanent, target } => {
                rows::insert_redirect_summary(
                    &self.conn,
                    &mut self.ids,
                    id,
                    url,
                    target,
                    1,
                    *permanent,
                )?;
                Ok(false)
            }
            CaptureClass::Content => {
                let content_type = first.content_type.as_deref().or(first.mime.as_deref());
                let kind = self.text_kind(first, url).unwrap_or(Kind::Html);
                let analysis = match (text_pile_id, first.digest) {
                    (Some(_), Some(digest)) => {
                        self.analysis_for(&digest, url, content_type, kind)?
                    }
                    _ => None,
                };
                let canonical = analysis.as_ref().and_then(|a| a.signals.canonical.clone());
                let size = first.size.or(analysis.as_ref().map(|a| a.body_len));
                rows::insert_file_summary(
                    &self.conn,
                    &mut self.ids,
                    id,
                    size,
                    content_type,
                    canonical.as_ref(),
                )?;
                let Some(analysis) = analysis else {
                    return Ok(false);
                };
                let links = rows::insert_document(&self.conn, &mut self.ids, id, &analysis)?;
                self.counts.add("links", links);
                if let Some(target) = &analysis.signals.refresh {
                    rows::insert_redirect_summary(
                        &self.conn,
                        &mut self.ids,
                        id,
                        url,
                        target,
                        3,
                        false,
                    )?;
                }
                Ok(analysis.signals.canonical_elsewhere(url))
            }
            CaptureClass::NotModified | CaptureClass::Status(_) => Ok(false),
        }
    }

    fn stored_canonical_elsewhere(&self, generation: i64, url_id: i64) -> Result<bool> {
        let canonical: Option<Option<i64>> = self
            .conn
            .prepare_cached(
                "SELECT canonical_url_id FROM file_summary WHERE entity_generation_id = ?1",
            )?
            .query_row([generation], |r| r.get(0))
            .optional()?;
        Ok(canonical.flatten().is_some_and(|c| c != url_id))
    }

    fn finish(mut self, search_was_empty: bool) -> Result<()> {
        // What the captures needed is given back to what the end of the run needs: token
        // ids, and SQLite's sorts of the indexes a fresh database was filled without.
        self.ids = BaseIds::with_limit(1);
        self.analyses = Fifo::with_byte_limit(1, 1);
        self.piles = Fifo::new(1);
        self.originals = Originals::with_limit(1);
        self.unavailable = HashSet::new();
        let token_cache = self.token_cache;
        let report = self.report;
        self.in_transaction(|s| {
            // Payloads read since they were remembered: every URL of theirs was summarized
            // again in this run (or will be by the next, if this one stopped earlier).
            let healed = s.conn.execute(
                "DELETE FROM sediment_unread_payload
                 WHERE payload_sha1 IN (SELECT payload_sha1 FROM summary_payload)",
                [],
            )?;
            if healed > 0 {
                s.counts.add("payloads_healed", healed as u64);
            }
            index::finish(&s.conn, &mut s.counts, token_cache, &|p| report.phase(p))
        })?;
        report.phase("building the indexes");
        shrink_for_index_builds(&self.conn)?;
        create_base_tables(&self.conn)?;
        self.conn.execute_batch(SUMMARY_SQL)?;
        GENERATION_UUID.restore(&self.conn)?;
        self.checkpoints.committed();
        let rows: i64 =
            self.conn
                .query_row("SELECT count(*) FROM full_text_entity_index", [], |r| {
                    r.get(0)
                })?;
        let written = self.counts.get("search_rows_written") as i64;
        if rows > 0 && (search_was_empty || written * 10 > rows) {
            report.phase("merging the search index");
            // After a fresh index or many changes, the index is merged into one segment
            // (smaller, faster to query); after a few, FTS5's own incremental merging will do.
            self.conn.execute_batch(
                "INSERT INTO full_text_entity_index (full_text_entity_index) VALUES ('optimize');
                 INSERT INTO sediment_heavy_index (sediment_heavy_index) VALUES ('optimize');",
            )?;
            self.counts.incr("search_index_optimized");
        }
        report.phase("checkpointing the database");
        self.conn.execute_batch("PRAGMA optimize;")?;
        self.checkpoints.finish(&self.conn)?;
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        self.counts.add("search_rows", rows as u64);
        self.report.add_counts(&self.counts);
        Ok(())
    }
}
