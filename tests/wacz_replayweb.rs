//! ReplayWeb.page (the npm package `replaywebpage`, its prebuilt `ui.js` and `sw.js`)
//! replays a package written by `export-wacz`: the package and the app are served from
//! 127.0.0.1 (with Range requests, which the app reads packages by), headless Chromium
//! loads a page embedding `<replay-web-page>` through chromedriver, and the archived page
//! is found rendered in the DOM (through the app's shadow roots and iframes).
//!
//! The archive is pywb's iana.org crawl from the shared corpus: real host names (the
//! app's SURT of an IP host does not match CDXJ indexers', so the 127.0.0.1 fixture crawls
//! would not be found). Skips with a message when chromium, chromedriver, python3 or the
//! npm package is absent (scripts/setup.sh installs them).

mod common;
mod serve_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::KilledOnDrop;
use serde_json::{Value, json};
use serve_support::agent;

/// Where scripts/setup.sh unpacks the npm package.
fn replaywebpage() -> Option<PathBuf> {
    let root = std::env::var_os("SEDIMENT_NODE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/sediment-node")))?;
    let package = root.join("replaywebpage");
    if package.join("ui.js").is_file() && package.join("sw.js").is_file() {
        Some(package)
    } else {
        common::skip(
            &format!(
                "the npm package replaywebpage (ui.js, sw.js under {})",
                package.display()
            ),
            common::SETUP,
        );
        None
    }
}

/// A W3C WebDriver call; the `value` of the answer.
fn call(method: &str, url: &str, body: Option<Value>) -> Value {
    let agent = agent();
    let response = match (method, body) {
        ("POST", Some(body)) => agent
            .post(url)
            .header("content-type", "application/json")
            .send(body.to_string()),
        ("DELETE", _) => agent.delete(url).call(),
        _ => agent.get(url).call(),
    };
    let mut response = response.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let value: Value =
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    assert!(
        value["value"].get("error").is_none(),
        "{method} {url}: {value}"
    );
    value["value"].clone()
}

fn wait_for(url: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while agent().get(url).call().is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn replaywebpage_in_headless_chromium_renders_a_page_of_an_exported_package() {
    let Some(warc) = common::corpus("pywb/sample_archive/warcs/iana.warc.gz") else {
        return;
    };
    let Some(app) = replaywebpage() else {
        return;
    };
    if !common::have_program("chromium", common::SETUP)
        || !common::have_program("chromedriver", common::SETUP)
        || !common::have_python(&[])
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    common::ok(&store, &["import-warc", warc.to_str().unwrap()]);
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("replay")).unwrap();
    common::ok(
        &store,
        &[
            "export-wacz",
            "-o",
            site.join("iana.wacz").to_str().unwrap(),
        ],
    );
    // The app's page and its service worker's scope (`replayBase`), which loads ui.js too.
    std::fs::copy(app.join("ui.js"), site.join("ui.js")).unwrap();
    std::fs::copy(app.join("ui.js"), site.join("replay/ui.js")).unwrap();
    std::fs::copy(app.join("sw.js"), site.join("replay/sw.js")).unwrap();
    // What the frame gets before the service worker controls it. The app reloads the frame
    // three times, 100 ms apart, waiting for the worker; on a busy machine the worker takes
    // longer to activate, and the frame would stay on the server's directory listing (seen
    // in CI). This page reloads itself once a worker is active for the scope, after which
    // the worker answers `/replay/` and this page is not asked for again.
    std::fs::write(
        site.join("replay/index.html"),
        "<!doctype html><html><head><meta charset=\"utf-8\"><script>\
         const sw = navigator.serviceWorker;\
         if (sw && !sw.controller) {\
           sw.addEventListener('controllerchange', () => location.reload());\
           sw.ready.then(() => setTimeout(() => { if (!sw.controller) location.reload(); }, 500));\
         }</script></head><body></body></html>",
    )
    .unwrap();
    std::fs::write(
        site.join("index.html"),
        "<!doctype html><html><head><meta charset=\"utf-8\"><script src=\"./ui.js\"></script></head>\
         <body><replay-web-page source=\"/iana.wacz\" url=\"http://www.iana.org/\" \
         replayBase=\"/replay/\" embed=\"replayonly\" \
         style=\"width:1000px;height:800px;display:block\"></replay-web-page></body></html>",
    )
    .unwrap();

    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wacz_replayweb");
    let port = common::free_port();
    let _server = KilledOnDrop(
        Command::new("python3")
            .arg(assets.join("range_server.py"))
            .arg(&site)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .spawn()
            .expect("start the file server"),
    );
    let base = format!("http://127.0.0.1:{port}");
    wait_for(&format!("{base}/index.html"), "the file server");

    let driver_port = common::free_port();
    let _driver = KilledOnDrop(
        Command::new("chromedriver")
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let driver = format!("http://127.0.0.1:{driver_port}");
    wait_for(&format!("{driver}/status"), "chromedriver");
    let args = [
        "--headless".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--window-size=1100,900".into(),
        format!("--user-data-dir={}", dir.path().join("profile").display()),
    ];
    let session = call(
        "POST",
        &format!("{driver}/session"),
        Some(json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}
        }}})),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let session = format!("{driver}/session/{session}");
    call(
        "POST",
        &format!("{session}/url"),
        Some(json!({"url": format!("{base}/index.html")})),
    );
    let find = std::fs::read_to_string(assets.join("find.js")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let found = loop {
        let result = call(
            "POST",
            &format!("{session}/execute/sync"),
            Some(json!({"script": find, "args": ["Internet Assigned Numbers Authority"]})),
        );
        if result["found"] == true || Instant::now() > deadline {
            break result;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let _ = agent().delete(&session).call();
    assert_eq!(
        found["found"], true,
        "the archived page was not rendered: {found}"
    );
    // The page came from the package's capture of 2014, not from the live site.
    let url = found["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{base}/replay/w/"))
            && url.ends_with("20140126200624mp_/http://www.iana.org/"),
        "{found}"
    );
    assert_eq!(
        found["title"], "Internet Assigned Numbers Authority",
        "{found}"
    );
}
