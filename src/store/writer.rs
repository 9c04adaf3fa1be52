//! The single write path shared by every ingest command.
//!
//! Operations are collected in a batch; a batch is only written at a record boundary
//! (`end_record`), so each input record lands atomically. Captures are merged, not
//! overwritten, and cells are keyed by (row, column, timestamp), so applying the same
//! input twice leaves the same visible store.

use anyhow::Result;

pub use super::clock::now_millis;
use crate::capture::CaptureRef;
use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::Store;
use crate::store::backend::{Batch, Op, Space};
use crate::store::keys::{IndexEntry, by_digest_key, capture_key};

/// Batches larger than this are written at the next record boundary.
const BATCH_BYTES: usize = 4 << 20;

pub struct Writer<'s> {
    store: &'s Store,
    /// Operations of the current batch. A sorted writer orders them by (target, key)
    /// before writing; otherwise they are written in the order given.
    batch: Batch,
    sorted: bool,
    /// Timestamp (ms) given to cells written without an explicit one: one per run,
    /// like an HBase bulk job.
    ts: u64,
    /// Which writer marks digests (see `materialize::materialize_dirty`); each batch's
    /// marks add a sequence number, so a mark is never written twice with one value.
    writer_id: Vec<u8>,
    dirty_token: Vec<u8>,
}

impl<'s> Writer<'s> {
    pub fn new(store: &'s Store, ts: u64) -> Writer<'s> {
        Writer {
            store,
            batch: Batch::default(),
            sorted: false,
            ts,
            writer_id: crate::store::keys::writer_token(ts),
            dirty_token: Vec::new(),
        }
    }

    /// A writer that sorts each batch by key before writing it: inserting keys in order
    /// into RocksDB's memtable is several times faster than in random order (row keys are
    /// SHA-1s, so input order is random). Operations on the same key keep their order (the
    /// sort is stable), so a later write still wins.
    pub fn sorted(store: &'s Store, ts: u64) -> Writer<'s> {
        let mut writer = Writer::new(store, ts);
        writer.sorted = true;
        writer
    }

    pub fn store(&self) -> &'s Store {
        self.store
    }

    pub fn run_timestamp(&self) -> u64 {
        self.ts
    }

    pub fn put_cell(&mut self, row: &Sha1Key, column: ColumnId, value: &[u8]) {
        self.put_cell_at(row, column, self.ts, value);
    }

    pub fn put_cell_at(&mut self, row: &Sha1Key, column: ColumnId, ts: u64, value: &[u8]) {
        self.put_cell_value(row, column, ts, value.to_vec());
    }

    /// [`Writer::put_cell_at`] with a value the caller no longer needs.
    pub fn put_cell_value(&mut self, row: &Sha1Key, column: ColumnId, ts: u64, value: Vec<u8>) {
        let qualifier = self
            .store
            .schema()
            .column(column)
            .qualifier
            .as_bytes()
            .to_vec();
        self.batch.push(Op::PutCell {
            row: *row,
            family: column.family,
            qualifier,
            ts,
            value,
        });
    }

    /// Records a capture in both capture orders and marks its digest for the
    /// recomputation of the derived file cells.
    pub fn add_capture(&mut self, capture: &CaptureRef<'_>) {
        #[cfg(feature = "crash-points")]
        if crash_test::at_limit() {
            let _ = self.write_batch();
            let _ = self.store.flush();
            crash_test::crash();
        }
        if self.dirty_token.is_empty() {
            self.dirty_token = crate::store::keys::mark_token(&self.writer_id);
        }
        let value = capture.to_bytes();
        let mut key = Vec::with_capacity(capture.surt.len() + 64);
        capture_key(capture, &mut key);
        if let Some(digest) = capture.digest {
            let mut digest_key = Vec::with_capacity(64);
            by_digest_key(&digest, capture, &mut digest_key);
            let mut entry = Vec::with_capacity(key.len() + 2);
            IndexEntry::encode(IndexEntry::flags_of(capture), &key, &mut entry);
            self.batch.push(Op::Merge {
                space: Space::ByDigest,
                key: digest_key,
                value: entry,
            });
            self.batch.push(Op::Put {
                space: Space::Dirty,
                key: digest.as_bytes().to_vec(),
                value: self.dirty_token.clone(),
            });
        }
        self.batch.push(Op::Merge {
            space: Space::Capture,
            key,
            value,
        });
    }

    /// Records a failed fetch (a request without response) beside the capture index, in
    /// capture key order: see [`crate::store::keys::FAILED_FETCH_PREFIX`].
    pub fn failed_fetch(&mut self, fetch: &CaptureRef<'_>) {
        let mut key = Vec::with_capacity(fetch.surt.len() + 64);
        capture_key(fetch, &mut key);
        let mut full = crate::store::keys::FAILED_FETCH_PREFIX.to_vec();
        full.extend_from_slice(&key);
        self.batch.push(Op::Put {
            space: Space::Meta,
            key: full,
            value: fetch.to_bytes(),
        });
    }

    /// Marks the end of one input record: the batch may be written now.
    pub fn end_record(&mut self) -> Result<()> {
        if self.batch.bytes() >= BATCH_BYTES {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        // Only RocksDB gains from it; the Bigtable backend groups a batch by row itself.
        if self.sorted && self.store.backend().as_rocks().is_some() {
            self.batch.ops.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
        }
        self.store.write(&self.batch)?;
        self.batch.clear();
        self.dirty_token.clear();
        Ok(())
    }

    /// Writes what is left. Call at the end of the input (or of a chunk of it).
    pub fn finish(mut self) -> Result<()> {
        self.write_batch()
    }
}

/// Where an operation lands, in the backend's key order: the family or space, then the
/// key (cells of a row by qualifier; versions keep their order through the stable sort).
fn sort_key(op: &Op) -> (usize, &[u8], &[u8]) {
    const SPACES: usize = 1 << 16;
    match op {
        Op::PutCell {
            row,
            family,
            qualifier,
            ..
        } => (*family, row.as_bytes(), qualifier),
        Op::DeleteRowFamily { row, family } => (*family, row.as_bytes(), &[]),
        Op::Put { space, key, .. } | Op::Merge { space, key, .. } | Op::Delete { space, key } => {
            (SPACES + *space as usize, key, &[])
        }
    }
}

/// Simulated crashes for the tests of interrupted runs: with
/// `SEDIMENT_TEST_CRASH_AFTER_CAPTURES=N`, the process makes what it wrote so far durable
/// and exits abruptly after N captures, as a kill between two batches would leave it.
/// Only in builds with the `crash-points` feature (the tests'), so that no environment
/// variable can make a released binary stop half-way.
#[cfg(feature = "crash-points")]
pub(crate) mod crash_test {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    static SEEN: AtomicU64 = AtomicU64::new(0);

    /// Counts a capture; true once the limit is reached (the caller makes what it wrote
    /// durable, then calls [`crash`]).
    pub fn at_limit() -> bool {
        let limit = LIMIT.get_or_init(|| {
            std::env::var("SEDIMENT_TEST_CRASH_AFTER_CAPTURES")
                .ok()
                .and_then(|v| v.parse().ok())
        });
        let Some(limit) = *limit else { return false };
        SEEN.fetch_add(1, Ordering::SeqCst) + 1 >= limit
    }

    pub fn crash() -> ! {
        crate::diag!(
            "sediment: simulated crash after {} captures",
            SEEN.load(Ordering::SeqCst)
        );
        std::process::exit(3);
    }
}
