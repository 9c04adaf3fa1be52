//! `sediment import-warc`: WARC files into the store, in parallel across files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use crate::filter::{FileFilter, FilterArgs};
use crate::ingest::follow::{Follow, follow, stop_on_signals};
use crate::ingest::warc_files::{WarcImport, import_warcs, plan_warcs};
use crate::report::{Report, ReportArgs};

#[derive(clap::Args)]
#[command(
    after_help = "With --follow, a file is imported once its writer has given it its final name
(warcprox and Heritrix rename NAME.warc.gz.open when they close it) and it has not changed
for --settle seconds; each round of such files is committed and published, so a running
`sediment serve` shows its captures within seconds. Files imported before (same path and
size, unchanged since) are passed over without reading them. Ctrl-C or SIGTERM stops it
between rounds.

Examples:
  sediment import-warc /data/warcs/ --threads 8
  sediment import-warc --all-types --json crawl.warc.gz > import.json
  sediment import-warc --follow /data/warcprox/warcs   # while a crawler writes there"
)]
pub struct Args {
    /// WARC files (gzip per record, whole-file gzip, or uncompressed), directories
    /// (searched for *.warc, *.warc.gz), or `-` for standard input.
    #[arg(required_unless_present = "follow", conflicts_with = "follow")]
    pub inputs: Vec<PathBuf>,
    /// Keep importing the WARC files that appear in DIR (one level) until stopped.
    #[arg(long, value_name = "DIR")]
    pub follow: Option<PathBuf>,
    /// With --follow: seconds a file must stay unchanged before it is imported.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, requires = "follow")]
    pub settle: f64,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Apply inputs the store has already ingested.
    #[arg(long)]
    pub force: bool,
    /// Write every capture through RocksDB's memtables, even into an empty store. Without
    /// it, a wave of inputs that starts on an empty store is collected in memory (up to a
    /// quarter of the memory available per batch) and loaded as sorted SST files, which
    /// is faster and gives the same store.
    #[arg(long)]
    pub no_bulk: bool,
    /// Commit (derive rows, record inputs, publish a version readers see) after inputs
    /// started within this many seconds are done.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub commit_every: f64,
    /// Stop at the first bad record (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Write every problem to this file (JSON lines: file, offset, reason).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    /// The name of the WARC read from standard input (`-`): the file name or path under
    /// which it is kept, recorded as its location (required with `-`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "import-warc";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    // A usage error before anything is read or created.
    stdin_name(&args)?;
    if let Some(dir) = &args.follow {
        return run_follow(store_path, dir, &args);
    }
    let report = report_for(&args)?;
    let inputs = plan_warcs(&args.inputs, &report)?;
    if inputs.is_empty() {
        // Nothing to read: a store is neither created nor changed for it.
        report.finish("bytes", Some(0))?;
        return super::finished(&report);
    }
    let store = super::open_creator(store_path, COMMAND)?;
    let options = import_options(&args)?;
    let total_bytes = import_warcs(&store, inputs, &options, &report)?;
    super::count_write_stalls(&store, &report);
    store.close()?;
    report.count("bytes", total_bytes);
    report.finish("bytes", Some(total_bytes))?;
    super::finished(&report)
}

fn report_for(args: &Args) -> Result<Report> {
    Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())
}

fn import_options(args: &Args) -> Result<WarcImport> {
    Ok(WarcImport {
        filter: FileFilter::from_args(&args.filter),
        threads: args.threads,
        force: args.force,
        commit_every: super::commit_interval(args.commit_every),
        stdin_name: stdin_name(args)?,
        bulk_into_empty: !args.no_bulk,
    })
}

/// `--follow DIR`: imports until stopped by a signal.
fn run_follow(store_path: &Path, dir: &Path, args: &Args) -> Result<ExitCode> {
    if !dir.is_dir() {
        return Err(crate::commands::UsageError(format!(
            "--follow needs a directory; {} is not one",
            dir.display()
        ))
        .into());
    }
    let stop = stop_on_signals();
    let report = report_for(args)?;
    let store = super::open_creator(store_path, COMMAND)?;
    let options = import_options(args)?;
    let watch = Follow {
        dir: dir.to_path_buf(),
        settle: Duration::from_secs_f64(args.settle.clamp(0.0, 86_400.0)),
        poll: Duration::from_millis(500),
    };
    report.note(&format!(
        "following {} (Ctrl-C or SIGTERM to stop)",
        dir.display()
    ));
    let total_bytes = follow(&store, &watch, &options, &report, stop)?;
    super::count_write_stalls(&store, &report);
    store.close()?;
    report.count("bytes", total_bytes);
    report.finish("bytes", Some(total_bytes))?;
    super::finished(&report)
}

/// `--name` is what a WARC read from standard input is called and found by later.
fn stdin_name(args: &Args) -> Result<Option<String>> {
    let reads_stdin = args.inputs.iter().any(|p| p == Path::new("-"));
    match (&args.name, reads_stdin) {
        (Some(name), true) if !name.trim().is_empty() => Ok(Some(name.clone())),
        (_, true) => Err(crate::commands::UsageError(
            "a WARC read from standard input needs --name NAME: the file name (or path) it is \
             kept under, so that its payloads can be read back later"
                .into(),
        )
        .into()),
        (Some(_), false) => Err(crate::commands::UsageError(
            "--name names a WARC read from standard input; give `-` as the input".into(),
        )
        .into()),
        (None, false) => Ok(None),
    }
}
