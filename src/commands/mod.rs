//! One module per subcommand; each reads like a short recipe over the library.

pub mod backfill_cdx;
pub mod captures;
pub mod cat;
pub mod catalog;
pub mod cdx;
pub mod export;
pub mod export_captures;
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
pub mod serve;
pub mod stats;
pub mod warcs;
pub mod write_sst;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::store::{Store, WriterOptions};

/// `--wait`: a writer queues behind another writer instead of failing.
static WAIT_FOR_WRITER: AtomicBool = AtomicBool::new(false);

pub fn set_wait_for_writer(wait: bool) {
    WAIT_FOR_WRITER.store(wait, Ordering::Relaxed);
}

/// Opens the store for a command that writes it (creating it when the directory is new).
pub fn open_writer(store_path: &Path, command: &str) -> anyhow::Result<Store> {
    let mut options = WriterOptions::new(command);
    options.wait = WAIT_FOR_WRITER.load(Ordering::Relaxed);
    Store::open_writer(store_path, &options)
}

/// Opens the newest published version of the store for a command that only reads it.
pub fn open_reader(store_path: &Path) -> anyhow::Result<Store> {
    Store::open_reader(store_path)
}

/// A mistake in how a command was called (exit status 2, like clap's own usage errors).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Exit status of a run that finished: non-zero when problems were found in strict mode
/// is handled by returning an error instead, so a finished run is a success.
pub fn finished() -> anyhow::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
