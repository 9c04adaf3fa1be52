//! Writes N HTML pages as the gzip WARC files of a crawl, for `scripts/bench-scale-pages.sh`
//! (issue 36, projections at scale; issue 37, search on a 1 M-page index).
//!
//! Every page is a real page: the HTML responses (status 200, `text/html`) of the given WARC
//! files, de-chunked and decoded (gzip, deflate), one template each distinct payload. A
//! page's visible text is varied from the seed so that payloads differ and the full-text
//! index grows as a crawl's would: a share of the words of the body (`--replace`, default
//! 30 %) and half of the title's are replaced by words drawn Zipf-like (s = 1) from the
//! vocabulary of all templates in order of frequency, keeping an initial capital, and one
//! token unique to the page (`sp`, its number in base 36, `0`) is added after the words at a
//! quarter, half and three quarters of the body (pages with fewer than 20 words are no
//! templates). Markup, scripts, styles, comments and character references are kept as they
//! are. URLs: registered domains named as examples/gen_scale_cdx.rs names them, Zipf over
//! N / 25 of them (at least 100), the template's directory and a slug of two words and the
//! page number, so that every URL is distinct. Capture times rise through the crawl from
//! 2012-01-01 over 12 years, with jitter.
//!
//! Output: OUT_DIR/SCALE-PAGES-<timestamp>-<serial>-sediment.warc.gz, each file a warcinfo
//! record and then response records (WARC/1.0, one gzip member each) until it passes
//! `--file-mb` (default 1000); the HTTP head is made again (`200 OK`, the template's
//! Content-Type, the new Content-Length); WARC-Payload-Digest and WARC-Block-Digest are the
//! SHA-1 of the payload and of the block. The output depends only on N, the seed, the options
//! and the templates (not on the number of threads): pages are made and compressed in
//! parallel in chunks, written in order.
//!
//! Prints the templates, the vocabulary and, at the end, pages, files, bytes and bytes a page
//! to stderr.
//!
//!     cargo run --release --example gen_scale_warc -- N OUT_DIR [--seed S] [--replace PCT]
//!         [--file-mb MB] [--level 0-9] [--max-template-kb KB] WARC-OR-DIR...
//!
//! With the shared corpus as templates (~100 distinct pages, the biggest 1.2 MB) a page is
//! ~48 KB of HTML and ~10 KB of gzip on average; `--max-template-kb 256` leaves out the few
//! biggest pages (~19 KB of HTML, ~5 KB of gzip a page).

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use data_encoding::BASE32;
use flate2::Compression;
use flate2::write::GzEncoder;
use rayon::prelude::*;
use sediment::warc::{Dechunker, DigestCheck, WarcReader, WarcType};
use sha1::{Digest, Sha1};

#[path = "support/scale.rs"]
mod scale;
use scale::{Rng, SUBDOMAINS, Zipf, domain_name, mix, timestamp};

/// A piece of a template: markup and text copied as they are, or a word that may be
/// replaced.
#[derive(Clone, Copy)]
enum Piece {
    Keep(u32, u32),
    BodyWord(u32, u32),
    TitleWord(u32, u32),
}

struct Template {
    html: Vec<u8>,
    pieces: Vec<Piece>,
    /// The indexes in `pieces` of the body words after which the unique token goes: at a
    /// quarter, half and three quarters of the body's words, where the main text of a page
    /// (what the summary indexes) usually is.
    token_after: Vec<usize>,
    content_type: String,
    /// The directory of the original URL's path (`/` to `/a/b/`).
    dir: String,
    /// `.html`, `.htm`, `.php`… of the original path, or nothing.
    ext: String,
}

fn usage() -> ! {
    eprintln!(
        "usage: gen_scale_warc N OUT_DIR [--seed S] [--replace PCT] [--file-mb MB] [--level 0-9] \
         [--max-template-kb KB] WARC-OR-DIR..."
    );
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n: Option<u64> = None;
    let mut out_dir: Option<PathBuf> = None;
    let mut seed = 36u64;
    let mut replace = 30u64;
    let mut file_mb = 1000u64;
    let mut level = 6u32;
    let mut max_template_kb = 2048usize;
    let mut inputs = Vec::new();
    let mut it = args.into_iter();
    let number = |v: Option<String>, what: &str| -> u64 {
        v.and_then(|v| v.replace('_', "").parse().ok())
            .unwrap_or_else(|| {
                eprintln!("gen_scale_warc: {what} takes a number");
                usage()
            })
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = number(it.next(), "--seed"),
            "--replace" => replace = number(it.next(), "--replace").min(100),
            "--file-mb" => file_mb = number(it.next(), "--file-mb").max(1),
            "--level" => level = number(it.next(), "--level").min(9) as u32,
            "--max-template-kb" => {
                max_template_kb = number(it.next(), "--max-template-kb") as usize
            }
            _ if n.is_none() => n = Some(number(Some(a), "N")),
            _ if out_dir.is_none() => out_dir = Some(PathBuf::from(a)),
            _ => inputs.push(PathBuf::from(a)),
        }
    }
    let (Some(n), Some(out_dir)) = (n, out_dir) else {
        usage()
    };
    if inputs.is_empty() {
        usage();
    }

    let mut files = Vec::new();
    for input in &inputs {
        warc_files(input, &mut files);
    }
    files.sort();
    let templates = read_templates(&files, max_template_kb * 1024);
    if templates.is_empty() {
        eprintln!(
            "gen_scale_warc: no HTML response (status 200, text/html, at most {max_template_kb} KB) \
             in {} WARC files under {}",
            files.len(),
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        std::process::exit(1);
    }
    let vocabulary = Vocabulary::new(&templates);
    let html_bytes: usize = templates.iter().map(|t| t.html.len()).sum();
    eprintln!(
        "gen_scale_warc: {} templates ({} bytes of HTML on average) from {} WARC files, \
         vocabulary {} words",
        templates.len(),
        html_bytes / templates.len(),
        files.len(),
        vocabulary.words.len()
    );

    let domains = Domains::new((n / 25).max(100), seed);
    let config = Config {
        templates,
        vocabulary,
        domains,
        seed,
        replace,
        n,
        level,
    };
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        eprintln!("gen_scale_warc: cannot create {}: {e}", out_dir.display());
        std::process::exit(1);
    }

    // Chunks of pages made in parallel, a round of chunks at a time, written in order: the
    // memory is a round's compressed output whatever N is.
    const CHUNK: u64 = 64;
    let round = (rayon::current_num_threads() as u64 * 4).max(1);
    let chunks = n.div_ceil(CHUNK);
    let mut writer = Output::new(out_dir, file_mb << 20, level, seed);
    let started = std::time::Instant::now();
    let mut next_report = 0u64;
    let mut c = 0u64;
    while c < chunks {
        let end = (c + round).min(chunks);
        let made: Vec<Chunk> = (c..end)
            .into_par_iter()
            .map(|k| config.chunk(k * CHUNK, ((k + 1) * CHUNK).min(n)))
            .collect();
        for chunk in &made {
            writer.write(chunk);
        }
        c = end;
        let done = (c * CHUNK).min(n);
        if done >= next_report || done == n {
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "gen_scale_warc: {done} of {n} pages, {} files, {:.0} MB, {:.0} pages/s",
                writer.files.len(),
                writer.total as f64 / 1e6,
                done as f64 / secs.max(1e-9)
            );
            next_report = done + (n / 20).max(CHUNK);
        }
    }
    writer.finish();
    eprintln!(
        "gen_scale_warc: done: {n} pages in {} files, {} bytes, {:.0} bytes a page (gzip), \
         {:.0} bytes of HTML a page, {:.1} s",
        writer.files.len(),
        writer.total,
        writer.total as f64 / n.max(1) as f64,
        writer.html as f64 / n.max(1) as f64,
        started.elapsed().as_secs_f64()
    );
}

/// The WARC files of a path: itself, or those under a directory (`*.warc`, `*.warc.gz`).
fn warc_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            eprintln!("gen_scale_warc: cannot list {}, skipped", path.display());
            return;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() || name.ends_with(".warc") || name.ends_with(".warc.gz") {
                warc_files(&p, out);
            }
        }
    } else {
        out.push(path.to_owned());
    }
}

/// Reads every file's HTML responses; the distinct decoded payloads become templates.
fn read_templates(files: &[PathBuf], max_len: usize) -> Vec<Template> {
    let mut seen = HashSet::new();
    let mut templates = Vec::new();
    for path in files {
        let reader = match std::fs::File::open(path)
            .map_err(|e| e.to_string())
            .and_then(|f| WarcReader::new(std::io::BufReader::new(f)).map_err(|e| e.to_string()))
        {
            Ok(reader) => reader,
            Err(e) => {
                eprintln!("gen_scale_warc: {} skipped: {e}", path.display());
                continue;
            }
        };
        let mut reader = reader;
        let mut body = Vec::new();
        loop {
            body.clear();
            let item = reader.next_record(Some(&mut |bytes: &[u8]| {
                if body.len() <= max_len * 4 {
                    body.extend_from_slice(bytes)
                }
            }));
            let Some(item) = item else { break };
            // Damaged records (the corpus keeps some on purpose) are no templates.
            let Ok(record) = item else { continue };
            let Some(http) = &record.http else { continue };
            if record.warc_type != WarcType::Response
                || http.status() != Some(200)
                || matches!(record.digest_check, DigestCheck::Mismatch { .. })
                || record
                    .payload
                    .as_ref()
                    .is_none_or(|p| p.length as usize != body.len())
            {
                continue;
            }
            let content_type = http.content_type().unwrap_or("").trim().to_owned();
            if !content_type.to_ascii_lowercase().starts_with("text/html")
                || content_type.bytes().any(|b| b < b' ')
            {
                continue;
            }
            let mut html = if http.transfer_encoding_chunked() {
                let mut decoded = Vec::new();
                let mut dechunker = Dechunker::new();
                if dechunker
                    .feed(&body, &mut |piece: &[u8]| decoded.extend_from_slice(piece))
                    .is_err()
                    || dechunker.finish().is_err()
                {
                    continue;
                }
                decoded
            } else {
                body.clone()
            };
            match http
                .content_encoding()
                .map(|e| e.trim().to_ascii_lowercase())
            {
                None => {}
                Some(e) if e.is_empty() || e == "identity" => {}
                Some(e) if e == "gzip" || e == "x-gzip" => {
                    let mut decoded = Vec::new();
                    if flate2::read::MultiGzDecoder::new(&html[..])
                        .read_to_end(&mut decoded)
                        .is_err()
                    {
                        continue;
                    }
                    html = decoded;
                }
                Some(e) if e == "deflate" => {
                    let mut decoded = Vec::new();
                    let zlib = flate2::read::ZlibDecoder::new(&html[..]).read_to_end(&mut decoded);
                    if zlib.is_err() {
                        decoded.clear();
                        if flate2::read::DeflateDecoder::new(&html[..])
                            .read_to_end(&mut decoded)
                            .is_err()
                        {
                            continue;
                        }
                    }
                    html = decoded;
                }
                Some(_) => continue,
            }
            if html.len() < 256
                || html.len() > max_len
                || !seen.insert(<[u8; 20]>::from(Sha1::digest(&html)))
            {
                continue;
            }
            let pieces = lex(&html);
            let words: Vec<usize> = pieces
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p, Piece::BodyWord(..)))
                .map(|(k, _)| k)
                .collect();
            if words.len() < 20 {
                continue;
            }
            let mut token_after: Vec<usize> =
                [1, 2, 3].map(|q| words[words.len() * q / 4]).to_vec();
            token_after.dedup();
            let path = record
                .target_uri()
                .and_then(|u| u.split_once("://").map(|(_, rest)| rest))
                .map(|rest| rest.find('/').map_or("/", |p| &rest[p..]))
                .unwrap_or("/");
            let path = path.split(['?', '#']).next().unwrap_or("/");
            let cut = path.rfind('/').map_or(0, |p| p + 1);
            let (dir, last) = path.split_at(cut);
            let dir = if dir.is_empty()
                || dir.len() > 80
                || dir.bytes().any(|b| b <= b' ' || b >= 0x7f)
            {
                "/".to_owned()
            } else {
                dir.to_owned()
            };
            let ext = last
                .rfind('.')
                .map(|p| &last[p..])
                .filter(|e| e.len() <= 6 && e[1..].bytes().all(|b| b.is_ascii_alphanumeric()))
                .unwrap_or("")
                .to_owned();
            templates.push(Template {
                html,
                pieces,
                token_after,
                content_type,
                dir,
                ext,
            });
        }
    }
    templates
}

/// Cuts HTML into pieces: words of visible text (ASCII letters, two or more) and the rest.
/// Scripts, styles, comments, tags and character references are kept whole.
fn lex(html: &[u8]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut keep_from = 0usize;
    let mut in_title = false;
    let mut i = 0usize;
    let lower_starts = |at: usize, what: &[u8]| {
        html.len() >= at + what.len() && html[at..at + what.len()].eq_ignore_ascii_case(what)
    };
    let find = |from: usize, what: &[u8]| {
        memchr::memmem::find(&html[from.min(html.len())..], what).map(|p| from + p)
    };
    while i < html.len() {
        let b = html[i];
        if b == b'<' {
            if lower_starts(i, b"<!--") {
                i = find(i + 4, b"-->").map_or(html.len(), |p| p + 3);
                continue;
            }
            let end = memchr::memchr(b'>', &html[i..]).map_or(html.len(), |p| i + p + 1);
            let name_end = html[i + 1..end]
                .iter()
                .position(|c| !c.is_ascii_alphanumeric() && *c != b'/')
                .map_or(end, |p| i + 1 + p);
            let name = html[i + 1..name_end].to_ascii_lowercase();
            match name.as_slice() {
                b"title" => in_title = true,
                b"/title" => in_title = false,
                b"script" | b"style" | b"textarea" | b"noscript" => {
                    // Raw text: nothing in it is markup until its end tag.
                    let mut close = b"</".to_vec();
                    close.extend_from_slice(&name);
                    let mut at = end;
                    let mut closed = html.len();
                    while let Some(p) = memchr::memchr(b'<', &html[at.min(html.len())..]) {
                        if lower_starts(at + p, &close) {
                            closed = at + p;
                            break;
                        }
                        at += p + 1;
                    }
                    i = closed;
                    continue;
                }
                _ => {}
            }
            i = end;
        } else if b == b'&' {
            // A character reference such as &amp; or &#8217;: its letters are no word.
            let end = html[i + 1..]
                .iter()
                .take(12)
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'#'))
                .map_or(i + 1, |p| i + 1 + p);
            i = if end < html.len() && html[end] == b';' {
                end + 1
            } else {
                end
            };
        } else if b.is_ascii_alphabetic()
            && (i == 0 || !(html[i - 1].is_ascii_alphanumeric() || html[i - 1] >= 0x80))
        {
            // Letters glued to digits or to non-ASCII letters are no word of ours either.
            let end = html[i..]
                .iter()
                .position(|c| !c.is_ascii_alphabetic())
                .map_or(html.len(), |p| i + p);
            let glued = end < html.len() && (html[end].is_ascii_digit() || html[end] >= 0x80);
            if end - i >= 2 && !glued {
                if keep_from < i {
                    pieces.push(Piece::Keep(keep_from as u32, i as u32));
                }
                if in_title {
                    pieces.push(Piece::TitleWord(i as u32, end as u32));
                } else {
                    pieces.push(Piece::BodyWord(i as u32, end as u32));
                }
                keep_from = end;
            }
            i = end;
        } else {
            i += 1;
        }
    }
    if keep_from < html.len() {
        pieces.push(Piece::Keep(keep_from as u32, html.len() as u32));
    }
    pieces
}

/// The words of all templates' text, most frequent first, with a Zipf (s = 1) sampler.
struct Vocabulary {
    /// By rank: the most frequent first.
    words: Vec<String>,
    ranks: Zipf,
}

impl Vocabulary {
    fn new(templates: &[Template]) -> Vocabulary {
        let mut counts: HashMap<String, u64> = HashMap::new();
        for t in templates {
            for piece in &t.pieces {
                if let Piece::BodyWord(a, b) | Piece::TitleWord(a, b) = *piece {
                    let word = std::str::from_utf8(&t.html[a as usize..b as usize])
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    *counts.entry(word).or_default() += 1;
                }
            }
        }
        let mut ranked: Vec<(String, u64)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let words: Vec<String> = ranked.into_iter().map(|(w, _)| w).collect();
        let ranks = Zipf::new(words.len() as u64);
        Vocabulary { words, ranks }
    }

    fn draw(&self, rng: &mut Rng) -> &str {
        &self.words[self.ranks.draw(rng)]
    }
}

/// Registered domains, drawn Zipf-like by a seeded rank.
struct Domains {
    names: Vec<String>,
    ranks: Zipf,
}

impl Domains {
    fn new(count: u64, seed: u64) -> Domains {
        let ranks = Zipf::new(count);
        // Rank r is domain number mix(r ^ seed) % count…: a spread of names, not the
        // first ones in order.
        let names = (0..count)
            .map(|r| domain_name(mix(r ^ mix(seed ^ 0xd0)) % (count * 16)))
            .collect();
        Domains { names, ranks }
    }

    fn draw(&self, rng: &mut Rng) -> &str {
        &self.names[self.ranks.draw(rng)]
    }
}

struct Config {
    templates: Vec<Template>,
    vocabulary: Vocabulary,
    domains: Domains,
    seed: u64,
    replace: u64,
    n: u64,
    level: u32,
}

/// Pages `first..end`, each a gzip member, and the first capture time.
struct Chunk {
    gz: Vec<u8>,
    first_secs: u64,
    html: u64,
}

const START: u64 = 1_325_376_000; // 2012-01-01
const SPAN: u64 = 12 * 365 * 86400;

fn base36(mut v: u64, out: &mut String) {
    let mut digits = [0u8; 16];
    let mut k = 0;
    loop {
        digits[k] = b"0123456789abcdefghijklmnopqrstuvwxyz"[(v % 36) as usize];
        v /= 36;
        k += 1;
        if v == 0 {
            break;
        }
    }
    for d in digits[..k].iter().rev() {
        out.push(*d as char);
    }
}

fn push_word(out: &mut Vec<u8>, word: &str, capital: bool) {
    let start = out.len();
    out.extend_from_slice(word.as_bytes());
    if capital {
        out[start] = out[start].to_ascii_uppercase();
    }
}

/// `2015-03-04T05:06:07Z` of a Unix time.
fn warc_date(secs: u64, out: &mut Vec<u8>) {
    let mut ts = Vec::with_capacity(14);
    timestamp(secs, &mut ts);
    out.extend_from_slice(&ts[0..4]);
    out.push(b'-');
    out.extend_from_slice(&ts[4..6]);
    out.push(b'-');
    out.extend_from_slice(&ts[6..8]);
    out.push(b'T');
    out.extend_from_slice(&ts[8..10]);
    out.push(b':');
    out.extend_from_slice(&ts[10..12]);
    out.push(b':');
    out.extend_from_slice(&ts[12..14]);
    out.push(b'Z');
}

fn record_id(rng: &mut Rng) -> String {
    let (a, b) = (rng.next(), rng.next());
    format!(
        "<urn:uuid:{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}>",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

fn sha1_label(bytes: &[&[u8]]) -> String {
    let mut h = Sha1::new();
    for b in bytes {
        h.update(b);
    }
    let digest: [u8; 20] = h.finalize().into();
    format!("sha1:{}", BASE32.encode(&digest))
}

/// One WARC record, WARC headers given without Content-Length, as a gzip member.
fn gzip_record(headers: &[u8], block: &[&[u8]], level: u32, out: &mut Vec<u8>) {
    let length: usize = block.iter().map(|b| b.len()).sum();
    let mut gz = GzEncoder::new(std::mem::take(out), Compression::new(level));
    let write = |gz: &mut GzEncoder<Vec<u8>>, b: &[u8]| gz.write_all(b).expect("write to memory");
    write(&mut gz, headers);
    write(
        &mut gz,
        format!("Content-Length: {length}\r\n\r\n").as_bytes(),
    );
    for b in block {
        write(&mut gz, b);
    }
    write(&mut gz, b"\r\n\r\n");
    *out = gz.finish().expect("write to memory");
}

impl Config {
    fn chunk(&self, first: u64, end: u64) -> Chunk {
        let mut gz = Vec::new();
        let mut html = Vec::with_capacity(1 << 16);
        let mut url = String::with_capacity(256);
        let mut token = String::with_capacity(16);
        let mut head = Vec::with_capacity(256);
        let mut headers = Vec::with_capacity(1024);
        let mut first_secs = 0;
        let mut html_total = 0u64;
        for i in first..end {
            let mut rng = Rng(mix(self.seed ^ mix(i.wrapping_mul(0x9E37_79B9) ^ 0x77a7c)));
            let t = &self.templates[rng.below(self.templates.len() as u64) as usize];

            // The page: the template with its words varied and the unique token.
            html.clear();
            token.clear();
            token.push_str("sp");
            base36(i, &mut token);
            // A digit last: FTS5's porter stemmer would take the `s` off `sp1as` and make it
            // `sp1a`, another page's token.
            token.push('0');
            for (k, piece) in t.pieces.iter().enumerate() {
                let (a, b, share) = match *piece {
                    Piece::Keep(a, b) => {
                        html.extend_from_slice(&t.html[a as usize..b as usize]);
                        continue;
                    }
                    Piece::BodyWord(a, b) => (a as usize, b as usize, self.replace),
                    Piece::TitleWord(a, b) => (a as usize, b as usize, 50),
                };
                if rng.below(100) < share {
                    let capital = t.html[a].is_ascii_uppercase();
                    push_word(&mut html, self.vocabulary.draw(&mut rng), capital);
                } else {
                    html.extend_from_slice(&t.html[a..b]);
                }
                if t.token_after.contains(&k) {
                    html.push(b' ');
                    html.extend_from_slice(token.as_bytes());
                }
            }
            html_total += html.len() as u64;

            // Where and when.
            let step = SPAN / self.n.max(1);
            let secs = START + i * step + rng.below(step.max(1));
            if i == first {
                first_secs = secs;
            }
            url.clear();
            url.push_str("http://");
            let sub = rng.below(10);
            if sub == 0 {
                url.push_str(SUBDOMAINS[rng.below(SUBDOMAINS.len() as u64) as usize]);
                url.push('.');
            } else if sub < 7 {
                url.push_str("www.");
            }
            url.push_str(self.domains.draw(&mut rng));
            url.push_str(&t.dir);
            url.push_str(self.vocabulary.draw(&mut rng));
            url.push('-');
            url.push_str(self.vocabulary.draw(&mut rng));
            url.push('-');
            base36(i, &mut url);
            url.push_str(&t.ext);

            head.clear();
            head.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Type: ");
            head.extend_from_slice(t.content_type.as_bytes());
            head.extend_from_slice(
                format!("\r\nContent-Length: {}\r\n\r\n", html.len()).as_bytes(),
            );

            headers.clear();
            headers.extend_from_slice(b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: ");
            headers.extend_from_slice(record_id(&mut rng).as_bytes());
            headers.extend_from_slice(b"\r\nWARC-Date: ");
            warc_date(secs, &mut headers);
            headers.extend_from_slice(b"\r\nWARC-Target-URI: ");
            headers.extend_from_slice(url.as_bytes());
            headers.extend_from_slice(
                b"\r\nContent-Type: application/http; msgtype=response\r\nWARC-Payload-Digest: ",
            );
            headers.extend_from_slice(sha1_label(&[&html[..]]).as_bytes());
            headers.extend_from_slice(b"\r\nWARC-Block-Digest: ");
            headers.extend_from_slice(sha1_label(&[&head[..], &html[..]]).as_bytes());
            headers.extend_from_slice(b"\r\n");
            gzip_record(&headers, &[&head[..], &html[..]], self.level, &mut gz);
        }
        Chunk {
            gz,
            first_secs,
            html: html_total,
        }
    }
}

/// The WARC files being written, rolled over when one passes its size.
struct Output {
    dir: PathBuf,
    limit: u64,
    level: u32,
    seed: u64,
    file: Option<(std::io::BufWriter<std::fs::File>, PathBuf)>,
    size: u64,
    files: Vec<PathBuf>,
    total: u64,
    html: u64,
}

impl Output {
    fn new(dir: PathBuf, limit: u64, level: u32, seed: u64) -> Output {
        Output {
            dir,
            limit,
            level,
            seed,
            file: None,
            size: 0,
            files: Vec::new(),
            total: 0,
            html: 0,
        }
    }

    fn write(&mut self, chunk: &Chunk) {
        if self.file.is_some() && self.size >= self.limit {
            self.close();
        }
        if self.file.is_none() {
            self.open(chunk.first_secs);
        }
        let (file, path) = self.file.as_mut().expect("opened");
        if let Err(e) = file.write_all(&chunk.gz) {
            eprintln!("gen_scale_warc: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
        self.size += chunk.gz.len() as u64;
        self.total += chunk.gz.len() as u64;
        self.html += chunk.html;
    }

    fn open(&mut self, secs: u64) {
        let mut ts = Vec::new();
        timestamp(secs, &mut ts);
        let name = format!(
            "SCALE-PAGES-{}-{:05}-sediment.warc.gz",
            String::from_utf8_lossy(&ts),
            self.files.len()
        );
        let path = self.dir.join(&name);
        let file = std::fs::File::create(&path).unwrap_or_else(|e| {
            eprintln!("gen_scale_warc: cannot create {}: {e}", path.display());
            std::process::exit(1);
        });
        let mut file = std::io::BufWriter::with_capacity(1 << 20, file);
        // The warcinfo record that opens a crawler's file.
        let mut rng = Rng(mix(self.seed ^ mix(self.files.len() as u64 ^ 0x1f0)));
        let mut headers = b"WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Date: ".to_vec();
        warc_date(secs, &mut headers);
        headers
            .extend_from_slice(format!("\r\nWARC-Filename: {name}\r\nWARC-Record-ID: ").as_bytes());
        headers.extend_from_slice(record_id(&mut rng).as_bytes());
        headers.extend_from_slice(b"\r\nContent-Type: application/warc-fields\r\n");
        let fields = format!(
            "software: sediment gen_scale_warc (examples/gen_scale_warc.rs)\r\n\
             format: WARC File Format 1.0\r\nisPartOf: SCALE-PAGES seed {}\r\n",
            self.seed
        );
        let mut gz = Vec::new();
        gzip_record(&headers, &[fields.as_bytes()], self.level, &mut gz);
        file.write_all(&gz).unwrap_or_else(|e| {
            eprintln!("gen_scale_warc: cannot write {}: {e}", path.display());
            std::process::exit(1);
        });
        self.size = gz.len() as u64;
        self.total += gz.len() as u64;
        self.file = Some((file, path.clone()));
        self.files.push(path);
    }

    fn close(&mut self) {
        if let Some((file, path)) = self.file.take()
            && let Err(e) = file.into_inner()
        {
            eprintln!("gen_scale_warc: cannot finish {}: {e}", path.display());
            std::process::exit(1);
        }
    }

    fn finish(&mut self) {
        self.close();
    }
}
