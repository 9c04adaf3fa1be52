//! `sediment relocate OLD NEW`: re-points the WARC files of a moved collection.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::capture::Capture;
use crate::payload::WarcLocator;
use crate::store::locations::{Relocation, relocate};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment relocate /mnt/old-disk/crawls/ /data/crawls/
  sediment relocate ITEM-2017/ /data/items/ITEM-2017/ --dry-run")]
pub struct Args {
    /// The prefix the stored locations start with (or the WARC names as given, for
    /// captures learned from CDX lines).
    pub old_prefix: String,
    /// What that prefix is now.
    pub new_prefix: String,
    /// Show what would be re-pointed, and whether it would be found, without recording.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    if args.old_prefix.is_empty() {
        return Err(super::UsageError("the old prefix cannot be empty".into()).into());
    }
    let rule = Relocation {
        from: args.old_prefix.clone(),
        to: args.new_prefix.clone(),
    };
    let store = super::open_writer(store_path, "relocate")?;
    let rules = store.relocations()?;
    let (mut files, mut captures, mut now_found) = (0u64, 0u64, 0u64);
    for warc in store.known_warcs()? {
        let current = warc
            .location
            .as_deref()
            .map(|l| relocate(&rules, l))
            .unwrap_or_else(|| relocate(&rules, &warc.name));
        if !current.starts_with(&rule.from) {
            continue;
        }
        files += 1;
        captures += warc.captures;
        if Path::new(&rule.apply(&current)).is_file() {
            now_found += 1;
        }
    }
    writeln!(
        std::io::stdout().lock(),
        "{files} WARC files ({captures} captures) start with {}; {now_found} of them are found under {}",
        rule.from,
        rule.to
    )?;
    if args.dry_run || files == 0 {
        if files == 0 {
            crate::diag!(
                "relocate: nothing starts with {}; nothing recorded",
                rule.from
            );
        }
        store.close()?;
        return super::done();
    }
    store.add_relocation(&rule)?;
    store.close()?;
    // A quick check through the same path the readers take.
    let reader = super::open_reader(store_path)?;
    let locator = WarcLocator::new(&[]);
    let missing = reader
        .known_warcs()?
        .iter()
        .filter(|w| {
            let probe = Capture {
                warc: Some(w.name.clone()),
                location: w.location.clone(),
                ..Default::default()
            };
            locator
                .resolve_capture(&reader, &probe)
                .ok()
                .flatten()
                .is_none()
        })
        .count();
    crate::diag!("relocate: recorded; {missing} WARC files of the store are still not found");
    super::done()
}
