//! Backfilling CDX files: the inputs planned, then cut into chunks of whole lines that a
//! thread pool parses and writes (batched, or through SST files in a bulk load). What
//! `sediment backfill-cdx` and the library's `Store::import_cdx` run.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::filter::FileFilter;
use crate::ingest::cdx::{CdxChunk, CdxChunks, parse_chunk};
use crate::ingest::{IngestRun, Wave, thread_count};
use crate::input::{
    InputKind, PlannedInput, open_raw, plan_inputs, refuse_kind, report_cut_short, report_empty,
};
use crate::report::{Counts, Location, Report, StrictStop};
use crate::store::Store;
use crate::store::bulk::BulkLoader;
use crate::store::writer::Writer;

const COMMAND: &str = "backfill-cdx";

/// How CDX files are backfilled.
pub struct CdxBackfill {
    /// Which captures locate file rows.
    pub filter: FileFilter,
    /// Worker threads (default: one per core).
    pub threads: Option<usize>,
    /// Apply inputs the store has already ingested.
    pub force: bool,
    /// Commit after inputs started within this time are done.
    pub commit_every: Duration,
    /// Bulk load through SST files with batches of this many bytes (RocksDB).
    pub bulk_memory: Option<usize>,
    /// The process ends soon after the backfill: the last bulk batch's memory is left for
    /// its exit to give back ([`BulkLoader::finish_before_exit`]).
    pub exit_after: bool,
}

/// The CDX files among `paths`, wrong kinds refused.
pub fn plan_cdx(paths: &[PathBuf], report: &Report) -> Result<Vec<PlannedInput>> {
    let mut inputs = plan_inputs(paths, |_| true, report)?;
    refuse_kind(&mut inputs, InputKind::Warc, report)?;
    Ok(inputs)
}

/// Ingests `inputs` into the open `store`, through SST files when `bulk_memory` is set.
pub fn backfill_cdx(
    store: &Store,
    inputs: &[PlannedInput],
    options: &CdxBackfill,
    report: &Report,
) -> Result<()> {
    let filter = &options.filter;
    let bulk_memory = options.bulk_memory;
    if let Some(memory) = bulk_memory {
        // The memory limit of a bulk load, for a check of its peak resident memory.
        report.count("bulk_memory_mb", (memory >> 20) as u64);
    }
    let mut run = IngestRun::new(store, report, COMMAND, filter.describe());
    run.commit_interval = options.commit_every;
    report.start_progress(None, "lines");
    let applied: Vec<AtomicBool> = inputs.iter().map(|_| AtomicBool::new(false)).collect();
    let per_input: Vec<Mutex<Counts>> = inputs
        .iter()
        .map(|_| Mutex::new(Counts::default()))
        .collect();

    let threads = thread_count(options.threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;

    // Waves of inputs, each committed (rows derived, inputs recorded, a version
    // published) when it ends: see `ingest`. Within a wave, one reader walks its inputs in
    // order and cuts them into chunks of whole lines; the pool parses and writes chunks
    // as they come, whichever file they belong to.
    let mut next_input = 0..inputs.len();
    loop {
        let wave = Wave::new(run.commit_interval);
        let first = next_input.start;
        let bulk = match bulk_memory {
            Some(memory) => Some(BulkLoader::new(store, run.ts, memory, threads)?),
            None => None,
        };
        let chunks = std::iter::from_fn(|| wave.next(&mut next_input)).flat_map(|index| {
            InputChunks::new(index, &inputs[index], &run, options.force, &applied[index])
        });
        pool.install(|| {
            chunks
                .par_bridge()
                .try_for_each(|item: Result<(usize, CdxChunk)>| -> Result<()> {
                    let (index, chunk) = item?;
                    let mut counts = Counts::default();
                    match &bulk {
                        Some(loader) => {
                            let mut captures = loader.run_for_input(chunk.data.len());
                            parse_chunk(&chunk, filter, report, &mut counts, |capture| {
                                captures.push(capture);
                                Ok(())
                            })?;
                            loader.add(captures)?;
                        }
                        None => {
                            let mut writer = Writer::sorted(store, run.ts);
                            parse_chunk(&chunk, filter, report, &mut counts, |capture| {
                                writer.add_capture(capture);
                                writer.end_record()
                            })?;
                            writer.finish()?;
                        }
                    }
                    report.progress().inc(counts.get("lines"));
                    report.add_counts(&counts);
                    per_input[index]
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .merge(&counts);
                    Ok(())
                })
        })?;
        if wave.started() == 0 {
            break;
        }
        let done: Vec<(&PlannedInput, serde_json::Value)> = (first..next_input.start)
            .filter(|&i| applied[i].load(Ordering::SeqCst))
            .map(|i| {
                let counts = per_input[i].lock().unwrap_or_else(|e| e.into_inner());
                Ok((&inputs[i], serde_json::to_value(&*counts)?))
            })
            .collect::<Result<_>>()?;
        if let Some(loader) = bulk {
            report
                .progress()
                .set_message("writing and ingesting SST files");
            let stats = match options.exit_after && next_input.is_empty() {
                true => loader.finish_before_exit()?,
                false => loader.finish()?,
            };
            run.count_bulk(&stats);
            report.count("bulk_batches", stats.batches);
            report.count("bulk_digests_read", stats.digests_read);
        }
        run.finish(&done)?;
        if !next_input.is_empty() {
            store.publish()?;
        }
    }
    Ok(())
}

/// The chunks of one input, tagged with the input's index. The file is opened when the
/// first chunk is wanted. An input that cannot be opened or read to its end is a problem
/// of that input, not of the run: the lines read before a read error are kept (their
/// chunks were given), the error is reported at the last complete line, and the input is
/// not recorded as ingested, so that a run over a repaired file applies it. Errors come
/// out only for the run to stop: `--strict`, or the store failing.
struct InputChunks<'a> {
    index: usize,
    input: &'a PlannedInput,
    run: &'a IngestRun<'a>,
    force: bool,
    applied: &'a AtomicBool,
    chunks: Option<CdxChunks<'a>>,
    done: bool,
}

impl<'a> InputChunks<'a> {
    fn new(
        index: usize,
        input: &'a PlannedInput,
        run: &'a IngestRun<'a>,
        force: bool,
        applied: &'a AtomicBool,
    ) -> Self {
        InputChunks {
            index,
            input,
            run,
            force,
            applied,
            chunks: None,
            done: false,
        }
    }

    /// Ends the input after a problem: reported, and the input not recorded.
    fn fail(&mut self, reported: Result<(), StrictStop>) -> Option<Result<(usize, CdxChunk)>> {
        self.done = true;
        self.applied.store(false, Ordering::SeqCst);
        reported.err().map(|stop| Err(stop.into()))
    }
}

impl<'a> Iterator for InputChunks<'a> {
    type Item = Result<(usize, CdxChunk)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let report = self.run.report;
        let name = self.input.display();
        if self.chunks.is_none() {
            match self.run.should_apply(self.input, self.force) {
                Ok(true) => self.applied.store(true, Ordering::SeqCst),
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
            let input = self.input;
            let opened = open_raw(&input.path).and_then(|read| {
                CdxChunks::new(input.hashing(read), input.display())
                    .with_context(|| format!("cannot read {}", input.display()))
            });
            match opened {
                Ok(chunks) => self.chunks = Some(chunks),
                Err(e) => {
                    let at = Location::named(name);
                    return self.fail(report.problem(
                        at,
                        "unreadable_input",
                        &format!("{e:#}"),
                        None,
                    ));
                }
            }
        }
        let chunks = self.chunks.as_mut()?;
        match chunks.next_chunk() {
            Ok(Some(chunk)) => Some(Ok((self.index, chunk))),
            Ok(None) if chunks.bytes_read() == 0 => self.fail(report_empty(report, &name)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                let last = chunks.last_line();
                self.fail(report_cut_short(report, &name, last, &e))
            }
        }
    }
}
