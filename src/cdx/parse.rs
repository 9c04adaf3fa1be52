//! The CDX/CDXJ line parser.

use std::borrow::Cow;

use data_encoding::{BASE64, BASE64_NOPAD, BASE64URL, BASE64URL_NOPAD};
use memchr::memchr;
use serde_json::value::RawValue;

use super::dialect::{self, ColumnLayout, Dialect, Field};
use super::timestamp::Timestamp14;
use super::{CdxLine, CdxRecord, Reject, RejectReason, SkipReason};
use crate::key::{Sha1Key, strip_sha1_prefix};

/// Parses the lines of one CDX file in order. The dialect comes from a header line when
/// the file has one (a later header replaces it, as in concatenated files), otherwise from
/// the first data line: CDXJ when its third part is a JSON object, else the 11-, 10- or
/// 9-column layout by column count.
#[derive(Debug, Clone, Default)]
pub struct CdxParser {
    dialect: Option<Dialect>,
}

impl CdxParser {
    pub fn new() -> Self {
        CdxParser { dialect: None }
    }

    /// A parser for a file whose dialect is already known (e.g. a chunk of a file whose
    /// start was examined with [`detect_dialect`]). Header lines still replace it.
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
        if line[first] == b'#' {
            return Ok(CdxLine::Skipped(SkipReason::Comment));
        }
        if line.starts_with(b"filedesc") {
            return Ok(CdxLine::Skipped(SkipReason::Filedesc));
        }
        if dialect::is_header_line(line) {
            let layout = dialect::parse_header(line)?;
            self.dialect = Some(Dialect::Columns(layout));
            return Ok(CdxLine::Skipped(SkipReason::Header));
        }
        let dialect = match self.dialect {
            Some(d) => d,
            None => {
                let d = infer_dialect(line)?;
                self.dialect = Some(d);
                d
            }
        };
        let text = std::str::from_utf8(line).map_err(|e| {
            Reject::new(
                RejectReason::NotUtf8,
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
            )
        })?;
        match dialect {
            Dialect::Columns(layout) => parse_columns(&layout, text).map(CdxLine::Record),
            Dialect::Cdxj => parse_cdxj(text).map(CdxLine::Record),
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
    let b = key.as_bytes();
    match memchr(b')', b) {
        Some(p) => b.get(p + 1) == Some(&b'/') && memchr(b'/', &b[..p]).is_none(),
        None => false,
    }
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
                format!(
                    "{n} columns and no CDX header: expected 9, 10 or 11 columns, or CDXJ"
                ),
            )
        })
}

/// `-` and empty columns mean "absent".
fn present(token: &str) -> Option<&str> {
    (token != "-" && !token.is_empty()).then_some(token)
}

fn parse_columns<'a>(layout: &ColumnLayout, text: &'a str) -> Result<CdxRecord<'a>, Reject> {
    let bytes = text.as_bytes();
    let n = count_columns(bytes);
    if n != layout.len() {
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
    for &field in layout.fields() {
        let end = memchr(b' ', &bytes[start..]).map_or(bytes.len(), |p| start + p);
        let token = &text[start..end];
        start = (end + 1).min(bytes.len());
        match field {
            Field::SurtKey => {
                if let Some(k) = present(token) {
                    key = Some(k);
                    surt = looks_like_surt(k).then_some(k);
                }
            }
            Field::CanonicalKey => {
                if key.is_none() {
                    key = present(token);
                }
            }
            Field::Timestamp => {
                timestamp = Some(
                    Timestamp14::parse(token.as_bytes())
                        .map_err(|e| Reject::new(RejectReason::BadTimestamp, e))?,
                );
            }
            Field::Url => url = present(token),
            Field::Mime => mime = present(token),
            Field::Status => status = parse_status(token)?,
            Field::Digest => digest = parse_digest(token)?,
            Field::Redirect => redirect = present(token),
            Field::MetaFlags => meta_flags = present(token),
            Field::CompressedSize => {
                compressed_size = parse_u64(token, RejectReason::BadSize, "compressed size")?;
            }
            Field::Offset => offset = parse_u64(token, RejectReason::BadOffset, "offset")?,
            Field::Filename => filename = present(token),
            Field::RecordId => record_id = present(token),
            Field::Ignored(_) => {}
        }
    }
    let timestamp = timestamp.ok_or_else(|| {
        Reject::new(
            RejectReason::MissingTimestamp,
            format!("the CDX layout {} has no timestamp column b", layout.letters()),
        )
    })?;
    let url = url.ok_or_else(|| missing_url(layout))?;
    Ok(CdxRecord {
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
    })
}

fn missing_url(layout: &ColumnLayout) -> Reject {
    if layout.has(Field::Url) {
        Reject::new(RejectReason::MissingUrl, "original URL column a is '-'")
    } else {
        Reject::new(
            RejectReason::MissingUrl,
            format!("the CDX layout {} has no original URL column a", layout.letters()),
        )
    }
}

fn is_revisit_mime(mime: &str) -> bool {
    mime.eq_ignore_ascii_case("warc/revisit")
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
        Ok(Some(b.iter().fold(0u16, |v, &d| v * 10 + u16::from(d - b'0'))))
    } else {
        Err(Reject::new(
            RejectReason::BadStatus,
            format!("status {t:?} is not an HTTP status code (1 to 3 digits)"),
        ))
    }
}

fn parse_u64(token: &str, reason: RejectReason, what: &str) -> Result<Option<u64>, Reject> {
    let Some(t) = present(token) else {
        return Ok(None);
    };
    let b = t.as_bytes();
    let mut v: u64 = 0;
    let mut ok = b.iter().all(u8::is_ascii_digit);
    if ok {
        for &d in b {
            match v.checked_mul(10).and_then(|x| x.checked_add(u64::from(d - b'0'))) {
                Some(x) => v = x,
                None => {
                    ok = false;
                    break;
                }
            }
        }
    }
    if ok {
        Ok(Some(v))
    } else {
        Err(Reject::new(
            reason,
            format!("{what} {t:?} is not a non-negative integer"),
        ))
    }
}

/// A payload digest: bare base32, `sha1:BASE32`, 40-character hex, or base64 (27/28
/// characters, standard or URL-safe alphabet). `-` is absent, not an error.
fn parse_digest(token: &str) -> Result<Option<Sha1Key>, Reject> {
    let Some(t) = present(token) else {
        return Ok(None);
    };
    let bare = strip_sha1_prefix(t);
    let bad = |why: String| Err(Reject::new(RejectReason::BadDigest, why));
    if bare.len() == t.len() {
        // Another algorithm's label (`sha256:…`, `md5:…`) is not a SHA-1.
        if let Some(colon) = t.find(':') {
            return bad(format!(
                "digest {t:?} is a {} digest, not SHA-1",
                &t[..colon]
            ));
        }
    }
    match bare.len() {
        32 => match Sha1Key::from_base32(bare.as_bytes()) {
            Some(k) => Ok(Some(k)),
            None => bad(format!(
                "digest {t:?} is 32 characters but not base32 (A-Z, 2-7)"
            )),
        },
        40 => match Sha1Key::from_hex(bare.as_bytes()) {
            Some(k) => Ok(Some(k)),
            None => bad(format!("digest {t:?} is 40 characters but not hex")),
        },
        27 | 28 => match decode_base64_sha1(bare.as_bytes()) {
            Some(k) => Ok(Some(k)),
            None => bad(format!(
                "digest {t:?} is {} characters but not a base64 SHA-1",
                bare.len()
            )),
        },
        n => bad(format!(
            "digest {t:?} is {n} characters: a SHA-1 is 32 (base32) or 40 (hex)"
        )),
    }
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
            let owned: String = serde_json::from_str(text).map_err(|e| {
                Reject::new(RejectReason::BadJson, format!("CDXJ {key:?}: {e}"))
            })?;
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
            format!("CDXJ {key:?} is {text}: expected a string or a number"),
        ));
    };
    Ok((value != "-" && !value.is_empty()).then_some(value))
}

fn parse_cdxj(text: &str) -> Result<CdxRecord<'_>, Reject> {
    let bytes = text.as_bytes();
    let split = memchr(b' ', bytes).and_then(|a| memchr(b' ', &bytes[a + 1..]).map(|b| (a, a + 1 + b)));
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
        assert!(parse_digest("1I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ").unwrap_err().detail.contains("not base32"));
        assert!(parse_digest("zz39a3ee5e6b4b0d3255bfef95601890afd80709").unwrap_err().detail.contains("not hex"));
        assert!(parse_digest("sha256:abcd").unwrap_err().detail.contains("sha256"));
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
            (fields(5, "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36"), RejectReason::BadDigest),
            (fields(5, "B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC3!!"), RejectReason::BadDigest),
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
        assert_eq!(reject(&mut p, "com,x)/ 2014 {\"url\": ").reason, RejectReason::BadJson);
        assert_eq!(reject(&mut p, "com,x)/ 2014 [1]").reason, RejectReason::BadJson);
        assert_eq!(reject(&mut p, "com,x)/ 2014 {\"url\": true}").reason, RejectReason::BadJson);
        assert_eq!(reject(&mut p, "com,x)/ 2014 {\"mime\": \"a\"}").reason, RejectReason::MissingUrl);
        assert_eq!(reject(&mut p, "com,x)/").reason, RejectReason::TooFewColumns);
        assert_eq!(
            reject(&mut p, "com,x)/ 2014 {\"url\": \"u\", \"offset\": \"x\"}").reason,
            RejectReason::BadOffset
        );
        // Header problems.
        let mut p = CdxParser::new();
        assert_eq!(reject(&mut p, " CDX N b url").reason, RejectReason::BadHeader);
        p.parse_line(b" CDX N a m s").unwrap();
        assert_eq!(reject(&mut p, "k u m 200").reason, RejectReason::MissingTimestamp);
        p.parse_line(b" CDX N b m s").unwrap();
        assert_eq!(reject(&mut p, "k 2014 m 200").reason, RejectReason::MissingUrl);
        for reason in RejectReason::ALL {
            assert!(reason.name().bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'));
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
            ("filedesc://IAH-2008.arc 20080430204825 ...", SkipReason::Filedesc),
            (" CDX N b a m s k r M S V g", SkipReason::Header),
        ] {
            assert_eq!(p.parse_line(line.as_bytes()).unwrap(), CdxLine::Skipped(why), "{line:?}");
        }
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
        assert_eq!(r.digest.map(|d| d.to_string()).as_deref(), Some("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"));
    }

    #[test]
    fn surt_shape() {
        assert!(looks_like_surt("com,example)/"));
        assert!(looks_like_surt("org,httpbin)/post?__wb_method=post&a=1&b=[]&c=3"));
        assert!(!looks_like_surt("example.com/?example=1"));
        assert!(!looks_like_surt("whois://whois.arin.net/z+%2B+132.177.133.114"));
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
