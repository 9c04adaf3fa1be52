//! The CDX/CDXJ line parser.

use std::borrow::Cow;

use data_encoding::{BASE64, BASE64_NOPAD, BASE64URL, BASE64URL_NOPAD};
use memchr::memchr;
use serde_json::value::RawValue;

use super::dialect::{self, ColumnLayout, Dialect, Field, MAX_COLUMNS};
use super::timestamp::Timestamp14;
use super::{CdxLine, CdxRecord, Reject, RejectReason, SkipReason};
use crate::key::{Sha1Key, strip_sha1_prefix};
use crate::text::excerpt;

/// Parses the lines of one CDX file in order. The dialect comes from the first line that
/// decides it: a header line, or else the first data line (CDXJ when its third part is a
/// JSON object, else the 11-, 10- or 9-column layout by column count).
///
/// Once decided, the dialect stays for the whole file: a later header naming the same
/// columns (files concatenated with their headers) is skipped, and a later header that is
/// malformed or names other columns is rejected as a `bad_header` line, the layout in
/// force being kept. A damaged or stray header thus costs one line, not every line after
/// it; and the layout of a line never depends on which chunk of the file it was parsed in.
/// (Files of different layouts must be given as separate files.)
#[derive(Debug, Clone, Default)]
pub struct CdxParser {
    dialect: Option<Dialect>,
}

impl CdxParser {
    pub fn new() -> Self {
        CdxParser { dialect: None }
    }

    /// A parser for a file whose dialect is already known (e.g. a chunk of a file whose
    /// start was examined with [`detect_dialect`]). A header line naming other columns is
    /// rejected (see [`CdxParser`]).
    pub fn with_dialect(dialect: Dialect) -> Self {
        CdxParser {
            dialect: Some(dialect),
        }
    }

    /// The dialect in force, once a header or a data line has set it.
    pub fn dialect(&self) -> Option<Dialect> {
        self.dialect
    }

    /// Parses one line (with or without its line break).
    pub fn parse_line<'a>(&mut self, line: &'a [u8]) -> Result<CdxLine<'a>, Reject> {
        let line = trim_end(line);
        let first = line.iter().position(|&b| b != b' ' && b != b'\t');
        let Some(first) = first else {
            return Ok(CdxLine::Skipped(SkipReason::Blank));
        };
        // `#` comments; `!` starts the header/meta lines of OpenWayback-style CDXJ
        // (`!OpenWayback-CDXJ 1.0`, `!meta …`); no key starts with either.
        if line[first] == b'#' || line[0] == b'!' {
            return Ok(CdxLine::Skipped(SkipReason::Comment));
        }
        if line.starts_with(b"filedesc") {
            return Ok(CdxLine::Skipped(SkipReason::Filedesc));
        }
        if dialect::is_header_line(line) {
            return self.header(line);
        }
        let dialect = match self.dialect {
            Some(d) => d,
            None => {
                let d = infer_dialect(line)?;
                self.dialect = Some(d);
                d
            }
        };
        // Lines are nearly always ASCII, which `is_ascii` tests a word at a time: UTF-8
        // validation of every line was 1.4 % of a CDX bulk load's instructions (issue 39).
        let text = if line.is_ascii() {
            // SAFETY: ASCII is UTF-8.
            unsafe { std::str::from_utf8_unchecked(line) }
        } else {
            std::str::from_utf8(line).map_err(|e| {
                Reject::new(
                    RejectReason::NotUtf8,
                    format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
                )
            })?
        };
        match dialect {
            Dialect::Columns(layout) => parse_columns(&layout, text),
            Dialect::Cdxj => parse_cdxj(text).map(CdxLine::Record),
        }
    }
}

impl CdxParser {
    fn header<'a>(&mut self, line: &[u8]) -> Result<CdxLine<'a>, Reject> {
        let Some(current) = self.dialect else {
            let layout = dialect::parse_header(line)?;
            self.dialect = Some(Dialect::Columns(layout));
            return Ok(CdxLine::Skipped(SkipReason::Header));
        };
        let kept = || format!("the layout in force ({}) is kept", current.describe());
        match dialect::parse_header(line) {
            Ok(layout) => match current {
                Dialect::Columns(c) if c.fields() == layout.fields() => {
                    Ok(CdxLine::Skipped(SkipReason::Header))
                }
                _ => Err(Reject::new(
                    RejectReason::BadHeader,
                    format!(
                        "a later CDX header names other columns ({}): {}; a file has one \
                         layout",
                        layout.letters(),
                        kept()
                    ),
                )),
            },
            Err(reject) => Err(Reject::new(
                reject.reason,
                format!("{}: {}", reject.detail, kept()),
            )),
        }
    }
}

/// The dialect of a file, from the first lines of its content (a header, or the first
/// data line); `None` when no line decides it.
pub fn detect_dialect(content: &[u8]) -> Option<Dialect> {
    let mut parser = CdxParser::new();
    for line in content.split(|&b| b == b'\n') {
        // Rejected lines (bad header, odd column count) leave the question open.
        let _ = parser.parse_line(line);
        if parser.dialect.is_some() {
            return parser.dialect;
        }
    }
    None
}

/// A SURT key has its reversed host closed by `)` before the path: `com,example)/a`.
/// Keys in other forms (`example.com/a`, `whois://host/…`) are not SURTs.
pub fn looks_like_surt(key: &str) -> bool {
    // The host part is short: a plain loop beats a `memchr` call here.
    let b = key.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b')' => return b.get(i + 1) == Some(&b'/'),
            b'/' => return false,
            _ => {}
        }
    }
    false
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|&b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .map_or(0, |p| p + 1);
    &line[..end]
}

fn is_cdxj_line(line: &[u8]) -> bool {
    let Some(first) = memchr(b' ', line) else {
        return false;
    };
    let rest = &line[first + 1..];
    match memchr(b' ', rest) {
        Some(second) => rest.get(second + 1) == Some(&b'{'),
        None => false,
    }
}

/// Writes the positions of the first spaces of `line` into `out` and returns how many
/// spaces the line has (capped at `out.len() + 1`, which means "more than fit").
/// Eight bytes at a time (SWAR): short gaps between columns make a `memchr` call per
/// space cost more than this scan.
fn find_spaces(line: &[u8], out: &mut [usize; MAX_COLUMNS]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const SPACES: u64 = LO * b' ' as u64;
    // High bit set exactly for the bytes of `word` that are spaces.
    let space_bits = |word: u64| {
        let x = word ^ SPACES;
        !((x & !HI).wrapping_add(!HI) | x) & HI
    };
    let mut n = 0;
    let mut record = |mut bits: u64, base: usize, n: &mut usize| -> bool {
        while bits != 0 {
            if *n == MAX_COLUMNS {
                *n += 1;
                return false;
            }
            out[*n] = base + (bits.trailing_zeros() / 8) as usize;
            *n += 1;
            bits &= bits - 1;
        }
        true
    };
    let blocks = line.chunks_exact(16);
    let tail = blocks.remainder();
    for (b, block) in blocks.enumerate() {
        let (lo, hi) = block.split_at(8);
        // Both halves are 8 bytes long: the conversions cannot fail.
        let lo = space_bits(<[u8; 8]>::try_from(lo).map_or(0, u64::from_le_bytes));
        let hi = space_bits(<[u8; 8]>::try_from(hi).map_or(0, u64::from_le_bytes));
        if lo | hi == 0 {
            continue;
        }
        if !record(lo, b * 16, &mut n) || !record(hi, b * 16 + 8, &mut n) {
            return n;
        }
    }
    let base = line.len() - tail.len();
    for (i, &byte) in tail.iter().enumerate() {
        if byte == b' ' && !record(HI & 0x80, base + i, &mut n) {
            return n;
        }
    }
    n
}

fn count_columns(line: &[u8]) -> usize {
    memchr::memchr_iter(b' ', line).count() + 1
}

fn infer_dialect(line: &[u8]) -> Result<Dialect, Reject> {
    if is_cdxj_line(line) {
        return Ok(Dialect::Cdxj);
    }
    let n = count_columns(line);
    ColumnLayout::for_column_count(n)
        .map(Dialect::Columns)
        .ok_or_else(|| {
            let reason = if n < 9 {
                RejectReason::TooFewColumns
            } else {
                RejectReason::TooManyColumns
            };
            Reject::new(
                reason,
                format!("{n} columns and no CDX header: expected 9, 10 or 11 columns, or CDXJ"),
            )
        })
}

/// `-` and empty columns mean "absent".
fn present(token: &str) -> Option<&str> {
    match token.as_bytes() {
        [] | [b'-'] => None,
        _ => Some(token),
    }
}

// Returns the final `CdxLine` so the record is built in place, not moved again.
fn parse_columns<'a>(layout: &ColumnLayout, text: &'a str) -> Result<CdxLine<'a>, Reject> {
    let bytes = text.as_bytes();
    // Column boundaries in one pass: the positions of the separating spaces.
    let mut spaces = [0usize; MAX_COLUMNS];
    let n_spaces = find_spaces(bytes, &mut spaces);
    if n_spaces + 1 != layout.len() {
        let n = if n_spaces > MAX_COLUMNS {
            count_columns(bytes)
        } else {
            n_spaces + 1
        };
        let reason = if n < layout.len() {
            RejectReason::TooFewColumns
        } else {
            RejectReason::TooManyColumns
        };
        return Err(Reject::new(
            reason,
            format!(
                "{n} columns: the CDX layout {} has {}",
                layout.letters(),
                layout.len()
            ),
        ));
    }
    let mut key = None;
    let mut surt = None;
    let mut timestamp = None;
    let mut url = None;
    let mut mime = None;
    let mut status = None;
    let mut digest = None;
    let mut redirect = None;
    let mut meta_flags = None;
    let mut compressed_size = None;
    let mut offset = None;
    let mut filename = None;
    let mut record_id = None;
    let mut start = 0;
    for (i, &field) in layout.fields().iter().enumerate() {
        let end = if i < n_spaces { spaces[i] } else { bytes.len() };
        // Numbers, timestamps and digests are read from the bytes; text columns are cut
        // from the (validated) text. Spaces are ASCII, so these are character boundaries.
        let from = start;
        let raw = bytes.get(from..end).unwrap_or_default();
        let token = || text.get(from..end).unwrap_or("");
        start = end + 1;
        match field {
            Field::SurtKey => {
                if let Some(k) = present(token()) {
                    key = Some(k);
                    surt = looks_like_surt(k).then_some(k);
                }
            }
            Field::CanonicalKey => {
                if key.is_none() {
                    key = present(token());
                }
            }
            Field::Timestamp => {
                timestamp = Some(
                    Timestamp14::parse(raw)
                        .map_err(|e| Reject::new(RejectReason::BadTimestamp, e))?,
                );
            }
            Field::Url => url = present(token()),
            Field::Mime => mime = present(token()),
            Field::Status => {
                status = match raw {
                    [b'-'] => None,
                    [_, _, _] if raw.iter().all(u8::is_ascii_digit) => {
                        digits_value(raw).and_then(|v| u16::try_from(v).ok())
                    }
                    _ => parse_status(token())?,
                }
            }
            Field::Digest => {
                digest = match decode_base32_sha1(raw) {
                    Some(k) => Some(k),
                    None => parse_digest(token())?,
                }
            }
            Field::Redirect => redirect = present(token()),
            Field::MetaFlags => meta_flags = present(token()),
            Field::CompressedSize => {
                compressed_size = match (raw, digits_value(raw)) {
                    (_, Some(v)) => Some(v),
                    ([b'-'], None) => None,
                    _ => parse_u64(token(), RejectReason::BadSize, "compressed size")?,
                }
            }
            Field::Offset => {
                offset = match (raw, digits_value(raw)) {
                    (_, Some(v)) => Some(v),
                    ([b'-'], None) => None,
                    _ => parse_u64(token(), RejectReason::BadOffset, "offset")?,
                }
            }
            Field::Filename => filename = present(token()),
            Field::RecordId => record_id = present(token()),
            Field::Ignored(_) => {}
        }
    }
    let timestamp = timestamp.ok_or_else(|| {
        Reject::new(
            RejectReason::MissingTimestamp,
            format!(
                "the CDX layout {} has no timestamp column b",
                layout.letters()
            ),
        )
    })?;
    let url = url.ok_or_else(|| missing_url(layout))?;
    Ok(CdxLine::Record(CdxRecord {
        surt,
        key,
        timestamp,
        url: Cow::Borrowed(url),
        mime: mime.map(Cow::Borrowed),
        status,
        digest,
        redirect: redirect.map(Cow::Borrowed),
        meta_flags: meta_flags.map(Cow::Borrowed),
        compressed_size,
        offset,
        filename: filename.map(Cow::Borrowed),
        record_id: record_id.map(strip_angle_brackets),
        is_revisit: mime.is_some_and(is_revisit_mime),
    }))
}

fn missing_url(layout: &ColumnLayout) -> Reject {
    if layout.has(Field::Url) {
        Reject::new(RejectReason::MissingUrl, "original URL column a is '-'")
    } else {
        Reject::new(
            RejectReason::MissingUrl,
            format!(
                "the CDX layout {} has no original URL column a",
                layout.letters()
            ),
        )
    }
}

fn is_revisit_mime(mime: &str) -> bool {
    mime.len() == 12 && mime.eq_ignore_ascii_case("warc/revisit")
}

/// wget writes record ids as `<urn:uuid:…>`.
fn strip_angle_brackets(id: &str) -> Cow<'_, str> {
    Cow::Borrowed(
        id.strip_prefix('<')
            .and_then(|s| s.strip_suffix('>'))
            .unwrap_or(id),
    )
}

fn parse_status(token: &str) -> Result<Option<u16>, Reject> {
    let Some(t) = present(token) else {
        return Ok(None);
    };
    let b = t.as_bytes();
    if (1..=3).contains(&b.len()) && b.iter().all(u8::is_ascii_digit) {
        Ok(Some(
            b.iter().fold(0u16, |v, &d| v * 10 + u16::from(d - b'0')),
        ))
    } else {
        Err(Reject::new(
            RejectReason::BadStatus,
            format!(
                "status {} is not an HTTP status code (1 to 3 digits)",
                excerpt(t)
            ),
        ))
    }
}

fn parse_u64(token: &str, reason: RejectReason, what: &str) -> Result<Option<u64>, Reject> {
    let Some(t) = present(token) else {
        return Ok(None);
    };
    match digits_value(t.as_bytes()) {
        Some(v) => Ok(Some(v)),
        None => Err(bad_integer(reason, what, t)),
    }
}

/// The value of 1 to 19 ASCII digits (19 digits always fit in a u64; longer numbers are
/// beyond any file offset). One pass without branches per digit.
fn digits_value(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    let mut bad = 0u8;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        bad |= u8::from(d > 9);
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
    }
    (bad == 0).then_some(v)
}

#[cold]
fn bad_integer(reason: RejectReason, what: &str, t: &str) -> Reject {
    Reject::new(
        reason,
        format!("{what} {} is not a non-negative integer", excerpt(t)),
    )
}

/// A payload digest: bare base32, `sha1:BASE32`, 40-character hex, or base64 (27/28
/// characters, standard or URL-safe alphabet). `-` is absent, not an error.
fn parse_digest(token: &str) -> Result<Option<Sha1Key>, Reject> {
    let Some(t) = present(token) else {
        return Ok(None);
    };
    if t.len() == 32
        && let Some(k) = decode_base32_sha1(t.as_bytes())
    {
        return Ok(Some(k));
    }
    let bare = strip_sha1_prefix(t);
    let bad = |why: String| Err(Reject::new(RejectReason::BadDigest, why));
    let shown = excerpt(t);
    if bare.len() == t.len() && !matches!(t.len(), 32 | 40) {
        // Another algorithm's label (`sha256:…`, `md5:…`) is not a SHA-1.
        if let Some(colon) = t.find(':') {
            return bad(format!(
                "digest {shown} is a {} digest, not SHA-1",
                excerpt(&t[..colon])
            ));
        }
    }
    match bare.len() {
        32 => match decode_base32_sha1(bare.as_bytes()) {
            Some(k) => Ok(Some(k)),
            None => bad(format!(
                "digest {shown} is 32 characters but not base32 (A-Z, 2-7)"
            )),
        },
        40 => match Sha1Key::from_hex(bare.as_bytes()) {
            Some(k) => Ok(Some(k)),
            None => bad(format!("digest {shown} is 40 characters but not hex")),
        },
        27 | 28 => match decode_base64_sha1(bare.as_bytes()) {
            Some(k) => Ok(Some(k)),
            None => bad(format!(
                "digest {shown} is {} characters but not a base64 SHA-1",
                bare.len()
            )),
        },
        n => bad(format!(
            "digest {shown} is {n} characters: a SHA-1 is 32 (base32) or 40 (hex)"
        )),
    }
}

/// RFC 4648 base32 (either case) of a SHA-1: 32 characters, 20 bytes, no padding.
fn decode_base32_sha1(text: &[u8]) -> Option<Sha1Key> {
    const INVALID: u8 = 0xff;
    const TABLE: [u8; 256] = {
        let mut t = [INVALID; 256];
        let mut i = 0;
        while i < 26 {
            t[b'A' as usize + i] = i as u8;
            t[b'a' as usize + i] = i as u8;
            i += 1;
        }
        let mut d = 0;
        while d < 6 {
            t[b'2' as usize + d] = 26 + d as u8;
            d += 1;
        }
        t
    };
    let text: &[u8; 32] = text.try_into().ok()?;
    let mut out = [0u8; 20];
    // Any invalid character sets the high bit of `seen`.
    let mut seen = 0u8;
    // 8 characters (40 bits) make 5 bytes.
    for g in 0..4 {
        let mut acc: u64 = 0;
        for c in &text[g * 8..g * 8 + 8] {
            let v = TABLE[usize::from(*c)];
            seen |= v;
            acc = acc << 5 | u64::from(v & 31);
        }
        let be = acc.to_be_bytes();
        out[g * 5..g * 5 + 5].copy_from_slice(&be[3..8]);
    }
    (seen & 0x80 == 0).then_some(Sha1Key(out))
}

fn decode_base64_sha1(text: &[u8]) -> Option<Sha1Key> {
    [&BASE64, &BASE64URL, &BASE64_NOPAD, &BASE64URL_NOPAD]
        .iter()
        .find_map(|enc| enc.decode(text).ok())
        .and_then(|bytes| Sha1Key::from_slice(&bytes))
}

/// The JSON object of a CDXJ line. Values are kept as raw JSON text and decoded after,
/// so strings without escapes are borrowed and numbers may be strings or JSON numbers.
#[derive(serde::Deserialize)]
struct CdxjObject<'a> {
    #[serde(borrow, default)]
    url: Option<&'a RawValue>,
    #[serde(borrow, default)]
    mime: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: Option<&'a RawValue>,
    #[serde(borrow, default)]
    digest: Option<&'a RawValue>,
    #[serde(borrow, default)]
    length: Option<&'a RawValue>,
    #[serde(borrow, default)]
    offset: Option<&'a RawValue>,
    #[serde(borrow, default)]
    filename: Option<&'a RawValue>,
    #[serde(borrow, default)]
    redirect: Option<&'a RawValue>,
}

/// A JSON value as text: a string (unescaped only when it has escapes) or a number.
fn json_text<'a>(raw: Option<&'a RawValue>, key: &str) -> Result<Option<Cow<'a, str>>, Reject> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let text = raw.get();
    let value = if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        if inner.contains('\\') {
            let owned: String = serde_json::from_str(text)
                .map_err(|e| Reject::new(RejectReason::BadJson, format!("CDXJ {key:?}: {e}")))?;
            Cow::Owned(owned)
        } else {
            Cow::Borrowed(inner)
        }
    } else if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        Cow::Borrowed(text)
    } else if text == "null" {
        return Ok(None);
    } else {
        return Err(Reject::new(
            RejectReason::BadJson,
            format!(
                "CDXJ {key:?} is {}: expected a string or a number",
                excerpt(text)
            ),
        ));
    };
    Ok((value != "-" && !value.is_empty()).then_some(value))
}

fn parse_cdxj(text: &str) -> Result<CdxRecord<'_>, Reject> {
    let bytes = text.as_bytes();
    let split =
        memchr(b' ', bytes).and_then(|a| memchr(b' ', &bytes[a + 1..]).map(|b| (a, a + 1 + b)));
    let Some((first, second)) = split else {
        return Err(Reject::new(
            RejectReason::TooFewColumns,
            "a CDXJ line is: key, timestamp, JSON object",
        ));
    };
    let key = &text[..first];
    let ts = &text[first + 1..second];
    let json = &text[second + 1..];
    if !json.starts_with('{') {
        return Err(Reject::new(
            RejectReason::BadJson,
            "the third part of a CDXJ line must be a JSON object",
        ));
    }
    let obj: CdxjObject<'_> = serde_json::from_str(json)
        .map_err(|e| Reject::new(RejectReason::BadJson, format!("CDXJ JSON: {e}")))?;
    let timestamp = Timestamp14::parse(ts.as_bytes())
        .map_err(|e| Reject::new(RejectReason::BadTimestamp, e))?;
    let url = json_text(obj.url, "url")?
        .ok_or_else(|| Reject::new(RejectReason::MissingUrl, "CDXJ object has no \"url\""))?;
    let mime = json_text(obj.mime, "mime")?;
    let status = match json_text(obj.status, "status")? {
        Some(s) => parse_status(&s)?,
        None => None,
    };
    let digest = match json_text(obj.digest, "digest")? {
        Some(d) => parse_digest(&d)?,
        None => None,
    };
    let compressed_size = match json_text(obj.length, "length")? {
        Some(v) => parse_u64(&v, RejectReason::BadSize, "length")?,
        None => None,
    };
    let offset = match json_text(obj.offset, "offset")? {
        Some(v) => parse_u64(&v, RejectReason::BadOffset, "offset")?,
        None => None,
    };
    let key = present(key);
    let is_revisit = mime.as_deref().is_some_and(is_revisit_mime);
    Ok(CdxRecord {
        surt: key.filter(|k| looks_like_surt(k)),
        key,
        timestamp,
        url,
        mime,
        status,
        digest,
        redirect: json_text(obj.redirect, "redirect")?,
        meta_flags: None,
        compressed_size,
        offset,
        filename: json_text(obj.filename, "filename")?,
        record_id: None,
        is_revisit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: &str) -> CdxRecord<'_> {
        match CdxParser::new().parse_line(line.as_bytes()) {
            Ok(CdxLine::Record(r)) => r,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn reject(parser: &mut CdxParser, line: &str) -> Reject {
        match parser.parse_line(line.as_bytes()) {
            Err(r) => r,
            other => panic!("{line}: expected a reject, got {other:?}"),
        }
    }

    const LINE11: &str = "com,example)/?example=1 20140103030321 http://example.com?example=1 text/html 200 B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1043 333 example.warc.gz";

    #[test]
    fn parses_an_11_column_line() {
        let r = record(LINE11);
        assert_eq!(r.surt, Some("com,example)/?example=1"));
        assert_eq!(r.timestamp.as_str(), "20140103030321");
        assert_eq!(r.url, "http://example.com?example=1");
        assert_eq!(r.mime.as_deref(), Some("text/html"));
        assert_eq!(r.status, Some(200));
        assert_eq!(
            r.digest.map(|d| d.to_string()).as_deref(),
            Some("B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A")
        );
        assert_eq!((r.redirect, r.meta_flags), (None, None));
        assert_eq!((r.compressed_size, r.offset), (Some(1043), Some(333)));
        assert_eq!(r.filename.as_deref(), Some("example.warc.gz"));
        assert!(!r.is_revisit);
        assert!(matches!(r.url, Cow::Borrowed(_)));
    }

    #[test]
    fn wget_header_layout() {
        let mut p = CdxParser::new();
        assert_eq!(
            p.parse_line(b" CDX a b a m s k r M V g u\n").unwrap(),
            CdxLine::Skipped(SkipReason::Header)
        );
        let line = "http://127.0.0.1:8765/a.pdf 20261122013710 http://127.0.0.1:8765/a.pdf application/pdf 200 SD75ENMQBDMCFGECDULLEF3YYXBZV3BW - - 2822 t.warc.gz <urn:uuid:70e1e72a-ae99-43a0-9d65-9a734347a513>";
        let CdxLine::Record(r) = p.parse_line(line.as_bytes()).unwrap() else {
            panic!()
        };
        assert_eq!(r.surt, None);
        assert_eq!(r.key, None);
        assert_eq!(r.url, "http://127.0.0.1:8765/a.pdf");
        assert_eq!(r.compressed_size, None);
        assert_eq!(r.offset, Some(2822));
        assert_eq!(r.filename.as_deref(), Some("t.warc.gz"));
        assert_eq!(
            r.record_id.as_deref(),
            Some("urn:uuid:70e1e72a-ae99-43a0-9d65-9a734347a513")
        );
    }

    #[test]
    fn digest_spellings() {
        let hex = "da39a3ee5e6b4b0d3255bfef95601890afd80709";
        let b32 = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";
        for spelling in [
            b32.to_string(),
            format!("sha1:{b32}"),
            hex.to_string(),
            b32.to_lowercase(),
            "2jmj7l5rSw0yVb/vlWAYkK/YBwk=".to_string(),
            "sha1:2jmj7l5rSw0yVb_vlWAYkK_YBwk=".to_string(),
        ] {
            let d = parse_digest(&spelling).unwrap().unwrap();
            assert_eq!(d.to_string(), b32, "{spelling}");
        }
        assert_eq!(parse_digest("-").unwrap(), None);
        let e = parse_digest("ABC").unwrap_err();
        assert_eq!(e.reason, RejectReason::BadDigest);
        assert!(e.detail.contains("3 characters"), "{}", e.detail);
        assert!(
            parse_digest("1I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
                .unwrap_err()
                .detail
                .contains("not base32")
        );
        assert!(
            parse_digest("zz39a3ee5e6b4b0d3255bfef95601890afd80709")
                .unwrap_err()
                .detail
                .contains("not hex")
        );
        assert!(
            parse_digest("sha256:abcd")
                .unwrap_err()
                .detail
                .contains("sha256")
        );
    }

    #[test]
    fn every_reject_reason() {
        let fields = |replace: usize, with: &str| {
            let mut cols: Vec<&str> = LINE11.split(' ').collect();
            cols[replace] = with;
            cols.join(" ")
        };
        let cases: Vec<(String, RejectReason)> = vec![
            ("a b c".into(), RejectReason::TooFewColumns),
            (format!("{LINE11} extra"), RejectReason::TooManyColumns),
            (fields(1, "2014x103030321"), RejectReason::BadTimestamp),
            (fields(1, "201"), RejectReason::BadTimestamp),
            (fields(9, "12a"), RejectReason::BadOffset),
            (fields(9, "-5"), RejectReason::BadOffset),
            (fields(8, "1.5"), RejectReason::BadSize),
            (fields(4, "2000"), RejectReason::BadStatus),
            (fields(4, "OK"), RejectReason::BadStatus),
            (
                fields(5, "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36"),
                RejectReason::BadDigest,
            ),
            (
                fields(5, "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC3!!"),
                RejectReason::BadDigest,
            ),
            (fields(2, "-"), RejectReason::MissingUrl),
        ];
        for (line, reason) in cases {
            let mut p = CdxParser::with_dialect(Dialect::cdx11());
            assert_eq!(reject(&mut p, &line).reason, reason, "{line}");
        }
        // Headerless: the first line's column count decides nothing when it fits no layout.
        let mut p = CdxParser::new();
        assert_eq!(reject(&mut p, "a b c").reason, RejectReason::TooFewColumns);
        assert_eq!(p.dialect(), None);
        assert_eq!(
            reject(&mut p, "a b c d e f g h i j k l").reason,
            RejectReason::TooManyColumns
        );
        // Not UTF-8.
        let mut bytes = LINE11.as_bytes().to_vec();
        bytes[40] = 0xFF;
        let e = CdxParser::new().parse_line(&bytes).unwrap_err();
        assert_eq!(e.reason, RejectReason::NotUtf8);
        assert!(e.detail.contains("byte 40"));
        // CDXJ.
        let mut p = CdxParser::with_dialect(Dialect::Cdxj);
        assert_eq!(
            reject(&mut p, "com,x)/ 2014 {\"url\": ").reason,
            RejectReason::BadJson
        );
        assert_eq!(
            reject(&mut p, "com,x)/ 2014 [1]").reason,
            RejectReason::BadJson
        );
        assert_eq!(
            reject(&mut p, "com,x)/ 2014 {\"url\": true}").reason,
            RejectReason::BadJson
        );
        assert_eq!(
            reject(&mut p, "com,x)/ 2014 {\"mime\": \"a\"}").reason,
            RejectReason::MissingUrl
        );
        assert_eq!(
            reject(&mut p, "com,x)/").reason,
            RejectReason::TooFewColumns
        );
        assert_eq!(
            reject(&mut p, "com,x)/ 2014 {\"url\": \"u\", \"offset\": \"x\"}").reason,
            RejectReason::BadOffset
        );
        // Header problems.
        let mut p = CdxParser::new();
        assert_eq!(
            reject(&mut p, " CDX N b url").reason,
            RejectReason::BadHeader
        );
        p.parse_line(b" CDX N a m s").unwrap();
        assert_eq!(
            reject(&mut p, "k u m 200").reason,
            RejectReason::MissingTimestamp
        );
        // One layout per file: a later header naming other columns is rejected.
        assert_eq!(
            reject(&mut p, " CDX N b m s").reason,
            RejectReason::BadHeader
        );
        let mut p = CdxParser::new();
        p.parse_line(b" CDX N b m s").unwrap();
        assert_eq!(
            reject(&mut p, "k 2014 m 200").reason,
            RejectReason::MissingUrl
        );
        for reason in RejectReason::ALL {
            assert!(
                reason
                    .name()
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
            );
        }
    }

    #[test]
    fn skipped_lines() {
        let mut p = CdxParser::new();
        for (line, why) in [
            ("", SkipReason::Blank),
            ("   \r", SkipReason::Blank),
            ("#http://example.com/", SkipReason::Comment),
            ("  # note", SkipReason::Comment),
            ("!OpenWayback-CDXJ 1.0", SkipReason::Comment),
            ("!meta {\"x\": 1}", SkipReason::Comment),
            (
                "filedesc://IAH-2008.arc 20080430204825 ...",
                SkipReason::Filedesc,
            ),
            (" CDX N b a m s k r M S V g", SkipReason::Header),
        ] {
            assert_eq!(
                p.parse_line(line.as_bytes()).unwrap(),
                CdxLine::Skipped(why),
                "{line:?}"
            );
        }
    }

    #[test]
    fn a_later_header_does_not_replace_the_layout() {
        let mut p = CdxParser::new();
        let header = " CDX N b a m s k r M S V g";
        assert!(matches!(
            p.parse_line(header.as_bytes()),
            Ok(CdxLine::Skipped(_))
        ));
        assert!(matches!(
            p.parse_line(LINE11.as_bytes()),
            Ok(CdxLine::Record(_))
        ));
        // The same columns again (concatenated files): skipped.
        assert!(matches!(
            p.parse_line(header.as_bytes()),
            Ok(CdxLine::Skipped(_))
        ));
        // Fewer columns, garbage, a field that is not a letter: each one rejected line.
        for bad in [
            " CDX N b a",
            " CDX ??? xx",
            " CDX",
            " CDX N b a m s k r M S V g u",
        ] {
            let r = reject(&mut p, bad);
            assert_eq!(r.reason, RejectReason::BadHeader, "{bad}");
            assert!(
                r.detail.contains("CDX NbamskrMSVg) is kept"),
                "{}",
                r.detail
            );
            assert!(matches!(
                p.parse_line(LINE11.as_bytes()),
                Ok(CdxLine::Record(_))
            ));
        }
        // The same with a layout inferred from the first data line.
        let mut p = CdxParser::new();
        assert!(matches!(
            p.parse_line(LINE11.as_bytes()),
            Ok(CdxLine::Record(_))
        ));
        assert!(matches!(
            p.parse_line(header.as_bytes()),
            Ok(CdxLine::Skipped(_))
        ));
        assert_eq!(reject(&mut p, " CDX N b a").reason, RejectReason::BadHeader);
        assert!(matches!(
            p.parse_line(LINE11.as_bytes()),
            Ok(CdxLine::Record(_))
        ));
        // A bad first header leaves the layout to the next deciding line.
        let mut p = CdxParser::new();
        assert_eq!(
            reject(&mut p, " CDX N b urlkey").reason,
            RejectReason::BadHeader
        );
        assert!(matches!(
            p.parse_line(LINE11.as_bytes()),
            Ok(CdxLine::Record(_))
        ));
    }

    #[test]
    fn rejects_quote_a_huge_value_in_part() {
        let huge = "7".repeat(100_000);
        let line = LINE11.replace("B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A", &huge);
        let r = reject(&mut CdxParser::new(), &line);
        assert_eq!(r.reason, RejectReason::BadDigest);
        assert!(r.detail.len() < 200, "{}", &r.detail[..300]);
        assert!(r.detail.contains("(100000 bytes)"), "{}", r.detail);
        let line = LINE11.replace("20140103030321", &huge);
        let r = reject(&mut CdxParser::new(), &line);
        assert_eq!(r.reason, RejectReason::BadTimestamp);
        assert!(r.detail.len() < 200, "{}", &r.detail[..300]);
        let r = reject(&mut CdxParser::new(), &format!(" CDX N b {huge}"));
        assert!(r.detail.len() < 200, "{}", &r.detail[..300]);
    }

    #[test]
    fn cdxj_values() {
        let line = r#"org,iana)/ 20140127171238 {"url": "http://iana.org/a\"b", "mime": "warc/revisit", "status": 302, "digest": "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "length": "343", "offset": 1858, "filename": "dupes.warc.gz", "extra": [1, {"x": 2}]}"#;
        let r = record(line);
        assert_eq!(r.surt, Some("org,iana)/"));
        assert_eq!(r.url, "http://iana.org/a\"b");
        assert!(matches!(r.url, Cow::Owned(_)));
        assert!(matches!(r.filename, Some(Cow::Borrowed(_))));
        assert!(r.is_revisit);
        assert_eq!(r.status, Some(302));
        assert_eq!((r.compressed_size, r.offset), (Some(343), Some(1858)));
        assert_eq!(
            r.digest.map(|d| d.to_string()).as_deref(),
            Some("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
        );
    }

    #[test]
    fn surt_shape() {
        assert!(looks_like_surt("com,example)/"));
        assert!(looks_like_surt(
            "org,httpbin)/post?__wb_method=post&a=1&b=[]&c=3"
        ));
        assert!(!looks_like_surt("example.com/?example=1"));
        assert!(!looks_like_surt(
            "whois://whois.arin.net/z+%2B+132.177.133.114"
        ));
        assert!(!looks_like_surt("example.com/a(b)/c"));
    }

    #[test]
    fn detects_dialects() {
        assert_eq!(detect_dialect(LINE11.as_bytes()), Some(Dialect::cdx11()));
        assert_eq!(
            detect_dialect(b"#c\n\ncom,x)/ 2014 {\"url\":\"u\"}\n"),
            Some(Dialect::Cdxj)
        );
        let nine = "com,x)/ 2014 http://x/ text/html 200 - - 10 f.warc.gz";
        assert_eq!(
            detect_dialect(nine.as_bytes()),
            Some(Dialect::Columns(ColumnLayout::for_column_count(9).unwrap()))
        );
        assert_eq!(detect_dialect(b"# only comments\n"), None);
    }
}

#[cfg(test)]
mod scan_tests {
    use super::*;

    #[test]
    fn find_spaces_agrees_with_a_plain_scan() {
        let lines: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b" ".to_vec(),
            b"a b".to_vec(),
            b"        ".to_vec(),
            b"abcdefgh ijklmnop qrs".to_vec(),
            "caf\u{e9} \u{a0}x y\u{2003}z".as_bytes().to_vec(),
            (0..=255u8).collect(),
            [b' '; 40].to_vec(),
        ];
        for line in lines {
            let mut out = [0usize; MAX_COLUMNS];
            let n = find_spaces(&line, &mut out);
            let expected: Vec<usize> = line
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b' ')
                .map(|(i, _)| i)
                .collect();
            assert_eq!(n, expected.len().min(MAX_COLUMNS + 1), "{line:?}");
            let kept = n.min(MAX_COLUMNS);
            assert_eq!(&out[..kept], &expected[..kept], "{line:?}");
        }
    }

    #[test]
    fn base32_decoder_agrees_with_data_encoding() {
        let mut state = 12345u64;
        for _ in 0..1000 {
            let mut bytes = [0u8; 20];
            for b in &mut bytes {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *b = (state >> 56) as u8;
            }
            let text = Sha1Key(bytes).to_base32();
            assert_eq!(decode_base32_sha1(text.as_bytes()), Some(Sha1Key(bytes)));
            assert_eq!(
                decode_base32_sha1(text.to_lowercase().as_bytes()),
                Some(Sha1Key(bytes))
            );
        }
        assert_eq!(
            decode_base32_sha1(b"1I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
            None
        );
        assert_eq!(
            decode_base32_sha1(b"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBY="),
            None
        );
    }
}
