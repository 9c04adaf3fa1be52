//! MIME types: normalization of the raw values found in headers and CDX files, and
//! sniffing from the first bytes of a payload.
//!
//! The alias table is data: `schemas/mime-aliases.json` (each alias documented there),
//! compiled into the binary and parsed once.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

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
    aliases: HashMap<String, String>,
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
