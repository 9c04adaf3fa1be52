//! A capture: one fetch of one URL at one time, from a CDX line or a WARC record.
//!
//! Captures are what every input turns into and what the store keeps in URL/time
//! order; the `files` table rows are derived from them (see `store::captures`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::key::Sha1Key;

mod binary;
pub(crate) use binary::attach;

/// Where a capture was learned from. WARC records know more than CDX lines, so when
/// both describe the same capture the WARC's fields win (see [`merge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    #[default]
    Cdx,
    Warc,
}

/// The kind of record the capture came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
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
    /// The record's WARC-Payload-Digest names the de-chunked body (`dechunked`), not the
    /// stored bytes (`digest`): warcprox hashes what it read through a de-chunking HTTP
    /// client. CDX answers then carry `dechunked`, what that crawler compares (see
    /// [`Capture::cdx_digest`]).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub declared_dechunked: bool,
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
    /// How long the fetch took, in milliseconds, when the archive records it (Heritrix's
    /// `fetchTimeMs` in the metadata record of the response).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fetch_ms: Option<u64>,
    #[serde(default)]
    pub kind: CaptureKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_modified: Option<String>,
    /// CDX line number, the capture's position when the input has no WARC offset.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<u64>,
    /// Where the WARC file was when it was imported: its canonical absolute path, so the
    /// payload is found from any working directory (`sediment relocate` re-points it
    /// after a move). Absent for captures learned from CDX lines.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub location: Option<String>,
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

/// A capture whose texts are borrowed: cut from a CDX line, read in place from the stored
/// form (`CaptureRef::read`), or viewed from a `Capture` (`Capture::view`). Encoding and
/// keys are made from it, so the bulk loader encodes CDX lines without copying their
/// fields, and deriving a file row reads only the few fields it needs.
#[derive(Debug, Default, Clone)]
pub struct CaptureRef<'a> {
    pub c_size: Option<u64>,
    pub content_type: Option<&'a str>,
    pub dechunked: Option<Sha1Key>,
    pub declared_dechunked: bool,
    pub digest: Option<Sha1Key>,
    pub digest_ok: Option<bool>,
    pub etag: Option<&'a str>,
    pub fetch_ms: Option<u64>,
    pub kind: CaptureKind,
    pub last_modified: Option<&'a str>,
    pub line: Option<u64>,
    pub location: Option<&'a str>,
    pub mime: Option<&'a str>,
    pub offset: Option<u64>,
    pub origin: Origin,
    pub passes: bool,
    pub record_id: Option<&'a str>,
    pub redirect: Option<&'a str>,
    pub size: Option<u64>,
    pub source: &'a str,
    pub status: Option<u16>,
    pub surt: &'a str,
    pub ts: &'a str,
    pub ua: Option<&'a str>,
    pub url: &'a str,
    pub warc: Option<&'a str>,
}

impl<'a> CaptureRef<'a> {
    /// The capture, every text copied.
    pub fn to_capture(&self) -> Capture {
        let owned = |s: Option<&str>| s.map(str::to_owned);
        Capture {
            c_size: self.c_size,
            content_type: owned(self.content_type),
            dechunked: self.dechunked,
            declared_dechunked: self.declared_dechunked,
            digest: self.digest,
            digest_ok: self.digest_ok,
            etag: owned(self.etag),
            fetch_ms: self.fetch_ms,
            kind: self.kind,
            last_modified: owned(self.last_modified),
            line: self.line,
            location: owned(self.location),
            mime: owned(self.mime),
            offset: self.offset,
            origin: self.origin,
            passes: self.passes,
            record_id: owned(self.record_id),
            redirect: owned(self.redirect),
            size: self.size,
            source: self.source.to_owned(),
            status: self.status,
            surt: self.surt.to_owned(),
            ts: self.ts.to_owned(),
            ua: owned(self.ua),
            url: self.url.to_owned(),
            warc: owned(self.warc),
        }
    }

    /// The WARC file name without its directory (the `f` of `f:c`).
    pub fn warc_name(&self) -> Option<&'a str> {
        self.warc.map(file_name)
    }

    /// What tells two captures of the same URL and second apart: the WARC file and
    /// record offset when known (so a CDX line and the WARC record it indexes are one
    /// capture), else the input file and line.
    pub fn tie_breaker(&self) -> (&'a str, u64) {
        match (self.warc_name(), self.offset) {
            (Some(name), Some(offset)) => (name, offset),
            _ => (file_name(self.source), self.line.unwrap_or(0)),
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
}

impl Capture {
    /// The capture with its texts borrowed (what encoding and keys are made from).
    pub fn view(&self) -> CaptureRef<'_> {
        CaptureRef {
            c_size: self.c_size,
            content_type: self.content_type.as_deref(),
            dechunked: self.dechunked,
            declared_dechunked: self.declared_dechunked,
            digest: self.digest,
            digest_ok: self.digest_ok,
            etag: self.etag.as_deref(),
            fetch_ms: self.fetch_ms,
            kind: self.kind,
            last_modified: self.last_modified.as_deref(),
            line: self.line,
            location: self.location.as_deref(),
            mime: self.mime.as_deref(),
            offset: self.offset,
            origin: self.origin,
            passes: self.passes,
            record_id: self.record_id.as_deref(),
            redirect: self.redirect.as_deref(),
            size: self.size,
            source: &self.source,
            status: self.status,
            surt: &self.surt,
            ts: &self.ts,
            ua: self.ua.as_deref(),
            url: &self.url,
            warc: self.warc.as_deref(),
        }
    }

    /// The WARC file name without its directory (the `f` of `f:c`).
    pub fn warc_name(&self) -> Option<&str> {
        self.view().warc_name()
    }

    /// See [`CaptureRef::tie_breaker`].
    pub fn tie_breaker(&self) -> (&str, u64) {
        self.view().tie_breaker()
    }

    /// Counts towards `f:c.c` of its digest.
    pub fn counts(&self) -> bool {
        self.view().counts()
    }

    /// Can be the location a file row points at.
    pub fn locates_file(&self) -> bool {
        self.view().locates_file()
    }

    /// The digest a CDX line of this capture carries: the record's declared payload
    /// digest, as pywb's and cdxj-indexer's lines do, so a crawler comparing its own
    /// digest with a CDX answer gets a hit. That is the store key except for a
    /// chunk-encoded response whose WARC-Payload-Digest names the de-chunked body.
    pub fn cdx_digest(&self) -> Option<Sha1Key> {
        match (self.kind, self.declared_dechunked, self.dechunked) {
            (CaptureKind::Response | CaptureKind::Resource, true, Some(d)) => Some(d),
            _ => self.digest,
        }
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
    // Byte search: this runs twice per capture on ingest, and WARC paths are long. A
    // short name (a CDX's file column) is scanned a byte at a time: memchr's vector
    // search took longer to set up (~150 instructions) than that (issue 39).
    let bytes = path.as_bytes();
    let separator = if bytes.len() <= 48 {
        bytes.iter().rposition(|&b| b == b'/' || b == b'\\')
    } else {
        memchr::memrchr2(b'/', b'\\', bytes)
    };
    match separator {
        Some(i) => &path[i + 1..],
        None => path,
    }
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

/// Merges several stored descriptions of the same capture (the RocksDB merge operator of
/// both capture key spaces). The result does not depend on their order: for each field
/// the value from the richest origin wins (WARC over CDX), ties go to the greatest value,
/// and `passes` is true if any description says so. Damaged values are skipped.
pub fn merge_encoded<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut values = values.into_iter();
    let first = values.next()?;
    let rest: Vec<&[u8]> = values.filter(|v| *v != first).collect();
    if rest.is_empty() {
        return Some(first.to_vec());
    }
    let merged = std::iter::once(first)
        .chain(rest)
        .filter_map(|bytes| Capture::decode(bytes).ok())
        .reduce(|acc, next| merge(acc, &next))?;
    Some(merged.to_bytes())
}

/// Field-wise merge of two descriptions of one capture (see [`merge_encoded`]).
pub fn merge(mut acc: Capture, other: &Capture) -> Capture {
    use std::cmp::Ordering::{Equal, Greater};
    let rank = other.origin.cmp(&acc.origin);
    fn opt<T: Ord + Clone>(
        ours: &mut Option<T>,
        theirs: &Option<T>,
        wins: &dyn Fn(&T, &T) -> bool,
    ) {
        match (ours.as_ref(), theirs) {
            (_, None) => {}
            (None, Some(v)) => *ours = Some(v.clone()),
            (Some(x), Some(v)) => {
                if wins(v, x) {
                    *ours = Some(v.clone());
                }
            }
        }
    }
    fn req<T: Ord + Clone>(ours: &mut T, theirs: &T, wins: &dyn Fn(&T, &T) -> bool) {
        if wins(theirs, ours) {
            *ours = theirs.clone();
        }
    }
    // `theirs` replaces `ours` when it comes from a richer origin, or from the same one
    // and is greater: a total order, so the merge is commutative and associative.
    macro_rules! w {
        () => {
            &|theirs, ours| rank == Greater || (rank == Equal && theirs > ours)
        };
    }
    opt(&mut acc.c_size, &other.c_size, w!());
    opt(&mut acc.content_type, &other.content_type, w!());
    opt(&mut acc.dechunked, &other.dechunked, w!());
    acc.declared_dechunked |= other.declared_dechunked;
    opt(&mut acc.digest, &other.digest, w!());
    opt(&mut acc.digest_ok, &other.digest_ok, w!());
    opt(&mut acc.etag, &other.etag, w!());
    opt(&mut acc.fetch_ms, &other.fetch_ms, w!());
    req(&mut acc.kind, &other.kind, w!());
    opt(&mut acc.last_modified, &other.last_modified, w!());
    opt(&mut acc.line, &other.line, w!());
    opt(&mut acc.location, &other.location, w!());
    opt(&mut acc.mime, &other.mime, w!());
    opt(&mut acc.offset, &other.offset, w!());
    opt(&mut acc.record_id, &other.record_id, w!());
    opt(&mut acc.redirect, &other.redirect, w!());
    opt(&mut acc.size, &other.size, w!());
    req(&mut acc.source, &other.source, w!());
    opt(&mut acc.status, &other.status, w!());
    req(&mut acc.surt, &other.surt, w!());
    req(&mut acc.ts, &other.ts, w!());
    opt(&mut acc.ua, &other.ua, w!());
    req(&mut acc.url, &other.url, w!());
    opt(&mut acc.warc, &other.warc, w!());
    acc.passes |= other.passes;
    if rank == Greater {
        acc.origin = other.origin;
    }
    acc
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
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
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
        // Short paths are scanned a byte at a time, long ones with memchr: the same answer
        // on both sides of the cut, with either separator or none.
        for len in [1, 40, 47, 48, 49, 50, 120] {
            let name = "n".repeat(len);
            assert_eq!(file_name(&name), name);
            for dir in ["d/", "C:\\d\\", "/"] {
                let path = format!("{dir}{}", &name[dir.len().min(len - 1)..]);
                let expected = &path[dir.len()..];
                assert_eq!(file_name(&path), expected, "{path}");
            }
        }
        assert_eq!(file_name("a/"), "");
    }

    #[test]
    fn merge_prefers_warc_fields_and_is_order_independent() {
        let cdx = cdx_capture();
        let mut warc = cdx_capture();
        warc.origin = Origin::Warc;
        warc.warc = Some("/data/crawl-00001.warc.gz".into());
        warc.size = Some(1_000_000);
        warc.record_id = Some("urn:uuid:1".into());
        warc.source = "/data/crawl-00001.warc.gz".into();
        warc.passes = false;
        let mut other_cdx = cdx_capture();
        other_cdx.line = Some(9);
        other_cdx.source = "z.cdx".into();
        let values = [cdx.to_bytes(), warc.to_bytes(), other_cdx.to_bytes()];
        let orders = [[0, 1, 2], [2, 1, 0], [1, 0, 2], [1, 2, 0]];
        let results: Vec<Vec<u8>> = orders
            .iter()
            .map(|o| merge_encoded(o.iter().map(|&i| values[i].as_slice())).unwrap())
            .collect();
        assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "order does not matter"
        );
        let merged = Capture::decode(&results[0]).unwrap();
        assert_eq!(merged.origin, Origin::Warc);
        assert_eq!(merged.size, Some(1_000_000));
        assert_eq!(merged.warc.as_deref(), Some("/data/crawl-00001.warc.gz"));
        assert_eq!(merged.source, "/data/crawl-00001.warc.gz");
        assert_eq!(
            merged.line,
            Some(9),
            "fields only CDX knows are kept (greatest wins)"
        );
        assert!(merged.passes, "passes is true if any description says so");
        // identical operands (a re-run) merge to the same bytes
        let a = cdx.to_bytes();
        assert_eq!(merge_encoded([a.as_slice(), a.as_slice()]).unwrap(), a);
    }
}
