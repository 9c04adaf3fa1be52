//! What the projections read from the store: every capture in URL/time order, and the
//! decoded HTTP bodies of files, read back from their WARCs.

use std::collections::HashSet;
use std::io::Read;
use std::sync::{Mutex, OnceLock};

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
    /// Cut because its Content-Encoding expanded it more than [`MAX_EXPANSION`] times (a
    /// compression bomb); `truncated` is set too.
    pub expansion_cut: bool,
}

/// A body's Content-Encoding may expand it this many times at most (beyond
/// [`EXPANSION_FLOOR`] bytes): real pages compress 3–20 times, compression bombs a thousand
/// times, and a projection must not turn a small archive into a huge database.
pub const MAX_EXPANSION: usize = 100;
/// Decoded bytes allowed whatever the ratio.
pub const EXPANSION_FLOOR: usize = 1 << 20;

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
#[derive(Clone)]
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
            Located::Missing { tried } => {
                missing_warcs().note(&tried);
                return Ok(Err(Unavailable::WarcMissing));
            }
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
        let encoded_len = bytes.len();
        let limit = limit.min(EXPANSION_FLOOR.max(encoded_len.saturating_mul(MAX_EXPANSION)));
        let mut inflate = |reader: &mut dyn Read| inflate(reader, limit, &mut truncated);
        let bytes = match encoding.as_str() {
            "" | "identity" | "none" => bytes,
            "gzip" | "x-gzip" => inflate(&mut flate2::read::MultiGzDecoder::new(&bytes[..])),
            "deflate" => {
                // "deflate" is zlib-wrapped per the RFC, raw deflate in practice on some servers.
                let zlib = inflate(&mut flate2::read::ZlibDecoder::new(&bytes[..]));
                if zlib.is_empty() && !bytes.is_empty() {
                    inflate(&mut flate2::read::DeflateDecoder::new(&bytes[..]))
                } else {
                    zlib
                }
            }
            other => return Ok(Err(Unavailable::UnsupportedEncoding(other.to_string()))),
        };
        let expansion_cut = truncated && limit < self.max_bytes && bytes.len() >= limit;
        Ok(Ok(Body {
            bytes,
            content_type,
            link,
            truncated,
            expansion_cut,
        }))
    }
}

/// The WARC files that body readers looked for and did not find, so that a command can
/// name them when it reports the bodies it could not read. Process-wide because each
/// projection makes its readers itself; a process runs one command.
#[derive(Default)]
pub struct MissingWarcs {
    inner: Mutex<Missing>,
}

#[derive(Default)]
struct Missing {
    distinct: HashSet<String>,
    first: Vec<String>,
    /// More distinct names were met than [`MISSING_COUNTED`].
    more: bool,
}

/// How many missing WARC names are kept in the order they were met.
const MISSING_NAMED: usize = 10;
/// Distinct missing names counted at most: an archive of millions of WARC files whose
/// directory was not given must not grow a projection's memory by their names.
const MISSING_COUNTED: usize = 1 << 16;

impl MissingWarcs {
    fn note(&self, tried: &[String]) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for warc in tried {
            if inner.distinct.contains(warc) {
                continue;
            }
            if inner.distinct.len() >= MISSING_COUNTED {
                inner.more = true;
                continue;
            }
            inner.distinct.insert(warc.clone());
            if inner.first.len() < MISSING_NAMED {
                inner.first.push(warc.clone());
            }
        }
    }

    /// The first missing WARC files (as stored), how many distinct ones were missing, and
    /// whether there were more than that count (it stops at `MISSING_COUNTED`).
    pub fn first(&self) -> (Vec<String>, usize, bool) {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (inner.first.clone(), inner.distinct.len(), inner.more)
    }
}

/// The missing WARC files of this process.
pub fn missing_warcs() -> &'static MissingWarcs {
    static MISSING: OnceLock<MissingWarcs> = OnceLock::new();
    MISSING.get_or_init(MissingWarcs::default)
}

/// Decompresses up to `limit` bytes; a damaged stream yields what decoded before the damage.
fn inflate(reader: &mut dyn Read, limit: usize, truncated: &mut bool) -> Vec<u8> {
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

/// HTML as the projections analyse it.
pub fn is_html_mime(mime: Option<&str>) -> bool {
    let essence = mime.unwrap_or("").split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("text/html")
        || essence.eq_ignore_ascii_case("application/xhtml+xml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_warc_names_are_counted_up_to_a_bound() {
        let missing = MissingWarcs::default();
        let names: Vec<String> = (0..MISSING_COUNTED + 5)
            .map(|i| format!("w{i}.warc.gz"))
            .collect();
        missing.note(&names[..3]);
        missing.note(&names[..3]);
        assert_eq!(missing.first(), (names[..3].to_vec(), 3, false));
        missing.note(&names);
        let (first, count, more) = missing.first();
        assert_eq!(first, names[..MISSING_NAMED].to_vec());
        assert_eq!((count, more), (MISSING_COUNTED, true));
    }
}
