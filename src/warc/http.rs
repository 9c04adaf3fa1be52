//! Parsing the HTTP message head (status or request line and header fields) at the start
//! of a WARC block. Pure functions on bytes; the reader decides which blocks to try.

use super::bytes::{lossy, strip_cr, trim};
use super::headers::Headers;

/// First line of an HTTP message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartLine {
    /// `HTTP/1.1 200 OK`; `reason` is empty when the line has none (`HTTP/1.1 302`).
    Response {
        version: String,
        status: u16,
        reason: String,
    },
    /// `GET /path HTTP/1.1`; `version` is empty for an HTTP/0.9 request line.
    Request {
        method: String,
        uri: String,
        version: String,
    },
}

/// An HTTP message head: start line and header fields in their order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpHead {
    pub start: StartLine,
    /// Header fields in order (trimmed; continuation lines joined with a space).
    pub headers: Headers,
    /// Bytes of the head in the block, including the empty line that ends it.
    pub length: u64,
    /// Header lines without a colon, skipped.
    pub malformed_lines: u32,
}

impl HttpHead {
    /// Parse a head (start line, fields, optionally the final empty line). `None` when the
    /// start line is neither a status line nor a request line.
    pub fn parse(head: &[u8]) -> Option<HttpHead> {
        let first_end = memchr::memchr(b'\n', head).map_or(head.len(), |i| i + 1);
        let first = &head[..first_end];
        let start = parse_start_line(strip_cr(first.strip_suffix(b"\n").unwrap_or(first)))?;
        let (headers, malformed_lines) = Headers::parse(&head[first_end..]);
        Some(HttpHead {
            start,
            headers,
            length: head.len() as u64,
            malformed_lines,
        })
    }

    /// First value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// All values of a header, in order.
    pub fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.get_all(name)
    }

    /// Status code of a response.
    pub fn status(&self) -> Option<u16> {
        match &self.start {
            StartLine::Response { status, .. } => Some(*status),
            StartLine::Request { .. } => None,
        }
    }

    /// Method of a request.
    pub fn method(&self) -> Option<&str> {
        match &self.start {
            StartLine::Request { method, .. } => Some(method),
            StartLine::Response { .. } => None,
        }
    }

    pub fn location(&self) -> Option<&str> {
        self.header("Location")
    }

    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type")
    }

    pub fn content_encoding(&self) -> Option<&str> {
        self.header("Content-Encoding")
    }

    pub fn etag(&self) -> Option<&str> {
        self.header("ETag")
    }

    pub fn last_modified(&self) -> Option<&str> {
        self.header("Last-Modified")
    }

    pub fn user_agent(&self) -> Option<&str> {
        self.header("User-Agent")
    }

    /// True when a `Transfer-Encoding` header lists `chunked`.
    pub fn transfer_encoding_chunked(&self) -> bool {
        self.header_all("Transfer-Encoding").any(|value| {
            value
                .split(',')
                .any(|coding| coding.trim().eq_ignore_ascii_case("chunked"))
        })
    }
}

/// Does a block start like an HTTP message? `None` when `prefix` is too short to tell and
/// more bytes may follow. `response_like`: accept a status line; otherwise a request line.
pub fn looks_like_http(prefix: &[u8], response_like: bool, more_may_follow: bool) -> Option<bool> {
    if response_like {
        const HTTP: &[u8] = b"HTTP/";
        let n = prefix.len().min(HTTP.len());
        if !prefix[..n].eq_ignore_ascii_case(&HTTP[..n]) {
            return Some(false);
        }
        if n < HTTP.len() && more_may_follow {
            return None;
        }
        Some(n == HTTP.len())
    } else {
        // A method token (letters, up to 20) followed by a space.
        for (i, &b) in prefix.iter().enumerate().take(21) {
            if b == b' ' {
                return Some(i > 0);
            }
            if !(b.is_ascii_alphabetic() || b == b'-' || b == b'_') {
                return Some(false);
            }
        }
        if prefix.len() <= 20 && more_may_follow {
            None
        } else {
            Some(false)
        }
    }
}

fn parse_start_line(line: &[u8]) -> Option<StartLine> {
    let line = trim(line);
    let mut parts = line.splitn(3, |&b| b == b' ' || b == b'\t');
    let first = parts.next()?;
    if first.len() >= 5 && first[..5].eq_ignore_ascii_case(b"HTTP/") {
        let code = trim(parts.next()?);
        let digits = code.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 3 {
            return None;
        }
        let status = std::str::from_utf8(&code[..digits]).ok()?.parse().ok()?;
        let reason = parts.next().map(|r| lossy(trim(r))).unwrap_or_default();
        return Some(StartLine::Response {
            version: lossy(first),
            status,
            reason,
        });
    }
    if first.is_empty()
        || !first
            .iter()
            .all(|b| b.is_ascii_alphabetic() || *b == b'-' || *b == b'_')
    {
        return None;
    }
    let rest = trim(&line[first.len()..]);
    if rest.is_empty() {
        return None;
    }
    // The URI may contain spaces (seen in real request records); the version is the last
    // word when it starts with HTTP/.
    let (uri, version) = match rest.iter().rposition(|&b| b == b' ') {
        Some(space)
            if rest[space + 1..].len() >= 5
                && rest[space + 1..][..5].eq_ignore_ascii_case(b"HTTP/") =>
        {
            (trim(&rest[..space]), &rest[space + 1..])
        }
        _ => (rest, &b""[..]),
    };
    Some(StartLine::Request {
        method: lossy(first),
        uri: lossy(uri),
        version: lossy(version),
    })
}

/// Drop the CRs before a line's LF (some writers put two: `\r\r\n`).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_head() {
        let head = HttpHead::parse(
            b"HTTP/1.1 301 Moved Permanently\r\nLocation: http://x/\r\nX-Long: a\r\n  b\r\nbad line\r\ntransfer-encoding: gzip, Chunked\r\n\r\n",
        )
        .unwrap();
        assert_eq!(head.status(), Some(301));
        assert_eq!(head.location(), Some("http://x/"));
        assert_eq!(head.etag(), None);
        assert_eq!(head.header("x-long"), Some("a b"));
        assert_eq!(head.malformed_lines, 1);
        assert!(head.transfer_encoding_chunked());
        match &head.start {
            StartLine::Response { reason, .. } => assert_eq!(reason, "Moved Permanently"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn status_without_reason_and_lf_lines() {
        let head = HttpHead::parse(b"HTTP/1.1 302\nLocation: /a\n\n").unwrap();
        assert_eq!(head.status(), Some(302));
        assert_eq!(head.location(), Some("/a"));
        assert!(!head.transfer_encoding_chunked());
    }

    #[test]
    fn request_head() {
        let head = HttpHead::parse(b"GET /a b.png HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            head.start,
            StartLine::Request {
                method: "GET".into(),
                uri: "/a b.png".into(),
                version: "HTTP/1.0".into()
            }
        );
        assert_eq!(head.method(), Some("GET"));
    }

    #[test]
    fn not_http() {
        assert!(
            HttpHead::parse(b"20080430204825\nwww.archive.org.\t589\tIN\tA\t1.2.3.4\n").is_none()
        );
        assert!(HttpHead::parse(b"HTTP/1.1 OK\r\n\r\n").is_none());
        assert_eq!(looks_like_http(b"HTT", true, true), None);
        assert_eq!(looks_like_http(b"HTT", true, false), Some(false));
        assert_eq!(looks_like_http(b"http/1.0 200", true, true), Some(true));
        assert_eq!(looks_like_http(b"<html>", true, true), Some(false));
        assert_eq!(looks_like_http(b"POST /x", false, true), Some(true));
        assert_eq!(looks_like_http(b"PO", false, true), None);
        assert_eq!(looks_like_http(b"{\"a\"", false, true), Some(false));
    }
}
