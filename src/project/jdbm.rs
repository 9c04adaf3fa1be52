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
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::wordindex::{CrawlOrder, KeyIds, Snapshot};
use crate::cdx::lines::LineReader;
use crate::extsort::{Sorter, keyed, split_keyed};
use crate::html::parse_datetime;
use crate::report::Counts;

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
        let line = [key.as_bytes(), b"\t", value.as_bytes(), b"\n"];
        for part in line {
            self.out
                .write_all(part)
                .with_context(|| format!("cannot write {}", self.path.display()))?;
        }
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

/// Kind of the scratch database's key map of words.
const WORD_IDS: i64 = 3;

/// Writes the nine maps into `dir`. One pass over the snapshot in crawl order numbers
/// the words and feeds external sorts, one per key order the maps need; each map is then
/// written from its sort, so memory stays within the snapshot's budget.
pub fn write_jdbm(snapshot: &mut Snapshot, order: &CrawlOrder, dir: &Path) -> Result<JdbmFiles> {
    let mut written = JdbmFiles::default();
    // Keyed by page id: URL, time, children and forward list, 0-separated.
    let mut by_page = snapshot.sorter();
    let mut by_url = snapshot.sorter();
    let mut word_by_id = snapshot.sorter();
    let mut id_by_word = snapshot.sorter();
    // (child id, parent) and (word id, page, frequency) pairs, grouped when written.
    let mut parents = snapshot.sorter();
    let mut inverted = snapshot.sorter();
    let mut words = KeyIds::new(WORD_IDS, snapshot.cache_limit());
    let mut record = Vec::new();
    let mut out = Vec::new();
    let mut key = itoa::Buffer::new();
    let mut other = itoa::Buffer::new();
    snapshot.for_each_in_order(|snapshot, entry| {
        let page_id = entry.position;
        let page_text = key.format(page_id);
        let page = match entry.page {
            Some(location) => Some(snapshot.page(location, &mut record)?),
            None => None,
        };
        let time = page.as_ref().map_or(0, |p| {
            p.capture
                .last_modified
                .as_deref()
                .and_then(parse_datetime)
                .unwrap_or_else(|| super::locust::unix_time(&p.capture.ts))
        });
        let mut children: Vec<u32> = Vec::new();
        let mut forward: Vec<(u32, u32)> = Vec::new();
        if let Some(p) = &page {
            for target in p.edges() {
                let child = snapshot.target(target)?.0;
                if child != page_id {
                    children.push(child);
                }
            }
            children.sort_unstable();
            children.dedup();
            if let Some(doc) = &p.document {
                for (word, freq) in &doc.forward {
                    let (id, new) = words.get_or_insert(snapshot.db(), word.as_bytes())?;
                    if new {
                        let id_text = other.format(id);
                        keyed(&mut out, id_text.as_bytes(), word.as_bytes());
                        word_by_id.push(&out)?;
                        keyed(&mut out, word.as_bytes(), id_text.as_bytes());
                        id_by_word.push(&out)?;
                    }
                    forward.push((id, *freq));
                }
                forward.sort_unstable();
            }
        }
        for &child in &children {
            keyed(
                &mut out,
                other.format(child).as_bytes(),
                &page_id.to_be_bytes(),
            );
            parents.push(&out)?;
        }
        for &(word, freq) in &forward {
            let mut value = page_id.to_be_bytes().to_vec();
            value.extend_from_slice(&freq.to_be_bytes());
            keyed(&mut out, other.format(word).as_bytes(), &value);
            inverted.push(&out)?;
        }
        keyed(&mut out, entry.url.as_bytes(), page_text.as_bytes());
        by_url.push(&out)?;
        let mut value = Vec::with_capacity(entry.url.len() + 64);
        value.extend_from_slice(entry.url.as_bytes());
        value.push(0);
        value.extend_from_slice(java_date(time).as_bytes());
        value.push(0);
        let mut list = String::new();
        for child in &children {
            id_entry(child, &mut list);
            list.push(';');
        }
        value.extend_from_slice(list.as_bytes());
        value.push(0);
        list.clear();
        for item in &forward {
            posting_entry(item, &mut list);
            list.push(';');
        }
        value.extend_from_slice(list.as_bytes());
        keyed(&mut out, page_text.as_bytes(), &value);
        by_page.push(&out)
    })?;
    debug_assert_eq!(u64::from(order.len), by_url.len);
    written.counts.add("words", u64::from(words.len));

    let mut maps = [
        MapWriter::create(dir, "PageIDtoURL")?,
        MapWriter::create(dir, "PageIDtoTime")?,
        MapWriter::create(dir, "ParenttoChild")?,
        MapWriter::create(dir, "PageIDtoWordID")?,
    ];
    let mut sorted = by_page.finish()?;
    while let Some(record) = sorted.next()? {
        let (page, values) = split_keyed(record);
        let page = std::str::from_utf8(page)?;
        for (i, value) in values.split(|&b| b == 0).enumerate().take(maps.len()) {
            // Every page has a URL and a time; the lists only when they are not empty.
            if i < 2 || !value.is_empty() {
                maps[i].entry(page, std::str::from_utf8(value)?)?;
            }
        }
    }
    drop(sorted);
    let [url, time, children, forward] = maps;
    url.finish(&mut written, "PageIDtoURL")?;
    write_sorted(dir, "URLtoPageID", by_url, &mut written)?;
    time.finish(&mut written, "PageIDtoTime")?;
    write_sorted(dir, "WordIDtoWord", word_by_id, &mut written)?;
    write_sorted(dir, "WordtoWordID", id_by_word, &mut written)?;
    children.finish(&mut written, "ParenttoChild")?;
    write_grouped(dir, "ChildtoParent", parents, &mut written)?;
    forward.finish(&mut written, "PageIDtoWordID")?;
    write_grouped(dir, "WordIDtoPageID", inverted, &mut written)?;
    Ok(written)
}

/// Writes a map from a sort of `key 0 value` records.
fn write_sorted(dir: &Path, name: &str, sorter: Sorter, written: &mut JdbmFiles) -> Result<()> {
    let mut map = MapWriter::create(dir, name)?;
    let mut sorted = sorter.finish()?;
    while let Some(record) = sorted.next()? {
        let (key, value) = split_keyed(record);
        map.entry(std::str::from_utf8(key)?, std::str::from_utf8(value)?)?;
    }
    map.finish(written, name)
}

/// Writes a map whose values are lists from a sort of `key 0 id [frequency]` records
/// (ids and frequencies 4 bytes big-endian, so a key's entries come in ascending id
/// order), each entry followed by `;` (the seed's `id;id;` and `id freq;` formats).
fn write_grouped(dir: &Path, name: &str, sorter: Sorter, written: &mut JdbmFiles) -> Result<()> {
    let mut map = MapWriter::create(dir, name)?;
    let mut sorted = sorter.finish()?;
    let mut current: Vec<u8> = Vec::new();
    let mut value = String::new();
    while let Some(record) = sorted.next()? {
        let (key, entry) = split_keyed(record);
        if key != current.as_slice() && !value.is_empty() {
            map.entry(std::str::from_utf8(&current)?, &value)?;
            value.clear();
        }
        current.clear();
        current.extend_from_slice(key);
        let number = |at: usize| u32::from_be_bytes(entry[at..at + 4].try_into().unwrap_or([0; 4]));
        match entry.len() {
            4 => id_entry(&number(0), &mut value),
            8 => posting_entry(&(number(0), number(4)), &mut value),
            n => bail!("{name}: a sort record of {n} bytes"),
        }
        value.push(';');
    }
    if !value.is_empty() {
        map.entry(std::str::from_utf8(&current)?, &value)?;
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
#[cfg(test)]
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
    file: File,
    len: u64,
    line: Vec<u8>,
}

/// Bytes a probe of [`SortedTsv`] reads at a time.
const PROBE_READ: usize = 16 << 10;

impl SortedTsv {
    pub fn open(path: &Path) -> Result<SortedTsv> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let len = file.metadata()?.len();
        Ok(SortedTsv {
            path: path.to_path_buf(),
            file,
            len,
            line: Vec::new(),
        })
    }

    /// The first line starting at or after byte `pos`: (start, end after its newline). The
    /// line is left in `self.line`, without its line break.
    fn line_from(&mut self, pos: u64) -> Result<Option<(u64, u64)>> {
        // From the byte before `pos`: the rest of the line that holds it is passed over.
        let from = pos.saturating_sub(1);
        self.file.seek(SeekFrom::Start(from))?;
        let mut lines = LineReader::plain_with_read_size(&mut self.file, PROBE_READ);
        if pos > 0 && !probe_line(&mut lines, &self.path, from, &mut self.line)? {
            return Ok(None);
        }
        let start = from + lines.bytes_consumed();
        if start >= self.len || !probe_line(&mut lines, &self.path, from, &mut self.line)? {
            return Ok(None);
        }
        Ok(Some((start, from + lines.bytes_consumed())))
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
            let line = &self.line;
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

/// Reads the next line of a probe that started at byte `from` of `path` into `out`;
/// `false` at the end of the file. A line past the line cap cannot be passed over in place:
/// it is an error naming its offset (the file is damaged).
fn probe_line(
    lines: &mut LineReader<'_>,
    path: &Path,
    from: u64,
    out: &mut Vec<u8>,
) -> Result<bool> {
    out.clear();
    let read = lines
        .next_line()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if let Some((_, line)) = read {
        out.extend_from_slice(line);
    }
    let found = read.is_some();
    if let Some(skipped) = lines.take_overlong().first() {
        bail!(
            "{}: the line at byte {}: {}",
            path.display(),
            from + skipped.offset,
            skipped.describe(lines.max_line())
        );
    }
    Ok(found)
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
