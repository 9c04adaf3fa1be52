//! Bulk load: captures are collected in memory, sorted, written as SST files and
//! ingested atomically into their column families (RocksDB `ingest_external_file`, the
//! counterpart of HBase's LoadIncrementalHFiles); the file rows of the batch's digests are
//! derived and ingested the same way. The store ends up exactly as the normal write path
//! would leave it (the tests compare exports).
//!
//! Memory is bounded by `memory_limit`: past it a batch is written and a new one starts.
//! The limit is the process's: what a batch may take is what the store's block cache, the
//! filters of the batches before and the rest of the process leave of it, and a capture
//! counts with the places it takes in the orders its batch is written in.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::capture::{Capture, CaptureRef};
use crate::key::Sha1Key;
use crate::store::backend::Space;
use crate::store::captures::{
    DerivedColumns, DerivedRow, MaterializeStats, derive_from_index_into, fold_index_entries,
    index_entries_from, read_capture_to_derive,
};
use crate::store::cells::{ROW_LEN, cell_key_into};
use crate::store::keys::{IndexEntry, merge_index_entries, push_capture_key};
use crate::store::rocks::{LEVEL_BASE_BYTES, WRITER_BLOCK_CACHE};
use crate::store::sst::{
    ScratchDir, SstWriter, ingest_files, part_len_per_thread, part_ranges, scratch_dir,
};
use crate::store::writer::DigestProbe;
use crate::store::{CF_BY_DIGEST, CF_CAPTURE, PrefixScanner, Store};

/// Captures of one parsed chunk, packed in one buffer (no allocation per capture): each
/// capture's key, its digest when it has one, and its value without the strings that the
/// key and the input already hold ([`CaptureRef::encode_detached`]). Its by-digest key and
/// index entry are made from these when they are written, not kept.
#[derive(Default)]
pub struct CaptureRun {
    data: Vec<u8>,
    entries: Vec<Entry>,
    /// The sources of the run's captures (one, unless a chunk spans inputs).
    sources: Vec<String>,
    /// The most bytes the run held before it was last emptied: its buffers' pages that
    /// stay resident when it is used again.
    touched: usize,
}

#[derive(Clone, Copy)]
struct Entry {
    /// Start of the capture key in `data` and its length; the digest follows the key.
    key: (u32, u32),
    /// Lengths of the SURT and the timestamp that begin the capture key (`SURT ‖ 0 ‖
    /// timestamp ‖ 0 ‖ file ‖ 0 ‖ position`, see [`crate::store::keys::capture_key`]).
    surt_len: u32,
    ts_len: u32,
    /// The detached value.
    value: (u32, u32),
    /// The capture's source, an index into the run's `sources`.
    source: u32,
    /// The flags of its index entry (the entry is these and the capture key).
    index_flags: u8,
    has_digest: bool,
}

impl CaptureRun {
    /// A run for about `input_bytes` of CDX lines: its buffers are reserved once (a capture
    /// takes about one and a half times its CDX line, up to three times), sparing the
    /// copies of growing them.
    pub fn for_input(input_bytes: usize) -> CaptureRun {
        CaptureRun {
            data: Vec::with_capacity(input_bytes * 3),
            entries: Vec::with_capacity(input_bytes / 150),
            sources: Vec::new(),
            touched: 0,
        }
    }

    pub fn push(&mut self, capture: &CaptureRef<'_>) {
        if self.sources.last().is_none_or(|s| s != capture.source) {
            self.sources.push(capture.source.to_owned());
        }
        let data = &mut self.data;
        let span = |data: &Vec<u8>, start: usize| (start as u32, (data.len() - start) as u32);
        let start = data.len();
        push_capture_key(capture, data);
        let key = span(data, start);
        if let Some(digest) = &capture.digest {
            data.extend_from_slice(digest.as_bytes());
        }
        let start = data.len();
        capture.encode_detached(data);
        let value = span(data, start);
        self.entries.push(Entry {
            key,
            surt_len: capture.surt.len() as u32,
            ts_len: capture.ts.len() as u32,
            value,
            source: (self.sources.len() - 1) as u32,
            index_flags: IndexEntry::flags_of(capture),
            has_digest: capture.digest.is_some(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Empties the run, keeping its buffers for the next.
    fn clear(&mut self) {
        self.touched = self.resident();
        self.data.clear();
        self.entries.clear();
        self.sources.clear();
    }

    /// The memory the run's captures take.
    pub fn bytes(&self) -> usize {
        self.data.len() + self.entries.len() * std::mem::size_of::<Entry>()
    }

    /// The memory the run holds: its captures', or more when it held more before.
    fn resident(&self) -> usize {
        self.bytes().max(self.touched)
    }

    fn slice(&self, (start, len): (u32, u32)) -> &[u8] {
        &self.data[start as usize..(start + len) as usize]
    }
}

/// The captures of a batch (its runs), read by reference.
#[derive(Clone, Copy)]
struct BatchView<'r>(&'r [CaptureRun]);

impl<'r> BatchView<'r> {
    #[inline]
    fn at(self, &(r, e): &Ref) -> (&'r CaptureRun, &'r Entry) {
        let run = &self.0[r as usize];
        (run, &run.entries[e as usize])
    }

    #[inline]
    fn capture_key(self, r: &Ref) -> &'r [u8] {
        let (run, entry) = self.at(r);
        run.slice(entry.key)
    }

    #[inline]
    fn index_flags(self, r: &Ref) -> u8 {
        self.at(r).1.index_flags
    }

    /// The detached value.
    #[inline]
    fn detached(self, r: &Ref) -> &'r [u8] {
        let (run, entry) = self.at(r);
        run.slice(entry.value)
    }

    /// The by-digest key in three parts, `digest ‖ timestamp ‖ file ‖ 0 ‖ position` (see
    /// [`crate::store::keys::by_digest_key`]); the digest is empty for a capture without one.
    #[inline]
    fn digest_key(self, r: &Ref) -> [&'r [u8]; 3] {
        let (run, entry) = self.at(r);
        let key = run.slice(entry.key);
        let end = (entry.key.0 + entry.key.1) as usize;
        let digest = if entry.has_digest {
            &run.data[end..end + ROW_LEN]
        } else {
            &[]
        };
        let ts_start = entry.surt_len as usize + 1;
        let ts_end = ts_start + entry.ts_len as usize;
        [digest, &key[ts_start..ts_end], &key[ts_end + 1..]]
    }

    /// The digest, when the capture has one. An array, not a slice: comparing two is a
    /// few instructions, not a call of `memcmp` (finding where a digest's entries end
    /// compared them so, 3 % of a small-records load, issue 39).
    #[inline]
    fn digest(self, r: &Ref) -> Option<&'r [u8; ROW_LEN]> {
        let (run, entry) = self.at(r);
        let end = (entry.key.0 + entry.key.1) as usize;
        entry
            .has_digest
            .then(|| run.data[end..end + ROW_LEN].try_into().ok())?
    }

    /// The source, SURT and timestamp the detached value lacks.
    #[inline]
    fn leading(self, r: &Ref) -> (&'r [u8], &'r [u8], &'r [u8]) {
        let (run, entry) = self.at(r);
        let key = run.slice(entry.key);
        let surt_len = entry.surt_len as usize;
        let ts = &key[surt_len + 1..surt_len + 1 + entry.ts_len as usize];
        (
            run.sources[entry.source as usize].as_bytes(),
            &key[..surt_len],
            ts,
        )
    }

    /// Appends the stored form of the capture.
    #[inline]
    fn put_value(self, r: &Ref, out: &mut Vec<u8>) {
        crate::capture::attach(self.detached(r), self.leading(r), out);
    }

    /// Reads the capture in place.
    fn read(self, r: &Ref) -> Option<CaptureRef<'r>> {
        let (run, entry) = self.at(r);
        let (_, surt, ts) = self.leading(r);
        // SAFETY: `CaptureRun::push` wrote the key as the capture's SURT, a byte, its
        // timestamp (both `&str`s, whose lengths the entry keeps), and the detached value
        // with `encode_detached`; none of it is changed after.
        unsafe {
            let leading = (
                run.sources[entry.source as usize].as_str(),
                std::str::from_utf8_unchecked(surt),
                std::str::from_utf8_unchecked(ts),
            );
            CaptureRef::read_detached_unchecked(self.detached(r), leading).ok()
        }
    }

    /// The stored form of the capture as a new buffer.
    fn value(self, r: &Ref) -> Vec<u8> {
        let mut out = Vec::new();
        self.put_value(r, &mut out);
        out
    }

    /// Where the entry lies, for prefetching (computing it reads nothing of the entry).
    #[inline]
    fn entry_at(self, &(r, e): &Ref) -> *const u8 {
        std::ptr::from_ref(&self.0[r as usize].entries[e as usize]).cast()
    }
}

/// Compares two by-digest keys given in parts ([`BatchView::digest_key`]).
fn cmp_digest_keys(a: [&[u8]; 3], b: [&[u8]; 3]) -> Ordering {
    a[0].cmp(b[0]).then_with(|| {
        if a[1].len() == b[1].len() {
            a[1].cmp(b[1]).then_with(|| a[2].cmp(b[2]))
        } else {
            a[1].iter().chain(a[2]).cmp(b[1].iter().chain(b[2]))
        }
    })
}

/// One key space of a batch, as [`write_merge_sst`] writes it.
trait KeySpace: Sync {
    /// Appends the key of an entry.
    fn put_key(&self, r: &Ref, out: &mut Vec<u8>);
    fn same_key(&self, a: &Ref, b: &Ref) -> bool;
    /// Appends the value of an entry.
    fn put_value(&self, r: &Ref, out: &mut Vec<u8>);
    /// Where the entry lies, for prefetching; and prefetching what its key and value
    /// (and what is done with them after) are made of.
    fn entry_at(&self, r: &Ref) -> *const u8;
    fn prefetch_bytes(&self, r: &Ref);
    /// Several values of one key as one.
    fn merge(&self, values: &mut dyn Iterator<Item = &[u8]>) -> Option<Vec<u8>>;
    /// Whether two entries belong to one group, which no SST file or window of
    /// [`write_merge_sst`] splits: entries of one key, or more.
    fn same_group(&self, a: &Ref, b: &Ref) -> bool {
        self.same_key(a, b)
    }
}

/// The `capture` space: capture key, stored capture.
struct CaptureSpace<'r>(BatchView<'r>);

impl KeySpace for CaptureSpace<'_> {
    fn put_key(&self, r: &Ref, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.capture_key(r));
    }
    fn same_key(&self, a: &Ref, b: &Ref) -> bool {
        self.0.capture_key(a) == self.0.capture_key(b)
    }
    fn put_value(&self, r: &Ref, out: &mut Vec<u8>) {
        self.0.put_value(r, out);
    }
    fn entry_at(&self, r: &Ref) -> *const u8 {
        self.0.entry_at(r)
    }
    fn prefetch_bytes(&self, r: &Ref) {
        prefetch(self.0.capture_key(r).as_ptr());
        prefetch(self.0.detached(r).as_ptr());
    }
    fn merge(&self, values: &mut dyn Iterator<Item = &[u8]>) -> Option<Vec<u8>> {
        crate::capture::merge_encoded(values)
    }
}

/// The `capture_by_digest` space: by-digest key, index entry.
struct DigestSpace<'r>(BatchView<'r>);

impl KeySpace for DigestSpace<'_> {
    fn put_key(&self, r: &Ref, out: &mut Vec<u8>) {
        for part in self.0.digest_key(r) {
            out.extend_from_slice(part);
        }
    }
    fn same_key(&self, a: &Ref, b: &Ref) -> bool {
        cmp_digest_keys(self.0.digest_key(a), self.0.digest_key(b)) == Ordering::Equal
    }
    fn put_value(&self, r: &Ref, out: &mut Vec<u8>) {
        IndexEntry::encode(self.0.index_flags(r), self.0.capture_key(r), out);
    }
    fn entry_at(&self, r: &Ref) -> *const u8 {
        self.0.entry_at(r)
    }
    fn prefetch_bytes(&self, r: &Ref) {
        let key = self.0.capture_key(r);
        prefetch(key.as_ptr());
        // The digest follows the capture key, and the detached value (read when the
        // digest's row is derived) the digest: its next two cache lines are fetched too,
        // here, with the rest, rather than one after the other as the row's fields are
        // decoded.
        let end = key.as_ptr().wrapping_add(key.len());
        for line in 0..3 {
            prefetch(end.wrapping_add(64 * line));
        }
    }
    fn merge(&self, values: &mut dyn Iterator<Item = &[u8]>) -> Option<Vec<u8>> {
        merge_index_entries(values)
    }
    /// One digest's entries: its row is derived from them together.
    fn same_group(&self, a: &Ref, b: &Ref) -> bool {
        self.0.digest(a) == self.0.digest(b)
    }
}

/// The default memory for one bulk batch: a quarter of the memory available, at least
/// 512 MB (one batch holds a whole load up to that size; its peak RSS is ~1.5 times it).
pub fn default_memory_limit() -> usize {
    let available_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        })
        .unwrap_or(8 << 20);
    (available_kb / 4 * 1024).max(512 << 20)
}

/// A reference to one capture of a batch: (run, entry).
type Ref = (u32, u32);

/// What a capture takes while its batch is written, beyond its run: its places in the
/// capture and digest orders, and the stable sort's buffer for the first.
const ORDER_BYTES_PER_CAPTURE: usize = 2 * size_of::<Ref>() + size_of::<(u64, Ref)>();

/// The process's memory beside the batches and their filters: the store's block cache
/// (an upper bound) and the rest (RocksDB's table readers and memtables, threads, the
/// chunks being parsed). Without it, the 100 M load's peak resident memory was 7.2 GB for
/// a limit of 5.9 GB (issue 36).
const BESIDE_BATCHES: usize = WRITER_BLOCK_CACHE + (128 << 20);

/// What a capture's batch adds to the earlier batches' filters when it is written (two
/// filters of 16 bits a key, [`KeyFilter`]).
const FILTER_BYTES_PER_CAPTURE: usize = 4;

/// What [`BulkLoader::measured_full`] keeps free beyond what it counts: the SST writers'
/// buffers, the rows being derived, the digests deferred to the end.
const MEASURED_MARGIN: usize = 64 << 20;

pub struct BulkLoader<'s> {
    store: &'s Store,
    ts: u64,
    memory_limit: usize,
    /// The runs of the batch being filled and the bytes they count.
    pending: Mutex<(Vec<CaptureRun>, usize)>,
    /// Serializes batch writes (a batch holds the whole pending set).
    writing: Mutex<BulkStats>,
    /// The digests and capture keys of the batches written so far, when the store was
    /// empty: a digest of a later batch that none of them holds, whose capture keys none
    /// of them holds either, has all its captures in that batch as the store will hold
    /// them, and its row is derived from memory instead of from the store (which random
    /// reads made 4.8 times slower per line past the first batch, issue 36).
    earlier: Mutex<Vec<BatchFilters>>,
    /// The digests of a load into an empty store whose rows are derived from the store
    /// when the load ends (their captures span batches), once, from the capture spaces
    /// compacted: derived after each batch, from every batch's overlapping files, a digest
    /// met in several batches was derived again in each (issue 36).
    deferred: Mutex<Vec<Sha1Key>>,
    /// The runs of the batches written so far, emptied, for the next batch's captures.
    /// Freed, their memory came back to the allocator in pieces that the next batch's runs
    /// did not fit: the load's resident memory grew with every batch, 6.2 GB for the first
    /// of the 100 M load, 10.7 GB at the end (issue 36); and a new run's pages are zeroed
    /// by the kernel as they are first written (15 % of the time the parsing threads ran).
    /// Those a batch did not use again are given back before it is written: kept, the
    /// runs of the first batch that the smaller batches after it did not need were 220 MB
    /// of the 100 M load's resident memory by the fifth batch (issue 36).
    spare: Mutex<Spare>,
    /// Whether a batch is also cut by the process's resident memory measured
    /// ([`BulkLoader::measured_full`]); tests that cut batches by their size turn it off.
    measure_memory: bool,
    scratch_dir: ScratchDir,
    store_was_empty: bool,
    /// The fewest entries an SST file of a key range gets (tests lower it to make many).
    min_part: usize,
    /// The threads that write batches, the loader's own. A batch fills up on a worker of
    /// the pool that parses, whose other workers then wait on `pending`: written on that
    /// pool, a batch had one thread of it (every batch of the 100 M load but the last was
    /// sorted, written and compressed on one core of two, issue 36).
    pool: rayon::ThreadPool,
    /// The names of the threads that wrote each batch (tests check them).
    #[cfg(test)]
    written_on: Mutex<Vec<Option<String>>>,
    /// The digests whose rows were read from the store, as often as they were.
    #[cfg(test)]
    read_from_store: std::sync::Arc<Mutex<Vec<Sha1Key>>>,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct BulkStats {
    pub batches: u64,
    pub captures: u64,
    pub sst_files: u64,
    pub rows: MaterializeStats,
    /// Digests whose row was derived by reading the store (not from the batch alone).
    pub digests_read: u64,
    /// Families compacted at the end, for having files on more than one level.
    pub compacted: u64,
}

/// The base level's size while a bulk load runs (see [`BulkLoader::new`]): larger than any
/// family, far from overflowing RocksDB's level arithmetic.
const LOADING_LEVEL_BASE_BYTES: u64 = 1 << 50;

/// The families a bulk load ingests into.
pub(crate) const BULK_FAMILIES: [&str; 4] = [CF_CAPTURE, CF_BY_DIGEST, "f", "file"];

/// Compacts each of `families` whose files lie on more than one level (overlapping key
/// ranges, from batches or from what the store held) if `compact`, and turns their
/// automatic compactions back on. A load of one batch into an empty store leaves every
/// family on one level, and nothing is rewritten. Returns how many were compacted.
fn compact_overlapping(store: &Store, families: &[&str], compact: bool) -> Result<u64> {
    let rocks = store.rocks("a bulk load")?;
    let db = rocks.db();
    let mut compacted = 0;
    for &name in families {
        let cf = rocks.cf(name);
        let levels = (0..7)
            .filter(|level| {
                let property = format!("rocksdb.num-files-at-level{level}");
                db.property_int_value_cf(cf, property.as_str())
                    .ok()
                    .flatten()
                    .is_some_and(|files| files > 0)
            })
            .count();
        if compact && levels > 1 {
            db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
            compacted += 1;
        }
        // As when they were paused: the options of this process only, and a failure to
        // write them down (a full disk) costs nothing the store holds.
        let _ = db.set_options_cf(
            cf,
            &[
                ("disable_auto_compactions", "false"),
                ("max_bytes_for_level_base", &LEVEL_BASE_BYTES.to_string()),
            ],
        );
    }
    Ok(compacted)
}

impl<'s> BulkLoader<'s> {
    /// A loader that writes batches of about `memory_limit` bytes on `threads` threads.
    pub fn new(store: &'s Store, ts: u64, memory_limit: usize, threads: usize) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("bulk-{i}"))
            .build()
            .context("cannot start the bulk load's threads")?;
        let rocks = store.rocks("a bulk load")?;
        let scratch_dir = scratch_dir(rocks, "bulk", ts)?;
        let store_was_empty = rocks.space_is_empty(CF_BY_DIGEST);
        // The families of random keys get overlapping files from every batch; compacting
        // them after each batch rewrote everything loaded so far (a quarter of a 30 M-line
        // load's CPU, issue 36): they are compacted once, when the load ends. Only in this
        // process: a store opened again has its usual options. RocksDB writes the changed
        // options to a file: where that fails (a full disk), the load goes on without the
        // pause and fails, if it does, where it writes its own files.
        //
        // While it loads, a family's first level below L0 is as large as RocksDB allows, so
        // that L0 is compacted straight into the last level, where the first batch went: with
        // the usual 256 MiB, a family of a few gigabytes has its base one level higher, and
        // the compaction at the end wrote each family twice, L0 into L5 and L5 into L6 (43 GB
        // written for a 32 GB store of 100 M captures, issue 36). RocksDB places an ingested
        // file no higher than L0 and no lower than that base, so the batches after the first
        // go to L0 either way.
        //
        // Nor do the families pin the index and filter blocks of their L0 files in the block
        // cache (the store's option, for the reads of a live store): pinned, every batch's
        // files' metadata stayed beyond the cache's capacity until the compaction at the end,
        // more with every batch (part of the 100 M load's resident memory 6 % over its
        // limit, issue 36). Unpinned, they come and go through the cache like data blocks.
        for cf in BULK_FAMILIES {
            let _ = rocks.db().set_options_cf(
                rocks.cf(cf),
                &[
                    ("disable_auto_compactions", "true"),
                    (
                        "max_bytes_for_level_base",
                        &LOADING_LEVEL_BASE_BYTES.to_string(),
                    ),
                    (
                        "block_based_table_factory",
                        "{pin_l0_filter_and_index_blocks_in_cache=false}",
                    ),
                ],
            );
        }
        Ok(BulkLoader {
            store,
            ts,
            memory_limit,
            pending: Mutex::new((Vec::new(), 0)),
            writing: Mutex::new(BulkStats::default()),
            earlier: Mutex::new(Vec::new()),
            deferred: Mutex::new(Vec::new()),
            spare: Mutex::default(),
            measure_memory: !cfg!(test),
            scratch_dir,
            store_was_empty,
            min_part: 50_000,
            pool,
            #[cfg(test)]
            written_on: Mutex::default(),
            #[cfg(test)]
            read_from_store: Default::default(),
        })
    }

    /// Cuts key spaces into SST files of at least `entries` entries (default 50,000).
    #[cfg(test)]
    pub fn with_min_part(mut self, entries: usize) -> Self {
        self.min_part = entries.max(1);
        self
    }

    /// An empty run for about `input_bytes` of CDX lines: one of an earlier batch when
    /// there is one ([`CaptureRun::for_input`] otherwise).
    pub fn run_for_input(&self, input_bytes: usize) -> CaptureRun {
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).take();
        spare.unwrap_or_else(|| CaptureRun::for_input(input_bytes))
    }

    /// Adds a chunk's captures; writes a batch when the memory limit is reached.
    pub fn add(&self, run: CaptureRun) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.1 += run.resident() + run.entries.len() * ORDER_BYTES_PER_CAPTURE;
        pending.0.push(run);
        if pending.1 >= self.batch_limit()
            || (pending.1 >= self.memory_limit / 8 && self.measured_full(&pending.0))
        {
            let runs = std::mem::take(&mut pending.0);
            pending.1 = 0;
            self.give_back_spare_runs();
            // Written with the pending set locked: the threads that parse wait instead of
            // filling a second batch while this one is written (at 30 M lines that doubled
            // the peak RSS, issue 36). Written on the loader's pool from a thread of no
            // pool: this thread, a worker, would take parsing work while it waited, which
            // would come back here for the lock it holds.
            std::thread::scope(|scope| {
                scope
                    .spawn(|| self.pool.install(|| self.write_batch(runs, None)))
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })?;
        }
        Ok(())
    }

    /// The bytes a batch may take: what the memory limit leaves beside the rest of the
    /// process and the earlier batches' filters, and never less than a quarter of it.
    fn batch_limit(&self) -> usize {
        let earlier = self.earlier.lock().unwrap_or_else(|e| e.into_inner());
        let filter_bytes: usize = (earlier.iter())
            .map(|f| f.digests.bytes() + f.capture_keys.bytes())
            .sum();
        let beside = BESIDE_BATCHES + filter_bytes;
        self.memory_limit
            .saturating_sub(beside)
            .max(self.memory_limit / 4)
    }

    /// Whether the batch being filled, of `runs`, would take the process past its memory
    /// limit if it were written now, by the process's resident memory measured: what the
    /// model of [`BulkLoader::batch_limit`] leaves out (the allocator's free pieces, which
    /// grew by ~25 MB a batch at 100 M lines, RocksDB's own, the chunks being parsed) is in
    /// it. Counted on top: what a batch's write takes beyond its runs (its orders and
    /// filters), what the block cache may still grow by, and a margin; the runs waiting to
    /// be used again are taken out (the batch fills them without growing). Asked only of a
    /// batch of an eighth of the limit or more: a process whose other memory leaves less
    /// goes over its limit rather than write batches without end.
    fn measured_full(&self, runs: &[CaptureRun]) -> bool {
        if !self.measure_memory {
            return false;
        }
        let Some(resident) = resident_bytes() else {
            return false;
        };
        let spare = (self.spare.lock().unwrap_or_else(|e| e.into_inner())).resident;
        let cache_headroom = (self.store.rocks("a bulk load").ok())
            .and_then(|rocks| {
                (rocks.db())
                    .property_int_value_cf(rocks.cf(CF_CAPTURE), "rocksdb.block-cache-usage")
                    .ok()
                    .flatten()
            })
            .map_or(WRITER_BLOCK_CACHE, |used| {
                WRITER_BLOCK_CACHE.saturating_sub(used as usize)
            });
        let captures: usize = runs.iter().map(|run| run.entries.len()).sum();
        let writing = captures * (ORDER_BYTES_PER_CAPTURE + FILTER_BYTES_PER_CAPTURE);
        resident.saturating_sub(spare) + writing + cache_headroom + MEASURED_MARGIN
            >= self.memory_limit
    }

    /// Frees the runs that wait to be used again: the batch about to be written did not
    /// need them, and the batches after it are no larger.
    fn give_back_spare_runs(&self) {
        drop(std::mem::take(
            &mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()),
        ));
    }

    /// Writes what is pending and removes the scratch directory.
    pub fn finish(self) -> Result<BulkStats> {
        self.finish_last_batch(LastBatch::Free)
    }

    /// [`BulkLoader::finish`] in a process that exits soon after: the last batch's memory
    /// is not given back, the exit does it. Giving back a gigabyte of small pages of a
    /// process whose threads ran on every core took half a second of CPU, most of it
    /// flushing the other cores' TLBs for each range unmapped; an exit tears the whole
    /// address space down at once (issue 39).
    pub fn finish_before_exit(self) -> Result<BulkStats> {
        self.finish_last_batch(LastBatch::LeaveToExit)
    }

    fn finish_last_batch(self, last: LastBatch) -> Result<BulkStats> {
        let runs = std::mem::take(&mut self.pending.lock().unwrap_or_else(|e| e.into_inner()).0);
        self.give_back_spare_runs();
        self.pool.install(|| self.write_batch(runs, Some(last)))?;
        let mut stats = *self.writing.lock().unwrap_or_else(|e| e.into_inner());
        // One batch into a store that was not empty (an increment) left a set of files
        // that do not overlap each other over what the store held: RocksDB's own
        // compactions take them from there, as they take a writer's flushes. Compacting
        // them in rewrote the whole of every family of random keys (1 M new lines into a
        // 10 M store: 47-51 s against 16 s through the write path, issue 36).
        let compact = self.store_was_empty || stats.batches > 1;
        // The capture spaces first: the rows deferred to the end are read from them.
        stats.compacted = compact_overlapping(self.store, &[CF_CAPTURE, CF_BY_DIGEST], compact)?;
        let mut deferred =
            std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()));
        deferred.sort_unstable();
        deferred.dedup();
        self.pool
            .install(|| self.rows_from_store(&deferred, "end", &mut stats))?;
        stats.compacted += compact_overlapping(self.store, &["f", "file"], compact)?;
        Ok(stats)
    }

    /// Writes a batch; `last` says what becomes of its memory when no batch follows.
    fn write_batch(&self, runs: Vec<CaptureRun>, last: Option<LastBatch>) -> Result<()> {
        let mut stats = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        if runs.iter().all(CaptureRun::is_empty) {
            return Ok(());
        }
        #[cfg(test)]
        self.written_on
            .lock()
            .unwrap()
            .push(std::thread::current().name().map(str::to_owned));
        let first_batch = stats.batches == 0;
        stats.batches += 1;
        let n = stats.batches;

        let batch = BatchView(&runs);
        // Listed on every thread: on one, the other core waited (a twentieth of a
        // small-records load).
        let mut by_capture: Vec<Ref> = Vec::new();
        by_capture.par_extend(
            runs.par_iter().enumerate().flat_map_iter(|(r, run)| {
                (0..run.entries.len()).map(move |e| (r as u32, e as u32))
            }),
        );
        let mut by_digest: Vec<(u64, Ref)> = Vec::new();
        by_digest.par_extend(runs.par_iter().enumerate().flat_map_iter(|(r, run)| {
            (run.entries.iter().enumerate())
                .filter(|(_, entry)| entry.has_digest)
                .map(move |(e, _)| {
                    let at = (r as u32, e as u32);
                    let digest = batch.digest_key(&at)[0];
                    let prefix = u64::from_be_bytes(digest[..8].try_into().unwrap_or_default());
                    (prefix, at)
                })
        }));
        stats.captures += by_capture.len() as u64;

        // Input CDX is usually sorted already: a stable (run-adaptive) sort is near linear.
        // Digests are random: sort on their first 8 bytes, then the full key.
        rayon::join(
            || by_capture.par_sort_by(|a, b| batch.capture_key(a).cmp(batch.capture_key(b))),
            || {
                by_digest.par_sort_unstable_by(|a, b| match a.0.cmp(&b.0) {
                    Ordering::Equal => {
                        cmp_digest_keys(batch.digest_key(&a.1), batch.digest_key(&b.1))
                    }
                    other => other,
                })
            },
        );
        let by_digest: Vec<Ref> = by_digest.into_iter().map(|(_, r)| r).collect();
        let descriptions = Descriptions::of(batch, &by_capture);

        // A digest whose captures are not all in this batch has its row derived from the
        // store once the batch is in; the others, from the batch. Into an empty store,
        // those are the digests of earlier batches (or what a Bloom filter mistakes for
        // them) and those with a capture key an earlier batch met under another digest;
        // with no earlier batch, none. Into a store that was not empty, the store itself
        // is asked, through a probe made before the batch goes in (the batches before
        // this one are in it), and its filters answer most questions without a read
        // (issue 36: deriving every row of an increment from the store read it all back).
        let mut earlier = self.earlier.lock().unwrap_or_else(|e| e.into_inner());
        let earlier_filters: &[BatchFilters] = &earlier;
        let in_batch =
            |digest: &Sha1Key, refs: &[Ref], probe: Option<&mut DigestProbe>| -> Result<bool> {
                let Some(probe) = probe else {
                    return Ok(first_batch
                        || !(BatchFilters::any_may_hold_digest(earlier_filters, digest)
                            || (refs.iter()).any(|r| {
                                BatchFilters::any_may_hold_capture(
                                    earlier_filters,
                                    batch.capture_key(r),
                                )
                            })));
                };
                if probe.holds(digest)? {
                    return Ok(false);
                }
                for r in refs {
                    if probe.stored_capture(batch.capture_key(r))?.is_some() {
                        return Ok(false);
                    }
                }
                Ok(true)
            };
        // The batch's digests, for the batches that follow: filled as its by-digest ranges
        // are written, made for one digest a capture (there are fewer).
        let keep_digests = self.store_was_empty && last.is_none();
        let digest_filter = keep_digests.then(|| KeyFilter::for_keys(by_digest.len()));

        // Each key space is cut into ranges written in parallel, then ingested together:
        // SST writing (block building, Snappy) would otherwise run on one thread per key
        // space. A by-digest range holds whole digests, and the rows of those whose
        // captures are all in the batch are derived as its entries are written, from the
        // memory just read for them: a second pass over the batch in digest order waited
        // on a cache miss per digest (issue 39). The by-digest ranges go first: they visit
        // the batch at random and take longest, and a thread left with one of them at the
        // end kept the other waiting.
        let (captures, digests) = (CaptureSpace(batch), DigestSpace(batch));
        let columns = DerivedColumns::resolve(self.store)?;
        let schema = self.store.schema();
        let parts: Vec<Part> = (space_ranges(&by_digest, self.min_part, &digests).into_iter())
            .enumerate()
            .map(|(part, range)| Part::ByDigest(part, range))
            .chain(
                (space_ranges(&by_capture, self.min_part, &captures).into_iter())
                    .enumerate()
                    .map(|(part, range)| Part::Capture(part, range)),
            )
            .collect();
        let written = run_in_order(&parts, |part| -> Result<PartFiles> {
            match part {
                Part::Capture(i, range) => {
                    let path = self.scratch_dir.join(format!("capture-{n}-{i}.sst"));
                    write_merge_sst(
                        CF_CAPTURE,
                        &path,
                        &by_capture[range.clone()],
                        &captures,
                        |_| Ok(()),
                    )?;
                    Ok(PartFiles::new(path))
                }
                Part::ByDigest(i, range) => {
                    let refs = &by_digest[range.clone()];
                    let path = self.scratch_dir.join(format!("by-digest-{n}-{i}.sst"));
                    let mut rows = RowFiles::new(
                        &self.scratch_dir,
                        &format!("{n}-{i}"),
                        schema,
                        &columns,
                        self.ts,
                    );
                    let mut files = PartFiles::new(path.clone());
                    // Made before the batch is ingested: it sees the store without it.
                    let mut probe = match self.store_was_empty {
                        true => None,
                        false => Some(
                            DigestProbe::new(self.store)
                                .ok_or_else(|| anyhow::anyhow!("a bulk load needs RocksDB"))?,
                        ),
                    };
                    write_merge_sst(CF_BY_DIGEST, &path, refs, &digests, |window| {
                        for group in digest_groups(batch, &refs[window]) {
                            if let Some(filter) = &digest_filter {
                                filter.insert(group.0.as_bytes());
                            }
                            if !in_batch(&group.0, group.1, probe.as_mut())? {
                                files.deferred.push(group.0);
                                continue;
                            }
                            let has_row =
                                derive_in_batch(batch, &descriptions, group.1, &mut rows.row);
                            rows.write(&group.0, has_row)?;
                        }
                        Ok(())
                    })?;
                    files.rows = Some(rows.finish()?);
                    Ok(files)
                }
            }
        });
        let mut capture_ssts = Vec::new();
        let mut by_digest_ssts = Vec::new();
        let mut rows = Vec::new();
        let mut deferred = Vec::new();
        for (part, files) in parts.iter().zip(written) {
            let files = files?;
            match part {
                Part::Capture(..) => capture_ssts.push(files.sst),
                Part::ByDigest(..) => by_digest_ssts.push(files.sst),
            }
            rows.extend(files.rows);
            deferred.extend(files.deferred);
        }
        for (cf, paths) in [(CF_CAPTURE, capture_ssts), (CF_BY_DIGEST, by_digest_ssts)] {
            stats.sst_files += paths.len() as u64;
            self.ingest(cf, paths)?;
        }

        // Rows derived from the batch first, then those from the store: each set's files
        // have key ranges of their own, but the two sets interleave.
        self.ingest_rows(rows, &mut stats)?;
        // The rows of the digests the store also holds captures of, derived from the store
        // (which now includes the batch); into an empty store, once, when the load ends.
        if self.store_was_empty {
            (self.deferred.lock().unwrap_or_else(|e| e.into_inner())).extend(deferred);
        } else {
            self.rows_from_store(&deferred, &n.to_string(), &mut stats)?;
        }
        if keep_digests {
            let capture_range = match (by_capture.first(), by_capture.last()) {
                (Some(first), Some(last)) => (
                    batch.capture_key(first).to_vec(),
                    batch.capture_key(last).to_vec(),
                ),
                _ => (Vec::new(), Vec::new()),
            };
            earlier.push(BatchFilters {
                digests: digest_filter.unwrap_or_else(|| KeyFilter::for_keys(0)),
                capture_keys: KeyFilter::new(by_capture.iter().map(|r| batch.capture_key(r))),
                capture_range,
            });
        }
        match last {
            // Giving a batch's memory back takes a while (a tenth of a second for 2 M
            // captures, on one core): the load's last steps need not wait for it.
            Some(LastBatch::Free) => {
                std::thread::spawn(move || drop(runs));
            }
            Some(LastBatch::LeaveToExit) => std::mem::forget(runs),
            None => {
                let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
                for mut run in runs {
                    run.clear();
                    spare.put(run);
                }
            }
        }
        Ok(())
    }

    /// Derives the rows of `digests` (sorted) from the store, in digest ranges written in
    /// parallel, one pair of SST files a range named after `label`, and ingests them.
    fn rows_from_store(
        &self,
        digests: &[Sha1Key],
        label: &str,
        stats: &mut BulkStats,
    ) -> Result<()> {
        stats.digests_read += digests.len() as u64;
        #[cfg(test)]
        self.read_from_store.lock().unwrap().extend(digests);
        let columns = DerivedColumns::resolve(self.store)?;
        let part = part_len_per_thread(digests.len(), self.min_part, 8);
        let from_store: Vec<Rows> = digests
            .par_chunks(part.max(1))
            .enumerate()
            .map(|(i, keys)| -> Result<Rows> {
                let mut rows = RowFiles::new(
                    &self.scratch_dir,
                    &format!("{label}-store-{i}"),
                    self.store.schema(),
                    &columns,
                    self.ts,
                );
                let mut scanner = self.store.prefix_scanner(Space::ByDigest);
                for key in keys {
                    let has_row = derive_from_store(self.store, &mut scanner, key, &mut rows.row);
                    rows.write(key, has_row)?;
                }
                rows.finish()
            })
            .collect::<Result<_>>()?;
        self.ingest_rows(from_store, stats)
    }

    /// Ingests the `f` and `file` files of `rows`.
    fn ingest_rows(&self, rows: Vec<Rows>, stats: &mut BulkStats) -> Result<()> {
        let (mut f_files, mut file_files) = (Vec::new(), Vec::new());
        for written in rows {
            stats.rows.add(&written.stats);
            f_files.extend(written.f);
            file_files.extend(written.file);
        }
        for (family, paths) in [("f", f_files), ("file", file_files)] {
            stats.sst_files += paths.len() as u64;
            self.ingest(family, paths)?;
        }
        Ok(())
    }

    fn ingest(&self, cf: &str, paths: Vec<PathBuf>) -> Result<()> {
        ingest_files(self.store, cf, paths)
    }
}

/// The emptied runs of written batches, and the memory they hold.
#[derive(Default)]
struct Spare {
    runs: Vec<CaptureRun>,
    resident: usize,
}

impl Spare {
    fn put(&mut self, run: CaptureRun) {
        self.resident += run.resident();
        self.runs.push(run);
    }

    fn take(&mut self) -> Option<CaptureRun> {
        let run = self.runs.pop()?;
        self.resident -= run.resident();
        Some(run)
    }
}

/// The process's resident memory (`VmRSS` of `/proc/self/status`); `None` where there is
/// no such file.
fn resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What becomes of the last batch's memory once it is written.
#[derive(Clone, Copy)]
enum LastBatch {
    /// Given back (on a thread of its own).
    Free,
    /// Left to the process's exit ([`BulkLoader::finish_before_exit`]).
    LeaveToExit,
}

/// One SST file's worth of a batch: a range of one key space (its number, its entries).
enum Part {
    /// Whole digests of the by-digest space, with the rows of those the batch alone makes.
    ByDigest(usize, std::ops::Range<usize>),
    Capture(usize, std::ops::Range<usize>),
}

/// What the writing of a [`Part`] leaves.
struct PartFiles {
    /// The SST file of its key space.
    sst: PathBuf,
    /// A by-digest part's rows.
    rows: Option<Rows>,
    /// A by-digest part's digests whose rows are to be derived from the store, in order.
    deferred: Vec<Sha1Key>,
}

impl PartFiles {
    fn new(sst: PathBuf) -> PartFiles {
        PartFiles {
            sst,
            rows: None,
            deferred: Vec::new(),
        }
    }
}

/// The `f` and `file` SST files of the rows of a range of digests, and their counts.
struct Rows {
    stats: MaterializeStats,
    f: Option<PathBuf>,
    file: Option<PathBuf>,
}

/// Derived rows of a range of digests, written as they come into their two SST files.
struct RowFiles<'s> {
    f: SstWriter,
    file: SstWriter,
    cells: RowCellWriter<'s>,
    /// The row being derived; its buffers are reused from one digest to the next.
    row: DerivedRow,
    stats: MaterializeStats,
}

impl<'s> RowFiles<'s> {
    fn new(
        dir: &std::path::Path,
        name: &str,
        schema: &'s crate::schema::Schema,
        columns: &DerivedColumns,
        ts: u64,
    ) -> RowFiles<'s> {
        RowFiles {
            f: SstWriter::new(dir.join(format!("f-{name}.sst")), "f"),
            file: SstWriter::new(dir.join(format!("file-{name}.sst")), "file"),
            cells: RowCellWriter::new(schema, columns, ts),
            row: DerivedRow::empty(),
            stats: MaterializeStats::default(),
        }
    }

    /// Counts the digest `key`, and writes the row just derived into `self.row` when it
    /// has one (`has_row`).
    fn write(&mut self, key: &Sha1Key, has_row: bool) -> Result<()> {
        self.stats.digests += 1;
        if !has_row {
            self.stats.without_file += 1;
            return Ok(());
        }
        self.stats.rows += 1;
        self.stats.duplicates += self.row.captures.saturating_sub(1);
        self.cells
            .write(key, &self.row, &mut self.f, &mut self.file)
    }

    fn finish(self) -> Result<Rows> {
        Ok(Rows {
            stats: self.stats,
            f: self.f.finish()?.map(|w| w.path),
            file: self.file.finish()?.map(|w| w.path),
        })
    }
}

/// The digests of sorted by-digest entries, each with its entries.
fn digest_groups<'a>(
    batch: BatchView<'a>,
    refs: &'a [Ref],
) -> impl Iterator<Item = (Sha1Key, &'a [Ref])> + 'a {
    let mut rest = refs;
    std::iter::from_fn(move || {
        let (first, _) = rest.split_first()?;
        let digest = batch.digest(first)?;
        let len = rest
            .iter()
            .position(|r| batch.digest(r) != Some(digest))
            .unwrap_or(rest.len());
        let (group, tail) = rest.split_at(len);
        rest = tail;
        Some((Sha1Key(*digest), group))
    })
}

/// The capture keys a batch describes more than once (a CDX line and its WARC record,
/// which may disagree on the digest): the store holds such a capture as all its
/// descriptions merged, and a row is derived from it so. Usually none.
struct Descriptions<'a> {
    batch: BatchView<'a>,
    /// The batch's captures in capture key order.
    by_capture: &'a [Ref],
    /// The captures whose key another capture of the batch shares.
    shared: HashSet<Ref>,
}

impl<'a> Descriptions<'a> {
    fn of(batch: BatchView<'a>, by_capture: &'a [Ref]) -> Descriptions<'a> {
        let shared = by_capture
            .par_windows(2)
            .filter(|pair| batch.capture_key(&pair[0]) == batch.capture_key(&pair[1]))
            .flat_map_iter(|pair| [pair[0], pair[1]])
            .collect();
        Descriptions {
            batch,
            by_capture,
            shared,
        }
    }

    fn is_shared(&self, r: &Ref) -> bool {
        !self.shared.is_empty() && self.shared.contains(r)
    }

    /// The capture of `key` as the store will hold it, from its descriptions among
    /// `refs` (a digest's entries), or from all of the batch's when it has others.
    fn capture(&self, key: &[u8], refs: &[Ref]) -> Option<Capture> {
        let batch = self.batch;
        let own = refs.iter().filter(|r| batch.capture_key(r) == key);
        let values: Vec<Vec<u8>> = if own.clone().any(|r| self.is_shared(r)) {
            let first = self
                .by_capture
                .partition_point(|r| batch.capture_key(r) < key);
            (self.by_capture[first..].iter())
                .take_while(|r| batch.capture_key(r) == key)
                .map(|r| batch.value(r))
                .collect()
        } else {
            own.map(|r| batch.value(r)).collect()
        };
        crate::capture::merge_encoded(values.iter().map(Vec::as_slice))
            .and_then(|v| Capture::decode(&v).ok())
    }
}

/// Derives into `row` the row of a digest all of whose captures are in the batch (`refs`,
/// its by-digest entries in order); false when the digest has no row.
fn derive_in_batch(
    batch: BatchView<'_>,
    descriptions: &Descriptions<'_>,
    refs: &[Ref],
    row: &mut DerivedRow,
) -> bool {
    // Most digests have one capture, described once: it is read in place, without
    // collecting entries.
    if let [only] = refs
        && !descriptions.is_shared(only)
    {
        let flags = batch.index_flags(only);
        if flags & IndexEntry::LOCATES == 0 {
            return false;
        }
        let Some(capture) = batch.read(only) else {
            return false;
        };
        let count = u64::from(flags & IndexEntry::COUNTS != 0);
        row.fill(&capture, count, capture.mime, capture.size);
        return true;
    }
    // The same capture may be here twice (a CDX line and its WARC record): those entries
    // are merged.
    let entries = fold_index_entries(
        (refs.iter()).map(|r| {
            (
                batch.digest_key(r),
                batch.index_flags(r),
                batch.capture_key(r),
            )
        }),
        |a, b| cmp_digest_keys(*a, *b).is_eq(),
    );
    if refs.iter().any(|r| descriptions.is_shared(r)) {
        derive_from_index_into(&entries, |wanted| descriptions.capture(wanted, refs), row)
    } else {
        // Each capture is described once, by one of `refs`: read in place.
        let read = |wanted: &[u8]| {
            let r = refs.iter().find(|r| batch.capture_key(r) == wanted)?;
            batch.read(r)
        };
        derive_from_index_into(&entries, read, row)
    }
}

/// Derives into `row` the row of a digest from the store's captures of it (`by_digest`
/// scans the store's by-digest space); false when the digest has no row.
fn derive_from_store(
    store: &Store,
    by_digest: &mut PrefixScanner<'_>,
    key: &Sha1Key,
    row: &mut DerivedRow,
) -> bool {
    let entries = index_entries_from(by_digest, key).unwrap_or_default();
    let entries: Vec<(u8, &[u8])> = entries.iter().map(|(f, k)| (*f, k.as_slice())).collect();
    derive_from_index_into(
        &entries,
        |k| read_capture_to_derive(store, k).ok().flatten(),
        row,
    )
}

/// Writes derived rows into SST files of the two families they go to: `f:c` in `f`, and
/// `file:cdx`, `file:mime`, `file:size` in `file`, a row's cells in key order. The
/// qualifiers and their order are resolved once, and one key buffer serves every cell
/// (building each row's keys and cells anew was ~3 % of a bulk load's CPU, issue 39).
pub(crate) struct RowCellWriter<'s> {
    dedupe: &'s [u8],
    /// The `file` columns a row may have, in the order of their cell keys.
    file: [(FileCell, &'s [u8]); 3],
    ts: u64,
    key: Vec<u8>,
}

#[derive(Clone, Copy)]
enum FileCell {
    Cdx,
    Mime,
    Size,
}

impl<'s> RowCellWriter<'s> {
    pub(crate) fn new(
        schema: &'s crate::schema::Schema,
        columns: &DerivedColumns,
        ts: u64,
    ) -> RowCellWriter<'s> {
        let qualifier = |c: crate::schema::ColumnId| schema.column(c).qualifier.as_bytes();
        let mut file = [
            (FileCell::Cdx, qualifier(columns.cdx)),
            (FileCell::Mime, qualifier(columns.mime)),
            (FileCell::Size, qualifier(columns.size)),
        ];
        // Cell keys of one row and time differ in `qualifier ‖ 0` only.
        file.sort_by(|a, b| a.1.iter().chain(&[0]).cmp(b.1.iter().chain(&[0])));
        RowCellWriter {
            dedupe: qualifier(columns.dedupe),
            file,
            ts,
            key: Vec::new(),
        }
    }

    /// Writes the cells of the row of digest `row`.
    pub(crate) fn write(
        &mut self,
        row: &Sha1Key,
        derived: &DerivedRow,
        f: &mut SstWriter,
        file: &mut SstWriter,
    ) -> Result<()> {
        cell_key_into(&mut self.key, row, self.dedupe, self.ts);
        f.put(&self.key, &derived.dedupe)?;
        for (cell, qualifier) in self.file {
            let size;
            let value = match cell {
                FileCell::Cdx => derived.cdx.as_slice(),
                FileCell::Mime => match &derived.mime {
                    Some(mime) => mime.as_bytes(),
                    None => continue,
                },
                FileCell::Size => match derived.size {
                    Some(n) => {
                        size = n.to_be_bytes();
                        &size
                    }
                    None => continue,
                },
            };
            cell_key_into(&mut self.key, row, qualifier, self.ts);
            file.put(&self.key, value)?;
        }
        Ok(())
    }
}

/// Cuts the sorted entries of a key space into ranges of about [`part_len`] entries, one
/// SST file each, a group ([`KeySpace::same_group`]) never in two.
fn space_ranges(
    refs: &[Ref],
    min_part: usize,
    space: &impl KeySpace,
) -> Vec<std::ops::Range<usize>> {
    part_ranges(refs.len(), min_part, |i| {
        space.same_group(&refs[i], &refs[i - 1])
    })
}

/// Runs `tasks` on the pool's threads, each taking the next task not yet taken, in the
/// order given; the results in that order. (Not `rayon::broadcast`: a thread of the pool
/// may be waiting for the batch being written, and would never take its share.)
fn run_in_order<T: Sync, R: Send>(tasks: &[T], run: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = tasks.iter().map(|_| Mutex::new(None)).collect();
    (0..rayon::current_num_threads())
        .into_par_iter()
        .for_each(|_| {
            loop {
                let i = next.fetch_add(1, Relaxed);
                let Some(task) = tasks.get(i) else { break };
                let result = run(task);
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            }
        });
    results
        .into_iter()
        .filter_map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// Writes sorted entries of a key space into one SST file as merge operands; equal keys
/// collapse into one value ([`KeySpace::merge`]). After each window of entries is
/// written, `after_window` is given its range in `refs` (whole groups,
/// [`KeySpace::same_group`]), while their memory is still in the cache.
fn write_merge_sst(
    cf: &str,
    path: &PathBuf,
    refs: &[Ref],
    space: &impl KeySpace,
    mut after_window: impl FnMut(std::ops::Range<usize>) -> Result<()>,
) -> Result<()> {
    if refs.is_empty() {
        return Ok(());
    }
    let mut writer = SstWriter::new(path, cf);
    // Entries are copied a window at a time into one buffer, then written from it: the
    // copying loop does nothing but read memory, so its cache misses overlap (by-digest
    // entries lie at random places of the batch), and the writer then reads cached bytes.
    // A window is small (~100 KB of the batch) so that what it read is still in the core's
    // cache when `after_window` derives rows from it: with 2,048 entries, finding where
    // each digest starts again took a tenth of a small-records load (issue 39).
    // (Tests use a tiny window, so that windows end between equal keys and mid-range.)
    const WINDOW: usize = if cfg!(test) { 3 } else { 256 };
    let mut window: Vec<u8> = Vec::with_capacity(WINDOW * 256);
    // Per entry of the window: where its key starts, where its value starts (the key's
    // end), where its value ends.
    let mut spans: Vec<(usize, usize, usize)> = Vec::with_capacity(WINDOW + 1);
    let mut i = 0;
    while i < refs.len() {
        let mut end = (i + WINDOW).min(refs.len());
        while end < refs.len() && space.same_group(&refs[end], &refs[end - 1]) {
            end += 1;
        }
        window.clear();
        spans.clear();
        for k in i..end {
            prefetch_ahead(
                refs,
                k,
                PREFETCH_DISTANCE,
                |r| space.entry_at(r),
                |r| space.prefetch_bytes(r),
            );
            let start = window.len();
            space.put_key(&refs[k], &mut window);
            let key_end = window.len();
            space.put_value(&refs[k], &mut window);
            spans.push((start, key_end, window.len()));
        }
        let mut a = 0;
        while a < spans.len() {
            let (ks, ke, ve) = spans[a];
            let key = &window[ks..ke];
            let mut b = a + 1;
            while b < spans.len() && &window[spans[b].0..spans[b].1] == key {
                b += 1;
            }
            if b == a + 1 {
                writer.merge(key, &window[ke..ve])?;
            } else {
                let mut values = spans[a..b].iter().map(|&(_, ke, ve)| &window[ke..ve]);
                let merged = space
                    .merge(&mut values)
                    .unwrap_or_else(|| window[ke..ve].to_vec());
                writer.merge(key, &merged)?;
            }
            a = b;
        }
        after_window(i..end)?;
        i = end;
    }
    writer.finish()?;
    Ok(())
}

/// What the filters of one earlier batch hold.
struct BatchFilters {
    digests: KeyFilter,
    capture_keys: KeyFilter,
    /// The batch's first and last capture keys. Input in SURT order (a CDX file, or one
    /// sorted by host) gives each batch a key range past the earlier ones', and a key
    /// outside a batch's range needs no probe of its filter.
    capture_range: (Vec<u8>, Vec<u8>),
}

impl BatchFilters {
    /// Whether an earlier batch may hold `digest`. The filters are asked together: the
    /// key is hashed once and every filter's block is fetched before any is read, so that
    /// their cache misses overlap. One after the other, the probes of a 100 M-line load's
    /// later batches were 45 % of their writing (a miss per earlier batch and digest).
    fn any_may_hold_digest(earlier: &[BatchFilters], digest: &Sha1Key) -> bool {
        KeyFilter::any_may_hold(earlier.iter().map(|f| &f.digests), digest.as_bytes())
    }

    /// Whether an earlier batch may hold the capture key `key`: only those batches whose
    /// range holds it are asked, together as [`BatchFilters::any_may_hold_digest`] asks.
    fn any_may_hold_capture(earlier: &[BatchFilters], key: &[u8]) -> bool {
        let in_range = |f: &&BatchFilters| {
            key >= f.capture_range.0.as_slice() && key <= f.capture_range.1.as_slice()
        };
        KeyFilter::any_may_hold(
            earlier.iter().filter(in_range).map(|f| &f.capture_keys),
            key,
        )
    }
}

/// A blocked Bloom filter of the digests or capture keys of one batch (16 bits a key,
/// about 0.1 % false positives, which a load of 10 batches checks 10 times): each key
/// sets 7 bits of one 512-bit block, so a lookup reads one cache line. Its words are
/// atomic so that the threads writing a batch's by-digest ranges fill one filter as they
/// go: kept in a list and filtered afterwards, a batch's digests were 20 bytes each on
/// top of the batch (a quarter of a gigabyte a batch at 100 M lines, issue 36).
struct KeyFilter {
    blocks: Vec<[AtomicU64; 8]>,
}

impl KeyFilter {
    /// The memory the filter takes.
    fn bytes(&self) -> usize {
        self.blocks.len() * size_of::<[AtomicU64; 8]>()
    }

    /// An empty filter for up to `keys` keys.
    fn for_keys(keys: usize) -> KeyFilter {
        let blocks = (keys * 16).div_ceil(512).max(1);
        KeyFilter {
            blocks: (0..blocks).map(|_| Default::default()).collect(),
        }
    }

    fn new<'k>(keys: impl ExactSizeIterator<Item = &'k [u8]>) -> KeyFilter {
        let filter = KeyFilter::for_keys(keys.len());
        keys.for_each(|key| filter.insert(key));
        filter
    }

    /// Adds `key`; from any thread (more keys than the filter was made for only raise its
    /// false positives).
    fn insert(&self, key: &[u8]) {
        let (block, bits) = self.position(key);
        let block = &self.blocks[block];
        for (word, bit) in bits {
            // A bit already set (a digest met again) costs no locked instruction.
            if block[word].load(AtomicOrdering::Relaxed) & bit == 0 {
                block[word].fetch_or(bit, AtomicOrdering::Relaxed);
            }
        }
    }

    #[cfg(test)]
    fn may_hold(&self, key: &[u8]) -> bool {
        Self::any_may_hold(std::iter::once(self), key)
    }

    /// Whether any of `filters` may hold `key`: one hash, then every filter's block
    /// prefetched before the first is tested.
    fn any_may_hold<'f>(filters: impl Iterator<Item = &'f KeyFilter> + Clone, key: &[u8]) -> bool {
        let hash = xxhash_rust::xxh3::xxh3_128(key);
        for filter in filters.clone() {
            prefetch(filter.blocks[filter.block(hash)].as_ptr().cast());
        }
        let bits = Self::bits(hash);
        filters.into_iter().any(|filter| {
            let block = &filter.blocks[filter.block(hash)];
            (bits.iter()).all(|&(word, bit)| block[word].load(AtomicOrdering::Relaxed) & bit != 0)
        })
    }

    /// The block of a key and its bits there (word, mask). Hashed, not cut from the key:
    /// CDX digests are whatever the input says.
    fn position(&self, key: &[u8]) -> (usize, [(usize, u64); 7]) {
        let hash = xxhash_rust::xxh3::xxh3_128(key);
        (self.block(hash), Self::bits(hash))
    }

    /// The block of a key's hash: its low half scaled to the filter's blocks.
    fn block(&self, hash: u128) -> usize {
        ((hash as u64 as u128 * self.blocks.len() as u128) >> 64) as usize
    }

    /// The 7 bits of a key's hash in its block (word, mask), from its high half: the same
    /// in every filter.
    fn bits(hash: u128) -> [(usize, u64); 7] {
        let mut rest = (hash >> 64) as u64;
        std::array::from_fn(|_| {
            let bit = (rest & 511) as usize;
            rest >>= 9;
            (bit / 64, 1u64 << (bit % 64))
        })
    }
}

/// How many entries ahead the loop copying a window of entries asks for their memory.
const PREFETCH_DISTANCE: usize = 64;

/// Before `items[i]` is read: prefetches the entry of the item `2 * distance` ahead, and
/// what `data` touches of the one `distance` ahead (its entry fetched by then).
#[inline]
fn prefetch_ahead<T>(
    items: &[T],
    i: usize,
    distance: usize,
    entry_at: impl Fn(&T) -> *const u8,
    data: impl Fn(&T),
) {
    if let Some(far) = items.get(i + 2 * distance) {
        prefetch(entry_at(far));
    }
    if let Some(ahead) = items.get(i + distance) {
        data(ahead);
    }
}

/// Hints the CPU to load the cache line at `at`.
#[inline]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86_64; a prefetch dereferences nothing and cannot fault,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::capture::CaptureKind;
    use crate::store::materialize::materialize_dirty;
    use crate::store::rocks::total_order;
    use crate::store::writer::Writer;

    /// Captures of 40 digests, several per digest, some of them twice (a CDX line and its
    /// WARC record), revisits and captures the file filter leaves out, some without a
    /// type, some with a size; and 30 digests with one capture each. Their sources
    /// alternate within a run; a few lack a digest, a few a WARC location (their key has
    /// the source's name), a few have a short timestamp (by-digest keys of one digest with
    /// timestamps of two lengths).
    pub(crate) fn captures() -> Vec<Capture> {
        let mut out = Vec::new();
        for i in 0..400u64 {
            let digest = (i * 7919) % 40;
            let mut capture = Capture {
                surt: format!("org,example)/p{}", i % 97),
                ts: format!("2020{:02}01000000", 1 + i % 12),
                url: format!("http://example.org/p{}", i % 97),
                warc: Some(format!("ITEM/x-{}.warc.gz", i % 3)),
                offset: Some(i * 1000),
                c_size: Some(100 + i),
                status: Some(if i % 11 == 0 { 404 } else { 200 }),
                // Some captures lack the type or have a size: a row takes them from
                // another capture when its first has none.
                mime: (i % 5 != 0).then(|| "application/pdf".into()),
                size: (i % 4 == 1).then_some(5000 + i),
                digest: Some(Sha1Key([digest as u8; 20])),
                passes: i % 11 != 0,
                ..Default::default()
            };
            capture.source = ["x.cdx", "y.cdx", "/data/z.cdx"][i as usize % 3].into();
            if i % 19 == 0 {
                capture.ts.truncate(6);
            }
            if i % 23 == 0 {
                capture.digest = None;
            }
            if i % 29 == 0 {
                (capture.warc, capture.offset, capture.line) = (None, None, Some(i));
            }
            if i % 13 == 0 {
                capture.kind = CaptureKind::Revisit;
                capture.passes = false;
            }
            if i % 17 == 0 {
                out.push(capture.clone());
            }
            out.push(capture);
        }
        // Digests with a single capture, that locates the file or not.
        for i in 0..30u8 {
            let mut capture = out[usize::from(i) * 7].clone();
            capture.digest = Some(Sha1Key([100 + i; 20]));
            capture.offset = Some(1_000_000 + u64::from(i));
            capture.passes = i % 3 != 0;
            out.push(capture);
        }
        out
    }

    /// The captures of [`captures`], and a few more that describe some of them again (the
    /// same capture key) with another digest: a CDX line and its WARC record that
    /// disagree. The store holds such a capture as its descriptions merged, and a row is
    /// derived from the merged capture. With `winning`, every other one's type wins the
    /// merge ("text/plain" is greater than "application/pdf"); otherwise they all lose.
    pub(crate) fn captures_described_again(winning: bool) -> Vec<Capture> {
        let mut all = captures();
        for k in 0..12u8 {
            let mut again = all[usize::from(k) * 31].clone();
            again.digest = Some(Sha1Key([200 + k; 20]));
            again.mime = Some(match winning && k % 2 == 0 {
                true => "text/plain".into(),
                false => "application/octet-stream".into(),
            });
            // Its record ID is its own.
            again.record_id = Some(format!("<urn:uuid:{k}>"));
            all.push(again);
        }
        all
    }

    /// The store as deriving every row from the store's captures makes it: the captures
    /// written, every digest marked, the marks derived.
    pub(crate) fn derived_from_the_store(
        path: &std::path::Path,
        ts: u64,
        all: &[Capture],
    ) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
        let store = Store::open(path).unwrap();
        let mut writer = Writer::sorted(&store, ts);
        all.iter().for_each(|c| writer.add_capture(&c.view()));
        writer.finish().unwrap();
        let mut marks = Writer::new(&store, ts);
        marks.mark(all.iter().filter_map(|c| c.digest).collect());
        marks.finish().unwrap();
        materialize_dirty(&store, ts).unwrap();
        contents(&store)
    }

    pub(crate) fn contents(store: &Store) -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
        let mut all = Vec::new();
        let rocks = store.rocks("the test").unwrap();
        for cf in ["f", "file", CF_CAPTURE, CF_BY_DIGEST] {
            for item in rocks.db().iterator_cf_opt(
                rocks.cf(cf),
                total_order(),
                rocksdb::IteratorMode::Start,
            ) {
                let (k, v) = item.unwrap();
                all.push((cf, k.to_vec(), v.to_vec()));
            }
        }
        all
    }

    /// A store made by a bulk load of `captures` in one batch, in small SST files.
    pub(crate) fn bulk_store(path: &std::path::Path, ts: u64, captures: &[Capture]) -> Store {
        let store = Store::open(path).unwrap();
        let loader = BulkLoader::new(&store, ts, 1 << 30, 2)
            .unwrap()
            .with_min_part(7);
        let mut run = CaptureRun::default();
        for capture in captures {
            run.push(&capture.view());
        }
        loader.add(run).unwrap();
        let stats = loader.finish().unwrap();
        assert!(stats.sst_files > 8, "{} SST files", stats.sst_files);
        store
    }

    /// Bulk-loads `captures` in chunks of `chunk`, with the memory of about `batches`
    /// batches.
    fn load_in_batches(
        store: &Store,
        ts: u64,
        captures: &[Capture],
        batches: usize,
        chunk: usize,
    ) -> BulkStats {
        load_in_batches_reading(store, ts, captures, batches, chunk, &mut Vec::new())
    }

    /// [`load_in_batches`], and the digests whose rows were read from the store into
    /// `read`, as often as they were.
    fn load_in_batches_reading(
        store: &Store,
        ts: u64,
        captures: &[Capture],
        batches: usize,
        chunk: usize,
        read: &mut Vec<Sha1Key>,
    ) -> BulkStats {
        let mut all = CaptureRun::default();
        for capture in captures {
            all.push(&capture.view());
        }
        load_with_memory_reading(store, ts, captures, all.bytes() / batches, chunk, read)
    }

    /// [`load_in_batches_reading`] with the loader's memory limit given.
    fn load_with_memory_reading(
        store: &Store,
        ts: u64,
        captures: &[Capture],
        memory: usize,
        chunk: usize,
        read: &mut Vec<Sha1Key>,
    ) -> BulkStats {
        let loader = BulkLoader::new(store, ts, memory, 2).unwrap();
        for chunk in captures.chunks(chunk) {
            // The runs of the batches written so far, emptied, once there are some.
            let mut run = loader.run_for_input(1000);
            assert!(run.is_empty());
            for capture in chunk {
                run.push(&capture.view());
            }
            loader.add(run).unwrap();
        }
        let reads = loader.read_from_store.clone();
        let stats = loader.finish().unwrap();
        read.extend(reads.lock().unwrap().iter());
        stats
    }

    #[test]
    fn bulk_load_in_many_small_ssts_equals_the_write_path() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let bulk_store = bulk_store(&dir.path().join("bulk"), ts, &captures());

        let normal_store = Store::open(&dir.path().join("normal")).unwrap();
        let mut writer = Writer::new(&normal_store, ts);
        for capture in captures() {
            writer.add_capture(&capture.view());
            writer.end_record().unwrap();
        }
        writer.finish().unwrap();
        materialize_dirty(&normal_store, ts).unwrap();

        let (bulk, normal) = (contents(&bulk_store), contents(&normal_store));
        assert!(bulk.iter().filter(|(cf, _, _)| *cf == "f").count() > 50);
        assert_eq!(bulk, normal);
    }

    /// A store of `captures` written by the write path, its rows derived.
    fn written_the_normal_way(path: &std::path::Path, ts: u64, captures: &[Capture]) -> Store {
        let store = Store::open(path).unwrap();
        let mut writer = Writer::new(&store, ts);
        for capture in captures {
            writer.add_capture(&capture.view());
            writer.end_record().unwrap();
        }
        writer.finish().unwrap();
        materialize_dirty(&store, ts).unwrap();
        store
    }

    /// The 400 captures of [`captures`] (40 shared digests), then 3,000 captures of
    /// distinct digests.
    fn captures_and_distinct_digests() -> Vec<Capture> {
        let mut all = captures();
        for i in 0..3000u32 {
            let mut capture = all[i as usize % 400].clone();
            let mut digest = [0xEE; 20];
            digest[..4].copy_from_slice(&i.to_be_bytes());
            capture.digest = Some(Sha1Key(digest));
            // A capture of its own: another place in the WARC, or another line of the CDX
            // for the captures without a WARC location.
            capture.offset = Some(2_000_000 + u64::from(i));
            capture.line = capture.line.map(|_| 2_000_000 + u64::from(i));
            all.push(capture);
        }
        all
    }

    /// A load into a store that holds captures (an increment) equals the write path: the
    /// digests and capture keys the store held (some digests of both parts, captures
    /// described again under another digest) have their rows derived from the store, the
    /// digests new to it from the batch, without reading them back; one batch is not
    /// compacted in, and more than one is.
    #[test]
    fn an_increment_reads_back_only_what_the_store_held_and_one_batch_is_not_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let mut all = captures_described_again(true);
        all.extend(captures_and_distinct_digests().into_iter().skip(400));
        let expected = derived_from_the_store(&dir.path().join("reference"), ts, &all);
        // The store's part: every third capture, so that many digests have captures in
        // both parts; the described-again captures come after their first description.
        let in_store = |i: usize| i.is_multiple_of(3) && i < 400;
        let part = |store: bool| -> Vec<Capture> {
            (all.iter().enumerate())
                .filter(|(i, _)| in_store(*i) == store)
                .map(|(_, c)| c.clone())
                .collect()
        };
        let (held, increment) = (part(true), part(false));
        let key_of = |c: &Capture| {
            let mut key = Vec::new();
            crate::store::keys::capture_key(&c.view(), &mut key);
            key
        };
        let held_keys: HashSet<Vec<u8>> = held.iter().map(key_of).collect();
        let held_digests: HashSet<Sha1Key> = held.iter().filter_map(|c| c.digest).collect();
        // What one batch must read back: the increment's digests the store held, or one of
        // whose capture keys it held.
        let must_read: HashSet<Sha1Key> = (increment.iter())
            .filter(|c| {
                c.digest.is_some_and(|d| held_digests.contains(&d))
                    || held_keys.contains(&key_of(c))
            })
            .filter_map(|c| c.digest)
            .collect();
        assert!(must_read.len() > 20, "{}", must_read.len());
        for batches in [1, 4] {
            let store = written_the_normal_way(&dir.path().join(format!("{batches}")), ts, &held);
            let mut read = Vec::new();
            let memory = match batches {
                1 => 1 << 30,
                _ => increment.iter().map(|c| c.to_bytes().len()).sum::<usize>() / batches,
            };
            let stats = load_with_memory_reading(&store, ts, &increment, memory, 50, &mut read);
            assert_eq!(
                stats.batches == 1,
                batches == 1,
                "{} batches",
                stats.batches
            );
            assert!(contents(&store) == expected, "{batches} batches");
            let read: HashSet<Sha1Key> = read.into_iter().collect();
            match batches {
                1 => {
                    assert!(
                        read == must_read,
                        "{} read, {} held",
                        read.len(),
                        must_read.len()
                    );
                    assert_eq!(stats.compacted, 0);
                }
                // A digest of an earlier batch of the load is in the store for the next.
                _ => assert!(stats.compacted >= 3, "{} compacted", stats.compacted),
            }
        }
    }

    /// A load of many batches into an empty store equals the write path, and reads the
    /// store only for the digests an earlier batch had (and the few a Bloom filter
    /// mistakes for them), not for every digest of every batch after the first.
    #[test]
    fn batches_after_the_first_read_the_store_only_for_digests_seen_before() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let all = captures_and_distinct_digests();
        let bulk_store = Store::open(&dir.path().join("bulk")).unwrap();
        let stats = load_in_batches(&bulk_store, ts, &all, 10, 50);
        assert!(stats.batches >= 8, "{} batches", stats.batches);
        // Compacted once, at the end: every family's files on one level.
        assert!(
            stats.compacted >= 3,
            "{} families compacted",
            stats.compacted
        );
        let rocks = bulk_store.rocks("the test").unwrap();
        for cf in BULK_FAMILIES {
            let levels = (0..7)
                .filter(|level| {
                    let property = format!("rocksdb.num-files-at-level{level}");
                    rocks
                        .db()
                        .property_int_value_cf(rocks.cf(cf), property.as_str())
                        .unwrap()
                        .unwrap()
                        > 0
                })
                .count();
            assert_eq!(levels, 1, "{cf} has files on {levels} levels");
        }
        // The shared digests come in the first batch and again in later ones; the distinct
        // ones never are read (but for a false positive or two).
        assert!(
            (30..100).contains(&stats.digests_read),
            "{} digests read from the store",
            stats.digests_read
        );

        let normal_store = written_the_normal_way(&dir.path().join("normal"), ts, &all);
        assert_eq!(contents(&bulk_store), contents(&normal_store));
    }

    /// A digest whose captures come in every batch has its row derived from the store
    /// once, when the load ends, and the row holds every capture: derived after each batch,
    /// it was read again in each.
    #[test]
    fn a_digest_met_in_every_batch_is_read_from_the_store_once() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let mut all = captures_and_distinct_digests();
        let everywhere = Sha1Key([0xAB; 20]);
        for capture in all.iter_mut().skip(400).step_by(100) {
            capture.digest = Some(everywhere);
        }
        let bulk_store = Store::open(&dir.path().join("bulk")).unwrap();
        let mut read = Vec::new();
        let stats = load_in_batches_reading(&bulk_store, ts, &all, 10, 50, &mut read);
        assert!(stats.batches >= 8, "{} batches", stats.batches);
        assert_eq!(read.iter().filter(|d| **d == everywhere).count(), 1);
        assert_eq!(read.len() as u64, stats.digests_read);
        let normal_store = written_the_normal_way(&dir.path().join("normal"), ts, &all);
        assert_eq!(contents(&bulk_store), contents(&normal_store));
    }

    /// While a load runs, the index and filter blocks of the batches' level-0 files are
    /// not pinned in the block cache (beyond its capacity), as they are in a load that
    /// keeps the store's option.
    #[test]
    fn level0_metadata_is_not_pinned_while_a_load_runs() {
        let dir = tempfile::tempdir().unwrap();
        let all = captures_and_distinct_digests();
        let pinned_after_batches = |name: &str, keep_pinning: bool| -> u64 {
            let store = Store::open(&dir.path().join(name)).unwrap();
            let rocks = store.rocks("a test").unwrap();
            let mut whole = CaptureRun::default();
            all.iter().for_each(|capture| whole.push(&capture.view()));
            // A limit this small leaves a quarter of it to a batch: four batches.
            let loader = BulkLoader::new(&store, 1_600_000_000_000, whole.bytes(), 2)
                .unwrap()
                .with_min_part(20);
            for cf in BULK_FAMILIES.into_iter().filter(|_| keep_pinning) {
                (rocks.db())
                    .set_options_cf(
                        rocks.cf(cf),
                        &[(
                            "block_based_table_factory",
                            "{pin_l0_filter_and_index_blocks_in_cache=true}",
                        )],
                    )
                    .unwrap();
            }
            for chunk in all.chunks(50) {
                let mut run = loader.run_for_input(1000);
                chunk.iter().for_each(|capture| run.push(&capture.view()));
                loader.add(run).unwrap();
            }
            let batches = loader.writing.lock().unwrap().batches;
            assert!(batches >= 3, "{batches} batches");
            // Every family's files opened and read, as the rows from the store read them.
            for cf in BULK_FAMILIES {
                (rocks
                    .db()
                    .iterator_cf(rocks.cf(cf), rocksdb::IteratorMode::Start))
                .for_each(|item| drop(item.unwrap()));
            }
            (rocks.db())
                .property_int_value_cf(rocks.cf(CF_CAPTURE), "rocksdb.block-cache-pinned-usage")
                .unwrap()
                .unwrap()
        };
        let (unpinned, pinned) = (
            pinned_after_batches("unpinned", false),
            pinned_after_batches("pinned", true),
        );
        // What stays pinned is every file's top-level index and filter (a few bytes of a
        // large file's, about as much as its partitions in these small files).
        assert!(
            unpinned * 3 < pinned * 2,
            "{unpinned} bytes pinned while loading, {pinned} with level 0 pinned"
        );
    }

    /// The runs of a written batch are handed out again, empty, with their buffers.
    #[test]
    fn the_runs_of_a_written_batch_are_used_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bulk")).unwrap();
        let all = captures();
        let mut run = CaptureRun::default();
        all.iter().for_each(|capture| run.push(&capture.view()));
        let (bytes, capacity) = (run.bytes(), run.data.capacity());
        let loader = BulkLoader::new(&store, 1_600_000_000_000, bytes, 2).unwrap();
        assert_eq!(loader.run_for_input(100).data.capacity(), 300);
        loader.add(run).unwrap();
        let again = loader.run_for_input(100);
        assert!(again.is_empty() && again.bytes() == 0 && again.sources.is_empty());
        assert_eq!(again.data.capacity(), capacity);
        assert_eq!(loader.run_for_input(100).data.capacity(), 300);
        assert_eq!(loader.finish().unwrap().captures, all.len() as u64);
    }

    /// The runs of an earlier batch that the batch being written did not use again are
    /// given back before it is written; a run used again counts with what it held.
    #[test]
    fn runs_a_batch_did_not_use_again_are_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bulk")).unwrap();
        let all = captures();
        let fill = |mut run: CaptureRun, captures: &[Capture]| {
            captures.iter().for_each(|c| run.push(&c.view()));
            run
        };
        let one_run = fill(CaptureRun::default(), &all[..50]).bytes();
        // So small a limit leaves a quarter of it to a batch: about four runs.
        let loader = BulkLoader::new(&store, 1_600_000_000_000, 4 * 4 * one_run, 2).unwrap();
        let batches = || loader.writing.lock().unwrap().batches;
        let mut added = 0;
        while batches() == 0 {
            loader
                .add(fill(loader.run_for_input(1000), &all[..50]))
                .unwrap();
            added += 1;
        }
        assert!(added >= 3, "the first batch had {added} runs");
        assert_eq!(loader.spare.lock().unwrap().runs.len(), added);
        // One of them used again for fewer captures: it counts with what it held.
        let small = fill(loader.run_for_input(1000), &all[..5]);
        assert!(small.resident() >= one_run && small.bytes() < one_run / 5);
        loader.add(small).unwrap();
        // A run of new memory as large as a batch: the second batch, of those two runs.
        loader
            .add(fill(CaptureRun::default(), &all[..250]))
            .unwrap();
        assert_eq!(batches(), 2);
        assert_eq!(loader.spare.lock().unwrap().runs.len(), 2);
        loader.finish().unwrap();
    }

    /// A batch is also cut by the memory the process holds: under a limit far below it,
    /// every run added is a batch of its own once it is an eighth of the limit (a quarter
    /// of it, where the batches' own count would cut them, is never reached); far above
    /// it, none is until the load ends.
    #[test]
    fn a_batch_is_cut_by_the_memory_the_process_holds() {
        let all = captures();
        let runs = || {
            all.chunks(100).map(|chunk| {
                let mut run = CaptureRun::default();
                chunk.iter().for_each(|c| run.push(&c.view()));
                run
            })
        };
        let counted =
            |run: CaptureRun| run.resident() + run.entries.len() * ORDER_BYTES_PER_CAPTURE;
        let (least, most) = (
            runs().map(counted).min().unwrap(),
            runs().map(counted).max().unwrap(),
        );
        let small = 4 * most + 4;
        assert!(small / 8 <= least, "runs of {least} to {most} bytes");
        for (limit, batches_before_the_end) in [(small, runs().count() as u64), (1 << 40, 0)] {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(&dir.path().join("bulk")).unwrap();
            let mut loader = BulkLoader::new(&store, 1_600_000_000_000, limit, 2).unwrap();
            loader.measure_memory = true;
            for run in runs() {
                loader.add(run).unwrap();
                let spare = loader.spare.lock().unwrap();
                let held: usize = spare.runs.iter().map(CaptureRun::resident).sum();
                assert_eq!(spare.resident, held);
            }
            assert_eq!(
                loader.writing.lock().unwrap().batches,
                batches_before_the_end,
                "limit {limit}"
            );
            let stats = loader.finish().unwrap();
            assert_eq!(stats.captures, all.len() as u64);
            assert_eq!(stats.batches, batches_before_the_end.max(1));
        }
    }

    /// Batches filled by the workers of a pool that parses are written on the loader's own
    /// threads, and every batch on all of them: on the parsing pool, the worker that filled
    /// the batch wrote it alone while the others waited for it.
    #[test]
    fn batches_filled_on_a_parsing_pool_are_written_on_the_loaders_threads() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let all = captures_and_distinct_digests();
        let store = Store::open(&dir.path().join("bulk")).unwrap();
        let bytes = {
            let mut run = CaptureRun::default();
            all.iter().for_each(|capture| run.push(&capture.view()));
            run.bytes()
        };
        let loader = BulkLoader::new(&store, ts, bytes / 6, 2).unwrap();
        let parsing = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|i| format!("parse-{i}"))
            .build()
            .unwrap();
        parsing.install(|| {
            all.chunks(40).par_bridge().for_each(|chunk| {
                let mut run = loader.run_for_input(1000);
                chunk.iter().for_each(|capture| run.push(&capture.view()));
                loader.add(run).unwrap();
            })
        });
        let written_on = std::mem::take(&mut *loader.written_on.lock().unwrap());
        let stats = loader.finish().unwrap();
        assert!(stats.batches >= 5, "{} batches", stats.batches);
        assert_eq!(written_on.len() + 1, stats.batches as usize);
        for name in &written_on {
            assert!(
                name.as_deref().is_some_and(|n| n.starts_with("bulk-")),
                "a batch written on {name:?}"
            );
        }

        let normal_store = written_the_normal_way(&dir.path().join("normal"), ts, &all);
        assert_eq!(contents(&store), contents(&normal_store));
    }

    /// The compaction at the end of a load of many batches writes L0 straight into the last
    /// level, where the first batch went, and no level between: the families here are a
    /// few hundred kilobytes, so their base level is made small enough (1 KiB) for them to
    /// look as a 100 M-capture load's families do to the usual 256 MiB (base L5 or higher,
    /// where the compaction would go first).
    #[test]
    fn the_compaction_at_the_end_writes_no_level_between_l0_and_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let all = captures_and_distinct_digests();
        let store = Store::open(&dir.path().join("bulk")).unwrap();
        let rocks = store.rocks("the test").unwrap();
        for cf in BULK_FAMILIES {
            rocks
                .db()
                .set_options_cf(rocks.cf(cf), &[("max_bytes_for_level_base", "1024")])
                .unwrap();
        }
        let stats = load_in_batches(&store, ts, &all, 6, 50);
        assert!(stats.batches >= 4, "{} batches", stats.batches);
        assert!(stats.compacted >= 3, "{} compacted", stats.compacted);
        for cf in BULK_FAMILIES {
            let levels_written = compaction_output_levels(&store, cf);
            // L6 holds the family: a statistics text this reads no level of fails here.
            assert!(
                levels_written.contains(&6)
                    && levels_written.iter().all(|&level| level == 0 || level == 6),
                "{cf}: compactions wrote levels {levels_written:?}"
            );
        }
    }

    /// The levels that RocksDB's compaction statistics of family `cf` list (a level appears
    /// once a compaction wrote it or it holds files; L0 for the files ingested there).
    fn compaction_output_levels(store: &Store, cf: &str) -> Vec<u32> {
        let rocks = store.rocks("the test").unwrap();
        let text = rocks
            .db()
            .property_value_cf(rocks.cf(cf), "rocksdb.cfstats")
            .unwrap()
            .unwrap();
        text.lines()
            .filter_map(|line| line.trim_start().strip_prefix('L'))
            .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
            .collect()
    }

    /// A capture key described under two digests in one batch: both rows are derived
    /// from the capture the store holds, its descriptions merged, whichever wins.
    #[test]
    fn rows_of_a_capture_described_under_two_digests_are_derived_from_it_merged() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let all = captures_described_again(true);
        let bulk_store = bulk_store(&dir.path().join("bulk"), ts, &all);
        let expected = derived_from_the_store(&dir.path().join("reference"), ts, &all);
        assert!(contents(&bulk_store) == expected);
    }

    /// The same across batches: a digest of a later batch whose capture an earlier batch
    /// described under another digest gets its row from the store's merged capture.
    #[test]
    fn a_capture_described_again_in_a_later_batch_is_read_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let ts = 1_600_000_000_000;
        let all = captures_described_again(false);
        let store = Store::open(&dir.path().join("bulk")).unwrap();
        let stats = load_in_batches(&store, ts, &all, 6, 40);
        assert!(stats.batches >= 5, "{} batches", stats.batches);
        let expected = derived_from_the_store(&dir.path().join("reference"), ts, &all);
        assert!(contents(&store) == expected);
    }

    /// Several batches' filters asked at once answer as each asked alone would, and a
    /// capture key outside a batch's range is not asked of its filter at all.
    #[test]
    fn earlier_batches_are_asked_together_and_capture_keys_by_range_first() {
        let keys = |from: u32, to: u32| -> Vec<Vec<u8>> {
            (from..to)
                .map(|i| format!("com,example)/{i:06}").into_bytes())
                .collect()
        };
        let batch = |keys: &[Vec<u8>], range: (&[u8], &[u8])| BatchFilters {
            digests: KeyFilter::new(keys.iter().map(|k| k.as_slice())),
            capture_keys: KeyFilter::new(keys.iter().map(|k| k.as_slice())),
            capture_range: (range.0.to_vec(), range.1.to_vec()),
        };
        let (first, second) = (keys(0, 1_000), keys(1_000, 2_000));
        let earlier = [
            batch(&first, (&first[0], &first[999])),
            batch(&second, (&second[0], &second[999])),
        ];
        for i in (0..4_000).step_by(7) {
            let key = format!("com,example)/{i:06}").into_bytes();
            let alone = earlier.iter().any(|f| f.capture_keys.may_hold(&key));
            let together = KeyFilter::any_may_hold(earlier.iter().map(|f| &f.capture_keys), &key);
            assert_eq!(together, alone, "{i}");
            assert_eq!(
                BatchFilters::any_may_hold_capture(&earlier, &key),
                alone,
                "{i}"
            );
            if i < 2_000 {
                assert!(together, "{i} is held");
            }
        }
        // A filter that holds a key its range leaves out (no batch is made so; it shows
        // that the range is asked first).
        let narrow = [batch(&first, (&first[500], &first[999]))];
        assert!(narrow[0].capture_keys.may_hold(&first[10]));
        assert!(!BatchFilters::any_may_hold_capture(&narrow, &first[10]));
        assert!(BatchFilters::any_may_hold_capture(&narrow, &first[600]));
    }

    #[test]
    fn a_key_filter_holds_its_keys_and_few_others() {
        let key = |i: u32| {
            let mut k = [0u8; 20];
            k[16..].copy_from_slice(&i.to_le_bytes());
            Sha1Key(k)
        };
        let held: Vec<Sha1Key> = (0..10_000).map(key).collect();
        let filter = KeyFilter::new(held.iter().map(|k| k.as_bytes().as_slice()));
        assert!(held.iter().all(|k| filter.may_hold(k.as_bytes())));
        // Filled by threads at once, as a batch's by-digest ranges fill it: no key lost
        // to another's write of the same word, and the same bits as one thread sets.
        let together = KeyFilter::for_keys(held.len());
        std::thread::scope(|scope| {
            for share in held.chunks(held.len() / 4) {
                let together = &together;
                scope.spawn(move || share.iter().for_each(|k| together.insert(k.as_bytes())));
            }
        });
        let words = |f: &KeyFilter| -> Vec<u64> {
            (f.blocks.iter().flatten())
                .map(|w| w.load(AtomicOrdering::Relaxed))
                .collect()
        };
        assert_eq!(words(&together), words(&filter));
        let false_positives = (10_000..110_000)
            .filter(|&i| filter.may_hold(key(i).as_bytes()))
            .count();
        assert!(
            false_positives < 500,
            "{false_positives} false positives in 100,000"
        );
    }
}
