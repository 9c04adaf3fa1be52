//! Heritrix deduplicating against `sediment serve` (issue 38), with the requests its
//! clients make and their answers read the way those clients read them. Heritrix itself is
//! not run (it is not installable here); the request shapes and the parsing come from the
//! clients' sources:
//!
//! - OutbackCDX's client (ukwa-heritrix `OutbackCDXClient`, used by
//!   `OutbackCDXPersistLoadProcessor` and the recently-seen rules) sends
//!   `GET ENDPOINT?limit=100&matchType=exact&filter=!mimetype:failure-status-code.*&sort=reverse&url=URL`
//!   (form-encoded), reads the answer as 11-column CDX lines and takes the first whose
//!   `original` field is the URL, exactly: its timestamp and `sha1:` + its digest become
//!   the URL's fetch history, which the WARC writer compares with the new fetch's digest.
//!   A 404 or an empty answer is no history.
//! - Heritrix's own `WbmPersistLoadProcessor` sends `GET queryURL` with `$u` replaced by
//!   the URL (`URLEncoder`), `?url=$u&limit=-1` by default, and takes the timestamp (field
//!   2, 14 digits) and digest (field 6, 32 base32 characters) of the last line.
//! - The write-back (`OutbackCDXPersistStoreProcessor`) POSTs one CDX line to ENDPOINT;
//!   `serve` never writes, so it refuses with 405 and says how to ingest instead.

mod common;
mod serve_support;

use std::collections::BTreeMap;

use common::{json_lines, ok};
use serve_support::{Server, agent, enc};
use sha1::{Digest, Sha1};

const CRAWLS: [&str; 2] = ["crawl1.warc.gz", "crawl2.warc.gz"];

/// What a fetch-history lookup gives Heritrix: (timestamp, content digest).
type History = Option<(String, String)>;

/// `OutbackCDXClient.getLastCrawl`: the request and the reading of its answer.
fn outbackcdx_last_crawl(server: &Server, url: &str) -> History {
    // URIBuilder adds the parameters in this order and form-encodes them (`!` and `:`
    // escaped, `*` kept), as `enc` does.
    let path = format!(
        "/cdx?limit=100&matchType=exact&filter={}&sort=reverse&url={}",
        enc("!mimetype:failure-status-code.*"),
        enc(url)
    );
    let reply = server.get(&path);
    if reply.status == 404 {
        return None;
    }
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    for line in reply.lines() {
        // StandardCDXLineFactory("cdx11"): eleven fields split on spaces.
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 11, "an 11-column CDX line: {line:?}");
        if fields[2] == url {
            return Some((fields[1].to_string(), format!("sha1:{}", fields[5])));
        }
    }
    None
}

/// `WbmPersistLoadProcessor` with `queryURL` = `http://HOST:PORT/cdx?url=$u&limit=-1`.
fn wbm_last_crawl(server: &Server, url: &str) -> History {
    let path = format!("/cdx?url={}&limit=-1", enc(url));
    let reply = server.get(&path);
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    // Each line's fields overwrite the last (an invalid one clears it): the last line wins.
    let mut found: (Option<String>, Option<String>) = (None, None);
    for line in reply.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if let Some(ts) = fields.get(1) {
            found.0 =
                (ts.len() == 14 && ts.bytes().all(|b| b.is_ascii_digit())).then(|| ts.to_string());
        }
        if let Some(digest) = fields.get(5) {
            found.1 = (digest.len() == 32
                && digest
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()))
            .then(|| format!("sha1:{digest}"));
        }
    }
    match found {
        (Some(ts), Some(digest)) => Some((ts, digest)),
        (None, None) => None,
        partial => panic!("half a history for {url}: {partial:?}"),
    }
}

/// Heritrix's content digest of a refetch of identical bytes: `sha1:` + base32.
fn content_digest(bytes: &[u8]) -> String {
    format!(
        "sha1:{}",
        data_encoding::BASE32.encode(&Sha1::digest(bytes))
    )
}

#[test]
fn heritrix_dedup_lookups_hit_stored_captures_and_miss_unknown_urls() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = serve_support::copy_crawls(dir.path(), &CRAWLS);
    let store = dir.path().join("store");
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(|w| w.to_str().unwrap()));
    ok(&store, &args);

    // The captures of each web URL (by SURT, as `/cdx?url=` matches), oldest first.
    let mut by_surt: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for capture in json_lines(&ok(&store, &["captures", "--surt-prefix", ""])) {
        if capture["url"].as_str().unwrap().starts_with("http") {
            let surt = capture["surt"].as_str().unwrap().to_string();
            by_surt.entry(surt).or_default().push(capture);
        }
    }
    // The newest capture's URL is asked; both clients must see that capture.
    by_surt.retain(|_, captures| captures.last().unwrap()["digest"].is_string());
    let captured_twice = by_surt.values().filter(|c| c.len() > 1).count();
    let server = Server::start(&store, &[]);
    for captures in by_surt.values() {
        let capture = captures.last().unwrap();
        let url = capture["url"].as_str().unwrap();
        let ts = capture["ts"].as_str().unwrap();
        for (client, history) in [
            ("OutbackCDX", outbackcdx_last_crawl(&server, url)),
            ("WbmPersistLoad", wbm_last_crawl(&server, url)),
        ] {
            let (seen_ts, digest) =
                history.unwrap_or_else(|| panic!("{client}: no history for {url}"));
            assert_eq!(seen_ts, ts, "{client}: the last crawl of {url}");
            // A dedup hit: the digest Heritrix will compare is that of the bytes the
            // store gives back for it.
            let key = digest.strip_prefix("sha1:").unwrap();
            let payload = std::process::Command::new(env!("CARGO_BIN_EXE_sediment"))
                .arg("--store")
                .arg(&store)
                .args(["cat", key])
                .output()
                .unwrap();
            assert!(
                payload.status.success(),
                "{client}: cat {key} for {url}: {}",
                String::from_utf8_lossy(&payload.stderr)
            );
            assert_eq!(content_digest(&payload.stdout), digest, "{client}: {url}");
        }
    }
    assert!(by_surt.len() >= 5, "{by_surt:?}");
    assert!(captured_twice >= 2, "the crawls share URLs: {by_surt:?}");

    // Misses: a URL never crawled, and one that only extends a stored URL (exact match).
    let some = by_surt.values().next().unwrap()[0]["url"]
        .as_str()
        .unwrap()
        .to_string();
    for url in [
        "http://never-crawled.example/".to_string(),
        format!("{some}never-crawled"),
    ] {
        assert_eq!(outbackcdx_last_crawl(&server, &url), None, "{url}");
        assert_eq!(wbm_last_crawl(&server, &url), None, "{url}");
    }

    // The write-back: one CDX line POSTed as OutbackCDXClient.putUri sends it.
    let before = ok(&store, &["captures", "--surt-prefix", ""]);
    let line = format!(
        "- 20300101000000 {some} text/html 200 sha1:{} - - 1234 0 crawl3.warc.gz",
        "A".repeat(32)
    );
    let mut response = agent()
        .post(&server.url("/cdx"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send(line.as_bytes())
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(
        response
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok()),
        Some("GET, HEAD")
    );
    let message = response.body_mut().read_to_string().unwrap();
    assert!(
        message.contains("read-only") && message.contains("import-warc --follow"),
        "{message}"
    );
    drop(server);
    assert_eq!(
        ok(&store, &["captures", "--surt-prefix", ""]),
        before,
        "the POST wrote nothing"
    );
}
