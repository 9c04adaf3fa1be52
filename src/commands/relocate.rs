//! `sediment relocate OLD NEW`: re-points the WARC files of a moved collection.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::capture::Capture;
use crate::payload::WarcLocator;
use crate::store::locations::{KnownWarc, Relocation, relocate};

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
    let store = super::open_writer(store_path, "relocate")?;
    let rules = store.relocations()?;
    let known = store.known_warcs()?;
    let current = |warc: &KnownWarc| {
        warc.location
            .as_deref()
            .map(|l| relocate(&rules, l))
            .unwrap_or_else(|| relocate(&rules, &warc.name))
    };
    let from = match old_prefix(&args.old_prefix, &known, &current) {
        Ok(from) => from,
        Err(message) => {
            store.close()?;
            return Err(super::UsageError(message).into());
        }
    };
    let rule = Relocation {
        to: new_prefix(&args.new_prefix, &from),
        from,
    };
    let (mut files, mut captures, mut now_found) = (0u64, 0u64, 0u64);
    for warc in known {
        let current = current(&warc);
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

/// The prefix of the stored locations that `given` means. Locations are canonical
/// absolute paths, while `sediment warcs` also prints each file's name as it was given to
/// the import (often relative): a prefix that starts no location but starts names is
/// turned into the location prefix those files share (`crawls/` → `/data/x/crawls/`).
/// A relative prefix that matches neither is taken from the working directory.
fn old_prefix(
    given: &str,
    known: &[KnownWarc],
    current: &dyn Fn(&KnownWarc) -> String,
) -> Result<String, String> {
    if known.iter().any(|w| current(w).starts_with(given)) {
        return Ok(given.to_string());
    }
    let mut derived = std::collections::BTreeSet::new();
    for warc in known.iter().filter(|w| w.location.is_some()) {
        if let Some(rest) = warc.name.strip_prefix(given) {
            let location = current(warc);
            if let Some(prefix) = location.strip_suffix(rest) {
                derived.insert(prefix.to_string());
            }
        }
    }
    match derived.len() {
        0 => Ok(absolute(given)),
        1 => Ok(derived.pop_first().unwrap_or_default()),
        _ => Err(format!(
            "{given} starts the names of WARC files that are in different places ({}): give \
             the location prefix instead",
            derived.into_iter().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The new prefix as readers will use it: a relative one is taken from the working
/// directory (readers run from anywhere), unless the old prefix is relative too (names of
/// captures learned from CDX lines, found under --warc-dir).
fn new_prefix(given: &str, old: &str) -> String {
    if Path::new(old).is_absolute() {
        absolute(given)
    } else {
        given.to_string()
    }
}

/// `given` made absolute against the working directory, its trailing `/` kept.
fn absolute(given: &str) -> String {
    if Path::new(given).is_absolute() {
        return given.to_string();
    }
    match std::path::absolute(given) {
        Ok(path) => {
            let mut text = path.display().to_string();
            if given.ends_with('/') && !text.ends_with('/') {
                text.push('/');
            }
            text
        }
        Err(_) => given.to_string(),
    }
}
