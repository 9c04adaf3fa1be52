//! The store a server reads, replaced by a newer published version while it runs.
//!
//! Requests take an `Arc<Store>` at their start and keep it to their end, so a version
//! that is swapped out stays open until its last request finishes; new requests see the
//! new version at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use anyhow::Result;

use crate::schema::Schema;
use crate::store::{BlockCache, Store};

/// Opens the newest published version of the store for reading, its blocks in `cache`:
/// never blocks the writer, sees whole inputs only.
fn open_newest(path: &Path, cache: &BlockCache) -> Result<Store> {
    Store::open_reader_sharing(path, Schema::embedded()?, cache)
}

/// The newest published version (a directory listing: cheap enough to poll).
pub fn newest_version(path: &Path) -> Option<u64> {
    crate::store::directory::latest_version(path)
}

/// The version a reader has open.
fn version_of(store: &Store) -> Option<u64> {
    store.version()
}

pub struct StoreHandle {
    path: PathBuf,
    current: RwLock<Arc<Store>>,
    reloads: AtomicU64,
    /// Shared by every version opened: a version swapped out while its last requests
    /// finish does not hold a cache of its own beside the new one's.
    cache: BlockCache,
}

impl StoreHandle {
    /// Opens the newest version with a block cache of `block_cache_bytes` that every
    /// version opened later shares.
    pub fn open(path: &Path, block_cache_bytes: usize) -> Result<StoreHandle> {
        let cache = BlockCache::new(block_cache_bytes);
        Ok(StoreHandle {
            path: path.to_path_buf(),
            current: RwLock::new(Arc::new(open_newest(path, &cache)?)),
            reloads: AtomicU64::new(0),
            cache,
        })
    }

    /// Bytes the block cache holds now.
    pub fn block_cache_usage(&self) -> usize {
        self.cache.usage()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store for one request.
    pub fn get(&self) -> Arc<Store> {
        // A poisoned lock only means a reload panicked; the Arc inside is still whole.
        match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn version(&self) -> Option<u64> {
        version_of(&self.get())
    }

    pub fn reloads(&self) -> u64 {
        self.reloads.load(Ordering::Relaxed)
    }

    /// Opens the newest version when it is newer than the one in use. Returns the new
    /// version id when it swapped. Blocking: call from a blocking thread.
    pub fn refresh(&self) -> Result<Option<u64>> {
        let Some(newest) = newest_version(&self.path) else {
            return Ok(None);
        };
        if self.version() == Some(newest) {
            return Ok(None);
        }
        let store = Arc::new(open_newest(&self.path, &self.cache)?);
        let opened = version_of(&store);
        match self.current.write() {
            Ok(mut guard) => *guard = store,
            Err(poisoned) => *poisoned.into_inner() = store,
        }
        self.reloads.fetch_add(1, Ordering::Relaxed);
        Ok(opened)
    }
}
