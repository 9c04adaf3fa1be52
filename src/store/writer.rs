//! The single write path shared by every ingest command.
//!
//! Operations are collected in a batch; a batch is only written at a record boundary
//! (`end_record`), so each input record lands atomically. Captures are merged, not
//! overwritten, and cells are keyed by (row, column, timestamp), so applying the same
//! input twice leaves the same visible store.
//!
//! The file row of a digest is derived from all its captures. When a batch is written, a
//! digest the store holds no capture of gets its row derived from the batch's captures
//! and written with them; any other digest is marked, and its row derived from the store
//! at the end of the run (`materialize`). Deriving from the store read every capture back
//! (an index seek and a random read per digest: three fifths of the CPU of a CDX load
//! through this path, issue 36), while telling that a digest is new takes a probe that
//! the by-digest index's prefix filters mostly answer without reading a block.

use std::collections::HashSet;

use anyhow::Result;

pub use super::clock::now_millis;
use crate::capture::{Capture, CaptureRef};
use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::backend::{Batch, Op, Space};
use crate::store::captures::{
    DerivedColumns, DerivedRow, MaterializeStats, derive_from_index, fold_index_entries,
    put_derived_row,
};
use crate::store::keys::{IndexEntry, by_digest_key, capture_key};
use crate::store::{RocksBackend, Store};

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
    /// The batch's captures that have a digest.
    with_digest: Vec<DigestedCapture>,
    /// The columns of derived rows, resolved at the first batch that derives one.
    columns: Option<DerivedColumns>,
}

/// A capture of the batch with a digest: its digest is marked, or its row derived, when
/// the batch is written.
struct DigestedCapture {
    digest: Sha1Key,
    /// Where its by-digest entry and the capture are in the batch's operations.
    index_op: usize,
    capture_op: usize,
    /// The flags of its index entry.
    flags: u8,
}

impl<'s> Writer<'s> {
    pub fn new(store: &'s Store, ts: u64) -> Writer<'s> {
        Writer {
            store,
            batch: Batch::default(),
            sorted: false,
            ts,
            writer_id: crate::store::keys::writer_token(ts),
            with_digest: Vec::new(),
            columns: None,
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

    /// Records a capture in both capture orders; its digest's row is derived when the
    /// batch is written, or at the end of the run (see the module documentation).
    pub fn add_capture(&mut self, capture: &CaptureRef<'_>) {
        #[cfg(feature = "crash-points")]
        if crash_test::at_limit() {
            let _ = self.write_batch();
            let _ = self.store.flush();
            crash_test::crash();
        }
        let value = capture.to_bytes();
        let mut key = Vec::with_capacity(capture.surt.len() + 64);
        capture_key(capture, &mut key);
        if let Some(digest) = capture.digest {
            let mut digest_key = Vec::with_capacity(64);
            by_digest_key(&digest, capture, &mut digest_key);
            let flags = IndexEntry::flags_of(capture);
            let mut entry = Vec::with_capacity(key.len() + 2);
            IndexEntry::encode(flags, &key, &mut entry);
            self.with_digest.push(DigestedCapture {
                digest,
                index_op: self.batch.len(),
                capture_op: self.batch.len() + 1,
                flags,
            });
            self.batch.push(Op::Merge {
                space: Space::ByDigest,
                key: digest_key,
                value: entry,
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
        let claimed = self.prepare_batch()?;
        self.commit_batch(claimed)
    }

    /// Derives the rows of the batch's new digests or marks its digests, and sorts the
    /// batch; returns the digests taken as new (see `RowsAtWrite::in_flight`).
    fn prepare_batch(&mut self) -> Result<Vec<Sha1Key>> {
        let store = self.store;
        let mut claimed = Vec::new();
        if !self.with_digest.is_empty() {
            // The probe is made under the lock, so that it sees what other writers wrote.
            let mut shared =
                (store.rows_at_write()).map(|lock| lock.lock().unwrap_or_else(|e| e.into_inner()));
            match (&mut shared, DigestProbe::new(store)) {
                (Some(shared), Some(mut probe)) => {
                    claimed = self.derive_new_rows(&mut probe, shared)?;
                }
                _ => {
                    let digests = self.with_digest.iter().map(|c| c.digest).collect();
                    self.mark(digests);
                }
            }
        }
        // Only RocksDB gains from it; the Bigtable backend groups a batch by row itself.
        if self.sorted && store.backend().as_rocks().is_some() {
            self.batch.ops.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
        }
        Ok(claimed)
    }

    /// Writes the prepared batch, then takes its new digests (`claimed`) out of flight.
    fn commit_batch(&mut self, claimed: Vec<Sha1Key>) -> Result<()> {
        let store = self.store;
        let written = store.write(&self.batch);
        if let (false, Some(lock)) = (claimed.is_empty(), store.rows_at_write()) {
            let mut shared = lock.lock().unwrap_or_else(|e| e.into_inner());
            for digest in &claimed {
                shared.in_flight.remove(digest);
            }
        }
        written?;
        self.batch.clear();
        self.with_digest.clear();
        Ok(())
    }

    /// Derives from the batch the rows of the digests the store holds no capture of (and
    /// no other writer is writing as new), adds their cells to the batch and counts them;
    /// marks the other digests. The digests taken as new are returned, and in flight in
    /// `shared` until the batch is written.
    fn derive_new_rows(
        &mut self,
        probe: &mut DigestProbe<'_>,
        shared: &mut RowsAtWrite,
    ) -> Result<Vec<Sha1Key>> {
        let columns = match self.columns.take() {
            Some(columns) => columns,
            None => DerivedColumns::resolve(self.store)?,
        };
        let ops = &self.batch.ops;
        let key = |i: usize| match &ops[i] {
            Op::Merge { key, .. } => key.as_slice(),
            _ => &[],
        };
        let value = |i: usize| match &ops[i] {
            Op::Merge { value, .. } => value.as_slice(),
            _ => &[],
        };
        // By-digest keys begin with the digest: this is the index's order, the order
        // in which the derivation takes a digest's captures.
        self.with_digest
            .sort_by(|a, b| key(a.index_op).cmp(key(b.index_op)));
        // The batch's captures by key, digests or not; made at the first new digest (into
        // a big store, most digests are held and none may be new).
        let mut by_key: Option<Vec<(&[u8], usize)>> = None;
        let captures_by_key = || {
            let mut by_key: Vec<(&[u8], usize)> = (ops.iter().enumerate())
                .filter_map(|(i, op)| match op {
                    Op::Merge {
                        space: Space::Capture,
                        key,
                        ..
                    } => Some((key.as_slice(), i)),
                    _ => None,
                })
                .collect();
            by_key.sort_unstable();
            by_key
        };
        let mut rows: Vec<(Sha1Key, DerivedRow)> = Vec::new();
        let mut marked = Vec::new();
        let mut claimed = Vec::new();
        // A failed read ends the derivation; the digests taken as new are then given back.
        let mut failure = None;
        for group in self.with_digest.chunk_by(|a, b| a.digest == b.digest) {
            let digest = group[0].digest;
            let held = match shared.in_flight.contains(&digest) {
                true => Ok(true),
                false => probe.holds(&digest),
            };
            match held {
                Ok(false) => {}
                Ok(true) => {
                    marked.push(digest);
                    continue;
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
            let entries = fold_index_entries(
                (group.iter()).map(|c| (key(c.index_op), c.flags, key(c.capture_op))),
                |a, b| a == b,
            );
            // A row is derived from the capture as the store will hold it: every
            // description of its key in the batch (`by_key`), merged with the one the
            // store may already have (the same record with another digest: a CDX line and
            // its WARC record that disagree). Such a key is rare, and a miss is mostly
            // answered by the filters.
            let by_key: &[(&[u8], usize)] = by_key.get_or_insert_with(captures_by_key);
            let mut read_error = None;
            let derived = derive_from_index(&entries, |wanted| {
                let stored = match probe.stored_capture(wanted) {
                    Ok(stored) => stored,
                    Err(e) => {
                        read_error = Some(e);
                        None
                    }
                };
                let first = by_key.partition_point(|(k, _)| *k < wanted);
                let values = (by_key[first..].iter())
                    .take_while(|(k, _)| *k == wanted)
                    .map(|&(_, i)| value(i))
                    .chain(stored.as_deref());
                crate::capture::merge_encoded(values).and_then(|v| Capture::decode(&v).ok())
            });
            if let Some(e) = read_error {
                failure = Some(e);
                break;
            }
            shared.stats.count(derived.as_ref());
            shared.in_flight.insert(digest);
            claimed.push(digest);
            if let Some(row) = derived {
                rows.push((digest, row));
            }
        }
        if let Some(e) = failure {
            for digest in &claimed {
                shared.in_flight.remove(digest);
            }
            return Err(e);
        }
        for (digest, row) in &rows {
            put_derived_row(self.store, &columns, &mut self.batch, digest, row, self.ts);
        }
        self.columns = Some(columns);
        self.mark(marked);
        Ok(claimed)
    }

    /// Marks `digests` for the derivation of their rows from the store.
    pub(crate) fn mark(&mut self, mut digests: Vec<Sha1Key>) {
        if digests.is_empty() {
            return;
        }
        digests.sort_unstable();
        digests.dedup();
        let token = crate::store::keys::mark_token(&self.writer_id);
        for digest in digests {
            self.batch.push(Op::Put {
                space: Space::Dirty,
                key: digest.as_bytes().to_vec(),
                value: token.clone(),
            });
        }
    }

    /// Writes what is left. Call at the end of the input (or of a chunk of it).
    pub fn finish(mut self) -> Result<()> {
        self.write_batch()
    }
}

/// What the writers of one store share about the rows they derive as they write
/// (`Store::rows_at_write`, RocksDB only).
#[derive(Default)]
pub(crate) struct RowsAtWrite {
    /// The rows derived, until the next derivation of marked digests reports them.
    pub stats: MaterializeStats,
    /// Digests a writer took as new and has not yet written: another writer's probe
    /// cannot see them, so it takes them as held and marks them. The mark has the row
    /// derived again at the end of the run, from both writers' captures.
    pub in_flight: HashSet<Sha1Key>,
}

/// Tells whether the store's by-digest index holds a digest: a seek to the digest that
/// skips every file whose prefix filter lacks it, so that a digest new to a big store
/// costs no read. Made per batch, after the batches before it were written, so that it
/// sees them (an iterator sees the store as it was when it was made). The bulk loader
/// asks it too, of a store that was not empty.
pub(crate) struct DigestProbe<'s> {
    rocks: &'s RocksBackend,
    index: rocksdb::DBRawIterator<'s>,
}

impl<'s> DigestProbe<'s> {
    /// `None` on a backend other than RocksDB.
    pub(crate) fn new(store: &'s Store) -> Option<DigestProbe<'s>> {
        let rocks = store.backend().as_rocks()?;
        Some(DigestProbe {
            rocks,
            index: rocks.lookup_iterator(Space::ByDigest),
        })
    }

    pub(crate) fn holds(&mut self, digest: &Sha1Key) -> Result<bool> {
        self.index.seek(digest.as_bytes());
        let holds = (self.index.key()).is_some_and(|k| k.starts_with(digest.as_bytes()));
        self.index.status()?;
        Ok(holds)
    }

    /// The stored capture of `key`, if the store has one.
    pub(crate) fn stored_capture(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.rocks.get_uncached(Space::Capture, key)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::bulk::tests::{captures_described_again, contents, derived_from_the_store};
    use crate::store::materialize::materialize_dirty;

    const TS: u64 = 1_600_000_000_000;

    fn marked(store: &Store) -> Vec<Vec<u8>> {
        let mut keys = Vec::new();
        (store.scan_prefix(Space::Dirty, &[], &mut |key, _| {
            keys.push(key.to_vec());
            Ok(true)
        }))
        .unwrap();
        keys
    }

    /// Rows derived as their captures are written, in batches of every size (a digest new
    /// in one batch and held in the next; a capture key met again in a later batch with
    /// another digest), then from the marks: the rows derived from the store alone.
    #[test]
    fn rows_derived_at_write_and_from_marks_equal_rows_derived_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let all = captures_described_again(false);
        let expected = derived_from_the_store(&dir.path().join("reference"), TS, &all);
        for per_batch in [1, 7, all.len()] {
            let store = Store::open(&dir.path().join(format!("w{per_batch}"))).unwrap();
            let mut writer = Writer::sorted(&store, TS);
            for chunk in all.chunks(per_batch) {
                for capture in chunk {
                    writer.add_capture(&capture.view());
                }
                writer.write_batch().unwrap();
            }
            writer.finish().unwrap();
            // Digests with captures in two batches were marked; in one batch, none.
            assert_eq!(
                marked(&store).is_empty(),
                per_batch == all.len(),
                "{per_batch}"
            );
            let stats = materialize_dirty(&store, TS).unwrap();
            assert!(stats.rows >= 55, "{per_batch}: {stats:?}");
            assert!(marked(&store).is_empty());
            assert!(contents(&store) == expected, "batches of {per_batch}");
        }
    }

    /// Two writers of one store with captures of the same digests: a digest one writer
    /// took as new and has not yet written is marked by the other, and its row derived
    /// again at the end from both writers' captures.
    #[test]
    fn a_digest_another_writer_is_writing_as_new_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let all = captures_described_again(false);
        let expected = derived_from_the_store(&dir.path().join("reference"), TS, &all);
        let store = Store::open(&dir.path().join("two")).unwrap();
        let (mut a, mut b) = (Writer::sorted(&store, TS), Writer::sorted(&store, TS));
        let mut raced = 0;
        // Captures 40 apart share a digest: the two halves of 80 have the same digests.
        for pair in all.chunks(80) {
            let (first, second) = pair.split_at(pair.len() / 2);
            first.iter().for_each(|c| a.add_capture(&c.view()));
            second.iter().for_each(|c| b.add_capture(&c.view()));
            // A derives its new digests' rows, then B writes before A does.
            let claimed = a.prepare_batch().unwrap();
            let in_flight = claimed.clone();
            b.write_batch().unwrap();
            let marks = marked(&store);
            raced += (in_flight.iter())
                .filter(|d| marks.contains(&d.as_bytes().to_vec()))
                .count();
            a.commit_batch(claimed).unwrap();
        }
        let shared = store.rows_at_write().unwrap();
        assert!(shared.lock().unwrap().in_flight.is_empty());
        assert!(raced > 5, "{raced} digests marked while in flight");
        materialize_dirty(&store, TS).unwrap();
        assert!(contents(&store) == expected);
    }
}
