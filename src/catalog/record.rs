//! Catalog records and the three input formats they are read from.
//!
//! * Crossref REST API works, bare (`{"DOI": …, "title": [...], "author": [...]}`) or in
//!   the API's envelope (`{"status": "ok", "message-type": "work", "message": {…}}`);
//! * fatcat release entities (`{"ident": …, "work_id": …, "ext_ids": {"doi": …},
//!   "title": …, "contribs": [...], "release_year": …}`);
//! * bibjson (`{"doi", "title", "authors": ["Given Family", …], "year", "journal"}`),
//!   as in the sandcrawler match data.
//!
//! Only what matching needs is kept; the record id names the source.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::normalize::{normalize_doi, year_of};

/// One bibliographic record of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogRecord {
    /// `doi:<doi>` for Crossref works and bibjson records with a DOI, `fatcat:<ident>`
    /// for fatcat releases; `<source>:<first 20 hex of the line's SHA-1>` for a record
    /// without those.
    pub id: String,
    /// `crossref`, `fatcat` or `bibjson`.
    pub source: String,
    /// Lower case, `10.…` form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Author names as written ("Given Family"), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authors: Vec<String>,
    /// Author surnames where the source gives them apart, in the order of `authors`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub surnames: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    /// Records of the same work (fatcat `work_id`): versions, not rival candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
}

/// Why a catalog line was refused: a stable code for reports and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RecordError {
    pub code: &'static str,
    pub message: String,
}

fn record_error(code: &'static str, message: impl Into<String>) -> RecordError {
    RecordError {
        code,
        message: message.into(),
    }
}

fn non_empty(text: &str) -> Option<String> {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!collapsed.is_empty()).then_some(collapsed)
}

fn string_field(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).and_then(non_empty)
}

/// The first string of a field that is a string or a list of strings (Crossref gives
/// `title` and `container-title` as lists).
fn first_string(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::String(s) => non_empty(s),
        Value::Array(items) => items.iter().filter_map(Value::as_str).find_map(non_empty),
        _ => None,
    }
}

/// Parses one catalog line (any of the three formats).
pub fn parse_record(line: &[u8]) -> Result<CatalogRecord, RecordError> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| record_error("bad_json", format!("not valid JSON: {e}")))?;
    let Value::Object(mut map) = value else {
        return Err(record_error("bad_record", "a record must be a JSON object"));
    };
    // The Crossref API envelope.
    if map.contains_key("message")
        && (map.contains_key("status") || map.contains_key("message-type"))
    {
        if map
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(|s| s != "ok")
        {
            return Err(record_error(
                "api_error",
                format!(
                    "a Crossref API reply with status {:?}",
                    map.get("status").and_then(Value::as_str).unwrap_or("")
                ),
            ));
        }
        match map.remove("message") {
            Some(Value::Object(message)) => map = message,
            _ => {
                return Err(record_error(
                    "bad_record",
                    "the Crossref API envelope's \"message\" is not an object",
                ));
            }
        }
    }
    let record = if map.contains_key("DOI") {
        crossref_work(&map, line)
    } else if map.contains_key("ident")
        && (map.contains_key("ext_ids")
            || map.contains_key("contribs")
            || map.contains_key("release_type"))
    {
        fatcat_release(&map, line)
    } else if map.contains_key("title") || map.contains_key("doi") {
        bibjson(&map, line)
    } else {
        return Err(record_error(
            "unknown_format",
            "neither a Crossref work (DOI), a fatcat release (ident, ext_ids) nor bibjson (title, doi)",
        ));
    };
    if record.doi.is_none() && record.title.is_none() {
        return Err(record_error(
            "no_title_or_doi",
            "the record has neither a usable DOI nor a title: nothing to match it by",
        ));
    }
    if record.id.contains('\0') {
        return Err(record_error("bad_id", "the record id contains a NUL byte"));
    }
    Ok(record)
}

/// An id for a record without a natural one: the source and a hash of its line.
fn line_id(source: &str, line: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    format!("{source}:{}", &hex::encode(Sha1::digest(line))[..20])
}

fn crossref_work(map: &Map<String, Value>, line: &[u8]) -> CatalogRecord {
    let doi = map
        .get("DOI")
        .and_then(Value::as_str)
        .and_then(normalize_doi);
    let mut authors = Vec::new();
    let mut surnames = Vec::new();
    for author in map
        .get("author")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let given = author.get("given").and_then(Value::as_str).unwrap_or("");
        let family = author.get("family").and_then(Value::as_str).unwrap_or("");
        let name = author.get("name").and_then(Value::as_str).unwrap_or("");
        let full = non_empty(&format!("{given} {family}")).or_else(|| non_empty(name));
        if let Some(full) = full {
            authors.push(full);
            surnames.push(non_empty(family).unwrap_or_default());
        }
    }
    if surnames.iter().all(String::is_empty) {
        surnames.clear();
    }
    let year = [
        "issued",
        "published",
        "published-print",
        "published-online",
        "created",
    ]
    .iter()
    .find_map(|k| {
        map.get(*k)
            .and_then(|d| d.pointer("/date-parts/0/0"))
            .and_then(year_of)
    });
    CatalogRecord {
        id: match &doi {
            Some(doi) => format!("doi:{doi}"),
            None => line_id("crossref", line),
        },
        source: "crossref".into(),
        doi,
        title: first_string(map, "title"),
        authors,
        surnames,
        year,
        journal: first_string(map, "container-title"),
        work: None,
    }
}

fn fatcat_release(map: &Map<String, Value>, line: &[u8]) -> CatalogRecord {
    let ident = string_field(map, "ident");
    let doi = map
        .get("ext_ids")
        .and_then(|e| e.get("doi"))
        .and_then(Value::as_str)
        .and_then(normalize_doi);
    let mut authors = Vec::new();
    let mut surnames = Vec::new();
    for contrib in map
        .get("contribs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = contrib.get("role").and_then(Value::as_str);
        if role.is_some_and(|r| r != "author") {
            continue;
        }
        let raw = contrib.get("raw_name").and_then(Value::as_str);
        let given = contrib.get("given_name").and_then(Value::as_str);
        let surname = contrib.get("surname").and_then(Value::as_str);
        let name = raw.and_then(non_empty).or_else(|| {
            non_empty(&format!(
                "{} {}",
                given.unwrap_or(""),
                surname.unwrap_or("")
            ))
        });
        if let Some(name) = name {
            authors.push(name);
            surnames.push(surname.and_then(non_empty).unwrap_or_default());
        }
    }
    if surnames.iter().all(String::is_empty) {
        surnames.clear();
    }
    let year = map
        .get("release_year")
        .and_then(year_of)
        .or_else(|| map.get("release_date").and_then(year_of));
    let journal = map
        .get("container")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .and_then(non_empty);
    CatalogRecord {
        id: match ident {
            Some(ident) => format!("fatcat:{ident}"),
            None => line_id("fatcat", line),
        },
        source: "fatcat".into(),
        doi,
        title: string_field(map, "title"),
        authors,
        surnames,
        year,
        journal,
        work: string_field(map, "work_id"),
    }
}

fn bibjson(map: &Map<String, Value>, line: &[u8]) -> CatalogRecord {
    let doi = map
        .get("doi")
        .and_then(Value::as_str)
        .and_then(normalize_doi);
    let authors = map
        .get("authors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| match a {
            Value::String(s) => non_empty(s),
            Value::Object(o) => o.get("name").and_then(Value::as_str).and_then(non_empty),
            _ => None,
        })
        .collect();
    let id = match &doi {
        Some(doi) => format!("doi:{doi}"),
        None => line_id("bibjson", line),
    };
    CatalogRecord {
        id,
        source: "bibjson".into(),
        doi,
        title: first_string(map, "title"),
        authors,
        surnames: Vec::new(),
        year: map.get("year").and_then(year_of),
        journal: first_string(map, "journal"),
        work: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bibjson_line() {
        let r = parse_record(br#"{"doi":"10.1001/ARCHSURG.2012.704","title":"Detection  of Colon Cancer","authors":["Rhiana S. Menen",""],"year":"2012","journal":"Archives of Surgery","sha":"521d"}"#).unwrap();
        assert_eq!(r.id, "doi:10.1001/archsurg.2012.704");
        assert_eq!(r.source, "bibjson");
        assert_eq!(r.title.as_deref(), Some("Detection of Colon Cancer"));
        assert_eq!(r.authors, ["Rhiana S. Menen"]);
        assert_eq!(r.year, Some(2012));
        assert_eq!(r.journal.as_deref(), Some("Archives of Surgery"));
    }

    #[test]
    fn crossref_envelope_and_bare_work() {
        let bare = br#"{"DOI":"10.1017/S1047951103000064","title":["Clinical profile"],"author":[{"given":"Hasina","family":"Chagani"},{"name":"Consortium X"}],"issued":{"date-parts":[[2003,2]]},"container-title":["Cardiology in the Young"]}"#;
        let r = parse_record(bare).unwrap();
        assert_eq!(r.id, "doi:10.1017/s1047951103000064");
        assert_eq!(r.authors, ["Hasina Chagani", "Consortium X"]);
        assert_eq!(r.surnames, ["Chagani", ""]);
        assert_eq!(r.year, Some(2003));
        let wrapped = format!(
            r#"{{"status":"ok","message-type":"work","message":{}}}"#,
            std::str::from_utf8(bare).unwrap()
        );
        assert_eq!(parse_record(wrapped.as_bytes()).unwrap(), r);
        let failed = parse_record(br#"{"status":"failed","message":{}}"#).unwrap_err();
        assert_eq!(failed.code, "api_error");
    }

    #[test]
    fn fatcat_release() {
        let r = parse_record(br#"{"ident":"uooq","work_id":"ftl6","ext_ids":{"doi":"10.1007/s10701-007-9186-9"},"title":"The Mathematical Universe","contribs":[{"raw_name":"Max Tegmark","role":"author"},{"raw_name":"An Editor","role":"editor"}],"release_year":2007}"#).unwrap();
        assert_eq!(r.id, "fatcat:uooq");
        assert_eq!(r.work.as_deref(), Some("ftl6"));
        assert_eq!(r.authors, ["Max Tegmark"]);
        assert_eq!(r.year, Some(2007));
    }

    #[test]
    fn refused_lines() {
        assert_eq!(parse_record(b"{nope").unwrap_err().code, "bad_json");
        assert_eq!(parse_record(b"[1]").unwrap_err().code, "bad_record");
        assert_eq!(
            parse_record(br#"{"name":"x"}"#).unwrap_err().code,
            "unknown_format"
        );
        assert_eq!(
            parse_record(br#"{"title":"","doi":null}"#)
                .unwrap_err()
                .code,
            "no_title_or_doi"
        );
    }
}
