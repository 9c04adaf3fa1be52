//! The single write path shared by every ingest command.
//!
//! Operations are collected in a RocksDB write batch; a batch is only written at a
//! record boundary (`end_record`), so each input record lands atomically. Captures are
//! merged, not overwritten, and cells are keyed by (row, column, timestamp), so applying
//! the same input twice leaves the same visible store.

use anyhow::Result;
use rocksdb::WriteBatch;

use crate::capture::Capture;
use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::captures::{by_digest_key, capture_key};
use crate::store::cells::cell_key;
use crate::store::{CF_BY_DIGEST, CF_CAPTURE, CF_DIRTY, Store};

/// Batches larger than this are written at the next record boundary.
const BATCH_BYTES: usize = 4 << 20;

/// A cell waiting in a sorted writer: (family index, cell key, value).
type PendingCell = (usize, Vec<u8>, Vec<u8>);

pub struct Writer<'s> {
    store: &'s Store,
    batch: WriteBatch,
    /// Cells waiting to be written in key order (see [`Writer::sorted`]): (family, key, value).
    pending_cells: Option<Vec<PendingCell>>,
    pending_bytes: usize,
    /// Timestamp (ms) given to cells written without an explicit one: one per run,
    /// like an HBase bulk job.
    ts: u64,
    capture_key_buf: Vec<u8>,
}

/// Milliseconds since the Unix epoch.
pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl<'s> Writer<'s> {
    pub fn new(store: &'s Store, ts: u64) -> Writer<'s> {
        Writer {
            store,
            batch: WriteBatch::default(),
            pending_cells: None,
            pending_bytes: 0,
            ts,
            capture_key_buf: Vec::with_capacity(256),
        }
    }

    /// A writer that sorts the cells of each batch by key before writing them: inserting
    /// keys in order into RocksDB's memtable is several times faster than in random order
    /// (row keys are SHA-1s, so input order is random). Within a batch, a later write of the
    /// same cell still wins (the sort is stable).
    pub fn sorted(store: &'s Store, ts: u64) -> Writer<'s> {
        let mut writer = Writer::new(store, ts);
        writer.pending_cells = Some(Vec::new());
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
        let schema = self.store.schema();
        let key = cell_key(row, &schema.column(column).qualifier, ts);
        match &mut self.pending_cells {
            Some(pending) => {
                self.pending_bytes += key.len() + value.len() + 16;
                pending.push((column.family, key, value.to_vec()));
            }
            None => self
                .batch
                .put_cf(self.store.family_cf(column.family), key, value),
        }
    }

    /// Records a capture in both capture orders and marks its digest for the
    /// recomputation of the derived file cells.
    pub fn add_capture(&mut self, capture: &Capture) {
        crash_test::count_capture(self);
        let value = capture.to_json();
        capture_key(capture, &mut self.capture_key_buf);
        self.batch
            .merge_cf(self.store.cf(CF_CAPTURE), &self.capture_key_buf, &value);
        if let Some(digest) = capture.digest {
            by_digest_key(&digest, capture, &mut self.capture_key_buf);
            self.batch
                .merge_cf(self.store.cf(CF_BY_DIGEST), &self.capture_key_buf, &value);
            self.batch
                .put_cf(self.store.cf(CF_DIRTY), digest.as_bytes(), []);
        }
    }

    /// Marks the end of one input record: the batch may be written now.
    pub fn end_record(&mut self) -> Result<()> {
        if self.batch.size_in_bytes() + self.pending_bytes >= BATCH_BYTES {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> Result<()> {
        if let Some(pending) = &mut self.pending_cells {
            pending.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            for (family, key, value) in pending.drain(..) {
                self.batch.put_cf(self.store.family_cf(family), key, value);
            }
            self.pending_bytes = 0;
        }
        if !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            self.store
                .db()
                .write_opt(batch, &Store::bulk_write_options())?;
        }
        Ok(())
    }

    /// Writes what is left. Call at the end of the input (or of a chunk of it).
    pub fn finish(mut self) -> Result<()> {
        self.write_batch()
    }
}

/// Simulated crashes for the tests of interrupted runs: with
/// `SEDIMENT_TEST_CRASH_AFTER_CAPTURES=N`, the process makes what it wrote so far durable
/// and exits abruptly after N captures, as a kill between two batches would leave it.
mod crash_test {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::Writer;

    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    static SEEN: AtomicU64 = AtomicU64::new(0);

    pub fn count_capture(writer: &mut Writer<'_>) {
        let limit = LIMIT.get_or_init(|| {
            std::env::var("SEDIMENT_TEST_CRASH_AFTER_CAPTURES")
                .ok()
                .and_then(|v| v.parse().ok())
        });
        let Some(limit) = *limit else { return };
        if SEEN.fetch_add(1, Ordering::SeqCst) + 1 >= limit {
            let _ = writer.write_batch();
            let _ = writer.store.flush();
            eprintln!("sediment: simulated crash after {limit} captures");
            std::process::exit(3);
        }
    }
}
