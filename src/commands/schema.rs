//! `sediment schema`: the table schema as a table.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::schema::Schema;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment schema
  sediment schema --json > table.json")]
pub struct Args {
    /// Print the schema document (JSON) instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if args.json {
        write!(out, "{}", crate::schema::EMBEDDED_SCHEMA)?;
    } else {
        write!(out, "{}", Schema::embedded()?)?;
    }
    super::done()
}
