//! The layouts of the capture key spaces: their keys, the `capture_by_digest` index
//! entry and its merge, the tokens of dirty marks, and the meta prefix of failed fetches.
//! A leaf of the store: the backends (for the merge operator), the writer and the
//! readers all build on it.
//!
//! `capture` keys: `SURT ‖ 0x00 ‖ timestamp(14) ‖ 0x00 ‖ file ‖ 0x00 ‖ position(8)`,
//! the wayback/CDX order. `capture_by_digest` keys: `digest(20) ‖ timestamp(14) ‖ file ‖
//! 0x00 ‖ position(8)`, so the captures of one payload are listed in the order that
//! defines "the first capture": (capture time, WARC or CDX file name, offset).

use crate::capture::CaptureRef;
use crate::key::Sha1Key;

pub fn capture_key(capture: &CaptureRef<'_>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(capture.surt.as_bytes());
    out.push(0);
    out.extend_from_slice(capture.ts.as_bytes());
    out.push(0);
    push_tie_breaker(capture, out);
}

pub fn by_digest_key(digest: &Sha1Key, capture: &CaptureRef<'_>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(digest.as_bytes());
    out.extend_from_slice(capture.ts.as_bytes());
    push_tie_breaker(capture, out);
}

/// The value of a `capture_by_digest` entry: what deriving a file row needs to know
/// without reading the capture, and where the capture is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub flags: u8,
    pub capture_key: Vec<u8>,
}

impl IndexEntry {
    /// The capture counts towards `f:c.c`.
    pub const COUNTS: u8 = 1;
    /// The capture may locate the file (passes the filter, not a revisit).
    pub const LOCATES: u8 = 2;
    pub const HAS_SIZE: u8 = 4;
    pub const HAS_MIME: u8 = 8;
    const MAGIC: u8 = 0xD1;

    pub fn flags_of(capture: &CaptureRef<'_>) -> u8 {
        let mut flags = 0;
        if capture.counts() {
            flags |= Self::COUNTS;
        }
        if capture.locates_file() {
            flags |= Self::LOCATES;
        }
        if capture.size.is_some() {
            flags |= Self::HAS_SIZE;
        }
        if capture.mime.is_some() {
            flags |= Self::HAS_MIME;
        }
        flags
    }

    /// Appends the stored form: magic, flags, capture key.
    pub fn encode(flags: u8, capture_key: &[u8], out: &mut Vec<u8>) {
        out.push(Self::MAGIC);
        out.push(flags);
        out.extend_from_slice(capture_key);
    }

    pub fn decode(bytes: &[u8]) -> Option<(u8, &[u8])> {
        match bytes {
            [Self::MAGIC, flags, key @ ..] => Some((*flags, key)),
            _ => None,
        }
    }
}

/// Merge operator of `capture_by_digest`: entries of one capture from several inputs
/// (a CDX line and the WARC record it indexes) combine their flags; the capture key is
/// the same, or the greatest one when SURTs were spelled differently.
pub fn merge_index_entries<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut flags = 0u8;
    let mut key: Option<&[u8]> = None;
    for value in values {
        if let Some((f, k)) = IndexEntry::decode(value) {
            flags |= f;
            if key.is_none_or(|best| k > best) {
                key = Some(k);
            }
        }
    }
    let mut out = Vec::new();
    IndexEntry::encode(flags, key?, &mut out);
    Some(out)
}

fn push_tie_breaker(capture: &CaptureRef<'_>, out: &mut Vec<u8>) {
    let (file, position) = capture.tie_breaker();
    out.extend_from_slice(file.as_bytes());
    out.push(0);
    out.extend_from_slice(&position.to_be_bytes());
}

/// What a writer writes into its dirty marks: which process marked the digest, so that
/// on a shared backend each writer can wait for its own marks to be derived.
pub fn writer_token(ts: u64) -> Vec<u8> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}:{}:{ts}", host.trim(), std::process::id()).into_bytes()
}

/// The value of the dirty marks of one batch: the writer and a number no other batch of
/// this process uses. A deriver removes a mark only if it still has the value it read,
/// so a digest marked again after its captures were read is derived again.
pub fn mark_token(writer: &[u8]) -> Vec<u8> {
    static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut token = writer.to_vec();
    token.extend_from_slice(format!("#{n}").as_bytes());
    token
}

/// Failed fetches (request records the archive holds no response for) are kept in the
/// meta space under this prefix and the capture key, stored like captures but outside the
/// capture index: they have no status and no payload, and CDX views do not list them.
/// The crawl database projects them (crawl_log and request rows without HTTP status).
pub const FAILED_FETCH_PREFIX: &[u8] = b"failed_fetch/";
