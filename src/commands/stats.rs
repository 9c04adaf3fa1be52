//! `sediment stats`: what the store holds.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use crate::store::Store;
use crate::store::captures::count_captures;
use crate::store::cells::Projection;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment stats
  sediment --store /data/store stats --json")]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct Stats {
    pub rows: u64,
    pub cells: BTreeMap<String, u64>,
    pub mime_types: BTreeMap<String, u64>,
    pub payload_bytes: u64,
    pub captures: u64,
    pub inputs: u64,
    pub store_bytes_on_disk: u64,
}

pub fn collect(store: &Store) -> Result<Stats> {
    let schema = store.schema();
    let mut stats = Stats::default();
    let mime = schema.column_id("file:mime");
    let size = schema.column_id("file:size");
    for id in schema.column_ids() {
        stats.cells.insert(schema.column(id).full_name(), 0);
    }
    store.scan_rows(&Projection::all(schema), None, None, |row| {
        stats.rows += 1;
        for cell in &row.cells {
            *stats
                .cells
                .entry(schema.column(cell.column).full_name())
                .or_default() += 1;
            let Some(latest) = cell.versions.first() else {
                continue;
            };
            if Some(cell.column) == mime {
                let name = String::from_utf8_lossy(&latest.value).into_owned();
                *stats.mime_types.entry(name).or_default() += 1;
            } else if Some(cell.column) == size
                && let Ok(bytes) = <[u8; 8]>::try_from(latest.value.as_slice())
            {
                stats.payload_bytes += u64::from_be_bytes(bytes);
            }
        }
        Ok(true)
    })?;
    stats.captures = count_captures(store)?;
    stats.inputs = store.inputs()?.len() as u64;
    stats.store_bytes_on_disk = store.size_on_disk();
    Ok(stats)
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let stats = collect(&store)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&stats)?)?;
        return super::done();
    }
    writeln!(out, "store      {}", store_path.display())?;
    writeln!(out, "rows       {}", stats.rows)?;
    writeln!(out, "captures   {}", stats.captures)?;
    writeln!(out, "inputs     {}", stats.inputs)?;
    writeln!(out, "payload    {} bytes", stats.payload_bytes)?;
    writeln!(out, "on disk    {} bytes", stats.store_bytes_on_disk)?;
    writeln!(out, "cells per column:")?;
    for (name, n) in &stats.cells {
        writeln!(out, "  {name:<22} {n}")?;
    }
    writeln!(out, "MIME types:")?;
    let mut mimes: Vec<_> = stats.mime_types.iter().collect();
    mimes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (name, n) in mimes {
        writeln!(out, "  {name:<40} {n}")?;
    }
    super::done()
}
