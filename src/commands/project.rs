//! `sediment project …`: the store projected into the shapes of other systems.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use super::{project_crawl, project_jdbm, project_locust, project_summary};
use crate::project::source::missing_warcs;
use crate::report::{Location, Report};
use crate::store::{Space, Store};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment project crawl -o crawl.db --warc-dir /data/warcs
  sediment project summary -o summary.db")]
pub struct Args {
    #[command(subcommand)]
    pub command: ProjectCommand,
}

#[derive(Subcommand)]
pub enum ProjectCommand {
    /// The crawl database (seed schema "Crawler schema as of release 3.0"): agents, crawl
    /// log, requests, files with their HTML text, redirects and crawl candidates.
    Crawl(project_crawl::Args),
    /// The summary database: entity generations, text piles, links, duplicates and a
    /// full-text index for `sediment search` (SQLite, schemas/summary.sql).
    Summary(project_summary::Args),
    /// The locust / ASPseek word index: MySQL DDL and INSERT files.
    Locust(project_locust::Args),
    /// The JDBM indexer's nine maps as sorted key/value files.
    Jdbm(project_jdbm::Args),
}

pub fn run(store: &Path, args: Args) -> Result<ExitCode> {
    match args.command {
        ProjectCommand::Crawl(args) => project_crawl::run(store, args),
        ProjectCommand::Summary(args) => project_summary::run(store, args),
        ProjectCommand::Locust(args) => project_locust::run(store, args),
        ProjectCommand::Jdbm(args) => project_jdbm::run(store, args),
    }
}

/// The number of captures in the store, for the progress bar's total and ETA: RocksDB's
/// estimate (free to ask, close enough for an ETA; the bar grows if it is short).
/// `None` (a spinner without ETA) on backends that cannot tell cheaply.
pub fn capture_estimate(store: &Store) -> Option<u64> {
    let rocks = store.backend().as_rocks()?;
    rocks
        .db()
        .property_int_value_cf(rocks.space_cf(Space::Capture), "rocksdb.estimate-num-keys")
        .ok()
        .flatten()
        .filter(|&n| n > 0)
}

/// Where a projection into `output` spills its sorted runs: beside it, on the disk that
/// is to hold the result anyway (a system temporary directory may be a small tmpfs).
pub fn spill_dir_of(output: &Path) -> PathBuf {
    match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Why a body can be unread that the user can fix or must know about; each unread body
/// is a problem of its reason (exit status 3). A file with no stored WARC location at all
/// (a CDX without the WARC column) is not among them: nothing can be read for it.
const UNREAD_REASONS: [(&str, &str); 3] = [
    (
        "warc_read_error",
        "their WARC records could not be read or did not match their key",
    ),
    (
        "unsupported_content_encoding",
        "their Content-Encoding cannot be decoded by this build",
    ),
    ("warc_not_found", ""),
];

/// Turns the projection's counters of bodies it could not read (`PREFIX` + reason, as
/// counted by the projection) into problems, naming the first WARC files not found and
/// suggesting `--warc-dir`.
pub fn report_unread_bodies(report: &Report, prefix: &str) {
    let counts = report.counts();
    for (reason, why) in UNREAD_REASONS {
        let n = counts.get(&format!("{prefix}{reason}"));
        if n == 0 {
            continue;
        }
        if reason != "warc_not_found" {
            report.bulk_problem(reason, n, &format!("{n} bodies were not read: {why}"), &[]);
            continue;
        }
        let (first, files, more) = missing_warcs().first();
        const SHOWN: usize = 3;
        let mut named = first
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if files > SHOWN {
            let at_least = if more { "at least " } else { "" };
            named.push_str(&format!(" and {at_least}{} more", files - SHOWN));
        }
        let message = format!(
            "{n} bodies were not read: their WARC files were not found ({named}); give the directories that hold them with --warc-dir DIR"
        );
        let examples: Vec<Location> = first.iter().map(Location::named).collect();
        report.bulk_problem(reason, n, &message, &examples);
    }
}
