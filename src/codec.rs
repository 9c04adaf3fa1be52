//! Cell value codecs: how each schema type is stored as bytes and shown as JSON.
//!
//! Stored bytes follow the original HBase table: JSON cells are UTF-8 JSON text,
//! strings are UTF-8, integers are 8 bytes big-endian (`Bytes.toBytes(long)`).
//! JSON cells are stored in one canonical form (compact, keys sorted) so that an
//! export → import → export round trip is byte-identical whatever the input spacing.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    Json,
    String,
    U64,
    I64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodecError {
    #[error("expected {expected} for a {value_type} column, found {found}")]
    WrongJsonType {
        value_type: &'static str,
        expected: &'static str,
        found: &'static str,
    },
    #[error("{0} is out of range for a {1} column")]
    OutOfRange(String, &'static str),
    #[error("stored {0} cell has {1} bytes, expected 8")]
    BadIntegerWidth(&'static str, usize),
    #[error("not valid JSON: {0}")]
    BadJson(String),
    #[error("not valid UTF-8")]
    NotUtf8,
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl ValueType {
    pub fn from_name(name: &str) -> Option<ValueType> {
        match name {
            "json" => Some(ValueType::Json),
            "string" => Some(ValueType::String),
            "u64" => Some(ValueType::U64),
            "i64" => Some(ValueType::I64),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ValueType::Json => "json",
            ValueType::String => "string",
            ValueType::U64 => "u64",
            ValueType::I64 => "i64",
        }
    }

    /// Encodes a JSON value (as read from an export line) into stored bytes.
    pub fn encode_json(self, value: &Value) -> Result<Vec<u8>, CodecError> {
        let wrong = |expected| CodecError::WrongJsonType {
            value_type: self.name(),
            expected,
            found: json_type_name(value),
        };
        match self {
            ValueType::Json => Ok(canonical_json(value)),
            ValueType::String => match value {
                Value::String(s) => Ok(s.as_bytes().to_vec()),
                _ => Err(wrong("a string")),
            },
            ValueType::U64 => match value {
                Value::Number(n) => n
                    .as_u64()
                    .map(|v| v.to_be_bytes().to_vec())
                    .ok_or_else(|| CodecError::OutOfRange(n.to_string(), "u64")),
                _ => Err(wrong("an integer")),
            },
            ValueType::I64 => match value {
                Value::Number(n) => n
                    .as_i64()
                    .map(|v| v.to_be_bytes().to_vec())
                    .ok_or_else(|| CodecError::OutOfRange(n.to_string(), "i64")),
                _ => Err(wrong("an integer")),
            },
        }
    }

    /// Encodes a cell given as text (a TSV field): JSON cells are parsed, integers read
    /// as decimal, strings taken as they are.
    pub fn encode_text(self, text: &str) -> Result<Vec<u8>, CodecError> {
        match self {
            ValueType::Json => {
                let value: Value =
                    serde_json::from_str(text).map_err(|e| CodecError::BadJson(e.to_string()))?;
                Ok(canonical_json(&value))
            }
            ValueType::String => Ok(text.as_bytes().to_vec()),
            ValueType::U64 => text
                .trim()
                .parse::<u64>()
                .map(|v| v.to_be_bytes().to_vec())
                .map_err(|_| CodecError::OutOfRange(crate::text::excerpt(text), "u64")),
            ValueType::I64 => text
                .trim()
                .parse::<i64>()
                .map(|v| v.to_be_bytes().to_vec())
                .map_err(|_| CodecError::OutOfRange(crate::text::excerpt(text), "i64")),
        }
    }

    /// Appends the JSON spelling of stored bytes to `out` (for exports).
    pub fn write_json(self, stored: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        match self {
            // Stored JSON is canonical already (every write path goes through
            // `canonical_json` or a serializer with sorted fields), so copy it.
            ValueType::Json => {
                if stored.is_empty() {
                    return Err(CodecError::BadJson("empty cell".into()));
                }
                out.extend_from_slice(stored);
            }
            ValueType::String => {
                let text = std::str::from_utf8(stored).map_err(|_| CodecError::NotUtf8)?;
                write_json_string(text, out);
            }
            ValueType::U64 => {
                let v = u64::from_be_bytes(
                    stored
                        .try_into()
                        .map_err(|_| CodecError::BadIntegerWidth("u64", stored.len()))?,
                );
                out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
            }
            ValueType::I64 => {
                let v = i64::from_be_bytes(
                    stored
                        .try_into()
                        .map_err(|_| CodecError::BadIntegerWidth("i64", stored.len()))?,
                );
                out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
            }
        }
        Ok(())
    }

    /// Decodes stored bytes into a JSON value (for `get` and tests).
    pub fn decode(self, stored: &[u8]) -> Result<Value, CodecError> {
        let mut text = Vec::with_capacity(stored.len() + 2);
        self.write_json(stored, &mut text)?;
        serde_json::from_slice(&text).map_err(|e| CodecError::BadJson(e.to_string()))
    }
}

/// Compact JSON with object keys sorted (serde_json's default map is ordered by key).
pub fn canonical_json(value: &Value) -> Vec<u8> {
    // Serializing a Value cannot fail: its keys are strings and it holds no non-finite floats.
    serde_json::to_vec(value).unwrap_or_default()
}

/// Whether `text` is exactly what [`canonical_json`] makes of it, decided without building
/// a value: compact, object keys strictly increasing, strings escaped as serde_json escapes
/// them, integers only. Import uses it to store an exported cell as it is; anything it does
/// not recognise (floats, `\u` escapes, escaped keys) takes the slow path, so a `false` for a
/// canonical text costs time, never correctness.
pub fn is_canonical_json(text: &str) -> bool {
    // A `str`: the check itself does not validate UTF-8 inside strings.
    let text = text.as_bytes();
    let mut at = 0;
    canonical_value(text, &mut at, 0) && at == text.len()
}

/// Deeper values are left to the slow path, well inside serde_json's nesting limit (128).
const MAX_DEPTH: u32 = 100;

fn canonical_value(text: &[u8], at: &mut usize, depth: u32) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match text.get(*at) {
        Some(b'{') => canonical_object(text, at, depth),
        Some(b'[') => {
            *at += 1;
            if text.get(*at) == Some(&b']') {
                *at += 1;
                return true;
            }
            loop {
                if !canonical_value(text, at, depth + 1) {
                    return false;
                }
                match text.get(*at) {
                    Some(b',') => *at += 1,
                    Some(b']') => {
                        *at += 1;
                        return true;
                    }
                    _ => return false,
                }
            }
        }
        Some(b'"') => canonical_string(text, at).is_some(),
        Some(b'-' | b'0'..=b'9') => canonical_integer(text, at),
        Some(b't') => literal(text, at, b"true"),
        Some(b'f') => literal(text, at, b"false"),
        Some(b'n') => literal(text, at, b"null"),
        _ => false,
    }
}

fn canonical_object(text: &[u8], at: &mut usize, depth: u32) -> bool {
    *at += 1;
    if text.get(*at) == Some(&b'}') {
        *at += 1;
        return true;
    }
    let mut previous: Option<&[u8]> = None;
    loop {
        // Keys are compared as stored; an escaped key would need unescaping first.
        let Some(key) = canonical_string(text, at) else {
            return false;
        };
        if key.contains(&b'\\') || previous.is_some_and(|p| p >= key) {
            return false;
        }
        previous = Some(key);
        if text.get(*at) != Some(&b':') {
            return false;
        }
        *at += 1;
        if !canonical_value(text, at, depth + 1) {
            return false;
        }
        match text.get(*at) {
            Some(b',') => *at += 1,
            Some(b'}') => {
                *at += 1;
                return true;
            }
            _ => return false,
        }
    }
}

/// A string in serde_json's spelling; returns its contents (still escaped).
fn canonical_string<'t>(text: &'t [u8], at: &mut usize) -> Option<&'t [u8]> {
    if text.get(*at) != Some(&b'"') {
        return None;
    }
    let start = *at + 1;
    let mut i = start;
    loop {
        match *text.get(i)? {
            b'"' => {
                *at = i + 1;
                return Some(&text[start..i]);
            }
            // serde_json writes these five controls, `"` and `\` short; others as \u00XX,
            // which is left to the slow path.
            b'\\' => match text.get(i + 1)? {
                b'"' | b'\\' | b'b' | b't' | b'n' | b'f' | b'r' => i += 2,
                _ => return None,
            },
            0..=0x1f => return None,
            _ => i += 1,
        }
    }
}

/// An integer as serde_json writes a u64 or i64: no sign on zero, no leading zeros, no
/// fraction or exponent (a float would be written back in its own form).
fn canonical_integer(text: &[u8], at: &mut usize) -> bool {
    let start = *at;
    let negative = text[start] == b'-';
    let digits_start = start + usize::from(negative);
    let digits = text[digits_start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = digits_start + digits;
    if digits == 0
        || (digits > 1 && text[digits_start] == b'0')
        || matches!(text.get(end), Some(b'.' | b'e' | b'E'))
    {
        return false;
    }
    // Only ASCII digits and a sign: always UTF-8.
    let number = std::str::from_utf8(&text[start..end]).unwrap_or("");
    let fits = if negative {
        number.parse::<i64>().is_ok_and(|n| n < 0)
    } else {
        number.parse::<u64>().is_ok()
    };
    *at = end;
    fits
}

fn literal(text: &[u8], at: &mut usize, word: &[u8]) -> bool {
    if text[*at..].starts_with(word) {
        *at += word.len();
        true
    } else {
        false
    }
}

/// Appends `text` as a JSON string literal.
pub fn write_json_string(text: &str, out: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(t: ValueType, v: Value) -> Value {
        let stored = t.encode_json(&v).unwrap();
        t.decode(&stored).unwrap()
    }

    #[test]
    fn every_type_round_trips() {
        assert_eq!(round_trip(ValueType::U64, json!(0)), json!(0));
        assert_eq!(round_trip(ValueType::U64, json!(u64::MAX)), json!(u64::MAX));
        assert_eq!(round_trip(ValueType::I64, json!(-5)), json!(-5));
        assert_eq!(round_trip(ValueType::I64, json!(i64::MIN)), json!(i64::MIN));
        assert_eq!(
            round_trip(ValueType::String, json!("tab\there \"quoted\" é")),
            json!("tab\there \"quoted\" é")
        );
        let obj = json!({"u": "http://x/", "c": 2, "nested": {"b": [1, 2.5, null, true]}});
        assert_eq!(round_trip(ValueType::Json, obj.clone()), obj);
    }

    #[test]
    fn integers_are_eight_bytes_big_endian() {
        assert_eq!(
            ValueType::U64.encode_json(&json!(1050532)).unwrap(),
            vec![0, 0, 0, 0, 0, 0x10, 0x07, 0xa4]
        );
        assert_eq!(
            ValueType::I64.encode_json(&json!(200)).unwrap(),
            200i64.to_be_bytes().to_vec()
        );
        assert_eq!(
            ValueType::I64.encode_json(&json!(-1)).unwrap(),
            vec![0xff; 8]
        );
        assert_eq!(
            ValueType::U64.encode_text("361006").unwrap(),
            361006u64.to_be_bytes().to_vec()
        );
    }

    #[test]
    fn json_cells_are_canonical() {
        let spaced = r#"{"o": 984263791, "c": 1, "d": "2017-10-27T22:21:13"}"#;
        let stored = ValueType::Json.encode_text(spaced).unwrap();
        assert_eq!(
            String::from_utf8(stored).unwrap(),
            r#"{"c":1,"d":"2017-10-27T22:21:13","o":984263791}"#
        );
    }

    #[test]
    fn the_canonical_check_agrees_with_canonical_json() {
        let cases = [
            r#"{"c":1,"d":"2017-10-27T22:21:13","o":984263791}"#,
            r#"{"o":1,"c":1}"#,
            r#"{"c":1,"c":2}"#,
            r#"{"a":{"b":[1,-2,true,false,null,"x",[],{}]}}"#,
            r#"{"a": 1}"#,
            r#"{"a":1.0}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":007}"#,
            r#"{"a":18446744073709551615}"#,
            r#"{"a":18446744073709551616}"#,
            r#"{"a":-9223372036854775808}"#,
            r#"{"a":-9223372036854775809}"#,
            r#"{"a":"tab\there \"q\" \\ \n\r\b\f é"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\u001f"}"#,
            r#"{"a":"\/"}"#,
            r#"{"\u0061":1}"#,
            r#"{"b":1,"a\n":2}"#,
            r#"{"é":1,"z":2}"#,
            r#"{"z":1,"é":2}"#,
            r#""just a string""#,
            "12",
            "[1,2]",
            "[1,2,]",
            "{}",
            "[]",
            "null",
            "nul",
            "{\"a\":1}x",
            " {}",
            "{} ",
            // Found by fuzzing (`fuzz/fuzz_targets/jsonl_row.rs`): a key without quotes.
            r#"{&":0}"#,
            r#"{a:0}"#,
        ];
        for text in cases {
            let expected = serde_json::from_str::<Value>(text)
                .is_ok_and(|v| canonical_json(&v) == text.as_bytes());
            // Canonical, but left to the slow path: a float, a \u escape.
            let left_to_slow_path = [r#"{"a":1.0}"#, r#"{"a":"\u001f"}"#].contains(&text);
            assert_eq!(
                is_canonical_json(text),
                expected && !left_to_slow_path,
                "{text}"
            );
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(!is_canonical_json(&deep));
    }

    #[test]
    fn wrong_types_are_refused_with_reasons() {
        let err = ValueType::U64.encode_json(&json!("12")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected an integer for a u64 column, found a string"
        );
        assert!(matches!(
            ValueType::U64.encode_json(&json!(-1)),
            Err(CodecError::OutOfRange(_, "u64"))
        ));
        assert!(matches!(
            ValueType::U64.encode_json(&json!(1.5)),
            Err(CodecError::OutOfRange(_, "u64"))
        ));
        assert!(ValueType::String.encode_json(&json!(3)).is_err());
        assert!(matches!(
            ValueType::Json.encode_text("{bad"),
            Err(CodecError::BadJson(_))
        ));
        assert_eq!(
            ValueType::U64.decode(&[1, 2, 3]),
            Err(CodecError::BadIntegerWidth("u64", 3))
        );
        assert_eq!(ValueType::String.decode(&[0xff]), Err(CodecError::NotUtf8));
    }
}
