//! Streaming WARC reader.
//!
//! Reads WARC 1.0, 1.1 and the older 0.17/0.18 from any `Read`: gzip with one member per
//! record (the usual layout), one member for the whole file, members that do not line up
//! with records, or uncompressed; the format is told from the first bytes. For each record
//! it gives its exact place in the file (offset and length), the WARC headers, the HTTP
//! head when the block holds an HTTP message, and a summary of the payload (SHA-1 and
//! length of the stored bytes after the HTTP head, the first bytes, the de-chunked SHA-1
//! when the body is chunk-encoded) checked against `WARC-Payload-Digest`. Payloads are
//! streamed, never held in memory; a sink can receive them.
//!
//! Bad input never stops the reader: each problem is returned as a [`WarcError`] with the
//! file offset and an [`ErrorKind`], then the reader resynchronizes and goes on:
//! - gzip with one member per record: on the next member. Nothing inside another record's
//!   member is a record (a WARC file stored in a payload holds `WARC/` lines).
//! - uncompressed input, or gzip members that do not line up with records: on the next
//!   line starting with `WARC/`, from the start of the damaged block, so that records a
//!   Content-Length far too large swallowed are read again (from a temporary file when the
//!   buffer cannot hold them, so memory stays bounded). A record found so counts only when
//!   complete and valid (all mandatory headers, CRLFCRLF or the end right where its
//!   Content-Length says); [`WarcReader::resyncs`] counts them.
//! - A gzip member whose trailer (CRC-32, ISIZE) is damaged or missing but whose data
//!   decoded completely: the complete record it holds is returned, followed by a
//!   [`ErrorKind::GzipTrailer`] error.
//!
//! ```no_run
//! use sediment::warc::{DigestCheck, WarcReader};
//! let file = std::fs::File::open("crawl.warc.gz").unwrap();
//! let mut reader = WarcReader::new(file).unwrap(); // fails only for ARC, zstd, I/O errors
//! let mut body = Vec::new();
//! while let Some(item) = reader.next_record(Some(&mut |bytes: &[u8]| body.extend_from_slice(bytes))) {
//!     match item {
//!         Ok(record) => {
//!             let payload = record.payload.as_ref().unwrap();
//!             println!("{} {} {:?} {}", record.offset, record.length, record.target_uri(), payload.length);
//!             if let DigestCheck::Mismatch { .. } = record.digest_check { /* count it */ }
//!         }
//!         Err(error) => eprintln!("{error}"), // offset, reason, message; maybe the record
//!     }
//!     body.clear();
//! }
//! ```
//!
//! Where this reader and warcio (the reference in `tests/warc_reader.rs`) differ, on purpose:
//! - The length of an uncompressed record includes the CRLFCRLF after its block (warcio
//!   stops before it); for gzip both give the member length.
//! - A record whose block does not end where `Content-Length` says, or that lacks a
//!   mandatory header, is returned as an error (carrying the parsed record); warcio returns
//!   it with a warning or stops reading the file.
//! - Whole-file gzip and gzip members that do not line up with records are read (warcio
//!   refuses them); records then have `skip > 0` (decompressed bytes into the member).
//! - A block whose first line is not an HTTP status line (e.g. `HTTPX/1.1 200`) has no HTTP
//!   head: its whole block is the payload.
//! - The payload SHA-1 is over the stored bytes; for chunked bodies the de-chunked SHA-1 is
//!   given as well, and a `WARC-Payload-Digest` naming it is [`DigestCheck::MatchDechunked`].

mod block;
mod bytes;
pub mod chunked;
pub mod digest;
mod end_check;
pub mod error;
mod gzip;
pub mod headers;
pub mod http;
mod input;
mod libdeflate;
mod parser;
mod reader;
pub mod record;
mod source;

pub use block::PayloadSink;
pub use chunked::{DechunkError, Dechunker};
pub use digest::{DigestCheck, ParsedDigest, check_digest, parse_digest, sha1_base32};
pub use error::{ErrorKind, MandatoryHeader, WarcError};
pub use headers::Headers;
pub use http::{HttpHead, StartLine};
pub use parser::ReaderOptions;
pub use reader::WarcReader;
pub use record::{
    Compression, PayloadSummary, Record, Unindexable, WarcType, Warning, index_fields,
    parse_warc_date, parse_warc_fields, warc_date_to_ts14,
};
