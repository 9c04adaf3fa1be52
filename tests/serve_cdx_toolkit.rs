//! Clients that page through `/cdx` must finish and see every capture once:
//! - cdx-toolkit's `cdxt iter` (which asks for page 0, 1, 2, … until a page comes back
//!   empty-bodied or 400) against `sediment serve` on the fixture crawls, with small pages,
//!   with and without `--limit`;
//! - IA's paging (`page`, `pageSize`, `showNumPages`) and resume keys (`showResumeKey`,
//!   `resumeKey`) over HTTP.
//!
//! `/captures/KEY` and `output=jsonl` name WARC files, never the server's paths.

mod common;
mod serve_support;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ok;
use serve_support::*;

const CRAWLS: [&str; 3] = ["crawl1.warc.gz", "crawl2.warc.gz", "crawl1-plain.warc"];

struct Fixture {
    dir: tempfile::TempDir,
    store: PathBuf,
}

fn imported() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let warcs = copy_crawls(dir.path(), &CRAWLS);
    let store = dir.path().join("store");
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(|w| w.to_str().unwrap()));
    ok(&store, &args);
    Fixture { dir, store }
}

/// A capture as both sides name it: time, URL, WARC file and offset.
type Key = (String, String, String, String);

/// The captures of one non-paged query, in the server's order.
fn served(server: &Server, query: &str) -> Vec<Key> {
    let reply = server.get(&format!("/cdx?{query}&output=json"));
    assert_eq!(reply.status, 200, "{}", reply.text());
    let rows = reply.json();
    let rows = rows.as_array().unwrap();
    let header: Vec<&str> = rows[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    rows[1..]
        .iter()
        .map(|row| {
            let field = |name: &str| row[at(name)].as_str().unwrap().to_string();
            (
                field("timestamp"),
                field("original"),
                field("filename"),
                field("offset"),
            )
        })
        .collect()
}

fn have_cdxt() -> bool {
    let found = Command::new("cdxt")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        common::skip(
            "cdxt (cdx-toolkit)",
            "python3 -m pip install cdx-toolkit, or scripts/setup.sh",
        );
    }
    found
}

/// Runs `cdxt --source …/cdx [EXTRA] iter --fields … --jsonl URL`; it must end within
/// two minutes (a client asking for page after page forever is the failure looked for).
fn cdxt(server: &Server, extra: &[&str], url: &str) -> Vec<Key> {
    let mut child = Command::new("cdxt")
        .env("CDXT_DEFAULT_MIN_RETRY_INTERVAL", "0")
        .args(["--source", &server.url("/cdx")])
        .args(extra)
        .args([
            "iter",
            "--fields",
            "timestamp,url,filename,offset",
            "--jsonl",
            url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cdxt");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let asked = server.log().matches("GET /cdx?").count();
            panic!("cdxt {extra:?} {url} did not finish in 2 minutes ({asked} requests)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "cdxt {extra:?} {url}: {stderr}");
    reader
        .join()
        .unwrap()
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let field = |name: &str| value[name].as_str().unwrap_or("-").to_string();
            (
                field("timestamp"),
                field("url"),
                field("filename"),
                field("offset"),
            )
        })
        .collect()
}

/// Each key with how often it occurs.
fn tally(keys: &[Key]) -> BTreeMap<&Key, usize> {
    let mut counts = BTreeMap::new();
    for key in keys {
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

#[test]
fn cdx_toolkit_iterates_every_capture_once_and_finishes() {
    if !have_cdxt() {
        return;
    }
    let fixture = imported();
    // Small pages: the fixture's captures span many of them.
    let server = Server::start(&fixture.store, &["--page-size", "7"]);
    let url = format!("{SITE}/*");
    let all = served(&server, &format!("url={}", enc(&url)));
    assert!(all.len() > 30, "{} captures", all.len());
    assert!(
        tally(&all).values().all(|&n| n == 1),
        "captures are distinct"
    );

    let iterated = cdxt(&server, &[], &url);
    assert_eq!(iterated, all, "every capture, once, in order");
    let log = server.log();
    let pages = log.matches("GET /cdx?").count();
    assert!(
        pages <= all.len().div_ceil(7) + 2,
        "{pages} requests for {} captures",
        all.len()
    );

    for limit in [1, 5, 7, 10, 23] {
        let iterated = cdxt(&server, &["--limit", &limit.to_string()], &url);
        assert_eq!(iterated, all[..limit], "--limit {limit}");
    }
    let iterated = cdxt(&server, &["--limit", "100000"], &url);
    assert_eq!(iterated, all, "a limit above the count");

    // An exact URL, and the server's default page size (one page).
    let server = Server::start(&fixture.store, &[]);
    let home = format!("{SITE}/");
    let all = served(&server, &format!("url={}", enc(&home)));
    assert!(all.len() >= 3);
    assert_eq!(cdxt(&server, &[], &home), all);
    assert_eq!(cdxt(&server, &["--limit", "2"], &home), all[..2]);
    // Nothing at all: the client finishes too.
    assert!(cdxt(&server, &[], "http://nothing.example/").is_empty());
}

#[test]
fn pages_and_resume_keys_over_http() {
    let fixture = imported();
    let server = Server::start(&fixture.store, &[]);
    let url = enc(&format!("{SITE}/*"));
    let all = served(&server, &format!("url={url}"));
    let size = 7;
    let pages = all.len().div_ceil(size);
    let count = server.get(&format!("/cdx?url={url}&showNumPages=true&pageSize={size}"));
    assert_eq!(count.text().trim(), pages.to_string());
    let mut paged = Vec::new();
    for page in 0..pages {
        paged.extend(served(
            &server,
            &format!("url={url}&page={page}&pageSize={size}"),
        ));
    }
    assert_eq!(paged, all);
    // Past the last page: IA's answer, an empty body (no JSON brackets).
    for output in ["json", "cdx"] {
        let past = server.get(&format!(
            "/cdx?url={url}&page={pages}&pageSize={size}&output={output}"
        ));
        assert_eq!((past.status, past.text()), (200, String::new()), "{output}");
    }

    // Resume keys: an answer cut by its limit ends with the key to go on from, as IA
    // writes it (after an empty line; `[], ["KEY"]` in JSON).
    for output in ["cdx", "json"] {
        let mut seen = Vec::new();
        let mut resume = String::new();
        for round in 0.. {
            assert!(round <= all.len(), "resume keys never end");
            let reply = server.get(&format!(
                "/cdx?url={url}&limit=4&showResumeKey=true&fl=timestamp,original,filename,offset&output={output}{resume}"
            ));
            assert_eq!(reply.status, 200, "{}", reply.text());
            let mut key = None;
            if output == "json" {
                let value = reply.json();
                let mut rows: Vec<serde_json::Value> =
                    value.as_array().unwrap().iter().skip(1).cloned().collect();
                if rows.len() >= 2 && rows[rows.len() - 2] == serde_json::json!([]) {
                    key = rows.pop().unwrap()[0].as_str().map(str::to_string);
                    rows.pop();
                }
                seen.extend(rows.iter().map(|r| {
                    let f = |i: usize| r[i].as_str().unwrap().to_string();
                    (f(0), f(1), f(2), f(3))
                }));
            } else {
                let text = reply.text();
                let mut lines: Vec<&str> = text.lines().collect();
                if let Some(blank) = lines.iter().position(|l| l.is_empty()) {
                    key = Some(lines[blank + 1].to_string());
                    lines.truncate(blank);
                }
                seen.extend(lines.iter().map(|l| {
                    let f: Vec<&str> = l.split(' ').collect();
                    (
                        f[0].to_string(),
                        f[1].to_string(),
                        f[2].to_string(),
                        f[3].to_string(),
                    )
                }));
            }
            match key {
                // The key as written is already encoded for a URL.
                Some(key) => resume = format!("&resumeKey={key}"),
                None => break,
            }
        }
        assert_eq!(seen, all, "{output}: every capture once");
    }
    let bad = server.get(&format!("/cdx?url={url}&resumeKey=nonsense"));
    assert_eq!(bad.status, 400, "{}", bad.text());
}

#[test]
fn http_answers_name_warc_files_not_server_paths() {
    let fixture = imported();
    let server = Server::start(&fixture.store, &[]);
    let root = fixture.dir.path().canonicalize().unwrap();
    let root = root.to_str().unwrap();
    let key = "3NNDQEXSDE4ATWJQ3EF6OYMCV6BKVENS"; // the v1 home page, in two WARCs
    // The CLI keeps the paths: a local user can open them.
    let local = ok(&fixture.store, &["captures", "--digest", key]);
    assert!(local.contains(root), "{local}");
    for path in [
        format!("/captures/{key}"),
        format!("/cdx?url={}&output=jsonl", enc(&format!("{SITE}/"))),
    ] {
        let reply = server.get(&path);
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
        let text = reply.text();
        assert!(
            !text.contains(root),
            "{path} tells the server's paths: {text}"
        );
        assert!(!text.contains("/warcs/"), "{path}: {text}");
        let lines = reply.lines();
        assert!(!lines.is_empty());
        for line in lines {
            let capture: serde_json::Value = serde_json::from_str(&line).unwrap();
            let warc = capture["warc"].as_str().unwrap();
            assert!(CRAWLS.contains(&warc), "{path}: warc {warc}");
            assert!(CRAWLS.contains(&capture["source"].as_str().unwrap()));
            if let Some(location) = capture["location"].as_str() {
                assert_eq!(location, warc, "{path}");
            }
        }
    }
}
