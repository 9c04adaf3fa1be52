//! The file filter: which captures become rows of the `files` table.
//!
//! Every capture is kept in the capture key space; only captures passing the filter
//! locate a file row. Default: HTTP 200 responses (and WARC resource records), not
//! revisits, with a valid SHA-1. Shared by `backfill-cdx` and `import-warc`.

use crate::capture::CaptureKind;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only files of this MIME type (repeatable; compared after normalization, so
    /// application/x-pdf counts as application/pdf).
    #[arg(long = "mime", value_name = "TYPE")]
    pub mimes: Vec<String>,
    /// Only captures with these HTTP status codes (default 200).
    #[arg(long = "status", value_name = "CODE", num_args = 1.., value_delimiter = ',')]
    pub statuses: Vec<u16>,
    /// Captures of every HTTP status locate files (redirect and error bodies too).
    #[arg(long, conflicts_with = "statuses")]
    pub all_statuses: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFilter {
    /// `None` accepts every status.
    statuses: Option<Vec<u16>>,
    /// Normalized MIME types; empty accepts every type.
    mimes: Vec<String>,
}

impl Default for FileFilter {
    fn default() -> Self {
        FileFilter {
            statuses: Some(vec![200]),
            mimes: Vec::new(),
        }
    }
}

impl FileFilter {
    pub fn from_args(args: &FilterArgs) -> FileFilter {
        let statuses = if args.all_statuses {
            None
        } else if args.statuses.is_empty() {
            Some(vec![200])
        } else {
            let mut s = args.statuses.clone();
            s.sort_unstable();
            s.dedup();
            Some(s)
        };
        let mut mimes: Vec<String> = args
            .mimes
            .iter()
            .filter_map(|m| crate::mime::normalize(m).map(|n| n.into_owned()))
            .collect();
        mimes.sort();
        mimes.dedup();
        FileFilter { statuses, mimes }
    }

    /// Whether a capture locates a file row. `mime` is the normalized type.
    pub fn passes(
        &self,
        kind: CaptureKind,
        status: Option<u16>,
        mime: Option<&str>,
        has_digest: bool,
    ) -> bool {
        if !has_digest || kind == CaptureKind::Revisit {
            return false;
        }
        let status_ok = match (&self.statuses, kind) {
            (None, _) => true,
            // Resource records carry no HTTP exchange: they are the file itself.
            (Some(_), CaptureKind::Resource) => true,
            (Some(list), _) => status.is_some_and(|s| list.contains(&s)),
        };
        let mime_ok =
            self.mimes.is_empty() || mime.is_some_and(|m| self.mimes.iter().any(|x| x == m));
        status_ok && mime_ok
    }

    /// A stable spelling of the filter, part of an input's identity in the registry
    /// (the same file under another filter writes other rows).
    pub fn describe(&self) -> String {
        let statuses = match &self.statuses {
            None => "all".to_string(),
            Some(list) => list
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(","),
        };
        format!("status={statuses};mime={}", self.mimes.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_filter_takes_200_responses_and_resources() {
        let f = FileFilter::default();
        assert!(f.passes(CaptureKind::Response, Some(200), Some("text/html"), true));
        assert!(!f.passes(CaptureKind::Response, Some(301), Some("text/html"), true));
        assert!(!f.passes(CaptureKind::Response, None, None, true));
        assert!(
            !f.passes(CaptureKind::Response, Some(200), None, false),
            "needs a digest"
        );
        assert!(!f.passes(CaptureKind::Revisit, Some(200), None, true));
        assert!(f.passes(CaptureKind::Resource, None, Some("application/pdf"), true));
        assert_eq!(f.describe(), "status=200;mime=");
    }

    #[test]
    fn options_narrow_or_widen() {
        let pdf = FileFilter::from_args(&FilterArgs {
            mimes: vec!["application/x-pdf".into()],
            ..Default::default()
        });
        assert!(pdf.passes(
            CaptureKind::Response,
            Some(200),
            Some("application/pdf"),
            true
        ));
        assert!(!pdf.passes(CaptureKind::Response, Some(200), Some("text/html"), true));
        assert_eq!(pdf.describe(), "status=200;mime=application/pdf");

        let all = FileFilter::from_args(&FilterArgs {
            all_statuses: true,
            ..Default::default()
        });
        assert!(all.passes(CaptureKind::Response, Some(404), None, true));
        assert!(all.passes(CaptureKind::Response, None, None, true));

        let some = FileFilter::from_args(&FilterArgs {
            statuses: vec![404, 200, 404],
            ..Default::default()
        });
        assert!(some.passes(CaptureKind::Response, Some(404), None, true));
        assert!(!some.passes(CaptureKind::Response, Some(301), None, true));
        assert_eq!(some.describe(), "status=200,404;mime=");
    }
}
