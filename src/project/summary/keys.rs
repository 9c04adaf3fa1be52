//! What a capture is to the summarizer: its class (content, redirect, error, …) and the key
//! that decides which generation it belongs to. (Its exit code, crawl UUID and agent UUID
//! are the crawl database's: `project::exit_code`, `project::identity`.)
//!
//! Generation UUIDs are version 8 (custom) UUIDs made from a SHA-1 of what identifies the
//! generation, so a re-run, an incremental run and a run from scratch give it the same UUID.

use sha1::{Digest, Sha1};
use url::Url;
use uuid::Uuid;

use crate::capture::Capture;

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

/// The identity of a non-HTML payload: the SHA-1 of the de-chunked body when the stored
/// body was chunk-encoded (chunk boundaries may change while the content does not), else the
/// payload SHA-1.
pub fn file_identity(capture: &Capture) -> Option<[u8; 20]> {
    capture.dechunked.or(capture.digest).map(|k| k.0)
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
    fn classes() {
        let url = Url::parse("http://example.org/a/b").unwrap();
        let mut c = Capture {
            status: Some(302),
            redirect: Some("/c".into()),
            ..Default::default()
        };
        assert_eq!(
            classify(&c, &url),
            CaptureClass::Redirect {
                permanent: false,
                target: Url::parse("http://example.org/c").unwrap()
            }
        );
        c.redirect = None;
        assert_eq!(classify(&c, &url), CaptureClass::Status(302));
        c.status = Some(304);
        assert_eq!(classify(&c, &url), CaptureClass::NotModified);
        c.status = None;
        assert_eq!(classify(&c, &url), CaptureClass::Content);
    }
}
