//! `sediment export-captures`: the capture index as Parquet files, streamed in URL order.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::columnar::{Layout, ParquetWriter};
use crate::report::{Report, ReportArgs};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment export-captures --format parquet --crawl my-crawl -o captures/
  duckdb -c \"SELECT crawl, subset, count(*) FROM read_parquet('captures/*/*/*.parquet', \\
    hive_partitioning = 1) GROUP BY ALL\"")]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: Format,
    /// The directory to write `crawl=NAME/subset=SUBSET/part-NNNNN.parquet` files into
    /// (Common Crawl's partitions; subsets `warc`, `crawldiagnostics`, `robotstxt`).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The name of the `crawl` partition, so exports of several stores can share a
    /// directory and be queried together.
    #[arg(long, default_value = "sediment")]
    pub crawl: String,
    /// Rows per file at most.
    #[arg(long, default_value_t = Layout::default().file_rows)]
    pub file_rows: u64,
    /// Size of a row group (MB, encoded): the unit readers scan and skip by.
    #[arg(long, default_value_t = Layout::default().row_group_bytes >> 20)]
    pub row_group_mb: usize,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Common Crawl's columnar URL index layout.
    Parquet,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let report = Report::new("export-captures")
        .output(&args.reporting)
        .with_progress(crate::store::captures::estimate_count(&store), "captures");
    let Format::Parquet = args.format;
    let layout = Layout {
        file_rows: args.file_rows.max(1),
        row_group_bytes: args.row_group_mb.max(1) << 20,
        ..Layout::default()
    };
    let mut writer = ParquetWriter::create(&args.output, &args.crawl, layout)?;
    store.for_each_capture(|capture| {
        writer.push(&capture)?;
        report.progress().inc(1);
        Ok(true)
    })?;
    let stats = writer.finish()?;
    report.count("captures", stats.rows);
    report.count("files", stats.files.len() as u64);
    report.count("row_groups", stats.row_groups);
    report.finish("captures", None)?;
    super::finished(&report)
}
