//! Where does a record whose Content-Length is wrong (or missing) really end? Its block
//! may hold the text of other WARC records (a stored WARC file, a page quoting one), so a
//! `WARC/` line inside it proves nothing. The SHA-1s its headers name for its block
//! (`WARC-Block-Digest`) and its payload (`WARC-Payload-Digest`) do: the block ends where
//! the bytes read so far hash to them. [`EndCheck`] hashes the damaged block as it streams
//! by and tests each place where it could end (line ends, then a `WARC/` line).

use sha1::{Digest, Sha1};

use super::bytes::find_blank_line;
use super::digest::{ParsedDigest, parse_digest};
use super::record::{Record, WarcType};

pub(super) struct EndCheck {
    block: Option<([u8; 20], Sha1)>,
    payload: Option<([u8; 20], Sha1)>,
    /// Where the payload starts in the block; `None` while the end of the HTTP head is
    /// still being looked for.
    payload_from: Option<u64>,
    /// The last bytes fed while looking for the end of the HTTP head (it may straddle).
    head_tail: Vec<u8>,
    head_limit: u64,
    /// Block bytes fed so far.
    fed: u64,
}

fn sha1_of(value: Option<&str>) -> Option<[u8; 20]> {
    match parse_digest(value?) {
        ParsedDigest::Sha1(sha1) => Some(sha1),
        _ => None,
    }
}

impl EndCheck {
    /// The check for a damaged record, `None` when its headers name no SHA-1 to test.
    /// `head_limit`: how far into the block the end of an HTTP head is looked for, when the
    /// block was not read (no usable Content-Length).
    pub(super) fn of(record: &Record, head_limit: usize) -> Option<EndCheck> {
        let block = sha1_of(record.header("WARC-Block-Digest"));
        // A revisit's digest names an earlier payload, a segment's the reassembled one.
        let payload = if record.warc_type == WarcType::Revisit
            || record.header("WARC-Segment-Number").is_some()
        {
            None
        } else {
            sha1_of(record.payload_digest())
        };
        if block.is_none() && payload.is_none() {
            return None;
        }
        let http_like = matches!(
            record.warc_type,
            WarcType::Response | WarcType::Revisit | WarcType::Request
        ) || record.content_type().is_some_and(|t| {
            t.as_bytes()
                .get(..16)
                .is_some_and(|p| p.eq_ignore_ascii_case(b"application/http"))
        });
        let payload_from = match &record.http {
            Some(head) => Some(head.length),
            // The block was read and had no HTTP head, or none is expected.
            None if record.payload.is_some() || !http_like => Some(0),
            None => None,
        };
        Some(EndCheck {
            block: block.map(|sha1| (sha1, Sha1::new())),
            payload: payload.map(|sha1| (sha1, Sha1::new())),
            payload_from,
            head_tail: Vec::new(),
            head_limit: head_limit as u64,
            fed: 0,
        })
    }

    /// The next bytes of the block.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some((_, sha1)) = &mut self.block {
            sha1.update(bytes);
        }
        let start = self.fed;
        self.fed += bytes.len() as u64;
        if self.payload.is_none() {
            return;
        }
        let from = match self.payload_from {
            Some(from) => from,
            None => match find_blank_line(&self.head_tail, bytes) {
                Some(n) => {
                    self.payload_from = Some(start + n as u64);
                    self.head_tail = Vec::new();
                    start + n as u64
                }
                None if self.fed > self.head_limit => {
                    // No HTTP head within the limit: the payload digest cannot be placed.
                    self.payload = None;
                    return;
                }
                None => {
                    self.head_tail
                        .extend_from_slice(&bytes[bytes.len().saturating_sub(16)..]);
                    let excess = self.head_tail.len().saturating_sub(16);
                    self.head_tail.drain(..excess);
                    return;
                }
            },
        };
        if let Some((_, sha1)) = &mut self.payload
            && from < self.fed
        {
            let skip = from.saturating_sub(start) as usize;
            sha1.update(&bytes[skip..]);
        }
    }

    /// Whether the block ends after the bytes fed so far and `more` (without feeding them):
    /// one of the digests matches.
    pub(super) fn ends_after(&self, more: &[u8]) -> bool {
        let matches = |(expected, sha1): &([u8; 20], Sha1), bytes: &[u8]| {
            let mut sha1 = sha1.clone();
            sha1.update(bytes);
            <[u8; 20]>::from(sha1.finalize()) == *expected
        };
        if let Some(block) = &self.block
            && matches(block, more)
        {
            return true;
        }
        match (&self.payload, self.payload_from) {
            (Some(payload), Some(from)) if from <= self.fed + more.len() as u64 => {
                let skip = from.saturating_sub(self.fed) as usize;
                matches(payload, &more[skip..])
            }
            _ => false,
        }
    }
}
