//! Issue 34, item 2: a store's JSON-lines form carries everything. `export --captures`
//! writes the rows, then every capture and crawl description; `import-jsonl` (plain or
//! `--bulk`) rebuilds a store that answers every question the same way.

mod common;

use std::path::Path;

use common::{fixture, json_lines, ok, sediment};

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What a store answers, input bookkeeping aside: stats, every capture (CDXJ), the
/// captures of one payload (the by-digest order), rows, and the whole export.
fn answers(store: &Path) -> Vec<(String, String)> {
    let mut stats: serde_json::Value =
        serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
    let object = stats.as_object_mut().unwrap();
    object.remove("inputs");
    object.remove("store_bytes_on_disk");
    let all = ["captures", "--url", "127.0.0.1:47213/*", "--output", "cdxj"];
    // The 404 page of both crawls: many captures, responses and revisits.
    let digest = ["captures", "--digest", "6MMDJ6R7O7BZANGR7JVP7NDK4QT2PXIN"];
    vec![
        ("stats".into(), stats.to_string()),
        ("captures".into(), ok(store, &all)),
        ("captures --digest".into(), ok(store, &digest)),
        ("export".into(), ok(store, &["export"])),
        (
            "export --captures".into(),
            ok(store, &["export", "--captures"]),
        ),
    ]
}

fn assert_same(a: &[(String, String)], b: &[(String, String)]) {
    for ((what, x), (_, y)) in a.iter().zip(b) {
        assert!(!x.trim().is_empty(), "{what} is empty");
        assert_eq!(x, y, "{what} differs");
    }
}

#[test]
fn export_captures_then_import_jsonl_gives_an_equal_store() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original");
    let crawl = |name: &str| fixture(&format!("crawl/{name}"));
    ok(
        &original,
        &[
            "import-warc",
            path(&crawl("crawl1.warc.gz")),
            path(&crawl("crawl2.warc.gz")),
        ],
    );
    // Captures learned from CDX lines too (merged with the WARC records they index).
    ok(&original, &["backfill-cdx", path(&crawl("crawl1.cdx"))]);
    let expected = answers(&original);

    let whole = dir.path().join("whole.jsonl");
    ok(&original, &["export", "--captures", "-o", path(&whole)]);
    let text = std::fs::read_to_string(&whole).unwrap();
    let lines = json_lines(&text);
    let kind = |line: &serde_json::Value| {
        ["key", "capture", "warcinfo"]
            .into_iter()
            .find(|k| line.get(k).is_some())
            .unwrap_or_else(|| panic!("a line of unknown kind: {line}"))
    };
    let captures: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| kind(l) == "capture")
        .map(|l| &l["capture"])
        .collect();
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&original, &["stats", "--json"])).unwrap();
    assert_eq!(captures.len() as u64, stats["captures"].as_u64().unwrap());
    assert_eq!(lines.iter().filter(|l| kind(l) == "warcinfo").count(), 2);
    // Rows first, then captures in key order (URL, then time).
    let first_capture = lines.iter().position(|l| kind(l) == "capture").unwrap();
    assert!(lines[..first_capture].iter().all(|l| kind(l) == "key"));
    let order: Vec<(String, String)> = captures
        .iter()
        .map(|c| {
            (
                c["surt"].as_str().unwrap().to_string(),
                c["ts"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "key order");
    // Every field the stored capture holds is there.
    let revisit = captures
        .iter()
        .find(|c| c["kind"] == "revisit")
        .expect("crawl 2 has revisits");
    for field in [
        "digest",
        "offset",
        "c_size",
        "record_id",
        "warc",
        "location",
        "ua",
    ] {
        assert!(revisit.get(field).is_some(), "{field} in {revisit}");
    }
    // Plain `export` is unchanged: rows only.
    let rows_only = ok(&original, &["export"]);
    let rows_text: String = text
        .lines()
        .take(first_capture)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(rows_only, rows_text, "plain export writes the rows only");

    for (name, extra) in [("restored", None), ("bulk", Some("--bulk"))] {
        let copy = dir.path().join(name);
        let mut args = vec!["import-jsonl", "--json"];
        args.extend(extra);
        args.push(path(&whole));
        let report: serde_json::Value = serde_json::from_str(&ok(&copy, &args)).unwrap();
        assert_eq!(report["problems_total"], 0, "{report}");
        assert_eq!(
            report["counts"]["captures"].as_u64(),
            Some(captures.len() as u64)
        );
        assert_same(&expected, &answers(&copy));
    }

    // A stream of captures alone (no rows) derives the file rows, as an ingest does.
    let only = dir.path().join("only-captures.jsonl");
    ok(&original, &["export", "--only-captures", "-o", path(&only)]);
    let derived = dir.path().join("derived");
    ok(&derived, &["import-jsonl", path(&only)]);
    assert_eq!(ok(&derived, &["export"]), rows_only);
}

#[test]
fn bad_capture_lines_are_reported_and_cost_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let input = dir.path().join("mixed.jsonl");
    let good = r#"{"capture":{"kind":"response","origin":"cdx","passes":true,"source":"x.cdx","status":200,"surt":"org,example)/","ts":"20200101000000","url":"http://example.org/"}}"#;
    let bad_ts = good.replace("20200101000000", "2020");
    let unknown = r#"{"capture":{"surt":"a"},"extra":1}"#;
    let missing_url = r#"{"capture":{"source":"x","surt":"a","ts":"20200101000000"}}"#;
    std::fs::write(
        &input,
        format!("{good}\n{bad_ts}\n{unknown}\n{missing_url}\n"),
    )
    .unwrap();
    let run = sediment(&store, &["import-jsonl", "--json", path(&input)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["counts"]["captures"], 1, "{report}");
    assert_eq!(report["problems"]["bad_capture"], 2, "{report}");
    assert_eq!(report["problems"]["bad_json"], 1, "{report}");
    let cdxj = ok(&store, &["captures", "--url", "example.org/"]);
    assert_eq!(cdxj.lines().count(), 1, "{cdxj}");
}
