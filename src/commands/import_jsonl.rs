//! `sediment import-jsonl`: rows written by `export`, read back losslessly.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use rayon::prelude::*;

use crate::input::{LineChunks, open_lines, plan_inputs, record_done};
use crate::jsonl::{LineError, ParsedRow, parse_row};
use crate::report::{Counts, Location, Report, ReportArgs};
use crate::store::PUBLISH_INTERVAL;
use crate::store::bulk::default_memory_limit;
use crate::store::bulk_cells::{CellLoader, CellRun};
use crate::store::writer::{Writer, now_millis};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment import-jsonl rows.jsonl.gz
  sediment --store restored import-jsonl --bulk export.jsonl.gz
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

/// A line number, the raw line, and its parse (`None` for a blank line).
type ParsedLine<'a> = (u64, &'a [u8], Option<Result<ParsedRow, LineError>>);

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_writer(store_path, COMMAND)?;
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?
        .with_progress(None, "lines");
    let ts = now_millis();
    if args.bulk && store.backend().as_rocks().is_none() {
        crate::diag!(
            "import-jsonl: --bulk writes SST files for the embedded store; {} gets batched \
             mutations instead",
            store.describe()
        );
    }
    let bulk_memory = (args.bulk && store.backend().as_rocks().is_some()).then(|| {
        args.bulk_memory_mb
            .map_or_else(default_memory_limit, |mb| mb << 20)
    });
    for input in plan_inputs(&args.files, |_| true, &report)? {
        let skipped = "already imported, skipped (use --force to apply again)";
        if input.skip_if_done(&store, COMMAND, "", args.force, &report, skipped)? {
            continue;
        }
        store.mark_inconsistent()?;
        let rows_before = report.counts().get("rows");
        let name = input.display();
        let reader = match open_lines(&input.path) {
            Ok(reader) => reader,
            Err(e) => {
                let at = Location::named(name);
                report.problem(at, "unreadable_input", &format!("{e:#}"), None)?;
                continue;
            }
        };
        let mut chunks = LineChunks::new(reader, 8 << 20);
        let mut shards = match bulk_memory {
            Some(memory) => RowSink::Bulk(CellLoader::new(&store, ts, memory)?),
            None => RowSink::Shards(RowShards::new(&store, ts)),
        };
        // The lines before a read error are kept.
        while let Some(chunk) = chunks.next_reported(&report, &name)? {
            let parsed: Vec<ParsedLine> = chunk
                .lines()
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|(n, line)| {
                    let blank = line.iter().all(u8::is_ascii_whitespace);
                    (n, line, (!blank).then(|| parse_row(store.schema(), line)))
                })
                .collect();
            let mut counts = Counts::default();
            let mut rows = shards.empty_split();
            let mut problems = Vec::new();
            for (line_no, raw, result) in parsed {
                counts.incr("lines");
                match result {
                    None => counts.incr("blank_lines"),
                    // Under --strict the run stops at the first bad line: what follows it
                    // is not written.
                    Some(Ok(_)) if args.strict && !problems.is_empty() => {}
                    Some(Ok(row)) => {
                        counts.incr("rows");
                        counts.add("cells", row.cells.len() as u64);
                        rows[shards.shard_of(&row)].push(row);
                    }
                    Some(Err(e)) => problems.push((line_no, raw, e)),
                }
            }
            shards.write(rows)?;
            for (line_no, raw, e) in problems {
                let at = Location::line(name.clone(), line_no);
                report.problem(at, e.code, &e.message, Some(raw))?;
            }
            report.add_counts(&counts);
            report.progress().inc(counts.get("lines"));
        }
        shards.finish()?;
        store.flush()?;
        let rows = report.counts().get("rows") - rows_before;
        if chunks.complete() {
            record_done(
                &store,
                COMMAND,
                "",
                &input,
                serde_json::json!({ "rows": rows }),
            )?;
        }
        store.mark_consistent()?;
        store.publish_if_due(PUBLISH_INTERVAL)?;
    }
    store.close()?;
    report.finish("lines", None)?;
    super::finished(&report)
}

/// Where parsed rows go: the write path, or a bulk load.
enum RowSink<'s> {
    Shards(RowShards<'s>),
    Bulk(CellLoader<'s>),
}

impl RowSink<'_> {
    fn shard_of(&self, row: &ParsedRow) -> usize {
        match self {
            RowSink::Shards(shards) => shards.shard_of(row),
            // Runs are encoded in parallel; one key stays in one run, in input order.
            RowSink::Bulk(_) => usize::from(row.key.as_bytes()[0]) % rayon::current_num_threads(),
        }
    }

    fn empty_split(&self) -> Vec<Vec<ParsedRow>> {
        match self {
            RowSink::Shards(shards) => shards.empty_split(),
            RowSink::Bulk(_) => (0..rayon::current_num_threads())
                .map(|_| Vec::new())
                .collect(),
        }
    }

    fn write(&mut self, rows: Vec<Vec<ParsedRow>>) -> Result<()> {
        match self {
            RowSink::Shards(shards) => shards.write(rows),
            RowSink::Bulk(loader) => {
                let schema = loader.store().schema();
                let ts = loader.run_timestamp();
                let runs: Vec<CellRun> = rows
                    .into_par_iter()
                    .map(|rows| {
                        let cells: usize = rows.iter().map(|r| r.cells.len()).sum();
                        let bytes: usize = rows
                            .iter()
                            .flat_map(|r| &r.cells)
                            .map(|c| c.value.len() + 48)
                            .sum();
                        let mut run = CellRun::with_capacity(bytes, cells);
                        for row in rows {
                            for cell in &row.cells {
                                let qualifier = schema.column(cell.column).qualifier.as_bytes();
                                let ts = cell.ts.unwrap_or(ts);
                                run.put(&row.key, cell.column.family, qualifier, ts, &cell.value);
                            }
                        }
                        run
                    })
                    .collect();
                runs.into_iter().try_for_each(|run| loader.add(run))
            }
        }
    }

    fn finish(self) -> Result<()> {
        match self {
            RowSink::Shards(shards) => shards.finish(),
            RowSink::Bulk(loader) => loader.finish().map(|_| ()),
        }
    }
}

/// One sorted writer per thread, each owning the rows whose key falls in its shard, so
/// that the memtable inserts (most of an import's time) run on every core while the writes
/// to one row keep their input order: a later line still wins over an earlier one.
struct RowShards<'s> {
    writers: Vec<Writer<'s>>,
}

impl<'s> RowShards<'s> {
    fn new(store: &'s crate::store::Store, ts: u64) -> Self {
        let count = rayon::current_num_threads().max(1);
        RowShards {
            writers: (0..count).map(|_| Writer::sorted(store, ts)).collect(),
        }
    }

    fn shard_of(&self, row: &ParsedRow) -> usize {
        usize::from(row.key.as_bytes()[0]) % self.writers.len()
    }

    fn empty_split(&self) -> Vec<Vec<ParsedRow>> {
        (0..self.writers.len()).map(|_| Vec::new()).collect()
    }

    /// Writes the rows of each shard on its own thread (`rows[i]` are shard `i`'s); a
    /// shard writes its batch whenever it is full, at a row boundary.
    fn write(&mut self, rows: Vec<Vec<ParsedRow>>) -> Result<()> {
        self.writers
            .par_iter_mut()
            .zip(rows)
            .try_for_each(|(writer, rows)| {
                for row in rows {
                    for cell in row.cells {
                        let ts = cell.ts.unwrap_or(writer.run_timestamp());
                        writer.put_cell_value(&row.key, cell.column, ts, cell.value);
                    }
                    writer.end_record()?;
                }
                Ok(())
            })
    }

    fn finish(self) -> Result<()> {
        self.writers.into_par_iter().try_for_each(Writer::finish)
    }
}
