//! `sediment project …`: the store projected into the shapes of other systems.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use super::{project_crawl, project_jdbm, project_locust, project_summary};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment project crawl -o crawl.db --warc-dir /data/warcs
  sediment project summary -o summary.db")]
pub struct Args {
    #[command(subcommand)]
    pub command: ProjectCommand,
}

#[derive(Subcommand)]
pub enum ProjectCommand {
    /// The crawl database (seed schema "Crawler schema as of release 3.0"): agents, crawl
    /// log, requests, files with their HTML text, redirects and crawl candidates.
    Crawl(project_crawl::Args),
    /// The summary database: entity generations, text piles, links, duplicates and a
    /// full-text index for `sediment search` (SQLite, schemas/summary.sql).
    Summary(project_summary::Args),
    /// The locust / ASPseek word index: MySQL DDL and INSERT files.
    Locust(project_locust::Args),
    /// The JDBM indexer's nine maps as sorted key/value files.
    Jdbm(project_jdbm::Args),
}

pub fn run(store: &Path, args: Args) -> Result<ExitCode> {
    match args.command {
        ProjectCommand::Crawl(args) => project_crawl::run(store, args),
        ProjectCommand::Summary(args) => project_summary::run(store, args),
        ProjectCommand::Locust(args) => project_locust::run(store, args),
        ProjectCommand::Jdbm(args) => project_jdbm::run(store, args),
    }
}
