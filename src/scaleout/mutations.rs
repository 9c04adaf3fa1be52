//! `write-range` on a shared store (Bigtable): one key range of shuffled records written
//! straight into the table as the captures of `import-warc` / `backfill-cdx` are, then its
//! digests' file rows derived under the store's lease — no SST files, no single writer.
//!
//! Every record becomes the merge cell a single-process import writes for it (a `c` line
//! in the capture order, a `d` line in the by-digest order with a dirty mark for its
//! digest, and the capture it carries), so the table reads the same whatever ranges wrote
//! it. Merge cells are keyed by their value, so a task that ran again, or two ranges
//! writing one capture, make the same cells.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::key::Sha1Key;
use crate::scaleout::ranges::RangeLines;
use crate::scaleout::records::Record;
use crate::store::Store;
use crate::store::backend::{Batch, Op, Space};
use crate::store::cells::ROW_LEN;
use crate::store::keys::{IndexEntry, mark_token, writer_token};
use crate::store::materialize::materialize_dirty;

/// Bytes of a batch before it is written.
const BATCH_BYTES: usize = 4 << 20;

/// What one range wrote (printed as JSON for the driver).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RangeWritten {
    /// Record lines read.
    pub records: u64,
    pub captures: u64,
    pub index_entries: u64,
    /// Digests marked for derivation, and what the derivation wrote.
    pub digests: u64,
    pub rows: u64,
    pub duplicates: u64,
}

/// Writes the records of `input` (sorted by key, as the engine's shuffle leaves them) into
/// `store` and derives the rows of their digests.
pub fn write_range(store: &Store, ts: u64, input: &mut dyn RangeLines) -> Result<RangeWritten> {
    if store.backend().exclusive_writer() {
        bail!(
            "{} has one writer at a time: ranges are written as SST files (write-sst) and \
             ingested by ingest-sst",
            store.describe()
        );
    }
    let writer = writer_token(ts);
    let mut written = RangeWritten::default();
    let mut batch = Batch::default();
    let mut token = mark_token(&writer);
    let mut last_digest: Option<Sha1Key> = None;
    let mut n = 0u64;
    while let Some(line) = input.next_line()? {
        n += 1;
        let record = Record::parse(line).with_context(|| format!("record line {n}"))?;
        written.records += 1;
        match record {
            Record::Capture { key, capture } => {
                batch.push(Op::Merge {
                    space: Space::Capture,
                    key,
                    value: capture,
                });
                written.captures += 1;
            }
            Record::Index {
                key,
                entry,
                capture,
            } => {
                let Some(digest) = key.get(..ROW_LEN).and_then(Sha1Key::from_slice) else {
                    bail!("record line {n}: a by-digest key is shorter than a digest");
                };
                let Some((_, capture_key)) = IndexEntry::decode(&key, &entry) else {
                    bail!("record line {n}: a damaged index entry");
                };
                // The capture this entry points at, which another range writes too (its
                // `c` line is partitioned by URL, not digest): written here as well, so
                // that deriving this digest never waits for another task. The same value
                // makes the same merge cell.
                batch.push(Op::Merge {
                    space: Space::Capture,
                    key: capture_key.to_vec(),
                    value: capture,
                });
                batch.push(Op::Merge {
                    space: Space::ByDigest,
                    key,
                    value: entry,
                });
                written.index_entries += 1;
                if last_digest != Some(digest) {
                    batch.push(Op::Put {
                        space: Space::Dirty,
                        key: digest.as_bytes().to_vec(),
                        value: token.clone(),
                    });
                    written.digests += 1;
                    last_digest = Some(digest);
                }
            }
            Record::Summary(_) => {
                bail!("record line {n}: input summaries go to ingest-sst, not write-range")
            }
        }
        if batch.bytes() >= BATCH_BYTES {
            // The backend writes a batch's captures before its marks, and batches in
            // order: a deriver never finds a mark whose captures are not there.
            store.write(&batch)?;
            batch.clear();
            token = mark_token(&writer);
            last_digest = None;
        }
    }
    store.write(&batch)?;
    let derived = materialize_dirty(store, ts)?;
    written.rows = derived.rows;
    written.duplicates = derived.duplicates;
    Ok(written)
}
