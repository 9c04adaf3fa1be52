//! Cells of the `files` table: key layout, versions, reading rows and scanning ranges.
//!
//! Cell key: `row(20) ‖ qualifier ‖ 0x00 ‖ !timestamp` (timestamp in milliseconds,
//! inverted big-endian so that the newest version of a cell sorts first). Qualifiers
//! are identifiers, so the 0x00 separator cannot occur inside one.

use std::ffi::CStr;

use anyhow::Result;
use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{DBRawIterator, Direction, IteratorMode, Options, ReadOptions};

use crate::key::Sha1Key;
use crate::schema::{ColumnId, Schema};
use crate::store::Store;

pub const ROW_LEN: usize = 20;
const TS_LEN: usize = 8;

pub fn cell_key(row: &Sha1Key, qualifier: &str, ts: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(ROW_LEN + qualifier.len() + 1 + TS_LEN);
    key.extend_from_slice(row.as_bytes());
    key.extend_from_slice(qualifier.as_bytes());
    key.push(0);
    key.extend_from_slice(&(!ts).to_be_bytes());
    key
}

/// Splits a cell key into (row, qualifier, timestamp).
pub fn split_cell_key(key: &[u8]) -> Option<(&[u8], &[u8], u64)> {
    if key.len() < ROW_LEN + 1 + TS_LEN {
        return None;
    }
    let (row, rest) = key.split_at(ROW_LEN);
    let (qualifier_and_sep, ts) = rest.split_at(rest.len() - TS_LEN);
    let qualifier = qualifier_and_sep.strip_suffix(&[0])?;
    let ts = !u64::from_be_bytes(ts.try_into().ok()?);
    Some((row, qualifier, ts))
}

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

    fn wants(&self, column: ColumnId) -> bool {
        self.columns
            .as_ref()
            .is_none_or(|cols| cols.contains(&column))
    }
}

/// Removes versions beyond a family's cap during compaction. Compaction sees a cell's
/// versions newest first, so everything after the first `cap` of one cell is surplus.
struct VersionCapFilter {
    cap: usize,
    current: Vec<u8>,
    seen: usize,
}

impl CompactionFilter for VersionCapFilter {
    fn filter(&mut self, _level: u32, key: &[u8], _value: &[u8]) -> Decision {
        let Some(cell) = key.get(..key.len().saturating_sub(TS_LEN)) else {
            return Decision::Keep;
        };
        if cell == self.current.as_slice() {
            self.seen += 1;
        } else {
            self.current.clear();
            self.current.extend_from_slice(cell);
            self.seen = 1;
        }
        if self.seen > self.cap {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }

    fn name(&self) -> &CStr {
        c"sediment.version_cap"
    }
}

struct VersionCapFactory {
    cap: usize,
}

impl CompactionFilterFactory for VersionCapFactory {
    type Filter = VersionCapFilter;

    fn create(&mut self, _context: CompactionFilterContext) -> VersionCapFilter {
        VersionCapFilter {
            cap: self.cap,
            current: Vec::new(),
            seen: 0,
        }
    }

    fn name(&self) -> &CStr {
        c"sediment.version_cap_factory"
    }
}

pub fn install_version_cap(opts: &mut Options, cap: usize) {
    opts.set_compaction_filter_factory(VersionCapFactory { cap });
}

/// Collects the cells of one row from one family's iterator positioned at or before
/// the row. Leaves the iterator on the first key after the row.
fn collect_family_cells(
    schema: &Schema,
    family: usize,
    iter: &mut DBRawIterator<'_>,
    row: &[u8],
    projection: &Projection,
    out: &mut Vec<Cell>,
) {
    let cap = projection
        .versions
        .min(schema.families[family].max_versions);
    while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
        let Some((key_row, qualifier, ts)) = split_cell_key(key) else {
            iter.next();
            continue;
        };
        if key_row != row {
            break;
        }
        if let Some(column) = schema.qualifier_in_family(family, qualifier)
            && projection.wants(column)
        {
            match out.last_mut() {
                Some(cell) if cell.column == column => {
                    if cell.versions.len() < cap {
                        cell.versions.push(Version {
                            ts,
                            value: value.to_vec(),
                        });
                    }
                }
                _ => out.push(Cell {
                    column,
                    versions: vec![Version {
                        ts,
                        value: value.to_vec(),
                    }],
                }),
            }
        }
        iter.next();
    }
}

fn sort_cells(cells: &mut [Cell]) {
    cells.sort_by_key(|c| c.column);
}

impl Store {
    /// Reads one row; `None` when it has no cells in the projected families.
    pub fn read_row(&self, key: &Sha1Key, projection: &Projection) -> Result<Option<Row>> {
        let mut cells = Vec::new();
        for &family in &projection.families {
            let mut opts = ReadOptions::default();
            opts.set_iterate_lower_bound(key.as_bytes().to_vec());
            opts.set_iterate_upper_bound(row_upper_bound(key.as_bytes()));
            let mut iter = self.db().raw_iterator_cf_opt(self.family_cf(family), opts);
            iter.seek(key.as_bytes());
            collect_family_cells(
                self.schema(),
                family,
                &mut iter,
                key.as_bytes(),
                projection,
                &mut cells,
            );
            iter.status()?;
        }
        sort_cells(&mut cells);
        Ok((!cells.is_empty()).then_some(Row { key: *key, cells }))
    }

    /// Streams rows in key order within `[start, end)`, merging the families' iterators.
    /// Memory holds one row at a time.
    pub fn scan_rows(
        &self,
        projection: &Projection,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        mut visit: impl FnMut(Row) -> Result<bool>,
    ) -> Result<()> {
        let mut iters: Vec<(usize, DBRawIterator<'_>)> = projection
            .families
            .iter()
            .map(|&family| {
                let mut opts = ReadOptions::default();
                opts.set_readahead_size(4 << 20);
                if let Some(s) = start {
                    opts.set_iterate_lower_bound(s.to_vec());
                }
                if let Some(e) = end {
                    opts.set_iterate_upper_bound(e.to_vec());
                }
                let mut iter = self.db().raw_iterator_cf_opt(self.family_cf(family), opts);
                match start {
                    Some(s) => iter.seek(s),
                    None => iter.seek_to_first(),
                }
                (family, iter)
            })
            .collect();
        loop {
            let next_row: Option<[u8; ROW_LEN]> = iters
                .iter()
                .filter_map(|(_, it)| it.key().and_then(|k| k.get(..ROW_LEN)))
                .min()
                .and_then(|r| r.try_into().ok());
            let Some(row) = next_row else { break };
            let mut cells = Vec::new();
            for (family, iter) in iters.iter_mut() {
                collect_family_cells(self.schema(), *family, iter, &row, projection, &mut cells);
            }
            if cells.is_empty() {
                continue;
            }
            sort_cells(&mut cells);
            if !visit(Row {
                key: Sha1Key(row),
                cells,
            })? {
                break;
            }
        }
        for (_, iter) in &iters {
            iter.status()?;
        }
        Ok(())
    }

    /// Counts raw stored versions of every cell (for tests of the version cap).
    pub fn raw_version_count(&self, family: usize) -> usize {
        self.db()
            .iterator_cf(
                self.family_cf(family),
                IteratorMode::From(&[], Direction::Forward),
            )
            .count()
    }
}

/// The smallest key greater than every key with this prefix, for iterator bounds.
pub fn row_upper_bound(prefix: &[u8]) -> Vec<u8> {
    let mut bound = prefix.to_vec();
    while let Some(last) = bound.pop() {
        if last != 0xff {
            bound.push(last + 1);
            return bound;
        }
    }
    // All 0xff: no finite bound; a key longer than any row works for 20-byte rows.
    vec![0xff; ROW_LEN + 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_keys_split_back_and_sort_newest_first() {
        let row = Sha1Key([7; 20]);
        let old = cell_key(&row, "mime", 1000);
        let new = cell_key(&row, "mime", 2000);
        assert!(new < old, "newer versions sort first");
        assert_eq!(
            split_cell_key(&old),
            Some((&[7u8; 20][..], &b"mime"[..], 1000))
        );
        // a shorter qualifier that is a prefix of another still sorts before it
        assert!(cell_key(&row, "c", 1) < cell_key(&row, "cdx", 5));
    }

    #[test]
    fn upper_bounds() {
        assert_eq!(row_upper_bound(&[1, 2, 3]), vec![1, 2, 4]);
        assert_eq!(row_upper_bound(&[1, 0xff]), vec![2]);
    }
}
