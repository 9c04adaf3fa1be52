//! The store: the `files` table (one row per payload, keyed by its SHA-1) and the key
//! spaces beside it (captures in URL order and by digest, the work list of rows to
//! derive, metadata, the catalog).
//!
//! Where the bytes live is a [`Backend`]: an embedded RocksDB directory
//! ([`rocks::RocksBackend`], the default) or a Cloud Bigtable table and its companion
//! tables ([`bigtable::BigtableBackend`], `--store bigtable://PROJECT/INSTANCE/TABLE`).
//! Everything in this module and above it is written once against the backend trait.
//!
//! A store is shared the way an HBase table is: one writer at a time
//! ([`Store::open_writer`]), any number of readers ([`Store::open_reader`]). On RocksDB
//! readers open the newest *published version*, a checkpoint the writer makes at
//! consistent points (see [`directory`]); Bigtable writes are visible at once, row by row,
//! and several writers may share a table (see [`materialize::materialize_dirty`]).

pub mod backend;
#[cfg(feature = "bigtable")]
pub mod bigtable;
pub mod bulk;
pub mod bulk_cells;
pub mod captures;
pub mod cells;
mod clock;
pub mod directory;
pub mod keys;
pub mod lease;
pub mod locations;
pub mod materialize;
pub mod registry;
pub mod rocks;
pub mod sst;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

pub use backend::{Backend, Space};
pub use rocks::{BlockCache, RocksBackend};

use crate::schema::Schema;

/// The names of the key spaces as RocksDB column families (and Bigtable table suffixes).
pub const CF_CAPTURE: &str = "capture";
pub const CF_BY_DIGEST: &str = "capture_by_digest";

/// Bumped when the on-disk layout changes; a store written by another layout is refused.
pub const LAYOUT_VERSION: &str = "2";
const META_LAYOUT_KEY: &[u8] = b"layout_version";

/// How often a long-running writer makes its progress visible (see
/// [`Store::publish_if_due`]).
pub const PUBLISH_INTERVAL: Duration = Duration::from_secs(2);

/// How a writer identifies itself and waits for another one.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The command, named to a second writer that finds the store busy.
    pub command: String,
    /// Queue behind another writer instead of failing.
    pub wait: bool,
    /// Whether to create the store when the directory is new or empty.
    pub create: Create,
}

/// When a writer creates a store. Only commands that bring content (imports) create
/// stores; the others refuse a path without a store, so that a mistyped `--store` creates
/// nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// Never: a path without a store is an error.
    Never,
    /// When there is none, but a store the run leaves empty is removed at its end
    /// (whether it ends well or not): a run with nothing to write leaves no store.
    IfWritten,
    /// When there is none (the library's [`Store::open`]).
    Always,
}

impl WriterOptions {
    /// A writer of an existing store.
    pub fn new(command: &str) -> WriterOptions {
        WriterOptions {
            command: command.to_string(),
            wait: false,
            create: Create::Never,
        }
    }

    /// A writer that creates the store if there is none yet, and keeps it if it writes.
    pub fn creating(command: &str) -> WriterOptions {
        WriterOptions {
            create: Create::IfWritten,
            ..WriterOptions::new(command)
        }
    }
}

/// Whether `path` names a shared store (`bigtable://…`) rather than a directory.
pub fn is_shared_address(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with("bigtable://"))
}

/// The Bigtable backend of a `bigtable://` address; `None` for a directory.
#[cfg(feature = "bigtable")]
fn shared_backend(path: &Path, schema: &Schema, writer: bool) -> Result<Option<Box<dyn Backend>>> {
    Ok(match bigtable::Address::parse(path)? {
        Some(address) => Some(Box::new(bigtable::BigtableBackend::open(
            &address, schema, writer,
        )?)),
        None => None,
    })
}

/// Without the Bigtable backend a `bigtable://` address is refused, saying why.
#[cfg(not(feature = "bigtable"))]
fn shared_backend(path: &Path, _: &Schema, _: bool) -> Result<Option<Box<dyn Backend>>> {
    if is_shared_address(path) {
        bail!(
            "{}: this build of sediment has no Bigtable backend (it was built without the \
             `bigtable` feature)",
            path.display()
        );
    }
    Ok(None)
}

/// A store opened by this process.
pub struct Store {
    backend: Box<dyn Backend>,
    schema: Arc<Schema>,
    /// The store as given (`--store`): a directory, or a `bigtable://` address.
    path: PathBuf,
    writer: bool,
    /// What the writers of this process share about the rows they derive as they write
    /// the captures of digests new to the store ([`writer::Writer`]). `None` where
    /// writers mark every digest instead (a shared backend).
    rows_at_write: Option<std::sync::Mutex<writer::RowsAtWrite>>,
}

impl Store {
    /// Opens the store at `path` as its writer (creating it if needed), with the
    /// embedded schema. See [`Store::open_writer`].
    pub fn open(path: &Path) -> Result<Store> {
        let options = WriterOptions {
            create: Create::Always,
            ..WriterOptions::new("library")
        };
        Store::open_writer(path, &options)
    }

    /// Opens the store as a writer: on RocksDB the one writer, under the writer lock
    /// (explaining who holds it, or waiting with `wait`), creating the store if the
    /// directory is new or empty and rolling back what a writer that stopped in the
    /// middle of an input left behind. What the writer changes becomes visible to
    /// readers at [`Store::publish`] and [`Store::close`].
    pub fn open_writer(path: &Path, options: &WriterOptions) -> Result<Store> {
        Store::open_writer_with_schema(path, options, Schema::embedded()?)
    }

    pub fn open_writer_with_schema(
        path: &Path,
        options: &WriterOptions,
        schema: Schema,
    ) -> Result<Store> {
        let backend: Box<dyn Backend> = match shared_backend(path, &schema, true)? {
            Some(backend) => backend,
            None => Box::new(RocksBackend::open_writer(path, &schema, options)?),
        };
        let store = Store::new(backend, schema, path, true);
        store.check_layout()?;
        // Whole rows a stage committed before it was stopped are consistent: readers
        // get them now rather than at the end of this run.
        if let Some(rocks) = store.backend.as_rocks() {
            rocks.publish_leftovers()?;
        }
        Ok(store)
    }

    /// Opens the store for reading: on RocksDB the newest published version,
    /// read-only. Never creates anything, never waits for the writer, and works on a
    /// read-only file system.
    pub fn open_reader(path: &Path) -> Result<Store> {
        Store::open_reader_with_schema(path, Schema::embedded()?)
    }

    pub fn open_reader_with_schema(path: &Path, schema: Schema) -> Result<Store> {
        Store::open_reader_with(path, schema, rocks::WRITER_BLOCK_CACHE)
    }

    /// Opens the store for reading with a block cache of at most `block_cache_bytes`
    /// (RocksDB): commands that bound their memory (`--memory-mb`) give it their share.
    pub fn open_reader_with(
        path: &Path,
        schema: Schema,
        block_cache_bytes: usize,
    ) -> Result<Store> {
        Store::open_reader_sharing(path, schema, &BlockCache::new(block_cache_bytes))
    }

    /// Opens the store for reading with its blocks cached in `cache` (RocksDB), which
    /// other readers may share: a server keeps one for every version it opens.
    pub fn open_reader_sharing(path: &Path, schema: Schema, cache: &BlockCache) -> Result<Store> {
        let backend: Box<dyn Backend> = match shared_backend(path, &schema, false)? {
            Some(backend) => backend,
            None => Box::new(RocksBackend::open_reader(path, &schema, cache)?),
        };
        let store = Store::new(backend, schema, path, false);
        store.check_layout()?;
        Ok(store)
    }

    /// Opens a RocksDB directory directly, creating it if needed, outside any version
    /// management (tests and tools that build scratch stores).
    pub fn open_with_schema(path: &Path, schema: Schema) -> Result<Store> {
        let backend = Box::new(RocksBackend::open_unmanaged(path, &schema)?);
        let store = Store::new(backend, schema, path, true);
        store.check_layout()?;
        Ok(store)
    }

    fn new(backend: Box<dyn Backend>, schema: Schema, path: &Path, writer: bool) -> Store {
        // Only the one writer of a RocksDB store may take a digest the store lacks as new:
        // another process could be writing the same digest.
        let rows_at_write = (backend.exclusive_writer() && backend.as_rocks().is_some())
            .then(|| std::sync::Mutex::new(writer::RowsAtWrite::default()));
        Store {
            backend,
            schema: Arc::new(schema),
            path: path.to_path_buf(),
            writer,
            rows_at_write,
        }
    }

    /// See the field: `None` where writers mark every digest.
    pub(crate) fn rows_at_write(&self) -> Option<&std::sync::Mutex<writer::RowsAtWrite>> {
        self.rows_at_write.as_ref()
    }

    fn check_layout(&self) -> Result<()> {
        match self.backend.get(Space::Meta, META_LAYOUT_KEY)? {
            None if self.writer => {
                let mut batch = backend::Batch::default();
                batch.push(backend::Op::Put {
                    space: Space::Meta,
                    key: META_LAYOUT_KEY.to_vec(),
                    value: LAYOUT_VERSION.as_bytes().to_vec(),
                });
                batch.push(backend::Op::Put {
                    space: Space::Meta,
                    key: b"schema".to_vec(),
                    value: crate::schema::EMBEDDED_SCHEMA.as_bytes().to_vec(),
                });
                self.backend.write(&batch)?;
            }
            None => {}
            Some(v) if v == LAYOUT_VERSION.as_bytes() => {}
            Some(v) => bail!(
                "the store at {} has layout version {}, this build reads version {LAYOUT_VERSION}: \
                 export it with the build that wrote it and import the JSON lines",
                self.backend.describe(),
                String::from_utf8_lossy(&v)
            ),
        }
        Ok(())
    }

    /// Where the bytes live.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The embedded RocksDB backend, or an error naming what needs it.
    pub fn rocks(&self, what: &str) -> Result<&RocksBackend> {
        match self.backend.as_rocks() {
            Some(rocks) => Ok(rocks),
            None => bail!(
                "{what} works on the embedded RocksDB store only, not on {}",
                self.backend.describe()
            ),
        }
    }

    /// Whether this is an embedded RocksDB store without captures or file rows: what a
    /// bulk load may write into without reading anything back (see
    /// [`crate::ingest::input_sink`]).
    pub fn holds_no_captures(&self) -> bool {
        self.backend.as_rocks().is_some_and(|rocks| {
            bulk::BULK_FAMILIES
                .iter()
                .all(|cf| rocks.space_is_empty(cf))
        })
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The store as given on the command line.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store, for messages.
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// The published version a reader sees (`None` for a writer, or on Bigtable).
    pub fn version(&self) -> Option<u64> {
        self.backend.version()
    }

    pub fn is_writer(&self) -> bool {
        self.writer
    }

    /// Marks the store as possibly holding a partly applied input, until
    /// [`Store::mark_consistent`]: on RocksDB, if the writer stops in between, the next
    /// one rolls back to the newest version. Ingest commands call it before they write
    /// an input.
    pub fn mark_inconsistent(&self) -> Result<()> {
        self.backend.mark_inconsistent()
    }

    /// Declares every input applied so far whole and durable (flushed, recorded).
    pub fn mark_consistent(&self) -> Result<()> {
        self.backend.mark_consistent()
    }

    /// Makes everything written so far visible to readers as a new version. Call only
    /// at a consistent point: whole inputs, their captures and their rows.
    pub fn publish(&self) -> Result<Option<u64>> {
        self.backend.publish()
    }

    /// Publishes when the last version is older than `interval`: for long runs whose
    /// progress readers should see (a stage that calls a slow service row by row).
    pub fn publish_if_due(&self, interval: Duration) -> Result<()> {
        self.backend.publish_if_due(interval)
    }

    /// Ends a writer's work at a consistent point: publishes what it wrote. A writer
    /// dropped without `close` in the middle of an input (an error, a crash) leaves the
    /// RocksDB store marked, and the next writer rolls back to the newest version.
    pub fn close(self) -> Result<()> {
        if self.writer {
            self.backend.close()?;
        }
        Ok(())
    }

    /// Makes everything written so far durable.
    pub fn flush(&self) -> Result<()> {
        self.backend.flush()
    }

    /// Bytes the store takes on disk (0 where the backend cannot tell): the live
    /// database and its versions, each file counted once although versions share them.
    pub fn size_on_disk(&self) -> u64 {
        self.backend.size_on_disk().unwrap_or(0)
    }

    /// Runs a full compaction of every family (RocksDB; a no-op elsewhere).
    pub fn compact(&self) {
        if let Some(rocks) = self.backend.as_rocks() {
            rocks.compact();
        }
    }

    /// Counts raw stored versions of every cell of a family (tests of the version cap).
    pub fn raw_version_count(&self, family: usize) -> usize {
        self.backend
            .as_rocks()
            .map_or(0, |rocks| rocks.raw_version_count(family))
    }

    /// Applies a batch of changes.
    pub fn write(&self, batch: &backend::Batch) -> Result<()> {
        self.backend.write(batch)
    }

    /// A value of a key space.
    pub fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.backend.get(space, key)
    }

    /// Keys and values of a key space under a prefix, in order; `visit` returns false
    /// to stop.
    pub fn scan_prefix(
        &self,
        space: Space,
        prefix: &[u8],
        visit: &mut backend::KeyVisitor<'_>,
    ) -> Result<()> {
        let end = backend::prefix_end(prefix);
        self.backend.scan(space, prefix, end.as_deref(), visit)
    }

    /// For many [`Store::scan_prefix`] calls on one space with ascending prefixes (the
    /// dirty digests of a derivation, in key order): the embedded backend keeps one
    /// iterator and steps forward to each prefix instead of opening one per prefix, which
    /// was most of the cost of deriving a backfill's file rows. A prefix smaller than the
    /// one before still gets its keys (the iterator seeks back).
    pub fn prefix_scanner(&self, space: Space) -> PrefixScanner<'_> {
        let rocks = self.backend.as_rocks();
        PrefixScanner {
            store: self,
            space,
            iter: rocks.map(|rocks| rocks.forward_iterator(space)),
            // Made now, with the forward iterator, so that both see the same writes.
            lookup: rocks
                .filter(|_| space == Space::ByDigest)
                .map(|rocks| rocks.lookup_iterator(space)),
            last: Vec::new(),
        }
    }
}

/// See [`Store::prefix_scanner`].
pub struct PrefixScanner<'s> {
    store: &'s Store,
    space: Space,
    iter: Option<rocksdb::DBRawIterator<'s>>,
    /// For `capture_by_digest`: seeks to one digest that skip the files whose filter lacks
    /// it (sparse digests in a big store: an incremental load, issue 36).
    lookup: Option<rocksdb::DBRawIterator<'s>>,
    /// The prefix scanned last: where the iterator stands is just past its keys.
    last: Vec<u8>,
}

impl PrefixScanner<'_> {
    /// Steps taken with `next` before a seek is cheaper (dense prefixes, as in a fresh
    /// backfill where nearly every digest is dirty, are a few steps apart).
    const STEPS_BEFORE_SEEK: usize = 8;

    /// Keys and values under `prefix`, in order; `visit` returns false to stop.
    pub fn scan_prefix(
        &mut self,
        prefix: &[u8],
        visit: &mut backend::KeyVisitor<'_>,
    ) -> Result<()> {
        // One digest at a time: a seek that skips the files whose filter lacks it. Stepping
        // the forward iterator instead would read a block of every level's file between
        // two digests, which in a big store are far apart and not cached.
        if prefix.len() == crate::key::Sha1Key::LEN
            && let Some(lookup) = &mut self.lookup
        {
            lookup.seek(prefix);
            while let (Some(key), Some(value)) = (lookup.key(), lookup.value()) {
                if !key.starts_with(prefix) || !visit(key, value)? {
                    break;
                }
                lookup.next();
            }
            lookup.status()?;
            return Ok(());
        }
        let Some(iter) = &mut self.iter else {
            return self.store.scan_prefix(self.space, prefix, visit);
        };
        // The iterator stands at or before every key of a prefix that sorts after the last
        // one, unless it extends the last one (its keys were passed with the last ones').
        let ascending = !self.last.is_empty()
            && prefix > self.last.as_slice()
            && !prefix.starts_with(&self.last);
        let mut positioned = false;
        if ascending {
            for _ in 0..Self::STEPS_BEFORE_SEEK {
                match iter.key() {
                    Some(key) if key < prefix => iter.next(),
                    // At or after this prefix (no key lies between the last prefix and
                    // where the iterator stands), or at the end of the space.
                    _ => {
                        positioned = true;
                        break;
                    }
                }
            }
        }
        self.last.clear();
        self.last.extend_from_slice(prefix);
        if !positioned {
            iter.seek(prefix);
        }
        while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
            if !key.starts_with(prefix) || !visit(key, value)? {
                break;
            }
            iter.next();
        }
        iter.status()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::backend::{Batch, Op};
    use super::*;

    /// A prefix scanner gives what one scan per prefix gives, for prefixes in order (near
    /// and far apart), out of order, absent, past the end, and after a visit that stopped.
    #[test]
    fn prefix_scanner_matches_one_scan_per_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s")).unwrap();
        let mut batch = Batch::default();
        for p in (0u8..200).filter(|p| p % 3 != 0) {
            for k in 0..(p % 4) {
                batch.push(Op::Put {
                    space: Space::Dirty,
                    key: vec![p, k],
                    value: vec![p ^ k],
                });
            }
        }
        store.write(&batch).unwrap();
        let collect = |scan: &mut dyn FnMut(&mut backend::KeyVisitor<'_>)| {
            let mut got = Vec::new();
            scan(&mut |k, v| {
                got.push((k.to_vec(), v.to_vec()));
                Ok(true)
            });
            got
        };
        let mut scanner = store.prefix_scanner(Space::Dirty);
        let prefixes: Vec<u8> = (0..200)
            .chain([5, 6, 7, 180, 181, 250, 1, 2])
            .chain((0..200).step_by(17))
            .collect();
        for p in prefixes {
            let want = collect(&mut |v| store.scan_prefix(Space::Dirty, &[p], v).unwrap());
            let got = collect(&mut |v| scanner.scan_prefix(&[p], v).unwrap());
            assert_eq!(got, want, "prefix {p}");
        }
        // A visit that stops leaves the iterator inside a prefix's keys.
        let mut first = Vec::new();
        scanner
            .scan_prefix(&[7], &mut |k, _| {
                first.push(k.to_vec());
                Ok(false)
            })
            .unwrap();
        assert_eq!(first, vec![vec![7, 0]]);
        let want = collect(&mut |v| store.scan_prefix(Space::Dirty, &[8], v).unwrap());
        assert_eq!(
            collect(&mut |v| scanner.scan_prefix(&[8], v).unwrap()),
            want
        );
        // A prefix that extends the last one: its keys lie behind the iterator.
        assert_eq!(
            collect(&mut |v| scanner.scan_prefix(&[10], v).unwrap()).len(),
            2
        );
        let got = collect(&mut |v| scanner.scan_prefix(&[10, 1], v).unwrap());
        assert_eq!(got, vec![(vec![10, 1], vec![10 ^ 1])]);
    }
}
