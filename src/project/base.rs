//! The base tables shared by the crawl and summary databases: origins, URLs, media types,
//! and the key/value database information (DDL in `schemas/base.sql`).
//!
//! Rows are looked up or inserted through caches, so a projection touches SQLite once per
//! distinct URL, origin or media type.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use crate::project::budget::MemoryBudget;

pub const BASE_SQL: &str = include_str!("../../schemas/base.sql");

/// The seed's base schema version, recorded as `unobtanium_base_schema_version`.
pub const BASE_SCHEMA_VERSION: &str = "0.1.0";

/// Opens (creating if needed) the crawl or summary database a projection writes; `kind`
/// names it in errors. WAL: readers keep the last committed state while a run writes.
///
/// Foreign keys are not enforced on this connection (the bundled SQLite enforces them by
/// default): every id a row refers to was written or looked up by the same run, the
/// REFERENCES clauses document the relations and `PRAGMA foreign_key_check` verifies them
/// (the tests do, after fresh, incremental and resumed runs). Enforcing them cost a B-tree
/// lookup per reference: a tenth of `project summary` on an HTML crawl.
pub fn open_projection_db(path: &Path, kind: &str, memory: MemoryBudget) -> Result<Connection> {
    let conn = Connection::open(path)
        .with_context(|| format!("cannot open the {kind} database {}", path.display()))?;
    // Pages of 16 KiB for a new database (an existing one keeps its own): a projection
    // appends rows by the million and text by the hundred megabytes, and with 4 KiB pages
    // a tenth of `project summary` went to splitting, allocating and spilling pages. Not
    // larger: an incremental run rewrites a whole page for each row it changes.
    conn.execute_batch(
        "PRAGMA page_size = 16384; \
         PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;",
    )?;
    conn.execute_batch(&memory.sqlite_pragmas())?;
    Ok(conn)
}

/// Creates the base tables (idempotent) and records the base schema version.
pub fn create_base_tables(conn: &Connection) -> Result<()> {
    conn.execute_batch(BASE_SQL)
        .context("cannot create the base tables (schemas/base.sql)")?;
    set_info(conn, "unobtanium_base_schema_version", BASE_SCHEMA_VERSION)
}

/// Writes one database_info entry.
pub fn set_info(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO unobtanium_database_info (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

pub fn get_info(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM unobtanium_database_info WHERE key = ?1",
            [key],
            |r| r.get(0),
        )
        .optional()?)
}

/// A URL as the base tables store it: fragment removed, WHATWG-serialized.
pub fn without_fragment(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    url
}

/// `scheme://host[:port]`, the deduplication key of an origin.
pub fn str_origin(url: &Url) -> String {
    let mut s = format!("{}://", url.scheme());
    if let Some(host) = url.host_str() {
        s.push_str(host);
    }
    if let Some(port) = url.port() {
        s.push_str(&format!(":{port}"));
    }
    s
}

/// A parsed media type: `type/subtype[+suffix]` and its parameters (lower-case names; the
/// charset value lower-cased too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaType {
    pub type_: String,
    pub subtype: String,
    pub suffix: Option<String>,
    pub parameters: Vec<(String, String)>,
}

impl MediaType {
    /// Parses a Content-Type value; `None` when it has no `type/subtype`.
    pub fn parse(raw: &str) -> Option<MediaType> {
        let mut parts = raw.split(';');
        let essence = parts.next()?.trim().to_ascii_lowercase();
        let (type_, full_subtype) = essence.split_once('/')?;
        if type_.is_empty() || full_subtype.is_empty() || type_.contains(char::is_whitespace) {
            return None;
        }
        let (subtype, suffix) = match full_subtype.split_once('+') {
            Some((s, x)) => (s.to_string(), Some(x.to_string())),
            None => (full_subtype.to_string(), None),
        };
        let mut parameters = Vec::new();
        for p in parts {
            if let Some((k, v)) = p.split_once('=') {
                let key = k.trim().to_ascii_lowercase();
                let mut value = v.trim().trim_matches('"').to_string();
                // Charset names are case-insensitive (RFC 2046): one row per charset.
                if key == "charset" {
                    value.make_ascii_lowercase();
                }
                if !key.is_empty() && !parameters.iter().any(|(k, _): &(String, String)| *k == key)
                {
                    parameters.push((key, value));
                }
            }
        }
        parameters.sort();
        Some(MediaType {
            type_: type_.to_string(),
            subtype,
            suffix,
            parameters,
        })
    }

    pub fn essence(&self) -> String {
        match &self.suffix {
            Some(x) => format!("{}/{}+{}", self.type_, self.subtype, x),
            None => format!("{}/{}", self.type_, self.subtype),
        }
    }

    pub fn charset(&self) -> Option<&str> {
        self.parameters
            .iter()
            .find(|(k, _)| k == "charset")
            .map(|(_, v)| v.as_str())
    }

    /// The canonical text form: essence, then the sorted parameters.
    pub fn canonical(&self) -> String {
        let mut s = self.essence();
        for (k, v) in &self.parameters {
            s.push_str(&format!("; {k}={v}"));
        }
        s
    }
}

/// Lookup-or-insert access to origins, URLs and media types, with caches.
pub struct BaseIds {
    origins: HashMap<String, i64>,
    urls: HashMap<String, i64>,
    mimetypes: HashMap<String, i64>,
    /// Each cache starts over past this many entries (memory stays bounded).
    limit: usize,
}

impl Default for BaseIds {
    fn default() -> Self {
        BaseIds::with_limit(crate::project::budget::MemoryBudget::default().id_cache_entries())
    }
}

impl BaseIds {
    #[cfg(test)]
    pub fn new() -> BaseIds {
        BaseIds::default()
    }

    /// Caches of at most `limit` entries each.
    pub fn with_limit(limit: usize) -> BaseIds {
        BaseIds {
            origins: HashMap::new(),
            urls: HashMap::new(),
            mimetypes: HashMap::new(),
            limit: limit.max(1),
        }
    }

    pub fn origin_id(&mut self, conn: &Connection, url: &Url) -> Result<i64> {
        let key = str_origin(url);
        if let Some(&id) = self.origins.get(&key) {
            return Ok(id);
        }
        conn.prepare_cached(
            "INSERT INTO origin (port, scheme, host, str_origin) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (str_origin) DO NOTHING",
        )?
        .execute(params![url.port(), url.scheme(), url.host_str(), key])?;
        let id: i64 = conn
            .prepare_cached("SELECT origin_id FROM origin WHERE str_origin = ?1")?
            .query_row([&key], |r| r.get(0))?;
        if self.origins.len() >= self.limit {
            self.origins.clear();
        }
        self.origins.insert(key, id);
        Ok(id)
    }

    /// The id of a URL (its fragment ignored), inserting it and its origin if needed.
    pub fn url_id(&mut self, conn: &Connection, url: &Url) -> Result<i64> {
        // Links come without fragments: copy only the URLs that have one.
        let stripped;
        let url = if url.fragment().is_some() {
            stripped = without_fragment(url);
            &stripped
        } else {
            url
        };
        let key = url.as_str();
        if let Some(&id) = self.urls.get(key) {
            return Ok(id);
        }
        let existing: Option<i64> = conn
            .prepare_cached("SELECT url_id FROM url WHERE str_url = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?;
        let id = match existing {
            Some(id) => id,
            None => {
                let origin = self.origin_id(conn, url)?;
                let path = (!url.path().is_empty()).then(|| url.path());
                let username = (!url.username().is_empty()).then(|| url.username());
                conn.prepare_cached(
                    "INSERT INTO url (origin_id, path, query, username, password, str_url)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![
                    origin,
                    path,
                    url.query(),
                    username,
                    url.password(),
                    key
                ])?;
                conn.last_insert_rowid()
            }
        };
        if self.urls.len() >= self.limit {
            self.urls.clear();
        }
        self.urls.insert(key.to_string(), id);
        Ok(id)
    }

    /// The id of a media type with its parameters; `None` for values that are not one.
    pub fn mimetype_id(&mut self, conn: &Connection, raw: &str) -> Result<Option<i64>> {
        let Some(media) = MediaType::parse(raw) else {
            return Ok(None);
        };
        let key = media.canonical();
        if let Some(&id) = self.mimetypes.get(&key) {
            return Ok(Some(id));
        }
        conn.prepare_cached(
            "INSERT INTO mimetype (mime_type, mime_subtype, mime_suffix, charset, str_mimetype)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (str_mimetype) DO NOTHING",
        )?
        .execute(params![
            media.type_,
            media.subtype,
            media.suffix,
            media.charset(),
            key
        ])?;
        let id: i64 = conn
            .prepare_cached("SELECT mimetype_id FROM mimetype WHERE str_mimetype = ?1")?
            .query_row([&key], |r| r.get(0))?;
        // charset has its own column (as in the seed); the other parameters go here.
        for (k, v) in media.parameters.iter().filter(|(k, _)| k != "charset") {
            conn.prepare_cached(
                "INSERT INTO mime_parameter (mimetype_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
            )?
            .execute(params![id, k, v])?;
        }
        if self.mimetypes.len() >= self.limit {
            self.mimetypes.clear();
        }
        self.mimetypes.insert(key, id);
        Ok(Some(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_origins_and_media_types_are_deduplicated() {
        let conn = Connection::open_in_memory().unwrap();
        create_base_tables(&conn).unwrap();
        let mut ids = BaseIds::new();
        let a = Url::parse("http://Example.org:80/a?x=1#frag").unwrap();
        let b = Url::parse("http://example.org/a?x=1").unwrap();
        let c = Url::parse("http://example.org:8080/").unwrap();
        let ia = ids.url_id(&conn, &a).unwrap();
        assert_eq!(
            ids.url_id(&conn, &b).unwrap(),
            ia,
            "fragment and default port ignored"
        );
        let mut fresh = BaseIds::new();
        assert_eq!(
            fresh.url_id(&conn, &b).unwrap(),
            ia,
            "found in the table, not only the cache"
        );
        let ic = ids.url_id(&conn, &c).unwrap();
        assert_ne!(ic, ia);
        let origins: Vec<(Option<i64>, String)> = conn
            .prepare("SELECT port, str_origin FROM origin ORDER BY origin_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            origins,
            vec![
                (None, "http://example.org".into()),
                (Some(8080), "http://example.org:8080".into())
            ]
        );
        let stored: String = conn
            .query_row("SELECT str_url FROM url WHERE url_id = ?1", [ia], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(stored, "http://example.org/a?x=1");

        let m1 = ids
            .mimetype_id(&conn, "text/HTML; charset=UTF-8")
            .unwrap()
            .unwrap();
        let m2 = ids
            .mimetype_id(&conn, "text/html;charset=UTF-8")
            .unwrap()
            .unwrap();
        assert_eq!(m1, m2);
        let m3 = ids
            .mimetype_id(&conn, "application/atom+xml")
            .unwrap()
            .unwrap();
        let (subtype, suffix): (String, Option<String>) = conn
            .query_row(
                "SELECT mime_subtype, mime_suffix FROM mimetype WHERE mimetype_id = ?1",
                [m3],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((subtype.as_str(), suffix.as_deref()), ("atom", Some("xml")));
        assert_eq!(ids.mimetype_id(&conn, "unk").unwrap(), None);
        let charset: String = conn
            .query_row(
                "SELECT charset FROM mimetype WHERE mimetype_id = ?1",
                [m1],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(charset, "utf-8", "charset names are lower-cased");
        let m4 = ids
            .mimetype_id(&conn, "text/plain; format=flowed; charset=us-ascii")
            .unwrap()
            .unwrap();
        let params: Vec<(String, String)> = conn
            .prepare("SELECT key, value FROM mime_parameter WHERE mimetype_id = ?1")
            .unwrap()
            .query_map([m4], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            params,
            vec![("format".into(), "flowed".into())],
            "charset is in its column, not repeated as a parameter"
        );
        set_info(&conn, "schema", "crawl").unwrap();
        set_info(&conn, "schema", "crawl2").unwrap();
        assert_eq!(
            get_info(&conn, "schema").unwrap().as_deref(),
            Some("crawl2")
        );
        let via_view: String = conn
            .query_row(
                "SELECT value FROM database_info WHERE key = 'schema'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(via_view, "crawl2");
        conn.execute(
            "INSERT INTO database_info (key, value) VALUES ('schema', 'crawl3')",
            [],
        )
        .unwrap();
        assert_eq!(
            get_info(&conn, "schema").unwrap().as_deref(),
            Some("crawl3"),
            "the view is writable"
        );
        assert_eq!(
            get_info(&conn, "unobtanium_base_schema_version")
                .unwrap()
                .as_deref(),
            Some(BASE_SCHEMA_VERSION)
        );
    }
}
