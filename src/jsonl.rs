//! Rows as JSON lines, and back.
//!
//! `{"key":"<BASE32>","sha1hex":"…","f:c":{…},"file:size":123,…}`: columns in schema
//! order, JSON cells embedded as JSON, integers as numbers, strings as strings. With
//! versions, each column is an array of `{"ts":<ms>,"value":…}`, newest first.
//!
//! The same stream carries what a store holds besides its rows (`export --captures`):
//! `{"capture":{…}}`, one capture of the capture index in the JSON form of
//! [`Capture`] (keys sorted; absent fields left out), `{"failed_fetch":{…}}`, a request
//! the archive holds no response for, in the same form, `{"warcinfo":{…}}`, the crawl
//! description of one WARC file, and `{"page":{…}}`, a page a WACZ listed (its title). Readers
//! tell them apart by the field (`key`, `capture`, `failed_fetch`, `warcinfo` or `page`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::capture::Capture;
use crate::codec::{ValueType, is_canonical_json, write_json_string};
use crate::ingest::warc::WarcInfo;
use crate::key::Sha1Key;
use crate::schema::{ColumnId, Schema};
use crate::store::cells::Row;
use crate::text::excerpt;
use crate::wacz::page::StoredPage;

/// Appends one row as a JSON line (with the trailing newline) to `out`.
/// Cells that cannot be decoded (a corrupt integer width, say) are reported in
/// `bad_cells` and left out rather than producing invalid JSON.
pub fn write_row(
    schema: &Schema,
    row: &Row,
    with_versions: bool,
    out: &mut Vec<u8>,
    bad_cells: &mut Vec<String>,
) {
    let mut key = [0u8; 32];
    row.key.write_base32(&mut key);
    out.extend_from_slice(b"{\"key\":\"");
    out.extend_from_slice(&key);
    out.extend_from_slice(b"\",\"sha1hex\":\"");
    out.extend_from_slice(row.key.to_hex().as_bytes());
    out.push(b'"');
    for cell in &row.cells {
        let column = schema.column(cell.column);
        let mark = out.len();
        out.push(b',');
        write_json_string(&format!("{}:{}", column.family, column.qualifier), out);
        out.push(b':');
        let ok = if with_versions {
            out.push(b'[');
            let mut ok = true;
            for (i, version) in cell.versions.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"ts\":");
                out.extend_from_slice(itoa::Buffer::new().format(version.ts).as_bytes());
                out.extend_from_slice(b",\"value\":");
                ok &= column.value_type.write_json(&version.value, out).is_ok();
                out.push(b'}');
            }
            out.push(b']');
            ok
        } else {
            match cell.versions.first() {
                Some(v) => column.value_type.write_json(&v.value, out).is_ok(),
                None => false,
            }
        };
        if !ok {
            out.truncate(mark);
            bad_cells.push(format!(
                "{} {}:{}",
                row.key, column.family, column.qualifier
            ));
        }
    }
    out.extend_from_slice(b"}\n");
}

/// Appends one capture as a JSON line: `{"capture":{…}}`.
pub fn write_capture(capture: &Capture, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"capture\":");
    out.extend_from_slice(&capture.to_json());
    out.extend_from_slice(b"}\n");
}

/// Appends one crawl description as a JSON line: `{"warcinfo":{…}}`.
pub fn write_warcinfo(info: &WarcInfo, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"warcinfo\":");
    // Serializing plain data into a Vec cannot fail.
    out.extend_from_slice(&serde_json::to_vec(info).unwrap_or_default());
    out.extend_from_slice(b"}\n");
}

/// Appends one listed page (a WACZ's `pages.jsonl` line as the store keeps it) as a JSON
/// line: `{"page":{…}}`.
pub fn write_page(page: &StoredPage, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"page\":");
    // Serializing plain data into a Vec cannot fail.
    out.extend_from_slice(&serde_json::to_vec(page).unwrap_or_default());
    out.extend_from_slice(b"}\n");
}

/// Appends one failed fetch as a JSON line: `{"failed_fetch":{…}}` (a capture's form).
pub fn write_failed_fetch(fetch: &Capture, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"failed_fetch\":");
    out.extend_from_slice(&fetch.to_json());
    out.extend_from_slice(b"}\n");
}

/// One line of an export: a row, a capture, a failed fetch, a crawl description or a
/// listed page.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Row(ParsedRow),
    Capture(Box<Capture>),
    FailedFetch(Box<Capture>),
    Warcinfo(Box<WarcInfo>),
    Page(Box<StoredPage>),
}

fn is_timestamp14(ts: &str) -> bool {
    ts.len() == 14 && ts.bytes().all(|b| b.is_ascii_digit())
}

/// Parses one line of an export, whichever kind it is.
pub fn parse_line(schema: &Schema, line: &[u8]) -> Result<Line, LineError> {
    let start = line.trim_ascii_start();
    if start.starts_with(b"{\"capture\"")
        || start.starts_with(b"{\"failed_fetch\"")
        || start.starts_with(b"{\"warcinfo\"")
        || start.starts_with(b"{\"page\"")
    {
        return parse_other(line);
    }
    match parse_row(schema, line) {
        // A line without a key may still be a capture whose field is not first.
        Err(e) if e.code == "missing_key" => match parse_other(line) {
            Err(other) if other.code == "bad_json" => Err(e),
            other => other,
        },
        other => other.map(Line::Row),
    }
}

/// A capture, failed fetch or warcinfo line; `bad_json` when it is none of them.
fn parse_other(line: &[u8]) -> Result<Line, LineError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    enum Other {
        #[serde(rename = "capture")]
        Capture(Box<Capture>),
        #[serde(rename = "failed_fetch")]
        FailedFetch(Box<Capture>),
        #[serde(rename = "warcinfo")]
        Warcinfo(Box<WarcInfo>),
        #[serde(rename = "page")]
        Page(Box<StoredPage>),
    }
    let fields: BTreeMap<String, &RawValue> = serde_json::from_slice(line)
        .map_err(|e| line_error("bad_json", format!("not valid JSON: {e}")))?;
    let kind = match fields.keys().map(String::as_str).collect::<Vec<_>>()[..] {
        ["capture"] => "capture",
        ["failed_fetch"] => "failed_fetch",
        ["warcinfo"] => "warcinfo",
        ["page"] => "page",
        _ => {
            return Err(line_error(
                "bad_json",
                "not a row, capture, failed_fetch, warcinfo or page line",
            ));
        }
    };
    let code = match kind {
        "warcinfo" => "bad_warcinfo",
        "page" => "bad_page",
        _ => "bad_capture",
    };
    let parsed: Other =
        serde_json::from_slice(line).map_err(|e| line_error(code, format!("{kind}: {e}")))?;
    let (capture, failed) = match parsed {
        Other::Capture(capture) => (capture, false),
        Other::FailedFetch(fetch) => (fetch, true),
        Other::Warcinfo(info) => return Ok(Line::Warcinfo(info)),
        Other::Page(page) => {
            if !is_timestamp14(&page.ts) {
                return Err(line_error(
                    code,
                    format!("page: ts {} is not 14 digits (yyyyMMddHHmmss)", page.ts),
                ));
            }
            return Ok(Line::Page(page));
        }
    };
    if !is_timestamp14(&capture.ts) {
        return Err(line_error(
            code,
            format!(
                "{kind}: ts {} is not 14 digits (yyyyMMddHHmmss)",
                excerpt(&capture.ts)
            ),
        ));
    }
    if capture.surt.is_empty() || capture.url.is_empty() {
        return Err(line_error(code, format!("{kind}: empty surt or url")));
    }
    Ok(if failed {
        Line::FailedFetch(capture)
    } else {
        Line::Capture(capture)
    })
}

/// A cell read from a JSON line: stored bytes and, when the line gave one, a timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCell {
    pub column: ColumnId,
    pub ts: Option<u64>,
    pub value: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedRow {
    pub key: Sha1Key,
    pub cells: Vec<ParsedCell>,
}

/// Why a JSON line was refused; `code` is the stable name used in reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LineError {
    pub code: &'static str,
    pub message: String,
}

fn line_error(code: &'static str, message: impl Into<String>) -> LineError {
    LineError {
        code,
        message: message.into(),
    }
}

/// Parses one exported JSON line.
pub fn parse_row(schema: &Schema, line: &[u8]) -> Result<ParsedRow, LineError> {
    match parse_plain_row(schema, line) {
        Some(row) => Ok(row),
        None => parse_row_as_value(schema, line),
    }
}

/// A JSON string without escapes, borrowed.
fn plain_str(raw: &RawValue) -> Option<&str> {
    serde_json::from_str::<&str>(raw.get()).ok()
}

/// A field name borrowed from the line when it has no escapes.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct FieldName<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for FieldName<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl<'de> Visitor<'de> for Name {
            type Value = FieldName<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E>(self, name: &'de str) -> Result<Self::Value, E> {
                Ok(FieldName(Cow::Borrowed(name)))
            }
            fn visit_str<E>(self, name: &str) -> Result<Self::Value, E> {
                Ok(FieldName(Cow::Owned(name.to_owned())))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// The common line — what `export` writes without `--versions` — read without building a
/// JSON value per cell: fields are borrowed, JSON cells already canonical are stored as
/// they are. Returns `None` for anything else (versions, escapes, floats, any error), which
/// [`parse_row_as_value`] then reads; so both give the same rows and the same errors.
fn parse_plain_row(schema: &Schema, line: &[u8]) -> Option<ParsedRow> {
    // A map like serde_json's object: fields in name order, a repeated name's last value.
    let fields: BTreeMap<FieldName, &RawValue> = serde_json::from_slice(line).ok()?;
    let key = Sha1Key::parse(plain_str(fields.get(&FieldName(Cow::Borrowed("key")))?)?).ok()?;
    let mut cells = Vec::with_capacity(fields.len());
    for (FieldName(name), raw) in &fields {
        match name.as_ref() {
            "key" => continue,
            "sha1hex" => {
                (Sha1Key::from_hex(plain_str(raw)?.as_bytes())? == key).then_some(())?;
                continue;
            }
            _ => {}
        }
        let column = schema.column_id(name)?;
        let text = raw.get();
        if text == "null" {
            continue;
        }
        let value = match schema.column(column).value_type {
            _ if text.starts_with('[') => return None,
            ValueType::Json => is_canonical_json(text).then(|| text.as_bytes().to_vec())?,
            ValueType::String => plain_str(raw)?.as_bytes().to_vec(),
            ValueType::U64 => serde_json::from_str::<u64>(text)
                .ok()?
                .to_be_bytes()
                .to_vec(),
            ValueType::I64 => serde_json::from_str::<i64>(text)
                .ok()?
                .to_be_bytes()
                .to_vec(),
        };
        cells.push(ParsedCell {
            column,
            ts: None,
            value,
        });
    }
    Some(ParsedRow { key, cells })
}

/// Parses a line through a `serde_json::Value`: every form, and the reasons for refusals.
/// [`parse_row`] gives the same result faster; this is its reference (tests, fuzzing).
pub fn parse_row_as_value(schema: &Schema, line: &[u8]) -> Result<ParsedRow, LineError> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| line_error("bad_json", format!("not valid JSON: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(line_error("bad_json", "a row must be a JSON object"));
    };
    let key_text = fields
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| line_error("missing_key", "no \"key\" field"))?;
    let key = Sha1Key::parse(key_text).map_err(|e| line_error("bad_key", e.to_string()))?;
    let mut cells = Vec::new();
    for (name, value) in &fields {
        match name.as_str() {
            "key" => continue,
            "sha1hex" => {
                let matches = value
                    .as_str()
                    .and_then(|h| Sha1Key::from_hex(h.as_bytes()))
                    .is_some_and(|h| h == key);
                if !matches {
                    return Err(line_error(
                        "bad_key",
                        format!(
                            "sha1hex {} does not match key {}",
                            value
                                .as_str()
                                .map_or_else(|| excerpt(&value.to_string()), excerpt),
                            excerpt(key_text)
                        ),
                    ));
                }
                continue;
            }
            _ => {}
        }
        let column = schema.column_id(name).ok_or_else(|| {
            line_error(
                "unknown_column",
                format!("unknown column {}", excerpt(name)),
            )
        })?;
        let value_type = schema.column(column).value_type;
        let encode = |v: &Value| {
            value_type
                .encode_json(v)
                .map_err(|e| line_error("bad_value", format!("{name}: {e}")))
        };
        match value {
            Value::Array(versions) if value_type != ValueType::Json || is_versions(versions) => {
                for version in versions {
                    let ts = version.get("ts").and_then(Value::as_u64).ok_or_else(|| {
                        line_error(
                            "bad_value",
                            format!("{name}: a version needs a numeric \"ts\""),
                        )
                    })?;
                    let v = version.get("value").ok_or_else(|| {
                        line_error("bad_value", format!("{name}: a version needs a \"value\""))
                    })?;
                    cells.push(ParsedCell {
                        column,
                        ts: Some(ts),
                        value: encode(v)?,
                    });
                }
            }
            Value::Null => continue,
            v => cells.push(ParsedCell {
                column,
                ts: None,
                value: encode(v)?,
            }),
        }
    }
    Ok(ParsedRow { key, cells })
}

/// A JSON column whose value is itself an array is ambiguous with the versions form;
/// it is read as versions only when every element looks like `{"ts":…,"value":…}`.
fn is_versions(items: &[Value]) -> bool {
    !items.is_empty()
        && items.iter().all(|v| {
            v.as_object()
                .is_some_and(|o| o.len() == 2 && o.contains_key("ts") && o.contains_key("value"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::cells::{Cell, Version};

    fn sample_row(schema: &Schema) -> Row {
        let col = |n: &str| schema.column_id(n).unwrap();
        Row {
            key: Sha1Key::parse("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ").unwrap(),
            cells: vec![
                Cell {
                    column: col("f:c"),
                    versions: vec![Version {
                        ts: 5,
                        value: br#"{"c":1,"u":"http://x/"}"#.to_vec(),
                    }],
                },
                Cell {
                    column: col("file:size"),
                    versions: vec![Version {
                        ts: 5,
                        value: 13264u64.to_be_bytes().to_vec(),
                    }],
                },
                Cell {
                    column: col("file:mime"),
                    versions: vec![
                        Version {
                            ts: 9,
                            value: b"application/pdf".to_vec(),
                        },
                        Version {
                            ts: 5,
                            value: b"text/html".to_vec(),
                        },
                    ],
                },
            ],
        }
    }

    #[test]
    fn writes_the_design_shape() {
        let schema = Schema::embedded().unwrap();
        let mut out = Vec::new();
        write_row(
            &schema,
            &sample_row(&schema),
            false,
            &mut out,
            &mut Vec::new(),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"key\":\"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\",\"sha1hex\":\"da39a3ee5e6b4b0d3255bfef95601890afd80709\",\
             \"f:c\":{\"c\":1,\"u\":\"http://x/\"},\"file:size\":13264,\"file:mime\":\"application/pdf\"}\n"
        );
    }

    #[test]
    fn round_trips_with_and_without_versions() {
        let schema = Schema::embedded().unwrap();
        let row = sample_row(&schema);
        for with_versions in [false, true] {
            let mut out = Vec::new();
            write_row(&schema, &row, with_versions, &mut out, &mut Vec::new());
            let parsed = parse_row(&schema, out.trim_ascii_end()).unwrap();
            assert_eq!(parsed.key, row.key);
            let n = if with_versions { 4 } else { 3 };
            assert_eq!(parsed.cells.len(), n, "{}", String::from_utf8_lossy(&out));
            if with_versions {
                assert!(parsed.cells.iter().all(|c| c.ts.is_some()));
            }
        }
    }

    #[test]
    fn the_plain_reader_gives_what_the_value_reader_gives() {
        let schema = Schema::embedded().unwrap();
        let key = "\"key\":\"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\"";
        let lines = [
            format!(
                "{{{key},\"sha1hex\":\"da39a3ee5e6b4b0d3255bfef95601890afd80709\",\
                 \"f:c\":{{\"c\":1,\"u\":\"http://x/\"}},\"file:size\":13264,\
                 \"file:mime\":\"application/pdf\"}}"
            ),
            format!("{{{key},\"f:c\":{{\"u\":\"http://x/\",\"c\":1}}}}"),
            format!("{{{key},\"f:c\":{{\"c\":1.5}},\"file:mime\":\"a\\u00e9\"}}"),
            format!("{{{key},\"file:size\":null,\"file:mime\":\"x\",\"file:mime\":\"y\"}}"),
            format!("{{\"file:size\":7,{key}}}"),
            format!("{{{key},\"file:size\":-1}}"),
            format!("{{{key},\"file:size\":1.0}}"),
            format!("{{{key},\"file:size\":\"7\"}}"),
            format!("{{{key},\"file:mime\":[{{\"ts\":3,\"value\":\"a\"}}]}}"),
            format!("{{{key},\"sha1hex\":\"00\"}}"),
            format!("{{{key},\"f:zz\":1}}"),
            "{\"key\":\"3I42\\u0048\"}".to_string(),
            "{\"key\":\"XYZ\"}".to_string(),
        ];
        // Found by fuzzing (`fuzz/fuzz_targets/jsonl_row.rs`): bytes that are not UTF-8
        // inside a string.
        let not_utf8 = [&b"\"\xfe\""[..], b"{\"key\":\"\xfe\"}"];
        for line in not_utf8 {
            assert_eq!(parse_row(&schema, line), parse_row_as_value(&schema, line));
        }
        for line in &lines {
            let value_reader = parse_row_as_value(&schema, line.as_bytes());
            if let Some(plain) = parse_plain_row(&schema, line.as_bytes()) {
                assert_eq!(Ok(plain), value_reader, "{line}");
            }
            assert_eq!(parse_row(&schema, line.as_bytes()), value_reader, "{line}");
        }
        let plain = |i: usize| parse_plain_row(&schema, lines[i].as_bytes()).is_some();
        assert!(
            plain(0) && plain(3) && plain(4),
            "the common forms take the plain reader"
        );
    }

    #[test]
    fn capture_failed_fetch_and_warcinfo_lines_round_trip() {
        let schema = Schema::embedded().unwrap();
        let capture = Capture {
            surt: "org,example)/".into(),
            ts: "20200101000000".into(),
            url: "http://example.org/".into(),
            source: "x.warc.gz".into(),
            digest: Sha1Key::parse("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ").ok(),
            status: Some(200),
            passes: true,
            ..Capture::default()
        };
        let mut out = Vec::new();
        write_capture(&capture, &mut out);
        let parsed = parse_line(&schema, out.trim_ascii_end()).unwrap();
        assert_eq!(parsed, Line::Capture(Box::new(capture.clone())));
        out.clear();
        write_failed_fetch(&capture, &mut out);
        let parsed = parse_line(&schema, out.trim_ascii_end()).unwrap();
        assert_eq!(parsed, Line::FailedFetch(Box::new(capture)));
        let info = WarcInfo {
            file: "x.warc.gz".into(),
            software: Some("Wget/1.21.3".into()),
            fields: vec![("robots".into(), "on".into())],
            ..WarcInfo::default()
        };
        out.clear();
        write_warcinfo(&info, &mut out);
        let parsed = parse_line(&schema, out.trim_ascii_end()).unwrap();
        assert_eq!(parsed, Line::Warcinfo(Box::new(info)));
        // Rows still parse as rows; a capture field that is not first is found too.
        let row = br#"{"key":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","file:size":7}"#;
        assert!(matches!(parse_line(&schema, row), Ok(Line::Row(_))));
        let spaced = br#" {"capture": {"surt":"a","ts":"20200101000000","url":"u","source":"s"}}"#;
        assert!(matches!(parse_line(&schema, spaced), Ok(Line::Capture(_))));
        let code = |line: &str| parse_line(&schema, line.as_bytes()).unwrap_err().code;
        assert_eq!(code(r#"{"capture":{"surt":"a"}}"#), "bad_capture");
        assert_eq!(
            code(r#"{"capture":{"surt":"a","ts":"2020","url":"u","source":"s"}}"#),
            "bad_capture"
        );
        assert_eq!(code(r#"{"warcinfo":{"file":1}}"#), "bad_warcinfo");
        assert_eq!(code(r#"{"capture":{},"key":"x"}"#), "bad_json");
        assert_eq!(code(r#"{"f:c":{}}"#), "missing_key");
    }

    #[test]
    fn refuses_bad_lines_with_codes() {
        let schema = Schema::embedded().unwrap();
        let code = |line: &str| parse_row(&schema, line.as_bytes()).unwrap_err().code;
        assert_eq!(code("{"), "bad_json");
        assert_eq!(code("[1]"), "bad_json");
        assert_eq!(code(r#"{"f:c":{}}"#), "missing_key");
        assert_eq!(code(r#"{"key":"XYZ"}"#), "bad_key");
        assert_eq!(
            code(
                r#"{"key":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","sha1hex":"0000000000000000000000000000000000000000"}"#
            ),
            "bad_key"
        );
        assert_eq!(
            code(r#"{"key":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","f:zz":1}"#),
            "unknown_column"
        );
        assert_eq!(
            code(r#"{"key":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","file:size":"big"}"#),
            "bad_value"
        );
    }
}
