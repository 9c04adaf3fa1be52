//! `sediment catalog load FILE…` and `sediment catalog get ID|DOI`: the bibliographic
//! catalog that `sediment match` matches against.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::catalog::normalize::normalize_doi;
use crate::catalog::{Added, Catalog, CatalogWriter, parse_record};
use crate::input::{LineChunks, open_lines, plan_inputs, record_done};
use crate::report::{Location, Report, ReportArgs};
use crate::store::PUBLISH_INTERVAL;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment catalog load crossref-works.jsonl.gz
  sediment catalog get 10.1234/abcd")]
pub struct Args {
    #[command(subcommand)]
    pub command: CatalogCommand,
}

#[derive(clap::Subcommand)]
pub enum CatalogCommand {
    /// Load JSON lines of Crossref API works (bare or in the API's `message` envelope),
    /// fatcat release entities, or bibjson ({doi, title, authors, year, journal}).
    Load(LoadArgs),
    /// Print catalog records by id (`doi:…`, `fatcat:…`) or DOI, as JSON lines.
    Get(GetArgs),
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment catalog load crossref-works.jsonl.gz
  sediment catalog load --rejects bad-lines.jsonl fatcat-releases.jsonl")]
pub struct LoadArgs {
    /// JSON-lines files (plain or gzip), or `-` for standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Load inputs the store has already loaded.
    #[arg(long)]
    pub force: bool,
    /// Stop at the first bad line (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Write every bad line to this file (JSON lines: file, line, reason, raw).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment catalog get 10.1234/abcd
  sediment catalog get doi:10.1234/abcd")]
pub struct GetArgs {
    /// A record id or a DOI.
    pub id: String,
}

const COMMAND: &str = "catalog-load";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    match args.command {
        CatalogCommand::Load(args) => load(store_path, args),
        CatalogCommand::Get(args) => get(store_path, args),
    }
}

fn load(store_path: &Path, args: LoadArgs) -> Result<ExitCode> {
    let store = super::open_creator(store_path, COMMAND)?;
    let report = Report::new("catalog load")
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?
        .with_progress(None, "lines");
    for input in plan_inputs(&args.files, |_| true, &report)? {
        let skipped = "already loaded, skipped (use --force to load again)";
        if input.skip_if_done(&store, COMMAND, "", args.force, &report, skipped)? {
            continue;
        }
        store.mark_inconsistent()?;
        let name = input.display();
        let before = report.counts();
        let mut chunks = LineChunks::new(open_lines(&input.path)?, 8 << 20);
        let mut writer = CatalogWriter::new(&store);
        while let Some(chunk) = chunks.next_chunk()? {
            chunks.report_overlong(&report, &name)?;
            for (line_no, line) in chunk.lines() {
                report.count("lines", 1);
                if line.iter().all(u8::is_ascii_whitespace) {
                    report.count("blank_lines", 1);
                    continue;
                }
                match parse_record(line) {
                    Ok(record) => {
                        let counter = match writer.add(record)? {
                            Added::New => "records_new",
                            Added::Replaced => "records_replaced",
                            Added::Unchanged => "records_unchanged",
                        };
                        report.count(counter, 1);
                    }
                    Err(e) => {
                        let at = Location::line(name.clone(), line_no);
                        report.problem(at, e.code, &e.message, Some(line))?;
                    }
                }
            }
            report.progress().set_position(report.counts().get("lines"));
        }
        chunks.report_overlong(&report, &name)?;
        writer.finish()?;
        store.flush()?;
        let after = report.counts();
        let delta = |k: &str| after.get(k) - before.get(k);
        record_done(
            &store,
            COMMAND,
            "",
            &input,
            serde_json::json!({
                "lines": delta("lines"),
                "records_new": delta("records_new"),
                "records_replaced": delta("records_replaced"),
            }),
        )?;
        store.mark_consistent()?;
        store.publish_if_due(PUBLISH_INTERVAL)?;
    }
    store.close()?;
    report.finish("lines", None)?;
    super::finished(&report)
}

fn get(store_path: &Path, args: GetArgs) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let catalog = Catalog::new(&store);
    let mut records = Vec::new();
    if let Some(record) = catalog.get(args.id.trim())? {
        records.push(record);
    } else if let Some(doi) = normalize_doi(&args.id) {
        records = catalog.by_doi(&doi)?;
    }
    if records.is_empty() {
        bail!("no catalog record with id or DOI {:?}", args.id);
    }
    let mut out = std::io::stdout().lock();
    for record in records {
        serde_json::to_writer(&mut out, &record)?;
        out.write_all(b"\n")?;
    }
    super::done()
}
