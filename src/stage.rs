//! Writing the results of a processing stage (`grobid0`, `match0`) back into rows.
//!
//! A stage's results for a row replace what the row held in the stage's families: the
//! old cells (every stored version) are deleted and the new ones written in one batch,
//! so a re-processed row never keeps a stale cell (an old `tei_xml` next to a new
//! `oversize` status, an old `match0:doi` next to a new `no-match`). Batches go through
//! RocksDB's write-ahead log, unlike bulk ingest: a stage calls a slow service row by
//! row, and a row it has paid for must survive an interruption, so that a re-run skips
//! it.

use anyhow::Result;
use std::time::Duration;

use rocksdb::{ReadOptions, WriteBatch};

use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::cells::{cell_key, row_upper_bound};
use crate::store::{PUBLISH_INTERVAL, Store};

/// Collects row replacements; [`StageBatch::commit`] writes them atomically.
pub struct StageBatch<'s> {
    store: &'s Store,
    ts: u64,
    batch: WriteBatch,
    rows: usize,
    publish_interval: Duration,
}

impl<'s> StageBatch<'s> {
    /// `ts`: the timestamp (ms) of the new cells.
    pub fn new(store: &'s Store, ts: u64) -> StageBatch<'s> {
        StageBatch {
            store,
            ts,
            batch: WriteBatch::default(),
            rows: 0,
            publish_interval: PUBLISH_INTERVAL,
        }
    }

    /// How often committed batches are published to readers (default
    /// [`PUBLISH_INTERVAL`]; zero publishes every commit).
    pub fn publish_every(mut self, interval: Duration) -> StageBatch<'s> {
        self.publish_interval = interval;
        self
    }

    /// Replaces the row's cells in `families` (schema indexes) by `cells` (whose
    /// columns must belong to those families). The old cells are read from the store,
    /// so a row should appear once per batch.
    pub fn replace_row(
        &mut self,
        row: &Sha1Key,
        families: &[usize],
        cells: &[(ColumnId, Vec<u8>)],
    ) -> Result<()> {
        for &family in families {
            let cf = self.store.family_cf(family);
            let mut opts = ReadOptions::default();
            opts.set_iterate_upper_bound(row_upper_bound(row.as_bytes()));
            let mut iter = self.store.db().raw_iterator_cf_opt(cf, opts);
            iter.seek(row.as_bytes());
            while let Some(key) = iter.key() {
                self.batch.delete_cf(cf, key);
                iter.next();
            }
            iter.status()?;
        }
        let schema = self.store.schema();
        for (column, value) in cells {
            let qualifier = &schema.column(*column).qualifier;
            let cf = self.store.family_cf(column.family);
            self.batch
                .put_cf(cf, cell_key(row, qualifier, self.ts), value);
        }
        self.rows += 1;
        Ok(())
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Writes the batch (through the write-ahead log) and starts a new one.
    pub fn commit(&mut self) -> Result<()> {
        if !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            self.store.db().write(batch)?;
        }
        self.rows = 0;
        self.store.publish_if_due(self.publish_interval)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::cells::Projection;

    #[test]
    fn replacing_drops_every_old_version_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let schema = store.schema();
        let family = schema.family_index("match0").unwrap();
        let mstatus = schema.column_id("match0:mstatus").unwrap();
        let doi = schema.column_id("match0:doi").unwrap();
        let mime = schema.column_id("file:mime").unwrap();
        let row = Sha1Key([9; 20]);

        let mut batch = StageBatch::new(&store, 1000);
        batch
            .replace_row(
                &row,
                &[family],
                &[
                    (mstatus, b"fuzzy-title".to_vec()),
                    (doi, b"10.1/x".to_vec()),
                ],
            )
            .unwrap();
        assert_eq!(batch.rows(), 1);
        batch.commit().unwrap();
        // An older surplus version, as an un-compacted store may hold.
        store
            .db()
            .put_cf(
                store.family_cf(family),
                cell_key(&row, "doi", 500),
                b"10.1/old",
            )
            .unwrap();
        store
            .db()
            .put_cf(
                store.family_cf(mime.family),
                cell_key(&row, "mime", 1),
                b"application/pdf",
            )
            .unwrap();

        let mut batch = StageBatch::new(&store, 2000);
        batch
            .replace_row(&row, &[family], &[(mstatus, b"no-match".to_vec())])
            .unwrap();
        batch.commit().unwrap();
        let read = store
            .read_row(&row, &Projection::all(schema))
            .unwrap()
            .unwrap();
        assert_eq!(read.latest(mstatus), Some(&b"no-match"[..]));
        assert_eq!(read.latest(doi), None, "no stale or older doi is left");
        assert_eq!(read.latest(mime), Some(&b"application/pdf"[..]));
        assert_eq!(store.raw_version_count(family), 1);
    }
}
