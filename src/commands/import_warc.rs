//! `sediment import-warc`: WARC files into the store, in parallel across files.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};

use crate::filter::{FileFilter, FilterArgs};
use crate::ingest::warc::WarcImporter;
use crate::ingest::{IngestRun, thread_count};
use crate::input::{InputKind, plan_inputs, refuse_kind, report_empty_directories};
use crate::report::{Report, ReportArgs};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment import-warc /data/warcs/ --threads 8
  sediment import-warc --all-types --json crawl.warc.gz > import.json")]
pub struct Args {
    /// WARC files (gzip per record, whole-file gzip, or uncompressed), WACZ packages
    /// (their WARCs read in place, their hashes checked), directories (searched for
    /// *.warc, *.warc.gz, *.wacz), or `-` for standard input.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
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

/// Names that directory expansion treats as WARC files.
pub fn is_warc_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let stdin_name = stdin_name(&args)?;
    let filter = FileFilter::from_args(&args.filter);
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?;
    let mut inputs = plan_inputs(
        &args.inputs,
        |p| is_warc_name(p) || crate::wacz::is_wacz_name(p),
        &report,
    )?;
    refuse_kind(&mut inputs, InputKind::Cdx, &report)?;
    report_empty_directories(
        &args.inputs,
        &inputs,
        "WARC files (*.warc, *.warc.gz, *.wacz)",
        &report,
    )?;
    if inputs.is_empty() {
        // Nothing to read: a store is neither created nor changed for it.
        report.finish("bytes", Some(0))?;
        return super::finished(&report);
    }
    let store = super::open_creator(store_path, COMMAND)?;
    let mut run = IngestRun::new(&store, &report, COMMAND, filter.describe());
    run.commit_interval = std::time::Duration::try_from_secs_f64(args.commit_every.max(0.0))
        .unwrap_or(std::time::Duration::MAX);
    let file_bytes: u64 = inputs.iter().filter_map(|i| i.size).sum();
    let stdin_bytes = AtomicU64::new(0);
    report.start_progress(Some(file_bytes), "bytes");
    run.apply(
        inputs,
        thread_count(args.threads),
        args.force,
        |input, writer| {
            let (path, location) = match &stdin_name {
                Some(name) if input.is_stdin() => (name.clone(), absolute(Path::new(name))),
                _ => (input.display(), canonical(&input.path)),
            };
            let importer = WarcImporter {
                report: &report,
                filter: &filter,
                path,
                location,
            };
            let counts = if !input.is_stdin() && crate::wacz::is_wacz_name(&input.path) {
                crate::wacz::read::WaczImporter {
                    report: &report,
                    filter: &filter,
                    path: input.display(),
                    location: canonical(&input.path),
                }
                .import(input, writer)?
            } else if input.is_stdin() {
                let mut counted = Counted {
                    inner: std::io::stdin().lock(),
                    bytes: &stdin_bytes,
                };
                importer.import(&mut counted, writer)?
            } else {
                let file = File::open(&input.path)
                    .with_context(|| format!("cannot open {}", input.display()))?;
                let mut reader = input.hashing(file);
                let counts = importer.import(&mut reader, writer)?;
                reader.finish()?;
                counts
            };
            report.add_counts(&counts);
            Ok(serde_json::to_value(&counts)?)
        },
    )?;
    store.close()?;
    // Standard input has no size beforehand: its bytes are counted as they are read.
    let total_bytes = file_bytes + stdin_bytes.load(Ordering::Relaxed);
    report.count("bytes", total_bytes);
    report.finish("bytes", Some(total_bytes))?;
    super::finished(&report)
}

/// A reader that counts the bytes read through it.
struct Counted<'a, R> {
    inner: R,
    bytes: &'a AtomicU64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
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

/// The canonical absolute path of an input file (symbolic links resolved).
fn canonical(path: &Path) -> Option<String> {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
}

/// An absolute path for a name given on the command line (the file need not exist).
fn absolute(path: &Path) -> Option<String> {
    std::path::absolute(path)
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
}
