//! Where the captures of one input go: the store's write path, or the memory of a bulk
//! load when a wave of WARC files starts on an empty RocksDB store.
//!
//! An empty store has no captures to merge with and no rows to read back, so the wave's
//! captures are collected, sorted and written as SST files ([`BulkLoader`]), as
//! `backfill-cdx --bulk` does: no memtable inserts, no flush, no digest marks, and the rows
//! derived from memory. On a small-records crawl those were a fifth of a one-thread
//! import's CPU (issue 39). Readers see the wave when it is committed, as with the write
//! path; everything else an input writes (warcinfo records, failed fetches, WACZ pages)
//! goes through the write path either way.

use anyhow::Result;

use crate::capture::{Capture, CaptureRef};
use crate::ingest::warc::{CaptureSink, WarcInfo};
use crate::store::Store;
use crate::store::bulk::{BulkLoader, CaptureRun};
use crate::store::writer::Writer;

/// Captures kept by one input before they are handed to the bulk load (which writes a
/// batch once its memory limit is reached).
const RUN_BYTES: usize = 8 << 20;

/// The sink of one input of a wave (see the module documentation).
pub struct InputSink<'w, 's> {
    writer: Writer<'s>,
    bulk: Option<BulkRun<'w, 's>>,
}

struct BulkRun<'w, 's> {
    loader: &'w BulkLoader<'s>,
    run: CaptureRun,
}

impl<'w, 's> InputSink<'w, 's> {
    /// A sink that writes through `writer`, or collects captures for `bulk` when given.
    pub fn new(writer: Writer<'s>, bulk: Option<&'w BulkLoader<'s>>) -> Self {
        InputSink {
            writer,
            bulk: bulk.map(|loader| BulkRun {
                loader,
                run: CaptureRun::default(),
            }),
        }
    }

    pub fn store(&self) -> &'s Store {
        self.writer.store()
    }

    /// Writes or hands over what is left. Call at the end of the input.
    pub fn finish(self) -> Result<()> {
        if let Some(bulk) = self.bulk {
            bulk.loader.add(bulk.run)?;
        }
        self.writer.finish()
    }
}

impl CaptureSink for InputSink<'_, '_> {
    fn add_capture(&mut self, capture: &CaptureRef<'_>) {
        match &mut self.bulk {
            Some(bulk) => {
                // No capture is written before the wave ends: a simulated crash has
                // nothing to make durable first.
                #[cfg(feature = "crash-points")]
                if crate::store::writer::crash_test::at_limit() {
                    crate::store::writer::crash_test::crash();
                }
                bulk.run.push(capture);
            }
            None => self.writer.add_capture(capture),
        }
    }

    fn end_record(&mut self) -> Result<()> {
        if let Some(bulk) = &mut self.bulk
            && bulk.run.bytes() >= RUN_BYTES
        {
            // A run is handed over at RUN_BYTES of captures, which take a little more than
            // the CDX lines they would be.
            let next = bulk.loader.run_for_input(RUN_BYTES / 2);
            let run = std::mem::replace(&mut bulk.run, next);
            bulk.loader.add(run)?;
        }
        self.writer.end_record()
    }

    fn warcinfo(&mut self, info: WarcInfo) -> Result<()> {
        CaptureSink::warcinfo(&mut self.writer, info)
    }

    fn failed_fetch(&mut self, fetch: &Capture) -> Result<()> {
        CaptureSink::failed_fetch(&mut self.writer, fetch)
    }
}
