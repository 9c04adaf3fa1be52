//! The storage interface: what the store needs from wherever its bytes live.
//!
//! Two implementations: [`super::rocks::RocksBackend`], the embedded RocksDB directory
//! (the default), and [`super::bigtable::BigtableBackend`], a Cloud Bigtable instance
//! (or its emulator). Everything above this trait — captures, derived rows, the input
//! registry, the catalog, the stages and every command — is written once against it, the
//! way tantivy's `Directory` hides where an index's files live.
//!
//! The model is HBase's, which Bigtable implements natively:
//! - the **files table**: rows keyed by 20-byte SHA-1s, cells addressed by family (an
//!   index into the schema's families), qualifier and timestamp (milliseconds), newest
//!   version first;
//! - **key spaces** for everything else ([`Space`]): ordered keys to values, where a
//!   space may combine several writes of one key with a merge function instead of
//!   overwriting (captures of the same fetch from a CDX line and from its WARC record).

use anyhow::Result;

use crate::key::Sha1Key;

/// The key spaces beside the files table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// Every capture in URL-then-time order; writes of one key are merged
    /// ([`crate::capture::merge_encoded`]).
    Capture,
    /// The captures of each payload in first-capture order; merged
    /// ([`super::keys::merge_index_entries`]).
    ByDigest,
    /// Digests whose derived rows must be recomputed; the value names the writer.
    Dirty,
    /// Layout, schema, input registry, warcinfo records, relocation rules, leases.
    Meta,
    /// The bibliographic catalog of the matching stage.
    Catalog,
}

impl Space {
    pub const ALL: [Space; 5] = [
        Space::Capture,
        Space::ByDigest,
        Space::Dirty,
        Space::Meta,
        Space::Catalog,
    ];

    /// The name of the space: a RocksDB column family, or the suffix of a Bigtable
    /// companion table.
    pub fn name(self) -> &'static str {
        match self {
            Space::Capture => "capture",
            Space::ByDigest => "capture_by_digest",
            Space::Dirty => "dirty",
            Space::Meta => "meta",
            Space::Catalog => "catalog",
        }
    }

    /// How several writes of one key combine, for the spaces that merge.
    pub fn merge(self) -> Option<MergeFn> {
        match self {
            Space::Capture => Some(merge_captures),
            Space::ByDigest => Some(merge_index),
            _ => None,
        }
    }
}

/// Combines the values written to one key (in any order) into one.
pub type MergeFn = fn(&[&[u8]]) -> Option<Vec<u8>>;

fn merge_captures(values: &[&[u8]]) -> Option<Vec<u8>> {
    crate::capture::merge_encoded(values.iter().copied())
}

fn merge_index(values: &[&[u8]]) -> Option<Vec<u8>> {
    super::keys::merge_index_entries(values.iter().copied())
}

/// One cell version as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCell {
    pub family: usize,
    pub qualifier: Vec<u8>,
    pub ts: u64,
    pub value: Vec<u8>,
}

/// Which cells of a row to read: families (schema indexes), optionally only some
/// qualifiers of each, and at most `versions` versions of each cell.
#[derive(Debug, Clone)]
pub struct CellFilter {
    pub families: Vec<(usize, Option<Vec<Vec<u8>>>)>,
    pub versions: usize,
}

impl CellFilter {
    pub fn wants(&self, family: usize, qualifier: &[u8]) -> bool {
        self.families.iter().any(|(f, qualifiers)| {
            *f == family
                && qualifiers
                    .as_ref()
                    .is_none_or(|q| q.iter().any(|q| q == qualifier))
        })
    }
}

/// One change. A [`Batch`] of them is applied atomically per row (Bigtable) or as a
/// whole (RocksDB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Writes one cell version.
    PutCell {
        row: Sha1Key,
        family: usize,
        qualifier: Vec<u8>,
        ts: u64,
        value: Vec<u8>,
    },
    /// Deletes every cell (all versions) of a row in one family.
    DeleteRowFamily {
        row: Sha1Key,
        family: usize,
    },
    /// Sets a key, replacing what was there (merged writes included).
    Put {
        space: Space,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    /// Adds a value to a key of a merging space.
    Merge {
        space: Space,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        space: Space,
        key: Vec<u8>,
    },
}

impl Op {
    /// Bytes the operation carries, for batch sizing.
    pub fn weight(&self) -> usize {
        32 + match self {
            Op::PutCell {
                qualifier, value, ..
            } => 20 + qualifier.len() + value.len(),
            Op::DeleteRowFamily { .. } => 20,
            Op::Put { key, value, .. } | Op::Merge { key, value, .. } => key.len() + value.len(),
            Op::Delete { key, .. } => key.len(),
        }
    }
}

/// Changes written together.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub ops: Vec<Op>,
    bytes: usize,
}

impl Batch {
    pub fn push(&mut self, op: Op) {
        self.bytes += op.weight();
        self.ops.push(op);
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn clear(&mut self) {
        self.ops.clear();
        self.bytes = 0;
    }
}

/// Called with each row of a scan: its key and cells; returns false to stop.
pub type RowVisitor<'a> = dyn FnMut(&Sha1Key, Vec<RawCell>) -> Result<bool> + 'a;
/// Called with each key and value of a space scan; returns false to stop.
pub type KeyVisitor<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// Where the store's bytes live. Implementations are shared between threads.
pub trait Backend: Send + Sync {
    /// What to call the store in messages (a directory, a Bigtable table).
    fn describe(&self) -> String;

    /// Whether this process is the only writer (RocksDB's writer lock). Shared backends
    /// (Bigtable) take leases and write conditionally where writers could race.
    fn exclusive_writer(&self) -> bool;

    /// Cells of the given rows, in the order asked; rows without any cell are skipped.
    fn read_rows(
        &self,
        rows: &[Sha1Key],
        filter: &CellFilter,
        visit: &mut RowVisitor<'_>,
    ) -> Result<()>;

    /// Rows in key order within `[start, end)`.
    fn scan_rows(
        &self,
        filter: &CellFilter,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        visit: &mut RowVisitor<'_>,
    ) -> Result<()>;

    /// The value of a key (merged values combined).
    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Keys and values in order within `[start, end)`, merged values combined.
    fn scan(
        &self,
        space: Space,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut KeyVisitor<'_>,
    ) -> Result<()>;

    /// [`Backend::scan`] for a scan that reads each block once (a whole key space
    /// streamed): where the backend has a block cache, the scan leaves it to the reads
    /// that come back to the same keys.
    fn scan_once(
        &self,
        space: Space,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut KeyVisitor<'_>,
    ) -> Result<()> {
        self.scan(space, start, end, visit)
    }

    /// Applies a batch of changes.
    fn write(&self, batch: &Batch) -> Result<()>;

    /// Sets `key` to `new` (or deletes it when `None`) if its value is `expected`
    /// (`None`: absent); returns whether it did. Atomic against other writers.
    fn check_and_set(
        &self,
        space: Space,
        key: &[u8],
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool>;

    /// Makes what was written durable.
    fn flush(&self) -> Result<()>;

    /// Makes what was written visible to readers as a new version (a no-op where
    /// writes are visible at once); returns the version.
    fn publish(&self) -> Result<Option<u64>>;

    /// Publishes if the last version is older than `interval` and anything changed.
    fn publish_if_due(&self, interval: std::time::Duration) -> Result<()>;

    /// Brackets a partly applied input (see [`super::Store::mark_inconsistent`]).
    fn mark_inconsistent(&self) -> Result<()>;
    fn mark_consistent(&self) -> Result<()>;

    /// Ends a writer at a consistent point.
    fn close(&self) -> Result<()>;

    /// The published version a reader reads, if the backend has versions.
    fn version(&self) -> Option<u64>;

    /// Bytes the store takes on disk, when the backend can tell.
    fn size_on_disk(&self) -> Option<u64>;

    /// The backend as `Any`, so that code needing what only one backend can do (bulk
    /// loads of SST files on RocksDB) can ask for it: see `RocksBackend`'s `as_rocks`.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The smallest key greater than every key with this prefix, for range ends; `None`
/// when the prefix is all 0xff (no finite bound).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut bound = prefix.to_vec();
    while let Some(last) = bound.pop() {
        if last != 0xff {
            bound.push(last + 1);
            return Some(bound);
        }
    }
    None
}

/// The smallest key greater than every key with this prefix, for iterator bounds.
pub fn row_upper_bound(prefix: &[u8]) -> Vec<u8> {
    // All 0xff: no finite bound; a key longer than any row works for 20-byte rows.
    prefix_end(prefix).unwrap_or_else(|| vec![0xff; Sha1Key::LEN + 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_bounds() {
        assert_eq!(row_upper_bound(&[1, 2, 3]), vec![1, 2, 4]);
        assert_eq!(row_upper_bound(&[1, 0xff]), vec![2]);
        assert_eq!(row_upper_bound(&[0xff; 20]), vec![0xff; 21]);
    }

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(&[1, 2, 3]), Some(vec![1, 2, 4]));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(&[]), None);
    }
}
