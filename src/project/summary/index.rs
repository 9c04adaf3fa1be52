//! The end of a summarizing run: duplicates, the search index and token statistics, for
//! exactly the generations and piles the run changed (the `summary_work` list).

use std::collections::HashMap;
use std::time::Instant;

use anyhow::Result;
use rusqlite::{Connection, params};

use super::duplicates::{Member, duplicate_spans};
use super::rows::{WORK_DUPLICATES, WORK_SEARCH_ROW, WORK_TOKENS, add_work};
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
    conn.execute(
        "DELETE FROM full_text_entity_index
         WHERE rowid IN (SELECT id FROM summary_work WHERE kind = ?1)",
        [WORK_SEARCH_ROW],
    )?;
    let inserted = conn.execute(
        "INSERT INTO full_text_entity_index (rowid, text_pile_id, any, title, description,
             text, secondary_text, big_headlines, small_headlines, code_text, quote_text)
         SELECT eg.entity_generation_id, tp.text_pile_id, 'any',
             COALESCE(NULLIF(dd.title, ''), NULLIF(dd.primary_headline, ''), url.str_url),
             COALESCE(dd.description, ''), tp.text, tp.secondary_text,
             tp.big_headlines, tp.small_headlines, tp.code_text, tp.quote_text
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
                             AND cs.exit_code = 171)
         ORDER BY eg.entity_generation_id",
        [WORK_SEARCH_ROW],
    )?;
    counts.add("search_rows_written", inserted as u64);
    Ok(())
}

/// Piles tokenized per round through the scratch full-text table.
const TOKEN_BATCH: usize = 4096;

/// Counts the tokens of every pile on the work list with SQLite's own FTS5 tokenizer
/// (`porter unicode61`, as the search index): each round puts a batch of piles into a
/// contentless scratch table in the temp schema (one statement, with a hash large enough
/// to hold it, so it becomes one segment) and reads the occurrences back through its
/// `fts5vocab` instance view.
pub fn update_token_statistics(conn: &Connection, counts: &mut Counts) -> Result<()> {
    let piles = work_ids(conn, WORK_TOKENS)?;
    let mut tokens = TokenIds::default();
    for chunk in piles.chunks(TOKEN_BATCH) {
        let (Some(&low), Some(&high)) = (chunk.first(), chunk.last()) else {
            continue;
        };
        conn.execute_batch(
            "DROP TABLE IF EXISTS temp.pile_tokens_vocab;
             DROP TABLE IF EXISTS temp.pile_tokens;
             CREATE VIRTUAL TABLE temp.pile_tokens USING fts5(body, content='',
                 tokenize='porter unicode61');
             CREATE VIRTUAL TABLE temp.pile_tokens_vocab
                 USING fts5vocab(temp, pile_tokens, instance);
             INSERT INTO temp.pile_tokens (pile_tokens, rank) VALUES ('hashsize', 268435456);",
        )?;
        // The work ids of this kind between low and high are exactly this chunk.
        conn.execute(
            "INSERT INTO temp.pile_tokens (rowid, body)
             SELECT text_pile_id, text || char(10) || secondary_text || char(10)
                 || big_headlines || char(10) || small_headlines || char(10)
                 || code_text || char(10) || quote_text
             FROM text_pile
             WHERE text_pile_id IN (SELECT id FROM summary_work
                                    WHERE kind = ?1 AND id BETWEEN ?2 AND ?3)",
            params![WORK_TOKENS, low, high],
        )?;
        // The instance view yields (term, doc) in term order, then doc order: count runs.
        let mut stats: Vec<(i64, i64, i64)> = Vec::new();
        {
            let mut stmt = conn.prepare("SELECT term, doc FROM temp.pile_tokens_vocab")?;
            let mut rows = stmt.query([])?;
            let mut term = String::new();
            let mut token_id = 0i64;
            let mut doc = i64::MIN;
            let mut n = 0i64;
            while let Some(row) = rows.next()? {
                let row_term = row.get_ref(0)?.as_str()?;
                let row_doc: i64 = row.get(1)?;
                if row_term == term && row_doc == doc {
                    n += 1;
                    continue;
                }
                if n > 0 {
                    stats.push((doc, token_id, n));
                }
                if row_term != term {
                    term.clear();
                    term.push_str(row_term);
                    token_id = tokens.id(conn, &term)?;
                }
                doc = row_doc;
                n = 1;
            }
            if n > 0 {
                stats.push((doc, token_id, n));
            }
        }
        stats.sort_unstable();
        conn.execute(
            "DELETE FROM token_statistics WHERE text_pile_id BETWEEN ?2 AND ?3
                 AND text_pile_id IN (SELECT id FROM summary_work WHERE kind = ?1)",
            params![WORK_TOKENS, low, high],
        )?;
        let mut insert = conn.prepare_cached(
            "INSERT INTO token_statistics (text_pile_id, token_id, occurances) VALUES (?1, ?2, ?3)",
        )?;
        for (doc, token_id, n) in &stats {
            insert.execute(params![doc, token_id, n])?;
        }
        let written = stats.len();
        counts.add("token_statistics", written as u64);
    }
    conn.execute_batch(
        "DROP TABLE IF EXISTS temp.pile_tokens_vocab;
         DROP TABLE IF EXISTS temp.pile_tokens;",
    )?;
    Ok(())
}

/// token ids by text, looked up or inserted once per run.
#[derive(Default)]
struct TokenIds {
    ids: HashMap<String, i64>,
}

/// Past this many cached tokens the cache starts over (memory stays bounded).
const TOKEN_CACHE_LIMIT: usize = 1 << 21;

impl TokenIds {
    fn id(&mut self, conn: &Connection, token: &str) -> Result<i64> {
        if let Some(&id) = self.ids.get(token) {
            return Ok(id);
        }
        conn.prepare_cached(
            "INSERT INTO token (token) VALUES (?1) ON CONFLICT (token) DO NOTHING",
        )?
        .execute([token])?;
        let id: i64 = conn
            .prepare_cached("SELECT token_id FROM token WHERE token = ?1")?
            .query_row([token], |r| r.get(0))?;
        if self.ids.len() >= TOKEN_CACHE_LIMIT {
            self.ids.clear();
        }
        self.ids.insert(token.to_string(), id);
        Ok(id)
    }
}

/// Runs the three steps and empties the work list.
pub fn finish(conn: &Connection, counts: &mut Counts) -> Result<()> {
    let started = Instant::now();
    update_duplicates(conn, counts)?;
    counts.add("ms_duplicates", started.elapsed().as_millis() as u64);
    let started = Instant::now();
    update_search_rows(conn, counts)?;
    counts.add("ms_search_rows", started.elapsed().as_millis() as u64);
    let started = Instant::now();
    update_token_statistics(conn, counts)?;
    counts.add("ms_tokens", started.elapsed().as_millis() as u64);
    conn.execute("DELETE FROM summary_work", [])?;
    Ok(())
}
