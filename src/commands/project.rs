//! `sediment project …`: the store's captures as other databases.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ProjectCommand,
}

#[derive(clap::Subcommand)]
pub enum ProjectCommand {
    /// The crawl database (seed schema "Crawler schema as of release 3.0"): agents, crawl
    /// log, requests, files with their HTML text, redirects and crawl candidates.
    Crawl(super::project_crawl::Args),
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    match args.command {
        ProjectCommand::Crawl(args) => super::project_crawl::run(store_path, args),
    }
}
