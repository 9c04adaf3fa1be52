//! The JDBM indexer projection: the nine string maps of a JDBM-based course-project
//! indexer (one `HTree` per map), written as sorted key/value files `DIR/<MapName>.tsv`
//! (`key TAB value`, one entry a line, lines in byte order of the keys, as `LC_ALL=C sort`
//! orders them), and the word lookup that reads them back.
//!
//! # Maps (values in the original indexer's formats)
//! | map | key | value |
//! |---|---|---|
//! | PageIDtoURL / URLtoPageID | page id / URL | URL / page id |
//! | PageIDtoTime | page id | last modification, Java `Date.toString()` (`EEE MMM dd HH:mm:ss zzz yyyy`, UTC) |
//! | WordIDtoWord / WordtoWordID | word id / word | word / word id |
//! | ParenttoChild / ChildtoParent | page id | `id;id;…;` |
//! | PageIDtoWordID (forward) | page id | `wordid freq;wordid freq;…;` |
//! | WordIDtoPageID (inverted) | word id | `pageid freq;pageid freq;…;` |
//!
//! Page ids count from 0 in crawl order ([`Snapshot::crawl_order`]): like the original
//! spider, every URL a page links to gets a page id, fetched or not. Word ids count from 0
//! in order of first occurrence (pages in page-id order, words in text order). List
//! values are in ascending id order, each entry followed by `;` as the original appends
//! them. The time is the latest capture's `Last-Modified` when it parses, else the capture
//! time (the original used the fetch time when the server sent none), and the epoch
//! (`Thu Jan 01 00:00:00 UTC 1970`) for pages never fetched. Words are
//! [`Tokenizer::WORDS`](super::tokenize::Tokenizer::WORDS) tokens (the original split the
//! page text at white space and kept case and punctuation; see the tokenizer's notes).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::wordindex::{CrawlOrder, Snapshot};
use crate::html::parse_datetime;
use crate::report::Counts;

/// The map names, in the original's order.
pub const MAPS: [&str; 9] = [
    "PageIDtoURL",
    "URLtoPageID",
    "PageIDtoTime",
    "WordIDtoWord",
    "WordtoWordID",
    "ParenttoChild",
    "ChildtoParent",
    "PageIDtoWordID",
    "WordIDtoPageID",
];

/// What was written.
#[derive(Debug, Default, Clone)]
pub struct JdbmFiles {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
    pub counts: Counts,
}

/// Java's `Date.toString()` in UTC for unix seconds.
pub fn java_date(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .unwrap_or_default()
        .format("%a %b %d %H:%M:%S UTC %Y")
        .to_string()
}

/// Ids ordered by their decimal text (the key order of the id-keyed files).
fn ids_in_text_order(n: usize) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..n as u32).collect();
    ids.sort_by_cached_key(|id| id.to_string());
    ids
}

struct MapWriter {
    path: PathBuf,
    out: BufWriter<File>,
    entries: u64,
}

impl MapWriter {
    fn create(dir: &Path, name: &str) -> Result<MapWriter> {
        let path = dir.join(format!("{name}.tsv"));
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(MapWriter {
            path,
            out: BufWriter::with_capacity(1 << 20, file),
            entries: 0,
        })
    }

    fn entry(&mut self, key: &str, value: &str) -> Result<()> {
        // Keys and values are URLs (WHATWG-serialized), tokens, numbers and dates: none
        // holds a tab or a line break.
        self.out.write_all(key.as_bytes())?;
        self.out.write_all(b"\t")?;
        self.out.write_all(value.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.entries += 1;
        Ok(())
    }

    fn finish(mut self, written: &mut JdbmFiles, name: &str) -> Result<()> {
        self.out
            .flush()
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        written.bytes += std::fs::metadata(&self.path)?.len();
        written.counts.add(name, self.entries);
        written.files.push(self.path);
        Ok(())
    }
}

/// Writes the nine maps into `dir`.
pub fn write_jdbm(snapshot: &Snapshot, order: &CrawlOrder, dir: &Path) -> Result<JdbmFiles> {
    let mut written = JdbmFiles::default();
    let pages = order.order.len();
    let url = |page: u32| snapshot.urls[order.order[page as usize] as usize].as_str();

    // Word ids by first occurrence in page order; per page the forward list.
    let mut word_id = vec![u32::MAX; snapshot.words.len()];
    let mut words_by_id: Vec<u32> = Vec::new();
    let mut forward: Vec<Vec<(u32, u32)>> = vec![Vec::new(); pages];
    for (page, &node) in order.order.iter().enumerate() {
        let Some(doc) = snapshot.pages[node as usize]
            .as_ref()
            .and_then(|p| p.document.as_ref())
        else {
            continue;
        };
        let mut list = Vec::with_capacity(doc.forward.len());
        for &(w, freq) in &doc.forward {
            if word_id[w as usize] == u32::MAX {
                word_id[w as usize] = words_by_id.len() as u32;
                words_by_id.push(w);
            }
            list.push((word_id[w as usize], freq));
        }
        list.sort_unstable();
        forward[page] = list;
    }
    let word = |id: u32| snapshot.words[words_by_id[id as usize] as usize].as_str();

    let page_keys = ids_in_text_order(pages);
    let mut map = MapWriter::create(dir, "PageIDtoURL")?;
    for &page in &page_keys {
        map.entry(&page.to_string(), url(page))?;
    }
    map.finish(&mut written, "PageIDtoURL")?;

    let mut by_url: Vec<u32> = (0..pages as u32).collect();
    by_url.sort_by(|&a, &b| url(a).cmp(url(b)));
    let mut map = MapWriter::create(dir, "URLtoPageID")?;
    for &page in &by_url {
        map.entry(url(page), &page.to_string())?;
    }
    map.finish(&mut written, "URLtoPageID")?;

    let mut map = MapWriter::create(dir, "PageIDtoTime")?;
    for &page in &page_keys {
        let node = order.order[page as usize];
        let time = snapshot.pages[node as usize].as_ref().map_or(0, |p| {
            p.capture
                .last_modified
                .as_deref()
                .and_then(parse_datetime)
                .unwrap_or_else(|| super::locust::unix_time(&p.capture.ts))
        });
        map.entry(&page.to_string(), &java_date(time))?;
    }
    map.finish(&mut written, "PageIDtoTime")?;

    let word_keys = ids_in_text_order(words_by_id.len());
    let mut map = MapWriter::create(dir, "WordIDtoWord")?;
    for &w in &word_keys {
        map.entry(&w.to_string(), word(w))?;
    }
    map.finish(&mut written, "WordIDtoWord")?;

    let mut by_word: Vec<u32> = (0..words_by_id.len() as u32).collect();
    by_word.sort_by(|&a, &b| word(a).cmp(word(b)));
    let mut map = MapWriter::create(dir, "WordtoWordID")?;
    for &w in &by_word {
        map.entry(word(w), &w.to_string())?;
    }
    map.finish(&mut written, "WordtoWordID")?;

    // The link graph in page ids, and its transpose.
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); pages];
    let mut parents: Vec<Vec<u32>> = vec![Vec::new(); pages];
    for (page, &node) in order.order.iter().enumerate() {
        if let Some(p) = &snapshot.pages[node as usize] {
            let mut list: Vec<u32> = p
                .edges()
                .map(|t| order.position[t as usize])
                .filter(|&c| c as usize != page)
                .collect();
            list.sort_unstable();
            list.dedup();
            for &child in &list {
                parents[child as usize].push(page as u32);
            }
            children[page] = list;
        }
    }
    write_lists(
        dir,
        "ParenttoChild",
        &page_keys,
        &children,
        id_entry,
        &mut written,
    )?;
    write_lists(
        dir,
        "ChildtoParent",
        &page_keys,
        &parents,
        id_entry,
        &mut written,
    )?;

    let mut inverted: Vec<Vec<(u32, u32)>> = vec![Vec::new(); words_by_id.len()];
    for (page, list) in forward.iter().enumerate() {
        for &(w, freq) in list {
            inverted[w as usize].push((page as u32, freq));
        }
    }
    write_lists(
        dir,
        "PageIDtoWordID",
        &page_keys,
        &forward,
        posting_entry,
        &mut written,
    )?;
    write_lists(
        dir,
        "WordIDtoPageID",
        &word_keys,
        &inverted,
        posting_entry,
        &mut written,
    )?;
    Ok(written)
}

/// Writes one map whose values are lists, each entry written by `entry` and followed by
/// `;` (the seed's `id;id;` and `id freq;` formats); keys with an empty list are left out.
fn write_lists<T>(
    dir: &Path,
    name: &str,
    keys: &[u32],
    lists: &[Vec<T>],
    entry: impl Fn(&T, &mut String),
    written: &mut JdbmFiles,
) -> Result<()> {
    let mut map = MapWriter::create(dir, name)?;
    let mut value = String::new();
    for &key in keys {
        let list = &lists[key as usize];
        if list.is_empty() {
            continue;
        }
        value.clear();
        for item in list {
            entry(item, &mut value);
            value.push(';');
        }
        map.entry(itoa::Buffer::new().format(key), &value)?;
    }
    map.finish(written, name)
}

fn id_entry(id: &u32, out: &mut String) {
    out.push_str(itoa::Buffer::new().format(*id));
}

fn posting_entry(&(id, freq): &(u32, u32), out: &mut String) {
    out.push_str(itoa::Buffer::new().format(id));
    out.push(' ');
    out.push_str(itoa::Buffer::new().format(freq));
}

/// Parses a `a b;c d;` posting value into pairs; None when malformed.
pub fn parse_postings(value: &str) -> Option<Vec<(u32, u32)>> {
    value
        .split(';')
        .filter(|e| !e.is_empty())
        .map(|entry| {
            let (id, freq) = entry.split_once(' ')?;
            Some((id.parse().ok()?, freq.parse().ok()?))
        })
        .collect()
}

/// Parses an `a;b;` id list; None when malformed.
pub fn parse_ids(value: &str) -> Option<Vec<u32>> {
    value
        .split(';')
        .filter(|e| !e.is_empty())
        .map(|id| id.parse().ok())
        .collect()
}

/// A sorted key/value file, searched in place by binary search over byte offsets, so a
/// lookup reads a few blocks, not the file.
pub struct SortedTsv {
    path: PathBuf,
    reader: BufReader<File>,
    len: u64,
    line: Vec<u8>,
}

impl SortedTsv {
    pub fn open(path: &Path) -> Result<SortedTsv> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let len = file.metadata()?.len();
        Ok(SortedTsv {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(16 << 10, file),
            len,
            line: Vec::new(),
        })
    }

    /// The first line starting at or after byte `pos`: (start, end after its newline).
    fn line_from(&mut self, pos: u64) -> Result<Option<(u64, u64)>> {
        let mut start = pos;
        if pos > 0 {
            // Skip the rest of the line that contains byte pos-1.
            self.reader.seek(SeekFrom::Start(pos - 1))?;
            self.line.clear();
            let n = self.reader.read_until(b'\n', &mut self.line)?;
            start = pos - 1 + n as u64;
        } else {
            self.reader.seek(SeekFrom::Start(0))?;
        }
        if start >= self.len {
            return Ok(None);
        }
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Ok(None);
        }
        Ok(Some((start, start + n as u64)))
    }

    /// The value of `key`, if the file has it.
    pub fn get(&mut self, key: &str) -> Result<Option<String>> {
        let target = key.as_bytes();
        let (mut lo, mut hi) = (0u64, self.len);
        // Invariant: a line with the key, if any, starts in [lo, hi).
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let Some((start, end)) = self.line_from(mid)? else {
                hi = mid;
                continue;
            };
            if start >= hi {
                hi = mid;
                continue;
            }
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let Some(tab) = memchr::memchr(b'\t', line) else {
                bail!(
                    "{}: the line at byte {start} has no tab",
                    self.path.display()
                );
            };
            match line[..tab].cmp(target) {
                std::cmp::Ordering::Equal => {
                    let value = String::from_utf8_lossy(&line[tab + 1..]).into_owned();
                    return Ok(Some(value));
                }
                std::cmp::Ordering::Less => lo = end,
                std::cmp::Ordering::Greater => {
                    if mid == lo {
                        return Ok(None);
                    }
                    hi = mid;
                }
            }
        }
        Ok(None)
    }
}

/// One page containing the looked-up word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub page_id: u32,
    pub url: String,
    pub frequency: u32,
}

/// The pages containing `word` (already in index form), most frequent first, read from
/// the word map, the inverted map and the page-URL map of `dir`.
pub fn lookup(dir: &Path, word: &str) -> Result<Vec<Hit>> {
    let mut words = SortedTsv::open(&dir.join("WordtoWordID.tsv"))?;
    let Some(word_id) = words.get(word)? else {
        return Ok(Vec::new());
    };
    let mut inverted = SortedTsv::open(&dir.join("WordIDtoPageID.tsv"))?;
    let Some(postings) = inverted.get(&word_id)? else {
        return Ok(Vec::new());
    };
    let Some(postings) = parse_postings(&postings) else {
        bail!("WordIDtoPageID.tsv: malformed value for word id {word_id}");
    };
    let mut urls = SortedTsv::open(&dir.join("PageIDtoURL.tsv"))?;
    let mut hits = Vec::with_capacity(postings.len());
    for (page_id, frequency) in postings {
        let url = urls
            .get(&page_id.to_string())?
            .with_context(|| format!("PageIDtoURL.tsv has no page {page_id}"))?;
        hits.push(Hit {
            page_id,
            url,
            frequency,
        });
    }
    hits.sort_by(|a, b| {
        b.frequency
            .cmp(&a.frequency)
            .then(a.page_id.cmp(&b.page_id))
    });
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_date_format() {
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(1_615_730_400), "Sun Mar 14 14:00:00 UTC 2021");
    }

    #[test]
    fn sorted_tsv_finds_every_key_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.tsv");
        let mut keys: Vec<String> = (0..500).map(|i| format!("k{i}")).collect();
        keys.sort();
        let mut text = String::new();
        for (i, k) in keys.iter().enumerate() {
            text.push_str(&format!("{k}\tvalue {i} {}\n", "x".repeat(i % 37)));
        }
        std::fs::write(&path, &text).unwrap();
        let mut tsv = SortedTsv::open(&path).unwrap();
        for (i, k) in keys.iter().enumerate() {
            let v = tsv.get(k).unwrap().unwrap();
            assert!(v.starts_with(&format!("value {i} ")), "{k}: {v}");
        }
        for missing in ["", "a", "k", "k10a", "k999", "z"] {
            assert_eq!(tsv.get(missing).unwrap(), None, "{missing}");
        }
        std::fs::write(&path, "").unwrap();
        assert_eq!(SortedTsv::open(&path).unwrap().get("k1").unwrap(), None);
    }

    #[test]
    fn value_formats_parse() {
        assert_eq!(parse_postings("3 2;10 1;"), Some(vec![(3, 2), (10, 1)]));
        assert_eq!(parse_postings("3;"), None);
        assert_eq!(parse_ids("1;5;"), Some(vec![1, 5]));
    }
}
