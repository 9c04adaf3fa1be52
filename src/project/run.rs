//! What every projection run shares: where it spills, and how it reports the bodies it
//! could not read.

use std::path::{Path, PathBuf};

use crate::project::source::missing_warcs;
use crate::report::{Location, Report};

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
