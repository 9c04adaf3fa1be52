//! The layouts of the capture key spaces: their keys, the `capture_by_digest` index
//! entry and its merge, the tokens of dirty marks, and the meta prefix of failed fetches.
//! A leaf of the store: the backends (for the merge operator), the writer and the
//! readers all build on it.
//!
//! `capture` keys: `SURT ‖ 0x00 ‖ timestamp(14) ‖ 0x00 ‖ file ‖ 0x00 ‖ position(8)`,
//! the wayback/CDX order. `capture_by_digest` keys: `digest(20) ‖ timestamp(14) ‖ file ‖
//! 0x00 ‖ position(8)`, so the captures of one payload are listed in the order that
//! defines "the first capture": (capture time, WARC or CDX file name, offset).

use std::borrow::Cow;

use crate::capture::CaptureRef;
use crate::key::Sha1Key;

pub fn capture_key(capture: &CaptureRef<'_>, out: &mut Vec<u8>) {
    out.clear();
    push_capture_key(capture, out);
}

/// Appends the capture key of `capture` to `out`.
pub fn push_capture_key(capture: &CaptureRef<'_>, out: &mut Vec<u8>) {
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
///
/// Two stored forms: `0xD1 ‖ flags ‖ capture key`, and (written since issue 36's store
/// size work) `0xD2 ‖ flags ‖ SURT`, for an entry whose capture key is `SURT ‖ 0 ‖
/// timestamp(14) ‖ 0 ‖ file ‖ 0 ‖ position`: the rest of that key is the entry's own key
/// after the digest, so it is not stored twice (a third of the space's bytes). Reading an
/// entry takes its key for that reason ([`IndexEntry::decode`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub flags: u8,
    pub capture_key: Vec<u8>,
}

/// Length of the capture timestamps an entry of the short form has.
const TS_LEN: usize = 14;

impl IndexEntry {
    /// The capture counts towards `f:c.c`.
    pub const COUNTS: u8 = 1;
    /// The capture may locate the file (passes the filter, not a revisit).
    pub const LOCATES: u8 = 2;
    pub const HAS_SIZE: u8 = 4;
    pub const HAS_MIME: u8 = 8;
    const MAGIC: u8 = 0xD1;
    const MAGIC_SURT: u8 = 0xD2;

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

    /// Appends the stored form of the entry of the capture whose key is `capture_key`:
    /// the short form when the key's timestamp has 14 digits.
    pub fn encode(flags: u8, capture_key: &[u8], out: &mut Vec<u8>) {
        match short_form_surt(capture_key) {
            Some(surt) => {
                out.push(Self::MAGIC_SURT);
                out.push(flags);
                out.extend_from_slice(surt);
            }
            None => {
                out.push(Self::MAGIC);
                out.push(flags);
                out.extend_from_slice(capture_key);
            }
        }
    }

    /// (flags, capture key) of the entry stored as `value` under the by-digest key `key`.
    pub fn decode<'v>(key: &[u8], value: &'v [u8]) -> Option<(u8, Cow<'v, [u8]>)> {
        match value {
            [Self::MAGIC, flags, capture_key @ ..] => Some((*flags, Cow::Borrowed(capture_key))),
            [Self::MAGIC_SURT, flags, surt @ ..] => {
                let (ts, rest) = key.get(Sha1Key::LEN..)?.split_at_checked(TS_LEN)?;
                let mut capture_key = Vec::with_capacity(surt.len() + 2 + TS_LEN + rest.len());
                for part in [surt, &[0], ts, &[0], rest] {
                    capture_key.extend_from_slice(part);
                }
                Some((*flags, Cow::Owned(capture_key)))
            }
            _ => None,
        }
    }

    /// The flags of a stored entry (its key is not needed for them).
    pub fn decode_flags(value: &[u8]) -> Option<u8> {
        match value {
            [Self::MAGIC | Self::MAGIC_SURT, flags, ..] => Some(*flags),
            _ => None,
        }
    }

    /// The flags and the SURT of a stored entry, and whether it is of the short form.
    fn parts(value: &[u8]) -> Option<(u8, &[u8], bool)> {
        match value {
            [Self::MAGIC, flags, capture_key @ ..] => {
                let surt_end = memchr::memchr(0, capture_key).unwrap_or(capture_key.len());
                Some((*flags, &capture_key[..surt_end], false))
            }
            [Self::MAGIC_SURT, flags, surt @ ..] => Some((*flags, surt, true)),
            _ => None,
        }
    }
}

/// The SURT of a capture key whose timestamp has 14 digits (`SURT ‖ 0 ‖ 14 digits ‖ 0 ‖
/// …`); `None` for any other key, whose entry keeps the whole key.
fn short_form_surt(capture_key: &[u8]) -> Option<&[u8]> {
    let surt_end = memchr::memchr(0, capture_key)?;
    let after = capture_key.get(surt_end + 1..)?;
    let ts = after.get(..TS_LEN)?;
    (ts.iter().all(u8::is_ascii_digit) && after.get(TS_LEN) == Some(&0))
        .then(|| &capture_key[..surt_end])
}

/// Merge operator of `capture_by_digest`: entries of one capture from several inputs
/// (a CDX line and the WARC record it indexes) combine their flags; the capture key is
/// the same, or the greatest one when SURTs were spelled differently. Entries of one key
/// share everything after the SURT (the key holds it), so the greatest SURT names the
/// greatest capture key, in either stored form.
pub fn merge_index_entries<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut flags = 0u8;
    let mut best: Option<(&[u8], &[u8])> = None;
    for value in values {
        if let Some((f, surt, _)) = IndexEntry::parts(value) {
            flags |= f;
            if best.is_none_or(|(best_surt, _)| surt > best_surt) {
                best = Some((surt, value));
            }
        }
    }
    let (_, value) = best?;
    let mut out = Vec::with_capacity(value.len());
    out.push(value[0]);
    out.push(flags);
    out.extend_from_slice(&value[2..]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Capture;

    fn capture(surt: &str, ts: &str, warc: Option<&str>, offset: u64) -> Capture {
        Capture {
            source: "in.cdx".into(),
            surt: surt.into(),
            ts: ts.into(),
            url: "http://example.org/".into(),
            warc: warc.map(str::to_owned),
            offset: Some(offset),
            line: Some(offset),
            digest: Some(Sha1Key([9; 20])),
            ..Default::default()
        }
    }

    /// (by-digest key, capture key) of a capture.
    fn keys(c: &Capture) -> (Vec<u8>, Vec<u8>) {
        let (mut by_digest, mut key) = (Vec::new(), Vec::new());
        by_digest_key(&Sha1Key([9; 20]), &c.view(), &mut by_digest);
        capture_key(&c.view(), &mut key);
        (by_digest, key)
    }

    #[test]
    fn entries_keep_the_surt_alone_when_the_key_holds_the_rest_and_read_back_whole() {
        let cases = [
            // 14 digits: the short form.
            (
                capture("org,example)/", "20200101000000", Some("a.warc.gz"), 7),
                true,
            ),
            (
                capture("org,example)/a\u{e9}", "20200101000000", None, 0),
                true,
            ),
            // Other timestamps keep the whole capture key, also when a byte of the
            // position happens to be 0 where the 0 after 14 digits would be.
            (capture("org,example)/", "202001", Some("ab"), 0), false),
            (capture("org,example)/", "2020", None, 1 << 40), false),
            (
                capture("org,example)/", "202001010000001", Some("a"), 5),
                false,
            ),
            (
                capture("org,example)/", "2020010100000x", Some("a"), 5),
                false,
            ),
        ];
        for (c, short) in &cases {
            let (by_digest, key) = keys(c);
            for flags in [0, IndexEntry::LOCATES | IndexEntry::HAS_MIME] {
                let mut value = Vec::new();
                IndexEntry::encode(flags, &key, &mut value);
                assert_eq!(value[0] == IndexEntry::MAGIC_SURT, *short, "{c:?}");
                if *short {
                    assert_eq!(&value[2..], c.surt.as_bytes());
                }
                let (f, read) = IndexEntry::decode(&by_digest, &value).unwrap();
                assert_eq!((f, read.as_ref()), (flags, key.as_slice()), "{c:?}");
                assert_eq!(IndexEntry::decode_flags(&value), Some(flags));
            }
        }
        // A short entry under a key too short to hold the rest is damaged, not a panic.
        let (_, key) = keys(&cases[0].0);
        let mut value = Vec::new();
        IndexEntry::encode(0, &key, &mut value);
        for cut in 0..34 {
            assert_eq!(IndexEntry::decode(&[9; 34][..cut], &value), None);
        }
        assert_eq!(IndexEntry::decode(b"key", b"\xd3\x00x"), None);
    }

    #[test]
    fn merged_entries_keep_every_flag_and_the_greatest_surt_in_either_form() {
        // Entries of one by-digest key (same time and place) whose SURTs were spelled
        // differently, written in the old form (whole key) and the short one.
        let a = capture("org,example)/", "20200101000000", Some("a.warc.gz"), 7);
        let b = capture("org,example)/b", "20200101000000", Some("a.warc.gz"), 7);
        let (by_digest, key_a) = keys(&a);
        let (_, key_b) = keys(&b);
        let old = |flags: u8, key: &[u8]| [&[IndexEntry::MAGIC, flags][..], key].concat();
        let new = |flags: u8, key: &[u8]| {
            let mut v = Vec::new();
            IndexEntry::encode(flags, key, &mut v);
            v
        };
        for (x, y) in [
            (old(1, &key_a), old(2, &key_b)),
            (new(1, &key_a), new(2, &key_b)),
            (old(1, &key_a), new(2, &key_b)),
            (new(1, &key_a), old(2, &key_b)),
        ] {
            for values in [[&x, &y], [&y, &x]] {
                let merged = merge_index_entries(values.map(Vec::as_slice)).unwrap();
                let (flags, key) = IndexEntry::decode(&by_digest, &merged).unwrap();
                assert_eq!((flags, key.as_ref()), (3, key_b.as_slice()));
            }
        }
        // Old entries merge to what they merged to before.
        let merged = merge_index_entries([old(1, &key_a).as_slice(), &old(4, &key_b)]).unwrap();
        assert_eq!(merged, old(5, &key_b));
        assert_eq!(merge_index_entries([&b"junk"[..]]), None);
    }
}
