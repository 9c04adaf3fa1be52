//! The end of a summarizing run: duplicates, the search index and token statistics, for
//! exactly the generations and piles the run changed (the `summary_work` list).

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use anyhow::Result;
use rayon::prelude::*;
use rusqlite::{Connection, params};
use xxhash_rust::xxh3::Xxh3Builder;

use super::duplicates::{Member, duplicate_spans};
use super::rows::{WORK_DUPLICATES, WORK_SEARCH_ROW, WORK_TOKENS, add_work};
use super::{HEAVY_COLUMNS, delete_heavy_rows};
use crate::project::tokenize::{Scratch, Tokenizer};
use crate::report::Counts;

fn work_ids(conn: &Connection, kind: i64) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare("SELECT id FROM summary_work WHERE kind = ?1 ORDER BY id")?;
    let ids = stmt
        .query_map([kind], |r| r.get(0))?
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(ids)
}

/// Recomputes duplicate_summary rows and marked_duplicate for the piles of the work list.
pub fn update_duplicates(conn: &Connection, counts: &mut Counts) -> Result<()> {
    let piles = work_ids(conn, WORK_DUPLICATES)?;
    let mut members_stmt = conn.prepare(
        "SELECT eg.entity_generation_id, url.str_url, eg.first_seen_unix_utc,
                eg.confirmed_end_unix_utc, eg.marked_duplicate
         FROM entity_generation eg JOIN url ON url.url_id = eg.url_id
         WHERE eg.text_pile_id = ?1",
    )?;
    let mut empty_stmt = conn.prepare(
        "SELECT text = '' AND secondary_text = '' AND big_headlines = ''
                AND small_headlines = '' AND code_text = '' AND quote_text = ''
         FROM text_pile WHERE text_pile_id = ?1",
    )?;
    for pile in piles {
        let mut members = Vec::new();
        let mut marked = Vec::new();
        let rows = members_stmt.query_map([pile], |r| {
            Ok((
                Member {
                    generation_id: r.get(0)?,
                    url: r.get(1)?,
                    start: r.get(2)?,
                    end: r.get(3)?,
                },
                r.get::<_, bool>(4)?,
            ))
        })?;
        for row in rows {
            let (member, was_marked) = row?;
            marked.push((member.generation_id, was_marked));
            members.push(member);
        }
        // Pages without any text are all alike; they are not duplicates of each other.
        let empty: bool = empty_stmt.query_row([pile], |r| r.get(0)).unwrap_or(true);
        let spans = if empty || members.len() < 2 {
            Vec::new()
        } else {
            duplicate_spans(&members)
        };
        conn.prepare_cached(
            "DELETE FROM duplicate_summary WHERE subject_entity_generation_id IN
                 (SELECT entity_generation_id FROM entity_generation WHERE text_pile_id = ?1)",
        )?
        .execute([pile])?;
        for span in &spans {
            conn.prepare_cached(
                "INSERT INTO duplicate_summary (subject_entity_generation_id,
                     duplicate_of_entity_generation_id, duplicate_status_start_unix_utc,
                     duplicate_status_end_unix_utc)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![span.subject, span.original, span.start, span.end])?;
        }
        counts.add("duplicate_spans", spans.len() as u64);
        for (generation, was_marked) in marked {
            let now_marked = spans
                .iter()
                .any(|s| s.subject == generation && s.end.is_none());
            if now_marked != was_marked {
                conn.prepare_cached(
                    "UPDATE entity_generation SET marked_duplicate = ?2
                     WHERE entity_generation_id = ?1",
                )?
                .execute(params![generation, now_marked])?;
                add_work(conn, WORK_SEARCH_ROW, generation)?;
            }
        }
    }
    Ok(())
}

/// Writes or removes the search row of every generation on the work list: a row exists
/// for open, non-duplicate generations with a non-empty text pile that are not `noindex`.
///
/// One DELETE and one INSERT for the whole list: FTS5 writes its pending terms to disk at
/// every statement boundary, so a statement per row would make a segment per row.
pub fn update_search_rows(conn: &Connection, counts: &mut Counts) -> Result<()> {
    delete_heavy_rows(
        conn,
        "SELECT id FROM summary_work WHERE kind = ?1",
        WORK_SEARCH_ROW,
    )?;
    conn.execute(
        "DELETE FROM full_text_entity_index
         WHERE rowid IN (SELECT id FROM summary_work WHERE kind = ?1)",
        [WORK_SEARCH_ROW],
    )?;
    let inserted = conn.execute(
        "INSERT INTO full_text_entity_index (rowid, text_pile_id, any, title, description,
             text, secondary_text, big_headlines, small_headlines, code_text, quote_text,
             url_path)
         SELECT eg.entity_generation_id, tp.text_pile_id, 'any',
             COALESCE(NULLIF(dd.title, ''), NULLIF(dd.primary_headline, ''), url.str_url),
             NULLIF(dd.description, ''), tp.text, tp.secondary_text,
             tp.big_headlines, tp.small_headlines, tp.code_text, tp.quote_text,
             replace(replace(replace(COALESCE(url.path, ''), 'index.html', ''), '.html', ''),
                     '.htm', '')
         FROM summary_work w
         JOIN entity_generation eg ON eg.entity_generation_id = w.id
         JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
         JOIN url ON url.url_id = eg.url_id
         LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
         WHERE w.kind = ?1
           AND eg.confirmed_end_unix_utc IS NULL
           AND eg.marked_duplicate = 0
           AND (tp.text <> '' OR tp.secondary_text <> '' OR tp.big_headlines <> ''
                OR tp.small_headlines <> '' OR tp.code_text <> '' OR tp.quote_text <> '')
           AND NOT EXISTS (SELECT 1 FROM crawl_summary cs
                           WHERE cs.entity_generation_id = eg.entity_generation_id
                             AND cs.exit_code IN (171, 180))
         ORDER BY eg.entity_generation_id",
        [WORK_SEARCH_ROW],
    )?;
    // The heaviest columns again, as the search index now holds them.
    conn.execute(
        &format!(
            "INSERT INTO sediment_heavy_index (rowid, {HEAVY_COLUMNS})
             SELECT rowid, {HEAVY_COLUMNS} FROM full_text_entity_index
             WHERE rowid IN (SELECT id FROM summary_work WHERE kind = ?1)
             ORDER BY rowid"
        ),
        [WORK_SEARCH_ROW],
    )?;
    counts.add("search_rows_written", inserted as u64);
    Ok(())
}

/// Piles tokenized per round.
const TOKEN_BATCH: usize = 4096;

/// Rows of token statistics per INSERT statement (3 parameters each, well under SQLite's
/// limit of 32,766).
const INSERT_ROWS: usize = 256;

/// The text fields of a chunk of piles, by pile id.
type PileTexts = Vec<(i64, Vec<String>)>;
/// The tokens of a chunk of piles.
struct TokenCounts {
    /// Each distinct token once, in byte order.
    tokens: Vec<String>,
    /// (pile id, index in `tokens`, occurrences).
    rows: Vec<(i64, usize, i64)>,
}

/// Token statistics for every pile on the work list, a chunk of `TOKEN_BATCH` piles at a
/// time: the piles' texts are read, their tokens counted on the pool (off the connection,
/// while the previous chunk's rows are written) and the counts written.
struct TokenStatistics<'c> {
    conn: &'c Connection,
    chunks: std::vec::IntoIter<Vec<i64>>,
    tokens: TokenIds,
}

impl<'c> TokenStatistics<'c> {
    fn new(conn: &'c Connection, token_cache: usize) -> Result<TokenStatistics<'c>> {
        let piles = work_ids(conn, WORK_TOKENS)?;
        let chunks: Vec<Vec<i64>> = piles.chunks(TOKEN_BATCH).map(<[i64]>::to_vec).collect();
        Ok(TokenStatistics {
            conn,
            chunks: chunks.into_iter(),
            tokens: TokenIds {
                ids: HashMap::new(),
                limit: token_cache.max(1),
            },
        })
    }

    /// The next chunk of piles and their texts.
    fn read_next(&mut self) -> Result<Option<(Vec<i64>, PileTexts)>> {
        let Some(chunk) = self.chunks.next() else {
            return Ok(None);
        };
        let (Some(&low), Some(&high)) = (chunk.first(), chunk.last()) else {
            return Ok(None);
        };
        let texts = self
            .conn
            .prepare_cached(
                "SELECT text_pile_id, text, secondary_text, big_headlines, small_headlines,
                        code_text, quote_text
                 FROM text_pile
                 WHERE text_pile_id IN (SELECT id FROM summary_work
                                        WHERE kind = ?1 AND id BETWEEN ?2 AND ?3)",
            )?
            .query_map(params![WORK_TOKENS, low, high], |r| {
                let mut fields = Vec::with_capacity(6);
                for i in 1..=6 {
                    fields.push(r.get::<_, String>(i)?);
                }
                Ok((r.get::<_, i64>(0)?, fields))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some((chunk, texts)))
    }

    /// Replaces the statistics of a chunk's piles. New tokens get their ids in byte order
    /// within the chunk, so the ids do not depend on the thread count.
    fn write(&mut self, chunk: &[i64], counted: &TokenCounts, counts: &mut Counts) -> Result<()> {
        let conn = self.conn;
        let (Some(&low), Some(&high)) = (chunk.first(), chunk.last()) else {
            return Ok(());
        };
        // Each distinct token looked up once, in byte order.
        let ids = counted
            .tokens
            .iter()
            .map(|token| self.tokens.id(conn, token))
            .collect::<Result<Vec<i64>>>()?;
        let mut stats: Vec<(i64, i64, i64)> = counted
            .rows
            .iter()
            .map(|&(pile, token, n)| (pile, ids[token], n))
            .collect();
        stats.par_sort_unstable();
        conn.execute(
            "DELETE FROM token_statistics WHERE text_pile_id BETWEEN ?2 AND ?3
                 AND text_pile_id IN (SELECT id FROM summary_work WHERE kind = ?1)",
            params![WORK_TOKENS, low, high],
        )?;
        // Many rows per statement: per-statement overhead is most of an insert's cost here.
        let insert_sql = |rows: usize| {
            format!(
                "INSERT INTO token_statistics (text_pile_id, token_id, occurances) VALUES {}",
                vec!["(?, ?, ?)"; rows].join(", ")
            )
        };
        let mut insert_many = conn.prepare_cached(&insert_sql(INSERT_ROWS))?;
        let mut insert_one = conn.prepare_cached(&insert_sql(1))?;
        let mut batches = stats.chunks_exact(INSERT_ROWS);
        for batch in &mut batches {
            let values = batch.iter().flat_map(|(pile, token, n)| [pile, token, n]);
            insert_many.execute(rusqlite::params_from_iter(values))?;
        }
        for (pile, token_id, n) in batches.remainder() {
            insert_one.execute(params![pile, token_id, n])?;
        }
        counts.add("token_statistics", stats.len() as u64);
        Ok(())
    }
}

/// Counts the tokens of piles with the tokenizer of the search index (`porter unicode61`,
/// reimplemented in `project::tokenize` and tested equal to SQLite's), on the pool.
fn count_tokens(texts: PileTexts) -> TokenCounts {
    let per_pile: Vec<(i64, HashMap<String, i64, Xxh3Builder>)> =
        texts
            .par_iter()
            .map_init(Scratch::default, |scratch, (pile, fields)| {
                let mut occurrences: HashMap<String, i64, Xxh3Builder> = HashMap::default();
                for field in fields {
                    Tokenizer::PORTER_UNICODE61.for_each_token(field, scratch, |token| {
                        match occurrences.get_mut(token) {
                            Some(n) => *n += 1,
                            None => {
                                occurrences.insert(token.to_string(), 1);
                            }
                        }
                    });
                }
                (*pile, occurrences)
            })
            .collect();
    // The distinct tokens sorted, rather than every (token, pile) pair: a chunk has a
    // million pairs but a few tens of thousands of tokens.
    let mut distinct: Vec<&str> = per_pile
        .iter()
        .flat_map(|(_, occurrences)| occurrences.keys().map(String::as_str))
        .collect::<HashSet<&str, Xxh3Builder>>()
        .into_iter()
        .collect();
    distinct.par_sort_unstable();
    let index: HashMap<&str, usize, Xxh3Builder> =
        distinct.iter().enumerate().map(|(i, &t)| (t, i)).collect();
    let rows = per_pile
        .iter()
        .flat_map(|(pile, occurrences)| {
            occurrences
                .iter()
                .map(|(token, &n)| (*pile, index[token.as_str()], n))
        })
        .collect();
    TokenCounts {
        tokens: distinct.into_iter().map(str::to_owned).collect(),
        rows,
    }
}

/// token ids by text, looked up or inserted once per run.
struct TokenIds {
    ids: HashMap<String, i64>,
    /// Past this many cached tokens the cache starts over (memory stays bounded).
    limit: usize,
}

impl TokenIds {
    fn id(&mut self, conn: &Connection, token: &str) -> Result<i64> {
        if let Some(&id) = self.ids.get(token) {
            return Ok(id);
        }
        conn.prepare_cached(
            "INSERT INTO token (token_text) VALUES (?1) ON CONFLICT (token_text) DO NOTHING",
        )?
        .execute([token])?;
        let id: i64 = conn
            .prepare_cached("SELECT token_id FROM token WHERE token_text = ?1")?
            .query_row([token], |r| r.get(0))?;
        if self.ids.len() >= self.limit {
            self.ids.clear();
        }
        self.ids.insert(token.to_string(), id);
        Ok(id)
    }
}

/// Runs the three steps and empties the work list. SQLite writes the search rows and the
/// token statistics on this thread; the tokens of each chunk of piles are counted on the
/// pool meanwhile (the first chunk's while the search rows are written, each next one's
/// while the previous one's statistics are).
///
/// `phase` is told which step runs (for the progress bar, which is full by then).
pub fn finish(
    conn: &Connection,
    counts: &mut Counts,
    token_cache: usize,
    phase: &dyn Fn(&str),
) -> Result<()> {
    let started = Instant::now();
    phase("finding duplicates");
    update_duplicates(conn, counts)?;
    counts.add("ms_duplicates", started.elapsed().as_millis() as u64);
    let mut statistics = TokenStatistics::new(conn, token_cache)?;
    std::thread::scope(|scope| -> Result<()> {
        let count_next = |statistics: &mut TokenStatistics| -> Result<_> {
            Ok(statistics
                .read_next()?
                .map(|(chunk, texts)| (chunk, scope.spawn(move || count_tokens(texts)))))
        };
        let mut counting = count_next(&mut statistics)?;
        let started = Instant::now();
        phase("writing the search index");
        update_search_rows(conn, counts)?;
        counts.add("ms_search_rows", started.elapsed().as_millis() as u64);
        let started = Instant::now();
        phase("counting tokens");
        while let Some((chunk, handle)) = counting.take() {
            let counted = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            counting = count_next(&mut statistics)?;
            statistics.write(&chunk, &counted, counts)?;
        }
        // The part of the token statistics the search rows did not hide.
        counts.add("ms_tokens", started.elapsed().as_millis() as u64);
        Ok(())
    })?;
    conn.execute("DELETE FROM summary_work", [])?;
    Ok(())
}
