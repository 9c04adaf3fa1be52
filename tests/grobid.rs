//! The GROBID stage (issue 7): the client against a fake GROBID server on 127.0.0.1
//! (real TEI replies, 503 then success, 500 with a message, a reply past the timeout,
//! a non-TEI body, a PDF above the size limit), skipping finished rows, --force,
//! --limit, an interrupted run, and `import-tei` on the real TEI files.
//!
//! No GROBID server can be installed here; the fake one answers like GROBID's REST API
//! (`GET /api/isalive`, `POST /api/processFulltextDocument` with a multipart `input`).
//! The PDFs are the three of the fixture crawl `fixtures/crawl/crawl1.warc.gz`.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{corpus, fixture, json_lines, ok, sediment};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

/// The PDFs of crawl1.warc.gz, in row-key order, with their sizes.
const REPORT_2021: &str = "G7ZJQB5QZECDT7S5KINMIAZ3VS4Z23VK"; // 1029 bytes
const OVERVIEW: &str = "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A"; // 1712 bytes
const LAYERS: &str = "ZU7MYY6R5K3HR4GC6TVCZKK5RDXZQVWO"; // 1189 bytes
const PDFS: [&str; 3] = [REPORT_2021, OVERVIEW, LAYERS];

fn hex_of(base32: &str) -> String {
    let raw = data_encoding::BASE32_NOPAD
        .decode(base32.as_bytes())
        .unwrap();
    hex::encode(raw)
}

/// The real GROBID outputs (0.5.1, 0.5.5, 0.8.0) with their citation counts.
fn real_teis() -> Option<Vec<(PathBuf, usize)>> {
    Some(vec![
        (
            corpus("grobid/23b29ea36382680716be08fc71aa81bd226e8a85.xml")?,
            100,
        ),
        (corpus("grobid/example.tei.xml")?, 15),
        (
            corpus("grobid/062RoisinAronAmericanNaturalist03.grobid.tei.xml")?,
            47,
        ),
    ])
}

/// A store holding the fixture crawl (its PDFs have rows with file:mime and file:size).
fn crawl_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let warc = fixture("crawl/crawl1.warc.gz");
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    store
}

// ---------------------------------------------------------------------------------------
// The fake GROBID server.

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    /// Multipart form fields other than the file.
    fields: Vec<(String, String)>,
    /// The `filename` of the `input` part.
    file_name: Option<String>,
    pdf: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The row key (hex) the client named the file by.
    fn sha1hex(&self) -> String {
        self.file_name
            .as_deref()
            .unwrap_or("")
            .trim_end_matches(".pdf")
            .to_string()
    }
}

/// What the server answers.
struct Answer {
    status: u16,
    body: Vec<u8>,
    delay: Duration,
}

impl Answer {
    fn new(status: u16, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status,
            body: body.into(),
            delay: Duration::ZERO,
        }
    }
}

/// Decides the answer from the request and how many times this file was sent before.
type Handler = dyn Fn(&Received, usize) -> Answer + Send + Sync;

struct FakeGrobid {
    url: String,
    log: Arc<Mutex<Vec<Received>>>,
}

impl FakeGrobid {
    fn start(handler: impl Fn(&Received, usize) -> Answer + Send + Sync + 'static) -> FakeGrobid {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let log: Arc<Mutex<Vec<Received>>> = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let server_log = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = Arc::clone(&server_log);
                let handler = Arc::clone(&handler);
                std::thread::spawn(move || serve(stream, &log, &*handler));
            }
        });
        FakeGrobid { url, log }
    }

    /// The processFulltextDocument requests so far.
    fn documents(&self) -> Vec<Received> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path == "/api/processFulltextDocument")
            .cloned()
            .collect()
    }

    fn sent_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.documents().iter().map(Received::sha1hex).collect();
        keys.sort();
        keys
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

/// Serves one connection (one request; the answer closes it).
fn serve(stream: TcpStream, log: &Mutex<Vec<Received>>, handler: &Handler) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut received = Received {
        method,
        path,
        headers,
        fields: Vec::new(),
        file_name: None,
        pdf: Vec::new(),
    };
    let answer = if received.path == "/api/isalive" {
        Answer::new(200, "true")
    } else {
        parse_multipart(&mut received, &body);
        let before = log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.file_name.is_some() && r.file_name == received.file_name)
            .count();
        log.lock().unwrap().push(received.clone());
        handler(&received, before)
    };
    if received.path == "/api/isalive" {
        log.lock().unwrap().push(received);
    }
    std::thread::sleep(answer.delay);
    let mut stream = reader.into_inner();
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        answer.status,
        reason(answer.status),
        answer.body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&answer.body);
}

/// Reads the form of a multipart/form-data body into the request.
fn parse_multipart(received: &mut Received, body: &[u8]) {
    let content_type = received.header("content-type").unwrap_or("").to_string();
    let Some(boundary) = content_type.split("boundary=").nth(1) else {
        return;
    };
    let delimiter = format!("--{boundary}");
    let text_positions: Vec<usize> = body
        .windows(delimiter.len())
        .enumerate()
        .filter(|(_, w)| *w == delimiter.as_bytes())
        .map(|(i, _)| i)
        .collect();
    for pair in text_positions.windows(2) {
        let part = &body[pair[0] + delimiter.len() + 2..pair[1] - 2];
        let split = part.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&part[..split]).to_string();
        let data = &part[split + 4..];
        let name = head
            .split("name=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("")
            .to_string();
        let file_name = head
            .split("filename=\"")
            .nth(1)
            .and_then(|s| s.split('"').next());
        match file_name {
            Some(f) if name == "input" => {
                received.file_name = Some(f.to_string());
                received.pdf = data.to_vec();
            }
            _ => received
                .fields
                .push((name, String::from_utf8_lossy(data).to_string())),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Helpers.

fn row(store: &Path, key: &str) -> Value {
    serde_json::from_str(&ok(store, &["get", key])).unwrap()
}

fn grobid(store: &Path, server: &FakeGrobid, extra: &[&str]) -> common::Run {
    let mut args = vec!["grobid", "--url", server.url.as_str()];
    args.extend(extra);
    let run = sediment(store, &args);
    assert_eq!(
        run.status, 0,
        "sediment grobid failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run
}

/// A server replaying a real TEI file per PDF (in row-key order).
fn replaying_server(teis: &[(PathBuf, usize)]) -> FakeGrobid {
    let by_key: HashMap<String, Vec<u8>> = PDFS
        .iter()
        .zip(teis)
        .map(|(key, (path, _))| (hex_of(key), std::fs::read(path).unwrap()))
        .collect();
    FakeGrobid::start(move |request, _| match by_key.get(&request.sha1hex()) {
        Some(tei) => Answer::new(200, tei.clone()),
        None => Answer::new(500, "unknown document"),
    })
}

fn grobid0_cells(row: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = row
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("grobid0:"))
        .map(String::as_str)
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------
// Tests.

#[test]
fn real_tei_replies_become_grobid0_cells_and_finished_rows_are_skipped() {
    let Some(teis) = real_teis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let server = replaying_server(&teis);
    let first = grobid(
        &store,
        &server,
        &[
            "--consolidate-header",
            "1",
            "--include-raw-citations",
            "--workers",
            "2",
        ],
    );
    assert!(first.stderr.contains("rows_written 3"), "{}", first.stderr);
    assert!(first.stderr.contains("success 3"), "{}", first.stderr);

    // What was sent: each PDF once, as the `input` part, with the options.
    let documents = server.documents();
    assert_eq!(documents.len(), 3);
    for request in &documents {
        assert_eq!(request.method, "POST");
        assert_eq!(request.header("accept"), Some("application/xml"));
        assert_eq!(
            hex::encode(Sha1::digest(&request.pdf)),
            request.sha1hex(),
            "the uploaded bytes are the file of the row"
        );
        assert!(request.pdf.starts_with(b"%PDF"));
        assert!(
            request
                .fields
                .contains(&("consolidateHeader".into(), "1".into()))
        );
        assert!(
            request
                .fields
                .contains(&("includeRawCitations".into(), "1".into()))
        );
    }

    for (key, (tei_path, citations)) in PDFS.iter().zip(&teis) {
        let row = row(&store, key);
        assert_eq!(row["grobid0:status_code"], 200);
        assert_eq!(
            row["grobid0:status"],
            serde_json::json!({"status": "success"})
        );
        assert_eq!(
            row["grobid0:tei_xml"].as_str().unwrap().as_bytes(),
            std::fs::read(tei_path).unwrap(),
            "the TEI is kept as GROBID sent it"
        );
        let json = &row["grobid0:tei_json"];
        assert_eq!(json["citations"].as_array().unwrap().len(), *citations);
        assert!(json["title"].as_str().unwrap().len() > 10);
        assert!(json["body"].as_str().unwrap().len() > 2000);
        let metadata = &row["grobid0:metadata"];
        assert!(metadata.get("body").is_none() && metadata.get("annex").is_none());
        assert_eq!(metadata["title"], json["title"]);
        assert_eq!(row["grobid0:quality"], "good");
    }
    let first_titles: Vec<String> = PDFS
        .iter()
        .map(|k| {
            row(&store, k)["grobid0:tei_json"]["title"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(first_titles[0], "DYNAMICS OF RAILWAY FREIGHT VEHICLES");

    // A second run finds nothing to do and sends nothing.
    let second = grobid(&store, &server, &[]);
    assert_eq!(server.documents().len(), 3);
    assert!(
        second.stderr.contains("skipped_done 3"),
        "{}",
        second.stderr
    );

    // --force processes every row again.
    grobid(&store, &server, &["--force"]);
    assert_eq!(server.documents().len(), 6);
}

#[test]
fn limit_processes_part_of_the_rows_and_the_next_run_the_rest() {
    let Some(teis) = real_teis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let server = replaying_server(&teis);
    grobid(&store, &server, &["--limit", "1"]);
    assert_eq!(server.sent_keys(), [hex_of(REPORT_2021)]);
    assert_eq!(row(&store, OVERVIEW).get("grobid0:status_code"), None);
    grobid(&store, &server, &[]);
    let mut expected: Vec<String> = PDFS.iter().map(|k| hex_of(k)).collect();
    expected.sort();
    assert_eq!(server.sent_keys(), expected, "each PDF sent exactly once");
}

#[test]
fn busy_server_is_retried_with_backoff() {
    let Some(small) = corpus("sandcrawler/small.xml") else {
        return;
    };
    let tei = std::fs::read(small).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let server = FakeGrobid::start(move |_, before| {
        if before < 2 {
            Answer::new(503, "busy")
        } else {
            Answer::new(200, tei.clone())
        }
    });
    grobid(&store, &server, &["--backoff-ms", "20"]);
    assert_eq!(
        server.documents().len(),
        9,
        "two 503s and a success per PDF"
    );
    for key in PDFS {
        let row = row(&store, key);
        assert_eq!(row["grobid0:status_code"], 200);
        assert_eq!(row["grobid0:tei_json"]["title"], "Dummy Example File");
        assert_eq!(row["grobid0:quality"], "marginal");
    }

    // Busy through every retry: nothing written, the row stays pending.
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let always_busy = FakeGrobid::start(|_, _| Answer::new(503, "busy"));
    let run = grobid(
        &store,
        &always_busy,
        &["--retries", "1", "--backoff-ms", "10", "--limit", "1"],
    );
    assert_eq!(always_busy.documents().len(), 2);
    assert!(run.stderr.contains("grobid_busy"), "{}", run.stderr);
    assert_eq!(row(&store, REPORT_2021).get("grobid0:status_code"), None);
}

#[test]
fn server_error_keeps_grobids_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let message = "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1";
    let server = FakeGrobid::start(move |_, _| Answer::new(500, message));
    let run = grobid(&store, &server, &[]);
    assert!(run.stderr.contains("error 3"), "{}", run.stderr);
    for key in PDFS {
        let row = row(&store, key);
        assert_eq!(row["grobid0:status_code"], 500);
        assert_eq!(
            row["grobid0:status"],
            serde_json::json!({"status": "error", "description": message})
        );
        assert_eq!(
            grobid0_cells(&row),
            ["grobid0:status", "grobid0:status_code"]
        );
    }
}

#[test]
fn slow_reply_is_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let server = FakeGrobid::start(|_, _| Answer {
        status: 200,
        body: b"<TEI/>".to_vec(),
        delay: Duration::from_secs(4),
    });
    let started = Instant::now();
    grobid(&store, &server, &["--timeout", "1", "--workers", "3"]);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the client did not wait"
    );
    for key in PDFS {
        let row = row(&store, key);
        assert_eq!(row["grobid0:status_code"], -4);
        assert_eq!(row["grobid0:status"]["status"], "error-timeout");
        assert_eq!(
            grobid0_cells(&row),
            ["grobid0:status", "grobid0:status_code"]
        );
    }
}

#[test]
fn a_reply_that_is_not_tei_fails() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let server = FakeGrobid::start(|request, _| {
        if request.sha1hex() == hex_of(LAYERS) {
            Answer::new(200, "<html><body>proxy login</body></html>")
        } else {
            Answer::new(200, "")
        }
    });
    grobid(&store, &server, &[]);
    for key in PDFS {
        let row = row(&store, key);
        assert_eq!(row["grobid0:status_code"], 200);
        assert_eq!(row["grobid0:status"]["status"], "fail");
        assert!(
            row["grobid0:status"]["reason"]
                .as_str()
                .unwrap()
                .starts_with("the reply is not TEI"),
            "{row}"
        );
        assert_eq!(
            grobid0_cells(&row),
            ["grobid0:status", "grobid0:status_code"]
        );
    }
    let html = row(&store, LAYERS);
    assert!(
        html["grobid0:status"]["reason"]
            .as_str()
            .unwrap()
            .contains("not TEI")
    );
}

#[test]
fn files_above_the_size_limit_are_not_sent() {
    let Some(small) = corpus("sandcrawler/small.xml") else {
        return;
    };
    let tei = std::fs::read(small).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let server = FakeGrobid::start(move |_, _| Answer::new(200, tei.clone()));
    grobid(&store, &server, &["--max-size", "1500"]);
    let mut expected = vec![hex_of(REPORT_2021), hex_of(LAYERS)];
    expected.sort();
    assert_eq!(
        server.sent_keys(),
        expected,
        "the 1712-byte PDF was not sent"
    );
    let big = row(&store, OVERVIEW);
    assert_eq!(big["grobid0:status_code"], 413);
    assert_eq!(
        big["grobid0:status"],
        serde_json::json!({"status": "oversize", "size": 1712, "limit": 1500})
    );
    assert_eq!(
        grobid0_cells(&big),
        ["grobid0:status", "grobid0:status_code"]
    );

    // A row from a CDX has no file:size: the size is found while reading the payload.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("cdx-store");
    ok(
        &store,
        &[
            "backfill-cdx",
            fixture("crawl/crawl1.cdx").to_str().unwrap(),
        ],
    );
    assert_eq!(row(&store, OVERVIEW).get("file:size"), None);
    let crawl_dir = fixture("crawl");
    grobid(
        &store,
        &server,
        &[
            "--max-size",
            "1500",
            "--warc-dir",
            crawl_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(
        row(&store, OVERVIEW)["grobid0:status"]["status"],
        "oversize"
    );
    assert_eq!(row(&store, LAYERS)["grobid0:status"]["status"], "success");
}

#[test]
fn force_replaces_every_old_cell() {
    let Some(small) = corpus("sandcrawler/small.xml") else {
        return;
    };
    let tei = std::fs::read(small).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let good = FakeGrobid::start(move |_, _| Answer::new(200, tei.clone()));
    grobid(&store, &good, &[]);
    assert_eq!(grobid0_cells(&row(&store, LAYERS)).len(), 6);
    let failing = FakeGrobid::start(|_, _| Answer::new(500, "gone wrong"));
    grobid(&store, &failing, &["--force"]);
    let row = row(&store, LAYERS);
    assert_eq!(row["grobid0:status_code"], 500);
    assert_eq!(
        grobid0_cells(&row),
        ["grobid0:status", "grobid0:status_code"],
        "no TEI, JSON or quality of the old run is left"
    );
}

#[test]
fn unreachable_server_stops_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    // A port that was free a moment ago: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let run = sediment(&store, &["grobid", "--url", &url]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("not reachable"), "{}", run.stderr);
    assert_eq!(row(&store, LAYERS).get("grobid0:status_code"), None);
}

#[test]
fn an_interrupted_run_keeps_finished_rows_and_the_next_run_does_the_rest() {
    let Some(small) = corpus("sandcrawler/small.xml") else {
        return;
    };
    let tei = std::fs::read(small).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    // The first PDF is answered at once, the second never in time: the run is killed
    // while it waits.
    let tei_first = tei.clone();
    let server = FakeGrobid::start(move |_, _| Answer::new(200, tei_first.clone()));
    let stalling = FakeGrobid::start({
        let tei = tei.clone();
        move |request, _| {
            if request.sha1hex() == hex_of(REPORT_2021) {
                Answer::new(200, tei.clone())
            } else {
                Answer {
                    status: 200,
                    body: tei.clone(),
                    delay: Duration::from_secs(60),
                }
            }
        }
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(["grobid", "--url", &stalling.url, "--workers", "1"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while stalling.documents().len() < 2 {
        assert!(Instant::now() < deadline, "the second PDF was never sent");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(row(&store, REPORT_2021)["grobid0:status_code"], 200);
    assert_eq!(row(&store, OVERVIEW).get("grobid0:status_code"), None);
    grobid(&store, &server, &[]);
    let mut rest = vec![hex_of(OVERVIEW), hex_of(LAYERS)];
    rest.sort();
    assert_eq!(
        server.sent_keys(),
        rest,
        "the finished row is not sent again"
    );
}

// ---------------------------------------------------------------------------------------
// import-tei

/// Copies the real TEI files under the names of the crawl's PDFs: flat
/// (`<sha1hex>.tei.xml`) or in the blob layout (`xx/yy/<sha1hex>.tei.xml`).
fn tei_dir(root: &Path, teis: &[(PathBuf, usize)], blob: bool) -> PathBuf {
    for (key, (path, _)) in PDFS.iter().zip(teis) {
        let hex = hex_of(key);
        let dir = if blob {
            root.join(&hex[..2]).join(&hex[2..4])
        } else {
            root.to_path_buf()
        };
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(path, dir.join(format!("{hex}.tei.xml"))).unwrap();
    }
    root.to_path_buf()
}

fn grobid0_export(store: &Path) -> Vec<Value> {
    json_lines(&ok(store, &["export", "--families", "grobid0"]))
}

#[test]
fn import_tei_writes_what_the_client_writes() {
    let Some(teis) = real_teis() else { return };
    let dir = tempfile::tempdir().unwrap();

    // The client, replaying the files.
    let fetched = crawl_store(&dir.path().join("a"));
    let server = replaying_server(&teis);
    grobid(&fetched, &server, &[]);
    let mut expected = grobid0_export(&fetched);
    assert_eq!(expected.len(), 3);
    // The same cells, but no status code: no GROBID call was made for an imported file
    // (issue 14, item 8); grobid0:status still marks the row processed.
    for row in &mut expected {
        let row = row.as_object_mut().unwrap();
        assert_eq!(row.remove("grobid0:status_code"), Some(json!(200)));
        assert_eq!(row["grobid0:status"], json!({"status": "success"}));
    }

    for blob in [false, true] {
        let store = crawl_store(&dir.path().join(format!("b{blob}")));
        let files = tei_dir(&dir.path().join(format!("tei{blob}")), &teis, blob);
        let run = sediment(&store, &["import-tei", files.to_str().unwrap()]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert!(run.stderr.contains("rows_written 3"), "{}", run.stderr);
        assert_eq!(grobid0_export(&store), expected, "blob layout: {blob}");

        // Processed rows are skipped, --force replaces them.
        let run = sediment(&store, &["import-tei", files.to_str().unwrap()]);
        assert!(run.stderr.contains("skipped_done 3"), "{}", run.stderr);
        let run = sediment(&store, &["import-tei", "--force", files.to_str().unwrap()]);
        assert!(run.stderr.contains("rows_written 3"), "{}", run.stderr);
    }
    // And a row the client later finds processed is not sent.
    let store = crawl_store(&dir.path().join("c"));
    let files = tei_dir(&dir.path().join("teic"), &teis, false);
    ok(&store, &["import-tei", files.to_str().unwrap()]);
    let fresh = replaying_server(&teis);
    grobid(&store, &fresh, &[]);
    assert!(fresh.documents().is_empty());
}

#[test]
fn malformed_tei_files_are_reported_and_the_rest_imported() {
    let Some(teis) = real_teis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let files = dir.path().join("tei");
    std::fs::create_dir_all(&files).unwrap();
    let good_hex = "23b29ea36382680716be08fc71aa81bd226e8a85";
    std::fs::copy(&teis[0].0, files.join(format!("{good_hex}.tei.xml"))).unwrap();
    let full = std::fs::read(&teis[1].0).unwrap();
    let truncated_hex = "1111111111111111111111111111111111111111";
    std::fs::write(
        files.join(format!("{truncated_hex}.tei.xml")),
        &full[..full.len() / 2],
    )
    .unwrap();
    let text_hex = "2222222222222222222222222222222222222222";
    std::fs::write(
        files.join(format!("{text_hex}.tei.xml")),
        "[NO_BLOCKS] PDF parsing resulted in empty content",
    )
    .unwrap();
    // Not named by a SHA-1: ignored in a directory, reported when named.
    std::fs::copy(&teis[2].0, files.join("paper.tei.xml")).unwrap();

    let named = files.join("paper.tei.xml");
    let run = sediment(
        &store,
        &[
            "import-tei",
            files.to_str().unwrap(),
            named.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let truncated_name = files.join(format!("{truncated_hex}.tei.xml"));
    assert!(
        run.stderr.lines().any(
            |l| l.starts_with(&format!("{} at byte", truncated_name.display()))
                && l.contains("bad_tei")
                && l.contains("truncated XML")
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains(text_hex) && l.contains("not XML")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("paper.tei.xml") && l.contains("bad_name")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("rows_written 1"), "{}", run.stderr);
    let rows = grobid0_export(&store);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["sha1hex"], good_hex);
    assert_eq!(rows[0]["grobid0:quality"], "good");
}
