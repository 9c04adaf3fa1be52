//! Writing and deleting the rows that hang off an entity generation.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, Statement, params};
use url::Url;
use uuid::Uuid;

use super::keys::ContentKey;
use super::payloads::Analysis;
use crate::html::Link;
use crate::project::base::BaseIds;

/// Work kinds of `summary_work`.
pub const WORK_SEARCH_ROW: i64 = 1;
pub const WORK_DUPLICATES: i64 = 2;
pub const WORK_TOKENS: i64 = 3;

pub fn add_work(conn: &Connection, kind: i64, id: i64) -> Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO summary_work (kind, id) VALUES (?1, ?2)")?
        .execute(params![kind, id])?;
    Ok(())
}

/// A new generation row.
pub struct NewGeneration<'a> {
    pub url_id: i64,
    pub uuid: Uuid,
    pub key: &'a ContentKey,
    pub first_seen: i64,
    pub last_seen: i64,
    pub confirmed_end: Option<i64>,
    pub text_pile_id: Option<i64>,
}

pub fn insert_generation(conn: &Connection, g: &NewGeneration) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO entity_generation (url_id, first_seen_unix_utc, last_seen_unix_utc,
             confirmed_end_unix_utc, marked_duplicate, entity_generation_uuid, url_fragment,
             text_pile_id, content_key)
         VALUES (?1, ?2, ?3, ?4, 0, ?5, NULL, ?6, ?7)",
    )?
    .execute(params![
        g.url_id,
        g.first_seen,
        g.last_seen,
        g.confirmed_end,
        g.uuid.as_bytes().as_slice(),
        g.text_pile_id,
        g.key.to_bytes()
    ])?;
    Ok(conn.last_insert_rowid())
}

pub fn update_generation_times(
    conn: &Connection,
    id: i64,
    first_seen: i64,
    last_seen: i64,
    confirmed_end: Option<i64>,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE entity_generation SET first_seen_unix_utc = ?2, last_seen_unix_utc = ?3,
             confirmed_end_unix_utc = ?4
         WHERE entity_generation_id = ?1",
    )?
    .execute(params![id, first_seen, last_seen, confirmed_end])?;
    Ok(())
}

/// Deletes a generation with everything attached to it, including its search row and the
/// crawl summaries of its captures (the caller writes them again).
pub fn delete_generation(conn: &Connection, id: i64) -> Result<()> {
    super::delete_heavy_rows(conn, "?1", id)?;
    for sql in [
        "DELETE FROM full_text_entity_index WHERE rowid = ?1",
        "DELETE FROM link_summary WHERE entity_generation_id = ?1",
        "DELETE FROM document_description WHERE entity_generation_id = ?1",
        "DELETE FROM file_summary WHERE entity_generation_id = ?1",
        "DELETE FROM redirect_summary WHERE entity_generation_id = ?1",
        "DELETE FROM duplicate_summary
         WHERE subject_entity_generation_id = ?1 OR duplicate_of_entity_generation_id = ?1",
        "DELETE FROM http_summary WHERE crawl_summary_id IN
             (SELECT crawl_summary_id FROM crawl_summary WHERE entity_generation_id = ?1)",
        "DELETE FROM crawl_summary WHERE entity_generation_id = ?1",
        "DELETE FROM summary_work WHERE kind = 1 AND id = ?1",
        "DELETE FROM entity_generation WHERE entity_generation_id = ?1",
    ] {
        conn.prepare_cached(sql)?.execute([id])?;
    }
    Ok(())
}

/// file_summary of a content generation.
pub fn insert_file_summary(
    conn: &Connection,
    ids: &mut BaseIds,
    generation: i64,
    file_size: Option<u64>,
    content_type: Option<&str>,
    canonical: Option<&Url>,
) -> Result<()> {
    let mimetype_id = match content_type {
        Some(raw) => ids.mimetype_id(conn, raw)?,
        None => None,
    };
    let canonical_url_id = match canonical {
        Some(url) => Some(ids.url_id(conn, url)?),
        None => None,
    };
    conn.prepare_cached(
        "INSERT OR REPLACE INTO file_summary (entity_generation_id, file_size, mimetype_id,
             canonical_url_id, canonical_url_fragment)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        generation,
        file_size.map(|s| s as i64),
        mimetype_id,
        canonical_url_id,
        canonical.and_then(Url::fragment)
    ])?;
    Ok(())
}

/// redirect_summary. information_source: 1 response header, 3 file body.
pub fn insert_redirect_summary(
    conn: &Connection,
    ids: &mut BaseIds,
    generation: i64,
    from: &Url,
    to: &Url,
    information_source: i64,
    is_permanent: bool,
) -> Result<()> {
    let to_url_id = ids.url_id(conn, to)?;
    // An upgrade to https of the same host and path is a security policy, not a move.
    let by_security_policy = from.scheme() == "http"
        && to.scheme() == "https"
        && from.host_str() == to.host_str()
        && from.path() == to.path()
        && from.query() == to.query();
    conn.prepare_cached(
        "INSERT OR REPLACE INTO redirect_summary (entity_generation_id, to_url_id,
             to_url_fragment, information_source, is_permanent, by_security_policy)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        generation,
        to_url_id,
        to.fragment(),
        information_source,
        is_permanent,
        by_security_policy
    ])?;
    Ok(())
}

/// document_description and link_summary rows of an HTML generation.
pub fn insert_document(
    conn: &Connection,
    ids: &mut BaseIds,
    generation: i64,
    analysis: &Analysis,
) -> Result<u64> {
    let d = &analysis.description;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO document_description (entity_generation_id,
             time_created_unix_utc, time_updated_unix_utc, primary_language, title,
             primary_headline, description, indexiness)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        generation,
        d.created,
        d.updated,
        non_empty(&d.primary_language),
        non_empty(&d.title),
        non_empty(&d.primary_headline),
        non_empty(&d.description),
        if d.indexiness.is_finite() {
            d.indexiness
        } else {
            0.0
        }
    ])?;
    // Many rows per statement: an HTML crawl has hundreds of links a page, and a
    // statement's own cost (binding aside) is most of a one-row insert's.
    let mut many = conn.prepare_cached(&link_insert_sql(LINK_ROWS))?;
    let mut one = conn.prepare_cached(&link_insert_sql(1))?;
    let mut chunks = analysis.links.chunks_exact(LINK_ROWS);
    for chunk in &mut chunks {
        for (i, link) in chunk.iter().enumerate() {
            let target = ids.url_id(conn, &link.url)?;
            bind_link(&mut many, i * LINK_COLUMNS, generation, target, link)?;
        }
        many.raw_execute()?;
    }
    for link in chunks.remainder() {
        let target = ids.url_id(conn, &link.url)?;
        bind_link(&mut one, 0, generation, target, link)?;
        one.raw_execute()?;
    }
    Ok(analysis.links.len() as u64)
}

/// Rows of link_summary per INSERT statement (`LINK_COLUMNS` parameters each).
const LINK_ROWS: usize = 32;
const LINK_COLUMNS: usize = 26;

fn link_insert_sql(rows: usize) -> String {
    let row = format!("({})", vec!["?"; LINK_COLUMNS].join(", "));
    format!(
        "INSERT INTO link_summary (entity_generation_id, link_to_url, link_to_fragment,
             rel_nofollow, rel_me, rel_tag, in_header, in_footer, in_aside, in_nav, in_form,
             in_main, in_article, in_section, in_table, in_figure, in_address, in_code,
             in_headline, in_list, in_paragraph, contains_headline, destination_type,
             link_locality, html_tag_name, text)
         VALUES {}",
        vec![row; rows].join(", ")
    )
}

/// Binds one link's row to parameters `offset + 1 ..= offset + LINK_COLUMNS`.
fn bind_link(
    stmt: &mut Statement,
    offset: usize,
    generation: i64,
    target: i64,
    link: &Link,
) -> Result<()> {
    let l = &link.location;
    let flags = [
        link.rel.nofollow,
        link.rel.me,
        link.rel.tag,
        l.in_header,
        l.in_footer,
        l.in_aside,
        l.in_nav,
        l.in_form,
        l.in_main,
        l.in_article,
        l.in_section,
        l.in_table,
        l.in_figure,
        l.in_address,
        l.in_code,
        l.in_headline,
        l.in_list,
        l.in_paragraph,
        link.contains_headline,
    ];
    stmt.raw_bind_parameter(offset + 1, generation)?;
    stmt.raw_bind_parameter(offset + 2, target)?;
    stmt.raw_bind_parameter(offset + 3, link.fragment.as_deref())?;
    for (i, flag) in flags.into_iter().enumerate() {
        stmt.raw_bind_parameter(offset + 4 + i, flag)?;
    }
    let next = offset + 4 + flags.len();
    stmt.raw_bind_parameter(next, link.destination_type.code())?;
    stmt.raw_bind_parameter(next + 1, link.locality.code())?;
    stmt.raw_bind_parameter(next + 2, link.tag)?;
    stmt.raw_bind_parameter(next + 3, Some(link.text.as_str()).filter(|t| !t.is_empty()))?;
    debug_assert_eq!(next + 3, offset + LINK_COLUMNS);
    Ok(())
}

/// Empty text is NULL in the seed's nullable text columns.
fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// One capture's crawl_summary (and http_summary when it had an HTTP status).
pub struct CrawlRow {
    pub generation: i64,
    pub crawl_uuid: Uuid,
    pub agent_uuid: Uuid,
    pub robots_approved: bool,
    pub crawl_type: i64,
    pub time: i64,
    pub exit_code: i64,
    pub request_duration_ms: Option<u64>,
    pub last_modified: Option<i64>,
    pub status: Option<u16>,
    pub etag: Option<String>,
}

/// Inserts a capture's crawl summary, or points an existing one (same crawl UUID) at its
/// generation. Only a row that `may_exist` (its URL's generations have its UUID) is looked
/// for. Returns true when the row is new.
pub fn upsert_crawl_summary(conn: &Connection, may_exist: bool, row: &CrawlRow) -> Result<bool> {
    let existing: Option<(i64, i64)> = if may_exist {
        conn.prepare_cached(
            "SELECT crawl_summary_id, entity_generation_id FROM crawl_summary
             WHERE crawl_uuid = ?1",
        )?
        .query_row([row.crawl_uuid.as_bytes().as_slice()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?
    } else {
        None
    };
    if let Some((id, generation)) = existing {
        if generation != row.generation {
            conn.prepare_cached(
                "UPDATE crawl_summary SET entity_generation_id = ?2 WHERE crawl_summary_id = ?1",
            )?
            .execute(params![id, row.generation])?;
        }
        return Ok(false);
    }
    conn.prepare_cached(
        "INSERT INTO crawl_summary (entity_generation_id, crawl_uuid, agent_uuid, crawl_type,
             time_started_unix_utc, exit_code, time_last_modified_unix_utc,
             request_duration_ms, was_robotstxt_approved)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        row.generation,
        row.crawl_uuid.as_bytes().as_slice(),
        row.agent_uuid.as_bytes().as_slice(),
        row.crawl_type,
        row.time,
        row.exit_code,
        row.last_modified,
        row.request_duration_ms
            .map(|ms| ms.min(i64::MAX as u64) as i64),
        row.robots_approved
    ])?;
    let id = conn.last_insert_rowid();
    if let Some(status) = row.status {
        conn.prepare_cached(
            "INSERT INTO http_summary (crawl_summary_id, status_code, etag) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![id, status, row.etag])?;
    }
    Ok(true)
}
