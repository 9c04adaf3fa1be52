//! What a capture is to the summarizer: its class (content, redirect, error, …), the key
//! that decides which generation it belongs to, its exit code, and the stable UUIDs derived
//! from it.
//!
//! UUIDs are version 8 (custom) UUIDs made from a SHA-1 of what identifies the thing, so a
//! re-run, an incremental run and a run from scratch give every row the same UUID.

use chrono::{DateTime, NaiveDateTime};
use sha1::{Digest, Sha1};
use url::Url;
use uuid::Uuid;

use crate::capture::{Capture, file_name};

/// What makes captures of one URL the same generation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ContentKey {
    /// An HTML document: the BLAKE2b-512 digest of its text pile.
    Pile([u8; 64]),
    /// Any other file (or an HTML payload that could not be read): its payload SHA-1.
    File([u8; 20]),
    /// A redirect: where to, and whether the server said it is permanent.
    Redirect { permanent: bool, target: String },
    /// An error or other answer without content: its HTTP status.
    Status(u16),
}

impl ContentKey {
    /// The stored form (`entity_generation.content_key`).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            ContentKey::Pile(d) => [b"P".as_slice(), d].concat(),
            ContentKey::File(d) => [b"F".as_slice(), d].concat(),
            ContentKey::Redirect { permanent, target } => {
                let mut v = vec![b'R', if *permanent { b'1' } else { b'0' }];
                v.extend_from_slice(target.as_bytes());
                v
            }
            ContentKey::Status(code) => format!("S{code}").into_bytes(),
        }
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<ContentKey> {
        let (&kind, rest) = bytes.split_first()?;
        match kind {
            b'P' => Some(ContentKey::Pile(rest.try_into().ok()?)),
            b'F' => Some(ContentKey::File(rest.try_into().ok()?)),
            b'R' => {
                let (&flag, target) = rest.split_first()?;
                Some(ContentKey::Redirect {
                    permanent: flag == b'1',
                    target: String::from_utf8(target.to_vec()).ok()?,
                })
            }
            b'S' => Some(ContentKey::Status(
                std::str::from_utf8(rest).ok()?.parse().ok()?,
            )),
            _ => None,
        }
    }
}

/// How the summarizer treats a capture, from its HTTP status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureClass {
    /// 2xx, or a record without HTTP status (WARC resource): the payload is the content.
    Content,
    /// 304 Not Modified: the content did not change; extends the current generation.
    NotModified,
    /// 3xx with a target that parses as a URL.
    Redirect { permanent: bool, target: Url },
    /// Everything else: errors, 1xx, 3xx without a usable target.
    Status(u16),
}

pub fn classify(capture: &Capture, url: &Url) -> CaptureClass {
    match capture.status {
        None => CaptureClass::Content,
        Some(200..=299) => CaptureClass::Content,
        Some(304) => CaptureClass::NotModified,
        Some(status @ 300..=399) => {
            let target = capture
                .redirect
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .and_then(|t| url.join(t).ok());
            match target {
                Some(target) => CaptureClass::Redirect {
                    permanent: matches!(status, 301 | 308),
                    target,
                },
                None => CaptureClass::Status(status),
            }
        }
        Some(status) => CaptureClass::Status(status),
    }
}

/// Media types whose payloads are analysed as HTML.
pub fn is_html(capture: &Capture) -> bool {
    let mime = capture
        .mime
        .as_deref()
        .or(capture.content_type.as_deref())
        .unwrap_or("");
    let essence = mime.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("text/html")
        || essence.eq_ignore_ascii_case("application/xhtml+xml")
}

/// The identity of a non-HTML payload: the SHA-1 of the de-chunked body when the stored
/// body was chunk-encoded (chunk boundaries may change while the content does not), else the
/// payload SHA-1.
pub fn file_identity(capture: &Capture) -> Option<[u8; 20]> {
    capture.dechunked.or(capture.digest).map(|k| k.0)
}

/// What HTML analysis says about a 2xx page that matters for its exit code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageVerdict {
    pub noindex: bool,
    pub canonical_elsewhere: bool,
}

/// The seed's crawl exit code for a capture (DESIGN.md, Projection 1).
pub fn exit_code(class: &CaptureClass, html: bool, verdict: PageVerdict) -> i64 {
    match class {
        CaptureClass::Content if html => {
            if verdict.noindex {
                171
            } else if verdict.canonical_elsewhere {
                180
            } else {
                20
            }
        }
        CaptureClass::Content => 29,
        CaptureClass::NotModified => 34,
        CaptureClass::Redirect {
            permanent: true, ..
        } => 31,
        CaptureClass::Redirect { .. } => 32,
        CaptureClass::Status(status) => match status {
            301 | 308 => 31,
            302 | 303 | 307 => 32,
            401 | 403 => 171,
            404 => 44,
            410 => 41,
            429 => 49,
            400..=499 => 40,
            502..=505 => 100,
            500..=599 => 50,
            _ => 42,
        },
    }
}

/// crawl_type: 1 robotstxt_fetch for `/robots.txt`, else 0 file_crawl.
pub fn crawl_type(url: &Url) -> i64 {
    if url.path() == "/robots.txt" && url.query().is_none() {
        1
    } else {
        0
    }
}

/// `yyyyMMddHHmmss` → unix seconds.
pub fn unix_time(ts14: &str) -> Option<i64> {
    if ts14.len() != 14 || !ts14.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    NaiveDateTime::parse_from_str(ts14, "%Y%m%d%H%M%S")
        .ok()
        .map(|t| t.and_utc().timestamp())
}

/// An HTTP date (`Last-Modified`) → unix seconds.
pub fn http_date(value: &str) -> Option<i64> {
    let v = value.trim();
    DateTime::parse_from_rfc2822(v)
        .ok()
        .map(|t| t.timestamp())
        .or_else(|| {
            // RFC 850 and asctime forms still seen in old crawls.
            ["%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"]
                .iter()
                .find_map(|f| NaiveDateTime::parse_from_str(v, f).ok())
                .map(|t| t.and_utc().timestamp())
        })
}

fn uuid_of(parts: &[&[u8]]) -> Uuid {
    let mut hasher = Sha1::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// The UUID of one capture (crawl_summary.crawl_uuid): from its store key (SURT, time,
/// WARC file name and offset, or input file and line).
pub fn crawl_uuid(capture: &Capture) -> Uuid {
    let (name, position) = capture.tie_breaker();
    uuid_of(&[
        b"sediment capture",
        capture.surt.as_bytes(),
        capture.ts.as_bytes(),
        name.as_bytes(),
        &position.to_be_bytes(),
    ])
}

/// The UUID of the agent of a capture: one per input file (a crawl's WARC or CDX).
pub fn agent_uuid(capture: &Capture) -> Uuid {
    uuid_of(&[b"sediment agent", file_name(&capture.source).as_bytes()])
}

/// The UUID of a generation: its URL, its first capture and its content key.
pub fn generation_uuid(str_url: &str, first_crawl: &Uuid, key: &ContentKey) -> Uuid {
    uuid_of(&[
        b"sediment generation",
        str_url.as_bytes(),
        first_crawl.as_bytes(),
        &key.to_bytes(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_keys_round_trip() {
        for key in [
            ContentKey::Pile([7; 64]),
            ContentKey::File([9; 20]),
            ContentKey::Redirect {
                permanent: true,
                target: "http://example.org/ä".into(),
            },
            ContentKey::Redirect {
                permanent: false,
                target: String::new(),
            },
            ContentKey::Status(404),
        ] {
            assert_eq!(ContentKey::from_bytes(&key.to_bytes()), Some(key));
        }
        assert_eq!(ContentKey::from_bytes(b""), None);
        assert_eq!(ContentKey::from_bytes(b"Pshort"), None);
        assert_eq!(ContentKey::from_bytes(b"Sxyz"), None);
    }

    #[test]
    fn classes_and_exit_codes() {
        let url = Url::parse("http://example.org/a/b").unwrap();
        let mut c = Capture {
            status: Some(302),
            redirect: Some("/c".into()),
            ..Default::default()
        };
        let class = classify(&c, &url);
        assert_eq!(
            class,
            CaptureClass::Redirect {
                permanent: false,
                target: Url::parse("http://example.org/c").unwrap()
            }
        );
        assert_eq!(exit_code(&class, true, PageVerdict::default()), 32);
        c.status = Some(308);
        assert_eq!(
            exit_code(&classify(&c, &url), false, PageVerdict::default()),
            31
        );
        c.redirect = None;
        assert_eq!(classify(&c, &url), CaptureClass::Status(308));
        assert_eq!(
            exit_code(&CaptureClass::Status(308), false, PageVerdict::default()),
            31
        );
        for (status, code) in [
            (404, 44),
            (410, 41),
            (403, 171),
            (429, 49),
            (418, 40),
            (503, 100),
            (500, 50),
            (101, 42),
        ] {
            assert_eq!(
                exit_code(&CaptureClass::Status(status), false, PageVerdict::default()),
                code
            );
        }
        let noindex = PageVerdict {
            noindex: true,
            canonical_elsewhere: true,
        };
        assert_eq!(exit_code(&CaptureClass::Content, true, noindex), 171);
        let canonical = PageVerdict {
            noindex: false,
            canonical_elsewhere: true,
        };
        assert_eq!(exit_code(&CaptureClass::Content, true, canonical), 180);
        assert_eq!(exit_code(&CaptureClass::Content, false, noindex), 29);
        c.status = Some(304);
        assert_eq!(classify(&c, &url), CaptureClass::NotModified);
    }

    #[test]
    fn times() {
        assert_eq!(unix_time("20000101000000"), Some(946_684_800));
        assert_eq!(unix_time("2000010100000"), None);
        assert_eq!(
            http_date("Sat, 01 Jan 2000 00:00:00 GMT"),
            Some(946_684_800)
        );
        assert_eq!(
            http_date("Saturday, 01-Jan-00 00:00:00 GMT"),
            Some(946_684_800)
        );
        assert_eq!(http_date("Sat Jan  1 00:00:00 2000"), Some(946_684_800));
        assert_eq!(http_date("yesterday"), None);
    }

    #[test]
    fn uuids_are_stable_version_8() {
        let c = Capture {
            surt: "org,example)/".into(),
            ts: "20200101000000".into(),
            warc: Some("a.warc.gz".into()),
            offset: Some(10),
            source: "/x/a.warc.gz".into(),
            ..Default::default()
        };
        let a = crawl_uuid(&c);
        assert_eq!(a, crawl_uuid(&c.clone()));
        assert_eq!(a.get_version_num(), 8);
        let mut d = c.clone();
        d.offset = Some(11);
        assert_ne!(crawl_uuid(&d), a);
        assert_eq!(
            agent_uuid(&c),
            agent_uuid(&Capture {
                source: "a.warc.gz".into(),
                ..Default::default()
            })
        );
    }
}
