//! Running the GROBID stage over the store.
//!
//! One thread scans the `files` table for rows to process (a MIME type in the list and,
//! unless forced, no `grobid0:status_code`) and hands them to worker threads through a
//! bounded queue; each worker reads the PDF back from its WARC (SHA-1 checked), sends
//! it, and writes the row's `grobid0` cells in one batch through the write-ahead log as
//! soon as the reply is in. An interrupted run therefore loses at most the calls in
//! flight, and the next run skips every row already written.
//!
//! Nothing is written for a file whose payload cannot be read, or when GROBID stays
//! busy (503) through every retry or cannot be reached: those rows stay pending for a
//! later run, and the run report names them. A run stops when the server cannot be
//! reached several times in a row.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};

use super::client::{CallOutcome, GrobidClient, GrobidOptions};
use super::result::GrobidCells;
use crate::key::Sha1Key;
use crate::payload::{WarcLocator, read_payload};
use crate::report::{Counts, Location, Report};
use crate::schema::ColumnId;
use crate::stage::StageBatch;
use crate::store::Store;
use crate::store::cells::Projection;
use crate::store::writer::now_millis;
use crate::tei::TeiOptions;

/// Everything a run needs to know.
#[derive(Debug, Clone)]
pub struct GrobidStage {
    pub client: GrobidOptions,
    /// Directories holding the WARC files.
    pub warc_dirs: Vec<PathBuf>,
    /// Concurrent calls.
    pub workers: usize,
    /// Process at most this many rows.
    pub limit: Option<u64>,
    /// Process rows that already have results.
    pub force: bool,
    /// Normalized MIME types to process.
    pub mimes: Vec<String>,
    /// Files larger than this (bytes) are not sent (`oversize`).
    pub max_size: u64,
    pub tei: TeiOptions,
}

/// Default size limit: 4 MB.
pub const DEFAULT_MAX_SIZE: u64 = 4 << 20;

/// A row to process.
struct Job {
    key: Sha1Key,
    /// `file:size` when known.
    size: Option<u64>,
}

struct Columns {
    mime: ColumnId,
    size: ColumnId,
    status_code: ColumnId,
    /// `grobid0:status`: with status_code, the mark of a processed row (an imported TEI
    /// file has a status but no status code).
    status: ColumnId,
    /// Families replaced when a row is (re)processed: `grobid0`, and `match0`, which
    /// was derived from the old metadata.
    replaced: Vec<usize>,
}

fn columns(store: &Store) -> Result<Columns> {
    let schema = store.schema();
    let column = |name: &str| match schema.column_id(name) {
        Some(c) => Ok(c),
        None => bail!("the store's schema has no column {name}"),
    };
    let mut replaced = vec![column("grobid0:status_code")?.family];
    if let Some(m) = schema.family_index("match0") {
        replaced.push(m);
    }
    Ok(Columns {
        mime: column("file:mime")?,
        size: column("file:size")?,
        status_code: column("grobid0:status_code")?,
        status: column("grobid0:status")?,
        replaced,
    })
}

/// Shared state of the workers.
struct Workers<'a> {
    store: &'a Store,
    stage: &'a GrobidStage,
    report: &'a Report,
    client: GrobidClient,
    locator: WarcLocator,
    columns: Columns,
    ts: u64,
    stop: AtomicBool,
    transport_failures_in_a_row: AtomicU64,
    fatal: Mutex<Option<String>>,
}

/// Stop the run after this many failed connections in a row (at least).
const MAX_TRANSPORT_FAILURES_IN_A_ROW: u64 = 5;

impl Workers<'_> {
    fn fail(&self, message: String) {
        let mut fatal = self.fatal.lock().unwrap_or_else(|e| e.into_inner());
        if fatal.is_none() {
            *fatal = Some(message);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    fn location(key: &Sha1Key) -> Location {
        Location::named(format!("row {key}"))
    }

    fn process(&self, job: &Job, counts: &mut Counts) {
        let limit = self.stage.max_size;
        let cells = match job.size {
            Some(size) if size > limit => Some(GrobidCells::oversize(size, limit)),
            _ => self.fetch(job, counts),
        };
        let Some(cells) = cells else { return };
        // Each result is published at once: a GROBID call is slow, and a reader (or a
        // run after a crash) must see every row that was paid for.
        let mut batch = StageBatch::new(self.store, self.ts).publish_every(Duration::ZERO);
        let written = batch
            .replace_row(
                &job.key,
                &self.columns.replaced,
                &cells.to_cells(self.store.schema()),
            )
            .and_then(|()| batch.commit());
        if let Err(e) = written {
            self.fail(format!(
                "cannot write the results of row {}: {e:#}",
                job.key
            ));
            return;
        }
        counts.incr("rows_written");
        counts.incr(cells.status_name());
        if let Some(quality) = cells.quality {
            counts.incr(&format!("quality_{quality}"));
        }
    }

    /// Reads the payload and calls GROBID; `None` when nothing is to be written.
    fn fetch(&self, job: &Job, counts: &mut Counts) -> Option<GrobidCells> {
        let limit = self.stage.max_size;
        let mut pdf = Vec::new();
        let mut total: u64 = 0;
        let read = read_payload(self.store, &job.key, &self.locator, true, &mut |bytes| {
            total += bytes.len() as u64;
            if total <= limit {
                pdf.extend_from_slice(bytes);
            }
        });
        match read {
            Err(e) => {
                let _ = self.report.problem(
                    Self::location(&job.key),
                    "payload_unreadable",
                    &format!("{e:#}"),
                    None,
                );
                return None;
            }
            Ok(read) => {
                if let Some(error) = read
                    .record
                    .payload
                    .as_ref()
                    .and_then(|p| p.dechunk_error.as_ref())
                {
                    let _ = self.report.problem(
                        Self::location(&job.key),
                        "payload_broken",
                        &format!(
                            "{} at byte {}: the chunked body is malformed ({error})",
                            read.warc.display(),
                            read.offset
                        ),
                        None,
                    );
                    return None;
                }
            }
        }
        if total > limit {
            return Some(GrobidCells::oversize(total, limit));
        }
        counts.incr("sent");
        let file_name = format!("{}.pdf", job.key.to_hex());
        match self.client.process(&pdf, &file_name) {
            CallOutcome::Reply { status, body } => {
                self.transport_failures_in_a_row.store(0, Ordering::SeqCst);
                Some(GrobidCells::from_reply(status, &body, self.stage.tei))
            }
            CallOutcome::Timeout => {
                self.transport_failures_in_a_row.store(0, Ordering::SeqCst);
                Some(GrobidCells::timeout(
                    self.stage.client.timeout.as_secs_f64(),
                ))
            }
            CallOutcome::Busy { attempts } => {
                let _ = self.report.problem(
                    Self::location(&job.key),
                    "grobid_busy",
                    &format!("GROBID answered 503 (busy) {attempts} times; left for a later run"),
                    None,
                );
                None
            }
            CallOutcome::Transport(message) => {
                let _ = self.report.problem(
                    Self::location(&job.key),
                    "grobid_unreachable",
                    &message,
                    None,
                );
                let in_a_row = self
                    .transport_failures_in_a_row
                    .fetch_add(1, Ordering::SeqCst)
                    + 1;
                let allowed = MAX_TRANSPORT_FAILURES_IN_A_ROW.max(2 * self.stage.workers as u64);
                if in_a_row >= allowed {
                    self.fail(format!(
                        "GROBID at {} failed {in_a_row} times in a row, stopping (last error: {message}); \
                         rows not processed are left for the next run",
                        self.client.endpoint()
                    ));
                }
                None
            }
        }
    }
}

/// Runs the stage. Counts go to `report`; an error means the run stopped early (what was
/// written stays written).
pub fn run_stage(store: &Store, stage: &GrobidStage, report: &Report) -> Result<()> {
    let columns = columns(store)?;
    let client = GrobidClient::new(stage.client.clone());
    match client.check_alive() {
        Ok(None) => {}
        Ok(Some(status)) => eprintln!(
            "sediment: warning: {}/api/isalive answered HTTP {status}; trying anyway",
            stage.client.url
        ),
        Err(e) => bail!("GROBID is not reachable: {e}"),
    }
    let projection = Projection {
        families: vec![columns.mime.family, columns.status_code.family],
        columns: Some(vec![
            columns.mime,
            columns.size,
            columns.status_code,
            columns.status,
        ]),
        versions: 1,
    };
    let workers = Workers {
        store,
        stage,
        report,
        client,
        locator: WarcLocator::new(&stage.warc_dirs),
        columns,
        ts: now_millis(),
        stop: AtomicBool::new(false),
        transport_failures_in_a_row: AtomicU64::new(0),
        fatal: Mutex::new(None),
    };
    let threads = stage.workers.max(1);
    let (sender, receiver) = crossbeam_channel::bounded::<Job>(threads * 2);
    let scanned = std::thread::scope(|scope| -> Result<()> {
        for _ in 0..threads {
            let receiver = receiver.clone();
            let workers = &workers;
            scope.spawn(move || {
                for job in receiver {
                    if workers.stop.load(Ordering::SeqCst) {
                        continue;
                    }
                    let mut counts = Counts::default();
                    workers.process(&job, &mut counts);
                    report.add_counts(&counts);
                    report.progress().inc(1);
                }
            });
        }
        drop(receiver);
        let mut selected: u64 = 0;
        let scan = store.scan_rows(&projection, None, None, |row| {
            if workers.stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            let mime = row.latest(workers.columns.mime).unwrap_or_default();
            let wanted =
                std::str::from_utf8(mime).is_ok_and(|m| stage.mimes.iter().any(|x| x == m));
            if !wanted {
                return Ok(true);
            }
            report.count("rows_matching_mime", 1);
            let processed = row.latest(workers.columns.status_code).is_some()
                || row.latest(workers.columns.status).is_some();
            if processed && !stage.force {
                report.count("skipped_done", 1);
                return Ok(true);
            }
            if stage.limit.is_some_and(|limit| selected >= limit) {
                return Ok(false);
            }
            let size = row
                .latest(workers.columns.size)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes);
            selected += 1;
            report.count("rows_selected", 1);
            // A closed queue means every worker is gone: nothing more to hand out.
            Ok(sender.send(Job { key: row.key, size }).is_ok())
        });
        drop(sender);
        scan
    });
    if let Some(message) = workers
        .fatal
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
    {
        bail!(message);
    }
    scanned
}
