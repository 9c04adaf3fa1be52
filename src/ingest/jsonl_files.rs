//! Importing JSON lines (rows written by `export`, and with the capture and warcinfo
//! lines of `export --captures`, the whole store). Captures go through the ingest's write
//! path (merged into both capture orders), and the file rows of their digests are derived
//! again at the end of each input, as an ingest does. What `sediment import-jsonl` and
//! the library's `Store::import_jsonl` run.

use std::path::PathBuf;

use anyhow::Result;
use rayon::prelude::*;

use crate::capture::Capture;
use crate::ingest::rows::RowSink;
use crate::ingest::warc::WarcInfo;
use crate::input::{LineChunks, open_lines, plan_inputs, record_done};
use crate::jsonl::{Line, LineError, parse_line};
use crate::report::{Counts, Location, Report};
use crate::store::backend::{Batch, Op};
use crate::store::materialize::materialize_dirty;
use crate::store::writer::{Writer, now_millis};
use crate::store::{PUBLISH_INTERVAL, Space, Store};
use crate::wacz::page::{StoredPage, page_key};

const COMMAND: &str = "import-jsonl";

/// How JSON lines are imported.
pub struct JsonlImport {
    /// Apply inputs the store has already ingested.
    pub force: bool,
    /// Stop at the first bad line.
    pub strict: bool,
    /// Bulk load rows through SST files with batches of this many bytes (RocksDB).
    pub bulk_memory: Option<usize>,
}

/// A line number, the raw line, and its parse (`None` for a blank line).
type ParsedLine<'a> = (u64, &'a [u8], Option<Result<Line, LineError>>);

/// Imports the JSON-lines files among `paths` into the open `store`.
pub fn import_jsonl(
    store: &Store,
    paths: &[PathBuf],
    options: &JsonlImport,
    report: &Report,
) -> Result<()> {
    let ts = now_millis();
    let bulk_memory = options.bulk_memory;
    for input in plan_inputs(paths, |_| true, report)? {
        let skipped = "already imported, skipped (use --force to apply again)";
        if input.skip_if_done(store, COMMAND, "", options.force, report, skipped)? {
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
        let mut sink = RowSink::new(store, ts, bulk_memory)?;
        // The lines before a read error are kept.
        while let Some(chunk) = chunks.next_reported(report, &name)? {
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
            let mut pages: Vec<StoredPage> = Vec::new();
            let mut failed: Vec<Capture> = Vec::new();
            let mut problems = Vec::new();
            for (line_no, raw, result) in parsed {
                counts.incr("lines");
                match result {
                    None => counts.incr("blank_lines"),
                    // Under --strict the run stops at the first bad line: what follows it
                    // is not written.
                    Some(Ok(_)) if options.strict && !problems.is_empty() => {}
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
                    Some(Ok(Line::Page(page))) => {
                        counts.incr("pages");
                        pages.push(*page);
                    }
                    Some(Err(e)) => problems.push((line_no, raw, e)),
                }
            }
            sink.write(rows)?;
            // Captures merge, so their order among themselves and with the rows does not
            // matter; in a bulk load too they take the write path (another key space).
            let mut writer = Writer::sorted(store, ts);
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
            if !pages.is_empty() {
                let mut batch = Batch::default();
                for page in &pages {
                    batch.push(Op::Put {
                        space: Space::Meta,
                        key: page_key(&crate::surt::surt(&page.url), &page.ts),
                        value: serde_json::to_vec(page)?,
                    });
                }
                store.write(&batch)?;
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
            let stats = materialize_dirty(store, ts)?;
            report.count("rows_derived", stats.rows);
        }
        store.flush()?;
        let rows = report.counts().get("rows") - rows_before;
        let captures = report.counts().get("captures") - captures_before;
        if chunks.complete() {
            record_done(
                store,
                COMMAND,
                "",
                &input,
                serde_json::json!({ "rows": rows, "captures": captures }),
            )?;
        }
        store.mark_consistent()?;
        store.publish_if_due(PUBLISH_INTERVAL)?;
    }
    Ok(())
}
