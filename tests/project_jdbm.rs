//! `sediment project jdbm` and `sediment lookup-jdbm` on the fixture crawls: the maps agree
//! in both directions, the forward and inverted indexes are transposes, and the link maps
//! are the crawl's links as warcio and Python's HTML parser see them
//! (scripts/wordindex_reference.py).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{fixture, ok, sediment};
use serde_json::Value;

const MAPS: [&str; 9] = [
    "PageIDtoURL",
    "URLtoPageID",
    "PageIDtoTime",
    "WordIDtoWord",
    "WordtoWordID",
    "ParenttoChild",
    "ChildtoParent",
    "PageIDtoWordID",
    "WordIDtoPageID",
];

fn crawls() -> Vec<PathBuf> {
    vec![
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]
}

fn project(tmp: &Path) -> (PathBuf, PathBuf) {
    let store = tmp.join("store");
    let mut args = vec!["import-warc".to_string()];
    args.extend(crawls().iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&store, &args);
    let out = tmp.join("jdbm");
    let out_arg = out.display().to_string();
    let warc_dir = fixture("crawl").display().to_string();
    ok(
        &store,
        &["project", "jdbm", "-o", &out_arg, "--warc-dir", &warc_dir],
    );
    (store, out)
}

/// A map file as (key, value) lines, checked to be sorted by key bytes without repeats.
fn read_map(dir: &Path, name: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join(format!("{name}.tsv"))).expect("map file");
    let entries: Vec<(String, String)> = text
        .lines()
        .map(|l| {
            let (k, v) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("{name}: no tab in {l:?}"));
            assert!(!v.contains('\t'), "{name}: {l:?}");
            (k.to_string(), v.to_string())
        })
        .collect();
    for pair in entries.windows(2) {
        assert!(
            pair[0].0.as_bytes() < pair[1].0.as_bytes(),
            "{name}: keys out of order or repeated: {:?} {:?}",
            pair[0].0,
            pair[1].0
        );
    }
    entries
}

fn ids(value: &str) -> Vec<u32> {
    assert!(value.ends_with(';'), "{value:?}");
    value
        .trim_end_matches(';')
        .split(';')
        .map(|id| {
            id.parse()
                .unwrap_or_else(|_| panic!("bad id list {value:?}"))
        })
        .collect()
}

fn postings(value: &str) -> Vec<(u32, u32)> {
    assert!(value.ends_with(';'), "{value:?}");
    value
        .trim_end_matches(';')
        .split(';')
        .map(|e| {
            let (a, b) = e
                .split_once(' ')
                .unwrap_or_else(|| panic!("bad posting {value:?}"));
            (a.parse().expect("id"), b.parse().expect("freq"))
        })
        .collect()
}

/// Checks that `forward` (key → id list) and `backward` are transposes of each other,
/// each list ascending.
fn assert_transposes(
    forward: &[(String, Vec<(u32, u32)>)],
    backward: &[(String, Vec<(u32, u32)>)],
) {
    let mut edges: BTreeSet<(u32, u32, u32)> = BTreeSet::new();
    for (key, list) in forward {
        assert!(list.windows(2).all(|w| w[0].0 < w[1].0), "{key}: {list:?}");
        for &(other, n) in list {
            edges.insert((key.parse().expect("key"), other, n));
        }
    }
    let mut back: BTreeSet<(u32, u32, u32)> = BTreeSet::new();
    for (key, list) in backward {
        assert!(list.windows(2).all(|w| w[0].0 < w[1].0), "{key}: {list:?}");
        for &(other, n) in list {
            back.insert((other, key.parse().expect("key"), n));
        }
    }
    assert_eq!(edges, back);
}

/// warcio's reading of the crawls; `None` after `common::skip` without python3/warcio.
#[track_caller]
fn reference() -> Option<BTreeMap<String, Value>> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/wordindex_reference.py"
    );
    let mut args = vec![std::path::PathBuf::from(script)];
    args.extend(crawls());
    let out = common::python_output(&["warcio"], args)?;
    Some(serde_json::from_slice(&out).expect("JSON"))
}

#[test]
fn jdbm_maps_agree_and_match_the_crawl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_store, dir) = project(tmp.path());
    for name in MAPS {
        assert!(
            dir.join(format!("{name}.tsv")).is_file(),
            "{name}.tsv missing"
        );
    }

    // Pages: ids 0..n, and the two directions are inverse.
    let page_url = read_map(&dir, "PageIDtoURL");
    let url_page = read_map(&dir, "URLtoPageID");
    let by_id: BTreeMap<u32, String> = page_url
        .iter()
        .map(|(k, v)| (k.parse().expect("page id"), v.clone()))
        .collect();
    assert_eq!(
        by_id.keys().copied().collect::<Vec<_>>(),
        (0..by_id.len() as u32).collect::<Vec<_>>()
    );
    let inverse: BTreeMap<u32, String> = url_page
        .iter()
        .map(|(url, id)| (id.parse().expect("page id"), url.clone()))
        .collect();
    assert_eq!(by_id, inverse);
    assert_eq!(url_page.len(), page_url.len());
    let id_of = |url: &str| -> u32 {
        url_page
            .iter()
            .find(|(u, _)| u == url)
            .unwrap_or_else(|| panic!("no page for {url}"))
            .1
            .parse()
            .expect("id")
    };

    // Words: ids 0..m, inverse maps, lower case, diacritics kept.
    let word_of = read_map(&dir, "WordIDtoWord");
    let word_ids = read_map(&dir, "WordtoWordID");
    let words: BTreeMap<u32, String> = word_of
        .iter()
        .map(|(k, v)| (k.parse().expect("word id"), v.clone()))
        .collect();
    assert_eq!(
        words.keys().copied().collect::<Vec<_>>(),
        (0..words.len() as u32).collect::<Vec<_>>()
    );
    let inverse: BTreeMap<u32, String> = word_ids
        .iter()
        .map(|(w, id)| (id.parse().expect("word id"), w.clone()))
        .collect();
    assert_eq!(words, inverse);
    assert!(words.values().any(|w| w == "großer"));
    assert!(words.values().all(|w| *w == w.to_lowercase()));

    // Links: ParenttoChild and ChildtoParent are transposes.
    let with_one = |entries: Vec<(String, String)>| -> Vec<(String, Vec<(u32, u32)>)> {
        entries
            .into_iter()
            .map(|(k, v)| (k, ids(&v).into_iter().map(|i| (i, 1)).collect()))
            .collect()
    };
    let children = with_one(read_map(&dir, "ParenttoChild"));
    let parents = with_one(read_map(&dir, "ChildtoParent"));
    assert_transposes(&children, &parents);

    // Forward and inverted indexes are transposes, frequencies included.
    let forward: Vec<(String, Vec<(u32, u32)>)> = read_map(&dir, "PageIDtoWordID")
        .into_iter()
        .map(|(k, v)| (k, postings(&v)))
        .collect();
    let inverted: Vec<(String, Vec<(u32, u32)>)> = read_map(&dir, "WordIDtoPageID")
        .into_iter()
        .map(|(k, v)| (k, postings(&v)))
        .collect();
    assert_transposes(&forward, &inverted);
    assert_eq!(inverted.len(), words.len(), "every word is on some page");
    // Word ids count in order of first occurrence over the pages.
    let mut first_page: Vec<(u32, u32)> = inverted
        .iter()
        .map(|(w, list)| (w.parse().expect("id"), list[0].0))
        .collect();
    first_page.sort();
    assert!(first_page.windows(2).all(|w| w[0].1 <= w[1].1));

    // Times: Java Date.toString() in UTC; Last-Modified when the server sent one, the
    // epoch for pages never fetched.
    let times: BTreeMap<u32, String> = read_map(&dir, "PageIDtoTime")
        .into_iter()
        .map(|(k, v)| (k.parse().expect("id"), v))
        .collect();
    assert_eq!(times.len(), by_id.len());
    for time in times.values() {
        chrono::NaiveDateTime::parse_from_str(time, "%a %b %d %H:%M:%S UTC %Y")
            .unwrap_or_else(|e| panic!("{time:?}: {e}"));
    }

    let Some(reference) = reference() else {
        return;
    };
    let child_map: BTreeMap<u32, BTreeSet<u32>> = children
        .iter()
        .map(|(k, list)| (k.parse().expect("id"), list.iter().map(|c| c.0).collect()))
        .collect();
    for (id, url) in &by_id {
        match reference.get(url) {
            None => {
                assert_eq!(
                    times[id], "Thu Jan 01 00:00:00 UTC 1970",
                    "{url} was never fetched"
                );
                assert!(!child_map.contains_key(id), "{url} was never fetched");
            }
            Some(entry) => {
                if let Some(lm) = entry["last_modified"].as_str() {
                    let t = chrono::DateTime::parse_from_rfc2822(lm).expect("Last-Modified");
                    assert_eq!(
                        times[id],
                        t.with_timezone(&chrono::Utc)
                            .format("%a %b %d %H:%M:%S UTC %Y")
                            .to_string(),
                        "{url}"
                    );
                }
                // The crawl's links: HTML links and the redirect target.
                let mut want: BTreeSet<u32> = entry["links"]
                    .as_array()
                    .expect("links")
                    .iter()
                    .map(|l| id_of(l.as_str().expect("link")))
                    .collect();
                if let Some(location) = entry.get("location").and_then(Value::as_str) {
                    want.insert(id_of(location));
                }
                let got = child_map.get(id).cloned().unwrap_or_default();
                assert_eq!(got, want, "children of {url}");
            }
        }
    }
    // Every captured page has a page id, and pages that are not captured are link targets.
    for url in reference.keys() {
        id_of(url);
    }
    let linked: BTreeSet<u32> = child_map.values().flatten().copied().collect();
    for (id, url) in &by_id {
        assert!(reference.contains_key(url) || linked.contains(id), "{url}");
    }
}

#[test]
fn lookup_reads_the_word_maps_and_prints_urls_with_frequencies() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (store, dir) = project(tmp.path());
    let dir_arg = dir.display().to_string();

    // Expected from the maps themselves.
    let word_ids: BTreeMap<String, String> = read_map(&dir, "WordtoWordID").into_iter().collect();
    let inverted: BTreeMap<String, String> = read_map(&dir, "WordIDtoPageID").into_iter().collect();
    let urls: BTreeMap<String, String> = read_map(&dir, "PageIDtoURL").into_iter().collect();
    for word in ["sediment", "führte", "lakeshore", "2004"] {
        let list = postings(&inverted[&word_ids[word]]);
        let mut want: Vec<(String, u32, u32)> = list
            .iter()
            .map(|&(page, freq)| (urls[&page.to_string()].clone(), freq, page))
            .collect();
        want.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        let want: String = want.iter().map(|(u, f, _)| format!("{u}\t{f}\n")).collect();
        // Case and accents are folded as the index folds them.
        let typed = word.to_uppercase();
        let out = ok(&store, &["lookup-jdbm", &dir_arg, &typed]);
        assert_eq!(out, want, "{word}");
    }

    // Only the word maps, the inverted map and the page URLs are read.
    let only = tmp.path().join("only");
    std::fs::create_dir(&only).expect("mkdir");
    for name in ["WordtoWordID", "WordIDtoPageID", "PageIDtoURL"] {
        std::fs::copy(
            dir.join(format!("{name}.tsv")),
            only.join(format!("{name}.tsv")),
        )
        .expect("copy");
    }
    let only_arg = only.display().to_string();
    let out = ok(&store, &["lookup-jdbm", &only_arg, "Führte"]);
    assert_eq!(out, "http://127.0.0.1:47213/legacy/windows-1252.html\t1\n");

    // A word no page has: nothing printed, exit status 1; two words: a usage error.
    let run = sediment(&store, &["lookup-jdbm", &dir_arg, "xylophone"]);
    assert_eq!((run.status, run.stdout.as_str()), (1, ""));
    let run = sediment(&store, &["lookup-jdbm", &dir_arg, "two words"]);
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("not one word"), "{}", run.stderr);
}
