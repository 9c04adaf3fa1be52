//! Bulk load of plain cells (`import-jsonl --bulk`): cells are collected in memory, sorted,
//! written as SST files per family and ingested (RocksDB `ingest_external_file`), as
//! [`super::bulk`] does for captures. No memtable, flush or compaction of the cells on the
//! way: an import of random row keys spends most of its time there on the write path.
//!
//! The store ends up as the write path leaves it: a cell is keyed by (row, qualifier,
//! timestamp), and a later write of the same key wins — within a batch the last one is kept,
//! across batches (and over what the store held) a later ingestion is newer. Memory is
//! bounded by `memory_limit`: past it a batch is written and a new one starts.

use std::path::PathBuf;

use anyhow::Result;
use rayon::prelude::*;

use crate::key::Sha1Key;
use crate::store::Store;
use crate::store::rocks::{RocksBackend, cell_key};
use crate::store::sst::{ScratchDir, SstWriter, ingest_files, part_ranges, scratch_dir};

/// One cell of a batch: its family, and where its key and value lie, back to back, in its
/// run's bytes.
#[derive(Clone, Copy)]
struct CellRef {
    /// The key's first bytes, zero-padded: the sort compares these and reads the run only
    /// when they are equal (cells of a row share 20 bytes; the qualifier follows). Where
    /// two heads differ, they order as the whole keys do.
    head: [u8; HEAD],
    family: u32,
    /// The run holding the bytes (set when the run joins a batch).
    run: u32,
    start: usize,
    key_len: u32,
    value_len: u32,
}

const HEAD: usize = 32;

/// The fewest cells an SST file of a family's range gets.
const MIN_PART: usize = 50_000;

pub struct CellLoader<'s> {
    store: &'s Store,
    rocks: &'s RocksBackend,
    /// Timestamp (ms) of the cells written without one.
    ts: u64,
    memory_limit: usize,
    scratch_dir: ScratchDir,
    /// The runs of the pending batch (their bytes) and their cells.
    runs: Vec<Vec<u8>>,
    cells: Vec<CellRef>,
    pending_bytes: usize,
    stats: CellLoadStats,
}

/// Cells encoded by one thread, to be added to a [`CellLoader`] (which sorts them with the
/// rest of its batch): encoding runs in parallel, the loader only moves runs.
#[derive(Default)]
pub struct CellRun {
    data: Vec<u8>,
    cells: Vec<CellRef>,
}

impl CellRun {
    /// A run with room for about `bytes` of keys and values in `cells` cells.
    pub fn with_capacity(bytes: usize, cells: usize) -> CellRun {
        CellRun {
            data: Vec::with_capacity(bytes),
            cells: Vec::with_capacity(cells),
        }
    }

    pub fn put(&mut self, row: &Sha1Key, family: usize, qualifier: &[u8], ts: u64, value: &[u8]) {
        let start = self.data.len();
        let key = cell_key(row, qualifier, ts);
        self.data.extend_from_slice(&key);
        self.data.extend_from_slice(value);
        let mut head = [0u8; HEAD];
        let shown = key.len().min(HEAD);
        head[..shown].copy_from_slice(&key[..shown]);
        self.cells.push(CellRef {
            head,
            family: family as u32,
            run: 0,
            start,
            key_len: key.len() as u32,
            value_len: value.len() as u32,
        });
    }

    fn bytes(&self) -> usize {
        self.data.len() + self.cells.len() * std::mem::size_of::<CellRef>()
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct CellLoadStats {
    pub batches: u64,
    pub cells: u64,
    /// Cells written again in the same batch (the last one is kept).
    pub replaced: u64,
    pub sst_files: u64,
}

impl<'s> CellLoader<'s> {
    pub fn new(store: &'s Store, ts: u64, memory_limit: usize) -> Result<Self> {
        let rocks = store.rocks("a bulk load")?;
        let scratch_dir = scratch_dir(rocks, "cells", ts)?;
        Ok(CellLoader {
            store,
            rocks,
            ts,
            memory_limit: memory_limit.max(1 << 20),
            scratch_dir,
            runs: Vec::new(),
            cells: Vec::new(),
            pending_bytes: 0,
            stats: CellLoadStats::default(),
        })
    }

    pub fn store(&self) -> &'s Store {
        self.store
    }

    pub fn run_timestamp(&self) -> u64 {
        self.ts
    }

    /// Adds a run; writes a batch when the memory limit is reached. Of two writes of one
    /// cell, the one in the later run (or later in a run) wins.
    pub fn add(&mut self, mut run: CellRun) -> Result<()> {
        if run.cells.is_empty() {
            return Ok(());
        }
        self.pending_bytes += run.bytes();
        let index = self.runs.len() as u32;
        self.cells.extend(
            run.cells
                .drain(..)
                .map(|cell| CellRef { run: index, ..cell }),
        );
        self.runs.push(run.data);
        if self.pending_bytes >= self.memory_limit {
            self.write_batch()?;
        }
        Ok(())
    }

    /// Writes what is pending and removes the scratch directory.
    pub fn finish(mut self) -> Result<CellLoadStats> {
        self.write_batch()?;
        Ok(self.stats)
    }

    fn write_batch(&mut self) -> Result<()> {
        if self.cells.is_empty() {
            return Ok(());
        }
        self.stats.batches += 1;
        self.stats.cells += self.cells.len() as u64;
        let batch = self.stats.batches;
        let runs = &self.runs;
        let key = |c: &CellRef| &runs[c.run as usize][c.start..c.start + c.key_len as usize];
        let value = |c: &CellRef| {
            let start = c.start + c.key_len as usize;
            &runs[c.run as usize][start..start + c.value_len as usize]
        };
        // Stable: equal keys keep their order, and the last of them is the one kept.
        self.cells.par_sort_by(|a, b| {
            (a.family, &a.head)
                .cmp(&(b.family, &b.head))
                .then_with(|| key(a).cmp(key(b)))
        });
        let mut kept: Vec<CellRef> = Vec::with_capacity(self.cells.len());
        for cell in &self.cells {
            match kept.last_mut() {
                Some(last)
                    if last.family == cell.family
                        && last.head == cell.head
                        && key(last) == key(cell) =>
                {
                    *last = *cell;
                    self.stats.replaced += 1;
                }
                _ => kept.push(*cell),
            }
        }
        // Each family's cells cut into ranges, all written in parallel, then ingested
        // family by family (a family's files do not overlap).
        let mut parts: Vec<(u32, usize, &[CellRef])> = Vec::new();
        let mut start = 0;
        while start < kept.len() {
            let family = kept[start].family;
            let end = start + kept[start..].partition_point(|c| c.family == family);
            let cells = &kept[start..end];
            // Keys are distinct here (the last write of a cell was kept).
            let ranges = part_ranges(cells.len(), MIN_PART, |_| false);
            parts.extend(
                ranges
                    .into_iter()
                    .enumerate()
                    .map(|(n, range)| (family, n, &cells[range])),
            );
            start = end;
        }
        let written: Vec<(u32, PathBuf)> = parts
            .into_par_iter()
            .map(|(family, n, cells)| {
                let path = self.scratch_dir.join(format!("f{family}-{batch}-{n}.sst"));
                let cf = self.rocks.family_cf_name(family as usize);
                let mut writer = SstWriter::new(path, cf);
                for cell in cells {
                    writer.put(key(cell), value(cell))?;
                }
                Ok(writer.finish()?.map(|sst| (family, sst.path)))
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        self.stats.sst_files += written.len() as u64;
        for family in 0..self.store.schema().families.len() as u32 {
            let paths: Vec<PathBuf> = written
                .iter()
                .filter(|(f, _)| *f == family)
                .map(|(_, path)| path.clone())
                .collect();
            ingest_files(
                self.store,
                self.rocks.family_cf_name(family as usize),
                paths,
            )?;
        }
        self.cells.clear();
        self.runs.clear();
        self.pending_bytes = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::cells::Projection;
    use crate::store::writer::Writer;

    /// Rows written twice (in one batch and across batches), over a store that already
    /// holds some of the same cells: the bulk load leaves what the write path leaves.
    #[test]
    fn bulk_cells_equal_the_write_path() {
        let contents = |bulk: bool| {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(&dir.path().join("s")).unwrap();
            let schema = store.schema().clone();
            let column = |name: &str| schema.column_id(name).unwrap();
            let cells: Vec<(Sha1Key, &str, u64, Vec<u8>)> = (0..3000u32)
                .map(|i| {
                    let row = Sha1Key([(i % 41) as u8; 20]);
                    let name = ["file:mime", "file:size", "f:c"][(i % 3) as usize];
                    (row, name, u64::from(i % 2), format!("v{i}").into_bytes())
                })
                .collect();
            {
                let mut writer = Writer::new(&store, 1);
                for (row, name, ts, value) in &cells[..500] {
                    writer.put_cell_at(row, column(name), *ts, value);
                }
                writer.finish().unwrap();
            }
            if bulk {
                // A small budget: several batches.
                let mut loader = CellLoader::new(&store, 1, 1 << 20).unwrap();
                loader.memory_limit = 40_000;
                for part in cells[250..].chunks(37) {
                    let mut run = CellRun::default();
                    for (row, name, ts, value) in part {
                        let c = column(name);
                        let qualifier = schema.column(c).qualifier.as_bytes();
                        run.put(row, c.family, qualifier, *ts, value);
                    }
                    loader.add(run).unwrap();
                }
                let stats = loader.finish().unwrap();
                assert!(stats.batches > 3 && stats.replaced > 0, "{stats:?}");
            } else {
                let mut writer = Writer::new(&store, 1);
                for (row, name, ts, value) in &cells[250..] {
                    writer.put_cell_at(row, column(name), *ts, value);
                    writer.end_record().unwrap();
                }
                writer.finish().unwrap();
            }
            // Every version the caps keep, as export --versions shows them (what
            // compaction has dropped below the caps yet differs between the two paths).
            let mut all = Projection::all(&schema);
            all.versions = usize::MAX;
            let mut out = Vec::new();
            store
                .scan_rows(&all, None, None, |row| {
                    crate::jsonl::write_row(&schema, &row, true, &mut out, &mut Vec::new());
                    Ok(true)
                })
                .unwrap();
            String::from_utf8(out).unwrap()
        };
        let written = contents(false);
        assert_eq!(written.lines().count(), 41);
        assert_eq!(contents(true), written);
    }
}
