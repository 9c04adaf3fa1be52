//! Character-encoding detection and decoding of HTML bodies.
//!
//! The order follows the WHATWG encoding sniffing algorithm, without its locale-dependent
//! guessing:
//! 1. a byte-order mark (UTF-8, UTF-16LE, UTF-16BE) — it wins even over the HTTP header, as
//!    in every browser, because a BOM that disagrees with the header is always right;
//! 2. the `charset` parameter of the Content-Type header;
//! 3. `<meta charset=…>` or `<meta http-equiv="Content-Type" content="…; charset=…">` in the
//!    first 1024 bytes (a UTF-16 label there means UTF-8, `x-user-defined` means
//!    windows-1252, as the standard says);
//! 4. UTF-8.
//!
//! Unknown labels are skipped and the next source is tried. Invalid byte sequences become
//! U+FFFD.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// Where the encoding of a document came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodingSource {
    ByteOrderMark,
    ContentTypeHeader,
    MetaElement,
    /// Nothing declared an encoding; UTF-8 was assumed.
    Default,
}

/// How many bytes the `<meta>` prescan looks at.
pub const PRESCAN_BYTES: usize = 1024;

/// The decoded document.
pub struct Decoded {
    pub text: String,
    pub encoding: &'static Encoding,
    pub source: EncodingSource,
    /// Some bytes were not valid in the encoding and became U+FFFD.
    pub had_errors: bool,
}

/// Detects the encoding of `body` and decodes it (without the byte-order mark).
pub fn decode(body: &[u8], content_type: Option<&str>) -> Decoded {
    let (encoding, source, skip) = detect(body, content_type);
    let (text, had_errors) = encoding.decode_without_bom_handling(&body[skip..]);
    Decoded {
        text: text.into_owned(),
        encoding,
        source,
        had_errors,
    }
}

/// The encoding, its source, and the length of the byte-order mark to skip.
pub fn detect(
    body: &[u8],
    content_type: Option<&str>,
) -> (&'static Encoding, EncodingSource, usize) {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return (encoding, EncodingSource::ByteOrderMark, bom_len);
    }
    if let Some(encoding) = content_type
        .and_then(charset_parameter)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
    {
        return (encoding, EncodingSource::ContentTypeHeader, 0);
    }
    if let Some(encoding) = prescan(&body[..body.len().min(PRESCAN_BYTES)]) {
        return (encoding, EncodingSource::MetaElement, 0);
    }
    (UTF_8, EncodingSource::Default, 0)
}

/// The value of the `charset` parameter of a Content-Type value, unquoted.
pub fn charset_parameter(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then_some(value)
    })
}

/// The encoding a `<meta>` label names, with the standard's substitutions.
fn meta_encoding(label: &[u8]) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(label)?;
    Some(if encoding == UTF_16LE || encoding == UTF_16BE {
        UTF_8
    } else if encoding == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    })
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// The WHATWG prescan for a `<meta>` encoding declaration, over `b` only.
fn prescan(b: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < b.len() {
        let rest = &b[pos..];
        if rest.starts_with(b"<!--") {
            pos += 2 + memchr::memmem::find(&rest[2..], b"-->").map_or(rest.len(), |e| e + 3);
        } else if rest.len() > 5
            && rest[..5].eq_ignore_ascii_case(b"<meta")
            && (is_space(rest[5]) || rest[5] == b'/')
        {
            let mut i = pos + 5;
            let (mut http_equiv_content_type, mut content, mut charset) = (false, None, None);
            while let Some((name, value, next)) = next_attribute(b, i) {
                i = next;
                match name.to_ascii_lowercase().as_slice() {
                    b"http-equiv" => {
                        http_equiv_content_type = value.eq_ignore_ascii_case(b"content-type")
                    }
                    b"content" if content.is_none() => content = Some(value),
                    b"charset" if charset.is_none() => charset = Some(value),
                    _ => {}
                }
            }
            let label = match (charset, content) {
                (Some(c), _) => Some(c),
                (None, Some(content)) if http_equiv_content_type => charset_in_content(content),
                _ => None,
            };
            if let Some(encoding) = label.and_then(meta_encoding) {
                return Some(encoding);
            }
            pos = i + 1;
        } else if rest.len() > 1
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic()
                || (rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic)))
        {
            let mut i = pos + 1;
            while i < b.len() && !is_space(b[i]) && b[i] != b'>' {
                i += 1;
            }
            while let Some((_, _, next)) = next_attribute(b, i) {
                i = next;
            }
            pos = i + 1;
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            pos += memchr::memchr(b'>', rest).map_or(rest.len(), |e| e + 1);
        } else {
            pos += 1;
        }
    }
    None
}

/// The WHATWG "get an attribute" step: the next attribute of a tag starting at `i`, as
/// (name, value, position after it), or None at the tag's `>` or the end of input. Names are
/// returned as written; the caller lower-cases.
fn next_attribute(b: &[u8], mut i: usize) -> Option<(&[u8], &[u8], usize)> {
    while i < b.len() && (is_space(b[i]) || b[i] == b'/') {
        i += 1;
    }
    if i >= b.len() || b[i] == b'>' {
        return None;
    }
    let name_start = i;
    i += 1;
    while i < b.len() && !is_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
        i += 1;
    }
    let name = &b[name_start..i];
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i >= b.len() || b[i] != b'=' {
        return Some((name, &[], i));
    }
    i += 1;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    match b.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            let end = memchr::memchr(q, &b[i + 1..]).map(|e| i + 1 + e);
            match end {
                Some(end) => Some((name, &b[i + 1..end], end + 1)),
                // An unterminated value runs past the prescan window: no declaration.
                None => None,
            }
        }
        _ => {
            let start = i;
            while i < b.len() && !is_space(b[i]) && b[i] != b'>' {
                i += 1;
            }
            Some((name, &b[start..i], i))
        }
    }
}

/// The WHATWG "extract a character encoding from a meta element" algorithm on a `content`
/// attribute value: the label after `charset=`, possibly quoted.
fn charset_in_content(content: &[u8]) -> Option<&[u8]> {
    let mut from = 0;
    loop {
        let at = from + find_ignore_case(&content[from..], b"charset")?;
        let mut i = at + 7;
        while i < content.len() && is_space(content[i]) {
            i += 1;
        }
        if content.get(i) != Some(&b'=') {
            from = at + 7;
            continue;
        }
        i += 1;
        while i < content.len() && is_space(content[i]) {
            i += 1;
        }
        return match content.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let end = memchr::memchr(q, &content[i + 1..])?;
                Some(&content[i + 1..i + 1 + end])
            }
            Some(_) => {
                let start = i;
                while i < content.len() && !is_space(content[i]) && content[i] != b';' {
                    i += 1;
                }
                Some(&content[start..i])
            }
            None => None,
        };
    }
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_parameter_variants() {
        assert_eq!(
            charset_parameter("text/html; charset=ISO-8859-1"),
            Some("ISO-8859-1")
        );
        assert_eq!(
            charset_parameter("text/html;CHARSET=\"utf-8\""),
            Some("utf-8")
        );
        assert_eq!(charset_parameter("text/html"), None);
        assert_eq!(charset_parameter("text/html; charset="), None);
    }

    #[test]
    fn bom_beats_header() {
        let body = b"\xEF\xBB\xBF<p>\xC3\xA9";
        let d = decode(body, Some("text/html; charset=iso-8859-1"));
        assert_eq!(d.source, EncodingSource::ByteOrderMark);
        assert_eq!(d.text, "<p>é");
    }

    #[test]
    fn header_beats_meta() {
        let body = b"<meta charset=utf-8><p>\xE9";
        let d = decode(body, Some("text/html; charset=windows-1252"));
        assert_eq!(d.source, EncodingSource::ContentTypeHeader);
        assert_eq!(d.text, "<meta charset=utf-8><p>é");
    }

    #[test]
    fn unknown_header_label_falls_through_to_meta() {
        let body = b"<meta charset='iso-8859-2'>\xB1";
        let d = decode(body, Some("text/html; charset=bogus"));
        assert_eq!(d.source, EncodingSource::MetaElement);
        assert_eq!(d.encoding.name(), "ISO-8859-2");
        assert!(d.text.ends_with('ą'));
    }

    #[test]
    fn meta_prescan() {
        let cases: [(&[u8], Option<&str>); 8] = [
            (b"<meta charset=\"windows-1251\">", Some("windows-1251")),
            (
                b"<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=Shift_JIS\">",
                Some("Shift_JIS"),
            ),
            (
                b"<meta content='text/html; charset=euc-jp' http-equiv='content-type'>",
                Some("EUC-JP"),
            ),
            (b"<meta content='text/html; charset=euc-jp'>", None),
            (
                b"<!-- <meta charset=koi8-r> --><meta charset=gbk>",
                Some("GBK"),
            ),
            (b"<meta charset=utf-16>", Some("UTF-8")),
            (b"<meta charset=x-user-defined>", Some("windows-1252")),
            (
                b"<div title='<meta charset=koi8-r>'><meta charset=big5>",
                Some("Big5"),
            ),
        ];
        for (html, want) in cases {
            assert_eq!(
                prescan(html).map(|e| e.name()),
                want,
                "{}",
                String::from_utf8_lossy(html)
            );
        }
    }

    #[test]
    fn meta_after_1024_bytes_is_ignored() {
        let mut body = vec![b' '; 1100];
        body.extend_from_slice(b"<meta charset=windows-1252>\xE9");
        let d = decode(&body, None);
        assert_eq!(d.source, EncodingSource::Default);
        assert!(d.had_errors);
        assert!(d.text.ends_with('\u{FFFD}'));
    }
}
