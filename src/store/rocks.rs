//! The embedded backend: one RocksDB directory (the default store).
//!
//! Column families:
//! - one per table family (`f`, `file`, `grobid0`, `match0`), cells keyed by
//!   `row(20) ‖ qualifier ‖ 0x00 ‖ !timestamp(8, big-endian)` so a row's cells are
//!   contiguous and versions of a cell sort newest first; a compaction filter drops the
//!   versions beyond each family's cap;
//! - one per key space ([`Space`]): `capture` and `capture_by_digest` combine writes of
//!   one key with RocksDB merge operators, the others are plain.
//!
//! Every family uses Snappy block compression and block-based table format version 5,
//! which RocksDB 7.x (Debian stable's `ldb`, `sst_dump`) and PyPI's `rocksdict` read; the
//! table families need no merge operator to be read. The two capture key spaces keep their
//! bottom level (and the files a bulk load ingests) in ZSTD instead: they are most of a
//! big store, and ZSTD takes a fifth off them (see [`zstd_at_the_bottom`]).
//!
//! One writer at a time opens the live database under the writer lock; readers open the
//! newest published version (a checkpoint) read-only. See [`super::directory`].

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rocksdb::checkpoint::Checkpoint;
use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DB,
    DBCompressionType, DBRawIterator, LruCacheOptions, Options, ReadOptions, WriteBatch,
    WriteOptions,
};

use super::Create;
use super::backend::{
    Backend, Batch, CellFilter, KeyVisitor, Op, RawCell, RowVisitor, Space, prefix_end,
    row_upper_bound,
};
use super::directory;
use crate::key::Sha1Key;
use crate::schema::Schema;

pub const ROW_LEN: usize = 20;
const TS_LEN: usize = 8;

/// The block cache of a writer, and of a reader unless told otherwise: shared by every
/// column family, an upper bound (RocksDB allocates as blocks are read).
pub const WRITER_BLOCK_CACHE: usize = 256 << 20;

/// The block-based table format version of every SST file the store writes.
pub const TABLE_FORMAT_VERSION: i32 = 5;

/// A cell's key in its family's column family.
pub fn cell_key(row: &Sha1Key, qualifier: &[u8], ts: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(ROW_LEN + qualifier.len() + 1 + TS_LEN);
    cell_key_into(&mut key, row, qualifier, ts);
    key
}

/// [`cell_key`] in a buffer that is cleared first.
pub fn cell_key_into(key: &mut Vec<u8>, row: &Sha1Key, qualifier: &[u8], ts: u64) {
    key.clear();
    key.extend_from_slice(row.as_bytes());
    key.extend_from_slice(qualifier);
    key.push(0);
    key.extend_from_slice(&(!ts).to_be_bytes());
}

/// Splits a cell key into (row, qualifier, timestamp).
pub fn split_cell_key(key: &[u8]) -> Option<(&[u8], &[u8], u64)> {
    if key.len() < ROW_LEN + 1 + TS_LEN {
        return None;
    }
    let (row, rest) = key.split_at(ROW_LEN);
    let (qualifier_and_sep, ts) = rest.split_at(rest.len() - TS_LEN);
    let qualifier = qualifier_and_sep.strip_suffix(&[0])?;
    let ts = !u64::from_be_bytes(ts.try_into().ok()?);
    Some((row, qualifier, ts))
}

/// Options of one column family: Snappy blocks in the table format that RocksDB 7.8
/// (Debian stable's `ldb`/`sst_dump`) and PyPI's `rocksdict` read. A family keyed by row
/// (`keyed_by_row`) filters its row prefix instead of whole keys (see [`set_row_prefix`]).
fn base_cf_options(cache: &Cache, keyed_by_row: bool) -> Options {
    let mut opts = Options::default();
    opts.set_compression_type(DBCompressionType::Snappy);
    opts.set_bottommost_compression_type(DBCompressionType::Snappy);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    table.set_block_size(16 * 1024);
    table.set_bloom_filter(10.0, false);
    // Nothing looks up a whole key of a family keyed by row: its rows and digests are read
    // by prefix. Whole keys in its filters would only cost time (two hashes per cell
    // instead of one per row) and space.
    table.set_whole_key_filtering(!keyed_by_row);
    // Index and filter blocks are held in the block cache (those of level 0 pinned there)
    // instead of on the heap of each open table file, where they grow with the store: a
    // reader's memory is then its cache, whatever the size of the archive.
    table.set_cache_index_and_filter_blocks(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    // In partitions of 4 KiB under a small top-level index (pinned): whole, a 64 MiB file's
    // filter is about a megabyte, which a small cache cannot keep, and every lookup that
    // missed it read it again (at 3 M captures, 70 % of a word index projection's time).
    table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    table.set_partition_filters(true);
    table.set_metadata_block_size(4096);
    table.set_pin_top_level_index_and_filter(true);
    // 5 is the newest table format RocksDB 7.x reads (6 came with 8.6); what 6 and 7
    // add (checksums of the footer context, smaller index blocks) does not matter here.
    table.set_format_version(TABLE_FORMAT_VERSION);
    opts.set_block_based_table_factory(&table);
    if keyed_by_row {
        set_row_prefix(&mut opts);
    }
    opts.set_write_buffer_size(64 << 20);
    opts.set_max_write_buffer_number(4);
    opts.set_target_file_size_base(64 << 20);
    opts.set_max_bytes_for_level_base(LEVEL_BASE_BYTES);
    opts
}

/// Whether column family `cf` keeps its bottom level in ZSTD: the capture key spaces,
/// which are ~60 % of a store of generated captures (issue 36: 105 and 75 of ~300 bytes
/// a capture in Snappy). ZSTD at level 1 takes 20 % off both for 1.4× Snappy's time to
/// compress (`sst_dump --command=recompress` of a 1 M store's files, BENCHMARKS.md); the
/// families of the seed's table keep Snappy, as it asks. Only the bottom level, where the
/// data stays: memtable flushes and the levels above keep Snappy's speed.
pub(crate) fn zstd_at_the_bottom(cf: &str) -> bool {
    cf == Space::Capture.name() || cf == Space::ByDigest.name()
}

/// ZSTD for a family's bottom level and for the SST files written for it outside the store
/// (RocksDB's `SstFileWriter` takes the bottom level's compression, as ingested files are
/// meant to land there). No dictionary: `SstFileWriter` would buffer a whole file
/// uncompressed to train one, and a dictionary took only 2 % more off the capture index
/// (13 % off the by-digest index) for two to four times the time to compress
/// (BENCHMARKS.md).
fn set_zstd_at_the_bottom(opts: &mut Options) {
    opts.set_bottommost_compression_type(DBCompressionType::Zstd);
    // Window bits (zlib's only), level, strategy (zlib's only), dictionary bytes; enabled.
    opts.set_bottommost_compression_options(-14, ZSTD_LEVEL, 0, 0, true);
}

/// Level 1: level 3 (ZSTD's default) compressed the capture index 0.5 % smaller in 14 %
/// more time.
const ZSTD_LEVEL: i32 = 1;

/// The target size of a family's first level below L0 (RocksDB's default, said here so
/// that a bulk load can raise it while it loads and set it back after, see
/// `store::bulk`).
pub(crate) const LEVEL_BASE_BYTES: u64 = 256 << 20;

/// Options for SST files written outside the store (bulk load) into column family `cf`:
/// the same compression, table format and filters as that family's own bottom level.
pub(crate) fn cf_options_for_sst(cf: &str) -> Options {
    cf_options(&block_cache(8 << 20), cf)
}

/// The options of column family `cf` before its merge operator and version cap: filters
/// by whether it is keyed by row, ZSTD at the bottom for the capture key spaces.
fn cf_options(cache: &Cache, cf: &str) -> Options {
    let mut opts = base_cf_options(cache, keyed_by_row(cf));
    if zstd_at_the_bottom(cf) {
        set_zstd_at_the_bottom(&mut opts);
    }
    opts
}

/// Whether the keys of column family `cf` begin with a 20-byte row or digest that lookups
/// seek: the table families and `capture_by_digest`, not the other key spaces.
pub(crate) fn keyed_by_row(cf: &str) -> bool {
    !Space::ALL
        .iter()
        .any(|&space| space != Space::ByDigest && space.name() == cf)
}

/// Read options for an iterator that crosses rows in a test of the raw families.
#[cfg(test)]
pub(crate) fn total_order() -> ReadOptions {
    let mut opts = ReadOptions::default();
    opts.set_total_order_seek(true);
    opts
}

/// Keys of the table families (`row ‖ qualifier ‖ 0 ‖ time`) and of `capture_by_digest`
/// (`digest ‖ capture`) begin with a 20-byte SHA-1. Their Bloom filters also hold that
/// prefix, so looking up a row or a digest the store does not have (every new payload of
/// an incremental load, a dedup miss) skips a file on its filter instead of reading one of
/// its blocks from disk: an import into a 100 M-capture store otherwise waited for a random
/// read per capture (issue 36). Only lookups of one row or digest use it
/// ([`RocksBackend::lookup_options`]); every other iterator keeps RocksDB's total order.
/// Files written before have no prefix in their filters and are read as before.
fn set_row_prefix(opts: &mut Options) {
    opts.set_prefix_extractor(rocksdb::SliceTransform::create_fixed_prefix(ROW_LEN));
}

/// The block cache of a reader, which several opened versions of a store can share: a
/// server that opens each newly published version keeps one cache for all of them, so its
/// memory stays within the one bound, and blocks cached for a version are found again by
/// the next (RocksDB keys a cached block by its SST file's unique id, which the hard links
/// of a published version keep).
#[derive(Clone)]
pub struct BlockCache(Cache);

impl BlockCache {
    /// A cache of at most `bytes` (RocksDB allocates as blocks are read).
    pub fn new(bytes: usize) -> BlockCache {
        BlockCache(block_cache(bytes))
    }

    /// The bytes of the blocks it holds now.
    pub fn usage(&self) -> usize {
        self.0.get_usage()
    }
}

/// An LRU block cache of `bytes`, in shards of at least 32 MiB: RocksDB's default of
/// 512 KiB shards keeps no block larger than a shard's high-priority half, so the whole
/// index and filter blocks of files written before they were partitioned were read again
/// on every lookup.
fn block_cache(bytes: usize) -> Cache {
    let bytes = bytes.max(1 << 20);
    let shard_bits = (bytes >> 25).checked_ilog2().unwrap_or(0).min(4);
    let mut opts = LruCacheOptions::default();
    opts.set_capacity(bytes);
    opts.set_num_shard_bits(shard_bits as i32);
    Cache::new_lru_cache_opts(&opts)
}

fn merge_operator(
    space: Space,
) -> impl Fn(&[u8], Option<&[u8]>, &rocksdb::MergeOperands) -> Option<Vec<u8>> + Clone {
    move |_key, existing, operands| {
        let values: Vec<&[u8]> = existing.into_iter().chain(operands.iter()).collect();
        space.merge().and_then(|merge| merge(&values))
    }
}

fn db_options() -> Options {
    let mut db_opts = Options::default();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    db_opts.increase_parallelism(threads as i32);
    db_opts.set_max_background_jobs(threads.max(2) as i32);
    // A compaction split by key range over the cores: a bulk load's one compaction at its
    // end (every batch's files of the random-key families, tens of gigabytes at 100 M
    // captures) otherwise ran on one thread while the others waited (issue 36).
    db_opts.set_max_subcompactions(threads as u32);
    db_opts.set_keep_log_file_num(5);
    db_opts.set_max_open_files(512);
    db_opts.set_compression_type(DBCompressionType::Snappy);
    // Every version copies the MANIFEST: keep it small by starting a new one often.
    db_opts.set_max_manifest_file_size(8 << 20);
    // The memtables of all families together, beyond which the largest is flushed: a
    // writer's memory is this and its block cache, however many families it writes at
    // once (captures, the index and file rows, issue 36's loads into a big store in a
    // memory cgroup).
    db_opts.set_db_write_buffer_size(MEMTABLES_BYTES);
    db_opts
}

/// See [`db_options`]: two of a family's 64 MiB memtables.
const MEMTABLES_BYTES: usize = 128 << 20;

/// The column families of a store: RocksDB's default one, one per table family, one per
/// key space, and whatever else `existing` lists (families a newer build made).
fn cf_descriptors(
    schema: &Schema,
    existing: &[String],
    cache: &Cache,
) -> Vec<ColumnFamilyDescriptor> {
    let mut descriptors = Vec::new();
    // RocksDB's own default family is unused but always present; compress it too
    // so every family in the OPTIONS file shows Snappy.
    descriptors.push(ColumnFamilyDescriptor::new(
        rocksdb::DEFAULT_COLUMN_FAMILY_NAME,
        base_cf_options(cache, false),
    ));
    for family in &schema.families {
        let mut opts = cf_options(cache, &family.name);
        install_version_cap(&mut opts, family.max_versions);
        descriptors.push(ColumnFamilyDescriptor::new(&family.name, opts));
    }
    for space in Space::ALL {
        let mut opts = cf_options(cache, space.name());
        match space {
            // The names are those of the stores written before the storage interface.
            Space::Capture => opts
                .set_merge_operator_associative("sediment.capture_merge.v2", merge_operator(space)),
            Space::ByDigest => {
                opts.set_merge_operator_associative(
                    "sediment.index_merge.v1",
                    merge_operator(space),
                );
                // A writer asks of every digest it writes whether the index holds it
                // (see `writer`): most are new, and without a filter of its own the
                // memtable answered each with a seek through its skip list (a tenth of
                // a CDX load's CPU). 6.4 MB per 64 MB memtable.
                opts.set_memtable_prefix_bloom_ratio(0.1);
            }
            _ => {}
        }
        descriptors.push(ColumnFamilyDescriptor::new(space.name(), opts));
    }
    for name in existing {
        if !descriptors.iter().any(|d| d.name() == name) {
            descriptors.push(ColumnFamilyDescriptor::new(
                name,
                base_cf_options(cache, false),
            ));
        }
    }
    descriptors
}

/// Removes versions beyond a family's cap during compaction. Compaction sees a cell's
/// versions newest first, so everything after the first `cap` of one cell is surplus.
struct VersionCapFilter {
    cap: usize,
    current: Vec<u8>,
    seen: usize,
}

impl CompactionFilter for VersionCapFilter {
    fn filter(&mut self, _level: u32, key: &[u8], _value: &[u8]) -> Decision {
        let Some(cell) = key.get(..key.len().saturating_sub(TS_LEN)) else {
            return Decision::Keep;
        };
        if cell == self.current.as_slice() {
            self.seen += 1;
        } else {
            self.current.clear();
            self.current.extend_from_slice(cell);
            self.seen = 1;
        }
        if self.seen > self.cap {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }

    fn name(&self) -> &CStr {
        c"sediment.version_cap"
    }
}

struct VersionCapFactory {
    cap: usize,
}

impl CompactionFilterFactory for VersionCapFactory {
    type Filter = VersionCapFilter;

    fn create(&mut self, _context: CompactionFilterContext) -> VersionCapFilter {
        VersionCapFilter {
            cap: self.cap,
            current: Vec::new(),
            seen: 0,
        }
    }

    fn name(&self) -> &CStr {
        c"sediment.version_cap_factory"
    }
}

fn install_version_cap(opts: &mut Options, cap: usize) {
    opts.set_compaction_filter_factory(VersionCapFactory { cap });
}

/// How this process holds the database.
enum Access {
    /// The one writer: the live database, under the writer lock.
    Writer(WriterState),
    /// A reader of one published version.
    Reader(directory::ReaderLease),
    /// A database opened directly by tests and tools that manage no versions.
    Unmanaged,
}

struct WriterState {
    _lock: directory::WriterLock,
    /// When the last version was published and at which sequence number; the mutex
    /// also serializes publishing.
    published: Mutex<Published>,
}

struct Published {
    at: Instant,
    sequence: u64,
}

pub struct RocksBackend {
    db: DB,
    path: PathBuf,
    access: Access,
    /// Column family name and version cap of each table family, by schema index.
    families: Vec<(String, usize)>,
    /// Whether the live database may hold a partly applied input (the DIRTY marker).
    /// Writes made meanwhile skip the write-ahead log: a crash rolls them back anyway.
    inconsistent: AtomicBool,
    /// Serializes conditional writes.
    conditional: Mutex<()>,
    /// The longest a write call took, in microseconds: what a writer felt of RocksDB's
    /// write stalls (memtables full, too many level-0 files) and of everything else.
    slowest_write_micros: AtomicU64,
    /// The store was created by this writer. Declared last: it is dropped after the
    /// database is closed.
    created: Option<CreatedStore>,
}

impl Drop for RocksBackend {
    fn drop(&mut self) {
        if let Some(created) = &self.created
            && !self.holds_data()
        {
            crate::diag!(
                "sediment: nothing was written, so there is no Sediment store at {} (the one \
                 this run created is removed)",
                self.path.display()
            );
            created.remove.store(true, Ordering::SeqCst);
        }
    }
}

/// A store a writer created, removed when it is dropped if `remove` is set: a run that
/// writes nothing leaves no store behind.
struct CreatedStore {
    path: PathBuf,
    created: Option<directory::Created>,
    remove: AtomicBool,
}

impl CreatedStore {
    fn new(path: &Path, created: Option<directory::Created>) -> CreatedStore {
        CreatedStore {
            path: path.to_path_buf(),
            created,
            remove: AtomicBool::new(created.is_some()),
        }
    }
}

impl Drop for CreatedStore {
    fn drop(&mut self) {
        if let Some(created) = self.created
            && self.remove.load(Ordering::SeqCst)
        {
            directory::remove_created(&self.path, created);
        }
    }
}

/// How long writers waited, for the ingest reports (issue 36: compaction must never stall
/// writers for more than a second).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStalls {
    /// The longest one write call took.
    pub slowest_write_ms: u64,
    /// RocksDB's own account: the time writes were delayed or stopped because flushes or
    /// compactions were behind ("Cumulative stall" of its `rocksdb.stats`).
    pub stalled_ms: u64,
}

impl RocksBackend {
    /// See [`WriteStalls`].
    pub fn write_stalls(&self) -> WriteStalls {
        let stats = self.db.property_value("rocksdb.stats").ok().flatten();
        WriteStalls {
            slowest_write_ms: self.slowest_write_micros.load(Ordering::Relaxed) / 1000,
            stalled_ms: stats.as_deref().and_then(cumulative_stall_ms).unwrap_or(0),
        }
    }

    /// Opens the live database as its one writer; see [`super::Store::open_writer`].
    pub fn open_writer(
        path: &Path,
        schema: &Schema,
        options: &super::WriterOptions,
    ) -> Result<RocksBackend> {
        let create = options.create;
        if create == Create::Never
            && !directory::is_store(path)
            && !directory::is_legacy_store(path)
        {
            return Err(directory::no_store_error(path));
        }
        let created = directory::prepare_for_writer(path)?;
        // Removes what it created if opening fails from here on.
        let cleanup = CreatedStore::new(path, created);
        directory::check_marker(path)?;
        let lock = directory::WriterLock::acquire(path, &options.command, options.wait)?;
        directory::fresh_staging_dir(path)?;
        let latest = directory::latest_version(path);
        if directory::is_dirty(path) {
            crate::diag!(
                "sediment: the last writer of {} stopped in the middle of an input; \
                 rolling back to {} (run that command again to complete it)",
                path.display(),
                latest.map_or("an empty store".to_string(), |v| format!("version {v}"))
            );
            directory::restore_live(path, latest)?;
            directory::clear_dirty(path)?;
        }
        let db = open_live(path, schema)?;
        let published_sequence = latest
            .and_then(|v| directory::version_info(path, v))
            .and_then(|info| info["sequence"].as_u64());
        let mut backend = RocksBackend::new(
            db,
            path,
            schema,
            Access::Writer(WriterState {
                _lock: lock,
                published: Mutex::new(Published {
                    at: Instant::now(),
                    sequence: published_sequence.unwrap_or(0),
                }),
            }),
        );
        // From now on the backend decides, when it is dropped, whether to keep the store.
        cleanup.remove.store(false, Ordering::SeqCst);
        backend.created = (created.is_some() && create == Create::IfWritten).then_some(cleanup);
        Ok(backend)
    }

    /// Whether any table family or key space holds data (the layout and schema records
    /// every store starts with aside).
    fn holds_data(&self) -> bool {
        let names = self
            .families
            .iter()
            .map(|f| f.0.as_str())
            .chain(Space::ALL.map(Space::name));
        for name in names {
            let Some(cf) = self.db.cf_handle(name) else {
                continue;
            };
            let mut iter = self
                .db
                .raw_iterator_cf_opt(cf, Self::read_options(None, None));
            iter.seek_to_first();
            while iter.valid() {
                let initial = name == Space::Meta.name()
                    && matches!(iter.key(), Some(b"layout_version" | b"schema"));
                if !initial {
                    return true;
                }
                iter.next();
            }
            if iter.status().is_err() {
                return true;
            }
        }
        false
    }

    /// Opens the newest published version read-only, its blocks cached in `cache`; see
    /// [`super::Store::open_reader`].
    pub fn open_reader(path: &Path, schema: &Schema, cache: &BlockCache) -> Result<RocksBackend> {
        if !directory::is_store(path) {
            return Err(directory::no_store_error(path));
        }
        directory::check_marker(path)?;
        let lease = directory::lease_latest(path)?;
        let existing = DB::list_cf(&Options::default(), &lease.dir).unwrap_or_default();
        let db = DB::open_cf_descriptors_read_only(
            &db_options(),
            &lease.dir,
            cf_descriptors(schema, &existing, &cache.0),
            false,
        )
        .with_context(|| format!("cannot open {} for reading", lease.dir.display()))?;
        Ok(RocksBackend::new(db, path, schema, Access::Reader(lease)))
    }

    /// Opens a RocksDB directory directly, creating it if needed, outside any version
    /// management (tests and tools that build scratch stores).
    pub fn open_unmanaged(path: &Path, schema: &Schema) -> Result<RocksBackend> {
        std::fs::create_dir_all(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let db = open_live(path, schema)?;
        Ok(RocksBackend::new(db, path, schema, Access::Unmanaged))
    }

    fn new(db: DB, path: &Path, schema: &Schema, access: Access) -> RocksBackend {
        RocksBackend {
            db,
            path: path.to_path_buf(),
            access,
            families: schema
                .families
                .iter()
                .map(|f| (f.name.clone(), f.max_versions))
                .collect(),
            inconsistent: AtomicBool::new(false),
            conditional: Mutex::new(()),
            slowest_write_micros: AtomicU64::new(0),
            created: None,
        }
    }

    pub fn db(&self) -> &DB {
        &self.db
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_reader(&self) -> bool {
        matches!(self.access, Access::Reader(_))
    }

    /// A column family handle. All families are created on open, so a missing one is a
    /// programming error.
    pub fn cf(&self, name: &str) -> &ColumnFamily {
        self.db
            .cf_handle(name)
            .unwrap_or_else(|| panic!("column family {name} is created on open"))
    }

    /// The column family name of a family of the schema.
    pub fn family_cf_name(&self, family: usize) -> &str {
        &self.families[family].0
    }

    pub fn family_cf(&self, family: usize) -> &ColumnFamily {
        self.cf(&self.families[family].0)
    }

    pub fn space_cf(&self, space: Space) -> &ColumnFamily {
        self.cf(space.name())
    }

    /// Write options: no write-ahead log while an input is partly applied (a crash rolls
    /// it back; publishing flushes), the log otherwise (whole rows of a stage survive).
    fn write_options(&self) -> WriteOptions {
        let mut wo = WriteOptions::default();
        wo.disable_wal(self.inconsistent.load(Ordering::SeqCst));
        wo
    }

    /// Runs a full compaction of every family (drops surplus versions and merged operands).
    pub fn compact(&self) {
        let mut names: Vec<&str> = self.families.iter().map(|f| f.0.as_str()).collect();
        names.extend(Space::ALL.map(Space::name));
        for name in names {
            self.db
                .compact_range_cf(self.cf(name), None::<&[u8]>, None::<&[u8]>);
        }
    }

    /// Counts raw stored versions of every cell of a family (tests of the version cap).
    pub fn raw_version_count(&self, family: usize) -> usize {
        let mut iter = self
            .db
            .raw_iterator_cf_opt(self.family_cf(family), Self::read_options(None, None));
        iter.seek_to_first();
        let mut n = 0;
        while iter.valid() {
            n += 1;
            iter.next();
        }
        n
    }

    fn has_unpublished_changes(&self) -> bool {
        match &self.access {
            Access::Writer(state) => {
                let published = state.published.lock().unwrap_or_else(|e| e.into_inner());
                self.db.latest_sequence_number() != published.sequence
            }
            _ => false,
        }
    }

    /// Publishes at once what a previous writer committed whole but did not publish
    /// (a stage stopped between two versions).
    pub fn publish_leftovers(&self) -> Result<()> {
        if self.has_unpublished_changes() && directory::latest_version(&self.path).is_some() {
            self.publish()?;
        }
        Ok(())
    }

    /// Collects the cells of one row from one family's iterator, positioned at the row
    /// (or before it). Leaves the iterator on the first key after the row.
    fn collect_family_cells(
        &self,
        family: usize,
        iter: &mut DBRawIterator<'_>,
        row: &[u8],
        filter: &CellFilter,
        out: &mut Vec<RawCell>,
    ) {
        let cap = filter.versions.min(self.families[family].1);
        let mut last: Option<(Vec<u8>, usize)> = None;
        while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
            let Some((key_row, qualifier, ts)) = split_cell_key(key) else {
                iter.next();
                continue;
            };
            if key_row != row {
                break;
            }
            if filter.wants(family, qualifier) {
                let seen = match &mut last {
                    Some((q, n)) if q.as_slice() == qualifier => {
                        *n += 1;
                        *n
                    }
                    _ => {
                        last = Some((qualifier.to_vec(), 1));
                        1
                    }
                };
                if seen <= cap {
                    out.push(RawCell {
                        family,
                        qualifier: qualifier.to_vec(),
                        ts,
                        value: value.to_vec(),
                    });
                }
            }
            iter.next();
        }
    }

    fn scan_with(
        &self,
        space: Space,
        start: &[u8],
        end: Option<&[u8]>,
        fill_cache: bool,
        visit: &mut KeyVisitor<'_>,
    ) -> Result<()> {
        let mut opts = RocksBackend::read_options(None, end);
        opts.set_readahead_size(2 << 20);
        opts.fill_cache(fill_cache);
        let mut iter = self.db.raw_iterator_cf_opt(self.space_cf(space), opts);
        iter.seek(start);
        while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
            if !visit(key, value)? {
                break;
            }
            iter.next();
        }
        iter.status()?;
        Ok(())
    }

    /// An unbounded iterator over a key space, not yet positioned (see
    /// [`super::Store::prefix_scanner`]).
    pub(crate) fn forward_iterator(&self, space: Space) -> DBRawIterator<'_> {
        self.db
            .raw_iterator_cf_opt(self.space_cf(space), Self::read_options(None, None))
    }

    /// Whether a column family holds no key.
    pub(crate) fn space_is_empty(&self, name: &str) -> bool {
        let mut iter = self
            .db
            .raw_iterator_cf_opt(self.cf(name), Self::read_options(None, None));
        iter.seek_to_first();
        !iter.valid()
    }

    /// The value of `key`, read without keeping its block in the block cache: for keys
    /// read once each, at random (the captures a row is derived from), whose blocks would
    /// only push out the index and filter blocks. Kept, those blocks churned the cache:
    /// 300 MB more peak RSS (malloc arenas) for 1 M new lines into a 10 M-capture store.
    pub(crate) fn get_uncached(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut opts = ReadOptions::default();
        opts.fill_cache(false);
        Ok(self.db.get_cf_opt(self.space_cf(space), key, &opts)?)
    }

    /// An iterator over a key space for lookups of one 20-byte prefix per seek (see
    /// [`RocksBackend::lookup_options`]): it yields only keys of the prefix sought.
    pub(crate) fn lookup_iterator(&self, space: Space) -> DBRawIterator<'_> {
        self.db
            .raw_iterator_cf_opt(self.space_cf(space), Self::lookup_options())
    }

    /// Options of an iterator that looks up one row or digest at a time: each seek is to a
    /// 20-byte prefix, and the iterator ends with that prefix's keys, so files whose filter
    /// lacks the prefix are not read at all.
    fn lookup_options() -> ReadOptions {
        let mut opts = ReadOptions::default();
        opts.set_prefix_same_as_start(true);
        opts
    }

    /// Options of an iterator that may cross rows or digests: total order, whatever the
    /// family's prefix extractor (see [`set_row_prefix`]).
    fn read_options(start: Option<&[u8]>, end: Option<&[u8]>) -> ReadOptions {
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        if let Some(s) = start {
            opts.set_iterate_lower_bound(s.to_vec());
        }
        if let Some(e) = end {
            opts.set_iterate_upper_bound(e.to_vec());
        }
        opts
    }
}

fn open_live(path: &Path, schema: &Schema) -> Result<DB> {
    let mut db_opts = db_options();
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    let existing = DB::list_cf(&db_opts, path).unwrap_or_default();
    DB::open_cf_descriptors(
        &db_opts,
        path,
        cf_descriptors(schema, &existing, &block_cache(WRITER_BLOCK_CACHE)),
    )
    .with_context(|| format!("cannot open the store at {}", path.display()))
}

impl Backend for RocksBackend {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn exclusive_writer(&self) -> bool {
        true
    }

    fn read_rows(
        &self,
        rows: &[Sha1Key],
        filter: &CellFilter,
        visit: &mut RowVisitor<'_>,
    ) -> Result<()> {
        let mut iters: Vec<(usize, DBRawIterator<'_>)> = filter
            .families
            .iter()
            .map(|(family, _)| {
                let mut opts = Self::lookup_options();
                // One row (`/sha1/KEY`, a stage's lookup): bounded at the row's end, so a
                // row whose last cell ends a data block does not read the next block (from
                // the disk, in a store larger than memory) only to find another row there:
                // the prefix is checked on keys read, the bound on the index first.
                if let [row] = rows {
                    opts.set_iterate_upper_bound(row_upper_bound(row.as_bytes()));
                }
                let cf = self.family_cf(*family);
                (*family, self.db.raw_iterator_cf_opt(cf, opts))
            })
            .collect();
        for row in rows {
            let mut cells = Vec::new();
            for (family, iter) in iters.iter_mut() {
                iter.seek(row.as_bytes());
                self.collect_family_cells(*family, iter, row.as_bytes(), filter, &mut cells);
                iter.status()?;
            }
            if !cells.is_empty() && !visit(row, cells)? {
                break;
            }
        }
        Ok(())
    }

    fn scan_rows(
        &self,
        filter: &CellFilter,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        visit: &mut RowVisitor<'_>,
    ) -> Result<()> {
        let mut iters: Vec<(usize, DBRawIterator<'_>)> = filter
            .families
            .iter()
            .map(|&(family, _)| {
                let mut opts = RocksBackend::read_options(start, end);
                opts.set_readahead_size(4 << 20);
                // Row scans read each block once (export, stats, the stages' sweeps): kept,
                // the blocks would only fill memory with the store and evict what lookups use.
                opts.fill_cache(false);
                let mut iter = self.db.raw_iterator_cf_opt(self.family_cf(family), opts);
                match start {
                    Some(s) => iter.seek(s),
                    None => iter.seek_to_first(),
                }
                (family, iter)
            })
            .collect();
        loop {
            let next_row: Option<[u8; ROW_LEN]> = iters
                .iter()
                .filter_map(|(_, it)| it.key().and_then(|k| k.get(..ROW_LEN)))
                .min()
                .and_then(|r| r.try_into().ok());
            let Some(row) = next_row else { break };
            let mut cells = Vec::new();
            for (family, iter) in iters.iter_mut() {
                self.collect_family_cells(*family, iter, &row, filter, &mut cells);
            }
            if cells.is_empty() {
                continue;
            }
            if !visit(&Sha1Key(row), cells)? {
                break;
            }
        }
        for (_, iter) in &iters {
            iter.status()?;
        }
        Ok(())
    }

    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get_cf(self.space_cf(space), key)?)
    }

    fn scan(
        &self,
        space: Space,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut KeyVisitor<'_>,
    ) -> Result<()> {
        self.scan_with(space, start, end, true, visit)
    }

    fn scan_once(
        &self,
        space: Space,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut KeyVisitor<'_>,
    ) -> Result<()> {
        self.scan_with(space, start, end, false, visit)
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut wb = WriteBatch::default();
        for op in &batch.ops {
            match op {
                Op::PutCell {
                    row,
                    family,
                    qualifier,
                    ts,
                    value,
                } => wb.put_cf(
                    self.family_cf(*family),
                    cell_key(row, qualifier, *ts),
                    value,
                ),
                Op::DeleteRowFamily { row, family } => {
                    let end = prefix_end(row.as_bytes()).unwrap_or_else(|| vec![0xff; ROW_LEN + 1]);
                    wb.delete_range_cf(
                        self.family_cf(*family),
                        row.as_bytes().as_slice(),
                        end.as_slice(),
                    );
                }
                Op::Put { space, key, value } => wb.put_cf(self.space_cf(*space), key, value),
                Op::Merge { space, key, value } => wb.merge_cf(self.space_cf(*space), key, value),
                Op::Delete { space, key } => wb.delete_cf(self.space_cf(*space), key),
            }
        }
        let started = Instant::now();
        self.db.write_opt(wb, &self.write_options())?;
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.slowest_write_micros
            .fetch_max(micros, Ordering::Relaxed);
        Ok(())
    }

    fn check_and_set(
        &self,
        space: Space,
        key: &[u8],
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool> {
        let _guard = self.conditional.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.db.get_cf(self.space_cf(space), key)?;
        if current.as_deref() != expected {
            return Ok(false);
        }
        let cf = self.space_cf(space);
        match new {
            Some(value) => self.db.put_cf_opt(cf, key, value, &self.write_options())?,
            None => self.db.delete_cf_opt(cf, key, &self.write_options())?,
        }
        Ok(true)
    }

    fn flush(&self) -> Result<()> {
        let mut names: Vec<&str> = self.families.iter().map(|f| f.0.as_str()).collect();
        names.extend(Space::ALL.map(Space::name));
        let handles: Vec<&ColumnFamily> = names.iter().map(|n| self.cf(n)).collect();
        self.db
            .flush_cfs_opt(&handles, &rocksdb::FlushOptions::default())?;
        Ok(())
    }

    fn publish(&self) -> Result<Option<u64>> {
        let Access::Writer(state) = &self.access else {
            return Ok(None);
        };
        let mut published = state.published.lock().unwrap_or_else(|e| e.into_inner());
        let sequence = self.db.latest_sequence_number();
        let version = directory::next_version(&self.path);
        let dir = directory::version_dir(&self.path, version);
        std::fs::create_dir_all(directory::versions_dir(&self.path))?;
        // The checkpoint flushes the memtables (so it needs no WAL) and hard-links the
        // tables; RocksDB writes it under a temporary name and renames it when whole.
        Checkpoint::new(&self.db)?
            .create_checkpoint(&dir)
            .with_context(|| format!("cannot publish version {}", dir.display()))?;
        directory::seal_version(
            &dir,
            &serde_json::json!({
                "version": version,
                "published_ms": super::clock::now_millis(),
                "sequence": sequence,
            }),
        )?;
        directory::retire_old_versions(&self.path, version);
        *published = Published {
            at: Instant::now(),
            sequence,
        };
        Ok(Some(version))
    }

    fn publish_if_due(&self, interval: Duration) -> Result<()> {
        let Access::Writer(state) = &self.access else {
            return Ok(());
        };
        let due = state
            .published
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .at
            .elapsed()
            >= interval;
        if due && self.has_unpublished_changes() {
            self.publish()?;
        }
        Ok(())
    }

    fn mark_inconsistent(&self) -> Result<()> {
        if let Access::Writer(_) = &self.access
            && !self.inconsistent.swap(true, Ordering::SeqCst)
        {
            directory::mark_dirty(&self.path)?;
        }
        Ok(())
    }

    fn mark_consistent(&self) -> Result<()> {
        if let Access::Writer(_) = &self.access
            && self.inconsistent.swap(false, Ordering::SeqCst)
        {
            directory::clear_dirty(&self.path)?;
        }
        Ok(())
    }

    fn close(&self) -> Result<()> {
        if let Access::Writer(_) = &self.access {
            if self.has_unpublished_changes() || directory::latest_version(&self.path).is_none() {
                self.publish()?;
            }
            self.mark_consistent()?;
        }
        Ok(())
    }

    fn version(&self) -> Option<u64> {
        match &self.access {
            Access::Reader(lease) => Some(lease.version),
            _ => None,
        }
    }

    fn size_on_disk(&self) -> Option<u64> {
        Some(directory::size_on_disk(&self.path))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The "Cumulative stall: HH:MM:SS.mmm H:M:S, P percent" line of `rocksdb.stats`, in ms.
fn cumulative_stall_ms(stats: &str) -> Option<u64> {
    let line = stats.lines().find(|l| l.starts_with("Cumulative stall:"))?;
    let time = line["Cumulative stall:".len()..]
        .split_whitespace()
        .next()?;
    let mut parts = time.split(':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    let seconds = hours.parse::<f64>().ok()? * 3600.0
        + minutes.parse::<f64>().ok()? * 60.0
        + seconds.parse::<f64>().ok()?;
    Some((seconds * 1000.0).round() as u64)
}

impl<'a> dyn Backend + 'a {
    /// The embedded backend, for what only it can do (bulk loads of SST files).
    pub fn as_rocks(&self) -> Option<&RocksBackend> {
        self.as_any().downcast_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The families and `capture_by_digest` filter their 20-byte row prefix and not whole
    /// keys (OPTIONS file RocksDB writes), the capture space whole keys only; lookups and
    /// scans give the same cells.
    #[test]
    fn row_keyed_families_filter_their_row_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let store =
            crate::store::Store::open_writer(&path, &crate::store::WriterOptions::creating("test"))
                .unwrap();
        let rocks = store.backend().as_rocks().unwrap();
        let mut batch = Batch::default();
        for i in 0u8..50 {
            batch.push(Op::Put {
                space: Space::ByDigest,
                key: [[i; 20].as_slice(), b"capture"].concat(),
                value: vec![i],
            });
        }
        rocks.write(&batch).unwrap();
        rocks.flush().unwrap();
        let mut options = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("OPTIONS-")
            })
            .collect::<Vec<_>>();
        options.sort();
        let text = std::fs::read_to_string(options.last().unwrap()).unwrap();
        let find = |header: String| {
            let start = text.find(&header).unwrap();
            let rest = &text[start + 1..];
            rest[..rest.find("\n[").unwrap_or(rest.len())].to_string()
        };
        let section = |name: &str| find(format!("[CFOptions \"{name}\"]"));
        let table = |name: &str| find(format!("[TableOptions/BlockBasedTable \"{name}\"]"));
        for name in ["f", "file", "capture_by_digest"] {
            assert!(
                section(name).contains("prefix_extractor=rocksdb.FixedPrefix.20"),
                "{name}"
            );
            assert!(table(name).contains("whole_key_filtering=false"), "{name}");
        }
        assert!(section("capture").contains("prefix_extractor=nullptr"));
        assert!(table("capture").contains("whole_key_filtering=true"));
        // A lookup finds a digest's keys and only those; a missing digest finds nothing.
        let mut lookup = rocks.lookup_iterator(Space::ByDigest);
        lookup.seek([7u8; 20]);
        assert_eq!(
            lookup.key().unwrap(),
            [[7u8; 20].as_slice(), b"capture"].concat()
        );
        lookup.next();
        assert!(!lookup.valid());
        lookup.seek([200u8; 20]);
        assert!(!lookup.valid() || !lookup.key().unwrap().starts_with(&[200u8; 20]));
        // A total-order scan still crosses digests.
        let mut n = 0;
        rocks
            .scan(Space::ByDigest, &[0u8; 20], None, &mut |_, _| {
                n += 1;
                Ok(true)
            })
            .unwrap();
        assert_eq!(n, 50);
    }

    #[test]
    fn the_cumulative_stall_is_read_from_rocksdbs_stats() {
        let stats = "** DB Stats **\nUptime(secs): 5.0 total, 5.0 interval\n\
                     Cumulative stall: 00:01:2.500 H:M:S, 1.2 percent\n\
                     Interval stall: 00:00:0.000 H:M:S, 0.0 percent\n";
        assert_eq!(cumulative_stall_ms(stats), Some(62_500));
        assert_eq!(cumulative_stall_ms("no such line"), None);
    }

    #[test]
    fn a_writer_reports_its_slowest_write_and_rocksdbs_stalls() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open_writer(
            &dir.path().join("s"),
            &crate::store::WriterOptions::creating("test"),
        )
        .unwrap();
        let rocks = store.backend().as_rocks().unwrap();
        let mut batch = Batch::default();
        batch.push(Op::Put {
            space: Space::Meta,
            key: b"k".to_vec(),
            value: b"v".to_vec(),
        });
        rocks.write(&batch).unwrap();
        let stalls = rocks.write_stalls();
        assert!(stalls.slowest_write_ms < 1000, "{stalls:?}");
        // The property is there and parses (no stall on an idle store).
        let stats = rocks.db.property_value("rocksdb.stats").unwrap().unwrap();
        assert_eq!(cumulative_stall_ms(&stats), Some(0), "{stats}");
    }

    #[test]
    fn cell_keys_split_back_and_sort_newest_first() {
        let row = Sha1Key([7; 20]);
        let old = cell_key(&row, b"mime", 1000);
        let new = cell_key(&row, b"mime", 2000);
        assert!(new < old, "newer versions sort first");
        assert_eq!(
            split_cell_key(&old),
            Some((&[7u8; 20][..], &b"mime"[..], 1000))
        );
        // a shorter qualifier that is a prefix of another still sorts before it
        assert!(cell_key(&row, b"c", 1) < cell_key(&row, b"cdx", 5));
    }

    /// Rows of one 20 KiB cell each, so every data block ends with a row's last cell:
    /// reading one row reads its block and not the next one (the bound at the row's end),
    /// through a reader that shares its block cache with another, which then finds the
    /// row's block in that cache instead of reading it again.
    #[test]
    fn one_row_reads_its_block_only_and_readers_share_a_cache() {
        use rocksdb::perf::{PerfContext, PerfMetric, PerfStatsLevel, set_perf_stats};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let schema = Schema::embedded().unwrap();
        let mut seed = 36u64;
        let mut noise = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 56) as u8
                })
                .collect()
        };
        const CELL: usize = 20 << 10;
        {
            let rocks = RocksBackend::open_unmanaged(&path, &schema).unwrap();
            let mut batch = Batch::default();
            for i in 0u8..8 {
                batch.push(Op::PutCell {
                    row: Sha1Key([i * 16; 20]),
                    family: 0,
                    qualifier: b"c".to_vec(),
                    ts: 1,
                    value: noise(CELL),
                });
            }
            rocks.write(&batch).unwrap();
            rocks.flush().unwrap();
        }
        let open = |cache: &BlockCache| {
            let db = DB::open_cf_descriptors_read_only(
                &db_options(),
                &path,
                cf_descriptors(
                    &schema,
                    &DB::list_cf(&Options::default(), &path).unwrap(),
                    &cache.0,
                ),
                false,
            )
            .unwrap();
            RocksBackend::new(db, &path, &schema, Access::Unmanaged)
        };
        let filter = CellFilter {
            families: vec![(0, None)],
            versions: 1,
        };
        let read = |rocks: &RocksBackend, row: Sha1Key| {
            set_perf_stats(PerfStatsLevel::EnableCount);
            let mut perf = PerfContext::default();
            perf.reset();
            let mut cells = 0;
            rocks
                .read_rows(&[row], &filter, &mut |_, found| {
                    cells += found.len();
                    Ok(true)
                })
                .unwrap();
            let read = perf.metric(PerfMetric::BlockReadByte);
            set_perf_stats(PerfStatsLevel::Disable);
            (cells, read)
        };
        let cache = BlockCache::new(8 << 20);
        let first = open(&cache);
        let (cells, bytes) = read(&first, Sha1Key([3 * 16; 20]));
        assert_eq!(cells, 1);
        // Its data block and at most a few 4 KiB index and filter partitions; without the
        // bound, the next row's 20 KiB block too.
        assert!(
            (CELL as u64..CELL as u64 + (16 << 10)).contains(&bytes),
            "{bytes} bytes read for one row of {CELL}"
        );
        let second = open(&cache);
        let (cells, bytes) = read(&second, Sha1Key([3 * 16; 20]));
        assert_eq!(cells, 1);
        assert!(
            bytes < CELL as u64,
            "{bytes} bytes read again through a shared cache"
        );
        // A reader with a cache of its own reads the block from the file.
        let (_, bytes) = read(&open(&BlockCache::new(8 << 20)), Sha1Key([3 * 16; 20]));
        assert!(bytes >= CELL as u64);
    }
}
