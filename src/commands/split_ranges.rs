//! `sediment split-ranges`: record lines (standard input) cut into the key ranges of a
//! distributed ingest, one block per range, for the engine to move without reading them.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::scaleout::ranges::{read_bounds, split};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment extract import-warc crawl.warc.gz | grep -v '^s' | sediment split-ranges --bounds bounds.txt
  (the Spark application runs it on each extract's records: scripts/spark/sediment_spark.py)

Output: blocks of each range's lines, in input order, each a header `RANGE<TAB>BYTES<TAB>LINES`
and the lines (BYTES bytes); `write-sst --sort` sorts the blocks a range gets.")]
pub struct Args {
    /// The range bounds: sorted partition keys, one per line (N bounds make N+1 ranges).
    #[arg(long, value_name = "FILE")]
    pub bounds: PathBuf,
    /// Memory for the ranges' pending lines, in MiB: a range's lines are written as a block
    /// when they reach this divided by the number of ranges (at least 64 KiB).
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub memory_mb: usize,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let text = std::fs::read(&args.bounds)
        .with_context(|| format!("cannot read {}", args.bounds.display()))?;
    let bounds = read_bounds(&text)
        .with_context(|| format!("{} is not a bounds file", args.bounds.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let block_bytes = ((args.memory_mb << 20) / (bounds.len() + 1)).max(64 << 10);
    split(std::io::stdin(), &bounds, block_bytes, &mut out)?;
    out.flush()?;
    super::done()
}
