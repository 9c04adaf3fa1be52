//! What a URL's latest capture contributes to the word indexes: its document's words,
//! links and start of text, and the compact form its words are stored in.

use std::collections::HashMap;
use std::io::{Read, Write};

use html5ever::local_name;

use crate::html;

use crate::project::tokenize::{Scratch, Tokenizer};

/// Words longer than this (in bytes) are not indexed.
pub const MAX_WORD_BYTES: usize = 255;

/// Characters of body text kept by `text_start`.
pub const TEXT_START_CHARS: usize = 255;

pub(super) fn is_html(mime: &str) -> bool {
    matches!(mime, "text/html" | "application/xhtml+xml")
}

/// The essence of a Content-Type value, lower case.
pub(super) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
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
pub(super) fn text_start(parts: &[&str]) -> String {
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
            let is_keywords = element.html_name() == Some(&local_name!("meta"))
                && element
                    .attr(&local_name!("name"))
                    .is_some_and(|n| n.trim().eq_ignore_ascii_case("keywords"));
            if let (true, Some(content)) = (is_keywords, element.attr(&local_name!("content"))) {
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
