//! `sediment project jdbm -o DIR`: the JDBM indexer's maps as sorted TSV files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::ingest::thread_count;
use crate::project::budget::{DEFAULT_MEMORY_MB, MemoryBudget};
use crate::project::jdbm::write_jdbm;
use crate::project::run::report_unread_bodies;
use crate::project::wordindex::{Options, Snapshot, prepare_output_dir};
use crate::report::{Report, ReportArgs};
use crate::store::captures::estimate_count;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment project jdbm -o jdbm/ --warc-dir /data/warcs
  sediment lookup-jdbm jdbm/ archive")]
pub struct Args {
    /// Output directory: PageIDtoURL.tsv, URLtoPageID.tsv, … (nine maps).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// Directories holding the WARC files the documents are read from.
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Bytes of a document read at most.
    #[arg(long, default_value_t = 16 << 20)]
    pub max_body_bytes: usize,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Memory budget in MiB (caches, the sorts' buffers, the scratch database's and the
    /// store's block caches); a larger budget is faster, a smaller one gives the same
    /// files. The URLs, pages and words beyond it go to temporary files in the output
    /// directory.
    #[arg(long, default_value_t = DEFAULT_MEMORY_MB)]
    pub memory_mb: usize,
    /// Bytes of each sorted run spilled to disk (default: from --memory-mb).
    #[arg(long, hide = true)]
    pub sort_run_bytes: Option<usize>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let memory = MemoryBudget::new(args.memory_mb);
    let store = super::open_reader_with_cache(store_path, memory.block_cache_bytes())?;
    let report = Report::new("project jdbm").output(&args.reporting);
    report.start_progress(estimate_count(&store), "captures");
    prepare_output_dir(&args.output)?;
    let options = Options {
        warc_dirs: args.warc_dirs,
        max_body_bytes: args.max_body_bytes,
        keep_bodies: false,
        keep_forward: true,
        spill_dir: args.output.clone(),
        threads: thread_count(args.threads),
        memory,
        sort_run_bytes: args.sort_run_bytes,
        progress: report.progress().clone(),
    };
    // The scratch databases and sort runs live in the output directory too: a full disk
    // there is named, whichever file met it.
    let (snapshot, written) = (|| {
        let mut snapshot = Snapshot::build(&store, &options)?;
        let order = snapshot.crawl_order()?;
        let written = write_jdbm(&mut snapshot, &order, &args.output)?;
        anyhow::Ok((snapshot, written))
    })()
    .map_err(|e| super::name_database(e, &args.output))?;
    report.add_counts(&snapshot.counts);
    report.add_counts(&written.counts);
    report.count("sort_runs_spilled", snapshot.spilled_runs());
    report.count("output_bytes", written.bytes);
    report_unread_bodies(&report, "body_");
    report.finish("pages", None)?;
    super::finished(&report)
}
