//! The standing attack on `sediment serve` (issue 33), on 127.0.0.1 only, each attack
//! bounded in connections and in seconds: searches whose cost grows with the square of a
//! repeated word, slow headers from hundreds of connections, SIGTERM under load, and
//! requests that used to get 500s, empty 400s or huge answers.

mod common;
mod serve_support;
mod summary_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::sediment;
use serve_support::*;
use summary_support::{crawl, import_and_summarize};

struct Site {
    _dir: tempfile::TempDir,
    store: PathBuf,
    db: PathBuf,
}

/// The fixture crawls in a store, and their summary database.
fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    Site {
        _dir: dir,
        store,
        db,
    }
}

fn serve(site: &Site, extra: &[&str]) -> Server {
    let mut args = vec!["--summary-db", site.db.to_str().unwrap()];
    args.extend_from_slice(extra);
    Server::start(&site.store, &args)
}

/// A query whose cost grew with the square of its length: one word, many times. On the
/// fixture crawls' summary, 400 copies of `the` took 0.8 s before repeats counted once,
/// and the 3,500 that fit in a request about a minute.
const REPEATS: usize = 3500;

fn repeated(word: &str, times: usize) -> String {
    format!("/search?q={}", enc(&format!("{word} ").repeat(times)))
}

/// Status, Retry-After and time taken of a GET, or `None` when no answer came in time.
fn timed_get(url: &str, within: Duration) -> Option<(u16, Option<String>, Duration)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(within))
        .build()
        .into();
    let started = Instant::now();
    let mut response = agent.get(url).call().ok()?;
    let _ = response.body_mut().read_to_vec();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Some((response.status().as_u16(), retry, started.elapsed()))
}

/// CPU time the process has used (user and system), in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Asserts the server stops using CPU: at most a tenth of a core over a second and a half.
fn assert_cpu_released(server: &Server, what: &str) {
    let pid = server.pid();
    // Let a query that was cut finish its interruption.
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_millis(1500));
    let used = cpu_ticks(pid) - before;
    assert!(
        used <= 15,
        "{what}: the server kept using CPU ({used} ticks in 1.5 s) after answering"
    );
}

/// A request written by hand; the whole answer (status line, headers, body).
fn raw_request(port: u16, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn a_repeated_word_is_searched_once_and_the_cpu_is_released() {
    let site = site();
    let server = serve(&site, &["--request-timeout", "2"]);
    for times in [40, REPEATS] {
        let path = repeated("the", times);
        let (status, _, took) = timed_get(&server.url(&path), Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{times} copies of `the`: no answer in 10 s"));
        assert!(
            status == 200 || status == 503,
            "{times} copies of `the`: {status}"
        );
        assert!(
            took < Duration::from_secs(3),
            "{times} copies of `the` took {took:?}, past the 2 s request timeout"
        );
        assert_cpu_released(&server, &format!("{times} copies of `the`"));
    }
    // The same word once finds the same pages as forty times.
    let once = server.get("/search?q=the&limit=100").json();
    let forty = server.get(&format!("{}&limit=100", repeated("the", 40)));
    assert_eq!(forty.status, 200, "{}", forty.text());
    assert_eq!(once["results"], forty.json()["results"]);
}

#[test]
fn health_and_cdx_answer_during_expensive_searches() {
    let site = site();
    let server = serve(&site, &["--request-timeout", "3", "--max-searches", "1"]);
    let searches: Vec<_> = (0..4)
        .map(|_| {
            let url = server.url(&repeated("the", REPEATS));
            std::thread::spawn(move || timed_get(&url, Duration::from_secs(10)))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        for path in ["/health", "/cdx?url=127.0.0.1:47213/about.html"] {
            let answer = timed_get(&server.url(path), Duration::from_secs(1));
            assert!(
                matches!(answer, Some((200, _, _))),
                "{path} during searches: {answer:?}"
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for search in searches {
        match search.join().unwrap() {
            Some((200, _, took)) => assert!(took < Duration::from_secs(4), "{took:?}"),
            Some((503, retry, _)) => assert_eq!(retry.as_deref(), Some("1"), "Retry-After"),
            other => panic!("a search under load: {other:?}"),
        }
    }
    assert_cpu_released(&server, "four searches at once");
}

#[test]
fn slow_headers_on_300_connections_do_not_keep_health_checks_out() {
    let site = site();
    let server = serve(&site, &[]);
    let port = server.port;
    let stop = Arc::new(AtomicBool::new(false));
    let attack = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let open = || {
                let stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
                stream.set_nonblocking(true).ok()?;
                Some(stream)
            };
            let request = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
            let mut connections: Vec<(Option<TcpStream>, usize)> =
                (0..300).map(|_| (open(), 0)).collect();
            let mut reopened = 0;
            // One byte a second on each, reopening the ones the server closed.
            while !stop.load(Ordering::Relaxed) {
                for (stream, sent) in &mut connections {
                    let byte = request.get(*sent).copied().unwrap_or(b'a');
                    let alive = stream.as_mut().is_some_and(|s| s.write(&[byte]).is_ok());
                    if alive {
                        *sent += 1;
                    } else {
                        *stream = open();
                        *sent = 0;
                        reopened += 1;
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            reopened
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let mut checks = 0;
    while started.elapsed() < Duration::from_secs(5) {
        let answer = timed_get(&server.url("/health"), Duration::from_secs(1));
        assert!(
            matches!(answer, Some((200, _, _))),
            "/health under 300 slow connections: {answer:?} after {:?}",
            started.elapsed()
        );
        checks += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, Ordering::Relaxed);
    let reopened = attack.join().unwrap();
    assert!(checks >= 10);
    eprintln!("{checks} health checks answered; the attacker reopened {reopened} connections");
}

#[test]
fn sigterm_stops_the_server_within_two_seconds_while_searches_run() {
    let site = site();
    let mut server = serve(&site, &[]);
    let searches: Vec<_> = (0..2)
        .map(|_| {
            let url = server.url(&repeated("the", REPEATS));
            std::thread::spawn(move || timed_get(&url, Duration::from_secs(30)))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(server.stop(), 0);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "SIGTERM took {took:?}");
    for search in searches {
        let _ = search.join();
    }
}

#[test]
fn client_errors_are_400s_that_say_what_is_wrong() {
    let site = site();
    let server = serve(&site, &["--max-limit", "1000", "--max-window", "100"]);
    let negated: Vec<String> = (0..500).map(|i| format!("-w{i}")).collect();
    let fields = "url,".repeat(3000);
    let cases: Vec<(String, u16, &str)> = vec![
        (
            format!("/search?q={}", enc("web\0archive")),
            400,
            "control character",
        ),
        (
            format!("/search?q={}", enc(&negated.join(" "))),
            400,
            "at most 32",
        ),
        (
            format!("/search?q={}&format=html", enc("web\0archive")),
            400,
            "control character",
        ),
        (
            format!("/cdx?url=127.0.0.1:47213/*&fl={fields}"),
            400,
            "more than once",
        ),
        (
            "/cdx?url=127.0.0.1:47213/*&fl=size".into(),
            400,
            "no known field",
        ),
        (
            "/cdx?url=127.0.0.1:47213/*&limit=-2000000000".into(),
            400,
            "at least -100",
        ),
        ("/search?q=lake&limit=-5".into(), 400, "between 1 and"),
        ("/search?q=lake&offset=10001".into(), 400, "offset must be"),
        ("/search?q=lake+year:99".into(), 400, "four digits"),
        ("/captures?url=".into(), 400, "url is required"),
    ];
    for (path, status, says) in &cases {
        let reply = server.get(path);
        let shown = &path[..path.len().min(80)];
        assert_eq!(reply.status, *status, "{shown}: {}", reply.text());
        assert!(reply.text().contains(says), "{shown}: {}", reply.text());
        assert!(!reply.text().contains("above"), "{shown}: {}", reply.text());
    }
    let port = server.port;
    let two_hosts = raw_request(
        port,
        b"GET /health HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n",
    );
    assert!(two_hosts.starts_with("HTTP/1.1 400"), "{two_hosts}");
    assert!(two_hosts.contains("Host headers"), "{two_hosts}");
    let options = raw_request(
        port,
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        options.starts_with("HTTP/1.1 204") || options.starts_with("HTTP/1.1 200"),
        "{options}"
    );
    assert!(
        options.to_ascii_lowercase().contains("allow: get"),
        "{options}"
    );
    for target in [&b"/search?q=caf\xc3\xa9"[..], b"/\xff\xfe"] {
        let mut request = b"GET ".to_vec();
        request.extend_from_slice(target);
        request.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let answer = raw_request(port, &request);
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(
            answer.contains("percent-encoded"),
            "a message body: {answer}"
        );
    }
    // The same on a kept-alive connection's later request: the answers before it are
    // whole, then a 400 that says what is wrong (hyper alone would send an empty one).
    let kept_alive = raw_request(
        port,
        b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n\
          GET /cdx?url=\xff HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    assert_eq!(
        kept_alive.matches("HTTP/1.1 200").count(),
        2,
        "{kept_alive}"
    );
    let refused = &kept_alive[kept_alive.find("HTTP/1.1 400").expect(&kept_alive)..];
    assert!(refused.contains("byte 0xFF"), "a message body: {refused}");
    assert_eq!(server.get("/health").status, 200);

    // The command line: usage errors (exit 2), never SQLite's words.
    let db = site.db.to_str().unwrap();
    for (query, says) in [
        ("web\u{1}archive".to_string(), "control character"),
        (negated.join(" "), "at most 32"),
    ] {
        let run = sediment(&site.store, &["search", "--db", db, "--", &query]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
        assert!(!run.stderr.to_lowercase().contains("sql"), "{}", run.stderr);
    }
}

#[test]
fn hostile_titles_urls_types_and_queries_are_escaped_on_every_page() {
    use summary_support::{Response, write_warc};
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("hostile.warc");
    let url = "http://evil.example/<script>alert(1)</script>?q=\"'><img src=x onerror=alert(2)>";
    let body = "<html><head><title><script>alert(3)</script> x\"'><img src=y onerror=alert(4)></title>\
                </head><body><h1>hostileword</h1><p>hostileword &lt;script&gt;alert(5)&lt;/script&gt;</p>\
                </body></html>";
    write_warc(
        &warc,
        &[Response {
            url,
            date: "2022-03-04T05:06:07Z",
            status: 200,
            headers: vec![(
                "Content-Type",
                "text/html; charset=utf-8; x=\"<script>alert(6)</script>\"",
            )],
            body: body.into(),
        }],
    );
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    import_and_summarize(&store, &db, &[&warc]);
    let server = Server::start(
        &store,
        &[
            "--summary-db",
            db.to_str().unwrap(),
            "--replay-url",
            "http://replay.example/c/{timestamp}/{url}",
        ],
    );
    let json = server.get("/search?q=hostileword&format=json").json();
    assert_eq!(json["total"], 1, "{json}");
    let stored_url = json["results"][0]["url"].as_str().unwrap().to_string();
    let pages = [
        "/".to_string(),
        "/search?q=hostileword&format=html".to_string(),
        format!(
            "/search?q={}&format=html",
            enc("hostileword <script>alert(7)</script> \"'><img src=z>")
        ),
        format!("/search?q={}&format=html", enc("<script>alert(8)</script>")),
        format!("/captures?url={}", enc(&stored_url)),
        format!("/captures?url={}", enc(url)),
        format!("/captures?url={}", enc("<script>alert(9)</script>")),
    ];
    for page in &pages {
        let reply = server.get(page);
        let html = reply.text();
        assert!(
            reply.content_type.starts_with("text/html"),
            "{page}: {html}"
        );
        for needle in ["<script", "<img", "onerror=alert(2)>", "'><"] {
            assert!(!html.contains(needle), "{page} shows {needle}: {html}");
        }
    }
    let results = server.get("/search?q=hostileword&format=html").text();
    assert!(results.contains("&lt;script&gt;alert(3)"), "{results}");
    assert!(results.contains("class=\"replay\""), "{results}");
}
