//! GROBID TEI → JSON, in the two shapes described in `schemas/grobid-tei.md`.
//!
//! The field semantics follow the JSON that real pipelines derived from GROBID TEI
//! (the expected outputs in the corpus), not any particular implementation:
//! header fields come from the first matching element below `teiHeader`, citations
//! are every `biblStruct` of a `listBibl`, and long text (abstract, body,
//! acknowledgement, annex) is every text node below the element joined with one space
//! and trimmed — which keeps GROBID's own line breaks, e.g.
//! `"Introduction \nEverything starts somewhere"`.

use serde_json::{Map, Value};

use super::error::{TeiError, TeiErrorKind};
use super::xml::{Document, ElementId};
use super::{TeiOptions, TeiShape};

type Object = Map<String, Value>;

/// Converts a parsed document whose root is `<TEI>`.
pub(crate) fn document_to_json(doc: &Document, options: TeiOptions) -> Result<Value, TeiError> {
    let root = doc.root;
    if !doc.is(root, "TEI") {
        return Err(not_tei(doc, root, "<TEI>"));
    }
    let Some(header) = doc.find(root, &["teiHeader"], |_| true) else {
        return Err(TeiError::new(
            TeiErrorKind::NotTei,
            doc.element(root).offset,
            "<TEI> has no <teiHeader>: not a GROBID document",
        ));
    };
    let shape = options.shape;
    let legacy = shape == TeiShape::Legacy2018;
    let mut out = Object::new();

    let application = doc.find(header, &["appInfo", "application"], |_| true);
    let app_attr = |name: &str| {
        application
            .and_then(|a| doc.attr(a, name))
            .and_then(|v| non_empty(v.trim()))
    };
    put(&mut out, "grobid_version", app_attr("version"));
    put(&mut out, "grobid_timestamp", app_attr("when"));

    let mut title = first_text(doc, header, &["analytic", "title"]);
    if title.is_none() && !legacy {
        title = first_text(doc, header, &["titleStmt", "title"]);
    }
    put(&mut out, "title", title);

    let authors = match doc.find(header, &["sourceDesc", "biblStruct"], |_| true) {
        Some(bibl) => authors(doc, bibl, shape),
        None => Vec::new(),
    };
    out.insert("authors".into(), Value::Array(authors));
    out.insert("journal".into(), Value::Object(journal(doc, header, shape)));
    out.insert("date".into(), published_date(doc, header, shape));

    let doi = if legacy {
        first_text_where(doc, header, &["idno"], |e| {
            doc.attr(e, "type") == Some("DOI")
        })
        .map(|d| d.to_lowercase())
    } else {
        first_text_where(doc, header, &["idno"], |e| attr_is(doc, e, "type", "doi"))
            .and_then(|d| clean_doi(&d))
    };
    put(&mut out, "doi", doi);
    put(
        &mut out,
        "fatcat_release",
        first_text_where(doc, header, &["idno"], |e| {
            doc.attr(e, "type") == Some("fatcat")
        }),
    );

    let citations = doc
        .find_all(root, &["listBibl", "biblStruct"], |_| true)
        .into_iter()
        .enumerate()
        .map(|(index, bibl)| citation(doc, bibl, index, shape))
        .collect();
    out.insert("citations".into(), Value::Array(citations));

    if !legacy {
        let lang = doc
            .find(root, &["text"], |e| doc.attr(e, "xml:lang").is_some())
            .and_then(|t| doc.attr(t, "xml:lang"))
            .or_else(|| doc.attr(header, "xml:lang"))
            .and_then(|l| non_empty(l.trim()));
        put(&mut out, "language_code", lang);
    }

    let long_text = |path: &[&str], div_type: Option<&str>| -> Option<String> {
        let matches = doc.find_all(root, path, |e| match div_type {
            Some(t) => doc.attr(e, "type") == Some(t),
            None => true,
        });
        // The expected 2018 output takes the first match; the current shape keeps all
        // (GROBID 0.7+ may write several annex divs).
        let take = if legacy { 1 } else { matches.len() };
        let parts: Vec<String> = matches
            .iter()
            .take(take)
            .filter_map(|&e| joined_text(doc, e))
            .collect();
        non_empty(&parts.join(" "))
    };
    put(
        &mut out,
        "abstract",
        long_text(&["profileDesc", "abstract"], None),
    );
    put(&mut out, "body", long_text(&["text", "body"], None));
    put(
        &mut out,
        "acknowledgement",
        long_text(&["back", "div"], Some("acknowledgement")),
    );
    put(
        &mut out,
        "annex",
        long_text(&["back", "div"], Some("annex")),
    );

    if !legacy {
        // The current shape drops every null or empty value at the top level.
        out.retain(|_, v| !is_empty_value(v));
    }
    Ok(Value::Object(out))
}

/// The citations of a TEI document, a bare `<listBibl>` or a single `<biblStruct>`
/// (GROBID's processCitationList / processCitation replies).
pub(crate) fn document_citations(
    doc: &Document,
    options: TeiOptions,
) -> Result<Vec<Value>, TeiError> {
    let root = doc.root;
    let bibls = if doc.is(root, "biblStruct") {
        vec![root]
    } else if doc.is(root, "listBibl") {
        let mut all: Vec<ElementId> = doc.children_named(root, "biblStruct").collect();
        all.extend(doc.find_all(root, &["listBibl", "biblStruct"], |_| true));
        all.sort_by_key(|&e| doc.element(e).offset);
        all
    } else if doc.is(root, "TEI") {
        doc.find_all(root, &["listBibl", "biblStruct"], |_| true)
    } else {
        return Err(not_tei(doc, root, "<TEI>, <listBibl> or <biblStruct>"));
    };
    Ok(bibls
        .into_iter()
        .enumerate()
        .map(|(index, bibl)| citation(doc, bibl, index, options.shape))
        .collect())
}

fn not_tei(doc: &Document, root: ElementId, expected: &str) -> TeiError {
    let e = doc.element(root);
    let ns = if e.in_tei {
        ""
    } else {
        " (not in the TEI namespace)"
    };
    TeiError::new(
        TeiErrorKind::NotTei,
        e.offset,
        format!("root element is <{}>{ns}; expected {expected}", e.name),
    )
}

fn citation(doc: &Document, bibl: ElementId, index: usize, shape: TeiShape) -> Value {
    let legacy = shape == TeiShape::Legacy2018;
    let mut out = Object::new();
    put(
        &mut out,
        "id",
        doc.attr(bibl, "xml:id").and_then(|v| non_empty(v.trim())),
    );
    out.insert("index".into(), Value::from(index));

    // An article has an analytic title and a monograph (journal, book) title; a book or
    // report has only the monograph title, which is then the citation's title.
    let analytic_title = first_text(doc, bibl, &["analytic", "title"]);
    let monograph_title = first_text(doc, bibl, &["monogr", "title"]);
    match (analytic_title, monograph_title) {
        (Some(title), Some(container)) => {
            out.insert("title".into(), Value::String(title));
            out.insert("journal".into(), Value::String(container));
        }
        (None, Some(title)) => {
            out.insert("title".into(), Value::String(title));
            out.insert("journal".into(), Value::Null);
        }
        (title, None) => put(&mut out, "title", title),
    }
    out.insert("authors".into(), Value::Array(authors(doc, bibl, shape)));

    let mut publisher = first_text(doc, bibl, &["publicationStmt", "publisher"]);
    if publisher.is_none() && !legacy {
        publisher = first_text(doc, bibl, &["imprint", "publisher"]);
    }
    put(&mut out, "publisher", publisher);
    out.insert("date".into(), published_date(doc, bibl, shape));
    put(&mut out, "volume", bibl_scope(doc, bibl, "volume"));
    put(&mut out, "issue", bibl_scope(doc, bibl, "issue"));

    let url = doc
        .find(bibl, &["ptr"], |e| doc.attr(e, "target").is_some())
        .and_then(|e| doc.attr(e, "target"))
        .and_then(|t| clean_url(t, shape));
    put(&mut out, "url", url);

    if !legacy {
        put(&mut out, "pages", pages(doc, bibl));
        let idno =
            |kind: &str| first_text_where(doc, bibl, &["idno"], |e| attr_is(doc, e, "type", kind));
        put(&mut out, "doi", idno("doi").and_then(|d| clean_doi(&d)));
        put(
            &mut out,
            "arxiv_id",
            idno("arxiv").map(|a| match a.get(..6) {
                Some(p) if p.eq_ignore_ascii_case("arxiv:") => a[6..].trim().to_string(),
                _ => a,
            }),
        );
        put(&mut out, "pmid", idno("pmid"));
        put(&mut out, "pmcid", idno("pmcid"));
        put(
            &mut out,
            "unstructured",
            first_text_where(doc, bibl, &["note"], |e| {
                doc.attr(e, "type") == Some("raw_reference")
            }),
        );
        // Citations keep empty lists and index 0; only absent values are dropped.
        out.retain(|_, v| !v.is_null());
    }
    Value::Object(out)
}

/// Authors below `scope` (any `author` element with a `persName`; affiliation-only
/// "authors", which GROBID emits for unattached affiliations, are skipped).
fn authors(doc: &Document, scope: ElementId, shape: TeiShape) -> Vec<Value> {
    let mut out = Vec::new();
    for author in doc.descendants_named(scope, "author") {
        let Some(pers) = doc.child(author, "persName") else {
            continue;
        };
        let Some(name) = non_empty(&collapse(&doc.text_nodes(pers).join(" "))) else {
            continue;
        };
        let mut obj = Object::new();
        obj.insert("name".into(), Value::String(name));
        let given = match shape {
            // The 2018 shape takes the first forename only.
            TeiShape::Legacy2018 => doc.child(pers, "forename").and_then(|f| clean_text(doc, f)),
            // The current shape keeps every forename (first and middle): "E L" for
            // `<forename type="first">E</forename><forename type="middle">L</forename>`.
            TeiShape::Current => {
                let parts: Vec<String> = doc
                    .children_named(pers, "forename")
                    .filter_map(|f| clean_text(doc, f))
                    .collect();
                non_empty(&parts.join(" "))
            }
        };
        put_some(&mut obj, "given_name", given);
        put_some(
            &mut obj,
            "surname",
            doc.child(pers, "surname").and_then(|s| clean_text(doc, s)),
        );
        put_some(
            &mut obj,
            "email",
            doc.child(author, "email")
                .and_then(|e| clean_text(doc, e))
                // GROBID often keeps the sentence's full stop: "yroisin@ulb.ac.be."
                .and_then(|e| non_empty(e.trim_end_matches('.'))),
        );
        put_some(
            &mut obj,
            "orcid",
            doc.children_named(author, "idno")
                .find(|&e| attr_is(doc, e, "type", "orcid"))
                .and_then(|e| clean_text(doc, e)),
        );
        if let Some(aff) = doc.child(author, "affiliation") {
            let affiliation = affiliation(doc, aff);
            if !affiliation.is_empty() {
                obj.insert("affiliation".into(), Value::Object(affiliation));
            }
        }
        out.push(Value::Object(obj));
    }
    out
}

/// `{department, laboratory, institution, …: text, address: {postCode, settlement,
/// country, …}}` from the `orgName type=…` and `address/*` children. When GROBID lists
/// two `orgName` of one type (`dep1`, `dep2`), the first is kept.
fn affiliation(doc: &Document, aff: ElementId) -> Object {
    let mut out = Object::new();
    for org in doc.children_named(aff, "orgName") {
        if let (Some(kind), Some(text)) = (doc.attr(org, "type"), clean_text(doc, org)) {
            out.entry(kind.to_string()).or_insert(Value::String(text));
        }
    }
    if let Some(address) = doc.child(aff, "address") {
        let mut addr = Object::new();
        for part in doc.child_elements(address) {
            if let Some(text) = clean_text(doc, part) {
                let key = doc.element(part).name.to_string();
                addr.entry(key).or_insert(Value::String(text));
            }
        }
        if !addr.is_empty() {
            out.insert("address".into(), Value::Object(addr));
        }
    }
    out
}

fn journal(doc: &Document, header: ElementId, shape: TeiShape) -> Object {
    let legacy = shape == TeiShape::Legacy2018;
    let mut out = Object::new();
    put(
        &mut out,
        "name",
        first_text(doc, header, &["monogr", "title"]),
    );
    let mut publisher = first_text(doc, header, &["publicationStmt", "publisher"]);
    if publisher.is_none() && !legacy {
        publisher = first_text(doc, header, &["monogr", "imprint", "publisher"]);
    }
    put(&mut out, "publisher", publisher);
    let idno = |kind: &str| {
        first_text_where(doc, header, &["idno"], |e| match shape {
            TeiShape::Legacy2018 => doc.attr(e, "type") == Some(kind),
            TeiShape::Current => attr_is(doc, e, "type", kind),
        })
    };
    put(&mut out, "issn", idno("ISSN"));
    put(&mut out, "eissn", idno("eISSN"));
    put(&mut out, "volume", bibl_scope(doc, header, "volume"));
    put(&mut out, "issue", bibl_scope(doc, header, "issue"));
    if !legacy {
        out.retain(|_, v| !v.is_null());
    }
    out
}

/// The `when` of the first `date type="published"` below `scope`. The 2018 shape wrote
/// `false` when there was no such date at all (seen in real stored metadata) and null
/// when the date had no `when`; the current shape leaves the key out in both cases.
fn published_date(doc: &Document, scope: ElementId, shape: TeiShape) -> Value {
    let date = doc.find(scope, &["date"], |e| {
        doc.attr(e, "type") == Some("published")
    });
    let when = date
        .and_then(|d| doc.attr(d, "when"))
        .and_then(|w| non_empty(w.trim()));
    match (date, when, shape) {
        (_, Some(when), _) => Value::String(when),
        (None, None, TeiShape::Legacy2018) => Value::Bool(false),
        _ => Value::Null,
    }
}

fn bibl_scope(doc: &Document, scope: ElementId, unit: &str) -> Option<String> {
    first_text_where(doc, scope, &["biblScope"], |e| {
        doc.attr(e, "unit") == Some(unit)
    })
}

/// `from-to` when both are given, else the element's text, else `from` alone.
fn pages(doc: &Document, bibl: ElementId) -> Option<String> {
    let scope = doc.find(bibl, &["biblScope"], |e| {
        doc.attr(e, "unit") == Some("page")
    })?;
    let from = doc.attr(scope, "from").and_then(|v| non_empty(v.trim()));
    let to = doc.attr(scope, "to").and_then(|v| non_empty(v.trim()));
    match (from, to) {
        (Some(from), Some(to)) => Some(format!("{from}-{to}")),
        (from, _) => clean_text(doc, scope).or(from),
    }
}

fn clean_url(target: &str, shape: TeiShape) -> Option<String> {
    let mut url = target.trim();
    // GROBID glues the "Last accessed" of "http://x.org/.Last accessed 2012" to the URL.
    if let Some(stripped) = url.strip_suffix(".Lastaccessed") {
        url = stripped;
    }
    if shape == TeiShape::Current {
        // "<http://x.org/>" as written in some reference styles.
        url = url.strip_prefix('<').unwrap_or(url);
        if let Some(end) = url.find('>') {
            url = &url[..end];
        }
        url = url.trim();
    }
    non_empty(url)
}

/// The first `10.NNNN/suffix` in an identifier as GROBID wrote it ("DOI:10.1080/…",
/// "23.DOI:10.1243/…"), lower-cased; None when there is none.
pub(crate) fn clean_doi(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut start = 0;
    while let Some(found) = raw[start..].find("10.") {
        let at = start + found;
        let digits = bytes[at + 3..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let slash = at + 3 + digits;
        if (4..=9).contains(&digits) && bytes.get(slash) == Some(&b'/') {
            let rest = &raw[slash + 1..];
            let suffix_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let suffix = rest[..suffix_len].trim_end_matches(['.', ',', ';']);
            if !suffix.is_empty() {
                return Some(format!("{}/{}", &raw[at..slash], suffix).to_lowercase());
            }
        }
        start = at + 3;
    }
    None
}

/// Text of the first element at `path` below `scope`, whitespace collapsed.
fn first_text(doc: &Document, scope: ElementId, path: &[&str]) -> Option<String> {
    doc.find(scope, path, |_| true)
        .and_then(|e| clean_text(doc, e))
}

/// Like [`first_text`], for the first element that also satisfies `keep`.
fn first_text_where(
    doc: &Document,
    scope: ElementId,
    path: &[&str],
    keep: impl Fn(ElementId) -> bool,
) -> Option<String> {
    doc.find(scope, path, keep).and_then(|e| clean_text(doc, e))
}

/// A short field (title, name part, identifier): all text below the element, runs of
/// whitespace collapsed to one space, trimmed; None when empty.
fn clean_text(doc: &Document, e: ElementId) -> Option<String> {
    non_empty(&collapse(&doc.text(e)))
}

/// A long field (abstract, body, …): every text node joined with one space, trimmed.
fn joined_text(doc: &Document, e: ElementId) -> Option<String> {
    non_empty(doc.text_nodes(e).join(" ").trim())
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn non_empty(s: &str) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s.to_string())
    }
}

fn attr_is(doc: &Document, e: ElementId, name: &str, value: &str) -> bool {
    doc.attr(e, name)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

/// Inserts the value, or null when absent (callers of the current shape remove nulls
/// afterwards, so one code path serves both shapes).
fn put(map: &mut Object, key: &str, value: Option<String>) {
    map.insert(key.into(), value.map_or(Value::Null, Value::String));
}

/// Inserts the value only when present.
fn put_some(map: &mut Object, key: &str, value: Option<String>) {
    if let Some(v) = value {
        map.insert(key.into(), Value::String(v));
    }
}

fn is_empty_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doi_cleaning() {
        assert_eq!(
            clean_doi("DOI:10.1177/0954409711398173").as_deref(),
            Some("10.1177/0954409711398173")
        );
        assert_eq!(
            clean_doi("23.DOI:10.1243/0954409021531656").as_deref(),
            Some("10.1243/0954409021531656")
        );
        assert_eq!(
            clean_doi("228:652.DOI:10.1177/0954409714523264").as_deref(),
            Some("10.1177/0954409714523264")
        );
        assert_eq!(
            clean_doi("10.1161/CIRCEP.115.003091.").as_deref(),
            Some("10.1161/circep.115.003091")
        );
        assert_eq!(clean_doi("10.12/x"), None);
        assert_eq!(clean_doi("no doi here"), None);
        assert_eq!(clean_doi("10.1234/"), None);
        assert_eq!(clean_doi("10."), None);
    }

    #[test]
    fn url_cleaning() {
        assert_eq!(
            clean_url("http://a.org/x.Lastaccessed", TeiShape::Legacy2018).as_deref(),
            Some("http://a.org/x")
        );
        assert_eq!(
            clean_url("<http://a.org/x>,", TeiShape::Current).as_deref(),
            Some("http://a.org/x")
        );
        assert_eq!(clean_url("  ", TeiShape::Current), None);
    }
}
