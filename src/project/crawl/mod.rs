//! Projection 1: the store's captures as the crawl database of the seed schema
//! ("Crawler schema as of release 3.0"), DDL in `schemas/crawl.sql`, which also documents
//! how captures map to rows and what the values the archives do not record become.
//!
//! Captures are read in URL-then-time order and written in batches, one transaction per
//! batch, through cached prepared statements. HTML bodies are read back from their WARCs
//! and analysed in parallel, once per (payload digest, URL), through a bounded cache.
//! Crawl UUIDs are UUID v5 of the capture key, so projecting into an existing database adds
//! only the captures it does not hold yet.

pub mod agents;
pub mod analysis;
pub mod exit_code;
pub mod values;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use self::agents::Agents;
use self::analysis::{PageCache, PageFacts, PageKey, analyze_page};
use self::exit_code::{HtmlVerdict, Outcome, content_exit_code, from_status, is_contentful};
use self::values::{
    http_date_to_unix, is_crawlable, is_html_mime, redirect_target, sediment_namespace,
    ts14_to_unix, uuid_v5,
};
use crate::capture::{Capture, CaptureKind};
use crate::key::Sha1Key;
use crate::payload::WarcLocator;
use crate::project::base::{BaseIds, MediaType, create_base_tables, get_info, set_info};
use crate::project::source::{BodyReader, Unavailable, for_each_capture};
use crate::report::Report;
use crate::store::Store;
use crate::store::captures::capture_key;
use crate::store::cells::Projection;

pub const CRAWL_SQL: &str = include_str!("../../../schemas/crawl.sql");

/// The seed's crawler schema version, recorded as `unobtanium_crawler_schema_version`.
pub const CRAWLER_SCHEMA_VERSION: &str = "1.0.0";

/// How a projection runs.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Directories holding the WARC files named by the captures.
    pub warc_dirs: Vec<PathBuf>,
    /// Threads reading and analysing HTML bodies.
    pub threads: usize,
    /// Bytes of one decoded body read at most (the rest is cut, and counted).
    pub max_body_bytes: usize,
    /// Captures per transaction.
    pub batch_size: usize,
    /// Bytes of analysed pages kept for later captures of the same payload.
    pub cache_bytes: usize,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            warc_dirs: Vec::new(),
            threads: 2,
            max_body_bytes: 16 << 20,
            batch_size: 4096,
            cache_bytes: 128 << 20,
        }
    }
}

/// Opens (creating if needed) a crawl database: base and crawler tables, schema versions.
/// Refuses a database of another kind (e.g. a summary database).
pub fn open_crawl_db(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)
        .with_context(|| format!("cannot open the crawl database {}", path.display()))?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = NORMAL;
         PRAGMA cache_size = -65536;
         PRAGMA temp_store = MEMORY;",
    )?;
    let has_info: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'unobtanium_database_info'",
        [],
        |r| r.get(0),
    )?;
    if has_info
        && let Some(kind) = get_info(&conn, "unobtanium_database_kind")?
        && kind != "crawler"
    {
        bail!(
            "{} is a {kind} database, not a crawl database",
            path.display()
        );
    }
    create_crawl_tables(&conn)?;
    Ok(conn)
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
    let mut projector = Projector {
        store,
        conn,
        reader: BodyReader::new(WarcLocator::new(&options.warc_dirs), options.max_body_bytes),
        pool,
        chunk: options.threads.max(1) * 4,
        namespace: sediment_namespace(),
        incremental: already > 0,
        base: BaseIds::new(),
        agents: Agents::default(),
        pages: PageCache::new(options.cache_bytes),
        originals: HashMap::new(),
        candidates: HashSet::new(),
        report,
    };
    let batch_size = options.batch_size.max(1);
    let mut batch = Vec::with_capacity(batch_size);
    for_each_capture(store, |capture| {
        batch.push(capture);
        if batch.len() >= batch_size {
            projector.run_batch(&batch)?;
            batch.clear();
        }
        Ok(())
    })?;
    projector.run_batch(&batch)?;
    projector.finish()
}

/// A capture ready to be written.
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
    pool: rayon::ThreadPool,
    /// Pages analysed in parallel at a time.
    chunk: usize,
    namespace: [u8; 16],
    /// The database held captures before this run: look each one up.
    incremental: bool,
    base: BaseIds,
    agents: Agents,
    pages: PageCache,
    /// What the store's file rows say of the payloads revisits point at.
    originals: HashMap<Sha1Key, Original>,
    /// url_ids known to have a crawl_candidate row.
    candidates: HashSet<i64>,
    report: &'a Report,
}

/// Per-run caches are cleared past this many entries.
const MAX_CACHED_IDS: usize = 1 << 22;

impl Projector<'_> {
    fn run_batch(&mut self, batch: &[Capture]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.conn.execute_batch("BEGIN")?;
        match self
            .write_batch(batch)
            .and_then(|()| self.agents.flush(self.conn))
        {
            Ok(()) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(())
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn plan<'c>(&mut self, capture: &'c Capture, key: &mut Vec<u8>) -> Result<Option<Planned<'c>>> {
        let Some(time) = ts14_to_unix(&capture.ts) else {
            self.report.count("captures_bad_timestamp", 1);
            return Ok(None);
        };
        let Ok(url) = Url::parse(capture.url.trim()) else {
            self.report.count("captures_bad_url", 1);
            return Ok(None);
        };
        capture_key(capture, key);
        let uuid = uuid_v5(&self.namespace, key);
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
        let mime = capture
            .mime
            .clone()
            .or_else(|| match (capture.kind, &capture.digest) {
                (CaptureKind::Revisit, Some(d)) => {
                    self.originals.get(d).and_then(|o| o.mime.clone())
                }
                _ => None,
            });
        let is_html = is_html_mime(mime.as_deref());
        let page = match (outcome, is_html, &capture.digest) {
            (Outcome::Content, true, Some(digest)) => Some((*digest, without_fragment_str(&url))),
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
        self.prefetch_originals(batch)?;
        let mut key = Vec::new();
        let mut planned = Vec::with_capacity(batch.len());
        for capture in batch {
            self.report.progress().inc(1);
            self.report.count("captures", 1);
            if let Some(p) = self.plan(capture, &mut key)? {
                planned.push(p);
            }
        }
        // The analyses this batch needs, in first-use order, each once.
        let mut needs: Vec<(PageKey, Url, Option<String>)> = Vec::new();
        let mut needed = HashSet::new();
        for p in &planned {
            if let Some(page) = &p.page
                && self.pages.get(page).is_none()
                && needed.insert(page.clone())
            {
                needs.push((page.clone(), p.url.clone(), p.capture.content_type.clone()));
            }
        }
        let mut next_need = 0;
        for p in &planned {
            let page = match &p.page {
                None => None,
                Some(key) => Some(self.page(key, &needs, &mut next_need, p)?),
            };
            self.write_capture(p, page)?;
        }
        Ok(())
    }

    /// The analysis of a page: from the cache, else computed with the next chunk of the
    /// batch's needs (in parallel).
    fn page(
        &mut self,
        key: &PageKey,
        needs: &[(PageKey, Url, Option<String>)],
        next_need: &mut usize,
        p: &Planned,
    ) -> Result<Result<Arc<PageFacts>, Unavailable>> {
        if let Some(found) = self.pages.get(key) {
            return Ok(found);
        }
        if *next_need < needs.len() {
            let end = (*next_need + self.chunk).min(needs.len());
            let chunk = &needs[*next_need..end];
            *next_need = end;
            let (store, reader) = (self.store, &self.reader);
            let results: Vec<(PageKey, Result<PageFacts, Unavailable>)> =
                self.pool.install(|| {
                    chunk
                        .par_iter()
                        .map(|(key, url, content_type)| {
                            analyze_page(store, reader, &key.0, url, content_type.as_deref())
                                .map(|r| (key.clone(), r))
                        })
                        .collect::<Result<_>>()
                })?;
            for (key, result) in results {
                self.count_analysis(&result);
                self.pages.insert(key, result.map(Arc::new));
            }
            if let Some(found) = self.pages.get(key) {
                return Ok(found);
            }
        }
        // Evicted before use (the chunk outgrew the cache): analyse it alone.
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
                if page.truncated {
                    self.report.count("html_bodies_truncated", 1);
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
        let agent = self
            .agents
            .agent_for(conn, self.store, &self.namespace, c, p.time)?;
        let url_id = self.base.url_id(conn, &p.url)?;
        let page_facts = page.as_ref().and_then(|r| r.as_ref().ok());
        let exit = match p.outcome {
            Outcome::Code(code) => code,
            Outcome::Content => content_exit_code(
                p.is_html,
                page_facts.map(|f| HtmlVerdict {
                    noindex: f.noindex,
                    canonical_elsewhere: f
                        .canonical
                        .as_ref()
                        .is_some_and(|u| u.as_str() != without_fragment_str(&p.url)),
                }),
            ),
        };
        let message = match &page {
            Some(Err(why)) => Some(format!("body not read: {}", why.reason())),
            _ => None,
        };
        let crawl_type = if p.url.path() == "/robots.txt" { 1 } else { 0 };
        conn.prepare_cached(
            "INSERT INTO crawl_log (agent_id, url_id, crawl_type, crawl_uuid,
             time_started_unix_utc, time_taken_ms, exit_code, message)
             VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7)",
        )?
        .execute(params![
            agent.id,
            url_id,
            crawl_type,
            &p.uuid[..],
            p.time,
            exit,
            message
        ])?;
        let crawl_log_id = conn.last_insert_rowid();
        let last_modified = c.last_modified.as_deref().and_then(http_date_to_unix);
        conn.prepare_cached(
            "INSERT INTO request (crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,
             robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code,
             http_etag) VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            crawl_log_id,
            url_id,
            p.time,
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
                    let to_url_id = self.base.url_id(conn, &target)?;
                    conn.prepare_cached(
                        "INSERT INTO redirect (crawl_log_id, request_id, url_id,
                         last_modified_unix_utc, to_url_id, information_source, is_permanent,
                         by_security_policy, to_url_fragment)
                         VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, 0, ?7)",
                    )?
                    .execute(params![
                        crawl_log_id,
                        request_id,
                        url_id,
                        last_modified,
                        to_url_id,
                        matches!(c.status, Some(301 | 308)),
                        target.fragment()
                    ])?;
                    self.report.count("redirects", 1);
                    if is_crawlable(&target) {
                        self.discovered(to_url_id)?;
                    }
                }
                None => self.report.count("redirects_unresolvable", 1),
            }
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
            self.candidates.insert(url_id);
        }
        if let Some(facts) = page_facts {
            for link in facts.links.iter().chain(facts.canonical.iter()) {
                if is_crawlable(link) {
                    let id = self.base.url_id(conn, link)?;
                    self.discovered(id)?;
                }
            }
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
            Some(Ok(facts)) => match &facts.canonical {
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
                conn.prepare_cached("INSERT INTO file_text (file_id, text) VALUES (?1, ?2)")?
                    .execute(params![file_id, facts.text])?;
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
        if self.candidates.len() >= MAX_CACHED_IDS {
            self.candidates.clear();
        }
        self.candidates.insert(url_id);
        Ok(())
    }

    /// Reads the file rows (`file:size`, `file:mime`) of the payloads the batch's
    /// revisits point at, which carry no size (and, from CDX, no type) themselves: one
    /// iterator, digests in key order.
    fn prefetch_originals(&mut self, batch: &[Capture]) -> Result<()> {
        let mut digests: Vec<Sha1Key> = batch
            .iter()
            .filter(|c| c.kind == CaptureKind::Revisit)
            .filter_map(|c| c.digest)
            .filter(|d| !self.originals.contains_key(d))
            .collect();
        if digests.is_empty() {
            return Ok(());
        }
        digests.sort_unstable();
        digests.dedup();
        let schema = self.store.schema();
        let column = |name: &str| {
            schema
                .column_id(name)
                .with_context(|| format!("the schema lacks {name}"))
        };
        let (size_column, mime_column) = (column("file:size")?, column("file:mime")?);
        let mut families = vec![size_column.family, mime_column.family];
        families.dedup();
        let projection = Projection {
            families,
            columns: Some(vec![size_column, mime_column]),
            versions: 1,
        };
        if self.originals.len() + digests.len() > MAX_CACHED_IDS {
            self.originals.clear();
        }
        for digest in &digests {
            self.originals.insert(*digest, Original::default());
        }
        let originals = &mut self.originals;
        self.store.read_rows(&digests, &projection, |row| {
            let original = originals.entry(row.key).or_default();
            original.size = row
                .latest(size_column)
                .and_then(|v| <[u8; 8]>::try_from(v).ok())
                .map(u64::from_be_bytes);
            original.mime = row
                .latest(mime_column)
                .and_then(|v| std::str::from_utf8(v).ok())
                .map(str::to_string);
            Ok(true)
        })?;
        Ok(())
    }

    fn finish(self) -> Result<()> {
        let count = |table: &str| -> Result<i64> {
            Ok(self
                .conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?)
        };
        self.report
            .count("db_crawl_candidates", count("crawl_candidate")? as u64);
        self.report.count("db_agents", count("agent")? as u64);
        self.report.count("db_urls", count("url")? as u64);
        Ok(())
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

/// The file row of a payload, as far as a revisit needs it.
#[derive(Debug, Clone, Default)]
struct Original {
    size: Option<u64>,
    mime: Option<String>,
}

fn without_fragment_str(url: &Url) -> String {
    crate::project::base::without_fragment(url).to_string()
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
}
