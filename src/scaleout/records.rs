//! The line format that `sediment extract` prints and `sediment write-sst` reads: text a
//! distributed engine can split, shuffle and sort without knowing anything of Sediment.
//!
//! Every line is `KEY \t FIELDS…`. KEY is a one-letter key space followed by the lower-case
//! hex of the stored key, so sorting keys as byte strings (what Spark does with them) is
//! sorting the store's keys:
//!
//! ```text
//! c<hex capture key> \t <base64 capture>                         the `capture` key space
//! d<hex by-digest key> \t <base64 index entry> \t <base64 capture>  the `capture_by_digest` space
//! s \t <JSON input summary>                                        last line of an extract
//! ```
//!
//! A `d` line carries its capture so that a range of digests can derive its file rows on
//! its own (see [`super::sst`]). The *partition key* of a line ([`partition_key`]) is what
//! a range partitioner must compare: the whole key for `c` lines, only the digest for `d`
//! lines, so that every capture of one digest lands in the same range.

use std::collections::{BTreeMap, BinaryHeap};

use anyhow::{Context, Result, bail};
use data_encoding::{BASE64, HEXLOWER};
use serde::{Deserialize, Serialize};

use crate::ingest::warc::WarcInfo;

/// The key space letters.
pub const CAPTURE: u8 = b'c';
pub const BY_DIGEST: u8 = b'd';
pub const SUMMARY: u8 = b's';

/// Hex characters of a digest (the partition key of a `d` line is `d` and these).
const DIGEST_HEX: usize = 40;

/// Appends a `c` line.
pub fn push_capture_line(key: &[u8], capture: &[u8], out: &mut Vec<u8>) {
    out.push(CAPTURE);
    out.extend_from_slice(HEXLOWER.encode(key).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(BASE64.encode(capture).as_bytes());
    out.push(b'\n');
}

/// Appends a `d` line.
pub fn push_index_line(key: &[u8], entry: &[u8], capture: &[u8], out: &mut Vec<u8>) {
    out.push(BY_DIGEST);
    out.extend_from_slice(HEXLOWER.encode(key).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(BASE64.encode(entry).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(BASE64.encode(capture).as_bytes());
    out.push(b'\n');
}

/// The part of a line's key a range partitioner compares (see the module doc).
pub fn partition_key(key: &[u8]) -> &[u8] {
    match key.first() {
        Some(&BY_DIGEST) => &key[..key.len().min(1 + DIGEST_HEX)],
        _ => key,
    }
}

/// One decoded record line.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Capture {
        key: Vec<u8>,
        capture: Vec<u8>,
    },
    Index {
        key: Vec<u8>,
        entry: Vec<u8>,
        capture: Vec<u8>,
    },
    Summary(Box<InputPart>),
}

impl Record {
    /// Decodes one line (without its line break).
    pub fn parse(line: &[u8]) -> Result<Record> {
        let mut fields = line.split(|&b| b == b'\t');
        let key = fields.next().unwrap_or_default();
        let mut next = |what: &str| {
            fields
                .next()
                .with_context(|| format!("the line has no {what} field"))
        };
        let b64 = |text: &[u8]| BASE64.decode(text).context("a value field is not base64");
        let hex = |text: &[u8]| HEXLOWER.decode(text).context("a key is not lower-case hex");
        Ok(match key.first() {
            Some(&CAPTURE) => Record::Capture {
                key: hex(&key[1..])?,
                capture: b64(next("capture")?)?,
            },
            Some(&BY_DIGEST) => Record::Index {
                key: hex(&key[1..])?,
                entry: b64(next("index entry")?)?,
                capture: b64(next("capture")?)?,
            },
            Some(&SUMMARY) if key.len() == 1 => Record::Summary(Box::new(
                serde_json::from_slice(next("summary")?).context("a summary is not valid JSON")?,
            )),
            _ => bail!(
                "not a record line (it starts with {:?})",
                String::from_utf8_lossy(&key[..key.len().min(16)])
            ),
        })
    }
}

/// What one extract task read: the identity of its input (for the registry), what it
/// found, and what it printed (so the reader of its output can tell it is whole).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputPart {
    /// The ingest command this input is for (`import-warc`, `backfill-cdx`).
    pub command: String,
    /// The input as named (the `source` and `warc` of its captures).
    pub path: String,
    pub size: u64,
    /// The registry's content hash of the whole input (`xxh3-128:…`).
    pub content_hash: String,
    /// Options that change what the input writes (its registry identity, with the hash).
    pub options: String,
    /// Which part of the input this is, and of how many.
    pub part: u32,
    pub parts: u32,
    /// The input was ingested before with the same options: nothing was extracted.
    #[serde(default)]
    pub skipped: bool,
    /// The input's counts (its registry summary, added up over its parts).
    pub counts: BTreeMap<String, u64>,
    /// Problems found, by reason.
    pub problems: BTreeMap<String, u64>,
    #[serde(default)]
    pub warcinfo: Vec<WarcInfo>,
    /// Lines printed per key space.
    pub records: RecordCounts,
    /// For line inputs: the lines of the whole input, and those this part parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<LineCoverage>,
    /// A uniform sample of the partition keys printed, for choosing key ranges.
    #[serde(default)]
    pub sample: Vec<KeySampleEntry>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordCounts {
    pub captures: u64,
    pub index_entries: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCoverage {
    pub total: u64,
    /// Inclusive ranges of line numbers, ascending.
    pub ranges: Vec<(u64, u64)>,
}

/// A sampled partition key, with how many printed keys of its space it stands for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeySampleEntry {
    pub key: String,
    pub weight: f64,
}

impl InputPart {
    /// The registry identity: inputs with the same one are the same input.
    pub fn identity(&self) -> (&str, &str, &str) {
        (&self.command, &self.content_hash, &self.options)
    }

    /// The summary line.
    pub fn to_line(&self) -> Result<Vec<u8>> {
        let mut line = vec![SUMMARY, b'\t'];
        serde_json::to_writer(&mut line, self)?;
        line.push(b'\n');
        Ok(line)
    }
}

/// A bottom-k sample of keys by hash: uniform, deterministic (a retried task samples
/// the same keys), and as small as `k` whatever the input.
pub struct KeySample {
    k: usize,
    seen: u64,
    heap: BinaryHeap<(u64, Vec<u8>)>,
}

impl KeySample {
    pub fn new(k: usize) -> KeySample {
        KeySample {
            k,
            seen: 0,
            heap: BinaryHeap::new(),
        }
    }

    pub fn offer(&mut self, key: &[u8]) {
        self.seen += 1;
        let hash = xxhash_rust::xxh3::xxh3_64(key);
        if self.heap.len() < self.k {
            self.heap.push((hash, key.to_vec()));
        } else if self.heap.peek().is_some_and(|(top, _)| hash < *top) {
            self.heap.pop();
            self.heap.push((hash, key.to_vec()));
        }
    }

    /// The sampled keys, each weighted by the number of keys it stands for.
    pub fn entries(&self) -> Vec<KeySampleEntry> {
        let weight = self.seen as f64 / self.heap.len().max(1) as f64;
        let mut keys: Vec<&Vec<u8>> = self.heap.iter().map(|(_, k)| k).collect();
        keys.sort();
        keys.into_iter()
            .map(|k| KeySampleEntry {
                key: String::from_utf8_lossy(k).into_owned(),
                weight,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_sort_like_their_keys() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        push_capture_line(b"org,example)/\0\x01", b"capture", &mut a);
        push_capture_line(b"org,example)/\0\x02\n", b"other", &mut b);
        assert!(a < b);
        assert_eq!(
            Record::parse(a.strip_suffix(b"\n").unwrap()).unwrap(),
            Record::Capture {
                key: b"org,example)/\0\x01".to_vec(),
                capture: b"capture".to_vec()
            }
        );
        let mut d = Vec::new();
        push_index_line(&[7u8; 24], b"entry", b"capture", &mut d);
        let line = d.strip_suffix(b"\n").unwrap();
        assert_eq!(
            partition_key(line.split(|&b| b == b'\t').next().unwrap()).len(),
            41
        );
        assert!(matches!(Record::parse(line).unwrap(), Record::Index { .. }));
        assert!(Record::parse(b"x123\tabc").is_err());
        assert!(Record::parse(b"c12\t!!").is_err());
    }

    #[test]
    fn samples_are_bounded_and_weighted() {
        let mut sample = KeySample::new(8);
        for i in 0..1000u32 {
            sample.offer(format!("c{i:08}").as_bytes());
        }
        let entries = sample.entries();
        assert_eq!(entries.len(), 8);
        assert!(entries.windows(2).all(|w| w[0].key < w[1].key));
        assert_eq!(entries[0].weight, 125.0);
    }
}
