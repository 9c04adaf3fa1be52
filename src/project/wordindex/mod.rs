//! The crawl as the word indexes of older engines see it (locust/ASPseek, the JDBM
//! indexer): one entry per URL, the URL's latest capture, the words and links of its
//! document, and the order in which a breadth-first crawler would have met the URLs.
//!
//! # Which capture stands for a URL
//! These engines keep one state per URL: the last fetch. So each URL (parsed and
//! serialized by the WHATWG rules, fragment removed; `http` and `https` only) is
//! represented by its latest capture (by capture time, then WARC file and offset). Its
//! document is read only when that capture is a success (2xx) with a payload digest; a
//! revisit reads the payload it refers to. A 3xx capture contributes its `Location`
//! (resolved against the URL) as the redirect target; error captures contribute neither
//! words nor links.
//!
//! # Words and links of a document
//! * HTML (`text/html`, `application/xhtml+xml`) is analysed by [`crate::html::analyze`].
//!   Its words are the tokens ([`WORDS`](super::tokenize::Tokenizer::WORDS)) of the
//!   title, the description, the `<meta name=keywords>` content and the six text-pile
//!   fields. Its links are every link
//!   `analyze` reports (a, area, link, img, iframe, frame, audio, video, source, embed,
//!   object, script) whose target is `http`/`https` and not the document itself, distinct,
//!   in document order.
//! * `text/plain` is decoded (charset parameter, else sniffed) and tokenized whole.
//! * Other types are documents without words or links.
//! * Words longer than [`MAX_WORD_BYTES`] are not indexed (counted as `long_words`): the
//!   engines' dictionaries have bounded word columns.
//!
//! # Crawl order
//! URLs are numbered in the order a breadth-first crawl from the seeds discovers them
//! ([`Snapshot::crawl_order`]); the link graph is the links of the documents plus the
//! redirects. The seeds are, for each crawl (input file), the URL of its earliest capture
//! other than a robots.txt, and every captured URL no other captured document links to
//! (it must have been given to the crawler). Seeds start at depth 0, in the order of their
//! first capture; each URL's referrer is the document it was first discovered from. Pages
//! a crawl from the seeds does not reach (a group of pages that only link each other)
//! start a further crawl, earliest first capture first.
//!
//! # Memory
//! Nothing here is held per URL in memory, so `--memory-mb` bounds a run whatever the
//! archive's size: URLs get node ids in a scratch SQLite database (behind a bounded
//! cache), pages go to a spill file as records, the crawl queue and every position are
//! rows of that database, and what must be ordered (seeds, words, the maps' keys) goes
//! through external sorts. All of it lives in a temporary directory in the output
//! directory and is removed at the end.
//!
//! # Where things are
//! This file builds the [`Snapshot`] (the captures' walk, URL ids, the page spill);
//! `document.rs` holds what a document contributes (words, start of text, the stored
//! word blob); `crawl_order.rs` numbers the nodes breadth-first.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use md5::{Digest, Md5};
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use url::Url;

mod crawl_order;
mod document;

pub use crawl_order::CrawlOrder;
pub use document::{count_words, meta_keywords, unpack_words_blob, words_blob};
use document::{essence, is_html, text_start};

use super::budget::MemoryBudget;
use super::source::{BodyReader, for_each_capture};
use crate::capture::Capture;
use crate::extsort::{Sorted, Sorter};
use crate::html::{self, LinkLocality};
use crate::payload::WarcLocator;
use crate::report::Counts;
use crate::store::Store;

/// Pages analysed per parallel batch.
const BATCH: usize = 256;

/// What to read and keep.
#[derive(Debug, Clone)]
pub struct Options {
    pub warc_dirs: Vec<PathBuf>,
    /// Bytes of a body read at most; longer documents are indexed from their start.
    pub max_body_bytes: usize,
    /// Keep each document's words blob ([`words_blob`]) in a spill file next to the output.
    pub keep_bodies: bool,
    /// Keep each document's word list (the forward index); without it the words of all
    /// documents are gathered into one sorted vocabulary instead.
    pub keep_forward: bool,
    /// Where the temporary files go (the output directory).
    pub spill_dir: PathBuf,
    pub threads: usize,
    /// Bounds the caches, the scratch database's page cache and the sorts' buffers.
    pub memory: MemoryBudget,
    /// Bytes of each sorted run spilled to disk, when not derived from `memory` (tests
    /// make it tiny so that every sort spills).
    pub sort_run_bytes: Option<usize>,
    /// Advanced by one per capture read (a hidden bar unless the command shows one).
    pub progress: indicatif::ProgressBar,
}

/// One URL with a capture.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Page {
    /// The latest capture.
    pub capture: Capture,
    /// The 14-digit time of the URL's first capture (for seed order).
    pub first_ts: String,
    pub document: Option<Document>,
    /// Link targets (node ids), distinct, in document order, without the page itself.
    pub links: Vec<u32>,
    /// Redirect target (node id) of a 3xx capture.
    pub redirect: Option<u32>,
}

impl Page {
    /// Links, then the redirect target: the page's edges of the crawl graph.
    pub fn edges(&self) -> impl Iterator<Item = u32> + '_ {
        let redirect = self.redirect.filter(|r| !self.links.contains(r));
        self.links.iter().copied().chain(redirect)
    }
}

/// A document read back from a WARC.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Document {
    /// Bytes read (de-chunked, Content-Encoding removed), at most the body limit.
    pub size: u64,
    /// The body was longer than the limit.
    pub truncated: bool,
    /// MD5 of the bytes read.
    pub md5: [u8; 16],
    /// The HTTP Content-Type of the record, as sent.
    pub content_type: String,
    /// The character encoding the text was decoded with (HTML), or the charset parameter.
    pub charset: String,
    pub title: String,
    pub description: String,
    pub keywords: String,
    /// Primary language (`<html lang>`), lower case.
    pub lang: String,
    /// The start of the body text in document order (HTML: headlines included, no title,
    /// nav or footer), or of the text.
    pub text_start: String,
    /// Distinct words and all word occurrences.
    pub distinct_words: u32,
    pub total_words: u64,
    /// (word, frequency) in order of first occurrence (only with `keep_forward`).
    pub forward: Vec<(String, u32)>,
    /// Offset and length of the words blob in the spill file (only with `keep_bodies`).
    pub blob: Option<(u64, u64)>,
}

/// An append-only temporary file of records, read back by position.
struct Spill {
    out: BufWriter<File>,
    len: u64,
}

impl Spill {
    fn create(dir: &Path) -> Result<Spill> {
        let file = tempfile::tempfile_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        Ok(Spill {
            out: BufWriter::with_capacity(1 << 20, file),
            len: 0,
        })
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(u64, u64)> {
        let at = self.len;
        self.out
            .write_all(bytes)
            .context("cannot write a temporary file")?;
        self.len += bytes.len() as u64;
        Ok((at, bytes.len() as u64))
    }

    /// Makes what was appended readable.
    fn flush(&mut self) -> Result<()> {
        self.out.flush().context("cannot write a temporary file")
    }

    fn read(&self, (offset, len): (u64, u64), out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.resize(len as usize, 0);
        self.out
            .get_ref()
            .read_exact_at(out, offset)
            .context("cannot read a temporary file")
    }
}

/// The word-index view of a store, kept on disk so that memory does not grow with the
/// archive: the URLs (nodes) and their crawl positions in a scratch SQLite database,
/// whose page cache comes from the memory budget; the pages as records in a spill file;
/// orders that need sorting by external sorts ([`crate::extsort`]). Node ids count from
/// 1 in order of first sight; only the crawl order and the output depend on nothing but
/// the URLs and their captures.
pub struct Snapshot {
    db: Connection,
    pages: Spill,
    bodies: Option<Spill>,
    /// URL → (node, linked), a bounded front of the `node` table.
    url_cache: HashMap<String, (u32, bool)>,
    cache_limit: usize,
    run_bytes: usize,
    nodes: u32,
    merged_pages: u64,
    /// Earliest capture (ts, tie-breaker) and node of each crawl input, robots.txt aside.
    crawl_starts: HashMap<String, (String, String, u64, u32)>,
    /// Words of every document (without `keep_forward`), and a bounded set of words
    /// pushed lately, which spares the sort most repeats.
    vocabulary: Option<Sorter>,
    vocabulary_seen: HashSet<String>,
    /// Crawl positions given so far, and the next node whose links the crawl follows.
    placed: u32,
    head: u32,
    spilled_runs: Arc<AtomicU64>,
    pub counts: Counts,
    /// Dropped last: the scratch files live in it.
    scratch: tempfile::TempDir,
}

const SCRATCH_SCHEMA: &str = "
    CREATE TABLE node (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        url_bytes INTEGER NOT NULL,
        linked INTEGER NOT NULL DEFAULT 0,
        page INTEGER,
        page_len INTEGER,
        edges INTEGER,
        first_ts TEXT,
        pos INTEGER,
        hops INTEGER,
        referrer INTEGER
    );
    CREATE UNIQUE INDEX node_url ON node (url);
    CREATE TABLE ord (pos INTEGER PRIMARY KEY, node INTEGER NOT NULL);
    CREATE TABLE keymap (
        kind INTEGER NOT NULL,
        key BLOB NOT NULL,
        id INTEGER NOT NULL,
        PRIMARY KEY (kind, key)
    ) WITHOUT ROWID;
";

/// A URL's latest capture as found in the store, before its body is read.
struct Latest {
    url: String,
    capture: Capture,
    first_ts: String,
}

/// What reading and analysing one page produced (computed in parallel).
struct Analysed {
    latest: Latest,
    document: Option<Document>,
    /// (word, frequency) in order of first occurrence.
    words: Vec<(String, u32)>,
    links: Vec<String>,
    redirect: Option<String>,
    blob: Option<Vec<u8>>,
    counts: Counts,
}

/// The URL as the indexes store it: WHATWG-serialized, no fragment; None unless http(s).
pub fn normalize_url(raw: &str) -> Option<Url> {
    let mut url = Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}

fn is_robots_txt(url: &str) -> bool {
    Url::parse(url).is_ok_and(|u| u.path() == "/robots.txt")
}

impl Snapshot {
    /// Reads every capture of the store and the documents of the URLs' latest captures.
    pub fn build(store: &Store, options: &Options) -> Result<Snapshot> {
        let scratch = tempfile::Builder::new()
            .prefix(".sediment-scratch-")
            .tempdir_in(&options.spill_dir)
            .with_context(|| {
                format!(
                    "cannot create a temporary directory in {}",
                    options.spill_dir.display()
                )
            })?;
        let db = Connection::open(scratch.path().join("nodes.db"))
            .context("cannot create the scratch database")?;
        db.execute_batch(&format!(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
             PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = FILE;
             PRAGMA cache_size = -{}; {SCRATCH_SCHEMA} BEGIN;",
            // Half what a SQLite projection gives its page cache: the sorts and the
            // id caches share the rest.
            (options.memory.sqlite_cache_kib() / 2).max(256)
        ))?;
        let bodies = if options.keep_bodies {
            Some(Spill::create(scratch.path())?)
        } else {
            None
        };
        let run_bytes = options
            .sort_run_bytes
            .unwrap_or_else(|| options.memory.sort_run_bytes());
        let spilled_runs = Arc::new(AtomicU64::new(0));
        let mut snapshot = Snapshot {
            db,
            pages: Spill::create(scratch.path())?,
            bodies,
            url_cache: HashMap::new(),
            cache_limit: (options.memory.id_cache_entries() / 2).max(16),
            run_bytes,
            nodes: 0,
            merged_pages: 0,
            crawl_starts: HashMap::new(),
            vocabulary: (!options.keep_forward)
                .then(|| Sorter::new(scratch.path(), run_bytes).counting_runs(&spilled_runs)),
            vocabulary_seen: HashSet::new(),
            placed: 0,
            head: 0,
            spilled_runs,
            counts: Counts::default(),
            scratch,
        };
        let reader = BodyReader::new(WarcLocator::new(&options.warc_dirs), options.max_body_bytes);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads.max(1))
            .build()
            .context("cannot start worker threads")?;
        let mut group: Vec<(Url, Capture)> = Vec::new();
        let mut group_surt = String::new();
        let mut batch: Vec<Latest> = Vec::new();
        for_each_capture(store, |capture| {
            options.progress.inc(1);
            snapshot.counts.incr("captures");
            if capture.surt != group_surt {
                snapshot.flush_group(&mut group, &mut batch)?;
                group_surt.clone_from(&capture.surt);
            }
            match normalize_url(&capture.url) {
                Some(url) => group.push((url, capture)),
                None => snapshot.counts.incr("captures_not_http"),
            }
            if batch.len() >= BATCH {
                snapshot.analyse_batch(store, &reader, &pool, options, &mut batch)?;
            }
            Ok(())
        })?;
        snapshot.flush_group(&mut group, &mut batch)?;
        snapshot.analyse_batch(store, &reader, &pool, options, &mut batch)?;
        snapshot.pages.flush()?;
        if let Some(bodies) = snapshot.bodies.as_mut() {
            bodies.flush()?;
        }
        snapshot.url_cache = HashMap::new();
        snapshot.vocabulary_seen = HashSet::new();
        let pages: i64 = snapshot.db.query_row(
            "SELECT count(*) FROM node WHERE page IS NOT NULL",
            [],
            |r| r.get(0),
        )?;
        if pages as u64 != snapshot.merged_pages {
            // A URL analysed twice (two SURT keys that normalize to it) keeps only its
            // last page, so only that page's links may count.
            snapshot.recount_linked()?;
        }
        snapshot.counts.add("urls", u64::from(snapshot.nodes));
        Ok(snapshot)
    }

    /// The captures of one SURT key are done: pick each URL's latest capture.
    fn flush_group(
        &mut self,
        group: &mut Vec<(Url, Capture)>,
        batch: &mut Vec<Latest>,
    ) -> Result<()> {
        let mut latest: Vec<Latest> = Vec::new();
        for (url, capture) in group.drain(..) {
            let url = url.as_str();
            if !is_robots_txt(url) {
                let (name, offset) = capture.tie_breaker();
                let candidate = (capture.ts.clone(), name.to_string(), offset);
                let start = self.crawl_starts.get(&capture.source);
                if start
                    .is_none_or(|s| (&s.0, &s.1, s.2) > (&candidate.0, &candidate.1, candidate.2))
                {
                    let node = self.intern_url(url, None)?;
                    self.crawl_starts.insert(
                        capture.source.clone(),
                        (candidate.0, candidate.1, candidate.2, node),
                    );
                }
            }
            match latest.iter_mut().find(|l| l.url == url) {
                Some(l) => {
                    if capture.ts < l.first_ts {
                        l.first_ts.clone_from(&capture.ts);
                    }
                    let newer = (capture.ts.as_str(), capture.tie_breaker())
                        > (l.capture.ts.as_str(), l.capture.tie_breaker());
                    if newer {
                        l.capture = capture;
                    }
                }
                None => latest.push(Latest {
                    url: url.to_string(),
                    first_ts: capture.ts.clone(),
                    capture,
                }),
            }
        }
        batch.extend(latest);
        Ok(())
    }

    fn analyse_batch(
        &mut self,
        store: &Store,
        reader: &BodyReader,
        pool: &rayon::ThreadPool,
        options: &Options,
        batch: &mut Vec<Latest>,
    ) -> Result<()> {
        use rayon::prelude::*;
        let items: Vec<Latest> = std::mem::take(batch);
        let analysed: Vec<Result<Analysed>> = pool.install(|| {
            items
                .into_par_iter()
                .map(|latest| analyse(store, reader, options, latest))
                .collect()
        });
        for result in analysed {
            self.merge(result?, options)?;
        }
        Ok(())
    }

    /// The node of a URL, made when new; `linked_from`: the URL is a link or redirect
    /// target of that node (it is then linked, unless it is that node).
    fn intern_url(&mut self, url: &str, linked_from: Option<u32>) -> Result<u32> {
        let (id, linked) = match self.url_cache.get(url) {
            Some(&entry) => entry,
            None => {
                let inserted = self
                    .db
                    .prepare_cached(
                        "INSERT INTO node (url, url_bytes) VALUES (?1, ?2)
                         ON CONFLICT (url) DO NOTHING",
                    )?
                    .execute(params![url, url.len() as i64])?;
                let entry = if inserted == 1 {
                    self.nodes += 1;
                    (self.db.last_insert_rowid() as u32, false)
                } else {
                    self.db
                        .prepare_cached("SELECT id, linked FROM node WHERE url = ?1")?
                        .query_row([url], |r| Ok((r.get(0)?, r.get(1)?)))?
                };
                if self.url_cache.len() >= self.cache_limit {
                    self.url_cache.clear();
                }
                self.url_cache.insert(url.to_string(), entry);
                entry
            }
        };
        if let Some(from) = linked_from
            && from != id
            && !linked
        {
            self.mark_linked(id)?;
            if let Some(entry) = self.url_cache.get_mut(url) {
                entry.1 = true;
            }
        }
        Ok(id)
    }

    fn mark_linked(&self, id: u32) -> Result<()> {
        self.db
            .prepare_cached("UPDATE node SET linked = 1 WHERE id = ?1")?
            .execute([id])?;
        Ok(())
    }

    /// Marks as linked exactly the targets of the pages kept, in slices of nodes so that
    /// no statement reads the table it changes.
    fn recount_linked(&mut self) -> Result<()> {
        self.db.execute("UPDATE node SET linked = 0", [])?;
        let mut after = 0u32;
        let mut record = Vec::new();
        loop {
            let slice: Vec<(u32, i64, i64)> = self
                .db
                .prepare_cached(
                    "SELECT id, page, page_len FROM node
                     WHERE id > ?1 AND page IS NOT NULL ORDER BY id LIMIT 4096",
                )?
                .query_map([after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let Some(&(last, _, _)) = slice.last() else {
                return Ok(());
            };
            for (id, offset, len) in slice {
                let page = self.read_page((offset as u64, len as u64), &mut record)?;
                for target in page.edges().filter(|&t| t != id) {
                    self.mark_linked(target)?;
                }
            }
            after = last;
        }
    }

    fn merge(&mut self, analysed: Analysed, options: &Options) -> Result<()> {
        self.counts.merge(&analysed.counts);
        self.counts.incr("pages");
        self.merged_pages += 1;
        let node = self.intern_url(&analysed.latest.url, None)?;
        let mut links = Vec::with_capacity(analysed.links.len());
        let mut seen = HashSet::with_capacity(analysed.links.len());
        for link in &analysed.links {
            let target = self.intern_url(link, Some(node))?;
            if target != node && seen.insert(target) {
                links.push(target);
            }
        }
        let redirect = match analysed.redirect.as_deref() {
            Some(r) => Some(self.intern_url(r, Some(node))?),
            None => None,
        };
        let mut document = analysed.document;
        if let Some(doc) = document.as_mut() {
            self.counts.incr("documents");
            if options.keep_forward {
                doc.forward = analysed.words;
            } else if let Some(vocabulary) = self.vocabulary.as_mut() {
                for (word, _) in &analysed.words {
                    if self.vocabulary_seen.contains(word) {
                        continue;
                    }
                    vocabulary.push(word.as_bytes())?;
                    if self.vocabulary_seen.len() >= self.cache_limit {
                        self.vocabulary_seen.clear();
                    }
                    self.vocabulary_seen.insert(word.clone());
                }
            }
            if let (Some(blob), Some(bodies)) = (analysed.blob.as_ref(), self.bodies.as_mut()) {
                doc.blob = Some(bodies.append(blob)?);
            }
        }
        let page = Page {
            capture: analysed.latest.capture,
            first_ts: analysed.latest.first_ts,
            document,
            links,
            redirect,
        };
        let edges = page.edges().count() as i64;
        let record = serde_json::to_vec(&page)?;
        let (offset, len) = self.pages.append(&record)?;
        self.db
            .prepare_cached(
                "UPDATE node SET page = ?2, page_len = ?3, edges = ?4, first_ts = ?5
                 WHERE id = ?1",
            )?
            .execute(params![
                node,
                offset as i64,
                len as i64,
                edges,
                page.first_ts
            ])?;
        Ok(())
    }

    /// A page record, read back (`record` is scratch space).
    pub fn page(&self, location: (u64, u64), record: &mut Vec<u8>) -> Result<Page> {
        self.read_page(location, record)
    }

    fn read_page(&self, location: (u64, u64), record: &mut Vec<u8>) -> Result<Page> {
        self.pages.read(location, record)?;
        serde_json::from_slice(record).context("a damaged page record in the temporary file")
    }

    /// Reads a document's words blob back from the spill file.
    pub fn read_blob(&self, location: (u64, u64), out: &mut Vec<u8>) -> Result<()> {
        self.bodies
            .as_ref()
            .context("the snapshot was built without bodies")?
            .read(location, out)
    }

    /// The scratch database, where the writers keep their own key maps and tables.
    pub fn db(&self) -> &Connection {
        &self.db
    }

    /// An external sort with the snapshot's run size, spilling into its scratch directory.
    pub fn sorter(&self) -> Sorter {
        Sorter::new(self.scratch.path(), self.run_bytes).counting_runs(&self.spilled_runs)
    }

    /// Sorted runs spilled to disk so far by the snapshot's sorts.
    pub fn spilled_runs(&self) -> u64 {
        self.spilled_runs.load(Ordering::Relaxed)
    }

    /// Entries each in-memory key cache may hold.
    pub fn cache_limit(&self) -> usize {
        self.cache_limit
    }

    /// The words of every document, sorted (repeats not all removed); once, and only for
    /// a snapshot built without `keep_forward`.
    pub fn take_vocabulary(&mut self) -> Result<Sorted> {
        self.vocabulary
            .take()
            .context("the snapshot has no vocabulary")?
            .finish()
    }

    /// Crawl position and URL length (bytes) of a node.
    pub fn target(&self, node: u32) -> Result<(u32, usize)> {
        Ok(self
            .db
            .prepare_cached("SELECT pos, url_bytes FROM node WHERE id = ?1")?
            .query_row([node], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?)
    }
}

/// Ids of keys (sites, words, digests) in order of first sight, on disk in the scratch
/// database's `keymap` table behind a bounded cache.
pub struct KeyIds {
    kind: i64,
    cache: HashMap<Vec<u8>, u32>,
    limit: usize,
    /// Keys seen so far.
    pub len: u32,
}

impl KeyIds {
    /// `kind` tells the maps sharing the table apart.
    pub fn new(kind: i64, limit: usize) -> KeyIds {
        KeyIds {
            kind,
            cache: HashMap::new(),
            limit: limit.max(1),
            len: 0,
        }
    }

    /// The id of `key` (from 0), and whether it is new.
    pub fn get_or_insert(&mut self, db: &Connection, key: &[u8]) -> Result<(u32, bool)> {
        if let Some(&id) = self.cache.get(key) {
            return Ok((id, false));
        }
        let inserted = db
            .prepare_cached(
                "INSERT INTO keymap (kind, key, id) VALUES (?1, ?2, ?3)
                 ON CONFLICT (kind, key) DO NOTHING",
            )?
            .execute(params![self.kind, key, self.len])?;
        let (id, new) = if inserted == 1 {
            self.len += 1;
            (self.len - 1, true)
        } else {
            let id = db
                .prepare_cached("SELECT id FROM keymap WHERE kind = ?1 AND key = ?2")?
                .query_row(params![self.kind, key], |r| r.get(0))?;
            (id, false)
        };
        if self.cache.len() >= self.limit {
            self.cache.clear();
        }
        self.cache.insert(key.to_vec(), id);
        Ok((id, new))
    }
}

fn analyse(
    store: &Store,
    reader: &BodyReader,
    options: &Options,
    latest: Latest,
) -> Result<Analysed> {
    let mut analysed = Analysed {
        document: None,
        words: Vec::new(),
        links: Vec::new(),
        redirect: None,
        blob: None,
        counts: Counts::default(),
        latest,
    };
    let capture = &analysed.latest.capture;
    let status = capture.status.unwrap_or(0);
    let Ok(page_url) = Url::parse(&analysed.latest.url) else {
        return Ok(analysed);
    };
    if (300..400).contains(&status) {
        if let Some(target) = capture
            .redirect
            .as_deref()
            .and_then(|l| page_url.join(l.trim()).ok())
            .and_then(|u| normalize_url(u.as_str()))
        {
            analysed.redirect = Some(target.to_string());
        }
        return Ok(analysed);
    }
    if !(200..300).contains(&status) {
        return Ok(analysed);
    }
    let Some(digest) = capture.digest else {
        analysed.counts.incr("body_no_digest");
        return Ok(analysed);
    };
    let body = match reader.read(store, &digest)? {
        Ok(body) => body,
        Err(why) => {
            analysed.counts.incr(&format!("body_{}", why.reason()));
            return Ok(analysed);
        }
    };
    let content_type = body
        .content_type
        .clone()
        .or_else(|| capture.content_type.clone())
        .unwrap_or_default();
    let mime = capture
        .mime
        .clone()
        .unwrap_or_else(|| essence(&content_type));
    let mut doc = Document {
        size: body.bytes.len() as u64,
        truncated: body.truncated,
        md5: Md5::digest(&body.bytes).into(),
        content_type: content_type.clone(),
        ..Document::default()
    };
    if body.truncated {
        analysed.counts.incr("bodies_truncated");
    }
    let mut text = String::new();
    if is_html(&mime) {
        let parsed = html::analyze(&body.bytes, Some(&content_type), &page_url);
        doc.charset = parsed.encoding.to_string();
        let description = &parsed.description;
        doc.title = description.title.clone().unwrap_or_default();
        doc.description = description.description.clone().unwrap_or_default();
        doc.lang = description.primary_language.clone().unwrap_or_default();
        doc.keywords = meta_keywords(&parsed.text_utf8).unwrap_or_default();
        let pile = &parsed.pile;
        doc.text_start = text_start(&[&parsed.leading_text]);
        for part in [&doc.title, &doc.description, &doc.keywords] {
            text.push_str(part);
            text.push('\n');
        }
        for field in pile.fields() {
            text.push_str(field);
            text.push('\n');
        }
        for link in &parsed.links {
            if link.locality == LinkLocality::SelfDocument {
                continue;
            }
            // Link URLs are parsed and without fragment already.
            if matches!(link.url.scheme(), "http" | "https") {
                analysed.links.push(link.url.as_str().to_string());
            }
        }
    } else if mime == "text/plain" {
        let decoded = html::decode(&body.bytes, Some(&content_type));
        doc.charset = decoded.encoding.name().to_string();
        text = decoded.text;
        doc.text_start = text_start(&[&text]);
    } else {
        doc.charset = html::charset_parameter(&content_type)
            .unwrap_or("")
            .to_ascii_lowercase();
    }
    let (words, total, long_words) = count_words(&text);
    analysed.counts.add("long_words", long_words);
    doc.distinct_words = words.len() as u32;
    doc.total_words = total;
    analysed.words = words;
    if options.keep_bodies {
        analysed.blob = Some(words_blob(&body.bytes));
    }
    analysed.document = Some(doc);
    Ok(analysed)
}

/// The directory for the temporary body file: the output directory, created if needed.
pub fn prepare_output_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use document::TEXT_START_CHARS;

    #[test]
    fn words_blob_round_trips_compressed_and_raw() {
        let text = b"the quick brown fox jumps over the lazy dog ".repeat(20);
        let blob = words_blob(&text);
        assert_eq!(&blob[..4], &(text.len() as u32).to_le_bytes());
        assert!(blob.len() < text.len());
        assert_eq!(unpack_words_blob(&blob).as_deref(), Some(&text[..]));
        // Incompressible: random-looking bytes are stored raw behind the mark.
        let noise: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let blob = words_blob(&noise);
        assert_eq!(&blob[..4], &[0xFF; 4]);
        assert_eq!(&blob[4..], &noise[..]);
        assert_eq!(unpack_words_blob(&blob).as_deref(), Some(&noise[..]));
        assert_eq!(words_blob(b""), [0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(unpack_words_blob(&[1, 2]), None);
    }

    #[test]
    fn text_start_collapses_and_cuts_at_characters() {
        assert_eq!(text_start(&["  a \n b", "c  "]), "a b c");
        let long = "é".repeat(300);
        assert_eq!(text_start(&[&long]).chars().count(), TEXT_START_CHARS);
    }

    #[test]
    fn meta_keywords_found_case_insensitively() {
        let html = r#"<html><head><META NAME="Keywords" content=" lake,  sediment
            cores "><meta name=description content=x></head><body>keywords</body></html>"#;
        assert_eq!(meta_keywords(html).as_deref(), Some("lake, sediment cores"));
        assert_eq!(meta_keywords("<p>no meta</p>"), None);
        let tricky = r#"<meta name="description" content="about keywords"><meta
            content="a &amp; b > c" name=KEYWORDS>"#;
        assert_eq!(meta_keywords(tricky).as_deref(), Some("a & b > c"));
        assert_eq!(
            meta_keywords("<metadata keywords><meta name=keywords"),
            None
        );
    }

    #[test]
    fn counts_words_in_order_of_first_occurrence() {
        let (words, total, long) = count_words("Lake lake LAKE sediment; Core-sample");
        assert_eq!(
            words,
            [
                ("lake".to_string(), 3),
                ("sediment".to_string(), 1),
                ("core".to_string(), 1),
                ("sample".to_string(), 1)
            ]
        );
        assert_eq!((total, long), (6, 0));
        let (_, total, long) = count_words(&"x".repeat(300));
        assert_eq!((total, long), (0, 1));
    }
}
