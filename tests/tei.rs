//! TEI → JSON on the real GROBID outputs and expected JSON files of the corpus.

mod common;

use std::process::Command;

use serde_json::{Value, json};

use sediment::internals::tei::{
    Quality, TeiErrorKind, TeiOptions, TeiShape, citations_from_tei, metadata, quality,
    quality_signals, tei_to_json,
};

/// The corpus file's bytes; `None` after `common::skip` when the corpus is absent.
#[track_caller]
fn corpus(path: &str) -> Option<Vec<u8>> {
    let full = common::corpus(path)?;
    Some(std::fs::read(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display())))
}

fn legacy() -> TeiOptions {
    TeiOptions::with_shape(TeiShape::Legacy2018)
}

fn current() -> TeiOptions {
    TeiOptions::with_shape(TeiShape::Current)
}

/// Real GROBID fulltext outputs and their citation counts.
const REAL: [(&str, usize); 4] = [
    ("grobid/23b29ea36382680716be08fc71aa81bd226e8a85.xml", 100),
    ("grobid/example.tei.xml", 15),
    (
        "grobid/062RoisinAronAmericanNaturalist03.grobid.tei.xml",
        47,
    ),
    (
        "sandcrawler/23b29ea36382680716be08fc71aa81bd226e8a85.xml",
        100,
    ),
];

/// Counts `<biblStruct` start tags inside `<listBibl>…</listBibl>` by scanning bytes,
/// independently of the XML parser under test.
fn count_listbibl_entries(xml: &[u8]) -> usize {
    let text = String::from_utf8_lossy(xml);
    let mut count = 0;
    let mut rest = &text[..];
    while let Some(start) = rest.find("<listBibl") {
        let after = &rest[start..];
        let end = after.find("</listBibl>").unwrap_or(after.len());
        let region = &after[..end];
        count += region
            .match_indices("<biblStruct")
            .filter(|(i, _)| matches!(region.as_bytes().get(i + 11), Some(b' ' | b'>' | b'/')))
            .count();
        rest = &after[end..];
        if end == after.len() {
            break;
        }
    }
    count
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect()
}

#[test]
fn small_xml_legacy_shape_equals_small_json() {
    let (Some(xml), Some(expected)) = (
        corpus("sandcrawler/small.xml"),
        corpus("sandcrawler/small.json"),
    ) else {
        return;
    };
    let expected: Value = serde_json::from_slice(&expected).unwrap();
    let got = tei_to_json(&xml, legacy()).unwrap();
    assert_eq!(got, expected, "got {got:#}");
}

#[test]
fn python_2021_small_xml_current_shape_equals_small_json() {
    let (Some(xml), Some(expected)) = (
        corpus("sandcrawler/python-2021/small.xml"),
        corpus("sandcrawler/python-2021/small.json"),
    ) else {
        return;
    };
    let expected: Value = serde_json::from_slice(&expected).unwrap();
    let got = tei_to_json(&xml, current()).unwrap();
    assert_eq!(got, expected, "got {got:#}");
    // Current is the default.
    assert_eq!(tei_to_json(&xml, TeiOptions::default()).unwrap(), expected);
}

#[test]
fn real_outputs_have_every_citation() {
    for (path, expected) in REAL {
        let Some(xml) = corpus(path) else { return };
        let independent = count_listbibl_entries(&xml);
        assert_eq!(independent, expected, "{path}: independent count");
        for options in [legacy(), current()] {
            let json = tei_to_json(&xml, options).unwrap();
            let citations = json["citations"].as_array().unwrap();
            assert_eq!(citations.len(), expected, "{path} {options:?}");
            for (i, c) in citations.iter().enumerate() {
                assert_eq!(c["index"], json!(i));
                assert_eq!(c["id"], json!(format!("b{i}")), "{path}");
            }
        }
        assert_eq!(citations_from_tei(&xml).unwrap().len(), expected);
    }
}

#[test]
fn grobid_0_5_1_railway_paper() {
    let Some(xml) = corpus("grobid/23b29ea36382680716be08fc71aa81bd226e8a85.xml") else {
        return;
    };
    let j = tei_to_json(&xml, current()).unwrap();
    assert_eq!(j["grobid_version"], "0.5.1-SNAPSHOT");
    assert_eq!(j["grobid_timestamp"], "2018-04-02T00:31+0000");
    assert_eq!(j["title"], "DYNAMICS OF RAILWAY FREIGHT VEHICLES");
    // The fifth <author> holds only an affiliation and is not an author.
    assert_eq!(
        names(&j["authors"]),
        [
            "S Original Citation Iwnicki",
            "S Stichel",
            "A Orlova",
            "M Hecht"
        ]
    );
    assert_eq!(j["authors"][1]["given_name"], "S");
    assert_eq!(j["authors"][1]["surname"], "Stichel");
    assert_eq!(j["date"], "2015");
    assert_eq!(
        j["journal"],
        json!({"name": "Dynamics of railway freight vehicles. Vehicle System Dynamics. pp. 1\u{ad}39. ISSN 0042\u{ad}3114"})
    );
    assert!(j.get("doi").is_none(), "no DOI in this header");
    assert_eq!(j["language_code"], "en");
    let abstract_ = j["abstract"].as_str().unwrap();
    assert!(abstract_.starts_with(
        "This paper summarises the historical development of railway freight vehicles"
    ));
    assert!(j["body"].as_str().unwrap().starts_with(
        "DYNAMICS OF RAILWAY FREIGHT VEHICLES Iwnicki S.D. 1 , Stichel S.  2  , Orlova A. 3 ,"
    ));
    let c = &j["citations"];
    assert_eq!(
        c[0],
        json!({
            "id": "b0", "index": 0,
            "title": "European freight vehicle running gear: today's position and future demands",
            "journal": "PartF, Journal of Rail and Rapid Transit",
            "authors": [{"name": "M Hecht", "given_name": "M", "surname": "Hecht"}],
            "volume": "215", "pages": "1-11", "date": "2001"
        })
    );
    // <idno type="doi">DOI:10.1177/0954409711398173</idno>
    assert_eq!(c[48]["doi"], "10.1177/0954409711398173");
    assert_eq!(
        c[48]["journal"],
        "Proceedings of the Institution of Mechanical Engineers"
    );
    // <ptr target="http://www.rssb.co.uk" />; "&amp;" unescaped in the journal.
    assert_eq!(c[71]["url"], "http://www.rssb.co.uk");
    assert_eq!(c[71]["journal"], "Rail Safety & Standards Board");
    assert_eq!(c[99]["authors"].as_array().unwrap().len(), 2);
    assert_eq!(c[99]["date"], "2015");
    let with_doi = c
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x.get("doi").is_some())
        .count();
    // 14 `<idno type="doi">` in the raw XML, all with a 10.NNNN/ DOI inside.
    let raw_count = String::from_utf8_lossy(&xml)
        .matches("<idno type=\"doi\">")
        .count();
    assert_eq!(with_doi, raw_count);
    assert_eq!(quality(&j), Quality::Good);
}

#[test]
fn grobid_0_5_5_fatcat_medicina_paper() {
    let Some(xml) = corpus("grobid/example.tei.xml") else {
        return;
    };
    let j = tei_to_json(&xml, current()).unwrap();
    // version="0.5.5-fatcat\n" in the XML.
    assert_eq!(j["grobid_version"], "0.5.5-fatcat");
    assert_eq!(
        j["title"],
        "Changes of patients' satisfaction with the health care services in Lithuanian Health Promoting Hospitals network"
    );
    assert_eq!(
        names(&j["authors"]),
        ["Irena Misevičienė", "Žemyna Milašauskienė"]
    );
    assert_eq!(j["date"], "2003");
    assert_eq!(j["journal"], json!({"name": "MEDICINA", "volume": "39"}));
    assert!(
        j["abstract"]
            .as_str()
            .unwrap()
            .starts_with("Key words: health care, quality of health care services")
    );
    assert_eq!(
        j["acknowledgement"],
        "Acknowledgement. We thank the chiefs of the Lithuanian HPH network hospitals for organizing the patient's satisfaction survey and for their active participation."
    );
    let b0 = &j["citations"][0];
    assert_eq!(b0["title"], "National survey of hospital patients");
    assert_eq!(b0["journal"], "BMJ");
    assert_eq!(b0["pages"], "1542-1548");
    assert_eq!(b0["date"], "1994");
    assert_eq!(
        b0["unstructured"],
        "Bruster S, Jarmen B, Bosanquet N, Weston D, Erens R, Delbanco TL. National survey of hospital patients. BMJ 1994; 10:1542-6."
    );
    assert_eq!(b0["authors"].as_array().unwrap().len(), 6);
    assert_eq!(
        b0["authors"][5],
        json!({"name": "T L Delbanco", "given_name": "T L", "surname": "Delbanco"})
    );
    assert!(
        j["citations"][1]["unstructured"]
            .as_str()
            .unwrap()
            .contains("Through the patient's eyes.1st ed.")
    );
    let raw = j["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("unstructured").is_some())
        .count();
    assert_eq!(raw, 15);
    assert_eq!(quality(&j), Quality::Good);

    // The 2018 shape: first forename only, no raw reference, nulls kept.
    let l = tei_to_json(&xml, legacy()).unwrap();
    assert_eq!(l["citations"][0]["authors"][5]["given_name"], "T");
    assert!(l["citations"][0].get("unstructured").is_none());
    assert_eq!(l["doi"], Value::Null);
    assert_eq!(l["journal"]["issn"], Value::Null);
}

#[test]
fn grobid_0_8_0_american_naturalist_paper() {
    let Some(xml) = corpus("grobid/062RoisinAronAmericanNaturalist03.grobid.tei.xml") else {
        return;
    };
    let j = tei_to_json(&xml, current()).unwrap();
    assert_eq!(j["grobid_version"], "0.8.0");
    assert_eq!(
        j["title"],
        "Split Sex Ratios in Perennial Social Hymenoptera: A Mixed Evolutionary Stable Strategy from the Queens' Perspective?"
    );
    assert_eq!(
        j["authors"][0],
        json!({
            "name": "Yves Roisin", "given_name": "Yves", "surname": "Roisin",
            "email": "yroisin@ulb.ac.be",
            "affiliation": {
                "laboratory": "Behavioral and Evolutionary Ecology",
                "institution": "Universite ´Libre de Bruxelles",
                "address": {"postCode": "1050", "settlement": "Brussels", "country": "Belgium"}
            }
        })
    );
    assert_eq!(names(&j["authors"]), ["Yves Roisin", "Serge Aron"]);
    assert_eq!(j["date"], "2003-09-29");
    // The header has no journal title, volume or ISSN: no journal object at all.
    assert!(j.get("journal").is_none());
    assert!(
        j["abstract"]
            .as_str()
            .unwrap()
            .starts_with("In social Hymenoptera, relatedness asymmetries due to haplodiploidy")
    );
    assert!(
        j["acknowledgement"]
            .as_str()
            .unwrap()
            .starts_with("Acknowledgments We thank  J. M. Pasteels  for discussions")
    );
    let c = &j["citations"];
    assert_eq!(c[1]["authors"][1]["name"], "E L Vargo");
    assert_eq!(c[1]["authors"][1]["given_name"], "E L");
    assert_eq!(c[1]["journal"], "Animal Behaviour");
    assert_eq!(c[1]["pages"], "749-757");
    // b46 is a bare <monogr> with an empty <title/> and no date.
    assert_eq!(
        c[46],
        json!({"id": "b46", "index": 46, "authors": [
            {"name": "Joan E Strassmann", "given_name": "Joan E", "surname": "Strassmann"}]})
    );
    assert_eq!(quality(&j), Quality::Good);

    let l = tei_to_json(&xml, legacy()).unwrap();
    assert_eq!(l["citations"][46]["date"], json!(false));
    assert_eq!(l["citations"][46]["title"], Value::Null);
    assert!(l["citations"][46].get("journal").is_none());
    assert_eq!(
        l["journal"],
        json!({"name": null, "publisher": null, "issn": null, "eissn": null, "volume": null, "issue": null})
    );
}

/// Text fields and citations agree with Python's ElementTree reading the same files
/// (`" ".join(el.itertext()).strip()`), an independent XML parser.
#[test]
fn long_text_fields_match_python_elementtree() {
    const SCRIPT: &str = r#"
import json, sys
import xml.etree.ElementTree as ET
T = '{http://www.tei-c.org/ns/1.0}'
def joined(el):
    if el is None:
        return None
    s = ' '.join(el.itertext()).strip()
    return s or None
out = []
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    cits = []
    for b in root.findall('.//%slistBibl/%sbiblStruct' % (T, T)):
        a = b.findtext('.//%sanalytic/%stitle' % (T, T)) or None
        m = b.findtext('.//%smonogr/%stitle' % (T, T)) or None
        cits.append({'title': a or m, 'authors': len([x for x in b.iter(T + 'author') if x.find(T + 'persName') is not None])})
    out.append({
        'abstract': joined(root.find('.//%sprofileDesc/%sabstract' % (T, T))),
        'body': joined(root.find('.//%stext/%sbody' % (T, T))),
        'acknowledgement': joined(root.find('.//%sback/%sdiv[@type="acknowledgement"]' % (T, T))),
        'citations': cits,
    })
print(json.dumps(out))
"#;
    let Some(paths) = REAL
        .iter()
        .map(|(p, _)| common::corpus(p))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    if !common::have_python(&[]) {
        return;
    }
    let output = Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .args(&paths)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "the ElementTree reference failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    for (path, want) in paths.iter().zip(&expected) {
        let xml = std::fs::read(path).unwrap();
        let path = path.display();
        let got = tei_to_json(&xml, current()).unwrap();
        for key in ["abstract", "body", "acknowledgement"] {
            assert_eq!(
                got.get(key).unwrap_or(&Value::Null),
                &want[key],
                "{path} {key}"
            );
        }
        let got_citations = got["citations"].as_array().unwrap();
        let want_citations = want["citations"].as_array().unwrap();
        assert_eq!(got_citations.len(), want_citations.len());
        for (g, w) in got_citations.iter().zip(want_citations) {
            assert_eq!(
                g.get("title").unwrap_or(&Value::Null),
                &w["title"],
                "{path}"
            );
            assert_eq!(json!(g["authors"].as_array().unwrap().len()), w["authors"]);
        }
    }
}

#[test]
fn process_citation_list_outputs() {
    let Some(xml) = corpus("sandcrawler/grobid_refs_978-3-030-64953-1_4.tei.xml") else {
        return;
    };
    let refs = citations_from_tei(&xml).unwrap();
    assert_eq!(refs.len(), count_listbibl_entries(&xml));
    assert_eq!(refs.len(), 3);
    assert_eq!(
        refs[0],
        json!({
            "id": "b0", "index": 0,
            "title": "A world of individuals",
            "journal": "Problems and projects",
            "authors": [{"name": "N Goodman", "given_name": "N", "surname": "Goodman"}],
            "date": "1972", "pages": "155-172",
            "unstructured": "Goodman, N. (1972). A world of individuals. In Problems and projects (pp. 155–172). Bobs-Merrill company."
        })
    );
    assert_eq!(refs[1]["publisher"], "Harvard University Press");
    assert_eq!(refs[1]["authors"][0]["given_name"], "W V O");
    // A book: the monograph title is the title.
    assert_eq!(
        refs[2]["title"],
        "On some difficulties in the theory of transfinite numbers and order types"
    );
    assert!(refs[2].get("journal").is_none());
    assert_eq!(refs[2]["volume"], "4");

    let Some(xml) = corpus("sandcrawler/grobid_refs_s1047951103000064.tei.xml") else {
        return;
    };
    let refs = citations_from_tei(&xml).unwrap();
    assert_eq!(refs.len(), count_listbibl_entries(&xml));
    assert_eq!(refs.len(), 24);
    assert!(refs.iter().all(|r| r.get("unstructured").is_some()));
    assert_eq!(refs[0]["journal"], "Bull. WHO");
    assert_eq!(refs[0]["pages"], "285-294");
    // <biblScope unit="page">1889</biblScope>, no from/to.
    assert_eq!(refs[4]["pages"], "1889");
    assert_eq!(refs[4]["publisher"], "Smith and Co");
    // The full-document converter reads the same file as a document without header.
    let doc = tei_to_json(&xml, current()).unwrap();
    assert_eq!(doc["citations"].as_array().unwrap(), &refs);
    assert_eq!(quality(&doc), Quality::Marginal);
}

#[test]
fn citations_from_bare_list_and_single_struct() {
    let list = br#"<listBibl xmlns="http://www.tei-c.org/ns/1.0"><biblStruct xml:id="b0"><monogr><title level="m">A Book</title><imprint><date type="published" when="1999"/></imprint></monogr></biblStruct><biblStruct xml:id="b1"><analytic><title>T</title></analytic><monogr><title>J</title><idno type="arXiv">arXiv:1234.5678</idno><idno type="PMID">42</idno></monogr></biblStruct></listBibl>"#;
    let refs = citations_from_tei(list).unwrap();
    assert_eq!(refs.len(), 2);
    assert_eq!(
        refs[0],
        json!({"id": "b0", "index": 0, "title": "A Book", "authors": [], "date": "1999"})
    );
    assert_eq!(refs[1]["arxiv_id"], "1234.5678");
    assert_eq!(refs[1]["pmid"], "42");
    let single = br#"<biblStruct xmlns="http://www.tei-c.org/ns/1.0"><analytic><title>Only</title></analytic></biblStruct>"#;
    let refs = citations_from_tei(single).unwrap();
    assert_eq!(
        refs,
        vec![json!({"index": 0, "title": "Only", "authors": []})]
    );
    let e = citations_from_tei(b"<html><body>Error 500</body></html>").unwrap_err();
    assert_eq!(e.kind, TeiErrorKind::NotTei);
}

/// The stored `grobid0:metadata` of 2018-era pipelines (five real lines, with some
/// keys garbled by stray spaces in the fixture) has the keys of the Legacy shape.
#[test]
fn legacy_metadata_has_the_stored_keys() {
    let (Some(lines), Some(xml)) = (
        corpus("sandcrawler/example_grobid_metadata.json"),
        corpus("grobid/23b29ea36382680716be08fc71aa81bd226e8a85.xml"),
    ) else {
        return;
    };
    let ours = metadata(&tei_to_json(&xml, legacy()).unwrap());
    let ours_keys: Vec<&str> = ours
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let ours_citation_keys: Vec<&str> = ours["citations"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(!ours_keys.contains(&"body") && !ours_keys.contains(&"annex"));
    let mut lines_seen = 0;
    for line in String::from_utf8(lines).unwrap().lines() {
        let stored: Value = serde_json::from_str(line).unwrap();
        lines_seen += 1;
        let keys: Vec<String> = stored.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "abstract",
                "acknowledgement",
                "authors",
                "citations",
                "date",
                "doi",
                "journal",
                "title"
            ]
        );
        // Our Legacy metadata has every stored key, plus only the provenance keys the
        // later 2018 converter added (small.json): grobid_version, grobid_timestamp,
        // fatcat_release.
        for k in &keys {
            assert!(ours_keys.contains(&k.as_str()), "{k}");
        }
        let extra: Vec<&&str> = ours_keys
            .iter()
            .filter(|k| !keys.iter().any(|s| s == **k))
            .collect();
        assert_eq!(
            extra,
            [&"fatcat_release", &"grobid_timestamp", &"grobid_version"]
        );
        let journal_keys: Vec<&String> = stored["journal"].as_object().unwrap().keys().collect();
        let ours_journal: Vec<&String> = ours["journal"].as_object().unwrap().keys().collect();
        assert_eq!(journal_keys, ours_journal);
        for citation in stored["citations"].as_array().unwrap() {
            for k in citation.as_object().unwrap().keys() {
                let k = k.replace(' ', "");
                assert!(ours_citation_keys.contains(&k.as_str()), "{k}");
            }
        }
        // Same value types where the stored line has them.
        assert!(stored["date"].is_string() || stored["date"] == json!(false));
    }
    assert_eq!(lines_seen, 5);
}

#[test]
fn metadata_drops_only_body_and_annex() {
    let j = json!({"title": "t", "body": "b", "annex": "a", "citations": []});
    assert_eq!(metadata(&j), json!({"title": "t", "citations": []}));
    assert_eq!(metadata(&json!(null)), json!(null));
}

fn tei(header: &str, body: &str, back: &str) -> Vec<u8> {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><sourceDesc><biblStruct>{header}</biblStruct></sourceDesc></fileDesc></teiHeader><text xml:lang="en"><body>{body}</body><back>{back}</back></text></TEI>"#
    )
    .into_bytes()
}

fn rate(xml: &[u8]) -> Quality {
    quality(&tei_to_json(xml, current()).unwrap())
}

#[test]
fn quality_edge_cases() {
    let title = r#"<analytic><title level="a" type="main">A Study of Things</title>"#;
    let author =
        r#"<author><persName><forename>A</forename><surname>Author</surname></persName></author>"#;
    let long_body = format!("<div><p>{}</p></div>", "word ".repeat(500));
    let medium_body = format!("<div><p>{}</p></div>", "word ".repeat(200));
    let refs = r#"<div type="references"><listBibl><biblStruct xml:id="b0"><analytic><title>R</title></analytic></biblStruct></listBibl></div>"#;

    // Empty TEI: nothing at all.
    assert_eq!(rate(&tei("", "", "")), Quality::Bad);
    assert_eq!(
        rate(br#"<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/></TEI>"#),
        Quality::Bad
    );
    // Title only.
    assert_eq!(
        rate(&tei(&format!("{title}</analytic>"), "", "")),
        Quality::Bad
    );
    // Title and author: enough to identify the document.
    assert_eq!(
        rate(&tei(&format!("{title}{author}</analytic>"), "", "")),
        Quality::Marginal
    );
    // Title and DOI also identify it.
    assert_eq!(
        rate(&tei(
            &format!(r#"{title}</analytic><idno type="DOI">10.1234/ABC</idno>"#),
            "",
            ""
        )),
        Quality::Marginal
    );
    // Everything.
    let all = tei(&format!("{title}{author}</analytic>"), &long_body, refs);
    assert_eq!(rate(&all), Quality::Good);
    // Everything but references.
    assert_eq!(
        rate(&tei(&format!("{title}{author}</analytic>"), &long_body, "")),
        Quality::Marginal
    );
    // Body under 2000 characters.
    assert_eq!(
        rate(&tei(
            &format!("{title}{author}</analytic>"),
            &medium_body,
            refs
        )),
        Quality::Marginal
    );
    // No header, but full text.
    assert_eq!(rate(&tei("", &long_body, refs)), Quality::Marginal);
    // No header, a little text (≥ 500 characters) is not nothing.
    assert_eq!(rate(&tei("", &medium_body, "")), Quality::Marginal);
    // No header, only references.
    assert_eq!(rate(&tei("", "", refs)), Quality::Marginal);
    // A "title" that is really a paragraph does not count.
    let para = format!(
        r#"<analytic><title>{}</title>{author}</analytic>"#,
        "x".repeat(600)
    );
    assert_eq!(rate(&tei(&para, "", "")), Quality::Bad);
    assert!(!quality_signals(&tei_to_json(&tei(&para, "", ""), current()).unwrap()).usable_title);
    // Punctuation is no title.
    assert_eq!(
        rate(&tei(
            &format!(r#"<analytic><title>.</title>{author}</analytic>"#),
            "",
            ""
        )),
        Quality::Bad
    );
    // Both shapes rate alike.
    for xml in [all, tei("", "", "")] {
        assert_eq!(
            quality(&tei_to_json(&xml, legacy()).unwrap()),
            quality(&tei_to_json(&xml, current()).unwrap())
        );
    }
    assert_eq!(Quality::Good.as_str(), "good");
    assert_eq!(Quality::Marginal.as_str(), "marginal");
    assert_eq!(Quality::Bad.as_str(), "bad");
    assert_eq!(Quality::parse("marginal"), Some(Quality::Marginal));
}

#[test]
fn quality_of_the_small_examples() {
    for path in ["sandcrawler/small.xml", "sandcrawler/python-2021/small.xml"] {
        let Some(xml) = corpus(path) else { return };
        for options in [legacy(), current()] {
            let j = tei_to_json(&xml, options).unwrap();
            let s = quality_signals(&j);
            assert!(s.usable_title);
            assert_eq!((s.authors, s.citations), (2, 2));
            assert!(s.body_chars < 200);
            // Identified, but almost no text: marginal.
            assert_eq!(quality(&j), Quality::Marginal, "{path}");
        }
    }
}

#[test]
fn header_doi_is_cleaned_and_lower_cased() {
    let xml = tei(
        r#"<analytic><title>T</title></analytic><idno type="DOI">doi:10.1161/CIRCEP.115.003091</idno><monogr><title level="j">Circ</title><idno type="ISSN">1941-3149</idno><idno type="eISSN">1941-3084</idno><imprint><biblScope unit="volume">8</biblScope><biblScope unit="issue">2</biblScope></imprint></monogr>"#,
        "",
        "",
    );
    let j = tei_to_json(&xml, current()).unwrap();
    assert_eq!(j["doi"], "10.1161/circep.115.003091");
    assert_eq!(
        j["journal"],
        json!({"name": "Circ", "issn": "1941-3149", "eissn": "1941-3084", "volume": "8", "issue": "2"})
    );
    let l = tei_to_json(&xml, legacy()).unwrap();
    // The 2018 shape only lower-cases.
    assert_eq!(l["doi"], "doi:10.1161/circep.115.003091");
    assert_eq!(l["journal"]["eissn"], "1941-3084");
}

#[test]
fn malformed_inputs_are_errors_with_positions() {
    let cases: [(&[u8], TeiErrorKind); 9] = [
        (b"", TeiErrorKind::Empty),
        (b"\n  \n", TeiErrorKind::Empty),
        // GROBID's plain-text error bodies.
        (
            b"[NO_BLOCKS] PDF parsing resulted in empty content",
            TeiErrorKind::NotXml,
        ),
        (
            b"[GENERAL] An exception occurred while running Grobid.",
            TeiErrorKind::NotXml,
        ),
        (b"{\"error\": \"busy\"}", TeiErrorKind::NotXml),
        // XML, but not TEI.
        (
            b"<html><body><h1>Error 500</h1></body></html>",
            TeiErrorKind::NotTei,
        ),
        (
            b"<TEI xmlns=\"urn:not-tei\"><teiHeader/></TEI>",
            TeiErrorKind::NotTei,
        ),
        (
            b"<TEI xmlns=\"http://www.tei-c.org/ns/1.0\"><text/></TEI>",
            TeiErrorKind::NotTei,
        ),
        (b"<TEI><teiHeader></TEI>", TeiErrorKind::Malformed),
    ];
    for (input, kind) in cases {
        let e = tei_to_json(input, current()).unwrap_err();
        assert_eq!(e.kind, kind, "{:?}: {e}", String::from_utf8_lossy(input));
        assert!(e.position <= input.len() as u64);
        assert!(!e.reason.is_empty());
    }
    let e = tei_to_json(
        b"[NO_BLOCKS] PDF parsing resulted in empty content",
        current(),
    )
    .unwrap_err();
    assert_eq!(e.position, 0);
    assert!(e.to_string().contains("NO_BLOCKS"), "{e}");
    let e = tei_to_json(b"<TEI><teiHeader></TEI>", current()).unwrap_err();
    assert_eq!(e.position, 16, "{e}");
    let e = tei_to_json(b"<?xml version=\"1.0\"?>\n<foo/>", current()).unwrap_err();
    assert_eq!((e.kind, e.position), (TeiErrorKind::NotTei, 22));
    assert!(e.reason.contains("<foo>"), "{e}");
}

/// Every prefix of a real document is rejected as truncated (or, when the cut falls
/// between a `<` and the tag name, as malformed) with a position inside the input; no
/// prefix panics.
#[test]
fn truncated_real_documents_are_errors() {
    for (path, _) in &REAL[..3] {
        let Some(xml) = corpus(path) else { return };
        let mut cut = 1;
        while cut < xml.len() {
            // Cutting inside a multi-byte character is an encoding error instead.
            let prefix = &xml[..cut];
            match tei_to_json(prefix, current()) {
                Ok(_) => panic!("{path}: prefix of {cut} bytes accepted"),
                Err(e) => {
                    assert!(
                        matches!(
                            e.kind,
                            TeiErrorKind::Truncated
                                | TeiErrorKind::Malformed
                                | TeiErrorKind::NotUtf8
                        ),
                        "{path} cut {cut}: {e}"
                    );
                    assert!(e.position <= cut as u64, "{path} cut {cut}: {e}");
                }
            }
            cut += 397;
        }
        // Cut just before the final end tag: truncated, pointing at the end of input.
        let end = xml
            .windows(6)
            .rposition(|w| w == b"</TEI>")
            .expect("the document ends with </TEI>");
        let e = tei_to_json(&xml[..end], current()).unwrap_err();
        assert_eq!(e.kind, TeiErrorKind::Truncated, "{e}");
        assert_eq!(e.position, end as u64);
        assert!(e.reason.contains("<TEI> opened at byte"), "{e}");
    }
}
