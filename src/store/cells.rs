//! Rows of the `files` table as the rest of the program sees them: cells by column, each
//! with its versions newest first, read through the backend.

use anyhow::Result;

use super::backend::{CellFilter, RawCell};
use crate::key::Sha1Key;
use crate::schema::{ColumnId, Schema};
use crate::store::Store;

pub use super::rocks::{ROW_LEN, cell_key, cell_key_into};

/// One version of a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub ts: u64,
    pub value: Vec<u8>,
}

/// The versions of one cell, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub column: ColumnId,
    pub versions: Vec<Version>,
}

/// A row with its cells in schema order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Sha1Key,
    pub cells: Vec<Cell>,
}

impl Row {
    pub fn cell(&self, column: ColumnId) -> Option<&Cell> {
        self.cells.iter().find(|c| c.column == column)
    }

    /// The newest value of a column.
    pub fn latest(&self, column: ColumnId) -> Option<&[u8]> {
        self.cell(column)
            .and_then(|c| c.versions.first())
            .map(|v| v.value.as_slice())
    }
}

/// Which cells a read returns.
#[derive(Debug, Clone)]
pub struct Projection {
    /// Families to read (indexes into the schema).
    pub families: Vec<usize>,
    /// When set, only these columns.
    pub columns: Option<Vec<ColumnId>>,
    /// Versions per cell (capped by each family's max_versions).
    pub versions: usize,
}

impl Projection {
    pub fn all(schema: &Schema) -> Projection {
        Projection {
            families: (0..schema.families.len()).collect(),
            columns: None,
            versions: 1,
        }
    }

    /// The backend's form: qualifiers per family.
    fn filter(&self, schema: &Schema) -> CellFilter {
        CellFilter {
            families: self
                .families
                .iter()
                .map(|&family| {
                    let qualifiers = self.columns.as_ref().map(|columns| {
                        columns
                            .iter()
                            .filter(|c| c.family == family)
                            .map(|c| schema.column(*c).qualifier.as_bytes().to_vec())
                            .collect()
                    });
                    (family, qualifiers)
                })
                .collect(),
            versions: self.versions,
        }
    }
}

/// Groups raw cells (newest version first within a cell) into a row in schema order;
/// cells of qualifiers the schema does not know are left out.
fn to_row(schema: &Schema, key: &Sha1Key, raw: Vec<RawCell>) -> Option<Row> {
    let mut cells: Vec<Cell> = Vec::new();
    for cell in raw {
        let Some(column) = schema.qualifier_in_family(cell.family, &cell.qualifier) else {
            continue;
        };
        let version = Version {
            ts: cell.ts,
            value: cell.value,
        };
        match cells.iter_mut().find(|c| c.column == column) {
            Some(existing) => existing.versions.push(version),
            None => cells.push(Cell {
                column,
                versions: vec![version],
            }),
        }
    }
    cells.sort_by_key(|c| c.column);
    (!cells.is_empty()).then_some(Row { key: *key, cells })
}

impl Store {
    /// Reads one row; `None` when it has no cells in the projected families.
    pub fn read_row(&self, key: &Sha1Key, projection: &Projection) -> Result<Option<Row>> {
        let mut found = None;
        self.read_rows(std::slice::from_ref(key), projection, |row| {
            found = Some(row);
            Ok(false)
        })?;
        Ok(found)
    }

    /// Reads several rows (one seek per row and family on RocksDB, one request on
    /// Bigtable), calling `visit` for each that has cells, in the order given.
    pub fn read_rows(
        &self,
        keys: &[Sha1Key],
        projection: &Projection,
        mut visit: impl FnMut(Row) -> Result<bool>,
    ) -> Result<()> {
        let schema = self.schema();
        self.backend().read_rows(
            keys,
            &projection.filter(schema),
            &mut |key, raw| match to_row(schema, key, raw) {
                Some(row) => visit(row),
                None => Ok(true),
            },
        )
    }

    /// Streams rows in key order within `[start, end)`. Memory holds one row at a time.
    pub fn scan_rows(
        &self,
        projection: &Projection,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        mut visit: impl FnMut(Row) -> Result<bool>,
    ) -> Result<()> {
        let schema = self.schema();
        self.backend()
            .scan_rows(
                &projection.filter(schema),
                start,
                end,
                &mut |key, raw| match to_row(schema, key, raw) {
                    Some(row) => visit(row),
                    None => Ok(true),
                },
            )
    }
}
