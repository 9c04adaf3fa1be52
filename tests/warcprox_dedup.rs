//! A crawler deduplicates against the store while it crawls (issue 38): warcprox, with
//! `--cdxserver-dedup` pointed at `sediment serve`'s `/cdx` and `--base32`, crawls the
//! fixture site (served on 127.0.0.2: warcprox will not proxy to 127.0.0.1 itself) whose
//! earlier crawl is in the store. Unchanged pages become revisit records, changed pages
//! full responses; the new WARC goes into the store and `cat` gives every revisit's
//! payload back from the earlier crawl's WARC.
//!
//! A page sent chunked (the fixture server's /news.html) is deduplicated too: warcprox
//! writes and compares the SHA-1 of the de-chunked body, the store keys the payload by
//! its stored bytes (chunk framing included), and `/cdx` answers the record's declared
//! digest, as pywb's indexer does. The revisit names the de-chunked digest, and `cat`
//! and `/payload` give the de-chunked body for it.
//!
//! warcprox pins `cryptography<46` while pywb's pyOpenSSL needs `>=46`, so it has its own
//! virtual environment (scripts/setup.sh: `${SEDIMENT_WARCPROX_VENV:-~/.cache/sediment-warcprox-venv}`).

mod common;
mod serve_support;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{KilledOnDrop, json_lines, ok};

fn warcprox() -> Option<PathBuf> {
    let venv = std::env::var_os("SEDIMENT_WARCPROX_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/sediment-warcprox-venv"))
        })?;
    let program = venv.join("bin/warcprox");
    if program.is_file() {
        Some(program)
    } else {
        common::skip(&format!("warcprox ({})", program.display()), common::SETUP);
        None
    }
}

/// The fixture site `version` on 127.0.0.2:`port`; its base URL.
fn site(version: &str, port: u16) -> (KilledOnDrop, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("python3")
        .arg(root.join("scripts/fixture_server.py"))
        .arg(root.join("fixtures/site").join(version))
        .args([
            "--host",
            "127.0.0.2",
            "--quiet",
            "--port",
            &port.to_string(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the fixture server");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (
        KilledOnDrop(child),
        line.trim().trim_end_matches('/').to_string(),
    )
}

const PAGES: &[&str] = &[
    "/",
    "/about.html",
    "/docs/guide.html",
    "/static/app.js",
    "/papers/sediment-overview.pdf",
    "/news.html",
];

/// Crawls PAGES of `base` through a warcprox writing into `warcs`, then stops it with
/// SIGINT so that it closes its WARC.
fn crawl(warcprox: &Path, base: &str, warcs: &Path, name: &str, extra: &[&str]) {
    std::fs::create_dir_all(warcs).unwrap();
    let port = common::free_port();
    let log = std::fs::File::create(warcs.with_extension("log")).unwrap();
    let mut child = Command::new(warcprox)
        .args([
            "-b",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "--base32",
            "-n",
            name,
        ])
        .arg("-d")
        .arg(warcs)
        .args(extra)
        .current_dir(warcs.parent().unwrap())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start warcprox");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "warcprox did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    for page in PAGES {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x"])
            .arg(format!("http://127.0.0.1:{port}"))
            .arg(format!("{base}{page}"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "200",
            "{page} through warcprox"
        );
    }
    // SAFETY: kill sends a signal to our own child, whose pid is valid until waited for.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "warcprox did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The page that changed between the two crawls.
fn page_url(base: &str) -> String {
    format!("{base}/about.html")
}

fn kind_of(store: &Path, url: &str, ts_after: &str) -> String {
    let captures = json_lines(&ok(store, &["captures", "--url", url]));
    let last = captures
        .iter()
        .rfind(|c| c["ts"].as_str().unwrap() > ts_after)
        .unwrap_or_else(|| panic!("no second capture of {url}: {captures:?}"));
    last["kind"].as_str().unwrap().to_string()
}

#[test]
fn warcprox_deduplicates_against_sediment_serve() {
    let Some(warcprox) = warcprox() else {
        return;
    };
    if !common::have_program("curl", common::SETUP) || !common::have_python(&[]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");

    // The earlier crawl, deduplicated against nothing, in the store.
    // Both crawls on one port: the URLs must be the same.
    let port = std::net::TcpListener::bind("127.0.0.2:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (first_site, base) = site("v1", port);
    crawl(
        &warcprox,
        &base,
        &dir.path().join("first"),
        "first",
        &["--dedup-db-file", "/dev/null"],
    );
    drop(first_site);
    ok(
        &store,
        &["import-warc", dir.path().join("first").to_str().unwrap()],
    );
    let first = json_lines(&ok(&store, &["captures", "--surt-prefix", ""]));
    assert_eq!(first.len(), PAGES.len());
    assert!(first.iter().all(|c| c["kind"] == "response"), "{first:?}");
    let first_ts = first
        .iter()
        .map(|c| c["ts"].as_str().unwrap().to_string())
        .max()
        .unwrap();

    // The changed site, crawled with warcprox asking the store through serve's /cdx,
    // while `import-warc --follow` waits for warcprox to close its WARC.
    let server = serve_support::Server::start(&store, &[]);
    let second_dir = dir.path().join("second");
    std::fs::create_dir_all(&second_dir).unwrap();
    let follower = KilledOnDrop(
        Command::new(env!("CARGO_BIN_EXE_sediment"))
            .arg("--store")
            .arg(&store)
            .args(["import-warc", "--quiet", "--settle", "1", "--follow"])
            .arg(&second_dir)
            .spawn()
            .expect("start the follower"),
    );
    let (second_site, base2) = site("v2", port);
    assert_eq!(base, base2);
    // The second crawl must be later by the second: CDX timestamps have seconds.
    std::thread::sleep(Duration::from_millis(1100));
    let cdx = format!("http://127.0.0.1:{}/cdx", server.port);
    crawl(
        &warcprox,
        &base2,
        &dir.path().join("second"),
        "second",
        &["--cdxserver-dedup", &cdx],
    );
    drop(second_site);
    assert!(
        server.log_shows("filter=%21mimetype%3Awarc%2Frevisit"),
        "{}",
        server.log()
    );
    // The follower imports the closed WARC and the running server shows it.
    let about = format!("/cdx?url={}", serve_support::enc(&page_url(&base2)));
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.get(&about).lines().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the follower's import never reached serve: {}",
            server.get(&about).text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(server);
    let mut follower = follower;
    // SAFETY: kill sends a signal to our own child, whose pid is valid until waited for.
    unsafe {
        libc::kill(follower.0.id() as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = follower.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the follower did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "the follower stops cleanly: {status}");

    let page = |base: &str, path: &str| format!("{base}{path}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/site");
    // warcprox read /news.html chunked (the fixture server sends it so) and stored the
    // chunk framing; its WARC-Payload-Digest is the de-chunked body's.
    let news = page(&base2, "/news.html");
    let news_captures = json_lines(&ok(&store, &["captures", "--url", &news]));
    let original = &news_captures[0];
    assert_ne!(
        original["dechunked"], original["digest"],
        "stored chunked: {original}"
    );
    assert_eq!(original["declared_dechunked"], true, "{original}");
    let server = serve_support::Server::start(&store, &[]);
    let cdx = server.get(&format!(
        "/cdx?url={}&fl=timestamp,digest,mimetype",
        serve_support::enc(&news)
    ));
    assert_eq!(
        cdx.lines(),
        vec![
            format!(
                "{} {} text/html",
                original["ts"].as_str().unwrap(),
                original["dechunked"].as_str().unwrap()
            ),
            format!(
                "{} {} warc/revisit",
                news_captures[1]["ts"].as_str().unwrap(),
                original["dechunked"].as_str().unwrap()
            ),
        ],
        "/cdx carries the declared digest of the original and of its revisit"
    );
    for path in [
        "/docs/guide.html",
        "/static/app.js",
        "/papers/sediment-overview.pdf",
        "/news.html",
    ] {
        let same_host = page(&base2, path);
        let kind = kind_of(&store, &same_host, &first_ts);
        assert_eq!(kind, "revisit", "{same_host}: unchanged, so a revisit");
        let capture = json_lines(&ok(&store, &["captures", "--url", &same_host]))
            .pop()
            .unwrap();
        let key = capture["digest"].as_str().unwrap();
        let cat = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .arg("--store")
            .arg(&store)
            .args(["cat", key])
            .output()
            .unwrap();
        assert!(cat.status.success());
        let served = std::fs::read(root.join("v2").join(&path[1..])).unwrap();
        assert_eq!(cat.stdout, served, "{path}");
        let payload = server.get(&format!("/payload/{key}"));
        assert_eq!(payload.status, 200, "{path}: {}", payload.text());
        assert_eq!(payload.body, served, "/payload of {path}");
    }
    drop(server);
    for path in ["/", "/about.html"] {
        assert_eq!(
            kind_of(&store, &page(&base2, path), &first_ts),
            "response",
            "{path} changed"
        );
    }
}
