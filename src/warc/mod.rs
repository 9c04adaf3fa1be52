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
//! file offset and an [`ErrorKind`], then the reader resynchronizes on the next gzip member
//! or the next line starting with `WARC/` and goes on.

pub mod chunked;
pub mod digest;
pub mod error;
mod gzip;
pub mod headers;
pub mod http;
mod input;
mod reader;
pub mod record;
mod source;

pub use chunked::{DechunkError, Dechunker};
pub use digest::{DigestCheck, ParsedDigest, check_digest, parse_digest, sha1_base32};
pub use error::{ErrorKind, MandatoryHeader, WarcError};
pub use headers::Headers;
pub use http::{HttpHead, StartLine};
pub use reader::{PayloadSink, ReaderOptions, WarcReader};
pub use record::{
    Compression, PayloadSummary, Record, WarcType, Warning, parse_warc_date, parse_warc_fields,
};
