//! `sediment write-sst`: one key range of record lines (standard input) into SST files for
//! `ingest-sst`; prints the range's manifest.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::scaleout::ranges::{SortArgs, range_input};
use crate::scaleout::sst::RangeWriter;
use crate::schema::Schema;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sort -k1,1 range-0003.records | sediment write-sst --out ranges/0003 --ts 1700000000000
  cat blocks-of-range-3/* | sediment write-sst --sort --out ranges/0003 --ts 1700000000000
  (the Spark application runs it: scripts/spark/sediment_spark.py)")]
pub struct Args {
    /// The directory to create for the range's files (it must not exist).
    #[arg(long)]
    pub out: PathBuf,
    /// The timestamp (ms) of derived cells: the one `ingest-sst --ts` gets.
    #[arg(long)]
    pub ts: u64,
    /// Derive the file rows of the range's digests (valid when the store holds no
    /// capture yet; `ingest-sst` checks).
    #[arg(long)]
    pub derive: bool,
    #[command(flatten)]
    pub sorting: SortArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let schema = Schema::embedded()?;
    let writer = RangeWriter::create(&args.out, &schema, args.ts, args.derive)?;
    // Sorted runs are unnamed files beside the range's own: they vanish with the process.
    let mut input = range_input(std::io::stdin(), args.sorting.sort_in(&args.out))?;
    let manifest = writer.write_all(&mut *input)?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &manifest)?;
    out.write_all(b"\n")?;
    super::done()
}
