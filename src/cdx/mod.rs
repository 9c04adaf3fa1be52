//! CDX and CDXJ index lines: dialects, a zero-copy line parser, and line readers.
//!
//! - [`lines`]: read plain or gzip input as numbered lines or as chunks of whole lines,
//!   and split a large buffer at line boundaries for parallel parsing. Every line format
//!   (JSON lines and TSV too) is read with it: lines over the cap are skipped and listed
//!   with their byte offsets.
//! - [`Dialect`]: which column holds what, from a header line (` CDX N b a m s k r M S V g`,
//!   wget's ` CDX a b a m s k r M V g u`, …), from the column count of a headerless file
//!   (11, 10 or 9 columns), or CDXJ (`SURT timestamp {json}`).
//! - [`CdxParser`]: per-file state (the dialect, adopted from the header or the first data
//!   line) turning each line into a [`CdxLine`]: a record borrowing from the line, a skipped
//!   line (header, comment, `filedesc`, blank), or a [`Reject`] with its reason.
//!
//! - `writer` (internal): the other way, CDX and CDXJ lines from WARC records, as pywb's
//!   cdxj-indexer writes them (the `cdx` command).
//!
//! Parsing a line allocates nothing, except for CDXJ values that need JSON unescaping and
//! for the detail text of a reject.

mod dialect;
pub mod lines;
mod parse;
mod timestamp;
pub(crate) mod writer;

use std::borrow::Cow;
use std::fmt;

use crate::key::Sha1Key;

pub use dialect::{ColumnLayout, Dialect, Field};
pub use parse::{CdxParser, detect_dialect, looks_like_surt};
pub use timestamp::Timestamp14;

/// One capture described by a CDX or CDXJ line. Text fields borrow from the line; CDXJ
/// values containing JSON escapes are unescaped into owned strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdxRecord<'a> {
    /// The SURT key, when the line has one (`N` column or CDXJ key) and it is SURT-shaped
    /// (`host,reversed)/path`). `None` for dialects without a key column, and for keys in
    /// other forms (pywb's non-SURT `example.com/path`, Heritrix `whois://…` keys): compute
    /// it from [`CdxRecord::url`] with [`crate::surt::surt`].
    pub surt: Option<&'a str>,
    /// The key column as written (`N` or `A`, or the CDXJ key), whatever its form.
    pub key: Option<&'a str>,
    /// Capture time, padded to 14 digits the way wayback pads (`2014` → `20140101000000`).
    pub timestamp: Timestamp14,
    /// The original URL (`a`).
    pub url: Cow<'a, str>,
    /// The MIME column as written (`m`); `None` for `-`. Sediment normalizes it (`schemas/mime-aliases.json`).
    pub mime: Option<Cow<'a, str>>,
    /// HTTP status (`s`); `None` for `-` (revisits, `dns:`/`whois:` lines).
    pub status: Option<u16>,
    /// Payload SHA-1 (`k`), from base32, `sha1:BASE32`, 40-character hex or base64.
    pub digest: Option<Sha1Key>,
    /// Redirect target (`r`).
    pub redirect: Option<Cow<'a, str>>,
    /// Meta flags (`M`, e.g. robots `A`/`F`/`I`).
    pub meta_flags: Option<Cow<'a, str>>,
    /// Compressed record length in the WARC (`S`, CDXJ `length`).
    pub compressed_size: Option<u64>,
    /// Record offset in the WARC (`V`, CDXJ `offset`).
    pub offset: Option<u64>,
    /// WARC file name or path as written (`g`, CDXJ `filename`).
    pub filename: Option<Cow<'a, str>>,
    /// WARC-Record-ID (wget's `u` column), without the angle brackets wget writes.
    pub record_id: Option<Cow<'a, str>>,
    /// A revisit line (mime `warc/revisit`): a capture of an earlier payload.
    pub is_revisit: bool,
}

/// What a line turned out to be.
// Boxing the record would cost an allocation per line; the size is the point.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdxLine<'a> {
    Record(CdxRecord<'a>),
    Skipped(SkipReason),
}

/// Lines that carry no capture and are skipped (not rejected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// ` CDX …` header naming the columns.
    Header,
    /// `#` comment, or a `!` header/meta line of OpenWayback-style CDXJ.
    Comment,
    /// ARC `filedesc` line.
    Filedesc,
    /// Empty or white-space-only line.
    Blank,
}

impl SkipReason {
    pub const ALL: [SkipReason; 4] = [
        SkipReason::Header,
        SkipReason::Comment,
        SkipReason::Filedesc,
        SkipReason::Blank,
    ];

    /// Stable snake_case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Header => "header",
            SkipReason::Comment => "comment",
            SkipReason::Filedesc => "filedesc",
            SkipReason::Blank => "blank",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a line was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RejectReason {
    /// Fewer columns than the dialect has (or than any headerless dialect).
    TooFewColumns,
    /// More columns than the dialect has (e.g. a space inside a URL).
    TooManyColumns,
    /// Timestamp not 4–14 digits, or a month/day/hour/minute/second out of range.
    BadTimestamp,
    /// Offset not a non-negative integer.
    BadOffset,
    /// Compressed size not a non-negative integer.
    BadSize,
    /// HTTP status not 1–3 digits.
    BadStatus,
    /// Digest present but not a SHA-1 in base32, hex or base64.
    BadDigest,
    /// The line is not valid UTF-8.
    NotUtf8,
    /// CDXJ: the third part is not a valid JSON object.
    BadJson,
    /// No original URL (`-`, or missing from the CDXJ object or the header's columns).
    MissingUrl,
    /// No timestamp column in the header's columns.
    MissingTimestamp,
    /// A ` CDX` header line whose fields are not single letters.
    BadHeader,
}

impl RejectReason {
    pub const ALL: [RejectReason; 12] = [
        RejectReason::TooFewColumns,
        RejectReason::TooManyColumns,
        RejectReason::BadTimestamp,
        RejectReason::BadOffset,
        RejectReason::BadSize,
        RejectReason::BadStatus,
        RejectReason::BadDigest,
        RejectReason::NotUtf8,
        RejectReason::BadJson,
        RejectReason::MissingUrl,
        RejectReason::MissingTimestamp,
        RejectReason::BadHeader,
    ];

    /// Stable snake_case name for reports and the rejects file.
    pub fn name(self) -> &'static str {
        match self {
            RejectReason::TooFewColumns => "too_few_columns",
            RejectReason::TooManyColumns => "too_many_columns",
            RejectReason::BadTimestamp => "bad_timestamp",
            RejectReason::BadOffset => "bad_offset",
            RejectReason::BadSize => "bad_size",
            RejectReason::BadStatus => "bad_status",
            RejectReason::BadDigest => "bad_digest",
            RejectReason::NotUtf8 => "not_utf8",
            RejectReason::BadJson => "bad_json",
            RejectReason::MissingUrl => "missing_url",
            RejectReason::MissingTimestamp => "missing_timestamp",
            RejectReason::BadHeader => "bad_header",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rejected line: the reason, and a detail for the user (which value, what was expected).
/// The caller adds the file and line number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: {detail}")]
pub struct Reject {
    pub reason: RejectReason,
    pub detail: String,
}

impl Reject {
    pub(crate) fn new(reason: RejectReason, detail: impl Into<String>) -> Self {
        Reject {
            reason,
            detail: detail.into(),
        }
    }
}
