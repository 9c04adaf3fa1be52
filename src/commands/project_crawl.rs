//! `sediment project crawl -o crawl.db`: the crawl database (see `project::crawl` and
//! `schemas/crawl.sql`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::ingest::thread_count;
use crate::project::budget::{DEFAULT_MEMORY_MB, MemoryBudget};
use crate::project::crawl::{
    CrawlOptions, TEXT_BYTES_PER_COMMIT, open_crawl_db_with, project_crawl,
};
use crate::project::limits::PageLimits;
use crate::project::run::report_unread_bodies;
use crate::report::{Report, ReportArgs};
use crate::store::captures::estimate_count;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment project crawl -o crawl.db
  sediment project crawl -o crawl.db --warc-dir /data/warcs --report crawl.json")]
pub struct Args {
    /// The SQLite database to write (created if missing; an existing crawl database gets
    /// the captures it does not hold yet).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Directories holding the WARC files, for the text of HTML bodies (the stored path is
    /// tried under each, with and without its directory part). Captures whose WARC is not
    /// found get no file_text; they are counted as problems (exit status 3).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Threads reading and parsing HTML bodies (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub limits: PageLimits,
    /// Memory budget in MiB for the caches (ids, analysed pages, SQLite's page cache); a
    /// larger budget is faster, a smaller one gives the same database.
    #[arg(long, default_value_t = DEFAULT_MEMORY_MB)]
    pub memory_mb: usize,
    /// Captures written per transaction at most [default: a sixteenth of the memory budget,
    /// at 512 bytes a capture: 7,168 with the default budget].
    #[arg(long)]
    pub batch: Option<usize>,
    /// Page text written per transaction at most, in KiB: each commit lets the database
    /// file catch up with the write-ahead log while the run goes on.
    #[arg(long, default_value_t = TEXT_BYTES_PER_COMMIT >> 10)]
    pub commit_text_kib: usize,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let memory = MemoryBudget::new(args.memory_mb);
    let store = super::open_reader_with_cache(store_path, memory.block_cache_bytes())?;
    let conn = open_crawl_db_with(&args.output, memory)?;
    let options = CrawlOptions {
        warc_dirs: args.warc_dirs,
        threads: thread_count(args.threads),
        max_body_bytes: args.limits.max_body_bytes,
        max_text_bytes: args.limits.max_text_bytes,
        batch_size: args.batch.unwrap_or_else(|| memory.prefetch_captures()),
        text_per_commit: args.commit_text_kib.saturating_mul(1 << 10),
        memory,
        spill_dir: crate::project::run::spill_dir_of(&args.output),
    };
    let report = Report::new("project crawl").output(&args.reporting);
    report.start_progress(estimate_count(&store), "captures");
    project_crawl(&store, &conn, &options, &report)
        .map_err(|e| super::name_database(e, &args.output))?;
    drop(conn);
    report_unread_bodies(&report, "bodies_unavailable_");
    report.finish("captures", None)?;
    super::finished(&report)
}
