//! `sediment import-jsonl`: rows written by `export`, read back losslessly; with the
//! capture and warcinfo lines of `export --captures`, the whole store. Captures go through
//! the ingest's write path (merged into both capture orders), and the file rows of their
//! digests are derived again at the end of each input, as an ingest does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use rayon::prelude::*;

use crate::capture::Capture;
use crate::ingest::rows::RowSink;
use crate::ingest::warc::WarcInfo;
use crate::input::{LineChunks, open_lines, plan_inputs, record_done};
use crate::jsonl::{Line, LineError, parse_line};
use crate::report::{Counts, Location, Report, ReportArgs};
use crate::store::PUBLISH_INTERVAL;
use crate::store::captures::materialize_dirty;
use crate::store::writer::{Writer, now_millis};

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

/// A line number, the raw line, and its parse (`None` for a blank line).
type ParsedLine<'a> = (u64, &'a [u8], Option<Result<Line, LineError>>);

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_creator(store_path, COMMAND)?;
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?
        .with_progress(None, "lines");
    let ts = now_millis();
    let bulk_memory = super::bulk_memory(&store, COMMAND, args.bulk, args.bulk_memory_mb);
    for input in plan_inputs(&args.files, |_| true, &report)? {
        let skipped = "already imported, skipped (use --force to apply again)";
        if input.skip_if_done(&store, COMMAND, "", args.force, &report, skipped)? {
            continue;
        }
        store.mark_inconsistent()?;
        let rows_before = report.counts().get("rows");
        let captures_before = report.counts().get("captures");
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
        let mut sink = RowSink::new(&store, ts, bulk_memory)?;
        // The lines before a read error are kept.
        while let Some(chunk) = chunks.next_reported(&report, &name)? {
            let parsed: Vec<ParsedLine> = chunk
                .lines()
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|(n, line)| {
                    let blank = line.iter().all(u8::is_ascii_whitespace);
                    (n, line, (!blank).then(|| parse_line(store.schema(), line)))
                })
                .collect();
            let mut counts = Counts::default();
            let mut rows = sink.empty_split();
            let mut captures: Vec<Capture> = Vec::new();
            let mut warcinfo: Vec<WarcInfo> = Vec::new();
            let mut failed: Vec<Capture> = Vec::new();
            let mut problems = Vec::new();
            for (line_no, raw, result) in parsed {
                counts.incr("lines");
                match result {
                    None => counts.incr("blank_lines"),
                    // Under --strict the run stops at the first bad line: what follows it
                    // is not written.
                    Some(Ok(_)) if args.strict && !problems.is_empty() => {}
                    Some(Ok(Line::Row(row))) => {
                        counts.incr("rows");
                        counts.add("cells", row.cells.len() as u64);
                        rows[sink.shard_of(&row)].push(row);
                    }
                    Some(Ok(Line::Capture(capture))) => {
                        counts.incr("captures");
                        captures.push(*capture);
                    }
                    Some(Ok(Line::FailedFetch(fetch))) => {
                        counts.incr("failed_fetches");
                        failed.push(*fetch);
                    }
                    Some(Ok(Line::Warcinfo(info))) => {
                        counts.incr("warcinfo");
                        warcinfo.push(*info);
                    }
                    Some(Err(e)) => problems.push((line_no, raw, e)),
                }
            }
            sink.write(rows)?;
            // Captures merge, so their order among themselves and with the rows does not
            // matter; in a bulk load too they take the write path (another key space).
            let mut writer = Writer::sorted(&store, ts);
            for capture in &captures {
                writer.add_capture(&capture.view());
                writer.end_record()?;
            }
            for fetch in &failed {
                writer.failed_fetch(&fetch.view());
                writer.end_record()?;
            }
            writer.finish()?;
            for info in &warcinfo {
                store.put_warcinfo(info)?;
            }
            for (line_no, raw, e) in problems {
                let at = Location::line(name.clone(), line_no);
                report.problem(at, e.code, &e.message, Some(raw))?;
            }
            report.add_counts(&counts);
            report.progress().inc(counts.get("lines"));
        }
        sink.finish()?;
        if report.counts().get("captures") > captures_before {
            report.progress().set_message("deriving file rows");
            let stats = materialize_dirty(&store, ts)?;
            report.count("rows_derived", stats.rows);
        }
        store.flush()?;
        let rows = report.counts().get("rows") - rows_before;
        let captures = report.counts().get("captures") - captures_before;
        if chunks.complete() {
            record_done(
                &store,
                COMMAND,
                "",
                &input,
                serde_json::json!({ "rows": rows, "captures": captures }),
            )?;
        }
        store.mark_consistent()?;
        store.publish_if_due(PUBLISH_INTERVAL)?;
    }
    store.close()?;
    report.finish("lines", None)?;
    super::finished(&report)
}
