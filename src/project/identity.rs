//! What the crawl and summary databases both say about a capture, computed once so the two
//! always agree: which captures are fetches of a web page at all ([`crawled`]), the UUID of
//! each capture ([`crawl_uuid`], the seed's "UUID of the corresponding crawl log entry")
//! and of the crawl run that made it ([`AgentResolver`]). `crawl_summary.crawl_uuid` and
//! `agent_uuid` of the summary database therefore join `crawl_log.crawl_uuid` and
//! `agent.agent_uuid` of a crawl database projected from the same store.
//!
//! # Crawl runs
//! An agent is one run of a crawler, not one file: crawlers cut a run into several WARC
//! files (wget's `--warc-max-size` writes `NAME-00000.warc.gz`, `NAME-00001.warc.gz`, …;
//! Heritrix `PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz`), each opening with the same warcinfo
//! record. The WARC files of one run are those whose names are equal once every run of five
//! or more digits standing between separators (the serial number, the file's timestamp) is
//! read as `*`, and whose warcinfo records carry the same fields (software, hostname,
//! operator, isPartOf, wget-arguments, … all of them). A CDX file is its own agent (CDX
//! lines record no run). Two runs with the same file names and the same warcinfo are
//! indistinguishable from the archive and share an agent.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;
use sha1::{Digest, Sha1};
use url::Url;

use crate::capture::{Capture, Origin, file_name};
use crate::ingest::warc::WarcInfo;
use crate::project::base::without_fragment;
use crate::store::Store;
use crate::store::keys::capture_key;

/// Recorded as `sediment_identity_version` in both databases: databases written with
/// another derivation of the UUIDs cannot be continued incrementally.
pub const IDENTITY_VERSION: &str = "2";

/// A name-based UUID (version 5, SHA-1) as the 16 bytes the databases store.
pub fn uuid_v5(namespace: &[u8; 16], name: &[u8]) -> [u8; 16] {
    let mut hasher = Sha1::new();
    hasher.update(namespace);
    hasher.update(name);
    let hash = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    bytes
}

/// The RFC 4122 URL namespace.
pub const NAMESPACE_URL: [u8; 16] = [
    0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
];

/// The namespace of every UUID sediment derives: the v5 UUID of a fixed URN in the URL
/// namespace.
pub fn sediment_namespace() -> [u8; 16] {
    uuid_v5(&NAMESPACE_URL, b"urn:sediment:project-crawl")
}

/// The UUID of one capture: UUID v5 of its store key (SURT, time, WARC or CDX file name,
/// offset or line), so every projection and every re-run gives a capture the same UUID.
pub fn crawl_uuid(capture: &Capture) -> [u8; 16] {
    let mut key = Vec::with_capacity(capture.surt.len() + 64);
    capture_key(&capture.view(), &mut key);
    uuid_v5(&sediment_namespace(), &key)
}

/// A capture that is a crawler's fetch of a web page.
#[derive(Debug, Clone)]
pub struct Crawled {
    /// The URL without its fragment.
    pub url: Url,
    /// Capture time, unix seconds.
    pub time: i64,
}

/// Why a capture is not a crawl log entry (the report counts `captures_skipped_<reason>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    BadUrl,
    /// `dns:`, `metadata://`, `urn:`, … records: not a fetch of a web page.
    NotHttp,
    BadTime,
}

impl Skipped {
    pub fn counter(self) -> &'static str {
        match self {
            Skipped::BadUrl => "captures_skipped_bad_url",
            Skipped::NotHttp => "captures_skipped_not_http",
            Skipped::BadTime => "captures_skipped_bad_time",
        }
    }
}

/// The rule both databases use for which captures they hold: an http(s) URL that parses
/// and a valid 14-digit time.
pub fn crawled(capture: &Capture) -> Result<Crawled, Skipped> {
    let url = Url::parse(capture.url.trim()).map_err(|_| Skipped::BadUrl)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Skipped::NotHttp);
    }
    let time = ts14_to_unix(&capture.ts).ok_or(Skipped::BadTime)?;
    Ok(Crawled {
        url: without_fragment(&url),
        time,
    })
}

/// crawl_type of a capture: 1 robotstxt_fetch for `/robots.txt`, else 0 file_crawl
/// (archives do not record HEAD-only metadata crawls, type 2).
pub fn crawl_type(url: &Url) -> i64 {
    i64::from(url.path() == "/robots.txt")
}

/// `yyyyMMddHHmmss` (UTC) → unix seconds.
pub fn ts14_to_unix(ts: &str) -> Option<i64> {
    if ts.len() != 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    chrono::NaiveDateTime::parse_from_str(ts, "%Y%m%d%H%M%S")
        .ok()
        .map(|t| t.and_utc().timestamp())
}

/// One crawl run, as the agent of its captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub uuid: [u8; 16],
    /// `Wget/1.21.3 (linux-gnu); operator: …; warc: crawl-*.warc.gz`, or `cdx: FILE`.
    pub name: String,
    /// request.robotstxt_approved: false only when warcinfo says `robots: ignore`.
    pub robots_approved: bool,
    /// warcinfo `http-header-user-agent`, for runs whose requests were not archived.
    pub declared_user_agent: Option<String>,
}

/// The file name of a WARC with its serial numbers and timestamps read as `*`: runs of five
/// or more digits between separators (start, end, or any character but a letter or digit).
pub fn series_name(file: &str) -> String {
    let bytes = file.as_bytes();
    let mut out = String::with_capacity(file.len());
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if bytes[i].is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let separated_before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
            let separated_after = i == bytes.len() || !bytes[i].is_ascii_alphanumeric();
            if i - start >= 5 && separated_before && separated_after {
                out.push('*');
            } else {
                out.push_str(&file[start..i]);
            }
        } else {
            // Advance by whole characters (the name may hold any UTF-8).
            let c = file[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

/// The agent of the captures of a WARC file (with its warcinfo record when the store has
/// one) or of a CDX file.
pub fn agent_of_source(origin: Origin, file: &str, info: Option<&WarcInfo>) -> Agent {
    let namespace = sediment_namespace();
    match origin {
        Origin::Cdx => Agent {
            uuid: uuid_v5(&namespace, format!("agent\0cdx\0{file}").as_bytes()),
            name: format!("cdx: {file}"),
            robots_approved: true,
            declared_user_agent: None,
        },
        Origin::Warc => {
            let series = series_name(file);
            let mut fields: Vec<(String, String)> = info
                .map(|i| {
                    i.fields
                        .iter()
                        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            fields.sort();
            let field = |name: &str| {
                fields
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
                    .filter(|v| !v.is_empty())
            };
            let mut run = format!("agent\0warc\0{series}\0");
            for (k, v) in &fields {
                run.push_str(k);
                run.push('\0');
                run.push_str(v);
                run.push('\0');
            }
            let mut parts = Vec::new();
            if let Some(software) = field("software") {
                parts.push(software.to_string());
            }
            if let Some(operator) = field("operator") {
                parts.push(format!("operator: {operator}"));
            }
            parts.push(format!("warc: {series}"));
            Agent {
                uuid: uuid_v5(&namespace, run.as_bytes()),
                name: parts.join("; "),
                robots_approved: !field("robots").is_some_and(|r| r.eq_ignore_ascii_case("ignore")),
                declared_user_agent: field("http-header-user-agent").map(str::to_string),
            }
        }
    }
}

/// The agents of captures, looked up once per input file.
#[derive(Default)]
pub struct AgentResolver {
    by_file: HashMap<(bool, String), Arc<Agent>>,
}

/// Input files remembered at most (the map starts over past it).
const MAX_REMEMBERED_FILES: usize = 1 << 16;

impl AgentResolver {
    pub fn agent_of(&mut self, store: &Store, capture: &Capture) -> Result<Arc<Agent>> {
        let file = file_name(&capture.source);
        let key = (capture.origin == Origin::Warc, file.to_string());
        if let Some(agent) = self.by_file.get(&key) {
            return Ok(Arc::clone(agent));
        }
        let info = match capture.origin {
            Origin::Warc => store.warcinfo(file)?,
            Origin::Cdx => None,
        };
        let agent = Arc::new(agent_of_source(capture.origin, file, info.as_ref()));
        if self.by_file.len() >= MAX_REMEMBERED_FILES {
            self.by_file.clear();
        }
        self.by_file.insert(key, Arc::clone(&agent));
        Ok(agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v5_matches_the_rfc_construction() {
        // Python: uuid.uuid5(uuid.NAMESPACE_URL, "http://example.org/")
        let u = uuid_v5(&NAMESPACE_URL, b"http://example.org/");
        assert_eq!(
            uuid::Uuid::from_bytes(u).to_string(),
            "715d503b-5f95-5532-9100-00663eb45ade"
        );
        assert_ne!(sediment_namespace(), NAMESPACE_URL);
    }

    #[test]
    fn serial_numbers_and_timestamps_are_one_series() {
        assert_eq!(series_name("crawl-00003.warc.gz"), "crawl-*.warc.gz");
        assert_eq!(
            series_name("IAH-20080430204825-00000-blackbook.warc.gz"),
            "IAH-*-*-blackbook.warc.gz"
        );
        assert_eq!(series_name("crawl1.warc.gz"), "crawl1.warc.gz");
        assert_eq!(series_name("crawl-meta.warc.gz"), "crawl-meta.warc.gz");
        assert_eq!(
            series_name("a-123-b.warc"),
            "a-123-b.warc",
            "short numbers stay"
        );
        assert_eq!(series_name("x12345.warc"), "x12345.warc", "not separated");
        assert_eq!(series_name("é-00001-ü"), "é-*-ü");
    }

    #[test]
    fn files_of_one_run_share_an_agent() {
        let info = |file: &str, args: &str| WarcInfo {
            file: file.into(),
            fields: vec![
                ("software".into(), "Wget/1.21.3 (linux-gnu)".into()),
                ("wget-arguments".into(), args.into()),
                ("operator".into(), "Op".into()),
            ],
            ..Default::default()
        };
        let a = agent_of_source(
            Origin::Warc,
            "run-00000.warc.gz",
            Some(&info("run-00000.warc.gz", "--warc-file=run")),
        );
        let b = agent_of_source(
            Origin::Warc,
            "run-00001.warc.gz",
            Some(&info("run-00001.warc.gz", "--warc-file=run")),
        );
        assert_eq!(a, b);
        assert_eq!(
            a.name,
            "Wget/1.21.3 (linux-gnu); operator: Op; warc: run-*.warc.gz"
        );
        let other_run = agent_of_source(
            Origin::Warc,
            "run-00000.warc.gz",
            Some(&info("run-00000.warc.gz", "--warc-file=run --level=2")),
        );
        assert_ne!(other_run.uuid, a.uuid, "other warcinfo, other run");
        let cdx = agent_of_source(Origin::Cdx, "run-00000.cdx", None);
        assert_eq!(cdx.name, "cdx: run-00000.cdx");
        assert_ne!(cdx.uuid, a.uuid);
    }

    #[test]
    fn only_http_captures_with_a_time_are_crawls() {
        let capture = |url: &str, ts: &str| Capture {
            url: url.into(),
            ts: ts.into(),
            ..Default::default()
        };
        let c = crawled(&capture(" http://Example.org/a#x ", "20200101000000")).unwrap();
        assert_eq!(
            (c.url.as_str(), c.time),
            ("http://example.org/a", 1_577_836_800)
        );
        assert_eq!(
            crawled(&capture("metadata://gnu.org/x", "20200101000000")).unwrap_err(),
            Skipped::NotHttp
        );
        assert_eq!(
            crawled(&capture("dns:example.org", "20200101000000")).unwrap_err(),
            Skipped::NotHttp
        );
        assert_eq!(
            crawled(&capture("not a url", "20200101000000")).unwrap_err(),
            Skipped::BadUrl
        );
        assert_eq!(
            crawled(&capture("https://example.org/", "2020")).unwrap_err(),
            Skipped::BadTime
        );
    }
}
