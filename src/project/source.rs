//! What the projections read from the store: every capture in URL/time order, and the
//! decoded HTTP bodies of files, read back from their WARCs.

use std::io::Read;

use anyhow::Result;

use crate::capture::Capture;
use crate::key::Sha1Key;
use crate::payload::{Located, WarcLocator, locate, read_payload_at};
use crate::store::Store;

/// Calls `visit` with every capture, in URL-then-time order (the capture key order).
pub fn for_each_capture(store: &Store, mut visit: impl FnMut(Capture) -> Result<()>) -> Result<()> {
    store.for_each_capture(|capture| visit(capture).map(|()| true))
}

/// A file's body as the server meant it: de-chunked and with its Content-Encoding removed.
#[derive(Debug, Clone)]
pub struct Body {
    pub bytes: Vec<u8>,
    /// The HTTP Content-Type of the record it was read from.
    pub content_type: Option<String>,
    /// The record's HTTP `Link` header values joined by ", " (e.g. for `rel=canonical`).
    pub link: Option<String>,
    /// Cut at the size limit.
    pub truncated: bool,
}

/// Why a body could not be had; each is counted by the projections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No capture of the file has a WARC location.
    NoLocation,
    /// The WARC files are not under the given directories.
    WarcMissing,
    /// The record could not be read or did not match the key (message).
    ReadError(String),
    /// A Content-Encoding this build cannot decode (e.g. br).
    UnsupportedEncoding(String),
}

impl Unavailable {
    pub fn reason(&self) -> &'static str {
        match self {
            Unavailable::NoLocation => "no_warc_location",
            Unavailable::WarcMissing => "warc_not_found",
            Unavailable::ReadError(_) => "warc_read_error",
            Unavailable::UnsupportedEncoding(_) => "unsupported_content_encoding",
        }
    }
}

/// Reads bodies through stored locations, up to `max_bytes` each.
pub struct BodyReader {
    pub locator: WarcLocator,
    pub max_bytes: usize,
}

impl BodyReader {
    pub fn new(locator: WarcLocator, max_bytes: usize) -> BodyReader {
        BodyReader { locator, max_bytes }
    }

    pub fn read(&self, store: &Store, key: &Sha1Key) -> Result<Result<Body, Unavailable>> {
        let (warc, offset) = match locate(store, key, &self.locator)? {
            Located::Found { warc, offset } => (warc, offset),
            Located::Missing { .. } => return Ok(Err(Unavailable::WarcMissing)),
            Located::NoLocation => return Ok(Err(Unavailable::NoLocation)),
        };
        let mut bytes = Vec::new();
        let mut truncated = false;
        let limit = self.max_bytes;
        let record = read_payload_at(&warc, offset, key, true, &mut |chunk| {
            let room = limit.saturating_sub(bytes.len());
            if chunk.len() > room {
                truncated = true;
            }
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        });
        let record = match record {
            Ok(r) => r,
            Err(e) => return Ok(Err(Unavailable::ReadError(format!("{e:#}")))),
        };
        let http = record.http.as_ref();
        let content_type = http.and_then(|h| h.content_type()).map(str::to_string);
        let link = http
            .map(|h| h.header_all("link").collect::<Vec<_>>().join(", "))
            .filter(|l| !l.is_empty());
        let encoding = http
            .and_then(|h| h.content_encoding())
            .map(|e| e.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let bytes = match encoding.as_str() {
            "" | "identity" | "none" => bytes,
            "gzip" | "x-gzip" => inflate(
                flate2::read::MultiGzDecoder::new(&bytes[..]),
                limit,
                &mut truncated,
            ),
            "deflate" => {
                // "deflate" is zlib-wrapped per the RFC, raw deflate in practice on some servers.
                let zlib = inflate(
                    flate2::read::ZlibDecoder::new(&bytes[..]),
                    limit,
                    &mut truncated,
                );
                if zlib.is_empty() && !bytes.is_empty() {
                    inflate(
                        flate2::read::DeflateDecoder::new(&bytes[..]),
                        limit,
                        &mut truncated,
                    )
                } else {
                    zlib
                }
            }
            other => return Ok(Err(Unavailable::UnsupportedEncoding(other.to_string()))),
        };
        Ok(Ok(Body {
            bytes,
            content_type,
            link,
            truncated,
        }))
    }
}

/// Decompresses up to `limit` bytes; a damaged stream yields what decoded before the damage.
fn inflate(mut reader: impl Read, limit: usize, truncated: &mut bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = limit.saturating_sub(out.len());
                if n > room {
                    *truncated = true;
                    out.extend_from_slice(&buf[..room]);
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
    out
}
