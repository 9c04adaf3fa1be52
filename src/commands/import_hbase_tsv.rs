//! `sediment import-hbase-tsv`: migration from tab-separated dumps of the original
//! HBase table (`sha1:BASE32 \t f:c JSON \t file:mime \t file:cdx JSON`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::input::{LineChunks, open_lines, plan_inputs, record_done};
use crate::key::Sha1Key;
use crate::report::{Location, Report, ReportArgs};
use crate::schema::{ColumnId, Schema};
use crate::store::PUBLISH_INTERVAL;
use crate::store::writer::{Writer, now_millis};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment import-hbase-tsv dump.tsv.gz
  sediment import-hbase-tsv --columns f:c,file:mime --rejects bad-lines.jsonl dump.tsv")]
pub struct Args {
    /// TSV files (plain or gzip), or `-` for standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The columns after the key, in order.
    #[arg(long, value_delimiter = ',', default_value = "f:c,file:mime,file:cdx")]
    pub columns: Vec<String>,
    /// Stop at the first bad line (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Apply inputs the store has already ingested.
    #[arg(long)]
    pub force: bool,
    /// Write every bad line to this file (JSON lines).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "import-hbase-tsv";

/// A refused TSV line: stable reason code and message.
#[derive(Debug, PartialEq, Eq)]
pub struct TsvError {
    pub code: &'static str,
    pub message: String,
}

/// A row read from a TSV line: its key and the stored bytes of its non-empty cells.
pub struct TsvRow {
    pub key: Sha1Key,
    pub cells: Vec<(ColumnId, Vec<u8>)>,
}

/// Parses one TSV line. Empty fields are absent cells.
pub fn parse_tsv_line(
    schema: &Schema,
    columns: &[ColumnId],
    line: &[u8],
) -> Result<TsvRow, TsvError> {
    let err = |code, message: String| TsvError { code, message };
    let text = std::str::from_utf8(line).map_err(|e| err("not_utf8", format!("not UTF-8: {e}")))?;
    let mut fields = text.split('\t');
    let key_text = fields.next().unwrap_or_default();
    let key = Sha1Key::parse(key_text).map_err(|e| err("bad_key", e.to_string()))?;
    let values: Vec<&str> = fields.collect();
    if values.len() != columns.len() {
        return Err(err(
            "wrong_field_count",
            format!(
                "{} fields after the key, expected {} ({})",
                values.len(),
                columns.len(),
                columns
                    .iter()
                    .map(|c| schema.column(*c).full_name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut cells = Vec::with_capacity(columns.len());
    for (&column, value) in columns.iter().zip(values) {
        if value.is_empty() {
            continue;
        }
        let col = schema.column(column);
        let bytes = col
            .value_type
            .encode_text(value)
            .map_err(|e| err("bad_value", format!("{}: {e}", col.full_name())))?;
        cells.push((column, bytes));
    }
    Ok(TsvRow { key, cells })
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_creator(store_path, COMMAND)?;
    let schema = store.schema();
    let columns: Vec<ColumnId> = super::usage(
        args.columns
            .iter()
            .map(|n| {
                schema.column_id(n).with_context(|| {
                    format!("unknown column {n:?} in --columns (see `sediment schema`)")
                })
            })
            .collect::<Result<_>>(),
    )?;
    let options = args.columns.join(",");
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?
        .with_progress(None, "lines");
    let ts = now_millis();
    for input in plan_inputs(&args.files, |_| true, &report)? {
        let skipped = "already imported, skipped (use --force to apply again)";
        if input.skip_if_done(&store, COMMAND, &options, args.force, &report, skipped)? {
            continue;
        }
        store.mark_inconsistent()?;
        let name = input.display();
        let rows_before = report.counts().get("rows");
        let reader = match open_lines(&input.path) {
            Ok(reader) => reader,
            Err(e) => {
                let at = Location::named(name);
                report.problem(at, "unreadable_input", &format!("{e:#}"), None)?;
                continue;
            }
        };
        let mut chunks = LineChunks::new(reader, 8 << 20);
        let mut writer = Writer::sorted(&store, ts);
        // The lines before a read error are kept.
        while let Some(chunk) = chunks.next_reported(&report, &name)? {
            for (line_no, line) in chunk.lines() {
                report.count("lines", 1);
                if line.iter().all(u8::is_ascii_whitespace) {
                    report.count("blank_lines", 1);
                    continue;
                }
                match parse_tsv_line(schema, &columns, line) {
                    Ok(TsvRow { key, cells }) => {
                        for (column, value) in &cells {
                            writer.put_cell(&key, *column, value);
                        }
                        writer.end_record()?;
                        report.count("rows", 1);
                        report.count("cells", cells.len() as u64);
                    }
                    Err(e) => {
                        let at = Location::line(name.clone(), line_no);
                        report.problem(at, e.code, &e.message, Some(line))?;
                    }
                }
            }
        }
        writer.finish()?;
        store.flush()?;
        let rows = report.counts().get("rows") - rows_before;
        if chunks.complete() {
            record_done(
                &store,
                COMMAND,
                &options,
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
