//! `sediment import-jsonl`: rows written by `export`, read back losslessly; with the
//! capture and warcinfo lines of `export --captures`, the whole store. Captures go through
//! the ingest's write path (merged into both capture orders), and the file rows of their
//! digests are derived again at the end of each input, as an ingest does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::ingest::jsonl_files::{JsonlImport, import_jsonl};
use crate::report::{Report, ReportArgs};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment import-jsonl rows.jsonl.gz
  sediment --store restored import-jsonl --bulk export.jsonl.gz
  # a whole store, rows and captures (written by export --captures):
  sediment --store copy import-jsonl store.jsonl
  sediment --store copy import-jsonl --rejects bad-lines.jsonl --json rows.jsonl")]
pub struct Args {
    /// JSON-lines files (plain or gzip), or `-` for standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Stop at the first bad line (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Apply inputs the store has already ingested.
    #[arg(long)]
    pub force: bool,
    /// Write every bad line to this file (JSON lines: file, line, reason, raw).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    /// Bulk load for large loads (a whole export into a new store): sorted SST files
    /// ingested instead of batched writes (same resulting store).
    #[arg(long)]
    pub bulk: bool,
    /// Memory for one bulk batch, in MB (a larger load is written in several batches);
    /// default: a quarter of the available memory.
    #[arg(long, value_name = "MB")]
    pub bulk_memory_mb: Option<usize>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "import-jsonl";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_creator(store_path, COMMAND)?;
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?
        .with_progress(None, "lines");
    let bulk_memory = super::bulk_memory(&store, COMMAND, args.bulk, args.bulk_memory_mb);
    let options = JsonlImport {
        force: args.force,
        strict: args.strict,
        bulk_memory,
    };
    import_jsonl(&store, &args.files, &options, &report)?;
    super::count_write_stalls(&store, &report);
    store.close()?;
    report.finish("lines", None)?;
    super::finished(&report)
}
