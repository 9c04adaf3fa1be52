//! One module per subcommand; each reads like a short recipe over the library.

pub mod backfill_cdx;
#[cfg(feature = "bigtable")]
pub mod bigtable;
pub mod captures;
pub mod cat;
pub mod catalog;
pub mod cdx;
pub mod export;
#[cfg(feature = "parquet")]
pub mod export_captures;
pub mod export_wacz;
pub mod extract;
pub mod get;
pub mod grobid;
pub mod import_hbase_tsv;
pub mod import_jsonl;
pub mod import_tei;
pub mod import_warc;
pub mod ingest_sst;
pub mod lookup_jdbm;
pub mod match_catalog;
pub mod project;
pub mod project_crawl;
pub mod project_jdbm;
pub mod project_locust;
pub mod project_summary;
pub mod relocate;
pub mod schema;
pub mod search;
#[cfg(feature = "server")]
pub mod serve;
pub mod split_ranges;
pub mod stats;
pub mod warcs;
pub mod write_range;
pub mod write_sst;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::report::{Report, exit};
use crate::store::{Store, WriterOptions};

/// `--wait`: a writer queues behind another writer instead of failing.
static WAIT_FOR_WRITER: AtomicBool = AtomicBool::new(false);

pub fn set_wait_for_writer(wait: bool) {
    WAIT_FOR_WRITER.store(wait, Ordering::Relaxed);
}

/// The batch memory of a `--bulk` load, or `None` for the write path: bulk loads write SST
/// files for the embedded store; another backend is told so and gets batched mutations.
pub fn bulk_memory(
    store: &Store,
    command: &str,
    bulk: bool,
    bulk_memory_mb: Option<usize>,
) -> Option<usize> {
    if !bulk {
        return None;
    }
    if store.backend().as_rocks().is_none() {
        crate::diag!(
            "{command}: --bulk writes SST files for the embedded store; {} gets batched \
             mutations instead",
            store.describe()
        );
        return None;
    }
    Some(bulk_memory_mb.map_or_else(crate::store::bulk::default_memory_limit, |mb| mb << 20))
}

/// Opens the store for a command that changes what it holds (grobid, match, relocate):
/// a path without a store is an error, never a new store.
pub fn open_writer(store_path: &Path, command: &str) -> anyhow::Result<Store> {
    let mut options = WriterOptions::new(command);
    options.wait = WAIT_FOR_WRITER.load(Ordering::Relaxed);
    Store::open_writer(store_path, &options)
}

/// Opens the store for a command that brings content (the imports): creates it when the
/// directory is new or empty, and removes it again if the run writes nothing.
pub fn open_creator(store_path: &Path, command: &str) -> anyhow::Result<Store> {
    let mut options = WriterOptions::creating(command);
    options.wait = WAIT_FOR_WRITER.load(Ordering::Relaxed);
    Store::open_writer(store_path, &options)
}

/// Adds to an ingest's report how long its writes waited (embedded stores): the slowest
/// write call and RocksDB's cumulative write stall, in ms (omitted when zero).
pub fn count_write_stalls(store: &Store, report: &crate::report::Report) {
    if let Some(rocks) = store.backend().as_rocks() {
        let stalls = rocks.write_stalls();
        report.count("slowest_write_ms", stalls.slowest_write_ms);
        report.count("write_stall_ms", stalls.stalled_ms);
    }
}

/// Opens the newest published version of the store for a command that only reads it.
pub fn open_reader(store_path: &Path) -> anyhow::Result<Store> {
    Store::open_reader(store_path)
}

/// [`open_reader`] with a block cache of at most `block_cache_bytes`, for commands that
/// bound their memory (`--memory-mb`).
pub fn open_reader_with_cache(
    store_path: &Path,
    block_cache_bytes: usize,
) -> anyhow::Result<Store> {
    Store::open_reader_with(
        store_path,
        crate::schema::Schema::embedded()?,
        block_cache_bytes,
    )
}

/// A file a command writes, whose write errors name it: "No space left on device" alone
/// does not say which disk is full.
pub struct NamedWriter<W> {
    inner: W,
    path: std::path::PathBuf,
}

impl<W: std::io::Write> NamedWriter<W> {
    pub fn new(inner: W, path: &Path) -> Self {
        NamedWriter {
            inner,
            path: path.to_path_buf(),
        }
    }

    fn name(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(
            e.kind(),
            format!("cannot write {}: {e}", self.path.display()),
        )
    }
}

impl<W: std::io::Write> std::io::Write for NamedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.name(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.name(e))
    }
}

/// Names the database a projection writes in an error that does not: SQLite's "database
/// or disk is full" says neither which database nor which disk (its temporary files go
/// to `SQLITE_TMPDIR`, else the system's temporary directory).
pub fn name_database(error: anyhow::Error, db: &Path) -> anyhow::Error {
    let full = error.chain().any(|cause| {
        cause
            .downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code)
            == Some(rusqlite::ErrorCode::DiskFull)
            || cause
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::StorageFull)
    });
    if full {
        let context = format!(
            "writing {}: its disk (or that of SQLite's temporary files) is full",
            db.display()
        );
        error.context(context)
    } else {
        error
    }
}

/// The exit status of a run that finished, decided from its report
/// ([`Report::outcome`]): 0 when nothing was skipped or unresolved, 3 when problems were
/// found. A run that stops (including `--strict` on the first problem) returns an error
/// instead, which `cli::main` turns into 1.
pub fn finished(report: &Report) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(report.outcome().exit_code()))
}

/// The exit status of a short command that has no run report (get, stats, schema, …):
/// it either did what was asked (0) or returned an error.
pub fn done() -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(exit::OK))
}

/// A mistake in how a command was called, found after parsing (e.g. an unknown column,
/// which needs the store's schema to tell): exit status 2, like clap's own usage errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Returns a `UsageError` with a formatted message (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! usage_error {
    ($($arg:tt)*) => {
        return Err($crate::commands::UsageError(format!($($arg)*)).into())
    };
}

/// Marks the error of checking an argument as a usage error (exit status 2).
pub fn usage<T, E: std::fmt::Display>(result: Result<T, E>) -> anyhow::Result<T> {
    result.map_err(|e| UsageError(format!("{e:#}")).into())
}

/// `--commit-every SECS` as a duration (negative: at once; too large: never).
pub fn commit_interval(seconds: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(std::time::Duration::MAX)
}
