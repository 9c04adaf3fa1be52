//! A capture: one fetch of one URL at one time, from a CDX line or a WARC record.
//!
//! Captures are what every input turns into and what the store keeps in URL/time
//! order; the `files` table rows are derived from them (see `store::captures`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::key::Sha1Key;

/// Where a capture was learned from. WARC records know more than CDX lines, so when
/// both describe the same capture the WARC's fields win (see [`merge_captures`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    #[default]
    Cdx,
    Warc,
}

/// The kind of record the capture came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CaptureKind {
    #[default]
    Response,
    Resource,
    /// Identical-payload revisit: `digest` names the earlier payload.
    Revisit,
}

/// Field order is alphabetical so the stored JSON is canonical (sorted keys).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Capture {
    /// Compressed length of the WARC record.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub c_size: Option<u64>,
    /// Raw Content-Type header or CDX mime field, as given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub content_type: Option<String>,
    /// SHA-1 of the de-chunked body when the stored body is chunk-encoded.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        with = "opt_key_base32"
    )]
    pub dechunked: Option<Sha1Key>,
    /// Payload SHA-1: the row key of the file (for revisits, the original's).
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        with = "opt_key_base32"
    )]
    pub digest: Option<Sha1Key>,
    /// False when the computed payload digest differs from WARC-Payload-Digest.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub digest_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub etag: Option<String>,
    #[serde(default)]
    pub kind: CaptureKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_modified: Option<String>,
    /// CDX line number, the capture's position when the input has no WARC offset.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<u64>,
    /// Normalized MIME type (sniffed from the payload when the header says nothing useful).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mime: Option<String>,
    /// Byte offset of the WARC record.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub origin: Origin,
    /// Whether this capture passed the file filter of the run that ingested it.
    #[serde(default)]
    pub passes: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub record_id: Option<String>,
    /// Redirect target (Location header or CDX redirect field).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub redirect: Option<String>,
    /// Payload length in bytes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub size: Option<u64>,
    /// The input file the capture was read from (CDX or WARC path, as given).
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<u16>,
    pub surt: String,
    /// Capture time, 14 digits `yyyyMMddHHmmss`.
    pub ts: String,
    /// User-Agent of the request record belonging to this capture.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ua: Option<String>,
    pub url: String,
    /// The WARC file holding the record, path as given (CDX `g` column, or the imported file).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warc: Option<String>,
}

impl Capture {
    /// The WARC file name without its directory (the `f` of `f:c`).
    pub fn warc_name(&self) -> Option<&str> {
        self.warc.as_deref().map(file_name)
    }

    /// What tells two captures of the same URL and second apart: the WARC file and
    /// record offset when known (so a CDX line and the WARC record it indexes are one
    /// capture), else the input file and line.
    pub fn tie_breaker(&self) -> (&str, u64) {
        match (self.warc_name(), self.offset) {
            (Some(name), Some(offset)) => (name, offset),
            _ => (file_name(&self.source), self.line.unwrap_or(0)),
        }
    }

    /// Counts towards `f:c.c` of its digest.
    pub fn counts(&self) -> bool {
        self.passes || self.kind == CaptureKind::Revisit
    }

    /// Can be the location a file row points at.
    pub fn locates_file(&self) -> bool {
        self.passes && self.kind != CaptureKind::Revisit
    }

    pub fn to_json(&self) -> Vec<u8> {
        // Serializing plain data into a Vec cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn from_json(bytes: &[u8]) -> Result<Capture, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// `dir/sub/name.warc.gz` → `name.warc.gz`.
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// `20171027222113` → `2017-10-27T22:21:13Z` (the `d` of `f:c`).
pub fn iso_date(ts14: &str) -> String {
    let b = ts14.as_bytes();
    if b.len() != 14 || !b.iter().all(u8::is_ascii_digit) {
        return ts14.to_string();
    }
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &ts14[0..4],
        &ts14[4..6],
        &ts14[6..8],
        &ts14[8..10],
        &ts14[10..12],
        &ts14[12..14]
    )
}

/// Merges several JSON descriptions of the same capture into one, independently of
/// their order: for each field the value from the richest origin wins (WARC over
/// CDX), ties go to the greatest value, and `passes` is true if any says so.
pub fn merge_captures<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut values = values.into_iter();
    let first = values.next()?;
    let rest: Vec<&[u8]> = values.filter(|v| *v != first).collect();
    if rest.is_empty() {
        return Some(first.to_vec());
    }
    let mut merged: Option<serde_json::Map<String, Value>> = None;
    let mut merged_rank = 0u8;
    for bytes in std::iter::once(first).chain(rest) {
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(bytes) else {
            // A value that is not a capture object cannot be merged; keep the others.
            continue;
        };
        let rank = origin_rank(&obj);
        let Some(acc) = merged.as_mut() else {
            merged = Some(obj);
            merged_rank = rank;
            continue;
        };
        for (field, value) in obj {
            if field == "passes" {
                let passes = value.as_bool().unwrap_or(false)
                    || acc.get("passes").and_then(Value::as_bool).unwrap_or(false);
                acc.insert(field, Value::Bool(passes));
                continue;
            }
            match acc.get(&field) {
                None => {
                    acc.insert(field, value);
                }
                Some(existing) => {
                    let take = rank > merged_rank
                        || (rank == merged_rank
                            && value_order_key(&value) > value_order_key(existing));
                    if take {
                        acc.insert(field, value);
                    }
                }
            }
        }
        if rank > merged_rank {
            acc.insert("origin".into(), origin_value(rank));
            merged_rank = rank;
        }
    }
    merged.map(|m| serde_json::to_vec(&Value::Object(m)).unwrap_or_default())
}

fn origin_rank(obj: &serde_json::Map<String, Value>) -> u8 {
    match obj.get("origin").and_then(Value::as_str) {
        Some("warc") => 2,
        _ => 1,
    }
}

fn origin_value(rank: u8) -> Value {
    Value::String(if rank == 2 { "warc" } else { "cdx" }.into())
}

fn value_order_key(value: &Value) -> String {
    value.to_string()
}

mod opt_key_base32 {
    use super::*;

    pub fn serialize<S: Serializer>(key: &Option<Sha1Key>, s: S) -> Result<S::Ok, S::Error> {
        match key {
            Some(k) => s.serialize_str(&k.to_base32()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Sha1Key>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| Sha1Key::parse(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdx_capture() -> Capture {
        Capture {
            surt: "org,example)/".into(),
            ts: "20170706005950".into(),
            url: "http://example.org/".into(),
            source: "crawl.cdx".into(),
            warc: Some("ITEM/crawl-00001.warc.gz".into()),
            offset: Some(17120058),
            c_size: Some(361006),
            status: Some(200),
            mime: Some("application/pdf".into()),
            digest: Sha1Key::parse("MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V").ok(),
            passes: true,
            ..Default::default()
        }
    }

    #[test]
    fn json_round_trip_with_sorted_keys() {
        let c = cdx_capture();
        let json = c.to_json();
        let text = String::from_utf8(json.clone()).unwrap();
        assert!(
            text.starts_with(r#"{"c_size":361006,"digest":"MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V""#),
            "{text}"
        );
        let value: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(
            serde_json::to_vec(&value).unwrap(),
            json,
            "stored form is canonical"
        );
        assert_eq!(Capture::from_json(&json).unwrap(), c);
    }

    #[test]
    fn helpers() {
        let c = cdx_capture();
        assert_eq!(c.warc_name(), Some("crawl-00001.warc.gz"));
        assert_eq!(c.tie_breaker(), ("crawl-00001.warc.gz", 17120058));
        assert_eq!(iso_date("20171027222113"), "2017-10-27T22:21:13Z");
        assert_eq!(file_name("a/b/c.warc"), "c.warc");
        assert_eq!(file_name("c.warc"), "c.warc");
    }

    #[test]
    fn merge_prefers_warc_fields_and_is_order_independent() {
        let cdx = cdx_capture();
        let mut warc = cdx_capture();
        warc.origin = Origin::Warc;
        warc.warc = Some("/data/crawl-00001.warc.gz".into());
        warc.size = Some(1_000_000);
        warc.record_id = Some("<urn:uuid:1>".into());
        warc.source = "/data/crawl-00001.warc.gz".into();
        warc.passes = false;
        let (a, b) = (cdx.to_json(), warc.to_json());
        let ab = merge_captures([a.as_slice(), b.as_slice()]).unwrap();
        let ba = merge_captures([b.as_slice(), a.as_slice()]).unwrap();
        assert_eq!(ab, ba);
        let merged = Capture::from_json(&ab).unwrap();
        assert_eq!(merged.origin, Origin::Warc);
        assert_eq!(merged.size, Some(1_000_000));
        assert_eq!(merged.warc.as_deref(), Some("/data/crawl-00001.warc.gz"));
        assert!(merged.passes, "passes is true if any description passes");
        // identical operands (a re-run) merge to the same bytes
        assert_eq!(merge_captures([a.as_slice(), a.as_slice()]).unwrap(), a);
    }
}
