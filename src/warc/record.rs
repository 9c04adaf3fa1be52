//! A parsed WARC record: its place in the file, WARC headers, HTTP head and payload summary.

use std::fmt;

use chrono::{DateTime, NaiveDateTime, Utc};

use super::bytes::{lossy, strip_cr, trim};
use super::chunked::DechunkError;
use super::digest::DigestCheck;
use super::headers::Headers;
use super::http::HttpHead;

/// The `WARC-Type` of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WarcType {
    Warcinfo,
    Response,
    Resource,
    Request,
    Revisit,
    Metadata,
    Conversion,
    Continuation,
    /// Any other value, as written.
    Other(String),
}

impl WarcType {
    /// Case-insensitive, as the value is matched by readers in practice.
    pub fn parse(value: &str) -> WarcType {
        let v = value.trim();
        let known = [
            ("warcinfo", WarcType::Warcinfo),
            ("response", WarcType::Response),
            ("resource", WarcType::Resource),
            ("request", WarcType::Request),
            ("revisit", WarcType::Revisit),
            ("metadata", WarcType::Metadata),
            ("conversion", WarcType::Conversion),
            ("continuation", WarcType::Continuation),
        ];
        for (name, kind) in known {
            if v.eq_ignore_ascii_case(name) {
                return kind;
            }
        }
        WarcType::Other(v.to_string())
    }

    pub fn as_str(&self) -> &str {
        match self {
            WarcType::Warcinfo => "warcinfo",
            WarcType::Response => "response",
            WarcType::Resource => "resource",
            WarcType::Request => "request",
            WarcType::Revisit => "revisit",
            WarcType::Metadata => "metadata",
            WarcType::Conversion => "conversion",
            WarcType::Continuation => "continuation",
            WarcType::Other(other) => other,
        }
    }
}

impl fmt::Display for WarcType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the input is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
}

/// What was seen of the payload: the block bytes after the HTTP head (the whole block for
/// resource records and blocks without an HTTP message), as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadSummary {
    /// SHA-1 of the stored payload bytes (still chunk-encoded if the server sent them so).
    pub sha1: [u8; 20],
    pub length: u64,
    /// The first bytes (up to the reader's prefix limit, 1024 by default), for MIME sniffing.
    pub prefix: Vec<u8>,
    /// The HTTP head says `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// SHA-1 and length of the de-chunked body, when `chunked` and the chunking was valid.
    pub dechunked_sha1: Option<[u8; 20]>,
    pub dechunked_length: Option<u64>,
    /// Why de-chunking failed, when `chunked` and it did.
    pub dechunk_error: Option<DechunkError>,
}

/// Something odd about a record that did not stop it from being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// WARC header lines without a colon (skipped).
    MalformedHeaderLines(u32),
    /// The HTTP head is longer than the limit: the fields after the limit were not parsed
    /// (the payload still starts after the head's empty line). When not even the start
    /// line fits, the block is not taken as an HTTP message and is all payload.
    HttpHeadTooLong { limit: u64 },
    /// The block should hold an HTTP message (`application/http`) but its first line is
    /// not one: the whole block was treated as payload.
    HttpHeadUnparseable,
    /// The block ended inside the HTTP head (no empty line): all of it is the head and the
    /// payload is empty.
    HttpHeadUnterminated,
    /// HTTP header lines without a colon (skipped).
    MalformedHttpHeaderLines(u32),
    /// The record is not followed by two line ends (CRLF CRLF), but the next record or the
    /// end of the input follows directly.
    LooseTerminator,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::MalformedHeaderLines(n) => {
                write!(f, "{n} WARC header line(s) without a colon skipped")
            }
            Warning::HttpHeadTooLong { limit } => {
                write!(
                    f,
                    "HTTP head longer than {limit} bytes: the fields after it were not parsed"
                )
            }
            Warning::HttpHeadUnparseable => {
                write!(f, "block is not an HTTP message: treated as payload")
            }
            Warning::HttpHeadUnterminated => write!(f, "block ends inside the HTTP head"),
            Warning::MalformedHttpHeaderLines(n) => {
                write!(f, "{n} HTTP header line(s) without a colon skipped")
            }
            Warning::LooseTerminator => write!(f, "record not followed by CRLF CRLF"),
        }
    }
}

/// One WARC record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Byte offset in the input file where the record starts: the start of the gzip member
    /// holding its `WARC/` line, or the `WARC/` line itself for uncompressed input.
    pub offset: u64,
    /// Bytes of the input file the record occupies from `offset`: for gzip, up to the end
    /// of the member holding its last byte (exactly its member when records are compressed
    /// one per member); when the record ends inside a member that holds more records
    /// (whole-file gzip), up to where the decompressor had read when the record's last
    /// byte came out, so reading `length` bytes from `offset` is always enough. For
    /// uncompressed input: the header, block and the CRLFCRLF after it.
    pub length: u64,
    /// Decompressed bytes to skip after starting to inflate at `offset` before the
    /// record's `WARC/` line: 0 unless a gzip member holds more than one record.
    pub skip: u64,
    pub compression: Compression,
    /// From the first line, e.g. `1.0`, `1.1`, `0.17`.
    pub version: String,
    /// WARC header fields in order: raw names and values (trimmed, continuation lines
    /// joined with a space, bytes that are not UTF-8 replaced).
    pub headers: Headers,
    pub warc_type: WarcType,
    pub content_length: u64,
    /// Bytes of the WARC header block, version line to the empty line included.
    pub header_length: u64,
    pub http: Option<HttpHead>,
    /// `None` only in error values for records whose block was not read.
    pub payload: Option<PayloadSummary>,
    pub digest_check: DigestCheck,
    pub warnings: Vec<Warning>,
}

impl Record {
    /// First value of a WARC header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// All values of a WARC header, in order.
    pub fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.get_all(name)
    }

    /// `WARC-Target-URI` without the angle brackets some writers (wget 1.14) put around it.
    pub fn target_uri(&self) -> Option<&str> {
        self.header("WARC-Target-URI").map(strip_angle_brackets)
    }

    /// `WARC-Date` as written.
    pub fn date(&self) -> Option<&str> {
        self.header("WARC-Date")
    }

    /// `WARC-Date` parsed (ISO 8601 with `Z` or an offset, fractional seconds allowed, or
    /// 14 digits). `None` when it does not parse.
    pub fn date_utc(&self) -> Option<DateTime<Utc>> {
        parse_warc_date(self.date()?)
    }

    pub fn record_id(&self) -> Option<&str> {
        self.header("WARC-Record-ID")
    }

    /// The WARC `Content-Type` (of the block).
    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type")
    }

    /// `WARC-Payload-Digest` as written.
    pub fn payload_digest(&self) -> Option<&str> {
        self.header("WARC-Payload-Digest")
    }

    pub fn block_digest(&self) -> Option<&str> {
        self.header("WARC-Block-Digest")
    }

    /// Every `WARC-Concurrent-To` value.
    pub fn concurrent_to(&self) -> impl Iterator<Item = &str> {
        self.header_all("WARC-Concurrent-To")
    }

    pub fn refers_to(&self) -> Option<&str> {
        self.header("WARC-Refers-To")
    }

    pub fn refers_to_target_uri(&self) -> Option<&str> {
        self.header("WARC-Refers-To-Target-URI")
            .map(strip_angle_brackets)
    }

    pub fn refers_to_date(&self) -> Option<&str> {
        self.header("WARC-Refers-To-Date")
    }

    pub fn warcinfo_id(&self) -> Option<&str> {
        self.header("WARC-Warcinfo-ID")
    }

    pub fn ip_address(&self) -> Option<&str> {
        self.header("WARC-IP-Address")
    }

    /// `WARC-Profile` (revisit records).
    pub fn profile(&self) -> Option<&str> {
        self.header("WARC-Profile")
    }

    /// HTTP status of a response (or revisit) block.
    pub fn http_status(&self) -> Option<u16> {
        self.http.as_ref().and_then(HttpHead::status)
    }
}

fn strip_angle_brackets(value: &str) -> &str {
    let v = value.trim();
    v.strip_prefix('<')
        .and_then(|v| v.strip_suffix('>'))
        .unwrap_or(v)
}

/// Parse a WARC-Date (see [`Record::date_utc`]).
pub fn parse_warc_date(value: &str) -> Option<DateTime<Utc>> {
    let v = value.trim();
    if let Ok(date) = DateTime::parse_from_rfc3339(v) {
        return Some(date.with_timezone(&Utc));
    }
    if v.len() == 14 && v.bytes().all(|b| b.is_ascii_digit()) {
        return NaiveDateTime::parse_from_str(v, "%Y%m%d%H%M%S")
            .ok()
            .map(|d| d.and_utc());
    }
    NaiveDateTime::parse_from_str(v.trim_end_matches('Z'), "%Y-%m-%dT%H:%M:%S")
        .ok()
        .map(|d| d.and_utc())
}

/// The WARC header block split into its parts.
#[derive(Debug)]
pub(crate) struct ParsedHeader {
    pub version: String,
    pub headers: Headers,
    pub malformed_lines: u32,
}

/// Parse a WARC header block (version line through the empty line). `Err` with a reason
/// when the first line is not `WARC/…`.
pub(crate) fn parse_warc_header(block: &[u8]) -> Result<ParsedHeader, String> {
    let first_end = memchr::memchr(b'\n', block).map_or(block.len(), |i| i + 1);
    let first = strip_cr(
        block[..first_end]
            .strip_suffix(b"\n")
            .unwrap_or(&block[..first_end]),
    );
    let Some(version) = first.strip_prefix(b"WARC/") else {
        return Err(format!(
            "expected a WARC/ version line, found {:?}",
            lossy(&first[..first.len().min(40)])
        ));
    };
    let (headers, malformed_lines) = Headers::parse(&block[first_end..]);
    Ok(ParsedHeader {
        version: lossy(trim(version)),
        headers,
        malformed_lines,
    })
}

/// Parse an `application/warc-fields` block (warcinfo, metadata): `name: value` lines.
pub fn parse_warc_fields(block: &[u8]) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in block.split(|&b| b == b'\n') {
        let line = strip_cr(line);
        if line.is_empty() {
            continue;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(&lossy(trim(line)));
            }
            continue;
        }
        if let Some(colon) = line.iter().position(|&b| b == b':') {
            fields.push((lossy(trim(&line[..colon])), lossy(trim(&line[colon + 1..]))));
        }
    }
    fields
}

/// A record's fetch time as 14 digits, from WARC-Date (`2017-10-27T22:21:13Z`, maybe with
/// fractional seconds in WARC/1.1).
pub fn warc_date_to_ts14(date: &str) -> Option<String> {
    let digits: String = date
        .trim()
        .chars()
        .take_while(|c| *c != '.' && *c != 'Z' && *c != '+')
        .filter(char::is_ascii_digit)
        .collect();
    (digits.len() == 14).then_some(digits)
}

/// Why a record that would be a capture (or a CDX line) is left out: a problem reason and
/// message for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unindexable {
    pub reason: &'static str,
    pub message: String,
}

/// The target URI and 14-digit timestamp every capture and every CDX line needs. The one
/// rule `import-warc` and `cdx` share, so that both keep and report the same records.
pub fn index_fields(record: &Record) -> Result<(&str, String), Unindexable> {
    let Some(url) = record.target_uri().filter(|u| !u.is_empty()) else {
        return Err(Unindexable {
            reason: "missing-target-uri",
            message: format!(
                "{} record without WARC-Target-URI: no capture",
                record.warc_type
            ),
        });
    };
    let Some(ts) = record.date().and_then(warc_date_to_ts14) else {
        let shown: String = record.date().unwrap_or_default().chars().take(40).collect();
        return Err(Unindexable {
            reason: "bad-warc-date",
            message: format!("WARC-Date {shown:?} is not a date and time: no capture"),
        });
    };
    Ok((url, ts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_block() {
        let parsed = parse_warc_header(
            b"WARC/0.17\r\nWARC-Type: response\r\nX: a\r\n\tb\r\nnocolon\nWARC-Target-URI: <http://a/\xff>\r\n\r\n",
        )
        .unwrap();
        assert_eq!(parsed.version, "0.17");
        assert_eq!(
            parsed.headers.to_vec()[1],
            ("X".to_string(), "a b".to_string())
        );
        assert_eq!(parsed.malformed_lines, 1);
        assert_eq!(parsed.headers.to_vec()[2].1, "<http://a/\u{fffd}>");
        assert!(parse_warc_header(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
    }

    #[test]
    fn dates() {
        let d = parse_warc_date("2017-03-06T04:02:06Z").unwrap();
        assert_eq!(d.to_rfc3339(), "2017-03-06T04:02:06+00:00");
        assert_eq!(
            parse_warc_date("2017-03-06T04:02:06.123456Z")
                .unwrap()
                .timestamp(),
            d.timestamp()
        );
        assert_eq!(parse_warc_date("20170306040206").unwrap(), d);
        assert!(parse_warc_date("2008-10-294T05:21:46-0700").is_none());
    }

    #[test]
    fn types_and_fields() {
        assert_eq!(WarcType::parse("Response"), WarcType::Response);
        assert_eq!(
            WarcType::parse("unknown"),
            WarcType::Other("unknown".into())
        );
        let fields = parse_warc_fields(b"software: Wget/1.20\r\noperator: Admin\r\n\r\n");
        assert_eq!(fields[1], ("operator".into(), "Admin".into()));
    }

    #[test]
    fn warc_dates_become_14_digits() {
        assert_eq!(
            warc_date_to_ts14("2017-10-27T22:21:13Z").as_deref(),
            Some("20171027222113")
        );
        assert_eq!(
            warc_date_to_ts14("2021-03-14T01:02:03.123456Z").as_deref(),
            Some("20210314010203")
        );
        assert_eq!(warc_date_to_ts14("2017-10-27"), None);
    }
}
