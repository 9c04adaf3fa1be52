//! `sediment schema`: the table schema as a table.

use std::process::ExitCode;

use anyhow::Result;

use crate::schema::Schema;

#[derive(clap::Args)]
pub struct Args {
    /// Print the schema document (JSON) instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.json {
        print!("{}", crate::schema::EMBEDDED_SCHEMA);
    } else {
        print!("{}", Schema::embedded()?);
    }
    super::finished()
}
