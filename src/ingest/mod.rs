//! The ingest pipeline shared by `backfill-cdx` and `import-warc`:
//! plan inputs → apply each (in parallel) through the write path → derive file rows for
//! the touched digests → make it durable → record the inputs as complete. A WARC import's
//! wave that starts on an empty store loads its captures through SST files instead, rows
//! derived as they are written ([`input_sink`]).
//!
//! A long run commits in waves: inputs are started until the commit interval has passed,
//! the ones started are finished, their rows derived, the inputs recorded and a version
//! published; readers (`sediment serve`) see the inputs of a wave as soon as it ends.
//! Inputs are recorded only once everything they wrote is durable, so a run stopped at
//! any point is completed by running it again; the write path is idempotent, so nothing
//! is counted twice.

pub mod cdx;
pub mod cdx_files;
pub mod follow;
pub mod input_sink;
pub mod jsonl_files;
pub mod rows;
pub mod warc;
pub mod warc_files;

// The sink of the parsers lives with the WARC importer, its main user (and the WarcInfo
// it carries), so that this module and `warc` do not import each other.
pub use warc::CaptureSink;

use std::collections::HashSet;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rayon::prelude::*;

pub use input_sink::InputSink;

use crate::input::{PlannedInput, record_done};
use crate::report::Report;
use crate::store::Store;
use crate::store::bulk::{BulkLoader, BulkStats, default_memory_limit};
use crate::store::captures::MaterializeStats;
use crate::store::materialize::materialize_dirty;
use crate::store::writer::{Writer, now_millis};

/// What one input produced, for the report and the registry.
pub type InputSummary = serde_json::Value;

pub struct IngestRun<'s> {
    pub store: &'s Store,
    pub report: &'s Report,
    pub command: &'static str,
    /// Options that change what an input writes (part of its registry identity).
    pub options: String,
    pub ts: u64,
    /// How long a wave of inputs may start new inputs before it is committed.
    pub commit_interval: Duration,
    /// Whether a wave that starts on an empty RocksDB store loads its captures through
    /// SST files (see [`input_sink`]).
    pub bulk_into_empty: bool,
    completed_sizes: OnceLock<HashSet<u64>>,
}

impl<'s> IngestRun<'s> {
    pub fn new(
        store: &'s Store,
        report: &'s Report,
        command: &'static str,
        options: String,
    ) -> Self {
        IngestRun {
            store,
            report,
            command,
            options,
            ts: now_millis(),
            commit_interval: DEFAULT_COMMIT_INTERVAL,
            bulk_into_empty: false,
            completed_sizes: OnceLock::new(),
        }
    }

    /// Sizes of the inputs this command completed with these options (read once per run).
    fn completed_sizes(&self) -> Result<&HashSet<u64>> {
        if let Some(sizes) = self.completed_sizes.get() {
            return Ok(sizes);
        }
        let sizes = self
            .store
            .inputs()?
            .into_iter()
            .filter(|r| r.command == self.command && r.options == self.options)
            .map(|r| r.size)
            .collect();
        Ok(self.completed_sizes.get_or_init(|| sizes))
    }

    /// Whether an input must be applied: an input ingested before with the same options
    /// is skipped (and said so) unless `force`. Only an input whose size equals that of a
    /// completed one can be one, so only those are hashed first; the others are hashed
    /// while they are read (`PlannedInput::hashing`), which saves a pass over every new file.
    pub fn should_apply(&self, input: &PlannedInput, force: bool) -> Result<bool> {
        let unseen_size = match input.size {
            Some(size) => !self.completed_sizes()?.contains(&size),
            None => false,
        };
        let new = force
            || unseen_size
            || input
                .done_before(self.store, self.command, &self.options)?
                .is_none();
        if new {
            self.store.mark_inconsistent()?;
            return Ok(true);
        }
        input.announce_skipped(
            self.report,
            "already ingested with the same options, skipped (use --force to apply again)",
        );
        if let Some(size) = input.size {
            self.report.progress().inc(size);
        }
        Ok(false)
    }

    /// Applies every input with `apply_one` on a pool of `threads` workers, each with its
    /// own sink; then derives file rows, flushes and records the inputs.
    pub fn apply<F>(
        &self,
        inputs: Vec<PlannedInput>,
        threads: usize,
        force: bool,
        apply_one: F,
    ) -> Result<MaterializeStats>
    where
        F: for<'w> Fn(&PlannedInput, &mut InputSink<'w, 's>) -> Result<InputSummary> + Sync,
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .context("cannot start worker threads")?;
        let mut inputs = inputs.into_iter();
        let mut total = MaterializeStats::default();
        loop {
            let wave = Wave::new(self.commit_interval);
            let bulk = match self.bulk_into_empty && self.store.holds_no_captures() {
                true => Some(BulkLoader::new(
                    self.store,
                    self.ts,
                    default_memory_limit(),
                    threads,
                )?),
                false => None,
            };
            let summaries: Vec<(PlannedInput, InputSummary)> = pool.install(|| {
                std::iter::from_fn(|| wave.next(&mut inputs))
                    .par_bridge()
                    .map(|input| {
                        if !self.should_apply(&input, force)? {
                            return Ok(None);
                        }
                        // Sorted: a WARC's captures come in crawl order and their digest
                        // keys in random order; RocksDB's memtable takes keys in order
                        // several times faster.
                        let writer = Writer::sorted(self.store, self.ts);
                        let mut sink = InputSink::new(writer, bulk.as_ref());
                        let summary = apply_one(&input, &mut sink)
                            .with_context(|| format!("while reading {}", input.display()))?;
                        sink.finish()?;
                        Ok(Some((input, summary)))
                    })
                    .filter_map(Result::transpose)
                    .collect::<Result<_>>()
            })?;
            if let Some(loader) = bulk {
                self.report
                    .progress()
                    .set_message("writing and ingesting SST files");
                // On as many threads as the run's (`--threads 1` loads on one thread too).
                let stats = loader.finish()?;
                self.count_bulk(&stats);
                total.add(&stats.rows);
            }
            let stats = self.finish(&summaries)?;
            total.add(&stats);
            if wave.started() == 0 {
                return Ok(total);
            }
            self.store.publish()?;
        }
    }

    /// Counts what a bulk load of the run wrote.
    pub fn count_bulk(&self, stats: &BulkStats) {
        self.report.count("rows_written", stats.rows.rows);
        self.report.count("duplicates", stats.rows.duplicates);
        self.report.count("sst_files", stats.sst_files);
    }

    /// Ends a run whose inputs were all applied: derives the file rows of the touched
    /// digests, makes everything durable, then records each input as complete.
    pub fn finish<I: std::borrow::Borrow<PlannedInput>>(
        &self,
        applied: &[(I, InputSummary)],
    ) -> Result<MaterializeStats> {
        self.report.progress().set_message("deriving file rows");
        let stats = materialize_dirty(self.store, self.ts)?;
        self.store.flush()?;
        for (input, summary) in applied {
            record_done(
                self.store,
                self.command,
                &self.options,
                input.borrow(),
                summary.clone(),
            )?;
        }
        self.store.mark_consistent()?;
        self.report.count("inputs", applied.len() as u64);
        self.report.count("rows_written", stats.rows);
        self.report.count("duplicates", stats.duplicates);
        Ok(stats)
    }
}

/// How long a run starts new inputs before it commits what it started (see the module
/// documentation); `--commit-every` changes it.
pub const DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_secs(10);

/// One wave of a run: it admits inputs until its interval has passed (always at least
/// one), then the inputs it admitted are finished and committed together.
pub struct Wave {
    deadline: Instant,
    started: AtomicUsize,
}

impl Wave {
    pub fn new(interval: Duration) -> Wave {
        Wave {
            deadline: Instant::now() + interval,
            started: AtomicUsize::new(0),
        }
    }

    /// The next item of `items` if another may start in this wave.
    pub fn next<T>(&self, items: &mut impl Iterator<Item = T>) -> Option<T> {
        let open = self.started.load(Ordering::SeqCst) == 0 || Instant::now() < self.deadline;
        let item = if open { items.next() } else { None };
        if item.is_some() {
            self.started.fetch_add(1, Ordering::SeqCst);
        }
        item
    }

    /// Items started in this wave (none: the items are all done).
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
}

/// Worker threads: `--threads`, else the number of cores.
pub fn thread_count(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}
