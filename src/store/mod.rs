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
//! directory records it per family.

pub mod bulk;
pub mod captures;
pub mod cells;
pub mod registry;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
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
}

fn base_cf_options(cache: &Cache) -> Options {
    let mut opts = Options::default();
    opts.set_compression_type(DBCompressionType::Snappy);
    opts.set_bottommost_compression_type(DBCompressionType::Snappy);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    table.set_block_size(16 * 1024);
    table.set_bloom_filter(10.0, false);
    opts.set_block_based_table_factory(&table);
    opts.set_write_buffer_size(64 << 20);
    opts.set_max_write_buffer_number(4);
    opts.set_target_file_size_base(64 << 20);
    opts
}

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

impl Store {
    /// Opens (creating if needed) the store at `path` with the embedded schema.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with_schema(path, Schema::embedded()?)
    }

    pub fn open_with_schema(path: &Path, schema: Schema) -> Result<Store> {
        let cache = Cache::new_lru_cache(256 << 20);
        let mut db_opts = Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        db_opts.increase_parallelism(threads as i32);
        db_opts.set_max_background_jobs(threads.max(2) as i32);
        db_opts.set_keep_log_file_num(5);
        db_opts.set_max_open_files(512);
        db_opts.set_compression_type(DBCompressionType::Snappy);

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
        // Families a newer build created must still be opened.
        if let Ok(existing) = DB::list_cf(&db_opts, path) {
            for name in existing {
                if !descriptors.iter().any(|d| d.name() == name) {
                    descriptors.push(ColumnFamilyDescriptor::new(name, base_cf_options(&cache)));
                }
            }
        }
        let db = DB::open_cf_descriptors(&db_opts, path, descriptors)
            .with_context(|| format!("cannot open the store at {}", path.display()))?;
        let store = Store {
            db,
            schema: Arc::new(schema),
            path: path.to_path_buf(),
        };
        store.check_layout()?;
        Ok(store)
    }

    fn check_layout(&self) -> Result<()> {
        let meta = self.cf(CF_META);
        match self.db.get_cf(meta, META_LAYOUT_KEY)? {
            None => {
                self.db.put_cf(meta, META_LAYOUT_KEY, LAYOUT_VERSION)?;
                self.db
                    .put_cf(meta, b"schema", crate::schema::EMBEDDED_SCHEMA.as_bytes())?;
            }
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

    /// Total size of the files in the store directory.
    pub fn size_on_disk(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return 0;
            };
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.path)
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
