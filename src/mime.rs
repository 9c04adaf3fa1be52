//! MIME types: normalization of the raw values found in headers and CDX files, and
//! sniffing from the first bytes of a payload.
//!
//! The alias table is data: `schemas/mime-aliases.json` (each alias documented there),
//! compiled into the binary and parsed once.

use std::borrow::Cow;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

/// The alias table, as shipped in `schemas/mime-aliases.json`.
pub const ALIASES_JSON: &str = include_str!("../schemas/mime-aliases.json");

#[derive(serde::Deserialize)]
struct AliasFile {
    unknown: Vec<UnknownEntry>,
    aliases: Vec<AliasEntry>,
}

#[derive(serde::Deserialize)]
struct UnknownEntry {
    value: String,
}

#[derive(serde::Deserialize)]
struct AliasEntry {
    alias: String,
    canonical: String,
}

/// The parsed table: alias → canonical type, and the values meaning "no type".
pub struct MimeTable {
    /// Looked up for every capture: hashed with Fx, not SipHash (the lookup was ~1 % of a
    /// CDX bulk load's instructions, issue 39); the keys are the table's own.
    aliases: FxHashMap<String, String>,
    unknown: Vec<String>,
}

impl MimeTable {
    /// The canonical type of a normalized (trimmed, lower-case, parameter-free) alias.
    pub fn canonical(&self, normalized: &str) -> Option<&str> {
        self.aliases.get(normalized).map(String::as_str)
    }

    /// Whether a trimmed value means "no type" (`unk`, `-`, empty, …), in any case.
    pub fn is_unknown(&self, trimmed: &str) -> bool {
        self.unknown.iter().any(|u| u.eq_ignore_ascii_case(trimmed))
    }

    /// All (alias, canonical) pairs.
    pub fn aliases(&self) -> impl Iterator<Item = (&str, &str)> {
        self.aliases.iter().map(|(a, c)| (a.as_str(), c.as_str()))
    }
}

/// The table, parsed on first use. The JSON is part of the binary and checked by the tests,
/// so a parse failure can only come from a broken build; it then yields an empty table.
pub fn table() -> &'static MimeTable {
    static TABLE: OnceLock<MimeTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let file: AliasFile = serde_json::from_str(ALIASES_JSON).unwrap_or(AliasFile {
            unknown: Vec::new(),
            aliases: Vec::new(),
        });
        MimeTable {
            aliases: file
                .aliases
                .into_iter()
                .map(|e| (e.alias, e.canonical))
                .collect(),
            unknown: file.unknown.into_iter().map(|e| e.value).collect(),
        }
    })
}

/// Normalizes a raw MIME value: parameters (`; charset=…`) dropped, trimmed, lower-cased,
/// aliases folded (`application/x-pdf` → `application/pdf`). `None` when the value means
/// "no type": empty, `-`, `unk`, `no-type`, … Borrows from the input when it is already
/// in normal form.
pub fn normalize(raw: &str) -> Option<Cow<'_, str>> {
    let without_params = match raw.find(';') {
        Some(i) => &raw[..i],
        None => raw,
    };
    let trimmed = without_params.trim();
    let table = table();
    if trimmed.is_empty() || table.is_unknown(trimmed) {
        return None;
    }
    if trimmed.bytes().any(|b| b.is_ascii_uppercase()) {
        let lower = trimmed.to_ascii_lowercase();
        return Some(match table.canonical(&lower) {
            Some(canonical) => Cow::Borrowed(canonical),
            None => Cow::Owned(lower),
        });
    }
    Some(Cow::Borrowed(table.canonical(trimmed).unwrap_or(trimmed)))
}

/// The full-text type list, as shipped in `schemas/fulltext-types.json`: by default only
/// captures of these types make file rows (see `filter`).
pub const FULLTEXT_JSON: &str = include_str!("../schemas/fulltext-types.json");

/// What `--mime` accepts for the whole full-text list.
pub const FULLTEXT_WORD: &str = "fulltext";

#[derive(serde::Deserialize)]
struct FulltextFile {
    types: Vec<FulltextEntry>,
}

#[derive(serde::Deserialize)]
struct FulltextEntry {
    #[serde(rename = "type")]
    mime: String,
    #[serde(default)]
    words: Vec<String>,
}

/// The parsed full-text list: canonical types, and the words users type for them.
pub struct FulltextTypes {
    types: Vec<String>,
    words: Vec<(String, String)>,
}

impl FulltextTypes {
    /// The canonical types, sorted.
    pub fn types(&self) -> &[String] {
        &self.types
    }

    #[cfg(test)]
    pub fn contains(&self, normalized: &str) -> bool {
        self.types
            .binary_search_by(|t| t.as_str().cmp(normalized))
            .is_ok()
    }
}

/// The full-text list, parsed on first use (like [`table`], a parse failure can only come
/// from a broken build, which the tests catch; it then yields an empty list).
pub fn fulltext() -> &'static FulltextTypes {
    static LIST: OnceLock<FulltextTypes> = OnceLock::new();
    LIST.get_or_init(|| {
        let file: FulltextFile =
            serde_json::from_str(FULLTEXT_JSON).unwrap_or(FulltextFile { types: Vec::new() });
        let mut types: Vec<String> = file.types.iter().map(|e| e.mime.clone()).collect();
        types.sort();
        types.dedup();
        let words = file
            .types
            .into_iter()
            .flat_map(|e| {
                let mime = e.mime;
                e.words.into_iter().map(move |w| (w, mime.clone()))
            })
            .collect();
        FulltextTypes { types, words }
    })
}

/// Whether a normalized value is shaped like a MIME type: `type/subtype`, each a
/// restricted name of RFC 6838 (letters, digits and `!#$&-^_.+`, starting with a letter
/// or digit).
pub fn is_mime_type(normalized: &str) -> bool {
    let name_ok = |name: &str| {
        !name.is_empty()
            && name.len() <= 127
            && name.as_bytes()[0].is_ascii_alphanumeric()
            && name.bytes().all(|b| {
                b.is_ascii_alphanumeric()
                    || matches!(
                        b,
                        b'!' | b'#' | b'$' | b'&' | b'-' | b'^' | b'_' | b'.' | b'+'
                    )
            })
    };
    match normalized.split_once('/') {
        Some((top, sub)) => name_ok(top) && name_ok(sub),
        None => false,
    }
}

/// Parses one `--mime` value: a MIME type (returned normalized, so `application/x-pdf`
/// gives `application/pdf`), a whole top-level type (`image/*`), or `fulltext` (the
/// full-text list). Anything else is refused with a suggestion when one is close, so that
/// `--mime html` does not silently match nothing.
pub fn parse_mime_arg(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    if trimmed.eq_ignore_ascii_case(FULLTEXT_WORD) {
        return Ok(FULLTEXT_WORD.to_string());
    }
    if let Some(top) = trimmed.strip_suffix("/*")
        && is_mime_type(&format!("{}/x", top.to_ascii_lowercase()))
    {
        return Ok(format!("{}/*", top.to_ascii_lowercase()));
    }
    parse_mime_type(raw)
}

/// Parses a MIME type given on the command line (returned normalized), refusing what is
/// not one with a suggestion when one is close.
pub fn parse_mime_type(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    if let Some(normalized) = normalize(trimmed)
        && is_mime_type(&normalized)
    {
        return Ok(normalized.into_owned());
    }
    let hint = match suggest(trimmed).as_slice() {
        [] => format!(
            "give TYPE/SUBTYPE (e.g. application/pdf), TYPE/* (e.g. image/*), or {FULLTEXT_WORD} for the full-text list (schemas/fulltext-types.json)"
        ),
        [one] => format!("did you mean {one}?"),
        many => format!("did you mean one of {}?", many.join(", ")),
    };
    Err(format!("{raw:?} is not a MIME type; {hint}"))
}

/// Types a user may have meant by a word such as `html`, `pdf`, `jpg` or `image`: the
/// full-text list's words first, then every known type whose subtype (without `x-` and
/// `+suffix`) is the word.
pub fn suggest(word: &str) -> Vec<String> {
    let word = word
        .trim()
        .trim_start_matches('.')
        .trim_end_matches('/')
        .to_ascii_lowercase();
    if word.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    let mut push = |mime: &str| {
        if !out.iter().any(|m| m == mime) {
            out.push(mime.to_string());
        }
    };
    for (w, mime) in &fulltext().words {
        if *w == word {
            push(mime);
        }
    }
    let known = fulltext()
        .types
        .iter()
        .map(|t| (t.as_str(), t.as_str()))
        .chain(table().aliases())
        .chain(table().aliases().map(|(_, c)| (c, c)));
    let mut others: Vec<&str> = Vec::new();
    for (spelling, canonical) in known {
        let Some((top, sub)) = spelling.split_once('/') else {
            continue;
        };
        let sub = sub.strip_prefix("x-").unwrap_or(sub);
        let base = sub.split('+').next().unwrap_or(sub);
        if sub == word || base == word {
            others.push(canonical);
        } else if top == word {
            others.push("");
        }
    }
    others.sort_unstable();
    others.dedup();
    for mime in others {
        match mime {
            "" => push(&format!("{word}/*")),
            mime => push(mime),
        }
    }
    out.truncate(4);
    out
}

/// Guesses a MIME type from the first bytes of a payload (a few hundred bytes are enough).
/// Recognizes PDF, HTML, XML (and XHTML, SVG, RSS, Atom by their root element), PNG, JPEG,
/// GIF, WebP, TIFF, ZIP, gzip, bzip2, PostScript and RTF. JSON and plain text are not
/// guessed: `None` means "could not tell".
pub fn sniff(prefix: &[u8]) -> Option<&'static str> {
    if let Some(binary) = sniff_binary(prefix) {
        return Some(binary);
    }
    // Text formats may follow a UTF-8 byte order mark and white space.
    let text = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    let start = text
        .iter()
        .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c))
        .unwrap_or(text.len());
    let text = &text[start..];
    if text.starts_with(b"%PDF-") {
        return Some("application/pdf");
    }
    if starts_with_ignore_case(text, b"<?xml") {
        return Some(sniff_xml_root(text));
    }
    if is_html_start(text) {
        return Some("text/html");
    }
    None
}

fn sniff_binary(p: &[u8]) -> Option<&'static str> {
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"%PDF-", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xFF\xD8\xFF", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"PK\x03\x04", "application/zip"),
        (b"PK\x05\x06", "application/zip"),
        (b"PK\x07\x08", "application/zip"),
        (b"\x1F\x8B\x08", "application/gzip"),
        (b"%!PS", "application/postscript"),
        (b"{\\rtf", "application/rtf"),
        (b"II*\x00", "image/tiff"),
        (b"MM\x00*", "image/tiff"),
    ];
    for (magic, mime) in SIGNATURES {
        if p.starts_with(magic) {
            return Some(mime);
        }
    }
    if p.len() >= 12 && p.starts_with(b"RIFF") && &p[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    if p.len() >= 4 && p.starts_with(b"BZh") && (b'1'..=b'9').contains(&p[3]) {
        return Some("application/x-bzip2");
    }
    None
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// The openings by which browsers recognize HTML (WHATWG MIME sniffing): a tag name from
/// this list followed by a space or `>`, or a comment.
fn is_html_start(text: &[u8]) -> bool {
    const TAGS: &[&[u8]] = &[
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<body",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a",
        b"<style",
        b"<title",
        b"<b",
        b"<br",
        b"<p",
    ];
    if text.starts_with(b"<!--") {
        return true;
    }
    TAGS.iter().any(|tag| {
        starts_with_ignore_case(text, tag)
            && matches!(
                text.get(tag.len()),
                Some(b' ' | b'>' | b'\t' | b'\n' | b'\r' | 0x0c)
            )
    })
}

/// XML: the type follows the root element (or the DOCTYPE name), skipping the prolog.
fn sniff_xml_root(text: &[u8]) -> &'static str {
    let mut rest = text;
    loop {
        let start = rest
            .iter()
            .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
        rest = &rest[start..];
        let skip_to = |rest: &[u8], end: &[u8]| {
            rest.windows(end.len())
                .position(|w| w == end)
                .map(|p| p + end.len())
        };
        let next = if rest.starts_with(b"<?") {
            skip_to(rest, b"?>")
        } else if rest.starts_with(b"<!--") {
            skip_to(rest, b"-->")
        } else if starts_with_ignore_case(rest, b"<!doctype") {
            let name = element_name(&rest[b"<!doctype".len()..]);
            if let Some(mime) = xml_root_type(name) {
                return mime;
            }
            skip_to(rest, b">")
        } else if rest.starts_with(b"<") {
            return xml_root_type(element_name(&rest[1..])).unwrap_or("text/xml");
        } else {
            return "text/xml";
        };
        match next {
            Some(n) => rest = &rest[n..],
            None => return "text/xml",
        }
    }
}

fn element_name(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|&b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..];
    let end = text
        .iter()
        .position(|&b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/' | b'['))
        .unwrap_or(text.len());
    // A namespace prefix (`svg:svg`) does not change the kind of document.
    let name = &text[..end];
    match name.iter().rposition(|&b| b == b':') {
        Some(colon) => &name[colon + 1..],
        None => name,
    }
}

fn xml_root_type(name: &[u8]) -> Option<&'static str> {
    let types: &[(&[u8], &str)] = &[
        (b"html", "application/xhtml+xml"),
        (b"svg", "image/svg+xml"),
        (b"rss", "application/rss+xml"),
        (b"feed", "application/atom+xml"),
    ];
    types
        .iter()
        .find(|(n, _)| name.eq_ignore_ascii_case(n))
        .map(|(_, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_is_consistent() {
        let file: AliasFile = serde_json::from_str(ALIASES_JSON).expect("valid JSON");
        assert!(file.aliases.len() > 50);
        let t = table();
        for (alias, canonical) in t.aliases() {
            assert_eq!(alias, alias.trim().to_ascii_lowercase(), "alias not normal");
            assert_eq!(canonical, canonical.to_ascii_lowercase());
            assert_ne!(alias, canonical);
            // No chains: a canonical type is never itself an alias.
            assert!(
                t.canonical(canonical).is_none(),
                "{canonical} is an alias too"
            );
        }
        let mut seen = std::collections::HashSet::new();
        for e in &file.aliases {
            assert!(seen.insert(e.alias.clone()), "{} listed twice", e.alias);
        }
    }

    #[test]
    fn normalizes_case_parameters_and_aliases() {
        let n = |s| normalize(s).map(|c| c.into_owned());
        assert_eq!(n("application/pdf").as_deref(), Some("application/pdf"));
        assert!(matches!(
            normalize("application/pdf"),
            Some(Cow::Borrowed(_))
        ));
        assert_eq!(
            n(" Text/HTML; charset=UTF-8 ").as_deref(),
            Some("text/html")
        );
        assert_eq!(n("text/html;charset=utf-8").as_deref(), Some("text/html"));
        assert_eq!(n("application/x-pdf").as_deref(), Some("application/pdf"));
        assert_eq!(n("APPLICATION/X-PDF").as_deref(), Some("application/pdf"));
        assert_eq!(n("application/xml").as_deref(), Some("text/xml"));
        assert_eq!(n("text/xhtml").as_deref(), Some("application/xhtml+xml"));
        for octet in [
            "application/octet-stream",
            "binary/octet-stream",
            "application/binary",
            "application/unknown",
            "application/x-download",
            "application/force-download",
            "application/download",
        ] {
            assert_eq!(
                n(octet).as_deref(),
                Some("application/octet-stream"),
                "{octet}"
            );
        }
        for unknown in ["unk", "-", "", "   ", "UNK", "no-type", "; charset=utf-8"] {
            assert_eq!(n(unknown), None, "{unknown:?}");
        }
        assert_eq!(n("warc/revisit").as_deref(), Some("warc/revisit"));
        assert_eq!(n("image/jpg").as_deref(), Some("image/jpeg"));
    }

    #[test]
    fn the_fulltext_list_parses_and_is_canonical() {
        let file: FulltextFile = serde_json::from_str(FULLTEXT_JSON).expect("valid JSON");
        assert!(file.types.len() >= 8);
        let list = fulltext();
        for mime in list.types() {
            assert_eq!(
                normalize(mime).as_deref(),
                Some(mime.as_str()),
                "{mime} is not canonical"
            );
            assert!(is_mime_type(mime), "{mime}");
        }
        for must in [
            "application/pdf",
            "application/postscript",
            "text/html",
            "application/xhtml+xml",
            "text/xml",
            "application/jats+xml",
            "text/plain",
        ] {
            assert!(list.contains(must), "{must} missing");
        }
        for not in [
            "image/png",
            "text/css",
            "text/javascript",
            "application/octet-stream",
        ] {
            assert!(!list.contains(not), "{not} is not full text");
        }
    }

    #[test]
    fn mime_arguments_are_checked_and_suggested() {
        assert_eq!(
            parse_mime_arg("application/x-pdf").unwrap(),
            "application/pdf"
        );
        assert_eq!(parse_mime_arg("Text/HTML").unwrap(), "text/html");
        assert_eq!(parse_mime_arg("image/*").unwrap(), "image/*");
        assert_eq!(parse_mime_arg("FullText").unwrap(), "fulltext");
        let err = parse_mime_arg("html").unwrap_err();
        assert!(err.ends_with("did you mean text/html?"), "{err}");
        let err = parse_mime_arg("pdf").unwrap_err();
        assert!(err.ends_with("did you mean application/pdf?"), "{err}");
        let err = parse_mime_arg("jpg").unwrap_err();
        assert!(err.ends_with("did you mean image/jpeg?"), "{err}");
        let err = parse_mime_arg("image").unwrap_err();
        assert!(err.contains("image/*"), "{err}");
        for bad in ["", "-", "unk", "text/", "/html", "text html", "a/b/c"] {
            assert!(parse_mime_arg(bad).is_err(), "{bad:?} accepted");
        }
        let err = parse_mime_arg("qqqq").unwrap_err();
        assert!(err.contains("TYPE/SUBTYPE"), "{err}");
    }

    #[test]
    fn sniffs_formats() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (b"%PDF-1.4\n%\xE2\xE3", Some("application/pdf")),
            (b"\r\n%PDF-1.7", Some("application/pdf")),
            (b"<!DOCTYPE html>\n<html>", Some("text/html")),
            (b"\xEF\xBB\xBF  <HTML lang=en>", Some("text/html")),
            (b"\n\n<head>", Some("text/html")),
            (b"<BODY bgcolor=white>", Some("text/html")),
            (b"<!-- generated -->", Some("text/html")),
            (b"<?xml version=\"1.0\"?><root/>", Some("text/xml")),
            (
                b"<?xml version=\"1.0\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0\">",
                Some("application/xhtml+xml"),
            ),
            (
                b"<?xml version='1.0'?><!-- c --><rss version=\"2.0\">",
                Some("application/rss+xml"),
            ),
            (
                b"<?xml version='1.0'?><svg xmlns=\"http://www.w3.org/2000/svg\">",
                Some("image/svg+xml"),
            ),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", Some("image/png")),
            (b"\xFF\xD8\xFF\xE0\0\x10JFIF", Some("image/jpeg")),
            (b"GIF89a\x01\0", Some("image/gif")),
            (b"RIFF\x24\0\0\0WEBPVP8 ", Some("image/webp")),
            (b"PK\x03\x04\x14\0", Some("application/zip")),
            (b"\x1F\x8B\x08\0\0\0\0\0", Some("application/gzip")),
            (b"%!PS-Adobe-3.0", Some("application/postscript")),
            (b"{\\rtf1\\ansi", Some("application/rtf")),
            (b"{\"a\": 1}", None),
            (b"[1, 2]", None),
            (b"hello world", None),
            (b"", None),
            (b"<htmlx>", None),
            (b"RIFF\x24\0\0\0WAVE", None),
        ];
        for (bytes, expected) in cases {
            assert_eq!(
                sniff(bytes),
                *expected,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
