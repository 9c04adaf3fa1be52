//! `sediment write-range`: one key range of record lines (standard input) written
//! straight into a shared store (`bigtable://…`), its file rows derived; prints what it
//! wrote. The Spark application's tasks run it when the store is a Bigtable table.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::scaleout::mutations::write_range;
use crate::scaleout::ranges::{SortArgs, range_input};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sort -k1,1 range-0003.records | sediment --store bigtable://P/I/T write-range --ts 1700000000000
  (the Spark application runs it for bigtable:// stores: scripts/spark/sediment_spark.py)")]
pub struct Args {
    /// The timestamp (ms) of the run: the one `ingest-sst --ts` gets.
    #[arg(long)]
    pub ts: u64,
    #[command(flatten)]
    pub sorting: SortArgs,
}

const COMMAND: &str = "write-range";

pub fn run(store_path: &std::path::Path, args: Args) -> Result<ExitCode> {
    let store = super::open_creator(store_path, COMMAND)?;
    let scratch = tempfile::tempdir().context("cannot create a directory for sorting")?;
    let mut input = range_input(std::io::stdin(), args.sorting.sort_in(scratch.path()))?;
    let written = write_range(&store, args.ts, &mut *input)?;
    store.close()?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &written)?;
    out.write_all(b"\n")?;
    super::done()
}
