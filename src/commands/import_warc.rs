//! `sediment import-warc`: WARC files into the store, in parallel across files.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::filter::{FileFilter, FilterArgs};
use crate::ingest::warc::WarcImporter;
use crate::ingest::{IngestRun, thread_count};
use crate::report::Report;

#[derive(clap::Args)]
pub struct Args {
    /// WARC files (gzip per record, whole-file gzip, or uncompressed), directories
    /// (searched for *.warc, *.warc.gz), or `-` for standard input.
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
    /// Stop at the first bad record (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Write every problem to this file (JSON lines: file, offset, reason).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
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
    let store = super::open_writer(store_path, COMMAND)?;
    let filter = FileFilter::from_args(&args.filter);
    let report = Report::new(COMMAND)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?;
    let run = IngestRun::new(&store, &report, COMMAND, filter.describe());
    let inputs = run.plan(&args.inputs, is_warc_name)?;
    let total_bytes: u64 = inputs.iter().filter_map(|i| i.size).sum();
    report.start_progress(Some(total_bytes), "bytes");
    run.apply(
        inputs,
        thread_count(args.threads),
        args.force,
        |input, writer| {
            let importer = WarcImporter {
                store: &store,
                report: &report,
                filter: &filter,
                path: input.display(),
            };
            let counts = if input.path == Path::new("-") {
                importer.import(std::io::stdin().lock(), writer)?
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
    report.count("bytes", total_bytes);
    report.finish("bytes", Some(total_bytes))?;
    super::finished()
}
