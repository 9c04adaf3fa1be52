//! The crawl exit codes of the seed schema and how a capture maps to them (the mapping is
//! the seed's, documented in `schemas/crawl.sql`). The crawl database
//! (`crawl_log.exit_code`) and the summary database (`crawl_summary.exit_code`) both use
//! [`exit_code_of`], so a capture has the same exit code in both.

// The seed's whole table of exit codes, kept complete and in its order so that it can be
// checked against the seed at a glance, though a capture never maps to some of them
// (they describe a live crawler's failures).
#![allow(dead_code)]

use crate::capture::Capture;

pub const DATABASE_ERROR: i64 = -3;
pub const CANCELLED: i64 = -2;
pub const SOMEONE_STOLE_MY_WORK: i64 = -1;
pub const FILE_INGESTED: i64 = 20;
pub const FILE_OF_UNKNOWN_TYPE: i64 = 29;
pub const PERMANENT_REDIRECT: i64 = 31;
pub const REDIRECT: i64 = 32;
pub const FILE_DID_NOT_CHANGE: i64 = 34;
pub const SERVER_BLAMED_CLIENT: i64 = 40;
pub const FILE_GONE: i64 = 41;
pub const DID_NOT_UNDERSTAND_ANSWER: i64 = 42;
pub const FILE_NOT_FOUND: i64 = 44;
pub const RATE_LIMITED: i64 = 49;
pub const SERVER_INTERNAL_ERROR: i64 = 50;
pub const CONNECTION_FAILED: i64 = 100;
pub const REQUEST_TIMEOUT: i64 = 101;
pub const ERROR_READING_RESPONSE: i64 = 102;
pub const BLOCKED_BY_ROBOTS_TXT: i64 = 170;
pub const BLOCKED_AT_REQUEST_OF_REMOTE: i64 = 171;
pub const BLOCKED_ORIGIN_BY_LOCAL_POLICY: i64 = 172;
pub const BLOCKED_URL_BY_LOCAL_POLICY: i64 = 173;
pub const BLOCKED_BY_CHALLENGE: i64 = 174;
pub const NOT_CANONICAL: i64 = 180;
pub const DUPLICATE: i64 = 181;
pub const UNKNOWN_ERROR: i64 = -999;

/// The fetch had content, or a meaningful absence of it, that was evaluated.
pub fn is_contentful(code: i64) -> bool {
    matches!(
        code,
        FILE_INGESTED
            | FILE_OF_UNKNOWN_TYPE
            | PERMANENT_REDIRECT
            | REDIRECT
            | FILE_GONE
            | FILE_NOT_FOUND
            | NOT_CANONICAL
            | DUPLICATE
    )
}

/// What the HTTP status alone says about a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A body was delivered (2xx, or a record without HTTP status that has a payload):
    /// the exit code depends on the content, see [`content_exit_code`].
    Content,
    /// Decided by the status.
    Code(i64),
}

/// Maps a capture's HTTP status. `has_payload`: the capture has a payload digest;
/// `has_location`: it names a redirect target.
pub fn from_status(status: Option<u16>, has_payload: bool, has_location: bool) -> Outcome {
    let Some(status) = status else {
        // resource records and dns: responses carry no HTTP status but a payload.
        return if has_payload {
            Outcome::Content
        } else {
            Outcome::Code(DID_NOT_UNDERSTAND_ANSWER)
        };
    };
    Outcome::Code(match status {
        200..=299 => return Outcome::Content,
        301 | 308 => PERMANENT_REDIRECT,
        302 | 303 | 307 => REDIRECT,
        304 => FILE_DID_NOT_CHANGE,
        300..=399 if has_location => REDIRECT,
        401 | 403 => BLOCKED_AT_REQUEST_OF_REMOTE,
        404 => FILE_NOT_FOUND,
        410 => FILE_GONE,
        429 => RATE_LIMITED,
        400..=499 => SERVER_BLAMED_CLIENT,
        502..=505 => CONNECTION_FAILED,
        500..=599 => SERVER_INTERNAL_ERROR,
        _ => DID_NOT_UNDERSTAND_ANSWER,
    })
}

/// What an HTML document says about being indexed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HtmlVerdict {
    /// `<meta name=robots content=noindex>` (or `none`).
    pub noindex: bool,
    /// The canonical URL (`<link rel=canonical>` or the `Link` header) is another URL.
    pub canonical_elsewhere: bool,
}

/// The exit code of a capture with content: a document whose text is had (HTML and the
/// other full-text types, `crate::doctext::kind_of`) is indexed (unless its HTML asks not
/// to be, or names another URL as canonical), other types are files of unknown type.
/// `verdict` is `None` when the HTML could not be read (it counts as indexed) and for
/// other documents.
pub fn content_exit_code(has_text: bool, verdict: Option<HtmlVerdict>) -> i64 {
    if !has_text {
        return FILE_OF_UNKNOWN_TYPE;
    }
    match verdict {
        Some(v) if v.noindex => BLOCKED_AT_REQUEST_OF_REMOTE,
        Some(v) if v.canonical_elsewhere => NOT_CANONICAL,
        _ => FILE_INGESTED,
    }
}

/// The exit code of a capture. `has_text`: its type is one whose text is had (a revisit's
/// from its original); `verdict`: what its HTML says, `None` when it was not read.
pub fn exit_code_of(capture: &Capture, has_text: bool, verdict: Option<HtmlVerdict>) -> i64 {
    match from_status(
        capture.status,
        capture.digest.is_some(),
        capture.redirect.is_some(),
    ) {
        Outcome::Code(code) => code,
        Outcome::Content => content_exit_code(has_text, verdict),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(status: u16) -> i64 {
        match from_status(Some(status), true, false) {
            Outcome::Code(c) => c,
            Outcome::Content => content_exit_code(true, None),
        }
    }

    #[test]
    fn every_status_class_maps_as_designed() {
        let expected = [
            (200, 20),
            (203, 20),
            (301, 31),
            (308, 31),
            (302, 32),
            (303, 32),
            (307, 32),
            (304, 34),
            (300, 42),
            (401, 171),
            (403, 171),
            (404, 44),
            (410, 41),
            (429, 49),
            (400, 40),
            (418, 40),
            (500, 50),
            (501, 50),
            (502, 100),
            (503, 100),
            (504, 100),
            (505, 100),
            (599, 50),
            (100, 42),
            (600, 42),
        ];
        for (status, exit) in expected {
            assert_eq!(code(status), exit, "status {status}");
        }
        assert_eq!(
            from_status(Some(300), false, true),
            Outcome::Code(REDIRECT),
            "another 3xx with a Location is a redirect"
        );
        assert_eq!(from_status(None, true, false), Outcome::Content);
        assert_eq!(
            from_status(None, false, false),
            Outcome::Code(DID_NOT_UNDERSTAND_ANSWER)
        );
    }

    #[test]
    fn html_verdicts() {
        assert_eq!(content_exit_code(false, None), 29);
        assert_eq!(content_exit_code(true, None), 20);
        let noindex = HtmlVerdict {
            noindex: true,
            canonical_elsewhere: true,
        };
        assert_eq!(content_exit_code(true, Some(noindex)), 171);
        let canonical = HtmlVerdict {
            noindex: false,
            canonical_elsewhere: true,
        };
        assert_eq!(content_exit_code(true, Some(canonical)), 180);
        assert_eq!(content_exit_code(true, Some(HtmlVerdict::default())), 20);
        assert!(is_contentful(44) && is_contentful(180) && !is_contentful(171));
        assert!(!is_contentful(34) && !is_contentful(UNKNOWN_ERROR));
    }
}
