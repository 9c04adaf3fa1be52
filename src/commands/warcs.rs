//! `sediment warcs`: every WARC file the store's captures name, and whether it is found.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use crate::capture::Capture;
use crate::payload::WarcLocator;
use crate::store::locations::KnownWarc;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment warcs                         # list every WARC, found or missing
  sediment warcs --missing --warc-dir /mnt/crawls")]
pub struct Args {
    /// Directories to look in for WARC files not found where they were imported from.
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Only the WARC files that are not found.
    #[arg(long)]
    pub missing: bool,
    /// JSON lines instead of tab-separated columns.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    warc: &'a KnownWarc,
    found: Option<String>,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let locator = WarcLocator::new(&args.warc_dirs);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut found, mut missing) = (0u64, 0u64);
    for warc in store.known_warcs()? {
        let probe = Capture {
            warc: Some(warc.name.clone()),
            location: warc.location.clone(),
            ..Default::default()
        };
        let path = locator.resolve_capture(&store, &probe)?;
        match path {
            Some(_) => found += 1,
            None => missing += 1,
        }
        if args.missing && path.is_some() {
            continue;
        }
        let found = path.map(|p| p.display().to_string());
        if args.json {
            serde_json::to_writer(&mut out, &Line { warc: &warc, found })?;
            out.write_all(b"\n")?;
        } else {
            writeln!(
                out,
                "{}\t{}\t{}\t{}",
                if found.is_some() { "found" } else { "missing" },
                warc.captures,
                warc.name,
                found.or(warc.location.clone()).unwrap_or_default()
            )?;
        }
    }
    out.flush()?;
    crate::diag!("warcs: {found} found, {missing} missing");
    if missing > 0 {
        crate::diag!(
            "hint: give the directories that hold missing WARC files with --warc-dir, or \
             re-point a moved collection with `sediment relocate OLD_PREFIX NEW_PREFIX`"
        );
    }
    super::done()
}
