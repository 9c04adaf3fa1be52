//! The public API: a [`Store`] opened for reading or writing, its rows and captures,
//! and the ingest and export entry points. A thin layer over the crate's internals:
//! each entry point runs the same pipeline as the subcommand of the same name, quietly,
//! and returns what the command would have printed as values, with typed errors.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::export::{ExportOptions, Selection, export_jsonl};
use crate::filter::{FileFilter, FilterArgs};
use crate::ingest::cdx_files::{CdxBackfill, backfill_cdx, plan_cdx};
use crate::ingest::jsonl_files::{JsonlImport, import_jsonl};
use crate::ingest::warc_files::{WarcImport, import_warcs, plan_warcs};
use crate::key::Sha1Key;
use crate::report::{Report, ReportArgs};
use crate::store::backend::row_upper_bound;
use crate::store::cells::Projection;
use crate::store::{Create, WriterOptions};
use crate::wayback::query::{KeyRange, QueryLimits, after_prefix};
use crate::wayback::record::Field as CdxField;
use crate::wayback::{CaptureSource, CdxRecord, StoreCaptures};

/// A store: the `files` table (one row per payload, keyed by its SHA-1) and the capture
/// index beside it, on RocksDB in a directory (or on Bigtable, `bigtable://…`).
///
/// Open it for reading ([`Store::open_reader`]: the newest published version, while a
/// writer goes on) or as its one writer ([`Store::create`], [`Store::open_writer`]).
pub struct Store {
    inner: crate::store::Store,
    path: PathBuf,
}

/// One row of the `files` table: its key and its cells in schema order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The payload's SHA-1.
    pub key: Sha1Key,
    /// The newest version of each of its cells.
    pub cells: Vec<Cell>,
}

/// The newest version of one cell, decoded as `sediment get` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// `f`, `file`, `grobid0` or `match0`.
    pub family: String,
    /// The column within the family (`c`, `size`, `mime`, …).
    pub qualifier: String,
    /// The value as JSON (numbers, strings, objects as the schema types them).
    pub value: serde_json::Value,
    /// The version's timestamp (milliseconds since the epoch).
    pub timestamp: u64,
}

impl Row {
    /// The value of `family:qualifier`, if the row has it.
    pub fn get(&self, family: &str, qualifier: &str) -> Option<&serde_json::Value> {
        self.cells
            .iter()
            .find(|c| c.family == family && c.qualifier == qualifier)
            .map(|c| &c.value)
    }
}

/// How a capture query matches its URL (the wayback `matchType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    /// This URL only (after canonicalization).
    Exact,
    /// Every URL that starts with it.
    Prefix,
    /// Every URL of its host.
    Host,
    /// Every URL of its host and the hosts under it.
    Domain,
}

/// A capture query, as `sediment captures` and the server's `/cdx` take it: a URL and
/// how it matches, a time span, filters and a limit.
///
/// ```
/// use sediment::{CaptureQuery, MatchType};
/// let query = CaptureQuery::url("example.com/")
///     .match_type(MatchType::Prefix)
///     .from("2021")
///     .to("202106")
///     .filter("status:200")
///     .limit(10);
/// # let _ = query;
/// ```
#[derive(Debug, Clone)]
pub struct CaptureQuery {
    params: Vec<(String, String)>,
    /// Captures whose SURT starts with this, instead of a URL.
    surt_prefix: Option<String>,
    /// Set by another thread to stop the query.
    cancel: Option<Arc<AtomicBool>>,
}

impl CaptureQuery {
    /// The captures of `url` (`example.com/*` asks for a prefix, `*.example.com` for a
    /// domain, as the wayback API does).
    pub fn url(url: &str) -> CaptureQuery {
        CaptureQuery {
            params: vec![("url".to_string(), url.to_string())],
            surt_prefix: None,
            cancel: None,
        }
    }

    /// The captures whose SURT key starts with `prefix` (`org,example)/` for a site,
    /// `org,` for a top-level domain, the empty string for every capture).
    pub fn surt_prefix(prefix: &str) -> CaptureQuery {
        CaptureQuery {
            params: Vec::new(),
            surt_prefix: Some(prefix.to_string()),
            cancel: None,
        }
    }

    /// How the URL matches (exact when not said, unless the URL's own `*` says otherwise).
    pub fn match_type(mut self, match_type: MatchType) -> CaptureQuery {
        let name = match match_type {
            MatchType::Exact => "exact",
            MatchType::Prefix => "prefix",
            MatchType::Host => "host",
            MatchType::Domain => "domain",
        };
        self.params
            .push(("matchType".to_string(), name.to_string()));
        self
    }

    /// At or after this time: 1 to 14 digits (`2021` is 20210101000000).
    pub fn from(mut self, timestamp: &str) -> CaptureQuery {
        self.params
            .push(("from".to_string(), timestamp.to_string()));
        self
    }

    /// At or before this time: 1 to 14 digits (`2021` is 20211231235959).
    pub fn to(mut self, timestamp: &str) -> CaptureQuery {
        self.params.push(("to".to_string(), timestamp.to_string()));
        self
    }

    /// At most `n` captures; a negative `n` gives the last ones.
    pub fn limit(mut self, n: i64) -> CaptureQuery {
        self.params.push(("limit".to_string(), n.to_string()));
        self
    }

    /// Keeps captures whose field matches: `field:regex`, `!field:regex`,
    /// `~field:substring` (fields: urlkey, timestamp, url, mime, status, digest, length,
    /// offset, filename).
    pub fn filter(mut self, filter: &str) -> CaptureQuery {
        self.params.push(("filter".to_string(), filter.to_string()));
        self
    }

    /// Any other parameter of the wayback CDX server API, by its pywb or IA name:
    /// `collapse` (`field` or `field:N`), `closest` (a timestamp, nearest first), `fl`,
    /// `filter`, `sort`, … A name the API does not know is ignored, as the servers do.
    pub fn param(mut self, name: &str, value: &str) -> CaptureQuery {
        self.params.push((name.to_string(), value.to_string()));
        self
    }

    /// Stops the query (with [`Error::Cancelled`]) once `flag` is set, checked before
    /// each capture is read: how another thread ends a long query, such as the last N
    /// captures of a large prefix, before its end.
    pub fn cancel_when(mut self, flag: Arc<AtomicBool>) -> CaptureQuery {
        self.cancel = Some(flag);
        self
    }

    /// Newest first.
    pub fn reverse(mut self) -> CaptureQuery {
        self.params
            .push(("sort".to_string(), "reverse".to_string()));
        self
    }

    /// Checks the query against the wayback rules ([`Error::BadQuery`] for what
    /// [`Store::for_each_capture`] would refuse), so that a caller can refuse it before
    /// running it, on another thread say.
    pub fn check(&self) -> Result<()> {
        self.compile().map(|_| ())
    }

    fn compile(&self) -> Result<crate::wayback::CaptureQuery> {
        // A program's query may be as long as the store; only windows stay bounded.
        let limits = QueryLimits {
            max_limit: u64::MAX >> 1,
            ..QueryLimits::default()
        };
        let params = self.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let query = match &self.surt_prefix {
            None => crate::wayback::CaptureQuery::from_params(params, &limits),
            Some(prefix) => {
                let prefix = prefix.as_bytes().to_vec();
                let range = KeyRange {
                    end: after_prefix(&prefix),
                    start: prefix,
                };
                crate::wayback::CaptureQuery::over_range(params, &limits, range)
            }
        };
        query.map_err(Error::query)
    }
}

/// One capture: the fields of its CDX line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The SURT form of the URL (the sort key).
    pub urlkey: String,
    /// 14 digits, `YYYYMMDDhhmmss`.
    pub timestamp: String,
    pub url: String,
    pub mime: Option<String>,
    pub status: Option<u16>,
    /// The payload's SHA-1 in base32: the key of its row.
    pub digest: Option<String>,
    /// The record's length in its WARC file (compressed).
    pub length: Option<u64>,
    pub offset: Option<u64>,
    /// The WARC file's name.
    pub filename: Option<String>,
}

impl Capture {
    /// A field as a CDX line shows it (`None` is written `-`).
    pub fn get(&self, field: CdxField) -> Option<String> {
        match field {
            CdxField::UrlKey => Some(self.urlkey.clone()),
            CdxField::Timestamp => Some(self.timestamp.clone()),
            CdxField::Original => Some(self.url.clone()),
            CdxField::MimeType => self.mime.clone(),
            CdxField::StatusCode => self.status.map(|s| s.to_string()),
            CdxField::Digest => self.digest.clone(),
            CdxField::Redirect | CdxField::RobotFlags => None,
            CdxField::Length => self.length.map(|l| l.to_string()),
            CdxField::Offset => self.offset.map(|o| o.to_string()),
            CdxField::Filename => self.filename.clone(),
        }
    }

    fn of(record: CdxRecord) -> Capture {
        Capture {
            urlkey: record.urlkey,
            timestamp: record.timestamp,
            url: record.original,
            mime: record.mime,
            status: record.status.and_then(|s| s.parse().ok()),
            digest: record.digest,
            length: record.length.and_then(|s| s.parse().ok()),
            offset: record.offset.and_then(|s| s.parse().ok()),
            filename: record.filename,
        }
    }
}

/// Options of the ingest entry points.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    /// Worker threads (default: one per core).
    pub threads: Option<usize>,
    /// Apply inputs the store has already ingested.
    pub force: bool,
    /// File rows only for these MIME types instead of the full-text list (as `--mime`;
    /// captures of every type are kept either way).
    pub mime_types: Vec<String>,
    /// File rows for every MIME type (as `--all-types`).
    pub all_types: bool,
    /// Bulk load through SST files (as `--bulk`; the CDX and JSON-lines paths).
    pub bulk: bool,
}

/// What an ingest or export did: its counts (`captures`, `records`, `lines`, `rows`, …
/// as the command's `--json` report names them) and its problems.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    pub counts: std::collections::BTreeMap<String, u64>,
    /// Problems by reason.
    pub problems: std::collections::BTreeMap<String, u64>,
    /// The first problems with where they were met.
    pub problem_examples: Vec<Problem>,
}

/// A problem met in an input: where, why, and what was done about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The input file (or `-`), and the line or byte offset within it when known.
    pub file: String,
    pub line: Option<u64>,
    pub offset: Option<u64>,
    /// A short code (`bad_timestamp`, `digest_mismatch`, …).
    pub reason: String,
    pub message: String,
}

impl RunReport {
    /// A count by name; 0 when absent.
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    fn of(report: &Report) -> RunReport {
        RunReport {
            counts: report.counts().0,
            problems: report.problems().0,
            problem_examples: report
                .problem_examples()
                .into_iter()
                .map(|p| Problem {
                    file: p.location.file.clone(),
                    line: p.location.line,
                    offset: p.location.offset,
                    reason: p.reason,
                    message: p.message,
                })
                .collect(),
        }
    }
}

/// Rows by key order, read a page at a time (see [`Store::rows`]).
pub struct Rows<'s> {
    store: &'s Store,
    next: Vec<u8>,
    end: Vec<u8>,
    page: VecDeque<Row>,
    done: bool,
}

/// Rows read from the store per page of [`Rows`].
const ROWS_PER_PAGE: usize = 256;

impl Iterator for Rows<'_> {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Result<Row>> {
        if self.page.is_empty()
            && !self.done
            && let Err(e) = self.fill()
        {
            self.done = true;
            return Some(Err(e));
        }
        self.page.pop_front().map(Ok)
    }
}

impl Rows<'_> {
    fn fill(&mut self) -> Result<()> {
        let inner = &self.store.inner;
        let projection = Projection::all(inner.schema());
        let mut page = Vec::with_capacity(ROWS_PER_PAGE);
        inner
            .scan_rows(&projection, Some(&self.next), Some(&self.end), |row| {
                page.push(row);
                Ok(page.len() < ROWS_PER_PAGE)
            })
            .map_err(Error::internal)?;
        if page.len() < ROWS_PER_PAGE {
            self.done = true;
        }
        if let Some(last) = page.last() {
            // The next page starts just after the last key read.
            self.next = last.key.as_bytes().to_vec();
            self.next.push(0);
        }
        for row in page {
            self.page.push_back(self.store.decode_row(row));
        }
        Ok(())
    }
}

impl Store {
    /// Creates a store in a new or empty directory and opens it as its writer. A
    /// directory that already holds a store is refused (open it with
    /// [`Store::open_writer`]).
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let store = sediment::Store::create(dir.path().join("store"))?;
    /// store.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        if crate::store::directory::is_store(path) {
            return Err(Error::Failed(format!(
                "{} already holds a store: open it with Store::open_writer",
                path.display()
            )));
        }
        Store::writer(path, Create::Always)
    }

    /// Opens an existing store as its one writer; fails with [`Error::Busy`] while
    /// another process writes it and with [`Error::NoStore`] where there is none.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let cdx = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.cdx");
    /// use sediment::{Error, Store};
    ///
    /// assert!(matches!(Store::open_writer(&path), Err(Error::NoStore { .. })));
    /// Store::create(&path)?.close()?;
    /// // Later, or in another process: the one writer of the existing store.
    /// let store = Store::open_writer(&path)?;
    /// assert!(matches!(Store::open_writer(&path), Err(Error::Busy { .. })));
    /// store.import_cdx(&[cdx], &Default::default())?;
    /// store.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_writer(path: impl AsRef<Path>) -> Result<Store> {
        Store::writer(path.as_ref(), Create::Never)
    }

    fn writer(path: &Path, create: Create) -> Result<Store> {
        let options = WriterOptions {
            create,
            ..WriterOptions::new("library")
        };
        let inner = crate::store::Store::open_writer(path, &options)
            .map_err(|e| Error::at_store(path, e))?;
        Ok(Store {
            inner,
            path: path.to_path_buf(),
        })
    }

    /// Opens the newest published version of a store for reading: never creates or
    /// changes anything, and works while a writer goes on (it sees what the writer had
    /// published when it was opened).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// use sediment::Store;
    ///
    /// let writer = Store::create(&path)?;
    /// writer.import_warc(&[warc], &Default::default())?;
    /// writer.publish()?;
    /// // Beside the writer, a reader sees what it published.
    /// let reader = Store::open_reader(&path)?;
    /// assert!(reader.version().is_some());
    /// assert!(reader.rows(b"").next().is_some());
    /// writer.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_reader(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let inner = crate::store::Store::open_reader(path).map_err(|e| Error::at_store(path, e))?;
        Ok(Store {
            inner,
            path: path.to_path_buf(),
        })
    }

    /// The path (or `bigtable://` address) the store was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The published version a reader sees (`None` on a backend without versions).
    pub fn version(&self) -> Option<u64> {
        self.inner.version()
    }

    /// The row of a payload digest, `None` when the store has none.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// # let writer = sediment::Store::create(&path)?;
    /// # writer.import_warc(&[warc], &Default::default())?;
    /// # writer.close()?;
    /// use sediment::{Sha1Key, Store};
    ///
    /// let store = Store::open_reader(&path)?;
    /// // Base32 as in CDX lines, or 40 hex digits, with or without `sha1:`.
    /// let key = Sha1Key::parse("R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A")?;
    /// let row = store.row(&key)?.expect("a PDF of the crawl");
    /// assert_eq!(row.get("file", "mime").unwrap(), "application/pdf");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn row(&self, key: &Sha1Key) -> Result<Option<Row>> {
        let projection = Projection::all(self.inner.schema());
        let row = self
            .inner
            .read_row(key, &projection)
            .map_err(Error::internal)?;
        Ok(row.map(|r| self.decode_row(r)))
    }

    /// The rows whose key starts with `prefix` (raw key bytes; empty for all), in key
    /// order, read a page at a time.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// # let writer = sediment::Store::create(&path)?;
    /// # writer.import_warc(&[warc], &Default::default())?;
    /// # writer.close()?;
    /// let store = sediment::Store::open_reader(&path)?;
    /// let mut pdfs = 0;
    /// for row in store.rows(b"") {
    ///     let row = row?;
    ///     if row.get("file", "mime").and_then(|m| m.as_str()) == Some("application/pdf") {
    ///         pdfs += 1;
    ///     }
    /// }
    /// assert!(pdfs >= 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rows(&self, prefix: &[u8]) -> Rows<'_> {
        Rows {
            store: self,
            next: prefix.to_vec(),
            end: row_upper_bound(prefix),
            page: VecDeque::new(),
            done: false,
        }
    }

    /// Runs a capture query, giving each capture it selects, in order, to `visit` until
    /// it returns false. Returns how many were given.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// # let writer = sediment::Store::create(&path)?;
    /// # writer.import_warc(&[warc], &Default::default())?;
    /// # writer.close()?;
    /// use sediment::{CaptureQuery, MatchType, Store};
    ///
    /// let store = Store::open_reader(&path)?;
    /// let query = CaptureQuery::url("http://127.0.0.1:47213/papers/").match_type(MatchType::Prefix);
    /// let given = store.for_each_capture(&query, |capture| {
    ///     println!("{} {} {:?}", capture.timestamp, capture.url, capture.status);
    ///     true
    /// })?;
    /// assert!(given >= 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_each_capture(
        &self,
        query: &CaptureQuery,
        mut visit: impl FnMut(Capture) -> bool,
    ) -> Result<u64> {
        let compiled = query.compile()?;
        let source = Cancellable {
            inner: StoreCaptures::new(&self.inner),
            cancel: query.cancel.as_deref(),
        };
        let summary = crate::wayback::run::for_each(&compiled, &source, &mut |_, record| {
            Ok(visit(Capture::of(record)))
        });
        match summary {
            Ok(summary) => Ok(summary.written),
            Err(_) if source.cancelled() => Err(Error::Cancelled),
            Err(e) => Err(Error::internal(e)),
        }
    }

    /// The captures a query selects, collected (see [`Store::for_each_capture`] to
    /// stream them).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// # let writer = sediment::Store::create(&path)?;
    /// # writer.import_warc(&[warc], &Default::default())?;
    /// # writer.close()?;
    /// use sediment::{CaptureQuery, Store};
    ///
    /// let store = Store::open_reader(&path)?;
    /// let query = CaptureQuery::url("http://127.0.0.1:47213/papers/layers.pdf").limit(1);
    /// let captures = store.captures(&query)?;
    /// assert_eq!(captures.len(), 1);
    /// assert_eq!(captures[0].mime.as_deref(), Some("application/pdf"));
    /// assert_eq!(captures[0].status, Some(200));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn captures(&self, query: &CaptureQuery) -> Result<Vec<Capture>> {
        let mut captures = Vec::new();
        self.for_each_capture(query, |c| {
            captures.push(c);
            true
        })?;
        Ok(captures)
    }

    /// Imports WARC files (gzip per record, whole-file gzip, or uncompressed; directories
    /// are searched for `*.warc` and `*.warc.gz`), as `sediment import-warc` does. Bad
    /// records are problems in the report, never errors: the valid data around them is
    /// kept.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// let store = sediment::Store::create(&path)?;
    /// let report = store.import_warc(&[warc], &Default::default())?;
    /// println!("{} captures, problems: {:?}", report.count("captures"), report.problems);
    /// assert!(report.count("captures") > 20);
    /// store.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn import_warc(
        &self,
        paths: &[impl AsRef<Path>],
        options: &IngestOptions,
    ) -> Result<RunReport> {
        let report = quiet_report("import-warc");
        let inputs = plan_warcs(&to_paths(paths), &report).map_err(Error::internal)?;
        let import = WarcImport {
            filter: file_filter(options),
            threads: options.threads,
            force: options.force,
            commit_every: COMMIT_EVERY,
            stdin_name: None,
            bulk_into_empty: true,
        };
        let bytes = import_warcs(&self.inner, inputs, &import, &report).map_err(Error::internal)?;
        report.count("bytes", bytes);
        Ok(RunReport::of(&report))
    }

    /// Ingests CDX or CDXJ files (plain or gzip) without their WARCs, as
    /// `sediment backfill-cdx` does.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let cdx = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.cdx");
    /// use sediment::{CaptureQuery, Store};
    ///
    /// let store = Store::create(&path)?;
    /// let report = store.import_cdx(&[cdx], &Default::default())?;
    /// assert!(report.count("captures") > 20, "{report:?}");
    /// let pdf = CaptureQuery::url("http://127.0.0.1:47213/papers/layers.pdf");
    /// assert_eq!(store.captures(&pdf)?.len(), 1);
    /// store.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn import_cdx(
        &self,
        paths: &[impl AsRef<Path>],
        options: &IngestOptions,
    ) -> Result<RunReport> {
        let report = quiet_report("backfill-cdx");
        let inputs = plan_cdx(&to_paths(paths), &report).map_err(Error::internal)?;
        let backfill = CdxBackfill {
            filter: file_filter(options),
            threads: options.threads,
            force: options.force,
            commit_every: COMMIT_EVERY,
            bulk_memory: self.bulk_memory(options.bulk),
            exit_after: false,
        };
        backfill_cdx(&self.inner, &inputs, &backfill, &report).map_err(Error::internal)?;
        Ok(RunReport::of(&report))
    }

    /// Reads JSON lines written by [`Store::export_jsonl`] (or `sediment export`) back:
    /// rows, and with the capture lines of a capture export, the capture index too.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// # let writer = sediment::Store::create(&path)?;
    /// # writer.import_warc(&[warc], &Default::default())?;
    /// # writer.close()?;
    /// use sediment::Store;
    ///
    /// let jsonl = dir.path().join("store.jsonl");
    /// Store::open_reader(&path)?.export_jsonl(&mut std::fs::File::create(&jsonl)?, true)?;
    /// let copy = Store::create(dir.path().join("copy"))?;
    /// let report = copy.import_jsonl(&[&jsonl], &Default::default())?;
    /// assert!(report.count("rows") > 0 && report.count("captures") > 0, "{report:?}");
    /// copy.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn import_jsonl(
        &self,
        paths: &[impl AsRef<Path>],
        options: &IngestOptions,
    ) -> Result<RunReport> {
        let report = quiet_report("import-jsonl");
        let import = JsonlImport {
            force: options.force,
            strict: false,
            bulk_memory: self.bulk_memory(options.bulk),
        };
        import_jsonl(&self.inner, &to_paths(paths), &import, &report).map_err(Error::internal)?;
        Ok(RunReport::of(&report))
    }

    /// Writes every row as a JSON line (`{"key": BASE32, "sha1hex": …, "f:c": …}`), and
    /// with `captures` also the capture index, so that [`Store::import_jsonl`] of the
    /// output makes an equal store.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("store");
    /// # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
    /// # let writer = sediment::Store::create(&path)?;
    /// # writer.import_warc(&[warc], &Default::default())?;
    /// # writer.close()?;
    /// let store = sediment::Store::open_reader(&path)?;
    /// let mut out = Vec::new();
    /// let report = store.export_jsonl(&mut out, false)?;
    /// let mut rows = 0;
    /// for line in std::str::from_utf8(&out)?.lines() {
    ///     let line: serde_json::Value = serde_json::from_str(line)?;
    ///     if line.get("key").is_some() {
    ///         rows += 1;
    ///     }
    /// }
    /// assert_eq!(rows, report.count("rows"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_jsonl(&self, out: &mut dyn Write, captures: bool) -> Result<RunReport> {
        let report = quiet_report("export");
        let options = ExportOptions {
            rows: true,
            limit: None,
            with_versions: false,
            captures,
        };
        export_jsonl(
            &self.inner,
            Selection::all(&self.inner),
            &options,
            out,
            &report,
        )
        .map_err(Error::internal)?;
        Ok(RunReport::of(&report))
    }

    /// Makes what this writer wrote so far visible to readers that open the store from
    /// now on. Returns the version published (RocksDB).
    pub fn publish(&self) -> Result<Option<u64>> {
        self.inner.publish().map_err(Error::internal)
    }

    /// Closes the store; a writer publishes what it wrote first.
    pub fn close(self) -> Result<()> {
        self.inner.close().map_err(Error::internal)
    }

    fn bulk_memory(&self, bulk: bool) -> Option<usize> {
        (bulk && self.inner.backend().as_rocks().is_some())
            .then(crate::store::bulk::default_memory_limit)
    }

    fn decode_row(&self, row: crate::store::cells::Row) -> Row {
        let schema = self.inner.schema();
        let mut json = Vec::new();
        let cells = row
            .cells
            .iter()
            .filter_map(|cell| {
                let column = schema.column(cell.column);
                let version = cell.versions.first()?;
                json.clear();
                column
                    .value_type
                    .write_json(&version.value, &mut json)
                    .ok()?;
                Some(Cell {
                    family: column.family.to_string(),
                    qualifier: column.qualifier.to_string(),
                    value: serde_json::from_slice(&json).ok()?,
                    timestamp: version.ts,
                })
            })
            .collect();
        Row {
            key: row.key,
            cells,
        }
    }
}

/// The store's captures, read until a query's cancel flag is set.
struct Cancellable<'a> {
    inner: StoreCaptures<'a>,
    cancel: Option<&'a AtomicBool>,
}

impl Cancellable<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

impl CaptureSource for Cancellable<'_> {
    fn scan<'b>(
        &'b self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = anyhow::Result<crate::capture::Capture>> + 'b> {
        let mut captures = self.inner.scan(range, reverse);
        Box::new(std::iter::from_fn(move || {
            if self.cancelled() {
                return Some(Err(anyhow::anyhow!("cancelled")));
            }
            captures.next()
        }))
    }
}

/// How often a library ingest commits (publishes what it wrote), as the commands do.
const COMMIT_EVERY: Duration = Duration::from_secs(10);

/// The report of a library call: no progress bar, no lines on the terminal.
fn quiet_report(command: &str) -> Report {
    Report::new(command).output(&ReportArgs {
        quiet: true,
        ..ReportArgs::default()
    })
}

fn to_paths(paths: &[impl AsRef<Path>]) -> Vec<PathBuf> {
    paths.iter().map(|p| p.as_ref().to_path_buf()).collect()
}

fn file_filter(options: &IngestOptions) -> FileFilter {
    FileFilter::from_args(&FilterArgs {
        mimes: options.mime_types.clone(),
        all_types: options.all_types,
        ..FilterArgs::default()
    })
}
