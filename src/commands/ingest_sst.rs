//! `sediment ingest-sst`: the key ranges of a distributed ingest into the store, as its
//! one writer; the inputs are recorded and a version is published.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::report::{Report, ReportArgs};
use crate::scaleout::ingest::{
    check_complete, finish_written, ingest, load_inputs, load_ranges, store_plan,
};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment --store STORE ingest-sst ranges/* --inputs summaries.jsonl --ts 1700000000000
  sediment --store bigtable://P/I/T ingest-sst --inputs summaries.jsonl --ts 1700000000000 \
      --records-written 123456
  (the Spark application runs it on the driver: scripts/spark/sediment_spark.py)")]
pub struct Args {
    /// Range directories written by `write-sst` (none when the inputs printed no record).
    pub ranges: Vec<PathBuf>,
    /// The input summaries (JSON lines: the last line of each `extract`).
    #[arg(long, required_unless_present = "plan")]
    pub inputs: Option<PathBuf>,
    /// The timestamp (ms) of derived cells, the one given to `write-sst`.
    #[arg(long, required_unless_present = "plan")]
    pub ts: Option<u64>,
    /// For a shared store (Bigtable), whose ranges `write-range` wrote directly: the
    /// records they wrote, in total. Derives what they left and records the inputs.
    #[arg(long, conflicts_with_all = ["ranges", "plan"])]
    pub records_written: Option<u64>,
    /// Print what a distributed ingest must know first (JSON: whether the store is
    /// empty, the inputs it completed) and change nothing.
    #[arg(long)]
    pub plan: bool,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "ingest-sst";

pub fn run(store_path: &std::path::Path, args: Args) -> Result<ExitCode> {
    if args.plan {
        println!("{}", serde_json::to_string(&store_plan(store_path)?)?);
        return super::done();
    }
    let inputs_path = args.inputs.context("--inputs is required")?;
    let inputs = load_inputs(
        std::fs::File::open(&inputs_path)
            .with_context(|| format!("cannot open {}", inputs_path.display()))?,
    )?;
    let ts = args.ts.context("--ts is required")?;
    let ranges = load_ranges(&args.ranges)?;
    let report = Report::new(COMMAND).output(&args.reporting);
    let store;
    let stats = match args.records_written {
        Some(written) => {
            store = super::open_creator(store_path, COMMAND)?;
            finish_written(&store, &report, ts, written, &inputs)?
        }
        None => {
            check_complete(&ranges, &inputs)?;
            store = super::open_creator(store_path, COMMAND)?;
            ingest(&store, &report, ts, &ranges, &inputs)?
        }
    };
    store.close()?;
    let captures: u64 = inputs
        .iter()
        .filter(|g| !g.part.skipped)
        .map(|g| g.counts.get("captures").copied().unwrap_or(0))
        .sum();
    report.count("inputs", stats.inputs);
    report.count("inputs_skipped", stats.inputs_skipped);
    report.count("captures", captures);
    report.count("ranges", ranges.len() as u64);
    report.count("sst_files", stats.sst_files);
    report.count("rows_written", stats.rows);
    report.count("duplicates", stats.duplicates);
    report.finish("captures", None)?;
    super::finished(&report)
}
