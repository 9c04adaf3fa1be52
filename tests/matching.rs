//! The catalog and the match0 stage (issue 7): loading Crossref works, fatcat releases
//! and bibjson, bad lines reported with file and line, the match statuses on hand-made
//! cases, accuracy on the real sandcrawler match sample, resumable runs, and the
//! export/import round trip of grobid0 and match0 cells.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use common::{corpus, json_lines, ok, sediment};
use serde_json::{Value, json};

/// An export-shaped row of a processed file whose grobid0:metadata is `metadata`.
fn metadata_row(sha1hex: &str, metadata: &Value) -> String {
    let raw = hex::decode(sha1hex).unwrap();
    let row = json!({
        "key": data_encoding::BASE32_NOPAD.encode(&raw),
        "sha1hex": sha1hex,
        "grobid0:status_code": 200,
        "grobid0:status": {"status": "success"},
        "grobid0:metadata": metadata,
    });
    format!("{row}\n")
}

fn write_lines(path: &Path, lines: &[String]) -> PathBuf {
    std::fs::write(path, lines.concat()).unwrap();
    path.to_path_buf()
}

fn match0_by_sha(store: &Path) -> HashMap<String, Value> {
    json_lines(&ok(store, &["export", "--families", "match0"]))
        .into_iter()
        .map(|row| (row["sha1hex"].as_str().unwrap().to_string(), row))
        .collect()
}

fn sha(n: u8) -> String {
    format!("{n:02x}").repeat(20)
}

const CATALOG: &[&str] = &[
    r#"{"doi":"10.1000/EXACT","title":"Seasonal Patterns in Tanning Using Real-Time Data From Google Trends","authors":["Bez Toosi","Sunil Kalia"],"year":"2016","journal":"JAMA Dermatology"}"#,
    r#"{"doi":"10.1000/other","title":"Hepatitis C anno 1997","authors":["S Schalm"],"year":"1997"}"#,
    r#"{"doi":"10.1000/fuzzy","title":"Implementing Pharmacoeconomic Guidelines in Latin America: Lessons Learned","authors":["Federico Augustovski","Andrés Pichon-Riviere"],"year":"2011"}"#,
    r#"{"doi":"10.1000/amb1","title":"A Survey of Graph Partitioning Methods","authors":["Jan Novak"],"year":"2010"}"#,
    r#"{"doi":"10.1000/amb2","title":"A survey of graph partitioning methods.","authors":["Jana Novak","Petr Svoboda"],"year":"2012"}"#,
    r#"{"doi":"10.1000/editorial","title":"Editorial","authors":["Ann Editor"],"year":"2015"}"#,
];

/// The hand-made rows: (sha, metadata, expected status, expected DOI).
fn cases() -> Vec<(String, Value, &'static str, Option<&'static str>)> {
    vec![
        (
            sha(1),
            json!({"title": "SEASONAL PATTERNS IN TANNING USING REAL-TIME DATA FROM GOOGLE TRENDS",
                   "authors": [{"name": "Bez Toosi", "given_name": "Bez", "surname": "Toosi"}],
                   "doi": "10.1000/exact", "date": "2016-01"}),
            "exact-doi",
            Some("10.1000/exact"),
        ),
        (
            sha(2),
            json!({"title": "Endobronchial metallic clips to guide high-dose radiotherapy",
                   "authors": [{"name": "T Malfait"}], "doi": "10.1000/other"}),
            "doi-title-mismatch",
            None,
        ),
        (
            sha(3),
            json!({"title": "HEALTH POLICY ANALYSIS Implementing Pharmacoeconomic Guidelines in Latin Amerlca: Lessons Learned",
                   "authors": [{"name": "F Augustovski", "surname": "Augustovski"}]}),
            "fuzzy-title",
            Some("10.1000/fuzzy"),
        ),
        (
            sha(4),
            json!({"title": "A survey of graph partitioning methods", "authors": [{"name": "J Novak"}]}),
            "ambiguous",
            None,
        ),
        (
            sha(5),
            json!({"title": "Cells, Gels, and the Engines of Life", "authors": [{"name": "Gerald Pollack"}]}),
            "no-match",
            None,
        ),
        // A generic title alone is not enough.
        (sha(6), json!({"title": "EDITORIAL"}), "no-match", None),
        // A DOI the catalog does not have: the title decides.
        (
            sha(7),
            json!({"title": "Implementing pharmacoeconomic guidelines in Latin America - lessons learned",
                   "doi": "10.9999/not-in-catalog"}),
            "fuzzy-title",
            Some("10.1000/fuzzy"),
        ),
        (
            sha(8),
            json!({"authors": [{"name": "Nobody"}]}),
            "no-match",
            None,
        ),
    ]
}

/// A store with the hand-made catalog and rows.
fn hand_made_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let catalog: Vec<String> = CATALOG.iter().map(|l| format!("{l}\n")).collect();
    let catalog = write_lines(&dir.join("catalog.bibjson"), &catalog);
    ok(&store, &["catalog", "load", catalog.to_str().unwrap()]);
    let rows: Vec<String> = cases()
        .iter()
        .map(|(sha, metadata, _, _)| metadata_row(sha, metadata))
        .collect();
    let rows = write_lines(&dir.join("rows.jsonl"), &rows);
    ok(&store, &["import-jsonl", rows.to_str().unwrap()]);
    store
}

#[test]
fn hand_made_cases_get_their_status() {
    let dir = tempfile::tempdir().unwrap();
    let store = hand_made_store(dir.path());
    ok(&store, &["match"]);
    let rows = match0_by_sha(&store);
    for (sha, metadata, status, doi) in cases() {
        let row = &rows[&sha];
        assert_eq!(row["match0:mstatus"], status, "{metadata}: {row}");
        assert_eq!(row.get("match0:doi").and_then(Value::as_str), doi, "{row}");
        let info = &row["match0:minfo"];
        assert!(info["candidates"].is_u64(), "{info}");
        assert!(info["method"].is_string(), "{info}");
    }
    let info = |n| rows[&sha(n)]["match0:minfo"].clone();
    assert_eq!(info(1)["catalog_id"], "doi:10.1000/exact");
    assert_eq!(info(1)["method"], "doi");
    assert_eq!(info(1)["authors"], "agree");
    assert_eq!(info(2)["catalog_id"], "doi:10.1000/other");
    assert_eq!(info(2)["extracted_doi"], "10.1000/other");
    assert_eq!(info(3)["catalog_id"], "doi:10.1000/fuzzy");
    assert_eq!(info(3)["method"], "title");
    assert!(info(3)["score"].as_f64().unwrap() > 0.9);
    let ambiguous = info(4);
    let tied: HashSet<&str> = ambiguous["tied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["catalog_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        tied,
        HashSet::from(["doi:10.1000/amb1", "doi:10.1000/amb2"])
    );
    assert_eq!(info(6)["best"]["catalog_id"], "doi:10.1000/editorial");
    assert_eq!(info(7)["doi_in_catalog"], false);
    assert_eq!(info(8)["reason"], "no title");
}

/// The hidden tuning option (scripts/tune-match.sh): thresholds replaced by name change
/// the outcome, say so in match0:minfo, and a bad value is an error naming it.
#[test]
fn title_thresholds_for_tuning() {
    let dir = tempfile::tempdir().unwrap();
    let store = hand_made_store(dir.path());
    ok(&store, &["match"]);
    let defaults = match0_by_sha(&store);
    assert!(
        defaults
            .values()
            .all(|row| row["match0:minfo"].get("title_thresholds").is_none()),
        "no note without the option"
    );
    // The row with a running head before its title (and a typo) is matched by the
    // catalog title found inside it or by the catalog's words it covers; with both
    // thresholds at 1 it is not.
    let strict = "strong_inside=1,medium_inside=1,medium_catalog_coverage=1";
    ok(&store, &["match", "--force", "--title-thresholds", strict]);
    let tuned = match0_by_sha(&store);
    assert_eq!(defaults[&sha(3)]["match0:mstatus"], "fuzzy-title");
    assert_eq!(
        tuned[&sha(3)]["match0:mstatus"],
        "no-match",
        "{}",
        tuned[&sha(3)]
    );
    assert_eq!(tuned[&sha(3)]["match0:minfo"]["title_thresholds"], strict);
    for n in [1, 2, 4, 5, 6, 7, 8] {
        assert_eq!(
            tuned[&sha(n)]["match0:mstatus"],
            defaults[&sha(n)]["match0:mstatus"],
            "row {n}"
        );
    }
    // The defaults again: the same cells as the first run.
    ok(&store, &["match", "--force"]);
    assert_eq!(match0_by_sha(&store), defaults);
    for (value, says) in [
        ("strong_edit=2", "0..=1"),
        ("edit=0.5", "unknown threshold"),
        ("strong_edit", "NAME=VALUE"),
    ] {
        let run = sediment(&store, &["match", "--force", "--title-thresholds", value]);
        assert_ne!(run.status, 0, "{value}");
        assert!(
            run.stderr.contains("--title-thresholds") && run.stderr.contains(says),
            "{value}: {}",
            run.stderr
        );
    }
    assert_eq!(
        match0_by_sha(&store),
        defaults,
        "a refused run writes nothing"
    );
}

#[test]
fn finished_rows_are_skipped_limit_and_force() {
    let dir = tempfile::tempdir().unwrap();
    let store = hand_made_store(dir.path());
    let run = sediment(&store, &["match", "--limit", "3"]);
    assert!(run.stderr.contains("rows_matched 3"), "{}", run.stderr);
    assert_eq!(match0_by_sha(&store).len(), 3);
    let run = sediment(&store, &["match"]);
    assert!(run.stderr.contains("rows_matched 5"), "{}", run.stderr);
    assert!(run.stderr.contains("skipped_done 3"), "{}", run.stderr);
    let run = sediment(&store, &["match"]);
    assert!(!run.stderr.contains("rows_matched "), "{}", run.stderr);
    assert!(run.stderr.contains("skipped_done 8"), "{}", run.stderr);
    let before = match0_by_sha(&store);
    let run = sediment(&store, &["match", "--force"]);
    assert!(run.stderr.contains("rows_matched 8"), "{}", run.stderr);
    assert_eq!(match0_by_sha(&store), before, "matching is deterministic");
}

#[test]
fn an_empty_catalog_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let rows = write_lines(
        &dir.path().join("rows.jsonl"),
        &[metadata_row(&sha(1), &json!({"title": "Anything"}))],
    );
    ok(&store, &["import-jsonl", rows.to_str().unwrap()]);
    let run = sediment(&store, &["match"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("catalog is empty"), "{}", run.stderr);
}

#[test]
fn catalog_loads_crossref_fatcat_and_bibjson() {
    let (Some(work_a), Some(work_b), Some(fatcat), Some(sample)) = (
        corpus("sandcrawler/crossref_api_work_978-3-030-64953-1_4.json"),
        corpus("sandcrawler/crossref_api_work_s1047951103000064.json"),
        corpus("sandcrawler/math_universe_releases.json"),
        corpus("sandcrawler/crossref_sample.bibjson"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let files: Vec<&str> = [&work_a, &work_b, &fatcat, &sample]
        .iter()
        .map(|p| p.to_str().unwrap())
        .collect();
    let mut args = vec!["catalog", "load"];
    args.extend(&files);
    let run = sediment(&store, &args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("records_new 970"), "{}", run.stderr);
    assert!(run.stderr.contains("problems 0"), "{}", run.stderr);

    // The Crossref envelope, by DOI in any spelling.
    let record: Value = serde_json::from_str(&ok(
        &store,
        &[
            "catalog",
            "get",
            "https://doi.org/10.1017/S1047951103000064",
        ],
    ))
    .unwrap();
    assert_eq!(record["id"], "doi:10.1017/s1047951103000064");
    assert_eq!(record["source"], "crossref");
    assert_eq!(
        record["title"],
        "Clinical profile of acute rheumatic fever in Pakistan"
    );
    assert_eq!(
        record["authors"],
        json!(["Hasina Suleman Chagani", "Kalimuddin Aziz"])
    );
    assert_eq!(record["year"], 2003);
    assert_eq!(record["journal"], "Cardiology in the Young");
    // fatcat releases by id.
    let release: Value = serde_json::from_str(&ok(
        &store,
        &["catalog", "get", "fatcat:uooqfttis5cp3b3lgd7ltesg2a"],
    ))
    .unwrap();
    assert_eq!(release["doi"], "10.1007/s10701-007-9186-9");
    assert_eq!(release["work"], "ftl6xv267vb6xfech3khri3nwa");
    assert_eq!(release["authors"], json!(["Max Tegmark"]));

    // Loading again is a no-op; --force reloads without changing anything.
    let again = sediment(&store, &args);
    assert!(again.stderr.contains("already loaded"), "{}", again.stderr);
    let mut forced = args.clone();
    forced.push("--force");
    let forced = sediment(&store, &forced);
    assert!(
        forced.stderr.contains("records_unchanged 970"),
        "{}",
        forced.stderr
    );

    // Versions of one work are not rivals, another work with the same title is.
    let rows = write_lines(
        &dir.path().join("rows.jsonl"),
        &[
            metadata_row(
                &sha(1),
                &json!({"title": "The Mathematical Universe", "authors": [{"name": "Max Tegmark"}],
                        "doi": "10.1007/s10701-007-9186-9"}),
            ),
            metadata_row(
                &sha(2),
                &json!({"title": "The Mathematical Universe", "authors": [{"name": "Max Tegmark"}]}),
            ),
        ],
    );
    ok(&store, &["import-jsonl", rows.to_str().unwrap()]);
    ok(&store, &["match"]);
    let rows = match0_by_sha(&store);
    assert_eq!(rows[&sha(1)]["match0:mstatus"], "exact-doi");
    assert_eq!(
        rows[&sha(1)]["match0:minfo"]["catalog_id"],
        "fatcat:uooqfttis5cp3b3lgd7ltesg2a"
    );
    assert_eq!(rows[&sha(2)]["match0:mstatus"], "ambiguous");
    let tied: HashSet<&str> = rows[&sha(2)]["match0:minfo"]["tied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["catalog_id"].as_str().unwrap())
        .collect();
    assert!(
        tied.contains("fatcat:domerrq5mvdqfdbolkunct3esy"),
        "{tied:?}"
    );
}

#[test]
fn bad_catalog_lines_are_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let file = write_lines(
        &dir.path().join("catalog.jsonl"),
        &[
            format!("{}\n", CATALOG[0]),
            "{\"doi\": \"10.1/x\", \"title\": \n".into(),
            "{\"name\": \"not a record\"}\n".into(),
            "\n".into(),
            "[1, 2]\n".into(),
            "{\"title\": \"\", \"doi\": \"no doi\"}\n".into(),
            format!("{}\n", CATALOG[1]),
        ],
    );
    let rejects = dir.path().join("rejects.jsonl");
    let run = sediment(
        &store,
        &[
            "catalog",
            "load",
            "--rejects",
            rejects.to_str().unwrap(),
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status, 3, "done, with bad lines: {}", run.stderr);
    let name = file.display().to_string();
    for (line, reason) in [
        (2, "bad_json"),
        (3, "unknown_format"),
        (5, "bad_record"),
        (6, "no_title_or_doi"),
    ] {
        assert!(
            run.stderr.contains(&format!("{name}:{line}: {reason}:")),
            "line {line}: {}",
            run.stderr
        );
    }
    assert!(run.stderr.contains("records_new 2"), "{}", run.stderr);
    assert_eq!(
        json_lines(&std::fs::read_to_string(rejects).unwrap()).len(),
        4
    );
    // --strict stops at the first.
    let strict = sediment(
        &store,
        &[
            "catalog",
            "load",
            "--force",
            "--strict",
            file.to_str().unwrap(),
        ],
    );
    assert_ne!(strict.status, 0);
    assert!(strict.stderr.contains(":2"), "{}", strict.stderr);
}

#[test]
fn grobid0_and_match0_cells_round_trip_through_export_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let store = hand_made_store(dir.path());
    // Rows with TEI cells too, from the real GROBID outputs.
    if let (Some(a), Some(b)) = (
        corpus("grobid/example.tei.xml"),
        corpus("grobid/062RoisinAronAmericanNaturalist03.grobid.tei.xml"),
    ) {
        let tei = dir.path().join("tei");
        std::fs::create_dir_all(tei.join("ab/cd")).unwrap();
        std::fs::copy(a, tei.join(format!("{}.tei.xml", sha(0xa1)))).unwrap();
        std::fs::copy(b, tei.join(format!("ab/cd/{}.tei.xml", sha(0xab)))).unwrap();
        ok(&store, &["import-tei", tei.to_str().unwrap()]);
    }
    ok(&store, &["match"]);
    let exported = ok(&store, &["export"]);
    assert!(exported.contains("\"grobid0:tei_xml\"") || corpus("grobid").is_none());
    assert!(exported.contains("\"match0:minfo\""));
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, &exported).unwrap();
    let copy = dir.path().join("copy");
    ok(&copy, &["import-jsonl", file.to_str().unwrap()]);
    assert_eq!(ok(&copy, &["export"]), exported);
    let versions = ok(
        &store,
        &["export", "--versions", "1", "--families", "grobid0,match0"],
    );
    let file = dir.path().join("versions.jsonl");
    std::fs::write(&file, &versions).unwrap();
    let copy = dir.path().join("copy-versions");
    ok(&copy, &["import-jsonl", file.to_str().unwrap()]);
    assert_eq!(
        ok(
            &copy,
            &["export", "--versions", "1", "--families", "grobid0,match0"]
        ),
        versions,
        "timestamps survive too"
    );
}

/// Precision and recall of `match` on the sandcrawler sample.
struct Accuracy {
    matched: usize,
    correct: usize,
    relevant: usize,
}

impl Accuracy {
    fn precision(&self) -> f64 {
        self.correct as f64 / self.matched.max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.correct as f64 / self.relevant.max(1) as f64
    }
}

fn sample_accuracy(
    dir: &Path,
    name: &str,
    grobid: &Path,
    catalog_lines: &[String],
    keep_dois: bool,
) -> Accuracy {
    let store = dir.join(name);
    let catalog = write_lines(&dir.join(format!("{name}.bibjson")), catalog_lines);
    ok(&store, &["catalog", "load", catalog.to_str().unwrap()]);
    let mut truth: HashMap<String, String> = HashMap::new();
    for line in catalog_lines {
        let record: Value = serde_json::from_str(line).unwrap();
        truth.insert(
            record["sha"].as_str().unwrap().to_string(),
            record["doi"].as_str().unwrap().to_lowercase(),
        );
    }
    let mut rows = Vec::new();
    let mut shas = HashSet::new();
    for line in std::fs::read_to_string(grobid).unwrap().lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let mut metadata = json!({});
        if let Some(title) = record["title"].as_str() {
            metadata["title"] = json!(title);
        }
        let authors: Vec<Value> = record["authors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| json!({"name": a}))
            .collect();
        metadata["authors"] = json!(authors);
        if keep_dois && let Some(doi) = record["doi"].as_str() {
            metadata["doi"] = json!(doi);
        }
        let sha = record["sha"].as_str().unwrap();
        shas.insert(sha.to_string());
        rows.push(metadata_row(sha, &metadata));
    }
    let rows = write_lines(&dir.join(format!("{name}.rows.jsonl")), &rows);
    ok(&store, &["import-jsonl", rows.to_str().unwrap()]);
    ok(&store, &["match"]);
    let mut accuracy = Accuracy {
        matched: 0,
        correct: 0,
        relevant: shas.iter().filter(|s| truth.contains_key(*s)).count(),
    };
    for (sha, row) in match0_by_sha(&store) {
        if let Some(doi) = row.get("match0:doi").and_then(Value::as_str) {
            accuracy.matched += 1;
            if truth.get(&sha).map(String::as_str) == Some(doi) {
                accuracy.correct += 1;
            }
        }
    }
    accuracy
}

#[test]
fn accuracy_on_the_real_match_sample() {
    let (Some(grobid), Some(crossref)) = (
        corpus("sandcrawler/grobid_sample.bibjson"),
        corpus("sandcrawler/crossref_sample.bibjson"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let catalog: Vec<String> = std::fs::read_to_string(&crossref)
        .unwrap()
        .lines()
        .map(|l| format!("{l}\n"))
        .collect();
    let given = sample_accuracy(dir.path(), "given", &grobid, &catalog, true);
    assert_eq!(given.relevant, 944);
    let without = sample_accuracy(dir.path(), "without", &grobid, &catalog, false);
    for (name, a) in [("as given", &given), ("without DOIs", &without)] {
        eprintln!(
            "{name}: matched {}, correct {}, precision {:.4}, recall {:.4}",
            a.matched,
            a.correct,
            a.precision(),
            a.recall()
        );
        assert!(a.precision() >= 0.98, "{name}: precision {}", a.precision());
        assert!(a.recall() >= 0.90, "{name}: recall {}", a.recall());
    }
    // With half of the catalog gone, rows whose record is missing must stay unmatched.
    let half: Vec<String> = catalog
        .iter()
        .filter(|l| {
            let record: Value = serde_json::from_str(l).unwrap();
            record["sha"]
                .as_str()
                .unwrap()
                .starts_with(['0', '1', '2', '3', '4', '5', '6', '7'])
        })
        .cloned()
        .collect();
    let half = sample_accuracy(dir.path(), "half", &grobid, &half, false);
    eprintln!(
        "half catalog: matched {}, correct {}, precision {:.4}",
        half.matched,
        half.correct,
        half.precision()
    );
    assert!(half.precision() >= 0.98, "precision {}", half.precision());
}
