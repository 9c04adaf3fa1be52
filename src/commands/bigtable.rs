//! `sediment bigtable create`: the Bigtable tables of a `bigtable://` store.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::schema::Schema;
use crate::store::bigtable::{Address, create_tables};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment --store bigtable://my-project/my-instance/files bigtable create
  BIGTABLE_EMULATOR_HOST=127.0.0.1:8086 sediment --store bigtable://p/i/files bigtable create")]
pub struct Args {
    #[command(subcommand)]
    pub command: BigtableCommand,
}

#[derive(clap::Subcommand)]
pub enum BigtableCommand {
    /// Create the files table (families and GC policies from schemas/table.json) and its
    /// companion tables, or complete them; safe to run again.
    #[command(after_help = "Examples:
  sediment --store bigtable://my-project/my-instance/files bigtable create")]
    Create,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let Some(address) = Address::parse(store_path)? else {
        return Err(super::UsageError(format!(
            "`sediment bigtable` needs --store bigtable://PROJECT/INSTANCE/TABLE, not {}",
            store_path.display()
        ))
        .into());
    };
    match args.command {
        BigtableCommand::Create => {
            for line in create_tables(&address, &Schema::embedded()?)? {
                println!("{line}");
            }
        }
    }
    super::done()
}
