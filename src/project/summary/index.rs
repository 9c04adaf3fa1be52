//! The end of a summarizing run: duplicates, the search index and token statistics, for
//! exactly the generations and piles the run changed (the `summary_work` list).

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
pub fn update_search_rows(conn: &Connection, counts: &mut Counts) -> Result<()> {
    for generation in work_ids(conn, WORK_SEARCH_ROW)? {
        conn.prepare_cached("DELETE FROM full_text_entity_index WHERE rowid = ?1")?
            .execute([generation])?;
        let inserted = conn
            .prepare_cached(
                "INSERT INTO full_text_entity_index (rowid, text_pile_id, any, title,
                     description, text, secondary_text, big_headlines, small_headlines,
                     code_text, quote_text)
                 SELECT eg.entity_generation_id, tp.text_pile_id, 'any',
                     COALESCE(NULLIF(dd.title, ''), NULLIF(dd.primary_headline, ''), url.str_url),
                     COALESCE(dd.description, ''), tp.text, tp.secondary_text,
                     tp.big_headlines, tp.small_headlines, tp.code_text, tp.quote_text
                 FROM entity_generation eg
                 JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
                 JOIN url ON url.url_id = eg.url_id
                 LEFT JOIN document_description dd
                     ON dd.entity_generation_id = eg.entity_generation_id
                 WHERE eg.entity_generation_id = ?1
                   AND eg.confirmed_end_unix_utc IS NULL
                   AND eg.marked_duplicate = 0
                   AND (tp.text <> '' OR tp.secondary_text <> '' OR tp.big_headlines <> ''
                        OR tp.small_headlines <> '' OR tp.code_text <> '' OR tp.quote_text <> '')
                   AND NOT EXISTS (SELECT 1 FROM crawl_summary cs
                                   WHERE cs.entity_generation_id = eg.entity_generation_id
                                     AND cs.exit_code = 171)",
            )?
            .execute([generation])?;
        counts.add("search_rows_written", inserted as u64);
    }
    Ok(())
}

/// Piles tokenized per round through the scratch full-text table.
const TOKEN_BATCH: usize = 512;

/// Counts the tokens of every pile on the work list with SQLite's own FTS5 tokenizer
/// (`porter unicode61`, as the search index), through a scratch table in the temp schema
/// and its `fts5vocab` instance view.
pub fn update_token_statistics(conn: &Connection, counts: &mut Counts) -> Result<()> {
    let piles = work_ids(conn, WORK_TOKENS)?;
    if piles.is_empty() {
        return Ok(());
    }
    conn.execute_batch(
        "DROP TABLE IF EXISTS temp.pile_tokens_vocab;
         DROP TABLE IF EXISTS temp.pile_tokens;
         CREATE VIRTUAL TABLE temp.pile_tokens USING fts5(body, tokenize='porter unicode61');
         CREATE VIRTUAL TABLE temp.pile_tokens_vocab USING fts5vocab(temp, pile_tokens, instance);",
    )?;
    for chunk in piles.chunks(TOKEN_BATCH) {
        conn.execute("DELETE FROM temp.pile_tokens", [])?;
        for &pile in chunk {
            conn.prepare_cached(
                "INSERT INTO temp.pile_tokens (rowid, body)
                 SELECT text_pile_id, text || char(10) || secondary_text || char(10)
                     || big_headlines || char(10) || small_headlines || char(10)
                     || code_text || char(10) || quote_text
                 FROM text_pile WHERE text_pile_id = ?1",
            )?
            .execute([pile])?;
            conn.prepare_cached("DELETE FROM token_statistics WHERE text_pile_id = ?1")?
                .execute([pile])?;
        }
        conn.execute(
            "INSERT OR IGNORE INTO token (token) SELECT DISTINCT term FROM temp.pile_tokens_vocab",
            [],
        )?;
        let written = conn.execute(
            "INSERT INTO token_statistics (token_id, text_pile_id, occurances)
             SELECT t.token_id, v.doc, count(*)
             FROM temp.pile_tokens_vocab v JOIN token t ON t.token = v.term
             GROUP BY v.doc, t.token_id",
            [],
        )?;
        counts.add("token_statistics", written as u64);
    }
    conn.execute_batch(
        "DROP TABLE temp.pile_tokens_vocab;
         DROP TABLE temp.pile_tokens;",
    )?;
    Ok(())
}

/// Runs the three steps and empties the work list.
pub fn finish(conn: &Connection, counts: &mut Counts) -> Result<()> {
    update_duplicates(conn, counts)?;
    update_search_rows(conn, counts)?;
    update_token_statistics(conn, counts)?;
    conn.execute("DELETE FROM summary_work", [])?;
    Ok(())
}
