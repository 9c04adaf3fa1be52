//! `sediment captures` with wayback-style queries over the fixture crawls: match types,
//! wildcards, time spans, limits, output formats.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{fixture, json_lines, ok, sediment};

const SITE: &str = "http://127.0.0.1:47213";

fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(
        &store,
        &[
            "import-warc",
            fixture("crawl/crawl1.warc.gz").to_str().unwrap(),
            fixture("crawl/crawl2.warc.gz").to_str().unwrap(),
        ],
    );
    (dir, store)
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn match_types_and_wildcards() {
    let (_dir, store) = store();
    let count = |args: &[&str]| {
        let mut all = vec!["captures"];
        all.extend_from_slice(args);
        ok(&store, &all).lines().count()
    };
    let home = format!("{SITE}/");
    // / is captured once per crawl
    assert_eq!(count(&["--url", &home]), 2);
    let everything = count(&["--url", &format!("{SITE}/*")]);
    // crawl1: 58 responses; crawl2: 25 responses and 34 revisits (fixtures/crawl/README.md)
    assert_eq!(everything, 117, "every capture of the site in both crawls");
    assert_eq!(
        count(&["--url", &home, "--match", "prefix"]),
        everything,
        "--match prefix is the same as a trailing *"
    );
    assert_eq!(
        count(&["--url", &format!("{SITE}/docs/"), "--match", "host"]),
        everything
    );
    // guide 2+2, reference 1+1, manual 1+1, nonexistent 5+4, api/intro 1+1,
    // api/functions 1+1, old-notes 1+5
    assert_eq!(count(&["--url", &format!("{SITE}/docs/*")]), 27);
    assert_eq!(count(&["--url", "*.gnu.org"]), 4, "wget's resource records");
    assert_eq!(count(&["--url", "gnu.org", "--match", "domain"]), 4);
    // A trailing * never silently matches nothing.
    let run = sediment(
        &store,
        &[
            "captures",
            "--url",
            &format!("{SITE}/*"),
            "--match",
            "exact",
        ],
    );
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("wildcard"), "{}", run.stderr);
    let run = sediment(&store, &["captures", "--url", "x.org", "--match", "nearby"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("matchType"), "{}", run.stderr);
}

#[test]
fn time_spans_limits_and_outputs() {
    let (_dir, store) = store();
    let about = format!("{SITE}/about.html");
    let all = json_lines(&ok(&store, &["captures", "--url", &about]));
    assert_eq!(
        all.len(),
        4,
        "default output: one JSON object per capture, as before"
    );
    assert!(all[0]["digest"].is_string() && all[0]["source"].is_string());
    let stamps: Vec<String> = all
        .iter()
        .map(|c| c["ts"].as_str().unwrap().to_string())
        .collect();
    let last_two = json_lines(&ok(&store, &["captures", "--url", &about, "--limit", "-2"]));
    assert_eq!(last_two, all[2..].to_vec(), "negative limit: the last N");
    let first = json_lines(&ok(&store, &["captures", "--url", &about, "--limit", "1"]));
    assert_eq!(first, all[..1].to_vec());
    // --from/--to with partial timestamps, padded down and up
    let day = &stamps[0][..8];
    assert_eq!(
        json_lines(&ok(
            &store,
            &["captures", "--url", &about, "--from", day, "--to", day]
        ))
        .len(),
        4
    );
    let after_first = ok(&store, &["captures", "--url", &about, "--from", &stamps[1]]);
    assert_eq!(after_first.lines().count(), 3);
    let before = ok(&store, &["captures", "--url", &about, "--to", "2001"]);
    assert!(before.is_empty());
    let run = sediment(&store, &["captures", "--url", &about, "--from", "2021-01"]);
    assert_ne!(run.status, 0, "a malformed timestamp is refused");
    // cdx: the lines `sediment cdx` writes for the same records
    let cdx = lines(&ok(
        &store,
        &["captures", "--url", &about, "--output", "cdx"],
    ));
    let reference: BTreeSet<String> = ok(
        &store,
        &[
            "cdx",
            fixture("crawl/crawl1.warc.gz").to_str().unwrap(),
            fixture("crawl/crawl2.warc.gz").to_str().unwrap(),
        ],
    )
    .lines()
    .filter(|l| l.starts_with("1,0,0,127:47213)/about.html "))
    .map(str::to_string)
    .collect();
    assert_eq!(cdx.iter().cloned().collect::<BTreeSet<_>>(), reference);
    // cdxj and json
    let cdxj = lines(&ok(
        &store,
        &["captures", "--url", &about, "--output", "cdxj"],
    ));
    assert!(cdxj[0].starts_with(&format!(
        "1,0,0,127:47213)/about.html {} {{\"url\": ",
        stamps[0]
    )));
    let json: serde_json::Value = serde_json::from_str(&ok(
        &store,
        &["captures", "--url", &about, "--output", "json"],
    ))
    .unwrap();
    assert_eq!(json[0][1], "timestamp");
    assert_eq!(json.as_array().unwrap().len(), 5);
    // filters and the reverse order
    let not_found = ok(
        &store,
        &[
            "captures",
            "--url",
            &format!("{SITE}/*"),
            "--filter",
            "status:404",
            "--output",
            "cdx",
        ],
    );
    // missing.html 6+5, never-written 5+4, nonexistent 5+4 (revisits), old-notes 0+5
    assert_eq!(
        not_found.lines().count(),
        34,
        "404 responses and 404 revisits"
    );
    let newest = json_lines(&ok(
        &store,
        &["captures", "--url", &about, "--reverse", "--limit", "1"],
    ));
    assert_eq!(newest[0], all[3]);
}

#[test]
fn surt_prefix_and_digest_keep_working_with_the_new_options() {
    let (_dir, store) = store();
    let by_prefix = ok(
        &store,
        &["captures", "--surt-prefix", "1,0,0,127:47213)/docs/"],
    );
    assert_eq!(by_prefix.lines().count(), 27);
    let everything = ok(&store, &["captures"]);
    assert_eq!(
        everything.lines().count(),
        117 + 4,
        "with wget's resource records"
    );
    let digest = "HBGFKT2VNNX7UVMCFXRATVJVQOGKL7P4"; // about.html v1, captured twice
    let of_digest = ok(&store, &["captures", "--digest", digest, "--output", "cdx"]);
    assert_eq!(of_digest.lines().count(), 2);
    let limited = ok(&store, &["captures", "--digest", digest, "--limit", "-1"]);
    assert_eq!(limited.lines().count(), 1);
}
