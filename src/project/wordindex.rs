//! The crawl as the word indexes of older engines see it (locust/ASPseek, the JDBM
//! indexer): one entry per URL, the URL's latest capture, the words and links of its
//! document, and the order in which a breadth-first crawler would have met the URLs.
//!
//! # Which capture stands for a URL
//! These engines keep one state per URL: the last fetch. So each URL (parsed and
//! serialized by the WHATWG rules, fragment removed; `http` and `https` only) is
//! represented by its latest capture (by capture time, then WARC file and offset). Its
//! document is read only when that capture is a success (2xx) with a payload digest; a
//! revisit reads the payload it refers to. A 3xx capture contributes its `Location`
//! (resolved against the URL) as the redirect target; error captures contribute neither
//! words nor links.
//!
//! # Words and links of a document
//! * HTML (`text/html`, `application/xhtml+xml`) is analysed by [`crate::html::analyze`].
//!   Its words are the tokens ([`Tokenizer::WORDS`]) of the title, the description, the
//!   `<meta name=keywords>` content and the six text-pile fields. Its links are every link
//!   `analyze` reports (a, area, link, img, iframe, frame, audio, video, source, embed,
//!   object, script) whose target is `http`/`https` and not the document itself, distinct,
//!   in document order.
//! * `text/plain` is decoded (charset parameter, else sniffed) and tokenized whole.
//! * Other types are documents without words or links.
//! * Words longer than [`MAX_WORD_BYTES`] are not indexed (counted as `long_words`): the
//!   engines' dictionaries have bounded word columns.
//!
//! # Crawl order
//! URLs are numbered in the order a breadth-first crawl from the seeds discovers them
//! ([`Snapshot::crawl_order`]); the link graph is the links of the documents plus the
//! redirects. The seeds are, for each crawl (input file), the URL of its earliest capture
//! other than a robots.txt, and every captured URL no other captured document links to
//! (it must have been given to the crawler). Seeds start at depth 0, in the order of their
//! first capture; each URL's referrer is the document it was first discovered from. Pages
//! a crawl from the seeds does not reach (a group of pages that only link each other)
//! start a further crawl, earliest first capture first.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use md5::{Digest, Md5};
use url::Url;

use super::source::{BodyReader, for_each_capture};
use super::tokenize::{Scratch, Tokenizer};
use crate::capture::Capture;
use crate::html::{self, LinkLocality};
use crate::payload::WarcLocator;
use crate::report::Counts;
use crate::store::Store;

/// Words longer than this (in bytes) are not indexed.
pub const MAX_WORD_BYTES: usize = 255;

/// Pages analysed per parallel batch.
const BATCH: usize = 256;

/// What to read and keep.
#[derive(Debug, Clone)]
pub struct Options {
    pub warc_dirs: Vec<PathBuf>,
    /// Bytes of a body read at most; longer documents are indexed from their start.
    pub max_body_bytes: usize,
    /// Keep each document's words blob ([`words_blob`]) in a spill file next to the output.
    pub keep_bodies: bool,
    /// Keep each document's word list (the forward index).
    pub keep_forward: bool,
    /// Where the spill file goes (the output directory).
    pub spill_dir: PathBuf,
    pub threads: usize,
}

/// One URL with a capture.
#[derive(Debug, Clone)]
pub struct Page {
    /// The latest capture.
    pub capture: Capture,
    /// The 14-digit time of the URL's first capture (for seed order).
    pub first_ts: String,
    pub document: Option<Document>,
    /// Link targets (node ids), distinct, in document order, without the page itself.
    pub links: Vec<u32>,
    /// Redirect target (node id) of a 3xx capture.
    pub redirect: Option<u32>,
}

impl Page {
    /// Links, then the redirect target: the page's edges of the crawl graph.
    pub fn edges(&self) -> impl Iterator<Item = u32> + '_ {
        let redirect = self.redirect.filter(|r| !self.links.contains(r));
        self.links.iter().copied().chain(redirect)
    }
}

/// A document read back from a WARC.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// Bytes read (de-chunked, Content-Encoding removed), at most the body limit.
    pub size: u64,
    /// The body was longer than the limit.
    pub truncated: bool,
    /// MD5 of the bytes read.
    pub md5: [u8; 16],
    /// The HTTP Content-Type of the record, as sent.
    pub content_type: String,
    /// The character encoding the text was decoded with (HTML), or the charset parameter.
    pub charset: String,
    pub title: String,
    pub description: String,
    pub keywords: String,
    /// Primary language (`<html lang>`), lower case.
    pub lang: String,
    /// The start of the body text in document order (HTML: headlines included, no title,
    /// nav or footer), or of the text.
    pub text_start: String,
    /// Distinct words and all word occurrences.
    pub distinct_words: u32,
    pub total_words: u64,
    /// (word id, frequency) in order of first occurrence (only with `keep_forward`).
    pub forward: Vec<(u32, u32)>,
    /// Offset and length of the words blob in the spill file (only with `keep_bodies`).
    pub blob: Option<(u64, u64)>,
}

/// Characters of body text kept in [`Document::text_start`].
pub const TEXT_START_CHARS: usize = 255;

/// The word-index view of a store.
pub struct Snapshot {
    /// Node id → URL.
    pub urls: Vec<String>,
    url_ids: HashMap<String, u32>,
    /// Node id → page (None: a URL only known as a link or redirect target).
    pub pages: Vec<Option<Page>>,
    /// Word id → word, in order of first sight (URL order of the store).
    pub words: Vec<String>,
    word_ids: HashMap<String, u32>,
    /// Earliest capture (ts, tie-breaker) and node of each crawl input, robots.txt aside.
    crawl_starts: HashMap<String, (String, String, u64, u32)>,
    spill: Option<File>,
    pub counts: Counts,
}

/// A URL's latest capture as found in the store, before its body is read.
struct Latest {
    url: String,
    capture: Capture,
    first_ts: String,
}

/// What reading and analysing one page produced (computed in parallel).
struct Analysed {
    latest: Latest,
    document: Option<Document>,
    /// (word, frequency) in order of first occurrence.
    words: Vec<(String, u32)>,
    links: Vec<String>,
    redirect: Option<String>,
    blob: Option<Vec<u8>>,
    counts: Counts,
}

/// The URL as the indexes store it: WHATWG-serialized, no fragment; None unless http(s).
pub fn normalize_url(raw: &str) -> Option<Url> {
    let mut url = Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}

fn is_robots_txt(url: &str) -> bool {
    Url::parse(url).is_ok_and(|u| u.path() == "/robots.txt")
}

impl Snapshot {
    /// Reads every capture of the store and the documents of the URLs' latest captures.
    pub fn build(store: &Store, options: &Options) -> Result<Snapshot> {
        let spill = if options.keep_bodies {
            Some(tempfile::tempfile_in(&options.spill_dir).with_context(|| {
                format!(
                    "cannot create a temporary file in {}",
                    options.spill_dir.display()
                )
            })?)
        } else {
            None
        };
        let mut snapshot = Snapshot {
            urls: Vec::new(),
            url_ids: HashMap::new(),
            pages: Vec::new(),
            words: Vec::new(),
            word_ids: HashMap::new(),
            crawl_starts: HashMap::new(),
            spill,
            counts: Counts::default(),
        };
        let reader = BodyReader::new(WarcLocator::new(&options.warc_dirs), options.max_body_bytes);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads.max(1))
            .build()
            .context("cannot start worker threads")?;
        let mut group: Vec<(Url, Capture)> = Vec::new();
        let mut group_surt = String::new();
        let mut batch: Vec<Latest> = Vec::new();
        for_each_capture(store, |capture| {
            snapshot.counts.incr("captures");
            if capture.surt != group_surt {
                snapshot.flush_group(&mut group, &mut batch);
                group_surt.clone_from(&capture.surt);
            }
            match normalize_url(&capture.url) {
                Some(url) => group.push((url, capture)),
                None => snapshot.counts.incr("captures_not_http"),
            }
            if batch.len() >= BATCH {
                snapshot.analyse_batch(store, &reader, &pool, options, &mut batch)?;
            }
            Ok(())
        })?;
        snapshot.flush_group(&mut group, &mut batch);
        snapshot.analyse_batch(store, &reader, &pool, options, &mut batch)?;
        snapshot.counts.add("urls", snapshot.urls.len() as u64);
        snapshot.counts.add("words", snapshot.words.len() as u64);
        Ok(snapshot)
    }

    /// The captures of one SURT key are done: pick each URL's latest capture.
    fn flush_group(&mut self, group: &mut Vec<(Url, Capture)>, batch: &mut Vec<Latest>) {
        let mut latest: Vec<Latest> = Vec::new();
        for (url, capture) in group.drain(..) {
            let url = url.as_str();
            if !is_robots_txt(url) {
                let (name, offset) = capture.tie_breaker();
                let candidate = (capture.ts.clone(), name.to_string(), offset);
                let start = self.crawl_starts.get(&capture.source);
                if start
                    .is_none_or(|s| (&s.0, &s.1, s.2) > (&candidate.0, &candidate.1, candidate.2))
                {
                    let node = self.intern_url(url);
                    self.crawl_starts.insert(
                        capture.source.clone(),
                        (candidate.0, candidate.1, candidate.2, node),
                    );
                }
            }
            match latest.iter_mut().find(|l| l.url == url) {
                Some(l) => {
                    if capture.ts < l.first_ts {
                        l.first_ts.clone_from(&capture.ts);
                    }
                    let newer = (capture.ts.as_str(), capture.tie_breaker())
                        > (l.capture.ts.as_str(), l.capture.tie_breaker());
                    if newer {
                        l.capture = capture;
                    }
                }
                None => latest.push(Latest {
                    url: url.to_string(),
                    first_ts: capture.ts.clone(),
                    capture,
                }),
            }
        }
        batch.extend(latest);
    }

    fn analyse_batch(
        &mut self,
        store: &Store,
        reader: &BodyReader,
        pool: &rayon::ThreadPool,
        options: &Options,
        batch: &mut Vec<Latest>,
    ) -> Result<()> {
        use rayon::prelude::*;
        let items: Vec<Latest> = std::mem::take(batch);
        let analysed: Vec<Result<Analysed>> = pool.install(|| {
            items
                .into_par_iter()
                .map(|latest| analyse(store, reader, options, latest))
                .collect()
        });
        for result in analysed {
            self.merge(result?, options)?;
        }
        Ok(())
    }

    fn intern_url(&mut self, url: &str) -> u32 {
        if let Some(&id) = self.url_ids.get(url) {
            return id;
        }
        let id = self.urls.len() as u32;
        self.urls.push(url.to_string());
        self.url_ids.insert(url.to_string(), id);
        self.pages.push(None);
        id
    }

    fn intern_word(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.word_ids.get(word) {
            return id;
        }
        let id = self.words.len() as u32;
        self.words.push(word.to_string());
        self.word_ids.insert(word.to_string(), id);
        id
    }

    fn merge(&mut self, analysed: Analysed, options: &Options) -> Result<()> {
        self.counts.merge(&analysed.counts);
        self.counts.incr("pages");
        let node = self.intern_url(&analysed.latest.url);
        let mut links = Vec::with_capacity(analysed.links.len());
        let mut seen = HashSet::with_capacity(analysed.links.len());
        for link in &analysed.links {
            let target = self.intern_url(link);
            if target != node && seen.insert(target) {
                links.push(target);
            }
        }
        let redirect = analysed.redirect.as_deref().map(|r| self.intern_url(r));
        let mut document = analysed.document;
        if let Some(doc) = document.as_mut() {
            self.counts.incr("documents");
            let mut forward = Vec::new();
            for (word, freq) in &analysed.words {
                let id = self.intern_word(word);
                if options.keep_forward {
                    forward.push((id, *freq));
                }
            }
            doc.forward = forward;
            if let (Some(blob), Some(spill)) = (analysed.blob.as_ref(), self.spill.as_mut()) {
                let offset = spill.stream_position()?;
                spill
                    .write_all(blob)
                    .context("cannot write the temporary body file")?;
                doc.blob = Some((offset, blob.len() as u64));
            }
        }
        self.pages[node as usize] = Some(Page {
            capture: analysed.latest.capture,
            first_ts: analysed.latest.first_ts,
            document,
            links,
            redirect,
        });
        Ok(())
    }

    /// Reads a document's words blob back from the spill file.
    pub fn read_blob(&mut self, location: (u64, u64), out: &mut Vec<u8>) -> Result<()> {
        let spill = self
            .spill
            .as_mut()
            .context("the snapshot was built without bodies")?;
        spill.seek(SeekFrom::Start(location.0))?;
        out.clear();
        out.resize(location.1 as usize, 0);
        spill.read_exact(out)?;
        Ok(())
    }

    /// Node id of a URL, when known.
    pub fn node(&self, url: &str) -> Option<u32> {
        self.url_ids.get(url).copied()
    }

    /// The breadth-first crawl order; see the module documentation.
    pub fn crawl_order(&self) -> CrawlOrder {
        let n = self.urls.len();
        let mut linked = vec![false; n];
        for (node, page) in self.pages.iter().enumerate() {
            if let Some(page) = page {
                for target in page.edges() {
                    if target as usize != node {
                        linked[target as usize] = true;
                    }
                }
            }
        }
        let first_ts = |node: u32| -> (&str, &str) {
            let ts = self.pages[node as usize]
                .as_ref()
                .map_or("", |p| p.first_ts.as_str());
            (ts, self.urls[node as usize].as_str())
        };
        let mut seeds: Vec<u32> = self.crawl_starts.values().map(|s| s.3).collect();
        seeds.extend(
            (0..n as u32).filter(|&i| self.pages[i as usize].is_some() && !linked[i as usize]),
        );
        seeds.sort_by(|&a, &b| first_ts(a).cmp(&first_ts(b)));
        seeds.dedup();
        let mut order = CrawlOrder {
            order: Vec::with_capacity(n),
            position: vec![u32::MAX; n],
            hops: vec![0; n],
            referrer: vec![None; n],
        };
        self.breadth_first(&seeds, &mut order);
        let mut rest: Vec<u32> = (0..n as u32)
            .filter(|&i| self.pages[i as usize].is_some())
            .collect();
        rest.sort_by(|&a, &b| first_ts(a).cmp(&first_ts(b)));
        for node in rest {
            if order.position[node as usize] == u32::MAX {
                self.breadth_first(&[node], &mut order);
            }
        }
        // Only link targets of pages exist besides pages, and every page was reached.
        for node in 0..n as u32 {
            if order.position[node as usize] == u32::MAX {
                order.position[node as usize] = order.order.len() as u32;
                order.order.push(node);
            }
        }
        order
    }

    fn breadth_first(&self, seeds: &[u32], order: &mut CrawlOrder) {
        let mut queue = VecDeque::new();
        for &seed in seeds {
            if order.position[seed as usize] == u32::MAX {
                order.position[seed as usize] = order.order.len() as u32;
                order.order.push(seed);
                queue.push_back(seed);
            }
        }
        while let Some(node) = queue.pop_front() {
            let Some(page) = &self.pages[node as usize] else {
                continue;
            };
            for target in page.edges() {
                let t = target as usize;
                if order.position[t] == u32::MAX {
                    order.position[t] = order.order.len() as u32;
                    order.order.push(target);
                    order.hops[t] = order.hops[node as usize] + 1;
                    order.referrer[t] = Some(node);
                    queue.push_back(target);
                }
            }
        }
    }
}

/// The crawl order of a snapshot's nodes.
#[derive(Debug, Clone)]
pub struct CrawlOrder {
    /// Position → node id.
    pub order: Vec<u32>,
    /// Node id → position.
    pub position: Vec<u32>,
    /// Node id → link depth from the seeds.
    pub hops: Vec<u32>,
    /// Node id → the node it was discovered from (None for seeds).
    pub referrer: Vec<Option<u32>>,
}

fn is_html(mime: &str) -> bool {
    matches!(mime, "text/html" | "application/xhtml+xml")
}

/// The essence of a Content-Type value, lower case.
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn analyse(
    store: &Store,
    reader: &BodyReader,
    options: &Options,
    latest: Latest,
) -> Result<Analysed> {
    let mut analysed = Analysed {
        document: None,
        words: Vec::new(),
        links: Vec::new(),
        redirect: None,
        blob: None,
        counts: Counts::default(),
        latest,
    };
    let capture = &analysed.latest.capture;
    let status = capture.status.unwrap_or(0);
    let Ok(page_url) = Url::parse(&analysed.latest.url) else {
        return Ok(analysed);
    };
    if (300..400).contains(&status) {
        if let Some(target) = capture
            .redirect
            .as_deref()
            .and_then(|l| page_url.join(l.trim()).ok())
            .and_then(|u| normalize_url(u.as_str()))
        {
            analysed.redirect = Some(target.to_string());
        }
        return Ok(analysed);
    }
    if !(200..300).contains(&status) {
        return Ok(analysed);
    }
    let Some(digest) = capture.digest else {
        analysed.counts.incr("body_no_digest");
        return Ok(analysed);
    };
    let body = match reader.read(store, &digest)? {
        Ok(body) => body,
        Err(why) => {
            analysed.counts.incr(&format!("body_{}", why.reason()));
            return Ok(analysed);
        }
    };
    let content_type = body
        .content_type
        .clone()
        .or_else(|| capture.content_type.clone())
        .unwrap_or_default();
    let mime = capture
        .mime
        .clone()
        .unwrap_or_else(|| essence(&content_type));
    let mut doc = Document {
        size: body.bytes.len() as u64,
        truncated: body.truncated,
        md5: Md5::digest(&body.bytes).into(),
        content_type: content_type.clone(),
        ..Document::default()
    };
    if body.truncated {
        analysed.counts.incr("bodies_truncated");
    }
    let mut text = String::new();
    if is_html(&mime) {
        let parsed = html::analyze(&body.bytes, Some(&content_type), &page_url);
        doc.charset = parsed.encoding.to_string();
        let description = &parsed.description;
        doc.title = description.title.clone().unwrap_or_default();
        doc.description = description.description.clone().unwrap_or_default();
        doc.lang = description.primary_language.clone().unwrap_or_default();
        doc.keywords = meta_keywords(&parsed.text_utf8).unwrap_or_default();
        let pile = &parsed.pile;
        doc.text_start = text_start(&[&parsed.leading_text]);
        for part in [&doc.title, &doc.description, &doc.keywords] {
            text.push_str(part);
            text.push('\n');
        }
        for field in pile.fields() {
            text.push_str(field);
            text.push('\n');
        }
        for link in &parsed.links {
            if link.locality == LinkLocality::SelfDocument {
                continue;
            }
            // Link URLs are parsed and without fragment already.
            if matches!(link.url.scheme(), "http" | "https") {
                analysed.links.push(link.url.as_str().to_string());
            }
        }
    } else if mime == "text/plain" {
        let decoded = html::decode(&body.bytes, Some(&content_type));
        doc.charset = decoded.encoding.name().to_string();
        text = decoded.text;
        doc.text_start = text_start(&[&text]);
    } else {
        doc.charset = html::charset_parameter(&content_type)
            .unwrap_or("")
            .to_ascii_lowercase();
    }
    let (words, total, long_words) = count_words(&text);
    analysed.counts.add("long_words", long_words);
    doc.distinct_words = words.len() as u32;
    doc.total_words = total;
    analysed.words = words;
    if options.keep_bodies {
        analysed.blob = Some(words_blob(&body.bytes));
    }
    analysed.document = Some(doc);
    Ok(analysed)
}

/// Distinct words with their frequencies in order of first occurrence, the number of
/// occurrences, and the number of words too long to index.
pub fn count_words(text: &str) -> (Vec<(String, u32)>, u64, u64) {
    let mut scratch = Scratch::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut words: Vec<(String, u32)> = Vec::new();
    let mut total = 0u64;
    let mut long = 0u64;
    Tokenizer::WORDS.for_each_token(text, &mut scratch, |token| {
        if token.len() > MAX_WORD_BYTES {
            long += 1;
            return;
        }
        total += 1;
        match index.get(token) {
            Some(&i) => words[i].1 = words[i].1.saturating_add(1),
            None => {
                index.insert(token.to_string(), words.len());
                words.push((token.to_string(), 1));
            }
        }
    });
    (words, total, long)
}

/// The first [`TEXT_START_CHARS`] characters of the parts joined by spaces, white space
/// collapsed (and none at the end).
fn text_start(parts: &[&str]) -> String {
    let mut out = text_start_collapsed(parts);
    out.truncate(out.trim_end().len());
    out
}

fn text_start_collapsed(parts: &[&str]) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let mut pending_space = false;
    for part in parts {
        for c in part.chars() {
            if chars >= TEXT_START_CHARS {
                return out;
            }
            if c.is_whitespace() {
                pending_space = !out.is_empty();
                continue;
            }
            if pending_space {
                out.push(' ');
                chars += 1;
                pending_space = false;
                if chars >= TEXT_START_CHARS {
                    return out;
                }
            }
            out.push(c);
            chars += 1;
        }
        pending_space = !out.is_empty();
    }
    out
}

/// The content of the first `<meta name="keywords">` (names compared without case), white
/// space collapsed. Only the `<meta>` tags that mention "keywords" are parsed (each alone,
/// by the same HTML parser, so attribute quoting and character references are read as a
/// browser reads them).
pub fn meta_keywords(html_text: &str) -> Option<String> {
    let bytes = html_text.as_bytes();
    for start in memchr::memchr_iter(b'<', bytes) {
        let rest = &bytes[start + 1..];
        let is_meta = rest.len() > 4
            && rest[..4].eq_ignore_ascii_case(b"meta")
            && matches!(
                rest[4],
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
            );
        if !is_meta {
            continue;
        }
        let end = tag_end(bytes, start);
        let tag = &bytes[start..end];
        if !tag.windows(8).any(|w| w.eq_ignore_ascii_case(b"keywords")) {
            continue;
        }
        // `start` and `end` sit on ASCII bytes ('<', and '>' or the end of the text).
        let Some(snippet) = html_text.get(start..end) else {
            continue;
        };
        let dom = html::dom::parse(snippet);
        for node in 0..dom.nodes.len() as u32 {
            let Some(element) = dom.element(node) else {
                continue;
            };
            let is_keywords = element.html_name() == Some("meta")
                && element
                    .attr("name")
                    .is_some_and(|n| n.trim().eq_ignore_ascii_case("keywords"));
            if let (true, Some(content)) = (is_keywords, element.attr("content")) {
                let collapsed: Vec<&str> = content.split_whitespace().collect();
                return Some(collapsed.join(" "));
            }
        }
    }
    None
}

/// The end (exclusive) of the tag starting at `start`: after the first `>` outside quoted
/// attribute values, or the end of the text.
fn tag_end(bytes: &[u8], start: usize) -> usize {
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return i + 1,
            _ => {}
        }
    }
    bytes.len()
}

/// Marks a words blob that holds the raw document (compression did not shrink it).
pub const RAW_BLOB_MARK: u32 = 0xFFFF_FFFF;

/// The locust/ASPseek `words` column: the document zlib-compressed behind its
/// uncompressed length (4 bytes, little-endian), or [`RAW_BLOB_MARK`] and the raw bytes
/// when compression does not make it shorter.
pub fn words_blob(document: &[u8]) -> Vec<u8> {
    use flate2::{Compression, write::ZlibEncoder};
    let mut encoder = ZlibEncoder::new(
        Vec::with_capacity(document.len() / 3 + 16),
        Compression::default(),
    );
    // Writing into a Vec cannot fail.
    let compressed = encoder
        .write_all(document)
        .and_then(|_| encoder.finish())
        .unwrap_or_default();
    let mut out = Vec::with_capacity(4 + compressed.len().min(document.len()));
    if !compressed.is_empty()
        && compressed.len() < document.len()
        && document.len() < RAW_BLOB_MARK as usize
    {
        out.extend_from_slice(&(document.len() as u32).to_le_bytes());
        out.extend_from_slice(&compressed);
    } else {
        out.extend_from_slice(&RAW_BLOB_MARK.to_le_bytes());
        out.extend_from_slice(document);
    }
    out
}

/// The document back from a words blob; None when the blob is malformed.
pub fn unpack_words_blob(blob: &[u8]) -> Option<Vec<u8>> {
    use flate2::read::ZlibDecoder;
    let (head, rest) = blob.split_first_chunk::<4>()?;
    let length = u32::from_le_bytes(*head);
    if length == RAW_BLOB_MARK {
        return Some(rest.to_vec());
    }
    let mut out = Vec::with_capacity(length as usize);
    ZlibDecoder::new(rest).read_to_end(&mut out).ok()?;
    (out.len() == length as usize).then_some(out)
}

/// Tells the user when documents could not be read because their WARCs were not found.
pub fn warn_missing_warcs(snapshot: &Snapshot) {
    let missing = snapshot.counts.get("body_warc_not_found");
    if missing > 0 {
        eprintln!(
            "sediment: warning: {missing} documents were not read: their WARC files were not found; give the directories that hold them with --warc-dir"
        );
    }
}

/// The directory for the temporary body file: the output directory, created if needed.
pub fn prepare_output_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_blob_round_trips_compressed_and_raw() {
        let text = b"the quick brown fox jumps over the lazy dog ".repeat(20);
        let blob = words_blob(&text);
        assert_eq!(&blob[..4], &(text.len() as u32).to_le_bytes());
        assert!(blob.len() < text.len());
        assert_eq!(unpack_words_blob(&blob).as_deref(), Some(&text[..]));
        // Incompressible: random-looking bytes are stored raw behind the mark.
        let noise: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let blob = words_blob(&noise);
        assert_eq!(&blob[..4], &[0xFF; 4]);
        assert_eq!(&blob[4..], &noise[..]);
        assert_eq!(unpack_words_blob(&blob).as_deref(), Some(&noise[..]));
        assert_eq!(words_blob(b""), [0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(unpack_words_blob(&[1, 2]), None);
    }

    #[test]
    fn text_start_collapses_and_cuts_at_characters() {
        assert_eq!(text_start(&["  a \n b", "c  "]), "a b c");
        let long = "é".repeat(300);
        assert_eq!(text_start(&[&long]).chars().count(), TEXT_START_CHARS);
    }

    #[test]
    fn meta_keywords_found_case_insensitively() {
        let html = r#"<html><head><META NAME="Keywords" content=" lake,  sediment
            cores "><meta name=description content=x></head><body>keywords</body></html>"#;
        assert_eq!(meta_keywords(html).as_deref(), Some("lake, sediment cores"));
        assert_eq!(meta_keywords("<p>no meta</p>"), None);
        let tricky = r#"<meta name="description" content="about keywords"><meta
            content="a &amp; b > c" name=KEYWORDS>"#;
        assert_eq!(meta_keywords(tricky).as_deref(), Some("a & b > c"));
        assert_eq!(
            meta_keywords("<metadata keywords><meta name=keywords"),
            None
        );
    }

    #[test]
    fn counts_words_in_order_of_first_occurrence() {
        let (words, total, long) = count_words("Lake lake LAKE sediment; Core-sample");
        assert_eq!(
            words,
            [
                ("lake".to_string(), 3),
                ("sediment".to_string(), 1),
                ("core".to_string(), 1),
                ("sample".to_string(), 1)
            ]
        );
        assert_eq!((total, long), (6, 0));
        let (_, total, long) = count_words(&"x".repeat(300));
        assert_eq!((total, long), (0, 1));
    }
}
