//! `sediment backfill-cdx`: CDX files into the store, without the WARCs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::filter::{FileFilter, FilterArgs};
use crate::ingest::cdx_files::{CdxBackfill, backfill_cdx, plan_cdx};
use crate::report::{Report, ReportArgs};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment backfill-cdx crawl/*.cdx.gz --rejects bad-lines.jsonl
  sediment backfill-cdx --bulk --quiet --report backfill.json /data/cdx/*.cdx.gz
  sediment backfill-cdx --mime application/pdf --status 200 index.cdx")]
pub struct Args {
    /// CDX or CDXJ files (plain or gzip), or `-` for standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Apply inputs the store has already ingested.
    #[arg(long)]
    pub force: bool,
    /// Commit (derive rows, record inputs, publish a version readers see) after inputs
    /// started within this many seconds are done.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub commit_every: f64,
    /// Stop at the first bad line (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Write every rejected line to this file (JSON lines: file, line, reason, raw).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    /// Bulk load for large loads, initial or into a store that holds captures: sorted SST
    /// files ingested atomically instead of batched writes (same resulting store).
    #[arg(long)]
    pub bulk: bool,
    /// Memory for a bulk load, in MB: its batches (a larger load is written in several),
    /// the store's block cache and the rest of the process; default: a quarter of the
    /// available memory.
    #[arg(long, value_name = "MB")]
    pub bulk_memory_mb: Option<usize>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "backfill-cdx";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?;
    let inputs = plan_cdx(&args.files, &report)?;
    if inputs.is_empty() {
        // Nothing to read: a store is neither created nor changed for it.
        report.finish("lines", None)?;
        return super::finished(&report);
    }
    let store = super::open_creator(store_path, COMMAND)?;
    let bulk_memory = super::bulk_memory(&store, COMMAND, args.bulk, args.bulk_memory_mb);
    let options = CdxBackfill {
        filter: FileFilter::from_args(&args.filter),
        threads: args.threads,
        force: args.force,
        commit_every: super::commit_interval(args.commit_every),
        bulk_memory,
        // The command ends with the backfill.
        exit_after: true,
    };
    backfill_cdx(&store, &inputs, &options, &report)?;
    super::count_write_stalls(&store, &report);
    store.close()?;
    report.finish("lines", None)?;
    super::finished(&report)
}
