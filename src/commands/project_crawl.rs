//! `sediment project crawl -o crawl.db`: the crawl database (see `project::crawl` and
//! `schemas/crawl.sql`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::ingest::thread_count;
use crate::project::crawl::{CrawlOptions, open_crawl_db, project_crawl};
use crate::report::Report;

#[derive(clap::Args)]
pub struct Args {
    /// The SQLite database to write (created if missing; an existing crawl database gets
    /// the captures it does not hold yet).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Directories holding the WARC files, for the text of HTML bodies (the stored path is
    /// tried under each, with and without its directory part). Captures whose WARC is not
    /// found get no file_text; they are counted.
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Threads reading and parsing HTML bodies (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Bytes of one decoded body read at most; longer bodies are cut (and counted).
    #[arg(long, default_value_t = 16 << 20)]
    pub max_body_bytes: usize,
    /// Captures written per transaction.
    #[arg(long, default_value_t = 4096)]
    pub batch: usize,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let conn = open_crawl_db(&args.output)?;
    let options = CrawlOptions {
        warc_dirs: args.warc_dirs,
        threads: thread_count(args.threads),
        max_body_bytes: args.max_body_bytes,
        batch_size: args.batch,
        ..CrawlOptions::default()
    };
    let report = Report::new("project crawl");
    report.start_progress(None, "captures");
    project_crawl(&store, &conn, &options, &report)?;
    drop(conn);
    report.finish("captures", None)?;
    super::finished()
}
