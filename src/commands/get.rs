//! `sediment get KEY`: one row as a JSON object.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::jsonl::write_row;
use crate::key::Sha1Key;
use crate::store::backend::Space;
use crate::store::cells::Projection;

/// Captures of a row-less digest counted for the message, at most.
const SHOWN_CAPTURES: u64 = 1000;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment get 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ
  sediment get sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ --versions 3")]
pub struct Args {
    /// Row key: base32, 40-character hex, or sha1:BASE32.
    pub key: String,
    /// Versions per cell to show (with their timestamps).
    #[arg(long)]
    pub versions: Option<usize>,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let key = super::usage(Sha1Key::parse(&args.key))?;
    let store = super::open_reader(store_path)?;
    let mut projection = Projection::all(store.schema());
    projection.versions = args.versions.unwrap_or(1).max(1);
    let Some(row) = store.read_row(&key, &projection)? else {
        // A digest of revisits only, or of captures the file filter left out, has
        // captures but no row: say where they are.
        let mut captures = 0u64;
        store.scan_prefix(Space::ByDigest, key.as_bytes(), &mut |_, _| {
            captures += 1;
            Ok(captures < SHOWN_CAPTURES)
        })?;
        if captures > 0 {
            let count = if captures < SHOWN_CAPTURES {
                captures.to_string()
            } else {
                format!("{SHOWN_CAPTURES} or more")
            };
            bail!(
                "no row with key {key} in {}, but {count} capture(s) have this payload \
                 digest (revisits, or captures the file filter left out): list them with \
                 `sediment captures --digest {key}`",
                store_path.display()
            );
        }
        bail!(
            "no row with key {key} ({}) in {}",
            key.to_hex(),
            store_path.display()
        );
    };
    let mut out = Vec::new();
    write_row(
        store.schema(),
        &row,
        args.versions.is_some(),
        &mut out,
        &mut Vec::new(),
    );
    std::io::stdout().write_all(&out)?;
    super::done()
}
