//! The locust / ASPseek projection: MySQL DDL and INSERT batches for the tables wordurl,
//! urlword, urlwords00 … urlwords15, robots, sites and stat (`schemas/locust.sql`).
//!
//! # Rows
//! * `urlword`: one row per URL of the [`Snapshot`] (captured or only linked), `url_id`
//!   from 1 in crawl order ([`Snapshot::crawl_order`]). `status` is the HTTP status of the
//!   latest capture (0: never fetched); `deleted` 1 for a status of 400 or more;
//!   `last_index_time` the capture time and `next_index_time` that time plus the re-index
//!   period [`REINDEX_PERIOD_SECONDS`] (one week, ASPseek's default `Period`; 0, due now,
//!   for URLs never fetched); `crc` the MD5 (hex) of the document; `last_modified` and
//!   `etag` as sent; a URL never fetched is `deleted` when robots.txt disallows it (as
//!   ASPseek marks it); `referrer` the url_id of the document the URL was discovered from;
//!   `hops` the link depth from the seeds (at most 255); `redir` the url_id of a redirect
//!   target (else 0); `origin` 0 for the first document (lowest url_id) with a given
//!   MD5, 1 for its clones, NULL for URLs without a document; `tag` 0.
//! * `urlwordsNN` (NN = url_id mod 16): one row per document. `wordcount` distinct words,
//!   `totalcount` words; `content_type` as sent; `charset` the encoding the text was
//!   decoded with; `title` ≤ 128 characters, `txt` the first 255 characters of the body
//!   text in document order (headlines included, no title, nav or footer), `keywords`
//!   ≤ 255, `description` ≤ 100, `lang` the first two letters of the primary language (a
//!   sediment extension: the seed declares the column but leaves it unused); `docsize` the body size; `words` the document as a words blob
//!   ([`words_blob`](super::wordindex::words_blob)); `hrefs` the url_ids of the outgoing
//!   links, sorted, distinct, 4 bytes little-endian each.
//! * `wordurl`: every word of the documents, `word_id` from 1 in byte order of the words.
//! * `sites`: `scheme://host[:port]/` of every URL, `site_id` from 1 in url_id order.
//! * `robots`: for every robots.txt document, its `Disallow` paths for the crawler's user
//!   agent (the product token of the capture's User-Agent), or for `*` when no group names
//!   the crawler.
//! * `stat`: no rows.
//!
//! # Files
//! `schema.sql` is `schemas/locust.sql`; `data-00001.sql`, `data-00002.sql`, … hold
//! multi-row INSERTs of at most about 1 MiB each (a single larger row stands alone) and
//! start a new file after 64 MiB. Each file starts with `SET NAMES binary`, so the bytes
//! reach the binary columns unchanged; strings with quotes, backslashes or control
//! characters, and all blobs, are written as hex literals (`X'…'`), so the files load the
//! same whatever `sql_mode` says about backslashes. The server's `max_allowed_packet` must
//! exceed twice the largest document (the body limit) plus a little.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use url::Url;

use super::wordindex::{CrawlOrder, KeyIds, Snapshot, unpack_words_blob};
use crate::report::Counts;

/// The DDL (`schemas/locust.sql`).
pub const LOCUST_SQL: &str = include_str!("../../schemas/locust.sql");

/// The re-index period behind `urlword.next_index_time`: one week, ASPseek's default
/// `Period` (aspseek.conf), since archived captures carry no schedule of their own.
pub const REINDEX_PERIOD_SECONDS: i64 = 7 * 24 * 3600;

/// Longest URL `urlword.url` holds.
pub const MAX_URL_BYTES: usize = 2048;
/// An INSERT statement is closed once it is this long.
const STATEMENT_BYTES: usize = 1 << 20;
/// A data file is closed once it is this long.
const FILE_BYTES: u64 = 64 << 20;

/// What was written.
#[derive(Debug, Default, Clone)]
pub struct LocustFiles {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
    pub counts: Counts,
}

/// Kinds of the scratch database's key maps used here.
const SITE_IDS: i64 = 1;
const DIGESTS: i64 = 2;

/// Writes `schema.sql` and the data files into `dir`, reading the snapshot in crawl
/// order: once for the sites and robots.txt rules, once for the URLs and documents.
pub fn write_locust(
    snapshot: &mut Snapshot,
    order: &CrawlOrder,
    dir: &Path,
) -> Result<LocustFiles> {
    let mut written = LocustFiles::default();
    let schema_path = dir.join("schema.sql");
    std::fs::write(&schema_path, LOCUST_SQL)
        .with_context(|| format!("cannot write {}", schema_path.display()))?;
    written.files.push(schema_path);
    written.bytes += LOCUST_SQL.len() as u64;
    let mut sql = SqlWriter::new(dir);

    // wordurl: words in byte order.
    let mut vocabulary = snapshot.take_vocabulary()?;
    let mut words = 0u64;
    let mut last: Vec<u8> = Vec::new();
    while let Some(word) = vocabulary.next()? {
        if words > 0 && word == last.as_slice() {
            continue;
        }
        words += 1;
        sql.row(
            "wordurl",
            "word, word_id",
            &[Value::Str(word), Value::Int(words as i64)],
        )?;
        last.clear();
        last.extend_from_slice(word);
    }
    drop(vocabulary);
    written.counts.add("wordurl", words);
    written.counts.add("words", words);

    // sites, in url_id order of first appearance; robots.txt rules, which mark the URLs
    // never fetched that they disallow.
    snapshot.db().execute_batch(
        "CREATE TABLE robots (seq INTEGER PRIMARY KEY, site TEXT NOT NULL, path TEXT NOT NULL);
         CREATE INDEX robots_site ON robots (site);",
    )?;
    let mut site_ids = KeyIds::new(SITE_IDS, snapshot.cache_limit());
    let mut record = Vec::new();
    let mut blob = Vec::new();
    let mut robots = 0u64;
    snapshot.for_each_in_order(|snapshot, entry| {
        let Some(site) = site_of(&entry.url) else {
            return Ok(());
        };
        let (id, new) = site_ids.get_or_insert(snapshot.db(), site.as_bytes())?;
        if new {
            sql.row(
                "sites",
                "site_id, site",
                &[
                    Value::Int(i64::from(id) + 1),
                    Value::Str(cut_bytes(&site, 255).as_bytes()),
                ],
            )?;
        }
        let Some(location) = entry.page.filter(|_| is_robots_txt(&entry.url)) else {
            return Ok(());
        };
        let page = snapshot.page(location, &mut record)?;
        let Some(location) = page.document.as_ref().and_then(|d| d.blob) else {
            return Ok(());
        };
        let agent = page
            .capture
            .ua
            .as_deref()
            .and_then(|ua| ua.split(['/', ' ']).next())
            .unwrap_or("")
            .to_ascii_lowercase();
        snapshot.read_blob(location, &mut blob)?;
        if let Some(text) = unpack_words_blob(&blob) {
            for path in disallowed_paths(&String::from_utf8_lossy(&text), &agent) {
                snapshot
                    .db()
                    .prepare_cached("INSERT INTO robots (site, path) VALUES (?1, ?2)")?
                    .execute([&site, &path])?;
                robots += 1;
            }
        }
        Ok(())
    })?;
    written.counts.add("sites", u64::from(site_ids.len));
    let disallowed = |snapshot: &Snapshot, url: &str| -> Result<bool> {
        let Ok(parsed) = Url::parse(url) else {
            return Ok(false);
        };
        let Some(site) = site_of(url) else {
            return Ok(false);
        };
        let path = &url[parsed[..url::Position::BeforePath].len()..];
        let mut stmt = snapshot
            .db()
            .prepare_cached("SELECT path FROM robots WHERE site = ?1")?;
        let mut rows = stmt.query([&site])?;
        while let Some(row) = rows.next()? {
            if path.starts_with(row.get_ref(0)?.as_str()?) {
                return Ok(true);
            }
        }
        Ok(false)
    };

    // The first document (in url_id order) of each MD5 is the original, the others its
    // clones: a digest seen before marks a clone.
    let mut digests = KeyIds::new(DIGESTS, snapshot.cache_limit());
    snapshot.for_each_in_order(|snapshot, entry| {
        let url = entry.url;
        let page = match entry.page {
            Some(location) => Some(snapshot.page(location, &mut record)?),
            None => None,
        };
        let clone = match page.as_ref().and_then(|p| p.document.as_ref()) {
            Some(doc) => Some(!digests.get_or_insert(snapshot.db(), &doc.md5)?.1),
            None => None,
        };
        if url.len() > MAX_URL_BYTES {
            written.counts.incr("urls_too_long");
            return Ok(());
        }
        let id = i64::from(entry.position) + 1;
        let url_id = |node: u32| -> Result<i64> { Ok(i64::from(snapshot.target(node)?.0) + 1) };
        let referrer = entry.referrer.map_or(0, |r| i64::from(r) + 1);
        let hops = entry.hops.min(255) as i64;
        let site_id = match site_of(&url) {
            Some(site) => i64::from(site_ids.get_or_insert(snapshot.db(), site.as_bytes())?.0) + 1,
            None => 0,
        };
        let Some(page) = page else {
            sql.row(
                "urlword",
                URLWORD_COLUMNS,
                &[
                    Value::Int(id),
                    Value::Int(site_id),
                    Value::Int(i64::from(disallowed(snapshot, &url)?)),
                    Value::Str(url.as_bytes()),
                    Value::Int(0),
                    Value::Int(0),
                    Value::Str(b""),
                    Value::Str(b""),
                    Value::Str(b""),
                    Value::Int(0),
                    Value::Int(referrer),
                    Value::Int(0),
                    Value::Int(hops),
                    Value::Int(0),
                    Value::Null,
                ],
            )?;
            written.counts.incr("urlword");
            return Ok(());
        };
        let capture = &page.capture;
        let status = capture.status.unwrap_or(0) as i64;
        let time = unix_time(&capture.ts);
        let crc = page
            .document
            .as_ref()
            .map(|d| hex::encode(d.md5))
            .unwrap_or_default();
        let origin = match clone {
            Some(clone) => Value::Int(i64::from(clone)),
            None => Value::Null,
        };
        let redir = match page.redirect {
            Some(target) => url_id(target)?,
            None => 0,
        };
        sql.row(
            "urlword",
            URLWORD_COLUMNS,
            &[
                Value::Int(id),
                Value::Int(site_id),
                Value::Int(i64::from(status >= 400)),
                Value::Str(url.as_bytes()),
                Value::Int(time + REINDEX_PERIOD_SECONDS),
                Value::Int(status),
                Value::Str(crc.as_bytes()),
                Value::Str(
                    cut_bytes(capture.last_modified.as_deref().unwrap_or(""), 64).as_bytes(),
                ),
                Value::Str(cut_bytes(capture.etag.as_deref().unwrap_or(""), 255).as_bytes()),
                Value::Int(time),
                Value::Int(referrer),
                Value::Int(0),
                Value::Int(hops),
                Value::Int(redir),
                origin,
            ],
        )?;
        written.counts.incr("urlword");
        let Some(doc) = &page.document else {
            return Ok(());
        };
        let mut hrefs: Vec<u32> = Vec::with_capacity(page.links.len());
        for &target in &page.links {
            let (position, url_bytes) = snapshot.target(target)?;
            if url_bytes <= MAX_URL_BYTES {
                hrefs.push(position + 1);
            }
        }
        hrefs.sort_unstable();
        hrefs.dedup();
        let href_bytes: Vec<u8> = hrefs.iter().flat_map(|h| h.to_le_bytes()).collect();
        match doc.blob {
            Some(location) => snapshot.read_blob(location, &mut blob)?,
            None => blob.clear(),
        }
        let docsize = if doc.truncated {
            capture.size.unwrap_or(doc.size)
        } else {
            doc.size
        };
        let lang: String = doc.lang.chars().take(2).collect();
        let table = format!("urlwords{:02}", id % 16);
        sql.row(
            &table,
            URLWORDS_COLUMNS,
            &[
                Value::Int(id),
                Value::Int(0),
                Value::Int(i64::from(doc.distinct_words.min(65_535))),
                Value::Int(doc.total_words.min(16_777_215) as i64),
                Value::Str(cut_bytes(&doc.content_type, 128).as_bytes()),
                Value::Str(cut_bytes(&doc.charset, 32).as_bytes()),
                Value::Str(cut_chars(&doc.title, 128).as_bytes()),
                Value::Str(cut_chars(&doc.text_start, 255).as_bytes()),
                Value::Int(docsize.min(i32::MAX as u64) as i64),
                Value::Str(cut_chars(&doc.keywords, 255).as_bytes()),
                Value::Str(cut_chars(&doc.description, 100).as_bytes()),
                Value::Str(cut_bytes(&lang, 2).as_bytes()),
                Value::Blob(&blob),
                Value::Blob(&href_bytes),
            ],
        )?;
        written.counts.incr("urlwords");
        Ok(())
    })?;
    debug_assert!(order.len as u64 >= written.counts.get("urlword"));
    {
        let mut stmt = snapshot
            .db()
            .prepare("SELECT site, path FROM robots ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let site = row.get_ref(0)?.as_str()?;
            let path = row.get_ref(1)?.as_str()?;
            sql.row(
                "robots",
                "hostinfo, path",
                &[
                    Value::Str(cut_bytes(site, 255).as_bytes()),
                    Value::Str(cut_bytes(path, 255).as_bytes()),
                ],
            )?;
        }
    }
    written.counts.add("robots", robots);
    let (files, bytes) = sql.finish()?;
    written.files.extend(files);
    written.bytes += bytes;
    Ok(written)
}

const URLWORD_COLUMNS: &str = "url_id, site_id, deleted, url, next_index_time, status, crc, \
     last_modified, etag, last_index_time, referrer, tag, hops, redir, origin";
const URLWORDS_COLUMNS: &str = "url_id, deleted, wordcount, totalcount, content_type, charset, \
     title, txt, docsize, keywords, description, lang, words, hrefs";

fn is_robots_txt(url: &str) -> bool {
    Url::parse(url).is_ok_and(|u| u.path() == "/robots.txt")
}

/// `scheme://host[:port]/` of a URL.
pub fn site_of(url: &str) -> Option<String> {
    let url = Url::parse(url).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{}://{host}:{port}/", url.scheme()),
        None => format!("{}://{host}/", url.scheme()),
    })
}

/// 14-digit capture time to unix seconds (0 when malformed).
pub fn unix_time(ts14: &str) -> i64 {
    chrono::NaiveDateTime::parse_from_str(ts14, "%Y%m%d%H%M%S")
        .map(|t| t.and_utc().timestamp())
        .unwrap_or(0)
}

/// At most `max` bytes of `s`, cut at a character boundary.
pub fn cut_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// At most `max` characters of `s`.
pub fn cut_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// The `Disallow` paths of a robots.txt for a crawler whose product token is `agent`
/// (lower case): those of the groups naming it, else those of the `*` groups. Empty
/// `Disallow` lines (allow everything) are skipped; duplicates are removed.
pub fn disallowed_paths(robots_txt: &str, agent: &str) -> Vec<String> {
    let mut specific: Vec<String> = Vec::new();
    let mut general: Vec<String> = Vec::new();
    let mut named_agent = false;
    let mut group_agents: Vec<String> = Vec::new();
    let mut in_rules = false;
    for line in robots_txt.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        let field = field.trim().to_ascii_lowercase();
        let value = value.trim();
        match field.as_str() {
            "user-agent" => {
                if in_rules {
                    group_agents.clear();
                    in_rules = false;
                }
                group_agents.push(value.to_ascii_lowercase());
            }
            "disallow" | "allow" => {
                in_rules = true;
                if field != "disallow" || value.is_empty() {
                    continue;
                }
                let for_agent = !agent.is_empty()
                    && group_agents
                        .iter()
                        .any(|a| a != "*" && !a.is_empty() && agent.contains(a.as_str()));
                if for_agent {
                    named_agent = true;
                    specific.push(value.to_string());
                } else if group_agents.iter().any(|a| a == "*") {
                    general.push(value.to_string());
                }
            }
            _ => {}
        }
    }
    let mut paths = if named_agent { specific } else { general };
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    paths
}

/// One SQL value.
pub enum Value<'a> {
    Int(i64),
    Null,
    /// Text (written quoted when it is plain, else as a hex literal).
    Str(&'a [u8]),
    /// Binary (always a hex literal).
    Blob(&'a [u8]),
}

fn plain(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&b| b >= 0x20 && b != b'\'' && b != b'\\' && b != 0x7F)
}

fn push_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Value::Null => out.extend_from_slice(b"NULL"),
        Value::Str(s) if plain(s) => {
            out.push(b'\'');
            out.extend_from_slice(s);
            out.push(b'\'');
        }
        Value::Str(s) | Value::Blob(s) => {
            out.extend_from_slice(b"X'");
            let start = out.len();
            out.resize(start + s.len() * 2, 0);
            // The buffer has exactly twice the input's length.
            let _ = hex::encode_to_slice(s, &mut out[start..]);
            out.push(b'\'');
        }
    }
}

/// Multi-row INSERT statements across numbered data files.
struct SqlWriter {
    dir: PathBuf,
    files: Vec<PathBuf>,
    file: Option<BufWriter<File>>,
    file_bytes: u64,
    total_bytes: u64,
    /// The open statement: table, columns, text so far.
    table: String,
    statement: Vec<u8>,
    row: Vec<u8>,
}

impl SqlWriter {
    fn new(dir: &Path) -> SqlWriter {
        SqlWriter {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            file: None,
            file_bytes: 0,
            total_bytes: 0,
            table: String::new(),
            statement: Vec::new(),
            row: Vec::new(),
        }
    }

    fn row(&mut self, table: &str, columns: &str, values: &[Value]) -> Result<()> {
        self.row.clear();
        self.row.push(b'(');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.row.push(b',');
            }
            push_value(&mut self.row, value);
        }
        self.row.push(b')');
        if self.table != table
            || (!self.statement.is_empty()
                && self.statement.len() + self.row.len() > STATEMENT_BYTES)
        {
            self.end_statement()?;
        }
        if self.statement.is_empty() {
            self.table = table.to_string();
            self.statement
                .extend_from_slice(format!("INSERT INTO {table} ({columns}) VALUES\n").as_bytes());
        } else {
            self.statement.extend_from_slice(b",\n");
        }
        self.statement.extend_from_slice(&self.row);
        Ok(())
    }

    fn end_statement(&mut self) -> Result<()> {
        if self.statement.is_empty() {
            return Ok(());
        }
        self.statement.extend_from_slice(b";\n");
        if self.file.is_none() || self.file_bytes >= FILE_BYTES {
            self.close_file()?;
            let path = self
                .dir
                .join(format!("data-{:05}.sql", self.files.len() + 1));
            let file =
                File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut file = BufWriter::with_capacity(1 << 20, file);
            let head = b"SET NAMES binary;\n";
            file.write_all(head)
                .with_context(|| format!("cannot write {}", path.display()))?;
            self.file_bytes = head.len() as u64;
            self.files.push(path);
            self.file = Some(file);
        }
        if let (Some(file), Some(path)) = (self.file.as_mut(), self.files.last()) {
            file.write_all(&self.statement)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        self.file_bytes += self.statement.len() as u64;
        self.statement.clear();
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some(mut file) = self.file.take() {
            let path = self.files.last().map(|p| p.display().to_string());
            file.flush()
                .with_context(|| format!("cannot write {}", path.unwrap_or_default()))?;
            self.total_bytes += self.file_bytes;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(Vec<PathBuf>, u64)> {
        self.end_statement()?;
        self.close_file()?;
        Ok((self.files, self.total_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_groups_for_the_crawler_and_for_everyone() {
        let txt = "# comment\nUser-agent: *\nDisallow: /secret/\nDisallow:\n\n\
                   User-agent: BadBot\nUser-agent: wget\nDisallow: /only-wget/ # why\n\
                   Allow: /x\nUser-agent: other\nDisallow: /other/\n";
        assert_eq!(disallowed_paths(txt, "wget"), ["/only-wget/"]);
        assert_eq!(disallowed_paths(txt, "curl"), ["/secret/"]);
        assert_eq!(disallowed_paths(txt, ""), ["/secret/"]);
    }

    #[test]
    fn values_are_quoted_or_hex() {
        let mut out = Vec::new();
        for v in [
            Value::Int(-5),
            Value::Null,
            Value::Str(b"plain text"),
            Value::Str(b"it's"),
            Value::Str("é".as_bytes()),
            Value::Blob(b"\x00\xff"),
            Value::Blob(b""),
        ] {
            push_value(&mut out, &v);
            out.push(b' ');
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "-5 NULL 'plain text' X'69742773' 'é' X'00ff' X'' "
        );
    }

    #[test]
    fn cuts_keep_characters_whole() {
        assert_eq!(cut_bytes("aéb", 2), "a");
        assert_eq!(cut_chars("aéb", 2), "aé");
        assert_eq!(
            site_of("http://127.0.0.1:47213/x?y").as_deref(),
            Some("http://127.0.0.1:47213/")
        );
        assert_eq!(
            site_of("https://Example.org/").as_deref(),
            Some("https://example.org/")
        );
        assert_eq!(unix_time("19700101000100"), 60);
    }
}
