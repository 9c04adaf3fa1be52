//! How much memory a projection may use, and what that buys: every cache a projection keeps
//! (ids of URLs and tokens, analysed pages, the SQLite page cache) is sized from one budget,
//! `--memory-mb`, so memory is bounded by the setting, never by the size of the archive.
//! The caches only save work: a smaller budget gives the same database, more slowly.

/// The default budget (MiB). Small on purpose: a projection's memory should not depend on
/// the archive, and caches a small store never fills would make it so. Measured
/// (BENCHMARKS.md, issue 18): at 64 MiB the projections of 3 M-capture stores and of an
/// HTML crawl take the time they take at 512 MiB; a budget helps only where lookups repeat
/// far apart (many captures of the same URLs across a large store).
pub const DEFAULT_MEMORY_MB: usize = 64;

/// Cache sizes derived from a memory budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    pub mb: usize,
}

/// What one cached id costs, key text and hash-map slot together (bytes, a generous mean).
const ID_ENTRY_BYTES: usize = 160;

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget {
            mb: DEFAULT_MEMORY_MB,
        }
    }
}

impl MemoryBudget {
    pub fn new(mb: usize) -> MemoryBudget {
        MemoryBudget { mb: mb.max(1) }
    }

    /// What the caches share: seven eighths of the budget. The rest is for what no cache
    /// accounts for (the allocator's slack, RocksDB's and SQLite's own structures, the
    /// program): with the caches full — a 3 M-capture store — `project crawl` peaked at
    /// the whole budget when the caches had all of it.
    pub fn bytes(&self) -> usize {
        self.mb.saturating_mul(1 << 20) / 8 * 7
    }

    /// The store's block cache of a projection that reads with this budget: an eighth
    /// (the capture scan does not fill it; body lookups by digest do).
    pub fn block_cache_bytes(&self) -> usize {
        (self.bytes() / 8).max(4 << 20)
    }

    /// Bytes buffered by each external sort before it spills a sorted run: a
    /// thirty-second, as the word indexes keep several sorts filling at once.
    pub fn sort_run_bytes(&self) -> usize {
        (self.bytes() / 32).max(64 << 10)
    }

    /// SQLite's page cache, in KiB (for `PRAGMA cache_size = -N`): an eighth.
    pub fn sqlite_cache_kib(&self) -> usize {
        (self.bytes() / 8 / 1024).max(256)
    }

    /// Entries of each id cache (URLs, origins, media types, tokens): an eighth each.
    pub fn id_cache_entries(&self) -> usize {
        (self.bytes() / 8 / ID_ENTRY_BYTES).max(64)
    }

    /// Small fixed-size entries (url ids of crawl candidates, digests): a sixteenth.
    pub fn small_entries(&self) -> usize {
        (self.bytes() / 16 / 48).max(64)
    }

    /// Entries of the maps kept by payload digest with a small value (the originals of
    /// revisits, the payloads found unreadable): digest, value and the map's slot cost
    /// about 128 bytes each (measured): a sixteenth.
    pub fn digest_entries(&self) -> usize {
        (self.bytes() / 16 / 128).max(64)
    }

    /// Captures read ahead so that their revisits' originals are looked up in one ordered
    /// pass, and the crawl projection's default transaction: a sixteenth of the budget, at
    /// about 512 bytes a capture. (Each commit rewrites the index pages its random-keyed
    /// inserts dirtied, so fewer, larger transactions write far less.)
    pub fn prefetch_captures(&self) -> usize {
        (self.bytes() / 16 / 512).max(1024)
    }

    /// Bytes of analysed pages kept for later captures of the same payload: a quarter.
    pub fn page_cache_bytes(&self) -> usize {
        (self.bytes() / 4).max(1 << 20)
    }

    /// Analyses kept by count (their size is bounded by the body limit): about 64 KiB each
    /// within a quarter of the budget.
    pub fn analyses(&self) -> usize {
        (self.bytes() / 4 / (64 << 10)).max(16)
    }

    /// The pragmas that bound SQLite's own memory: its page cache, and temporary tables and
    /// sorts on disk rather than in memory.
    pub fn sqlite_pragmas(&self) -> String {
        format!(
            "PRAGMA cache_size = -{}; PRAGMA temp_store = FILE; PRAGMA wal_autocheckpoint = 16384;",
            self.sqlite_cache_kib()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_grow_with_the_budget_and_never_vanish() {
        let small = MemoryBudget::new(1);
        let default = MemoryBudget::default();
        assert!(small.id_cache_entries() >= 64 && small.analyses() >= 16);
        let large = MemoryBudget::new(512);
        assert!(large.id_cache_entries() > 100 * small.id_cache_entries());
        assert!(default.id_cache_entries() < large.id_cache_entries());
        assert_eq!(default.sqlite_cache_kib(), 7168);
        assert_eq!(MemoryBudget::new(0), MemoryBudget::new(1));
    }
}
