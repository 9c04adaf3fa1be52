//! What a search found beyond one page of hits: how many documents match and how they
//! spread over sites, types and years (facets), and what the whole summary database holds
//! (the landing page of `sediment serve`).
//!
//! The work is bounded whatever the query: the matches are read once, in index order, up
//! to [`COUNT_CAP`] of them (beyond that the total says "more than" and the facets count
//! the first ones); each match costs two lookups by primary key (its URL and its file
//! summary), grouped by integer ids, and only the few values shown are turned into host
//! names and types. Both run under the same [`Stop`] as the search. A first page of
//! results counts in the ranking's own pass instead (`search_page_with_overview`), which
//! reads the same first matches: there the two lookups are joins of that pass, made for every
//! match (looking them up afterwards for the first 10,000 only was measured slower on the
//! bench crawl and no faster on 100,000 pages).

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, params_from_iter, types::Value};
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::{DocValues, Query, Stop, Stopped, interruptible, push_filters};

/// Most matches counted and faceted per query.
pub const COUNT_CAP: usize = 10_000;
/// [`COUNT_CAP`] for a query with a phrase of several words: FTS5 finds a phrase's
/// matches by comparing its words' positions at every row holding them all, and counting
/// 10,000 matches of a phrase of two common words compared them at over 500,000 rows (up
/// to 300 ms at 1 M pages, issue 37). As its IDF is counted (`IDF_PHRASE_COUNT_CAP`).
pub const PHRASE_COUNT_CAP: usize = 1_000;

/// How many matches of `query` are counted and faceted: [`COUNT_CAP`], or
/// [`PHRASE_COUNT_CAP`] with a phrase of several words among its included terms (an
/// identifier such as `os.path.join` is one too: its parts are searched as a phrase).
pub fn count_cap(query: &Query) -> usize {
    if query.include.iter().any(|t| t.words() > 1) {
        PHRASE_COUNT_CAP
    } else {
        COUNT_CAP
    }
}

/// Most values shown per facet (the most frequent).
pub const FACET_VALUES: usize = 12;

/// One value of a facet and how many matches have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FacetValue {
    /// As a filter takes it: `site:VALUE`, `mime:VALUE`, `year:VALUE`.
    pub value: String,
    pub count: u64,
}

/// The facets of a query's matches, most frequent values first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facets {
    /// Host (with its port when not the scheme's default).
    pub site: Vec<FacetValue>,
    /// MIME type of the captured file (`type/subtype`).
    pub mime: Vec<FacetValue>,
    /// Years the version was live (its first to its last capture), newest first.
    pub year: Vec<FacetValue>,
}

/// The total and the facets of a query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Overview {
    /// Matching documents; when not `total_exact`, at least this many ([`count_cap`]).
    pub total: u64,
    pub total_exact: bool,
    pub facets: Facets,
}

/// `year:` filters: the generation was live in one of the years (first seen before its
/// end, last seen after its start).
pub(super) fn push_year_filter(query: &Query, sql: &mut String, values: &mut Vec<Value>) {
    if query.years.is_empty() {
        return;
    }
    let alternatives: Vec<&str> = query
        .years
        .iter()
        .map(|_| "(eg.first_seen_unix_utc < ? AND eg.last_seen_unix_utc >= ?)")
        .collect();
    sql.push_str(&format!(" AND ({})", alternatives.join(" OR ")));
    for year in &query.years {
        values.push(Value::Integer(year_start(year + 1)));
        values.push(Value::Integer(year_start(*year)));
    }
}

fn year_start(year: i32) -> i64 {
    chrono::NaiveDate::from_ymd_opt(year, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map_or(i64::MAX, |t| t.and_utc().timestamp())
}

fn year_of(unix: i64) -> Option<i32> {
    use chrono::Datelike;
    chrono::DateTime::from_timestamp(unix, 0).map(|t| t.year())
}

/// The matches of `query` with the same conditions as the ranked search (open,
/// non-duplicate generations; the site, language, type and year filters), selecting
/// `columns`.
fn matching(query: &Query, columns: &str) -> (String, Vec<Value>) {
    let mut sql = format!(
        "SELECT {columns}
         FROM full_text_entity_index
         JOIN entity_generation eg ON eg.entity_generation_id = full_text_entity_index.rowid
         JOIN url ON url.url_id = eg.url_id
         LEFT JOIN file_summary fs ON fs.entity_generation_id = eg.entity_generation_id
         WHERE full_text_entity_index MATCH ?
           AND eg.confirmed_end_unix_utc IS NULL AND eg.marked_duplicate = 0"
    );
    let mut values: Vec<Value> = vec![Value::Text(query.fts_expression())];
    push_filters(query, &mut sql, &mut values);
    (sql, values)
}

/// The total and facets of `query` ([`count_cap`] matches at most), interrupted inside
/// SQLite when `stop` says so.
pub fn overview(conn: &mut Connection, query: &Query, stop: &Stop) -> Result<Overview> {
    interruptible(conn, stop, |conn| overview_of(conn, query, stop))
}

fn overview_of(conn: &Connection, query: &Query, stop: &Stop) -> Result<Overview> {
    let (mut sql, mut values) = matching(
        query,
        "url.origin_id, fs.mimetype_id, eg.first_seen_unix_utc, eg.last_seen_unix_utc",
    );
    let cap = count_cap(query);
    sql.push_str(" LIMIT ?");
    values.push(Value::Integer(cap as i64 + 1));
    let mut tally = Tally::new(cap);
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    while let Some(row) = rows.next()? {
        if !tally.add(row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?) {
            break;
        }
    }
    tally.finish(conn, None, stop)
}

/// The total and the facets of matches as they are read (in index order): the first
/// `cap` ([`count_cap`]) are counted.
pub(super) struct Tally {
    cap: usize,
    // Integer keys of the matches themselves, up to COUNT_CAP a search: FxHash.
    origins: FxHashMap<i64, u64>,
    mimetypes: FxHashMap<i64, u64>,
    /// (first year, last year) pairs are few: years are expanded once per pair.
    spans: FxHashMap<(i32, i32), u64>,
    total: u64,
    more: bool,
}

impl Tally {
    pub(super) fn new(cap: usize) -> Tally {
        Tally {
            cap,
            origins: FxHashMap::default(),
            mimetypes: FxHashMap::default(),
            spans: FxHashMap::default(),
            total: 0,
            more: false,
        }
    }

    /// Counts the next match (its origin, its file's MIME type and the unix times of its
    /// first and last capture); false when its cap were counted before it (it is
    /// not, and the total is not exact).
    pub(super) fn add(
        &mut self,
        origin: i64,
        mimetype: Option<i64>,
        first_seen: i64,
        last_seen: i64,
    ) -> bool {
        if self.total as usize == self.cap {
            self.more = true;
            return false;
        }
        self.total += 1;
        *self.origins.entry(origin).or_default() += 1;
        if let Some(mimetype) = mimetype {
            *self.mimetypes.entry(mimetype).or_default() += 1;
        }
        if let (Some(first), Some(last)) = (year_of(first_seen), year_of(last_seen)) {
            *self.spans.entry((first, last.max(first))).or_default() += 1;
        }
        true
    }

    /// The overview: the few values shown turned into host names and types.
    pub(super) fn finish(
        self,
        conn: &Connection,
        docs: Option<&DocValues>,
        stop: &Stop,
    ) -> Result<Overview> {
        let Tally {
            origins,
            mimetypes,
            spans,
            total,
            more,
            ..
        } = self;
        let total_exact = !more;
        // Origins of one host (http and https, say) are one site.
        let site = match docs {
            Some(docs) => {
                // Thousands of origins for a common word at 1 M pages: a lookup each in
                // SQLite, then a name each, were a quarter of its search.
                let mut by_site: FxHashMap<u32, u64> = FxHashMap::default();
                for (id, count) in origins {
                    if let Some(site) = docs.site(id) {
                        *by_site.entry(site).or_default() += count;
                    }
                }
                let counted = (by_site.into_iter())
                    .map(|(site, n)| (docs.site_label(site), n))
                    .collect();
                facet_values(top(counted))
            }
            None => {
                let mut sites: HashMap<String, u64> = HashMap::new();
                let mut origin = conn.prepare_cached(
                    "SELECT host, port, scheme FROM origin WHERE origin_id = ? AND host IS NOT NULL",
                )?;
                for (id, count) in origins {
                    if let Some(reason) = stop.reason() {
                        return Err(Stopped(reason).into());
                    }
                    let found = origin
                        .query_map([id], |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, Option<i64>>(1)?,
                                r.get::<_, Option<String>>(2)?,
                            ))
                        })?
                        .next()
                        .transpose()?;
                    if let Some((host, port, scheme)) = found {
                        *sites
                            .entry(site_label(&host, port, scheme.as_deref()))
                            .or_default() += count;
                    }
                }
                facet_values(top(sites.into_iter().collect()))
            }
        };
        let mut mime = conn.prepare_cached(
            "SELECT mime_type || '/' || mime_subtype || COALESCE('+' || mime_suffix, '')
         FROM mimetype WHERE mimetype_id = ?",
        )?;
        let mut types: HashMap<String, u64> = HashMap::new();
        for (id, count) in mimetypes {
            let found: Option<String> = mime.query_map([id], |r| r.get(0))?.next().transpose()?;
            if let Some(essence) = found {
                *types.entry(essence).or_default() += count;
            }
        }
        let mut years: HashMap<i32, u64> = HashMap::new();
        for ((first, last), count) in spans {
            // A version live for centuries (a bad clock) counts in its last years only.
            for year in first.max(last - 100)..=last {
                *years.entry(year).or_default() += count;
            }
        }
        let mut year: Vec<FacetValue> = facet_values(top(years
            .into_iter()
            .map(|(y, n)| (y.to_string(), n))
            .collect()));
        year.sort_by(|a, b| b.value.cmp(&a.value));
        Ok(Overview {
            total,
            total_exact,
            facets: Facets {
                site,
                mime: facet_values(top(types.into_iter().collect())),
                year,
            },
        })
    }
}

/// How the site facet names an origin: its host, with its port unless it is the
/// scheme's default.
pub(super) fn site_label(host: &str, port: Option<i64>, scheme: Option<&str>) -> String {
    let default = matches!(
        (scheme, port),
        (Some("http"), Some(80)) | (Some("https"), Some(443))
    );
    match port {
        Some(port) if !default => format!("{host}:{port}"),
        _ => host.to_owned(),
    }
}

/// The [`FACET_VALUES`] most frequent values, ties by value.
fn top<V: Ord>(mut counted: Vec<(V, u64)>) -> Vec<(V, u64)> {
    let order = |a: &(V, u64), b: &(V, u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0));
    if counted.len() > FACET_VALUES {
        counted.select_nth_unstable_by(FACET_VALUES - 1, order);
        counted.truncate(FACET_VALUES);
    }
    counted.sort_by(order);
    counted
}

fn facet_values<V: Into<String>>(counted: Vec<(V, u64)>) -> Vec<FacetValue> {
    (counted.into_iter())
        .map(|(value, count)| FacetValue {
            value: value.into(),
            count,
        })
        .collect()
}

/// What a summary database holds, for the landing page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Holdings {
    /// Documents the search finds (rows of the full-text index).
    pub searchable: u64,
    /// Captures summarized.
    pub captures: u64,
    pub urls: u64,
    /// Hosts with at least one URL.
    pub hosts: u64,
    /// First and last capture, unix seconds (absent in an empty database).
    pub first_capture: Option<i64>,
    pub last_capture: Option<i64>,
    /// Hosts with the most searchable documents, most first (at most [`FACET_VALUES`]).
    pub largest_hosts: Vec<FacetValue>,
}

/// Counts over the whole database: each a scan of a table or index, so callers keep the
/// answer (per version of the file) rather than asking per request.
pub fn holdings(conn: &mut Connection, stop: &Stop) -> Result<Holdings> {
    interruptible(conn, stop, |conn| {
        let count = |sql: &str| -> Result<u64> {
            Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))?.max(0) as u64)
        };
        let (first_capture, last_capture) = conn.query_row(
            "SELECT min(time_started_unix_utc), max(time_started_unix_utc) FROM crawl_summary",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let largest: Vec<(String, u64)> = conn
            .prepare(
                "SELECT o.host, count(*) AS n
                 FROM full_text_entity_index f
                 JOIN entity_generation eg ON eg.entity_generation_id = f.rowid
                 JOIN url ON url.url_id = eg.url_id
                 JOIN origin o ON o.origin_id = url.origin_id
                 WHERE o.host IS NOT NULL
                 GROUP BY o.host ORDER BY n DESC, o.host LIMIT ?",
            )?
            .query_map([FACET_VALUES as i64], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64))
            })?
            .collect::<Result<_, _>>()?;
        Ok(Holdings {
            searchable: count("SELECT count(*) FROM full_text_entity_index")?,
            captures: count("SELECT count(*) FROM crawl_summary")?,
            urls: count("SELECT count(*) FROM url")?,
            hosts: count("SELECT count(DISTINCT host) FROM origin WHERE host IS NOT NULL")?,
            first_capture,
            last_capture,
            largest_hosts: largest
                .into_iter()
                .map(|(value, count)| FacetValue { value, count })
                .collect(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_of_several_words_is_counted_to_its_own_cap() {
        let cap = |q: &str| count_cap(&Query::parse(q).unwrap());
        assert_eq!(cap("red okapi"), COUNT_CAP);
        assert_eq!(cap("\"okapi\" river"), COUNT_CAP);
        assert_eq!(cap("okapi -\"red okapi\""), COUNT_CAP, "excluded");
        assert_eq!(cap("\"red okapi\""), PHRASE_COUNT_CAP);
        assert_eq!(
            cap("river \"red okapi\" site:zoo.example"),
            PHRASE_COUNT_CAP
        );
        assert_eq!(cap("os.path.join"), PHRASE_COUNT_CAP);
    }

    #[test]
    fn years_start_in_utc() {
        assert_eq!(year_start(1970), 0);
        assert_eq!(year_start(2024), 1_704_067_200);
        assert_eq!(year_of(1_704_067_199), Some(2023));
        assert_eq!(year_of(1_704_067_200), Some(2024));
    }

    #[test]
    fn a_tally_counts_up_to_the_cap() {
        let mut tally = Tally::new(COUNT_CAP);
        for i in 0..COUNT_CAP as i64 {
            assert!(tally.add(i % 3, Some(i % 2), 1_704_067_200, 1_704_067_200));
        }
        assert!(!tally.more);
        assert!(!tally.add(0, None, 0, 0));
        assert!(tally.more);
        assert_eq!(tally.total, COUNT_CAP as u64);
        assert_eq!(tally.origins.values().sum::<u64>(), COUNT_CAP as u64);
        assert_eq!(tally.spans[&(2024, 2024)], COUNT_CAP as u64);
    }

    #[test]
    fn top_values_by_count_then_name() {
        let values = facet_values(top(vec![("b", 2), ("a", 2), ("c", 5)]));
        let names: Vec<&str> = values.iter().map(|v| v.value.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        // More values than are shown: the same first ones as a whole sort gives.
        let many: Vec<(String, u64)> = (0..40u64).map(|i| (format!("v{i:02}"), i % 7)).collect();
        let mut sorted = many.clone();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        sorted.truncate(FACET_VALUES);
        assert_eq!(top(many), sorted);
    }
}
