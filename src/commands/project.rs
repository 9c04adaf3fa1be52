//! `sediment project …`: the store projected into other shapes.

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
    /// The summary database: entity generations, text piles, links, duplicates and a
    /// full-text index for `sediment search` (SQLite, schemas/summary.sql).
    Summary(super::project_summary::Args),
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    match args.command {
        ProjectCommand::Summary(args) => super::project_summary::run(store_path, args),
    }
}
