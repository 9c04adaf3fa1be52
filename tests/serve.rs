//! `sediment serve` over the fixture crawls, with a real HTTP client on 127.0.0.1: the CDX
//! API against `sediment cdx`, rows, payloads against `sediment cat`, bad requests, and
//! shutdown.

mod common;
mod serve_support;
mod summary_support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{ok, sediment};
use serve_support::*;

const CRAWLS: [&str; 3] = ["crawl1.warc.gz", "crawl2.warc.gz", "crawl1-plain.warc"];

struct Fixture {
    _dir: tempfile::TempDir,
    store: PathBuf,
    warcs: Vec<PathBuf>,
}

fn imported() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let warcs = copy_crawls(dir.path(), &CRAWLS);
    let store = dir.path().join("store");
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(|w| w.to_str().unwrap()));
    ok(&store, &args);
    Fixture {
        _dir: dir,
        store,
        warcs,
    }
}

/// Lines of `sediment cdx` over the WARCs, without the header and without the lines of
/// metadata records (which index files but are no captures: wget's MANIFEST.txt).
fn cdx_lines_of_captures(fixture: &Fixture) -> BTreeSet<String> {
    let mut args = vec!["cdx"];
    args.extend(fixture.warcs.iter().map(|w| w.to_str().unwrap()));
    ok(&fixture.store, &args)
        .lines()
        .filter(|l| !l.starts_with(" CDX") && !l.contains("/MANIFEST.txt "))
        .map(str::to_string)
        .collect()
}

#[test]
fn cdx_lines_equal_sediment_cdx() {
    let fixture = imported();
    let expected = cdx_lines_of_captures(&fixture);
    let server = Server::start(&fixture.store, &[]);
    let mut served: BTreeSet<String> = BTreeSet::new();
    for query in [
        format!("url={}&matchType=host", enc(SITE)),
        "url=*.gnu.org".to_string(),
    ] {
        let reply = server.get(&format!("/cdx?{query}"));
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert!(reply.content_type.starts_with("text/plain"));
        served.extend(reply.lines());
    }
    assert_eq!(served.len(), 175 + 6, "every capture of the three crawls");
    assert_eq!(served, expected, "plain lines equal `sediment cdx` lines");

    // CDXJ equals `sediment cdx --cdxj` for the same captures.
    let mut args = vec!["cdx", "--cdxj"];
    args.extend(fixture.warcs.iter().map(|w| w.to_str().unwrap()));
    let cdxj: BTreeSet<String> = ok(&fixture.store, &args)
        .lines()
        .filter(|l| l.starts_with("1,0,0,127:47213)/about.html "))
        .map(str::to_string)
        .collect();
    let reply = server.get(&format!("/cdx?url={SITE}/about.html&output=cdxj"));
    assert_eq!(reply.lines().into_iter().collect::<BTreeSet<_>>(), cdxj);
    assert_eq!(cdxj.len(), 6);
}

#[test]
fn query_options_over_http() {
    let fixture = imported();
    let server = Server::start(&fixture.store, &[]);
    let about = format!("{SITE}/about.html");
    // json: an array of arrays, the first naming the fields
    let reply = server.get(&format!(
        "/cdx?url={}&output=json&fl=timestamp,statuscode,filename&limit=2",
        enc(&about)
    ));
    let rows = reply.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(
        rows[0],
        serde_json::json!(["timestamp", "statuscode", "filename"])
    );
    assert_eq!(rows.len(), 3);
    // negative limit: the last N, still in time order
    let last = server.get(&format!("/cdx?url={}&limit=-2&fl=timestamp", enc(&about)));
    let all = server.get(&format!("/cdx?url={}&fl=timestamp", enc(&about)));
    assert_eq!(last.lines(), all.lines()[all.lines().len() - 2..].to_vec());
    // reverse
    let reverse = server.get(&format!(
        "/cdx?url={}&sort=reverse&fl=timestamp",
        enc(&about)
    ));
    let mut forward = all.lines();
    forward.reverse();
    assert_eq!(reverse.lines(), forward);
    // closest: the nearest first
    let closest = server.get(&format!(
        "/cdx?url={}&closest={}&limit=1&fl=timestamp",
        enc(&about),
        all.lines()[3]
    ));
    assert_eq!(closest.lines(), vec![all.lines()[3].clone()]);
    // filter and collapse
    let not_ok = server.get(&format!("/cdx?url={SITE}/*&filter=!status:200&fl=status"));
    assert!(!not_ok.lines().is_empty());
    assert!(not_ok.lines().iter().all(|s| s != "200"));
    let per_url = server.get(&format!("/cdx?url={SITE}/*&collapse=urlkey&fl=urlkey"));
    let urls: BTreeSet<String> = per_url.lines().into_iter().collect();
    assert_eq!(urls.len(), per_url.lines().len(), "one line per URL");
    assert_eq!(urls.len(), 38, "the distinct URLs of both crawls");
    // paging
    let pages = server.get(&format!("/cdx?url={SITE}/*&showNumPages=true&pageSize=50"));
    assert_eq!(pages.text().trim(), "4", "175 captures in pages of 50");
    let mut paged = Vec::new();
    for page in 0..4 {
        paged.extend(
            server
                .get(&format!("/cdx?url={SITE}/*&page={page}&pageSize=50"))
                .lines(),
        );
    }
    assert_eq!(paged, server.get(&format!("/cdx?url={SITE}/*")).lines());
    // from/to over partial timestamps
    let first = &all.lines()[0];
    let day = &first[..8];
    let within = server.get(&format!(
        "/cdx?url={}&from={day}&to={day}&fl=timestamp",
        enc(&about)
    ));
    assert_eq!(within.lines(), all.lines());
    let before = server.get(&format!("/cdx?url={}&to=2000&fl=timestamp", enc(&about)));
    assert!(before.lines().is_empty());
}

#[test]
fn rows_payloads_and_captures() {
    let fixture = imported();
    let key = "3NNDQEXSDE4ATWJQ3EF6OYMCV6BKVENS"; // the v1 home page
    let pdf = "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A"; // papers/sediment-overview.pdf
    let chunked = "A63YJA3FMV7EFQOGP3BNG6QD53KEGO6U"; // news.html, stored chunk-encoded
    // `cat` and `get` first: the reference output, read by the CLI.
    let cat = |k: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sediment"))
            .arg("--store")
            .arg(&fixture.store)
            .args(["cat", k])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let expected: Vec<(&str, Vec<u8>)> = [key, pdf, chunked].iter().map(|k| (*k, cat(k))).collect();
    let row = ok(&fixture.store, &["export"])
        .lines()
        .find(|l| l.contains(key))
        .unwrap()
        .to_string();
    let server = Server::start(&fixture.store, &[]);
    for (k, bytes) in &expected {
        let reply = server.get(&format!("/payload/{k}"));
        assert_eq!(reply.status, 200);
        assert_eq!(&reply.body, bytes, "/payload/{k} equals sediment cat");
    }
    let reply = server.get(&format!("/payload/{pdf}"));
    assert_eq!(
        reply.content_type, "application/pdf",
        "Content-Type from file:mime"
    );
    let reply = server.get(&format!("/sha1/{key}"));
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.text(),
        format!("{row}\n"),
        "the row as export writes it"
    );
    // every spelling of the key
    let hex = reply.json()["sha1hex"].as_str().unwrap().to_string();
    assert_eq!(server.get(&format!("/sha1/{hex}")).text(), reply.text());
    assert_eq!(
        server.get(&format!("/sha1/sha1:{key}")).text(),
        reply.text()
    );
    // captures of the digest: both crawl1 copies
    let captures = server.get(&format!("/captures/{key}"));
    assert_eq!(captures.lines().len(), 2);
    let cdx = server.get(&format!("/captures/{key}?output=cdx"));
    assert!(cdx.lines().iter().all(|l| l.contains(key)));
    // absent keys are 404
    let absent = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for path in ["sha1", "payload", "captures"] {
        assert_eq!(
            server.get(&format!("/{path}/{absent}")).status,
            404,
            "{path}"
        );
    }
    let health = server.get("/health").json();
    assert_eq!(health["status"], "ok");
    let stats = server.get("/stats").json();
    assert!(stats["requests"].as_u64().unwrap() >= 10);
    assert!(
        server.log_shows("\"GET /stats HTTP/1.1\" 200"),
        "access log lines"
    );
}

/// A request written by hand on a raw socket (for requests a client library refuses to
/// send); returns the status line, or "" when the server closed without an answer.
fn raw_request(port: u16, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

#[test]
fn bad_requests_get_clean_answers_and_the_server_stays_up() {
    let fixture = imported();
    let mut server = Server::start(
        &fixture.store,
        &[
            "--header-timeout",
            "1",
            "--max-limit",
            "1000",
            "--max-window",
            "100",
        ],
    );
    let cases: &[(&str, u16, &str)] = &[
        ("/cdx", 400, "url"),
        ("/cdx?url=", 400, "url"),
        (
            "/cdx?url=example.com&matchType=everything",
            400,
            "matchType",
        ),
        ("/cdx?url=example.com&limit=100000000", 400, "maximum"),
        ("/cdx?url=example.com&limit=lots", 400, "limit"),
        ("/cdx?url=example.com&limit=-500", 400, "memory"),
        ("/cdx?url=example.com&from=last-year", 400, "timestamp"),
        ("/cdx?url=example.com&filter=size:1", 400, "field"),
        ("/cdx?url=example.com&filter=url:(", 400, "regex"),
        ("/cdx?url=example.com&output=xml", 400, "output"),
        ("/cdx?url=example.com&sort=nearest", 400, "sort"),
        ("/cdx?url=example.com&closest=yesterday", 400, "timestamp"),
        ("/cdx?url=example.com/*&matchType=exact", 400, "wildcard"),
        ("/sha1/NOTAKEY", 400, "base32"),
        ("/sha1/%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400, "key"),
        ("/payload/..%2F..%2Fetc%2Fpasswd", 400, "key"),
        ("/payload/ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ1", 400, "base32"),
        ("/captures/12345", 400, "key"),
        ("/../../etc/passwd", 404, "endpoint"),
        ("/warcs/crawl1.warc.gz", 404, "endpoint"),
        ("/search?q=x", 404, "summary"),
    ];
    for (path, status, says) in cases {
        let reply = server.get(path);
        assert_eq!(reply.status, *status, "{path}: {}", reply.text());
        assert!(
            reply.text().contains(says),
            "{path}: the message says what is wrong: {}",
            reply.text()
        );
    }
    // Raw requests a client library would not send.
    let port = server.port;
    let traversal = raw_request(
        port,
        b"GET /payload/../../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(traversal.contains(" 40"), "{traversal}");
    let huge_header = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(64 << 10)
    );
    let answer = raw_request(port, huge_header.as_bytes());
    assert!(
        answer.contains(" 431") || answer.is_empty(),
        "oversized headers: {answer}"
    );
    let huge_line = format!(
        "GET /cdx?url={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(64 << 10)
    );
    let answer = raw_request(port, huge_line.as_bytes());
    assert!(
        answer.contains(" 4") || answer.is_empty(),
        "oversized request line: {answer}"
    );
    let garbage = raw_request(port, b"\x16\x03\x01 not http at all\r\n\r\n");
    assert!(garbage.contains(" 400") || garbage.is_empty(), "{garbage}");
    // A slow client that never finishes its headers is dropped after --header-timeout.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = slow.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "the slow client is cut off: {answer}"
    );
    // Still up and answering.
    assert!(server.is_running());
    assert_eq!(server.get("/health").status, 200);
    assert_eq!(server.stop(), 0, "SIGTERM stops it cleanly");
    assert!(server.log_shows("stopped after"));
}

#[test]
fn a_full_server_closes_an_idle_connection_for_a_new_one_and_sigint_stops_it() {
    let fixture = imported();
    let mut server = Server::start(
        &fixture.store,
        &["--max-connections", "1", "--header-timeout", "60"],
    );
    let port = server.port;
    // The one connection allowed, held open by a client that has not finished its request.
    let mut first = TcpStream::connect(("127.0.0.1", port)).unwrap();
    first
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // A client with a whole request gets the slot at once; the idle one is closed for it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let answer = raw_request(
            port,
            b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let _ = tx.send(answer);
    });
    let second = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(second.contains(" 200"), "{second}");
    first
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = first.write_all(b"Connection: close\r\n\r\n");
    let mut answer = Vec::new();
    let _ = first.read_to_end(&mut answer);
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));

    assert_eq!(server.stop_with("-INT"), 0, "SIGINT stops it cleanly");
    assert!(server.log_shows("stopped after"));
}

/// Flips one byte inside the payload of the record `sediment cdx` places at `offset`
/// in an uncompressed WARC.
fn damage_payload(warc: &Path, offset: u64, length: u64) {
    let mut bytes = std::fs::read(warc).unwrap();
    let record = &mut bytes[offset as usize..(offset + length) as usize];
    let body_at = record
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w == b"\r\n\r\n")
        .nth(1)
        .map(|(i, _)| i + 4)
        .expect("HTTP header end");
    record[body_at + 10] ^= 0x20;
    std::fs::write(warc, bytes).unwrap();
}

#[test]
fn a_payload_that_does_not_match_its_key_is_a_502_and_a_logged_problem() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = copy_crawls(dir.path(), &["crawl1-plain.warc"]);
    let store = dir.path().join("store");
    ok(&store, &["import-warc", warcs[0].to_str().unwrap()]);
    let key = "HBGFKT2VNNX7UVMCFXRATVJVQOGKL7P4"; // about.html
    let line = ok(
        &store,
        &[
            "captures", "--digest", key, "--output", "cdx", "--limit", "1",
        ],
    );
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (length, offset): (u64, u64) = (fields[8].parse().unwrap(), fields[9].parse().unwrap());
    damage_payload(&warcs[0], offset, length);
    // `cat` refuses it too: the reference behaviour.
    assert_ne!(sediment(&store, &["cat", key]).status, 0);
    let server = Server::start(&store, &[]);
    let reply = server.get(&format!("/payload/{key}"));
    assert_eq!(reply.status, 502, "{}", reply.text());
    assert!(reply.text().contains("SHA-1"), "{}", reply.text());
    assert!(server.log_shows("problem:"), "logged: {}", server.log());
    assert_eq!(server.get("/stats").json()["payload_problems"], 1);
    assert_eq!(server.get("/health").status, 200);
}

#[test]
fn a_large_exact_answer_streams_and_every_capture_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let cdx = dir.path().join("big.cdx");
    let mut text = String::from(" CDX N b a m s k r M S V g\n");
    let digest = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for i in 0..3000u64 {
        let ts = format!(
            "2020{:02}{:02}{:02}{:02}00",
            1 + i / 600,
            1 + (i / 24) % 25,
            i % 24,
            i % 60
        );
        text.push_str(&format!(
            "com,example)/big {ts} http://example.com/big text/html 200 {digest} - - 100 {} big.warc.gz\n",
            i * 100
        ));
    }
    std::fs::write(&cdx, text).unwrap();
    let store = dir.path().join("store");
    ok(&store, &["backfill-cdx", cdx.to_str().unwrap()]);
    let server = Server::start(&store, &[]);
    let all = server.get("/cdx?url=example.com/big");
    assert_eq!(all.status, 200);
    assert!(
        all.body.len() > 256 << 10,
        "larger than an answer built in place"
    );
    let lines = all.lines();
    assert_eq!(lines.len(), 3000);
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "in time order");
    let last = server.get("/cdx?url=example.com/big&limit=-5");
    assert_eq!(last.lines(), lines[2995..].to_vec());
    let json = server.get("/cdx?url=example.com/big&output=json").json();
    assert_eq!(json.as_array().unwrap().len(), 3001);

    // Prefix queries with small answers that must read more captures than an answer built
    // in place may read are answered whole all the same.
    let prefix_last = server.get("/cdx?url=example.com/*&limit=-5");
    assert_eq!(prefix_last.lines(), lines[2995..].to_vec());
    let needle = server.get("/cdx?url=example.com/&matchType=prefix&filter=~offset:299900");
    assert_eq!(needle.lines(), lines[2999..].to_vec());
    let first = server.get("/cdx?url=example.com&matchType=domain&limit=100");
    assert_eq!(first.lines(), lines[..100].to_vec());
}

#[test]
fn serve_refuses_a_directory_without_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let run = sediment(dir.path(), &["serve", "--bind", "127.0.0.1:0"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("no Sediment store"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

#[test]
fn payloads_follow_a_relocated_collection() {
    let fixture = imported();
    let key = "3NNDQEXSDE4ATWJQ3EF6OYMCV6BKVENS";
    let expected = ok(&fixture.store, &["cat", key]);
    let old = fixture.warcs[0].parent().unwrap().to_path_buf();
    let new = old.with_file_name("moved-warcs");
    std::fs::rename(&old, &new).unwrap();
    ok(
        &fixture.store,
        &["relocate", old.to_str().unwrap(), new.to_str().unwrap()],
    );
    let server = Server::start(&fixture.store, &[]);
    let reply = server.get(&format!("/payload/{key}"));
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.text(), expected);
}

/// A payload larger than what is checked before sending: streamed, the last chunk held
/// until the digest matched; a damaged one ends in a failed transfer, never a complete
/// wrong file.
#[test]
fn large_payloads_stream_and_a_damaged_one_is_cut_short() {
    use summary_support::{Response, write_warc};
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("big.warc");
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let response = Response {
        url: "http://example.com/big.bin",
        date: "2021-01-01T00:00:00Z",
        status: 200,
        headers: vec![("Content-Type", "application/pdf")],
        body: body.clone(),
    };
    write_warc(&warc, &[response]);
    let store = dir.path().join("store");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    let key = ok(
        &store,
        &[
            "captures",
            "--url",
            "http://example.com/big.bin",
            "--output",
            "cdx",
        ],
    )
    .split_whitespace()
    .nth(5)
    .unwrap()
    .to_string();
    let server = Server::start(&store, &[]);
    let reply = server.get(&format!("/payload/{key}"));
    assert_eq!(reply.status, 200);
    assert!(reply.body == body, "the streamed payload is the stored one");

    // Damage a byte near the end of the body: the transfer must fail.
    let mut bytes = std::fs::read(&warc).unwrap();
    let at = bytes.len() - 4 - 1000;
    bytes[at] ^= 0xFF;
    std::fs::write(&warc, bytes).unwrap();
    let mut response = agent()
        .get(&server.url(&format!("/payload/{key}")))
        .call()
        .unwrap();
    let mut received = Vec::new();
    let read = response.body_mut().as_reader().read_to_end(&mut received);
    assert!(
        read.is_err() || received.len() < body.len(),
        "a damaged payload never arrives whole ({} bytes)",
        received.len()
    );
    assert!(server.log_shows("problem:"), "{}", server.log());
    assert_eq!(server.get("/health").status, 200);
}

/// The two fixture crawls in a store and their summary database.
fn summarized() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    summary_support::import_and_summarize(
        &store,
        &db,
        &[
            &summary_support::crawl("crawl1.warc.gz"),
            &summary_support::crawl("crawl2.warc.gz"),
        ],
    );
    (dir, store, db)
}

const REPLAY: &str = "http://replay.example:8080/my-coll/{timestamp}/{url}";

fn year(unix: i64) -> i64 {
    use chrono::Datelike;
    i64::from(chrono::DateTime::from_timestamp(unix, 0).unwrap().year())
}

fn urls(page: &serde_json::Value) -> Vec<String> {
    page["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn search_json_has_the_total_facets_pages_and_replay_links() {
    let (_dir, store, db) = summarized();
    let server = Server::start(
        &store,
        &["--summary-db", db.to_str().unwrap(), "--replay-url", REPLAY],
    );
    let all = server.get("/search?q=the&limit=100&format=json").json();
    let results = all["results"].as_array().unwrap();
    let total = all["total"].as_u64().unwrap();
    assert!(total >= 10, "{all}");
    assert_eq!(results.len() as u64, total, "every match fits on the page");
    assert_eq!(all["total_exact"], true);
    assert_eq!(all["next"], serde_json::Value::Null);

    // Facets: the one site holds every match; the types and years are those of the results.
    let facets = &all["facets"];
    assert_eq!(
        facets["site"],
        serde_json::json!([{"value": "127.0.0.1:47213", "count": total}])
    );
    let html = facets["mime"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == "text/html")
        .unwrap_or_else(|| panic!("text/html among {}", facets["mime"]));
    assert!(html["count"].as_u64().unwrap() > 0);
    let mut expected_years = std::collections::BTreeMap::<i64, u64>::new();
    for r in results {
        let (first, last) = (
            year(r["first_seen"].as_i64().unwrap()),
            year(r["last_seen"].as_i64().unwrap()),
        );
        for y in first..=last {
            *expected_years.entry(y).or_default() += 1;
        }
    }
    let years: std::collections::BTreeMap<i64, u64> = facets["year"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["value"].as_str().unwrap().parse().unwrap(),
                v["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(years, expected_years);

    // A facet value as a filter finds as many as the facet says; another year finds none.
    let (y, n) = years.iter().next().unwrap();
    let filtered = server
        .get(&format!(
            "/search?q={}&format=json",
            enc(&format!("the year:{y}"))
        ))
        .json();
    assert_eq!(filtered["total"].as_u64().unwrap(), *n);
    let site = server
        .get(&format!(
            "/search?q={}&format=json",
            enc("the site:127.0.0.1:47213")
        ))
        .json();
    assert_eq!(site["total"].as_u64().unwrap(), total);
    let none = server
        .get(&format!("/search?q={}&format=json", enc("the year:1999")))
        .json();
    assert_eq!((none["total"].as_u64(), urls(&none).len()), (Some(0), 0));

    // Pages of three, followed through `next`, are the whole list in order; `previous`
    // leads back.
    let mut paged = Vec::new();
    let mut path = Some("/search?q=the&limit=3&format=json".to_string());
    let mut pages = 0;
    while let Some(p) = path {
        let page = server.get(&p).json();
        assert_eq!(page["total"].as_u64().unwrap(), total);
        assert_eq!(page["offset"].as_u64().unwrap() as usize, paged.len());
        if pages == 1 {
            let back = server.get(page["previous"].as_str().unwrap()).json();
            assert_eq!(urls(&back), paged);
        }
        paged.extend(urls(&page));
        path = page["next"].as_str().map(str::to_string);
        pages += 1;
        assert!(pages <= 40, "paging does not end");
    }
    assert_eq!(paged, urls(&all));
    assert_eq!(pages, total.div_ceil(3));
    let beyond = server
        .get(&format!("/search?q=the&format=json&offset={}", total + 5))
        .json();
    assert_eq!(beyond["total"].as_u64().unwrap(), total);
    assert!(urls(&beyond).is_empty());
    let too_far = server.get("/search?q=the&offset=10001");
    assert_eq!(too_far.status, 400);
    assert!(
        too_far.text().contains("offset must be"),
        "{}",
        too_far.text()
    );

    // The first search started loading the doc values (it ran without them); once they
    // are loaded, the same searches give the same answers from them.
    assert!(
        server.log_shows("search doc values loaded from"),
        "{}",
        server.log()
    );
    let again = server.get("/search?q=the&limit=100&format=json").json();
    assert_eq!(again, all);
    for (query, before) in [
        (format!("the year:{y}"), &filtered),
        ("the site:127.0.0.1:47213".to_string(), &site),
    ] {
        let after = server
            .get(&format!("/search?q={}&format=json", enc(&query)))
            .json();
        assert_eq!(&after, before, "{query}");
    }

    // Each result: the replay of a capture of its URL, its captures page, its payload.
    for r in results {
        let url = r["url"].as_str().unwrap();
        let ts = r["timestamp"].as_str().unwrap();
        assert_eq!(ts.len(), 14, "{r}");
        assert_eq!(
            r["replay"].as_str().unwrap(),
            format!("http://replay.example:8080/my-coll/{ts}/{url}")
        );
        assert_eq!(
            r["captures_page"].as_str().unwrap(),
            format!("/captures?url={}", enc(url))
        );
        let captured = server.get(&format!("/cdx?url={}&fl=timestamp,digest", enc(url)));
        let key = r["payload"].as_str().unwrap();
        assert!(
            captured.lines().contains(&format!("{ts} {key}")),
            "{ts} {key} among {:?}",
            captured.lines()
        );
    }
}

#[test]
fn the_captures_page_lists_every_capture_of_a_url() {
    let fixture = imported();
    let server = Server::start(&fixture.store, &["--replay-url", REPLAY]);
    let about = format!("{SITE}/about.html");
    let expected = server
        .get(&format!(
            "/cdx?url={}&fl=timestamp,statuscode,digest",
            enc(&about)
        ))
        .lines();
    assert_eq!(expected.len(), 6);
    let page = server.get(&format!("/captures?url={}", enc(&about)));
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    let html = page.text();
    let rows: Vec<&str> = html.split("<tr class=\"capture\"").skip(1).collect();
    assert_eq!(rows.len(), expected.len(), "{html}");
    for (row, line) in rows.iter().zip(&expected) {
        let fields: Vec<&str> = line.split(' ').collect();
        let (ts, status, digest) = (fields[0], fields[1], fields[2]);
        assert!(row.contains(&format!("data-timestamp=\"{ts}\"")), "{row}");
        assert!(
            row.contains(&format!("<td class=\"status\">{status}</td>")),
            "{row}"
        );
        if digest != "-" {
            assert!(
                row.contains(&format!("href=\"/payload/{digest}\"")),
                "{row}"
            );
        }
        assert!(
            row.contains(&format!(
                "href=\"http://replay.example:8080/my-coll/{ts}/{about}\""
            )),
            "{row}"
        );
    }
    let unknown = server.get(&format!("/captures?url={}", enc("http://nowhere.example/")));
    assert_eq!(unknown.status, 404);
    assert!(unknown.text().contains("no-captures"));
    let missing = server.get("/captures");
    assert_eq!(missing.status, 400);
    assert!(missing.text().contains("url is required"));
}

#[test]
fn the_landing_page_shows_what_the_store_holds_or_how_to_summarize_it() {
    let fixture = imported();
    let server = Server::start(&fixture.store, &[]);
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    let command = format!(
        "sediment --store {} project summary -o summary.db",
        fixture.store.display()
    );
    assert!(page.text().contains(&command), "{}", page.text());
    drop(server);

    let db = fixture.store.parent().unwrap().join("summary.db");
    summary_support::summarize(&fixture.store, &db);
    let server = Server::start(&fixture.store, &["--summary-db", db.to_str().unwrap()]);
    let html = server.get("/").text();
    assert!(html.contains("<form id=\"search\""), "{html}");
    let conn = summary_support::open(&db);
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    for (id, sql) in [
        ("searchable", "SELECT count(*) FROM full_text_entity_index"),
        ("captures", "SELECT count(*) FROM crawl_summary"),
        ("urls", "SELECT count(*) FROM url"),
    ] {
        let n = count(sql);
        assert!(n > 0 && n < 1000);
        assert!(
            html.contains(&format!("<b id=\"{id}\">{n}</b>")),
            "{id} {n}: {html}"
        );
    }
    let first = count("SELECT min(time_started_unix_utc) FROM crawl_summary");
    let first = chrono::DateTime::from_timestamp(first, 0)
        .unwrap()
        .format("%Y-%m-%d %H:%M")
        .to_string();
    assert!(
        html.contains(&format!("<span id=\"first-capture\">{first}</span>")),
        "{html}"
    );
    assert!(
        html.contains("<ol id=\"largest-hosts\"><li><a href=\"/search?q=site%3A127.0.0.1&amp;format=html\">127.0.0.1</a>"),
        "{html}"
    );
}

/// Payloads have their own limit: a client that starts a large download and stops reading
/// holds one place until the request deadline at most, a second download meanwhile gets a
/// quick 503 that names the flag, and health checks and CDX queries are answered all along.
#[test]
fn payloads_have_their_own_limit_and_a_stalled_download_gives_its_place_back() {
    use std::time::Instant;
    use summary_support::{Response, write_warc};
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("big.warc");
    // Larger than the socket buffers and the stream's queue, so the reader blocks.
    let body: Vec<u8> = (0..24_000_000u32).map(|i| (i * 13 % 251) as u8).collect();
    write_warc(
        &warc,
        &[Response {
            url: "http://example.com/big.bin",
            date: "2021-01-01T00:00:00Z",
            status: 200,
            headers: vec![("Content-Type", "application/pdf")],
            body,
        }],
    );
    let store = dir.path().join("store");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    let cdx = ok(
        &store,
        &[
            "captures",
            "--url",
            "http://example.com/big.bin",
            "--output",
            "cdx",
        ],
    );
    let key = cdx.split_whitespace().nth(5).unwrap().to_string();
    let server = Server::start(&store, &["--max-payloads", "1", "--request-timeout", "6"]);

    // Start a download and read nothing but the first bytes.
    let mut stalled = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stalled,
        "GET /payload/{key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 64];
    stalled.read_exact(&mut first).unwrap();
    assert!(
        first.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&first)
    );

    let started = Instant::now();
    let second = server.get(&format!("/payload/{key}"));
    assert_eq!(second.status, 503, "{}", second.text());
    assert!(
        second.text().contains("--max-payloads"),
        "{}",
        second.text()
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.get("/health").status, 200);
    assert_eq!(
        server.get("/cdx?url=http://example.com/big.bin").status,
        200
    );
    assert_eq!(server.get("/stats").json()["payloads_running"], 1);

    // The stalled download is cut at the deadline and its place is free again.
    let mut freed = false;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(250));
        if server.get("/stats").json()["payloads_running"] == 0 {
            freed = true;
            break;
        }
    }
    assert!(
        freed,
        "the stalled download still holds its place: {}",
        server.log()
    );
    drop(stalled);
    let third = server.get(&format!("/payload/{key}"));
    assert_eq!(third.status, 200, "{}", third.text());
    assert_eq!(third.body.len(), 24_000_000);
}
