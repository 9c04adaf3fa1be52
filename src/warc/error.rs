//! Errors of the WARC reader: each names the byte offset in the input file and a reason.

use std::fmt;

use super::record::Record;

/// Why a record (or a stretch of the input) could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the input failed. Fatal: the reader returns nothing after it.
    Io,
    /// The input is an ARC file (`filedesc://`), which this reader does not read. Fatal.
    ArcNotSupported,
    /// The input is compressed with something other than gzip (zstd, bzip2, xz, lz4). Fatal.
    UnsupportedCompression,
    /// A gzip member header is invalid (method, reserved flags, header CRC, overlong field).
    GzipHeader,
    /// The deflate data of a gzip member is invalid: the member is corrupt or was cut short
    /// and followed by other bytes.
    GzipData,
    /// The input ended inside a gzip member.
    GzipTruncated,
    /// The CRC-32 in a gzip member trailer does not match the decompressed bytes.
    GzipChecksum,
    /// The ISIZE in a gzip member trailer does not match the decompressed length.
    GzipSize,
    /// The trailer of a gzip member (CRC-32, ISIZE) is damaged or missing, but the member's
    /// data decoded completely and the record ending with it was complete: that record was
    /// returned just before this error, which reports only the trailer.
    GzipTrailer,
    /// Bytes that belong to no record where a record (or a gzip member) should start.
    Garbage,
    /// The WARC header block is malformed (no `WARC/` version line, or longer than the limit).
    BadHeader,
    /// A mandatory WARC header is missing (the payload is skipped, the reader goes on).
    MissingHeader(MandatoryHeader),
    /// `Content-Length` is not a decimal number.
    InvalidContentLength,
    /// The block does not end where `Content-Length` says: no CRLFCRLF after it, or the
    /// next record starts inside it.
    ContentLengthMismatch,
    /// The input ended inside the record.
    RecordTruncated,
}

/// The WARC headers every record must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MandatoryHeader {
    WarcType,
    WarcRecordId,
    WarcDate,
    ContentLength,
}

impl MandatoryHeader {
    pub fn name(self) -> &'static str {
        match self {
            MandatoryHeader::WarcType => "WARC-Type",
            MandatoryHeader::WarcRecordId => "WARC-Record-ID",
            MandatoryHeader::WarcDate => "WARC-Date",
            MandatoryHeader::ContentLength => "Content-Length",
        }
    }
}

impl ErrorKind {
    /// A short stable name, for counting errors by reason in a report.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::ArcNotSupported => "arc-not-supported",
            ErrorKind::UnsupportedCompression => "unsupported-compression",
            ErrorKind::GzipHeader => "gzip-header",
            ErrorKind::GzipData => "gzip-data",
            ErrorKind::GzipTruncated => "gzip-truncated",
            ErrorKind::GzipChecksum => "gzip-checksum",
            ErrorKind::GzipSize => "gzip-size",
            ErrorKind::GzipTrailer => "gzip-trailer",
            ErrorKind::Garbage => "garbage",
            ErrorKind::BadHeader => "bad-header",
            ErrorKind::MissingHeader(MandatoryHeader::WarcType) => "missing-warc-type",
            ErrorKind::MissingHeader(MandatoryHeader::WarcRecordId) => "missing-warc-record-id",
            ErrorKind::MissingHeader(MandatoryHeader::WarcDate) => "missing-warc-date",
            ErrorKind::MissingHeader(MandatoryHeader::ContentLength) => "missing-content-length",
            ErrorKind::InvalidContentLength => "invalid-content-length",
            ErrorKind::ContentLengthMismatch => "content-length-mismatch",
            ErrorKind::RecordTruncated => "record-truncated",
        }
    }

    /// Fatal errors end the iteration; all others are followed by resynchronization.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            ErrorKind::Io | ErrorKind::ArcNotSupported | ErrorKind::UnsupportedCompression
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A problem in the input, at `offset` (bytes from the start of the input file).
///
/// For gzip-level problems `offset` is the start of the gzip member (or of the garbage);
/// for record-level problems it is the record's offset (see [`Record::offset`]).
#[derive(Debug)]
pub struct WarcError {
    pub kind: ErrorKind,
    pub offset: u64,
    /// Human-readable explanation, naming the offset and what was expected.
    pub message: String,
    /// The record as far as it could be parsed (WARC headers, maybe the HTTP head and the
    /// payload summary), when the problem was found after its header block was read.
    /// The payload sink may have received bytes of this record: discard them.
    pub record: Option<Box<Record>>,
}

impl WarcError {
    pub(crate) fn new(kind: ErrorKind, offset: u64, message: impl Into<String>) -> Self {
        WarcError {
            kind,
            offset,
            message: message.into(),
            record: None,
        }
    }

    pub(crate) fn with_record(mut self, record: Record) -> Self {
        self.record = Some(Box::new(record));
        self
    }
}

impl fmt::Display for WarcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {}: {}: {}", self.offset, self.kind, self.message)
    }
}

impl std::error::Error for WarcError {}
