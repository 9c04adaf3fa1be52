//! Where the rows of `import-jsonl` go: the write path, with one writer per core, or a
//! bulk load. Rows are sharded by key — a key always lands in the same shard, in input
//! order — so that the shards run in parallel while a later line still wins over an
//! earlier one.

use anyhow::Result;
use rayon::prelude::*;

use crate::jsonl::ParsedRow;
use crate::store::Store;
use crate::store::bulk_cells::{CellLoader, CellRun};
use crate::store::writer::Writer;

pub enum RowSink<'s> {
    /// One sorted writer per shard: the memtable inserts, most of an import's time, run
    /// on every core.
    Writers(Vec<Writer<'s>>),
    /// Each shard's cells are encoded into a run on its own thread; the loader sorts them.
    Bulk(CellLoader<'s>),
}

impl<'s> RowSink<'s> {
    /// The write path, or with `bulk_memory` a bulk load in batches of that many bytes.
    pub fn new(store: &'s Store, ts: u64, bulk_memory: Option<usize>) -> Result<Self> {
        Ok(match bulk_memory {
            Some(memory) => RowSink::Bulk(CellLoader::new(store, ts, memory)?),
            None => RowSink::Writers(
                (0..shard_count())
                    .map(|_| Writer::sorted(store, ts))
                    .collect(),
            ),
        })
    }

    pub fn shard_of(&self, row: &ParsedRow) -> usize {
        usize::from(row.key.as_bytes()[0]) % self.shards()
    }

    /// One empty list per shard, for [`RowSink::write`].
    pub fn empty_split(&self) -> Vec<Vec<ParsedRow>> {
        (0..self.shards()).map(|_| Vec::new()).collect()
    }

    fn shards(&self) -> usize {
        match self {
            RowSink::Writers(writers) => writers.len(),
            RowSink::Bulk(_) => shard_count(),
        }
    }

    /// Writes rows, `rows[i]` being shard `i`'s, each shard on its own thread. A writer
    /// writes its batch whenever it is full, at a row boundary.
    pub fn write(&mut self, rows: Vec<Vec<ParsedRow>>) -> Result<()> {
        match self {
            RowSink::Writers(writers) => {
                writers
                    .par_iter_mut()
                    .zip(rows)
                    .try_for_each(|(writer, rows)| {
                        for row in rows {
                            for cell in row.cells {
                                let ts = cell.ts.unwrap_or(writer.run_timestamp());
                                writer.put_cell_value(&row.key, cell.column, ts, cell.value);
                            }
                            writer.end_record()?;
                        }
                        Ok(())
                    })
            }
            RowSink::Bulk(loader) => {
                let schema = loader.store().schema();
                let ts = loader.run_timestamp();
                let runs: Vec<CellRun> = rows
                    .into_par_iter()
                    .map(|rows| {
                        let cells: usize = rows.iter().map(|r| r.cells.len()).sum();
                        let bytes: usize = rows
                            .iter()
                            .flat_map(|r| &r.cells)
                            .map(|c| c.value.len() + 48)
                            .sum();
                        let mut run = CellRun::with_capacity(bytes, cells);
                        for row in rows {
                            for cell in &row.cells {
                                let qualifier = schema.column(cell.column).qualifier.as_bytes();
                                let ts = cell.ts.unwrap_or(ts);
                                run.put(&row.key, cell.column.family, qualifier, ts, &cell.value);
                            }
                        }
                        run
                    })
                    .collect();
                runs.into_iter().try_for_each(|run| loader.add(run))
            }
        }
    }

    /// Writes what is left.
    pub fn finish(self) -> Result<()> {
        match self {
            RowSink::Writers(writers) => writers.into_par_iter().try_for_each(Writer::finish),
            RowSink::Bulk(loader) => loader.finish().map(|_| ()),
        }
    }
}

fn shard_count() -> usize {
    rayon::current_num_threads().max(1)
}
