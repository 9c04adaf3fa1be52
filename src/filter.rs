//! The file filter: which captures become rows of the `files` table.
//!
//! Every capture is kept in the capture key space; only captures passing the filter
//! locate a file row. Default (README, "Which files get rows"): HTTP 200 responses (and
//! WARC resource records), not revisits, with a valid SHA-1 and a full-text MIME type from
//! `schemas/fulltext-types.json`. `--mime` replaces the type list, `--all-types` accepts
//! every type, `--status` / `--all-statuses` change the statuses. Shared by `backfill-cdx`
//! and `import-warc`.

use crate::capture::CaptureKind;
use crate::mime::{FULLTEXT_WORD, fulltext, parse_mime_arg};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// File rows only for these MIME types instead of the full-text list (repeatable or
    /// comma-separated; compared after normalization, so application/x-pdf counts as
    /// application/pdf). TYPE/* takes a whole top-level type, `fulltext` the list itself:
    /// `--mime fulltext,image/png` widens the default, `--mime application/pdf` narrows it.
    #[arg(
        long = "mime",
        value_name = "TYPE",
        num_args = 1,
        value_delimiter = ',',
        value_parser = parse_mime_arg
    )]
    pub mimes: Vec<String>,
    /// File rows for every MIME type (captures of every type are kept either way).
    #[arg(long, conflicts_with = "mimes")]
    pub all_types: bool,
    /// Only captures with these HTTP status codes (default 200; repeatable or
    /// comma-separated: `--status 200,206`).
    #[arg(
        long = "status",
        value_name = "CODE",
        num_args = 1,
        value_delimiter = ','
    )]
    pub statuses: Vec<u16>,
    /// Captures of every HTTP status locate files (redirect and error bodies too).
    #[arg(long, conflicts_with = "statuses")]
    pub all_statuses: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFilter {
    /// `None` accepts every status.
    statuses: Option<Vec<u16>>,
    /// `None` accepts every type.
    mimes: Option<MimeSet>,
}

/// Accepted MIME types: exact normalized types and whole top-level types (`image/*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct MimeSet {
    /// A hash set: every capture is tested, and a binary search of the full-text list
    /// called `memcmp` six times a line (about 1 % of a CDX bulk load, issue 39).
    types: rustc_hash::FxHashSet<String>,
    /// Top-level types with their slash (`image/`), sorted.
    tops: Vec<String>,
}

impl MimeSet {
    /// The set of `types` and top-level types `tops`, in any order and with repeats.
    fn new(types: Vec<String>, mut tops: Vec<String>) -> MimeSet {
        tops.sort();
        tops.dedup();
        MimeSet {
            types: types.into_iter().collect(),
            tops,
        }
    }

    /// The exact types, sorted (the order [`FileFilter::describe`] spells them in).
    fn sorted_types(&self) -> Vec<&str> {
        let mut types: Vec<&str> = self.types.iter().map(String::as_str).collect();
        types.sort_unstable();
        types
    }

    fn fulltext() -> MimeSet {
        MimeSet::new(fulltext().types().to_vec(), Vec::new())
    }

    fn contains(&self, mime: &str) -> bool {
        self.types.contains(mime) || self.tops.iter().any(|top| mime.starts_with(top.as_str()))
    }
}

impl Default for FileFilter {
    fn default() -> Self {
        FileFilter {
            statuses: Some(vec![200]),
            mimes: Some(MimeSet::fulltext()),
        }
    }
}

impl FileFilter {
    /// The filter of the options; `--mime` values are expected as `parse_mime_arg` gives
    /// them (others are normalized here, and dropped if they are no type).
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
        let mimes = if args.all_types {
            None
        } else if args.mimes.is_empty() {
            Some(MimeSet::fulltext())
        } else {
            let (mut types, mut tops) = (Vec::new(), Vec::new());
            for value in &args.mimes {
                match parse_mime_arg(value).as_deref() {
                    Ok(FULLTEXT_WORD) => types.extend(fulltext().types().iter().cloned()),
                    Ok(top) if top.ends_with("/*") => {
                        tops.push(top.trim_end_matches('*').to_string())
                    }
                    Ok(mime) => types.push(mime.to_string()),
                    Err(_) => {}
                }
            }
            Some(MimeSet::new(types, tops))
        };
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
        let mime_ok = match &self.mimes {
            None => true,
            Some(set) => mime.is_some_and(|m| set.contains(m)),
        };
        status_ok && mime_ok
    }

    /// Whether a capture of `url` may locate a file row at all, whatever the options: only
    /// a fetch from a server (http, https, ftp) is a file of the web. wget's
    /// `metadata://` records (its manifest, arguments and log), Heritrix's `dns:` and
    /// `whois://`, `urn:` records and the like stay in the capture index (`captures` and
    /// `/cdx` list them, `export --captures` carries them) but make no row: every
    /// projection skips them too, and a crawler's own log is not a document of the crawl.
    /// The imports count them (`captures_not_web`), so they do not vanish unnoticed.
    pub fn is_web_fetch(url: &str) -> bool {
        // Nearly every URL of a crawl: decided without the general case's searches (it
        // took ~270 instructions a URL, called twice a CDX line, issue 39).
        if url.starts_with("http://") || url.starts_with("https://") {
            return true;
        }
        // Some CDX files spell URLs without their scheme (`example.com/a`,
        // `example.com:8080/a`): those are web captures all the same.
        let Some((scheme, rest)) = url.trim_start().split_once(':') else {
            return true;
        };
        if scheme.contains('/') || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return true;
        }
        ["http", "https", "ftp"]
            .iter()
            .any(|web| scheme.eq_ignore_ascii_case(web))
    }

    /// A stable spelling of the filter, part of an input's identity in the registry
    /// (the same file under another filter writes other rows). Every type is spelled
    /// out, so a change of the full-text list makes inputs new again; `mime=` (empty)
    /// means every type, as it did before the full-text default.
    pub fn describe(&self) -> String {
        let statuses = match &self.statuses {
            None => "all".to_string(),
            Some(list) => list
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(","),
        };
        let mimes = match &self.mimes {
            None => String::new(),
            Some(set) => (set.sorted_types().into_iter().map(str::to_string))
                .chain(set.tops.iter().map(|t| format!("{t}*")))
                .collect::<Vec<_>>()
                .join(","),
        };
        format!("status={statuses};mime={mimes}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fulltext_spelling() -> String {
        fulltext().types().join(",")
    }

    #[test]
    fn default_filter_takes_200_full_text_responses_and_resources() {
        let f = FileFilter::default();
        assert!(f.passes(CaptureKind::Response, Some(200), Some("text/html"), true));
        assert!(f.passes(
            CaptureKind::Response,
            Some(200),
            Some("application/pdf"),
            true
        ));
        assert!(f.passes(CaptureKind::Response, Some(200), Some("text/xml"), true));
        assert!(!f.passes(CaptureKind::Response, Some(301), Some("text/html"), true));
        assert!(!f.passes(CaptureKind::Response, None, None, true));
        assert!(
            !f.passes(CaptureKind::Response, Some(200), Some("text/html"), false),
            "needs a digest"
        );
        assert!(!f.passes(CaptureKind::Revisit, Some(200), Some("text/html"), true));
        assert!(f.passes(CaptureKind::Resource, None, Some("application/pdf"), true));
        for web in [
            "http://a.example/",
            "HTTPS://a.example/",
            "ftp://a.example/f.pdf",
            "a.example/no-scheme:here",
            "a.example:8080/",
        ] {
            assert!(FileFilter::is_web_fetch(web), "{web}");
        }
        for other in [
            "metadata://gnu.org/software/wget/warc/wget.log",
            "dns:example.com",
            "whois://whois.arin.net/z",
            "urn:pageinfo:http://a.example/",
        ] {
            assert!(!FileFilter::is_web_fetch(other), "{other}");
        }
        for other in ["text/css", "image/png", "text/javascript", "font/woff2"] {
            assert!(
                !f.passes(CaptureKind::Response, Some(200), Some(other), true),
                "{other} is not full text"
            );
        }
        assert!(
            !f.passes(CaptureKind::Response, Some(200), None, true),
            "no type, no row"
        );
        assert_eq!(
            f.describe(),
            format!("status=200;mime={}", fulltext_spelling())
        );
        assert_eq!(FileFilter::from_args(&FilterArgs::default()), f);
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

        let wider = FileFilter::from_args(&FilterArgs {
            mimes: vec!["fulltext".into(), "image/*".into()],
            ..Default::default()
        });
        assert!(wider.passes(CaptureKind::Response, Some(200), Some("text/html"), true));
        assert!(wider.passes(CaptureKind::Response, Some(200), Some("image/png"), true));
        assert!(!wider.passes(CaptureKind::Response, Some(200), Some("text/css"), true));
        assert_eq!(
            wider.describe(),
            format!("status=200;mime={},image/*", fulltext_spelling())
        );

        let every_type = FileFilter::from_args(&FilterArgs {
            all_types: true,
            ..Default::default()
        });
        assert!(every_type.passes(CaptureKind::Response, Some(200), Some("text/css"), true));
        assert!(every_type.passes(CaptureKind::Response, Some(200), None, true));
        assert!(!every_type.passes(CaptureKind::Response, Some(404), None, true));
        assert_eq!(every_type.describe(), "status=200;mime=");

        let all = FileFilter::from_args(&FilterArgs {
            all_statuses: true,
            all_types: true,
            ..Default::default()
        });
        assert!(all.passes(CaptureKind::Response, Some(404), None, true));
        assert!(all.passes(CaptureKind::Response, None, None, true));
        assert_eq!(all.describe(), "status=all;mime=");

        let some = FileFilter::from_args(&FilterArgs {
            statuses: vec![404, 200, 404],
            all_types: true,
            ..Default::default()
        });
        assert!(some.passes(CaptureKind::Response, Some(404), None, true));
        assert!(!some.passes(CaptureKind::Response, Some(301), None, true));
        assert_eq!(some.describe(), "status=200,404;mime=");
    }
}
