//! The search page of `sediment serve` in headless Chromium, driven through chromedriver
//! (W3C WebDriver over HTTP on 127.0.0.1): load the page, type a query, submit, and read
//! the results from the DOM; a screenshot is kept in the test's temporary directory.
//!
//! Skips with a message when chromium or chromedriver is absent (scripts/setup.sh
//! installs Debian's packages).

mod common;
mod serve_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serve_support::*;
use summary_support::{crawl, import_and_summarize};

mod summary_support;

struct Driver {
    child: Child,
    base: String,
    session: Option<String>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(session) = &self.session {
            let _ = agent()
                .delete(&format!("{}/session/{session}", self.base))
                .call();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(method: &str, url: &str, body: Option<Value>) -> Value {
    let agent = agent();
    let response = match (method, body) {
        ("GET", _) => agent.get(url).call(),
        ("POST", Some(body)) => agent
            .post(url)
            .header("content-type", "application/json")
            .send(body.to_string()),
        _ => panic!("unsupported {method}"),
    };
    let mut response = response.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let text = response.body_mut().read_to_string().unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    assert!(
        value["value"].get("error").is_none(),
        "{method} {url}: {value}"
    );
    value["value"].clone()
}

impl Driver {
    fn start(profile: &std::path::Path) -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while agent().get(&format!("{base}/status")).call().is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut driver = Driver {
            child,
            base,
            session: None,
        };
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1024,900",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--user-data-dir={}", profile.display())])
        .collect::<Vec<_>>();
        let created = call(
            "POST",
            &format!("{}/session", driver.base),
            Some(json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}
            }}})),
        );
        driver.session = Some(created["sessionId"].as_str().unwrap().to_string());
        driver
    }

    fn url(&self, path: &str) -> String {
        format!(
            "{}/session/{}{path}",
            self.base,
            self.session.as_ref().unwrap()
        )
    }

    fn go(&self, url: &str) {
        call("POST", &self.url("/url"), Some(json!({ "url": url })));
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        call(
            "POST",
            &self.url("/elements"),
            Some(json!({"using": "css selector", "value": css})),
        )
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e.as_object()
                .unwrap()
                .values()
                .next()
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
    }

    fn find(&self, css: &str) -> String {
        let found = self.find_all(css);
        assert!(!found.is_empty(), "no element {css}");
        found[0].clone()
    }

    fn text(&self, element: &str) -> String {
        call("GET", &self.url(&format!("/element/{element}/text")), None)
            .as_str()
            .unwrap()
            .to_string()
    }

    fn attribute(&self, element: &str, name: &str) -> String {
        call(
            "GET",
            &self.url(&format!("/element/{element}/attribute/{name}")),
            None,
        )
        .as_str()
        .unwrap_or("")
        .to_string()
    }

    fn type_into(&self, element: &str, text: &str) {
        call(
            "POST",
            &self.url(&format!("/element/{element}/value")),
            Some(json!({ "text": text })),
        );
    }

    fn click(&self, element: &str) {
        call(
            "POST",
            &self.url(&format!("/element/{element}/click")),
            Some(json!({})),
        );
    }

    fn current_url(&self) -> String {
        call("GET", &self.url("/url"), None)
            .as_str()
            .unwrap()
            .to_string()
    }

    fn screenshot(&self, path: &std::path::Path) {
        let png = call("GET", &self.url("/screenshot"), None);
        let bytes = data_encoding::BASE64
            .decode(png.as_str().unwrap().as_bytes())
            .unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(path, bytes).unwrap();
    }
}

#[test]
fn search_page_in_headless_chromium() {
    if !have("chromium", &["--version"]) || !have("chromedriver", &["--version"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    let server = Server::start(&store, &["--summary-db", db.to_str().unwrap()]);

    // The JSON form first: the fields of `sediment search --json`.
    let json = server.get("/search?q=flood&format=json").json();
    let results = json["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for field in [
        "url",
        "title",
        "snippet",
        "first_seen",
        "last_seen",
        "captures",
        "score",
    ] {
        assert!(results[0].get(field).is_some(), "{field} in {}", results[0]);
    }
    assert_eq!(
        server.get("/search?format=json").status,
        400,
        "q is required"
    );

    let driver = Driver::start(&dir.path().join("chromium-profile"));
    driver.go(&server.url("/"));
    let input = driver.find("form#search input[name=q]");
    driver.type_into(&input, "flood layer");
    driver.click(&driver.find("form#search button[type=submit]"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while driver.find_all("#results li.result").is_empty() {
        assert!(
            Instant::now() < deadline,
            "no results rendered at {}",
            driver.current_url()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        driver.current_url().contains("q=flood+layer"),
        "{}",
        driver.current_url()
    );
    let shot = dir.path().join("search.png");
    driver.screenshot(&shot);
    eprintln!("screenshot: {}", shot.display());
    if let Ok(keep) = std::env::var("SEDIMENT_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    let first = driver.find("#results li.result");
    let text = driver.text(&first);
    assert!(text.contains(SITE), "the result shows its URL: {text}");
    assert!(text.contains("captured"), "and its capture dates: {text}");
    let marks = driver.find_all("#results .snippet mark");
    assert!(!marks.is_empty(), "matches are marked in the snippet");
    assert!(
        driver.text(&marks[0]).to_lowercase().starts_with("flood")
            || driver.text(&marks[0]).to_lowercase().starts_with("layer")
    );
    // The title links to the payload, and the payload is there.
    let link = driver.attribute(&driver.find("#results li.result a.title"), "href");
    assert!(link.contains("/payload/"), "{link}");
    let payload = match link.strip_prefix(&server.url("")) {
        Some(path) => server.get(path),
        None => server.get(&link),
    };
    assert_eq!(payload.status, 200);
    assert!(payload.text().contains("<html"), "the page itself");
    // The query is kept in the box; an empty result says so.
    assert_eq!(
        driver.attribute(&driver.find("form#search input[name=q]"), "value"),
        "flood layer"
    );
    driver.go(&server.url("/search?q=zzzzunfindable&format=html"));
    assert_eq!(driver.find_all("#no-results").len(), 1);
}

/// Waits until `css` matches at least one element.
fn wait_for(driver: &Driver, css: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = driver.find_all(css);
        if !found.is_empty() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no {css} at {}",
            driver.current_url()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Clicks a link and waits until the browser is at another page.
fn follow(driver: &Driver, element: &str) {
    let before = driver.current_url();
    driver.click(element);
    let deadline = Instant::now() + Duration::from_secs(60);
    while driver.current_url() == before {
        assert!(
            Instant::now() < deadline,
            "the click left {before} unchanged"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn facets_pages_and_replay_links_in_headless_chromium() {
    if !have("chromium", &["--version"]) || !have("chromedriver", &["--version"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let db = dir.path().join("summary.db");
    import_and_summarize(
        &store,
        &db,
        &[&crawl("crawl1.warc.gz"), &crawl("crawl2.warc.gz")],
    );
    let replay = "http://replay.example:8080/my-coll/{timestamp}/{url}";
    let server = Server::start(
        &store,
        &["--summary-db", db.to_str().unwrap(), "--replay-url", replay],
    );
    let json = server.get("/search?q=the&limit=3&format=json").json();
    let total = json["total"].as_u64().unwrap();
    assert!(total > 6, "{json}");

    let driver = Driver::start(&dir.path().join("chromium-profile"));
    // The landing page says what the archive holds, and searches.
    driver.go(&server.url("/"));
    let searchable = driver.text(&driver.find("#holdings #searchable"));
    assert!(searchable.parse::<u64>().unwrap() >= total, "{searchable}");
    driver.type_into(&driver.find("form#search input[name=q]"), "the");
    follow(&driver, &driver.find("form#search button[type=submit]"));
    wait_for(&driver, "#results li.result");
    assert_eq!(
        driver.attribute(&driver.find("#count"), "data-total"),
        total.to_string()
    );

    // Pages of three: the count, the results, the link to the next page.
    driver.go(&server.url("/search?q=the&limit=3&format=html"));
    let results = wait_for(&driver, "#results li.result");
    assert_eq!(results.len(), 3);
    assert_eq!(driver.text(&driver.find("#shown")), "1–3");
    // Each title leads to the replay of the capture the JSON names.
    let titles: Vec<String> = driver
        .find_all("#results li.result a.title")
        .iter()
        .map(|a| driver.attribute(a, "href"))
        .collect();
    let expected: Vec<String> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            replay
                .replace("{timestamp}", r["timestamp"].as_str().unwrap())
                .replace("{url}", r["url"].as_str().unwrap())
        })
        .collect();
    assert_eq!(titles, expected);
    assert!(titles[0].starts_with("http://replay.example:8080/my-coll/2"));
    let payload = driver.attribute(&driver.find("#results li.result a.payload"), "href");
    assert!(payload.contains("/payload/"), "{payload}");
    let first_page_text = driver.text(&results[0]);
    follow(&driver, &driver.find("#pages a#next"));
    assert!(
        driver.current_url().contains("offset=3"),
        "{}",
        driver.current_url()
    );
    let second = wait_for(&driver, "#results li.result");
    assert_eq!(driver.attribute(&driver.find("ol#results"), "start"), "4");
    assert_ne!(driver.text(&second[0]), first_page_text);
    assert_eq!(driver.find_all("#pages a#previous").len(), 1);

    // Facets: the site holds every match; a year narrows the results to its count.
    let site = driver.find("#facets section[data-facet=site] li");
    assert_eq!(driver.attribute(&site, "data-value"), "127.0.0.1:47213");
    assert!(driver.text(&site).ends_with(&total.to_string()));
    assert!(
        !driver
            .find_all("#facets section[data-facet=mime] li[data-value=\"text/html\"]")
            .is_empty()
    );
    let year = driver.find("#facets section[data-facet=year] li");
    let year_value = driver.attribute(&year, "data-value");
    let year_count: u64 = driver
        .text(&driver.find("#facets section[data-facet=year] li .count"))
        .parse()
        .unwrap();
    follow(
        &driver,
        &driver.find("#facets section[data-facet=year] li a"),
    );
    assert!(
        driver
            .current_url()
            .contains(&format!("year%3A{year_value}")),
        "{}",
        driver.current_url()
    );
    wait_for(&driver, "#results li.result");
    assert_eq!(
        driver.attribute(&driver.find("#count"), "data-total"),
        year_count.to_string()
    );
    let active = driver.find("#facets section[data-facet=year] li.active");
    assert_eq!(driver.attribute(&active, "data-value"), year_value);
    assert_eq!(
        driver.attribute(&driver.find("form#search input[name=q]"), "value"),
        format!("the year:{year_value}")
    );
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-browser-facets.png");
    driver.screenshot(&shot);
    eprintln!("screenshot: {}", shot.display());

    // "all captures" opens a readable table of the URL's captures.
    follow(&driver, &driver.find("#results li.result a.captures"));
    let rows = wait_for(&driver, "table#captures tr.capture");
    let timestamp = driver.attribute(&rows[0], "data-timestamp");
    assert_eq!(timestamp.len(), 14, "{timestamp}");
    let link = driver.attribute(&driver.find("table#captures tr.capture a.replay"), "href");
    assert!(
        link.starts_with(&format!(
            "http://replay.example:8080/my-coll/{timestamp}/http"
        )),
        "{link}"
    );
}
