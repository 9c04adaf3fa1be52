//! Writing the results of a processing stage (`grobid0`, `match0`) back into rows.
//!
//! A stage's results for a row replace what the row held in the stage's families: the
//! old cells (every stored version) are deleted and the new ones written in one batch,
//! so a re-processed row never keeps a stale cell (an old `tei_xml` next to a new
//! `oversize` status, an old `match0:doi` next to a new `no-match`). Every committed
//! batch is a consistent state (whole rows), so it is durable at once (RocksDB's
//! write-ahead log) and published soon: a stage calls a slow service row by row, and a
//! row it has paid for must survive an interruption, so that a re-run skips it.

use std::time::Duration;

use anyhow::Result;

use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::backend::{Batch, Op};
use crate::store::{PUBLISH_INTERVAL, Store};

/// Collects row replacements; [`StageBatch::commit`] writes them atomically.
pub struct StageBatch<'s> {
    store: &'s Store,
    ts: u64,
    batch: Batch,
    rows: usize,
    publish_interval: Duration,
}

impl<'s> StageBatch<'s> {
    /// `ts`: the timestamp (ms) of the new cells.
    pub fn new(store: &'s Store, ts: u64) -> StageBatch<'s> {
        StageBatch {
            store,
            ts,
            batch: Batch::default(),
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
    /// columns must belong to those families): every old cell of those families goes,
    /// whatever its version, in the same batch that writes the new ones.
    pub fn replace_row(
        &mut self,
        row: &Sha1Key,
        families: &[usize],
        cells: &[(ColumnId, Vec<u8>)],
    ) -> Result<()> {
        for &family in families {
            self.batch.push(Op::DeleteRowFamily { row: *row, family });
        }
        let schema = self.store.schema();
        for (column, value) in cells {
            self.batch.push(Op::PutCell {
                row: *row,
                family: column.family,
                qualifier: schema.column(*column).qualifier.as_bytes().to_vec(),
                ts: self.ts,
                value: value.clone(),
            });
        }
        self.rows += 1;
        Ok(())
    }

    #[cfg(test)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Writes the batch and starts a new one; publishes when due.
    pub fn commit(&mut self) -> Result<()> {
        self.store.write(&self.batch)?;
        self.batch.clear();
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
        // An older surplus version, as an un-compacted store may hold, and a cell of
        // another family.
        let mut old = Batch::default();
        for (family, qualifier, ts, value) in [
            (family, "doi", 500, &b"10.1/old"[..]),
            (mime.family, "mime", 1, &b"application/pdf"[..]),
        ] {
            old.push(Op::PutCell {
                row,
                family,
                qualifier: qualifier.as_bytes().to_vec(),
                ts,
                value: value.to_vec(),
            });
        }
        store.write(&old).unwrap();

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
