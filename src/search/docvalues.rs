//! What the ranking pass reads for every match, held in memory by a long-lived reader
//! (`sediment serve`): Lucene's "doc values".
//!
//! Without them, each match of a query costs four B-tree lookups (its generation, URL,
//! file summary and description) for the facets and the index-page penalty; at 100,000
//! pages that was three quarters of a common word's ranking pass, three to four times its
//! bm25 (issue 37). Loaded in one scan per version of the database, they make those
//! lookups array reads. Rankings, totals and facets are the same with and without them
//! (tests/relevance.rs compares every query of its set both ways).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;
use rusqlite::Connection;

use super::{Stop, Stopped};

/// The values of the searchable generations (open, not a duplicate) of one state of a
/// summary database.
#[derive(Default)]
pub struct DocValues {
    /// Generation id → its entry in `docs` (shared with `row_tokens`).
    rows: Arc<Rows>,
    /// One entry a generation (rather than a column a value: one cache line a match).
    docs: Vec<Doc>,
    /// Every origin, for `site:` filters.
    origins: Vec<Origin>,
    /// The searchable generations of each origin, ascending.
    by_origin: HashMap<i64, Vec<i64>>,
    /// The size of each searchable row in tokens, for the ranking ([`RowTokens`]).
    row_tokens: Arc<RowTokens>,
    /// Origin id → its entry in `origin_sites` (origin ids are dense too).
    origin_rows: Rows,
    /// Each origin's site as the site facet names it ([`super::facets::site_label`]): an
    /// index into `site_labels`, [`ABSENT`] for an origin without a host.
    origin_sites: Vec<u32>,
    site_labels: Vec<String>,
}

/// An origin as a `site:` filter reads it.
struct Origin {
    id: i64,
    host: Option<String>,
    /// The host with ASCII letters in lower case (as `LIKE` compares).
    lower: Option<String>,
    /// The port, the scheme's default when the origin has none (NULL for another scheme).
    port: Option<i64>,
}

/// Where a generation's values are. Generation ids are dense (SQLite's row ids, given in
/// order): an array indexed by id is one memory read a match where a hash map was 7 % of
/// a search's CPU at 100,000 pages. A database whose ids are sparse gets the map.
enum Rows {
    /// `rows[id - first]`, [`ABSENT`] for ids that are not searchable.
    Dense {
        first: i64,
        rows: Vec<u32>,
    },
    Sparse(HashMap<i64, u32>),
}

const ABSENT: u32 = u32::MAX;

impl Default for Rows {
    fn default() -> Self {
        Rows::Sparse(HashMap::new())
    }
}

impl Rows {
    /// An array when it would be at most four times the size of the map's entries.
    fn from_ids(ids: &[i64]) -> Rows {
        let (Some(&first), Some(&last)) = (ids.iter().min(), ids.iter().max()) else {
            return Rows::default();
        };
        let span = last.abs_diff(first).saturating_add(1);
        if span <= (ids.len() as u64).saturating_mul(4).max(1024) {
            let mut rows = vec![ABSENT; span as usize];
            for (at, &id) in ids.iter().enumerate() {
                rows[id.abs_diff(first) as usize] = at as u32;
            }
            Rows::Dense { first, rows }
        } else {
            Rows::Sparse(
                ids.iter()
                    .enumerate()
                    .map(|(at, &id)| (id, at as u32))
                    .collect(),
            )
        }
    }

    fn get(&self, id: i64) -> Option<usize> {
        let at = match self {
            Rows::Dense { first, rows } => {
                let offset = id.checked_sub(*first)?;
                *rows.get(usize::try_from(offset).ok()?)?
            }
            Rows::Sparse(map) => *map.get(&id)?,
        };
        (at != ABSENT).then_some(at as usize)
    }
}

/// One generation's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Doc {
    pub origin: i64,
    /// `mimetype_id` of its file summary.
    pub mimetype: Option<i64>,
    pub first_seen: i64,
    pub last_seen: i64,
    /// Indexiness, 0 when it has none (as the ranking's `COALESCE` reads it).
    pub indexiness: f64,
}

impl DocValues {
    /// Reads the values of every searchable generation (a scan of four tables: at 100,000
    /// pages about a third of a second when the database is in the page cache).
    pub fn load(conn: &mut Connection, stop: &Stop) -> Result<DocValues> {
        super::interruptible(conn, stop, |conn| {
            let mut docs = DocValues::default();
            let mut ids = Vec::new();
            let mut statement = conn.prepare(
                "SELECT eg.entity_generation_id, url.origin_id, fs.mimetype_id,
                        eg.first_seen_unix_utc, eg.last_seen_unix_utc, dd.indexiness
                 FROM entity_generation eg
                 JOIN url ON url.url_id = eg.url_id
                 LEFT JOIN file_summary fs ON fs.entity_generation_id = eg.entity_generation_id
                 LEFT JOIN document_description dd
                        ON dd.entity_generation_id = eg.entity_generation_id
                 WHERE eg.confirmed_end_unix_utc IS NULL AND eg.marked_duplicate = 0",
            )?;
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                if docs.docs.len() % 4096 == 0
                    && let Some(reason) = stop.reason()
                {
                    return Err(Stopped(reason).into());
                }
                if docs.docs.len() >= ABSENT as usize {
                    anyhow::bail!("more than 2^32 - 1 searchable generations");
                }
                ids.push(row.get(0)?);
                docs.docs.push(Doc {
                    origin: row.get(1)?,
                    mimetype: row.get(2)?,
                    first_seen: row.get(3)?,
                    last_seen: row.get(4)?,
                    indexiness: row.get::<_, Option<f64>>(5)?.unwrap_or(0.0),
                });
            }
            drop(rows);
            for (&id, doc) in ids.iter().zip(&docs.docs) {
                docs.by_origin.entry(doc.origin).or_default().push(id);
            }
            for generations in docs.by_origin.values_mut() {
                generations.sort_unstable();
            }
            docs.rows = Arc::new(Rows::from_ids(&ids));
            docs.row_tokens = Arc::new(RowTokens::load(conn, docs.rows.clone(), ids.len(), stop)?);
            let mut statement = conn.prepare(
                "SELECT origin_id, host,
                        COALESCE(port, CASE scheme WHEN 'http' THEN 80 WHEN 'https' THEN 443 END),
                        port, scheme
                 FROM origin",
            )?;
            let mut rows = statement.query([])?;
            let mut labels: HashMap<String, u32> = HashMap::new();
            while let Some(row) = rows.next()? {
                let id = row.get(0)?;
                let host: Option<String> = row.get(1)?;
                let mut site = ABSENT;
                if let Some(host) = &host {
                    let scheme: Option<String> = row.get(4)?;
                    let label = super::facets::site_label(host, row.get(3)?, scheme.as_deref());
                    let next = docs.site_labels.len() as u32;
                    site = *labels.entry(label).or_insert_with_key(|label| {
                        docs.site_labels.push(label.clone());
                        next
                    });
                }
                docs.origin_sites.push(site);
                docs.origins.push(Origin {
                    id,
                    lower: host.as_deref().map(str::to_ascii_lowercase),
                    host,
                    port: row.get(2)?,
                });
            }
            if docs.origins.len() >= ABSENT as usize {
                anyhow::bail!("more than 2^32 - 1 origins");
            }
            let origin_ids: Vec<i64> = docs.origins.iter().map(|origin| origin.id).collect();
            docs.origin_rows = Rows::from_ids(&origin_ids);
            Ok(docs)
        })
    }

    /// How many searchable generations there are.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The searchable generations of the `sites` (as `site:` gives them, the filter
    /// [`super::push_filters`] writes for SQLite: the host or a subdomain of it, ASCII
    /// letters in any case, and the port when one is given), ascending; `None` when there
    /// are more than `most`.
    pub(super) fn site_generations(&self, sites: &[String], most: usize) -> Option<Vec<i64>> {
        let sites: Vec<(&str, String, Option<u16>)> = sites
            .iter()
            .map(|site| {
                let (host, port) = super::site_host(site);
                (host, format!(".{}", host.to_ascii_lowercase()), port)
            })
            .collect();
        let mut generations = Vec::new();
        for origin in &self.origins {
            let (Some(host), Some(lower)) = (&origin.host, &origin.lower) else {
                continue;
            };
            let matches = sites.iter().any(|(site, dotted, port)| {
                (host == site || lower.ends_with(dotted.as_str()))
                    && port.is_none_or(|port| origin.port == Some(i64::from(port)))
            });
            if matches && let Some(of_origin) = self.by_origin.get(&origin.id) {
                generations.extend_from_slice(of_origin);
                if generations.len() > most {
                    return None;
                }
            }
        }
        generations.sort_unstable();
        generations.dedup();
        Some(generations)
    }

    /// The site of an origin as the site facet counts it (its host, with the port unless
    /// the scheme's default; [`DocValues::site_label`]), `None` for an origin without a
    /// host or unknown.
    pub(super) fn site(&self, origin: i64) -> Option<u32> {
        let site = self.origin_sites[self.origin_rows.get(origin)?];
        (site != ABSENT).then_some(site)
    }

    /// The name of a site [`DocValues::site`] gave.
    pub(super) fn site_label(&self, site: u32) -> &str {
        &self.site_labels[site as usize]
    }

    /// How many searchable generations have their row's size in tokens in memory (every
    /// one the full-text index holds): the tests' check that the ranking reads them from
    /// here.
    #[doc(hidden)]
    pub fn rows_with_tokens(&self) -> usize {
        self.row_tokens
            .tokens
            .iter()
            .filter(|&&t| t != ABSENT)
            .count()
    }

    /// While the guard lives, `sediment_rank` on this thread reads each row's size from
    /// these doc values ([`row_tokens`]).
    pub(super) fn row_tokens_in_use(&self) -> RowTokensInUse {
        RowTokensInUse(ROW_TOKENS.replace(Some(self.row_tokens.clone())))
    }

    /// The values of a generation, `None` unless it is searchable.
    pub(super) fn get(&self, generation: i64) -> Option<&Doc> {
        self.docs.get(self.rows.get(generation)?)
    }
}

/// Each searchable row's size in tokens (every column), as FTS5's `docsize` table holds
/// it. `sediment_rank` needs it for every row it scores; FTS5 looked each up in that
/// table (a B-tree descent a row: a tenth of a common word's search at 1 M pages).
#[derive(Default)]
pub(super) struct RowTokens {
    /// The doc values' generation ids → entries, which `tokens` follows.
    rows: Arc<Rows>,
    tokens: Vec<u32>,
}

impl RowTokens {
    /// The sizes of the `entries` rows that `rows` maps, from the index's `docsize` table;
    /// a row missing from it is left for FTS5 to read.
    fn load(conn: &Connection, rows: Arc<Rows>, entries: usize, stop: &Stop) -> Result<RowTokens> {
        let mut tokens = vec![ABSENT; entries];
        let mut statement = conn.prepare("SELECT id, sz FROM full_text_entity_index_docsize")?;
        let mut read = statement.query([])?;
        let mut n = 0usize;
        while let Some(row) = read.next()? {
            n += 1;
            if n.is_multiple_of(4096)
                && let Some(reason) = stop.reason()
            {
                return Err(Stopped(reason).into());
            }
            let Some(at) = rows.get(row.get(0)?) else {
                continue;
            };
            let sizes = row.get_ref(1)?.as_blob_or_null()?.unwrap_or_default();
            if let Some(total) = sum_of_varints(sizes) {
                tokens[at] = total;
            }
        }
        Ok(RowTokens { rows, tokens })
    }

    fn get(&self, rowid: i64) -> Option<u32> {
        let tokens = *self.tokens.get(self.rows.get(rowid)?)?;
        (tokens != ABSENT).then_some(tokens)
    }
}

/// The sum of a `docsize` record: one SQLite varint per column (7 bits a byte, most
/// significant first, the high bit set on every byte but the last; a ninth byte gives 8
/// bits). `None` when it is damaged or the sum does not fit below [`ABSENT`].
fn sum_of_varints(mut bytes: &[u8]) -> Option<u32> {
    let mut total: u64 = 0;
    while !bytes.is_empty() {
        let mut value: u64 = 0;
        let mut used = 0;
        loop {
            let &byte = bytes.get(used)?;
            used += 1;
            if used == 9 {
                value = (value << 8) | u64::from(byte);
                break;
            }
            value = (value << 7) | u64::from(byte & 0x7f);
            if byte & 0x80 == 0 {
                break;
            }
        }
        bytes = &bytes[used..];
        total = total.checked_add(value)?;
    }
    u32::try_from(total).ok().filter(|&t| t != ABSENT)
}

thread_local! {
    /// The row sizes of the search running on this thread, if it has doc values.
    static ROW_TOKENS: RefCell<Option<Arc<RowTokens>>> = const { RefCell::new(None) };
}

/// Keeps [`DocValues::row_tokens_in_use`]'s sizes in use; gives back what was before.
pub(super) struct RowTokensInUse(Option<Arc<RowTokens>>);

impl Drop for RowTokensInUse {
    fn drop(&mut self) {
        ROW_TOKENS.set(self.0.take());
    }
}

/// The size in tokens of row `rowid` of the full-text index, when the search running on
/// this thread has it in memory.
pub(super) fn row_tokens(rowid: i64) -> Option<u32> {
    ROW_TOKENS.with_borrow(|tokens| tokens.as_ref()?.get(rowid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docsize_records_sum_their_varints() {
        // 127, 128, 300 and 16,384 as SQLite writes them; nothing; an empty column.
        let record = [0x7f, 0x81, 0x00, 0x82, 0x2c, 0x81, 0x80, 0x00, 0x00];
        assert_eq!(sum_of_varints(&record), Some(127 + 128 + 300 + 16_384));
        assert_eq!(sum_of_varints(&[]), Some(0));
        // A varint cut short, and a sum that does not fit: left for FTS5 to read.
        assert_eq!(sum_of_varints(&[0x05, 0x81]), None);
        assert_eq!(sum_of_varints(&[0x8f, 0xff, 0xff, 0xff, 0x7f]), None);
        // Nine bytes: the last gives all eight of its bits.
        assert_eq!(
            sum_of_varints(&[0x80; 8].iter().chain(&[0xff]).copied().collect::<Vec<_>>()),
            Some(255)
        );
    }

    #[test]
    fn dense_and_sparse_ids_find_their_rows_and_nothing_else() {
        for ids in [
            vec![1, 2, 3, 5, 8, 13],
            vec![-4, 0, 7],
            vec![10, 1 << 40, -(1 << 40)],
            vec![i64::MIN, i64::MAX, 0],
            vec![],
        ] {
            let rows = Rows::from_ids(&ids);
            for (at, &id) in ids.iter().enumerate() {
                assert_eq!(rows.get(id), Some(at), "{ids:?}");
            }
            for id in [4, 6, -1, 1 << 39, i64::MIN + 1, i64::MAX - 1] {
                if !ids.contains(&id) {
                    assert_eq!(rows.get(id), None, "{id} in {ids:?}");
                }
            }
        }
        assert!(matches!(Rows::from_ids(&[1, 2, 3, 5]), Rows::Dense { .. }));
        assert!(matches!(Rows::from_ids(&[1, 1 << 40]), Rows::Sparse(_)));
    }
}
