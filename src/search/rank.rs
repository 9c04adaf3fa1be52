//! The ranking's score, computed inside SQLite by two FTS5 auxiliary functions:
//! `sediment_idf(full_text_entity_index, SPEC)` once per query, then
//! `sediment_rank(full_text_entity_index, SPEC)` for every match ranked.
//!
//! The score is FTS5's bm25 with the column weights (the same arithmetic, in the same
//! order), multiplied by 1 + a boost for each column (title, URL path) that holds every
//! included term. The search used to ask SQLite for `bm25(…) * (1 + b * (rowid IN
//! (SELECT rowid … MATCH '{title} : …')))`; the value is the same, but whether a column
//! holds the terms is read from the row's own instances instead of from a set of the
//! column's matches over the whole index, made before the first row. Three more
//! differences bound the work of a query on a big index (issue 37):
//!
//! * a phrase's document count (its IDF) is counted up to [`IDF_COUNT_CAP`] rows (a
//!   phrase of several words: [`IDF_PHRASE_COUNT_CAP`]) and
//!   extrapolated past them from how far the count got through the generation ids;
//!   bm25 counts every row of every phrase for every statement;
//! * only the query's own phrases are scored, so a statement that adds a condition to
//!   the query's expression (`E AND ({title} : P)`, the title matches of a query with
//!   more matches than are ranked) scores its rows as `E` alone scores them;
//! * with `only_within` in its spec, `sediment_rank` scores only the rows whose given
//!   column sets hold every included term (up to a number a set) and answers NULL for the
//!   others: how the counting pass of a phrase query ranks the matches likeliest to rank
//!   first without another pass over the index.

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

use anyhow::Result;
use rusqlite::Connection;
use rusqlite::ffi;
use serde::{Deserialize, Serialize};

use super::snippet::{Code, check, create_function, fts5_api};

/// Most rows of one phrase counted for its IDF; past them the count is extrapolated.
pub const IDF_COUNT_CAP: u64 = 10_000;

/// [`IDF_COUNT_CAP`] for a phrase of several words, whose rows are found by comparing the
/// positions of its words at every row holding them all: counting 10,000 rows of two
/// common words cost 150 ms at 1 M pages. Past 1,000 rows an IDF changes little with the
/// count (ln of the rows over the count).
pub const IDF_PHRASE_COUNT_CAP: u64 = 1_000;

/// What `sediment_idf` needs: how many rows of a phrase to count at most (of a word, of
/// several words), and the range of row ids (generation ids) a count stopped there is
/// extrapolated over. It answers for every phrase of its statement's expression: the
/// query's own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IdfSpec {
    pub cap: u64,
    /// The cap of a phrase of several words.
    pub phrase_cap: u64,
    pub first_rowid: i64,
    pub last_rowid: i64,
}

/// `sediment_idf`'s answer: the IDF of each phrase and the average row size in tokens.
/// It goes from one statement to the next as a blob of little-endian f64 (the average
/// first): the exact values, as bm25 would use them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Idf {
    pub idf: Vec<f64>,
    pub avgdl: f64,
}

impl Idf {
    pub fn to_blob(&self) -> Vec<u8> {
        std::iter::once(self.avgdl)
            .chain(self.idf.iter().copied())
            .flat_map(f64::to_le_bytes)
            .collect()
    }

    pub fn from_blob(blob: &[u8]) -> Option<Idf> {
        if !blob.len().is_multiple_of(8) || blob.is_empty() {
            return None;
        }
        let mut values = blob
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()));
        let avgdl = values.next()?;
        Some(Idf {
            avgdl,
            idf: values.collect(),
        })
    }
}

/// What `sediment_rank` needs to score a row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RankSpec {
    /// bm25's weight of each column (a column past the end weighs 1, as in bm25).
    pub weights: Vec<f64>,
    /// The query's phrases (its expression's first ones): the only ones scored.
    pub phrases: usize,
    /// Each included term: its alternatives, each the phrases that must all occur (a word
    /// such as `os.path.join` is the whole phrase, or all its parts).
    pub terms: Vec<Vec<Vec<usize>>>,
    /// (column, factor): the score is multiplied by 1 + factor when the column holds
    /// every included term.
    pub boosts: Vec<(i32, f64)>,
    /// When not empty, only a row whose columns of one of these sets hold every included
    /// term is scored; any other row scores NULL (and costs no document-size lookup):
    /// how the counting pass of a phrase query picks the matches likeliest to rank first
    /// from the positions it reads anyway.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_within: Vec<Vec<i32>>,
    /// With `only_within`: at most this many rows of each set are scored, the first the
    /// statement reads (a row is scored while one of its sets has room).
    #[serde(default)]
    pub within_cap: usize,
    /// Every row scored as if of the average size (no size looked up): how
    /// `sediment_heavy_index`'s rows are compared, by how often and where they hold the
    /// terms; the same whether the search has doc values or not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub average_size: bool,
}

/// Registers `sediment_idf` and `sediment_rank` on `conn`.
pub fn register(conn: &Connection) -> Result<()> {
    let api = fts5_api(conn)?;
    create_function(api, c"sediment_idf", null_mut(), Some(sediment_idf), None)?;
    create_function(api, c"sediment_rank", null_mut(), Some(sediment_rank), None)
}

/// The bytes of argument `i` after the table (text or blob), if given.
fn argument<'a>(
    i: usize,
    n_values: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Option<&'a [u8]> {
    if i >= n_values.max(0) as usize {
        return None;
    }
    // SAFETY: FTS5 passes `n_values` valid values; the bytes live as long as the value,
    // which outlives this call.
    unsafe {
        let value = *values.add(i);
        let bytes = ffi::sqlite3_value_blob(value);
        let length = ffi::sqlite3_value_bytes(value);
        (!bytes.is_null() && length >= 0)
            .then(|| std::slice::from_raw_parts(bytes.cast::<u8>(), length as usize))
    }
}

unsafe extern "C" fn sediment_idf(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_values: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes a valid API and context.
    let api = unsafe { &*api };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let spec: IdfSpec = argument(0, n_values, values)
            .and_then(|s| serde_json::from_slice(s).ok())
            .ok_or(ffi::SQLITE_MISUSE)?;
        Ok(idf(api, fts, &spec)?.to_blob())
    }));
    // SAFETY: `ctx` is the function's result context; the blob is copied (TRANSIENT).
    unsafe {
        match result {
            Ok(Ok(blob)) => ffi::sqlite3_result_blob(
                ctx,
                blob.as_ptr().cast(),
                blob.len() as c_int,
                ffi::SQLITE_TRANSIENT(),
            ),
            Ok(Err(code)) => ffi::sqlite3_result_error_code(ctx, code),
            Err(_) => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_INTERNAL),
        }
    }
}

/// A phrase's rows counted by `xQueryPhrase`, up to a cap.
struct Count {
    rows: u64,
    cap: u64,
    /// The row id the count stopped at, when it reached the cap.
    stopped_at: Option<i64>,
}

unsafe extern "C" fn count_row(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the `Count` that `idf` passed; `api` and `fts` are FTS5's.
    let count = unsafe { &mut *user.cast::<Count>() };
    count.rows += 1;
    if count.rows > count.cap {
        // SAFETY: as above; xRowid only reads the cursor.
        count.stopped_at = unsafe { (*api).xRowid.map(|rowid| rowid(fts)) };
        // Ends xQueryPhrase's loop without an error.
        return ffi::SQLITE_DONE;
    }
    ffi::SQLITE_OK
}

/// bm25's IDF of each of the query's phrases (`log((N - n + 0.5) / (n + 0.5))`, at least
/// 1e-6) and its average row size, with each document count `n` counted up to the cap.
fn idf(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    spec: &IdfSpec,
) -> std::result::Result<Idf, Code> {
    let (mut rows, mut tokens): (i64, i64) = (0, 0);
    // SAFETY: the API functions are called with the context FTS5 gave.
    unsafe {
        check((api.xRowCount.ok_or(ffi::SQLITE_MISUSE)?)(fts, &mut rows))?;
        check((api.xColumnTotalSize.ok_or(ffi::SQLITE_MISUSE)?)(
            fts,
            -1,
            &mut tokens,
        ))?;
    }
    // SAFETY: as above.
    let phrases = unsafe { (api.xPhraseCount.ok_or(ffi::SQLITE_MISUSE)?)(fts) }.max(0);
    let query_phrase = api.xQueryPhrase.ok_or(ffi::SQLITE_MISUSE)?;
    let phrase_size = api.xPhraseSize.ok_or(ffi::SQLITE_MISUSE)?;
    let mut idf = Vec::with_capacity(phrases as usize);
    for phrase in 0..phrases {
        // SAFETY: as above, with a phrase number below the count.
        let words = unsafe { phrase_size(fts, phrase) };
        let mut count = Count {
            rows: 0,
            cap: if words > 1 { spec.phrase_cap } else { spec.cap },
            stopped_at: None,
        };
        // SAFETY: `count` outlives the call; `count_row` is given it back.
        check(unsafe {
            query_phrase(
                fts,
                phrase,
                (&mut count as *mut Count).cast(),
                Some(count_row),
            )
        })?;
        let hits = match count.stopped_at {
            Some(at) => extrapolate(count.rows, at, spec, rows),
            None => count.rows as i64,
        };
        // As bm25 computes it.
        let value = (((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
        idf.push(if value <= 0.0 { 1e-6 } else { value });
    }
    Ok(Idf {
        idf,
        avgdl: tokens as f64 / rows as f64,
    })
}

/// A document count from the first `counted` rows (one more than the cap), which ended at
/// row id `at`: the same density over the whole range of row ids, at most every row.
fn extrapolate(counted: u64, at: i64, spec: &IdfSpec, rows: i64) -> i64 {
    let span = (spec.last_rowid.saturating_sub(spec.first_rowid)).saturating_add(1) as f64;
    let covered = (at.saturating_sub(spec.first_rowid)).saturating_add(1) as f64;
    if span <= 0.0 || covered <= 0.0 {
        return counted as i64;
    }
    let estimate = (counted as f64 * (span / covered).max(1.0)).round() as i64;
    estimate.clamp(counted as i64, rows.max(counted as i64))
}

/// `sediment_rank`'s spec and IDFs, read once per statement, and its scratch space.
struct Ranker {
    spec: RankSpec,
    idf: Idf,
    frequency: Vec<f64>,
    /// Per boost, per phrase: whether the phrase occurs in the boost's column.
    present: Vec<Vec<bool>>,
    /// Per set of `only_within`, per phrase: whether the phrase occurs in the set.
    within: Vec<Vec<bool>>,
    /// Per set of `only_within`: how many rows held every term in it so far.
    taken: Vec<usize>,
}

unsafe extern "C" fn drop_ranker(ranker: *mut c_void) {
    if !ranker.is_null() {
        // SAFETY: made by `Box::into_raw` in `sediment_rank`; FTS5 calls this once.
        drop(unsafe { Box::from_raw(ranker.cast::<Ranker>()) });
    }
}

unsafe extern "C" fn sediment_rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_values: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes a valid API and context.
    let api = unsafe { &*api };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let get = api.xGetAuxdata.ok_or(ffi::SQLITE_MISUSE)?;
        // SAFETY: the aux data of this function on this cursor is a `Ranker` or null.
        let mut ranker = unsafe { get(fts, 0) }.cast::<Ranker>();
        if ranker.is_null() {
            let spec: RankSpec = argument(0, n_values, values)
                .and_then(|s| serde_json::from_slice(s).ok())
                .ok_or(ffi::SQLITE_MISUSE)?;
            let idf = argument(1, n_values, values)
                .and_then(Idf::from_blob)
                .ok_or(ffi::SQLITE_MISUSE)?;
            let phrases = spec.phrases;
            if idf.idf.len() != phrases
                || spec.terms.iter().flatten().flatten().any(|&p| p >= phrases)
            {
                return Err(ffi::SQLITE_MISUSE);
            }
            let made = Box::into_raw(Box::new(Ranker {
                frequency: vec![0.0; phrases],
                present: vec![vec![false; phrases]; spec.boosts.len()],
                within: vec![vec![false; phrases]; spec.only_within.len()],
                taken: vec![0; spec.only_within.len()],
                spec,
                idf,
            }));
            let set = api.xSetAuxdata.ok_or(ffi::SQLITE_MISUSE)?;
            // SAFETY: FTS5 keeps the pointer and frees it through `drop_ranker` (also
            // when setting it fails).
            check(unsafe { set(fts, made.cast(), Some(drop_ranker)) })?;
            ranker = made;
        }
        // SAFETY: made above or on an earlier row of this cursor; one call at a time.
        let ranker = unsafe { &mut *ranker };
        ranker.score(api, fts)
    }));
    // SAFETY: `ctx` is the function's result context.
    unsafe {
        match result {
            Ok(Ok(Some(score))) => ffi::sqlite3_result_double(ctx, score),
            Ok(Ok(None)) => ffi::sqlite3_result_null(ctx),
            Ok(Err(code)) => ffi::sqlite3_result_error_code(ctx, code),
            Err(_) => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_INTERNAL),
        }
    }
}

impl Ranker {
    fn score(
        &mut self,
        api: &ffi::Fts5ExtensionApi,
        fts: *mut ffi::Fts5Context,
    ) -> std::result::Result<Option<f64>, Code> {
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        let spec = &self.spec;
        self.frequency.iter_mut().for_each(|f| *f = 0.0);
        for present in self.present.iter_mut().chain(&mut self.within) {
            present.iter_mut().for_each(|p| *p = false);
        }
        let mut instances = 0;
        let tokens: Option<i64>;
        // SAFETY: the API functions are called with the context FTS5 gave.
        unsafe {
            check((api.xInstCount.ok_or(ffi::SQLITE_MISUSE)?)(
                fts,
                &mut instances,
            ))?;
            let inst = api.xInst.ok_or(ffi::SQLITE_MISUSE)?;
            for i in 0..instances {
                let (mut phrase, mut column, mut offset) = (0, 0, 0);
                check(inst(fts, i, &mut phrase, &mut column, &mut offset))?;
                let phrase = phrase.max(0) as usize;
                if phrase >= spec.phrases {
                    continue;
                }
                let weight = usize::try_from(column)
                    .ok()
                    .and_then(|c| spec.weights.get(c))
                    .copied()
                    .unwrap_or(1.0);
                self.frequency[phrase] += weight;
                for (b, (boosted, _)) in spec.boosts.iter().enumerate() {
                    if *boosted == column {
                        self.present[b][phrase] = true;
                    }
                }
                for (set, columns) in spec.only_within.iter().enumerate() {
                    if columns.contains(&column) {
                        self.within[set][phrase] = true;
                    }
                }
            }
            if !spec.only_within.is_empty() {
                let mut room = false;
                for (present, taken) in self.within.iter().zip(&mut self.taken) {
                    if holds(&spec.terms, present) {
                        room |= *taken < spec.within_cap;
                        *taken += 1;
                    }
                }
                if !room {
                    return Ok(None);
                }
            }
            let rowid = api.xRowid.ok_or(ffi::SQLITE_MISUSE)?;
            tokens = match spec.average_size {
                true => None,
                false => match super::docvalues::row_tokens(rowid(fts)) {
                    Some(known) => Some(i64::from(known)),
                    None => {
                        let mut read = 0;
                        check((api.xColumnSize.ok_or(ffi::SQLITE_MISUSE)?)(
                            fts, -1, &mut read,
                        ))?;
                        Some(i64::from(read))
                    }
                },
            };
        }
        let size = tokens.map_or(self.idf.avgdl, |tokens| tokens as f64);
        let mut score = 0.0;
        for (idf, frequency) in self.idf.idf.iter().zip(&self.frequency) {
            score += idf
                * ((frequency * (K1 + 1.0))
                    / (frequency + K1 * (1.0 - B + B * size / self.idf.avgdl)));
        }
        // bm25 answers -1.0 * score: the same bits.
        let mut score = -score;
        for ((_, factor), present) in spec.boosts.iter().zip(&self.present) {
            score *= 1.0 + factor * f64::from(u8::from(holds(&spec.terms, present)));
        }
        Ok(Some(score))
    }
}

/// Whether every term (one of its alternatives: all of that alternative's phrases) is
/// `present`.
fn holds(terms: &[Vec<Vec<usize>>], present: &[bool]) -> bool {
    terms.iter().all(|alternatives| {
        alternatives
            .iter()
            .any(|all| all.iter().all(|&p| present[p]))
    })
}

#[cfg(test)]
mod tests {
    use super::super::Query;
    use super::*;

    /// An index with the summary's columns, the ranking functions registered.
    fn index(rows: &[(&str, &str)]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE full_text_entity_index USING fts5(
                 text_pile_id UNINDEXED, any, title, description, text, secondary_text,
                 big_headlines, small_headlines, code_text, quote_text, url_path,
                 tokenize='porter unicode61');",
        )
        .unwrap();
        for (title, text) in rows {
            conn.execute(
                "INSERT INTO full_text_entity_index (any, title, text) VALUES ('any', ?, ?)",
                [title, text],
            )
            .unwrap();
        }
        register(&conn).unwrap();
        conn
    }

    fn idf_of(conn: &Connection, expression: &str, cap: u64) -> Option<Idf> {
        idf_capped(conn, expression, cap, cap)
    }

    fn idf_capped(conn: &Connection, expression: &str, cap: u64, phrase_cap: u64) -> Option<Idf> {
        let spec = serde_json::to_string(&IdfSpec {
            cap,
            phrase_cap,
            first_rowid: 1,
            last_rowid: 1000,
        })
        .unwrap();
        conn.query_row(
            "SELECT sediment_idf(full_text_entity_index, ?) FROM full_text_entity_index
             WHERE full_text_entity_index MATCH ? LIMIT 1",
            [spec, expression.to_string()],
            |r| r.get::<_, Vec<u8>>(0),
        )
        .ok()
        .and_then(|blob| Idf::from_blob(&blob))
    }

    #[test]
    fn phrases_are_numbered_as_fts5_numbers_them() {
        let conn = index(&[
            (
                "os.path — pathname manipulations",
                "os.path.join(a, b) joins paths by the lake of sediments",
            ),
            (
                "the animal lake",
                "any mud in the lake; sedi-ments and gen_server:call",
            ),
        ]);
        for input in [
            "lake",
            "os.path.join",
            "os.path.join lake",
            "\"the animal\" lake",
            "sedi* lake -mud",
            "gen_server:call -\"core sample\" -paths",
            "-mud",
        ] {
            let query = Query::parse(input).unwrap();
            let included = query.included_phrases();
            let positive = included.iter().flatten().flatten().count();
            let expected = positive.max(usize::from(included.is_empty())) + query.exclude.len();
            let idf = idf_of(&conn, &query.fts_expression(), 100)
                .unwrap_or_else(|| panic!("{input}: no match"));
            assert_eq!(idf.idf.len(), expected, "{input}");
            // Each alternative's phrases are numbered after the previous term's.
            let numbers: Vec<usize> = included.iter().flatten().flatten().copied().collect();
            assert_eq!(numbers, (0..positive).collect::<Vec<_>>(), "{input}");
        }
    }

    #[test]
    fn a_phrase_counted_past_the_cap_gets_an_extrapolated_idf() {
        let rows: Vec<(&str, &str)> = (0..40).map(|_| ("lake", "mud")).collect();
        let conn = index(&rows);
        // 40 rows of 1,000 ids: counted whole, then stopped after 11 rows at id 11, which
        // extrapolates to every row.
        let exact = idf_of(&conn, "lake", 100).unwrap();
        let capped = idf_of(&conn, "lake", 10).unwrap();
        let bm25 = |hits: f64| ((40.0 - hits + 0.5) / (hits + 0.5)).ln().max(1e-6);
        assert_eq!(exact.idf, vec![bm25(40.0)]);
        assert_eq!(capped.idf, vec![bm25(40.0)]);
        assert_eq!(exact.avgdl, 3.0);
        assert_eq!(Idf::from_blob(&exact.to_blob()), Some(exact));
    }

    #[test]
    fn a_phrase_of_several_words_has_a_cap_of_its_own() {
        // Row ids 1-40; the first ten hold the phrase (and so both words).
        let rows: Vec<(&str, &str)> = (0..40)
            .map(|i| {
                if i < 10 {
                    ("lake mud", "")
                } else {
                    ("other", "")
                }
            })
            .collect();
        let conn = index(&rows);
        let bm25 = |hits: f64| ((40.0 - hits + 0.5) / (hits + 0.5)).ln().max(1e-6);
        let exact = idf_capped(&conn, "\"lake mud\" lake", 100, 100).unwrap();
        assert_eq!(exact.idf, vec![bm25(10.0), bm25(10.0)]);
        // Under a phrase cap of 4 the phrase's count stops at its fifth row (id 5), which
        // extrapolates to every row; the word keeps its own cap and its exact count.
        let capped = idf_capped(&conn, "\"lake mud\" lake", 100, 4).unwrap();
        assert_eq!(capped.idf, vec![bm25(40.0), bm25(10.0)]);
    }

    #[test]
    fn a_count_stopped_at_the_cap_is_extrapolated_over_the_row_ids() {
        let spec = IdfSpec {
            cap: 100,
            phrase_cap: 100,
            first_rowid: 1,
            last_rowid: 1000,
        };
        // 100 rows in the first quarter of the ids: about 400 in all.
        assert_eq!(extrapolate(100, 250, &spec, 1000), 400);
        // Never fewer than counted, never more than the rows.
        assert_eq!(extrapolate(100, 2000, &spec, 1000), 100);
        assert_eq!(extrapolate(100, 1, &spec, 1000), 1000);
    }

    #[test]
    fn only_the_rows_holding_the_terms_in_a_set_are_scored_up_to_its_cap() {
        // Row ids 1-5; the title is column 2, the text column 4.
        let conn = index(&[
            ("lake mud", "nothing"),
            ("lake", "mud"),
            ("mud lake", "lake"),
            ("other", "lake mud"),
            ("lake mud again", "mud"),
        ]);
        let query = Query::parse("lake mud").unwrap();
        let expression = query.fts_expression();
        let idf = idf_of(&conn, &expression, 100).unwrap();
        let spec = |only_within: Vec<Vec<i32>>, within_cap| RankSpec {
            weights: vec![0.0, 0.0, 10.0, 3.0, 1.0],
            phrases: 2,
            terms: query.included_phrases(),
            boosts: vec![(2, 1.0)],
            only_within,
            within_cap,
            average_size: false,
        };
        let scores = |spec: RankSpec| -> Vec<(i64, Option<f64>)> {
            let mut statement = conn
                .prepare(
                    "SELECT rowid, sediment_rank(full_text_entity_index, ?, ?)
                     FROM full_text_entity_index WHERE full_text_entity_index MATCH ?",
                )
                .unwrap();
            statement
                .query_map(
                    rusqlite::params![
                        serde_json::to_string(&spec).unwrap(),
                        idf.to_blob(),
                        expression
                    ],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let all = scores(spec(Vec::new(), 0));
        assert!(all.iter().all(|(_, score)| score.is_some()), "{all:?}");
        let score_of = |rowid: i64| all.iter().find(|r| r.0 == rowid).unwrap().1;
        // Both words in the title: rows 1, 3, 5 (the same scores as scoring every row);
        // row 2 has one in the text, row 4 none in the title.
        let in_title = scores(spec(vec![vec![2]], 10));
        let expected: Vec<(i64, Option<f64>)> = (1..=5)
            .map(|rowid| {
                (
                    rowid,
                    [1, 3, 5]
                        .contains(&rowid)
                        .then(|| score_of(rowid))
                        .flatten(),
                )
            })
            .collect();
        assert_eq!(in_title, expected);
        // At most two of the title's: the first two read.
        let scored = |spec: RankSpec| -> Vec<i64> {
            scores(spec)
                .into_iter()
                .filter(|r| r.1.is_some())
                .map(|r| r.0)
                .collect()
        };
        assert_eq!(scored(spec(vec![vec![2]], 2)), [1, 3]);
        // A row is scored while one of its sets has room: with the title's two taken,
        // row 5 (title only) is not, row 4 (both words in the text) is.
        assert_eq!(scored(spec(vec![vec![2], vec![4]], 2)), [1, 3, 4]);
    }
}
