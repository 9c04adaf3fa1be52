//! The store: one RocksDB directory holding the `files` table and the capture index.
//!
//! Column families:
//! - one per table family (`f`, `file`, `grobid0`, `match0`), cells keyed by
//!   `row(20) ‖ qualifier ‖ 0x00 ‖ !timestamp(8, big-endian)` so a row's cells are
//!   contiguous and versions of a cell sort newest first;
//! - `capture`: every capture in URL-then-time order (SURT ‖ 0 ‖ timestamp ‖ 0 ‖ tie-breaker);
//! - `capture_by_digest`: the same captures keyed by payload digest, first-capture
//!   order inside a digest, from which `f:c` and `file:*` are derived;
//! - `dirty`: digests whose derived cells must be recomputed (crash-safe work list);
//! - `meta`: schema version, ingested inputs, warcinfo records;
//! - `catalog`: the bibliographic catalog used by the `match0` stage.
//!
//! Every family uses Snappy block compression; RocksDB's OPTIONS file in the store
//! directory records it per family. Tables are written in block-based format version 5,
//! which RocksDB 7.x (Debian stable's `ldb`, `sst_dump`) and PyPI's `rocksdict` read, and
//! the table families need no merge operator to be read.
//!
//! A store is shared the way an HBase table is: one writer at a time ([`Store::open_writer`],
//! under a lock that names its holder to a second writer), any number of readers
//! ([`Store::open_reader`]) that read the newest *published version*, a RocksDB checkpoint
//! the writer makes at consistent points. The layout of the directory, the versions and
//! the roll-back after an interrupted writer are in [`directory`].

pub mod bulk;
pub mod captures;
pub mod cells;
pub mod directory;
pub mod registry;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rocksdb::checkpoint::Checkpoint;
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DB, DBCompressionType, Options,
    WriteOptions,
};

use crate::capture::merge_encoded;
use crate::schema::Schema;

pub const CF_CAPTURE: &str = "capture";
pub const CF_BY_DIGEST: &str = "capture_by_digest";
pub const CF_DIRTY: &str = "dirty";
pub const CF_META: &str = "meta";
pub const CF_CATALOG: &str = "catalog";

/// Bumped when the on-disk layout changes; a store written by another layout is refused.
pub const LAYOUT_VERSION: &str = "2";
const META_LAYOUT_KEY: &[u8] = b"layout_version";

pub struct Store {
    db: DB,
    schema: Arc<Schema>,
    path: PathBuf,
    access: Access,
}

/// How a process holds the store.
enum Access {
    /// The one writer: the live database, under the writer lock.
    Writer(WriterState),
    /// A reader of one published version.
    Reader(directory::ReaderLease),
    /// A database opened directly by tests and library users that manage no versions.
    Unmanaged,
}

struct WriterState {
    _lock: directory::WriterLock,
    /// When the last version was published and at which sequence number; the mutex
    /// also serializes publishing.
    published: Mutex<Published>,
    /// Whether the live database may hold a partly applied input (the DIRTY marker).
    inconsistent: AtomicBool,
}

struct Published {
    at: Instant,
    sequence: u64,
}

/// How a writer waits for another one.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The command, named to a second writer that finds the store busy.
    pub command: String,
    /// Queue behind another writer instead of failing.
    pub wait: bool,
}

impl WriterOptions {
    pub fn new(command: &str) -> WriterOptions {
        WriterOptions {
            command: command.to_string(),
            wait: false,
        }
    }
}

/// Options of one column family: Snappy blocks in the table format that RocksDB 7.8
/// (Debian stable's `ldb`/`sst_dump`) and PyPI's `rocksdict` read.
fn base_cf_options(cache: &Cache) -> Options {
    let mut opts = Options::default();
    opts.set_compression_type(DBCompressionType::Snappy);
    opts.set_bottommost_compression_type(DBCompressionType::Snappy);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    table.set_block_size(16 * 1024);
    table.set_bloom_filter(10.0, false);
    // 5 is the newest table format RocksDB 7.x reads (6 came with 8.6); what 6 and 7
    // add (checksums of the footer context, smaller index blocks) does not matter here.
    table.set_format_version(TABLE_FORMAT_VERSION);
    opts.set_block_based_table_factory(&table);
    opts.set_write_buffer_size(64 << 20);
    opts.set_max_write_buffer_number(4);
    opts.set_target_file_size_base(64 << 20);
    opts
}

/// How often a long-running writer makes its progress visible (see
/// [`Store::publish_if_due`]).
pub const PUBLISH_INTERVAL: Duration = Duration::from_secs(2);

/// The block-based table format version of every SST file the store writes.
pub const TABLE_FORMAT_VERSION: i32 = 5;

/// Options for SST files written outside the store (bulk load): the same compression and
/// table format as the families they are ingested into.
pub(crate) fn base_cf_options_for_sst() -> Options {
    base_cf_options(&Cache::new_lru_cache(8 << 20))
}

fn index_merge(
    _key: &[u8],
    existing: Option<&[u8]>,
    operands: &rocksdb::MergeOperands,
) -> Option<Vec<u8>> {
    captures::merge_index_entries(existing.into_iter().chain(operands.iter()))
}

fn capture_merge(
    _key: &[u8],
    existing: Option<&[u8]>,
    operands: &rocksdb::MergeOperands,
) -> Option<Vec<u8>> {
    merge_encoded(existing.into_iter().chain(operands.iter()))
}

fn db_options() -> Options {
    let mut db_opts = Options::default();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    db_opts.increase_parallelism(threads as i32);
    db_opts.set_max_background_jobs(threads.max(2) as i32);
    db_opts.set_keep_log_file_num(5);
    db_opts.set_max_open_files(512);
    db_opts.set_compression_type(DBCompressionType::Snappy);
    // Every version copies the MANIFEST: keep it small by starting a new one often.
    db_opts.set_max_manifest_file_size(8 << 20);
    db_opts
}

/// The column families of a store: RocksDB's default one, one per table family, the
/// capture key spaces, and whatever else `existing` lists (families a newer build made).
fn cf_descriptors(schema: &Schema, existing: &[String]) -> Vec<ColumnFamilyDescriptor> {
    let cache = Cache::new_lru_cache(256 << 20);
    let mut descriptors = Vec::new();
    // RocksDB's own default family is unused but always present; compress it too
    // so every family in the OPTIONS file shows Snappy.
    descriptors.push(ColumnFamilyDescriptor::new(
        rocksdb::DEFAULT_COLUMN_FAMILY_NAME,
        base_cf_options(&cache),
    ));
    for family in &schema.families {
        let mut opts = base_cf_options(&cache);
        cells::install_version_cap(&mut opts, family.max_versions);
        descriptors.push(ColumnFamilyDescriptor::new(&family.name, opts));
    }
    let mut opts = base_cf_options(&cache);
    opts.set_merge_operator_associative("sediment.capture_merge.v2", capture_merge);
    descriptors.push(ColumnFamilyDescriptor::new(CF_CAPTURE, opts));
    let mut opts = base_cf_options(&cache);
    opts.set_merge_operator_associative("sediment.index_merge.v1", index_merge);
    descriptors.push(ColumnFamilyDescriptor::new(CF_BY_DIGEST, opts));
    for name in [CF_DIRTY, CF_META, CF_CATALOG] {
        descriptors.push(ColumnFamilyDescriptor::new(name, base_cf_options(&cache)));
    }
    for name in existing {
        if !descriptors.iter().any(|d| d.name() == name) {
            descriptors.push(ColumnFamilyDescriptor::new(name, base_cf_options(&cache)));
        }
    }
    descriptors
}

impl Store {
    /// Opens the store at `path` as its writer (creating it if needed), with the
    /// embedded schema. See [`Store::open_writer`].
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_writer(path, &WriterOptions::new("library"))
    }

    /// Opens the store as its one writer: takes the writer lock (explaining who holds
    /// it, or waiting with `wait`), creates the store if the directory is new or empty,
    /// and rolls back what a writer that stopped without publishing left behind.
    /// What the writer changes becomes visible to readers at [`Store::publish`] and
    /// [`Store::close`].
    pub fn open_writer(path: &Path, options: &WriterOptions) -> Result<Store> {
        Store::open_writer_with_schema(path, options, Schema::embedded()?)
    }

    pub fn open_writer_with_schema(
        path: &Path,
        options: &WriterOptions,
        schema: Schema,
    ) -> Result<Store> {
        directory::prepare_for_writer(path)?;
        directory::check_marker(path)?;
        let lock = directory::WriterLock::acquire(path, &options.command, options.wait)?;
        directory::fresh_staging_dir(path)?;
        let latest = directory::latest_version(path);
        if directory::is_dirty(path) {
            eprintln!(
                "sediment: the last writer of {} stopped in the middle of an input; \
                 rolling back to {} (run that command again to complete it)",
                path.display(),
                latest.map_or("an empty store".to_string(), |v| format!("version {v}"))
            );
            directory::restore_live(path, latest)?;
            directory::clear_dirty(path)?;
        }
        let db = Store::open_live(path, &schema)?;
        let published_sequence = latest
            .and_then(|v| directory::version_info(path, v))
            .and_then(|info| info["sequence"].as_u64());
        let store = Store {
            db,
            schema: Arc::new(schema),
            path: path.to_path_buf(),
            access: Access::Writer(WriterState {
                _lock: lock,
                published: Mutex::new(Published {
                    at: Instant::now(),
                    sequence: published_sequence.unwrap_or(0),
                }),
                inconsistent: AtomicBool::new(false),
            }),
        };
        store.check_layout()?;
        // Whole rows a stage committed before it was stopped are consistent: readers
        // get them now rather than at the end of this run.
        if store.has_unpublished_changes() && latest.is_some() {
            store.publish()?;
        }
        Ok(store)
    }

    /// Opens the newest published version of the store read-only. Never creates
    /// anything, never waits for the writer, and works on a read-only file system.
    pub fn open_reader(path: &Path) -> Result<Store> {
        Store::open_reader_with_schema(path, Schema::embedded()?)
    }

    pub fn open_reader_with_schema(path: &Path, schema: Schema) -> Result<Store> {
        if !directory::is_store(path) {
            return Err(directory::no_store_error(path));
        }
        directory::check_marker(path)?;
        let lease = directory::lease_latest(path)?;
        let existing = DB::list_cf(&Options::default(), &lease.dir).unwrap_or_default();
        let db = DB::open_cf_descriptors_read_only(
            &db_options(),
            &lease.dir,
            cf_descriptors(&schema, &existing),
            false,
        )
        .with_context(|| format!("cannot open {} for reading", lease.dir.display()))?;
        let store = Store {
            db,
            schema: Arc::new(schema),
            path: path.to_path_buf(),
            access: Access::Reader(lease),
        };
        store.check_layout()?;
        Ok(store)
    }

    /// Opens a RocksDB directory directly, creating it if needed, outside any version
    /// management (tests and tools that build scratch stores).
    pub fn open_with_schema(path: &Path, schema: Schema) -> Result<Store> {
        std::fs::create_dir_all(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let db = Store::open_live(path, &schema)?;
        let store = Store {
            db,
            schema: Arc::new(schema),
            path: path.to_path_buf(),
            access: Access::Unmanaged,
        };
        store.check_layout()?;
        Ok(store)
    }

    fn open_live(path: &Path, schema: &Schema) -> Result<DB> {
        let mut db_opts = db_options();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        let existing = DB::list_cf(&db_opts, path).unwrap_or_default();
        DB::open_cf_descriptors(&db_opts, path, cf_descriptors(schema, &existing))
            .with_context(|| format!("cannot open the store at {}", path.display()))
    }

    /// The published version a reader sees (`None` for a writer).
    pub fn version(&self) -> Option<u64> {
        match &self.access {
            Access::Reader(lease) => Some(lease.version),
            _ => None,
        }
    }

    pub fn is_writer(&self) -> bool {
        !matches!(self.access, Access::Reader(_))
    }

    /// Marks the live database as possibly holding a partly applied input, until
    /// [`Store::mark_consistent`]: if the writer stops in between, the next one rolls
    /// back to the newest version. Ingest commands call it before they write an input.
    pub fn mark_inconsistent(&self) -> Result<()> {
        if let Access::Writer(state) = &self.access
            && !state.inconsistent.swap(true, Ordering::SeqCst)
        {
            directory::mark_dirty(&self.path)?;
        }
        Ok(())
    }

    /// Declares the live database consistent again: every input applied so far is
    /// whole and durable (flushed, recorded in the registry).
    pub fn mark_consistent(&self) -> Result<()> {
        if let Access::Writer(state) = &self.access
            && state.inconsistent.swap(false, Ordering::SeqCst)
        {
            directory::clear_dirty(&self.path)?;
        }
        Ok(())
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

    /// Makes everything written so far visible to readers as a new version. Call only
    /// at a consistent point: whole inputs, their captures and their rows.
    pub fn publish(&self) -> Result<Option<u64>> {
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
                "published_ms": writer::now_millis(),
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

    /// Publishes when the last version is older than `interval`: for long runs whose
    /// progress readers should see (a stage that calls a slow service row by row).
    pub fn publish_if_due(&self, interval: Duration) -> Result<()> {
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

    /// Ends a writer's work at a consistent point: publishes what it wrote (when it
    /// wrote anything, or when the store has no version yet). A writer dropped without
    /// `close` in the middle of an input (an error, a crash) leaves the DIRTY marker,
    /// and the next writer rolls back to the newest version.
    pub fn close(self) -> Result<()> {
        if let Access::Writer(_) = &self.access {
            if self.has_unpublished_changes() || directory::latest_version(&self.path).is_none() {
                self.publish()?;
            }
            self.mark_consistent()?;
        }
        Ok(())
    }

    fn check_layout(&self) -> Result<()> {
        let meta = self.cf(CF_META);
        match self.db.get_cf(meta, META_LAYOUT_KEY)? {
            None if self.is_writer() => {
                self.db.put_cf(meta, META_LAYOUT_KEY, LAYOUT_VERSION)?;
                self.db
                    .put_cf(meta, b"schema", crate::schema::EMBEDDED_SCHEMA.as_bytes())?;
            }
            None => {}
            Some(v) if v == LAYOUT_VERSION.as_bytes() => {}
            Some(v) => bail!(
                "the store at {} has layout version {}, this build reads version {LAYOUT_VERSION}: \
                 export it with the build that wrote it and import the JSON lines",
                self.path.display(),
                String::from_utf8_lossy(&v)
            ),
        }
        Ok(())
    }

    pub fn db(&self) -> &DB {
        &self.db
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A column family handle. All families are created on open, so a missing one is a
    /// programming error.
    pub fn cf(&self, name: &str) -> &ColumnFamily {
        self.db
            .cf_handle(name)
            .unwrap_or_else(|| panic!("column family {name} is created on open"))
    }

    pub fn family_cf(&self, family: usize) -> &ColumnFamily {
        self.cf(&self.schema.families[family].name)
    }

    /// Write options for bulk work: no WAL, because every ingest flushes before it
    /// records an input as complete, and a crash before that re-applies the input.
    pub fn bulk_write_options() -> WriteOptions {
        let mut wo = WriteOptions::default();
        wo.disable_wal(true);
        wo
    }

    /// Makes everything written so far durable (memtables to SST files).
    pub fn flush(&self) -> Result<()> {
        let mut names: Vec<&str> = self
            .schema
            .families
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        names.extend([CF_CAPTURE, CF_BY_DIGEST, CF_DIRTY, CF_META, CF_CATALOG]);
        let handles: Vec<&ColumnFamily> = names.iter().map(|n| self.cf(n)).collect();
        self.db
            .flush_cfs_opt(&handles, &rocksdb::FlushOptions::default())?;
        Ok(())
    }

    /// Total size of the files in the store directory: the live database and its
    /// versions, each file counted once although versions share them (hard links).
    pub fn size_on_disk(&self) -> u64 {
        fn walk(dir: &Path, seen: &mut std::collections::HashSet<(u64, u64)>) -> u64 {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return 0;
            };
            let mut total = 0;
            for entry in entries.flatten() {
                let Ok(meta) = entry.path().symlink_metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    total += walk(&entry.path(), seen);
                } else if meta.is_file() && first_sight(&meta, seen) {
                    total += meta.len();
                }
            }
            total
        }
        #[cfg(unix)]
        fn first_sight(
            meta: &std::fs::Metadata,
            seen: &mut std::collections::HashSet<(u64, u64)>,
        ) -> bool {
            use std::os::unix::fs::MetadataExt;
            meta.nlink() < 2 || seen.insert((meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        fn first_sight(
            _: &std::fs::Metadata,
            _: &mut std::collections::HashSet<(u64, u64)>,
        ) -> bool {
            true
        }
        walk(&self.path, &mut Default::default())
    }

    /// Runs a full compaction of every family (drops surplus versions and merged operands).
    pub fn compact(&self) {
        let mut names: Vec<String> = self
            .schema
            .families
            .iter()
            .map(|f| f.name.clone())
            .collect();
        names.extend([CF_CAPTURE, CF_BY_DIGEST, CF_DIRTY, CF_META, CF_CATALOG].map(String::from));
        for name in names {
            self.db
                .compact_range_cf(self.cf(&name), None::<&[u8]>, None::<&[u8]>);
        }
    }
}
