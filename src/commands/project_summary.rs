//! `sediment project summary -o summary.db`: captures and their HTML into the summary
//! database; run it again after new imports to bring the database up to date.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::project::budget::{DEFAULT_MEMORY_MB, MemoryBudget};
use crate::project::limits::PageLimits;
use crate::project::run::report_unread_bodies;
use crate::project::summary::{SummaryOptions, summarize};
use crate::report::{Report, ReportArgs};
use crate::store::captures::estimate_count;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment project summary -o summary.db --warc-dir /data/warcs
  sediment project summary -o summary.db --json | jq .counts")]
pub struct Args {
    /// The summary database to create or update.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Directories holding the WARC files (the stored path is tried under each, with and
    /// without its directory part).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub limits: PageLimits,
    /// Captures per transaction [default: a thirty-second of the memory budget, at 512
    /// bytes a capture: 3,584 with the default budget].
    #[arg(long)]
    pub batch: Option<usize>,
    /// Memory budget in MiB for the caches (ids, analyses, SQLite's page cache); a larger
    /// budget is faster, a smaller one gives the same database.
    #[arg(long, default_value_t = DEFAULT_MEMORY_MB)]
    pub memory_mb: usize,
    /// Worker threads for HTML analysis (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "project summary";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let memory = MemoryBudget::new(args.memory_mb);
    let store = super::open_reader_with_cache(store_path, memory.block_cache_bytes())?;
    let report = Report::new(COMMAND).output(&args.reporting);
    report.start_progress(estimate_count(&store), "captures");
    let options = SummaryOptions {
        warc_dirs: args.warc_dirs,
        limits: args.limits,
        batch_captures: args.batch.unwrap_or_else(|| memory.prefetch_captures() / 2),
        memory,
        spill_dir: crate::project::run::spill_dir_of(&args.output),
    };
    let run = || {
        summarize(&store, &args.output, &options, &report)
            .map_err(|e| super::name_database(e, &args.output))
    };
    match args.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()?
            .install(run)?,
        None => run()?,
    }
    report_unread_bodies(&report, "bodies_unavailable_");
    report.finish("captures", None)?;
    super::finished(&report)
}
