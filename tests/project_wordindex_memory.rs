//! `project locust` and `project jdbm` keep their crawl graph, pages and words on disk and
//! sort in external runs: a tiny memory budget, which makes every sort spill and every
//! key cache overflow to the scratch database, writes the same files byte for byte as
//! the default budget. The crawl is generated: two crawls of a few hundred interlinked
//! pages on two sites, with redirects, duplicate bodies, links to pages never fetched,
//! a robots.txt, plain-text documents and a group of pages that only link each other.

mod common;
mod summary_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::sediment;
use summary_support::{Response, write_warc};

/// A small deterministic generator (the tests must not depend on a random seed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn page_url(i: u64) -> String {
    if i % 4 == 3 {
        format!("https://b.example:8443/doc/{i}")
    } else {
        format!("http://a.example/page/{i}.html")
    }
}

const PAGES: u64 = 360;

fn body(rng: &mut Lcg, i: u64, version: u64) -> Vec<u8> {
    // Bodies repeat for some pages (same MD5: clones in locust's urlword.origin).
    let key = if i % 17 == 5 { 5 } else { i };
    let mut words = Vec::new();
    for _ in 0..40 {
        words.push(format!("w{}", rng.next(4000)));
    }
    let mut links = String::new();
    for _ in 0..rng.next(7) {
        let target = rng.next(PAGES + 40);
        let href = if target >= PAGES {
            format!("http://a.example/missing/{target}")
        } else {
            page_url(target)
        };
        links.push_str(&format!("<a href=\"{href}\">link {target}</a>\n"));
    }
    if i.is_multiple_of(29) {
        links.push_str("<a href=\"http://a.example/private/secret\">secret</a>\n");
    }
    let text = if key == 5 {
        "the same page everywhere".to_string()
    } else {
        words.join(" ")
    };
    format!(
        "<html lang=en><head><title>Page {key} v{version}</title>\
         <meta name=keywords content=\"lake, sediment {key}\"></head>\
         <body><h1>Heading {key}</h1><p>{text}</p>\n{links}</body></html>"
    )
    .into_bytes()
}

/// Two crawls; returns the directory holding their WARCs.
fn make_crawl(dir: &Path) -> PathBuf {
    let warcs = dir.join("warcs");
    std::fs::create_dir_all(&warcs).unwrap();
    let mut rng = Lcg(42);
    let urls: Vec<String> = (0..PAGES).map(page_url).collect();
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    let mut first = Vec::new();
    first.push(Response {
        url: "http://a.example/robots.txt",
        date: "2024-01-01T00:00:00Z",
        status: 200,
        headers: vec![("Content-Type", "text/plain")],
        body: b"User-agent: *\nDisallow: /private/\n".to_vec(),
    });
    for i in 0..PAGES {
        bodies.push(body(&mut rng, i, 1));
    }
    for i in 0..PAGES {
        let date = if i % 2 == 0 {
            "2024-01-01T10:00:00Z"
        } else {
            "2024-01-01T11:00:00Z"
        };
        let mut response = Response::html(&urls[i as usize], date, bodies[i as usize].clone());
        if i % 23 == 7 {
            response.status = 301;
            response.headers = vec![("Location", "/page/8.html")];
            response.body = Vec::new();
        } else if i % 31 == 11 {
            response.headers = vec![("Content-Type", "text/plain; charset=utf-8")];
            response.body = b"plain words in a plain text file, lake sediment".to_vec();
        } else if i % 37 == 13 {
            response.status = 404;
        }
        first.push(response);
    }
    // Pages that link only each other: no other page links to them, so they are found
    // by the further crawls that start from pages the seeds do not reach.
    let island: Vec<String> = (0..4)
        .map(|k| format!("http://island.example/{k}"))
        .collect();
    let island_bodies: Vec<Vec<u8>> = (0..4)
        .map(|k| {
            format!(
                "<html><body>island {k} <a href=\"{}\">next</a></body></html>",
                island[(k + 1) % 4]
            )
            .into_bytes()
        })
        .collect();
    write_warc(&warcs.join("crawl1.warc"), &first);
    let mut second = Vec::new();
    for (k, url) in island.iter().enumerate() {
        second.push(Response::html(
            url,
            "2024-02-01T09:00:00Z",
            island_bodies[k].clone(),
        ));
    }
    let later: Vec<Vec<u8>> = (0..PAGES / 3).map(|i| body(&mut rng, i * 3, 2)).collect();
    for (n, i) in (0..PAGES).step_by(3).enumerate() {
        second.push(Response::html(
            &urls[i as usize],
            "2024-02-01T10:00:00Z",
            later[n].clone(),
        ));
    }
    write_warc(&warcs.join("crawl2.warc"), &second);
    warcs
}

/// Runs a projection with `--json`; returns the files it wrote and its counts.
fn project(
    store: &Path,
    kind: &str,
    out: &Path,
    warcs: &Path,
    extra: &[&str],
) -> (BTreeMap<String, Vec<u8>>, serde_json::Value) {
    let out_arg = out.display().to_string();
    let warc_arg = warcs.display().to_string();
    let mut args = vec![
        "project",
        kind,
        "-o",
        &out_arg,
        "--warc-dir",
        &warc_arg,
        "--json",
    ];
    args.extend_from_slice(extra);
    let run = sediment(store, &args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("report");
    let files = std::fs::read_dir(out)
        .expect("output directory")
        .map(|e| {
            let path = e.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("read"))
        })
        .collect();
    (files, report["counts"].clone())
}

#[test]
fn a_tiny_memory_budget_gives_the_same_word_index_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let warcs = make_crawl(tmp.path());
    let store = tmp.path().join("store");
    let w1 = warcs.join("crawl1.warc").display().to_string();
    let w2 = warcs.join("crawl2.warc").display().to_string();
    common::ok(&store, &["import-warc", &w1, &w2]);
    let tiny = ["--memory-mb", "1", "--sort-run-bytes", "512"];
    for kind in ["locust", "jdbm"] {
        let (default, default_counts) = project(&store, kind, &tmp.path().join(kind), &warcs, &[]);
        let (small, mut small_counts) = project(
            &store,
            kind,
            &tmp.path().join(format!("{kind}-tiny")),
            &warcs,
            &tiny,
        );
        // The default budget holds this crawl in memory; the tiny one spills every sort.
        assert!(
            default_counts.get("sort_runs_spilled").is_none(),
            "{default_counts}"
        );
        let spilled = small_counts["sort_runs_spilled"].as_u64().unwrap_or(0);
        assert!(spilled > 100, "{kind}: {small_counts}");
        small_counts
            .as_object_mut()
            .unwrap()
            .remove("sort_runs_spilled");
        assert_eq!(default_counts, small_counts, "{kind}");
        assert!(
            default_counts["documents"].as_u64().unwrap() > 300,
            "{default_counts}"
        );
        assert_eq!(
            default.keys().collect::<Vec<_>>(),
            small.keys().collect::<Vec<_>>(),
            "{kind}: no scratch file is left behind"
        );
        for (name, bytes) in &default {
            assert!(bytes == &small[name], "{kind}: {name} differs");
        }
        match kind {
            "locust" => {
                let data = String::from_utf8_lossy(&default["data-00001.sql"]).into_owned();
                // The island was crawled, a clone was recognized and robots.txt was read.
                assert!(data.contains("'http://island.example/3'"));
                assert!(data.contains("INSERT INTO robots"), "robots rows");
                assert!(data.contains("'/private/'"));
            }
            _ => {
                let urls = String::from_utf8_lossy(&default["URLtoPageID.tsv"]).into_owned();
                assert!(urls.contains("http://island.example/0\t"));
                assert!(urls.contains("http://a.example/missing/"));
                assert!(!default["WordIDtoPageID.tsv"].is_empty());
            }
        }
    }
}
