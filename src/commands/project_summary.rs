//! `sediment project summary -o summary.db`: captures and their HTML into the summary
//! database; run it again after new imports to bring the database up to date.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::project::budget::{DEFAULT_MEMORY_MB, MemoryBudget};
use crate::project::summary::{SummaryOptions, summarize};
use crate::report::Report;

#[derive(clap::Args)]
pub struct Args {
    /// The summary database to create or update.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Directories holding the WARC files (the stored path is tried under each, with and
    /// without its directory part).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Bodies longer than this are cut before analysis (bytes, after decompression).
    #[arg(long, default_value_t = 16 << 20)]
    pub max_body_bytes: usize,
    /// Captures per transaction and round of parallel HTML analysis.
    #[arg(long, default_value_t = 2048)]
    pub batch: usize,
    /// Memory budget in MiB for the caches (ids, analyses, SQLite's page cache); a larger
    /// budget is faster, a smaller one gives the same database.
    #[arg(long, default_value_t = DEFAULT_MEMORY_MB)]
    pub memory_mb: usize,
    /// Worker threads for HTML analysis (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the run's counts as one JSON object on standard output.
    #[arg(long)]
    pub json: bool,
}

const COMMAND: &str = "project summary";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let report = Report::new(COMMAND).with_progress(None, "captures");
    let options = SummaryOptions {
        warc_dirs: args.warc_dirs,
        max_body_bytes: args.max_body_bytes,
        batch_captures: args.batch,
        memory: MemoryBudget::new(args.memory_mb),
    };
    let run = || summarize(&store, &args.output, &options, &report);
    match args.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()?
            .install(run)?,
        None => run()?,
    }
    report.finish("captures", None)?;
    if args.json {
        let out = serde_json::json!({
            "counts": report.counts(),
            "seconds": report.elapsed().as_secs_f64(),
        });
        println!("{out}");
    }
    super::finished()
}
