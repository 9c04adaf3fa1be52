//! Deriving the file rows of dirty digests, by the one writer or under a lease.

use anyhow::Result;

use super::Store;
use super::captures::{MaterializeStats, materialize_exclusive};

/// Recomputes the file rows of every dirty digest and clears the marks.
///
/// With one writer (RocksDB) marks are removed in the same batch that writes their rows,
/// so an interruption leaves them for the next run. On a shared backend (Bigtable, where
/// several processes import into one table), derivation runs under a lease, one process
/// at a time, and a mark is only removed if nobody re-marked the digest meanwhile (a
/// conditional delete); each writer loops until its own marks are gone. A row derived
/// later always carries a later timestamp (the lease keeps the last one used), so a slow
/// deriver can never bury a newer row under an older one.
pub fn materialize_dirty(store: &Store, ts: u64) -> Result<MaterializeStats> {
    if store.backend().exclusive_writer() {
        materialize_exclusive(store, ts)
    } else {
        super::lease::materialize_shared(store, ts)
    }
}
