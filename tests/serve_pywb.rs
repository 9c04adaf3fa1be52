//! pywb (an independent wayback machine) on top of `sediment serve`, all on 127.0.0.1:
//! - a collection whose index is `cdx+http://…/cdx` (our server) and whose archive path
//!   is the WARC directory replays fixture pages: 200, the payload equal to `sediment cat`;
//! - pywb's own CDX API over a CDXJ made by cdxj-indexer from the same WARCs gives the
//!   same captures as our `/cdx` for exact, prefix, host and domain queries with
//!   from/to/limit/filter.
//!
//! Skips with a message when pywb or cdxj-indexer is absent (scripts/setup.sh installs them).

mod common;
mod serve_support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::ok;
use serve_support::*;

/// A pywb `wayback` process; killed when dropped.
struct Pywb {
    child: Child,
    port: u16,
}

impl Drop for Pywb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_pywb(dir: &Path, sediment_port: u16) -> Pywb {
    let warcs = dir.join("warcs");
    let config = format!(
        "collections:\n  ref:\n    index: {index}\n    archive_paths: {warcs}/\n  \
         live:\n    index: cdx+http://127.0.0.1:{sediment_port}/cdx\n    archive_paths: {warcs}/\n",
        index = dir.join("index.cdxj").display(),
        warcs = warcs.display(),
    );
    std::fs::write(dir.join("config.yaml"), config).unwrap();
    let port = common::free_port();
    let log = std::fs::File::create(dir.join("pywb.log")).unwrap();
    let child = Command::new("wayback")
        .args(["-p", &port.to_string(), "-b", "127.0.0.1"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start pywb");
    let pywb = Pywb { child, port };
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let up = agent()
            .get(&format!("http://127.0.0.1:{port}/ref/cdx?url=example.com"))
            .call()
            .is_ok();
        if up {
            return pywb;
        }
        if Instant::now() > deadline {
            panic!(
                "pywb did not start: {}",
                std::fs::read_to_string(dir.join("pywb.log")).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn have_pywb() -> bool {
    have("wayback", &["--version"]) && have("cdxj-indexer", &["--help"])
}

/// A capture as both servers describe it (pywb's CDXJ digest keeps its `sha1:`).
type Capture = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
);

fn capture_of(value: &serde_json::Value) -> Capture {
    let field = |name: &str| value[name].as_str().unwrap_or("-").to_string();
    (
        field("urlkey"),
        field("timestamp"),
        field("url"),
        field("mime"),
        field("status"),
        field("digest").trim_start_matches("sha1:").to_string(),
        field("length"),
        field("offset"),
        field("filename"),
    )
}

/// pywb's answer (NDJSON) as captures.
fn from_pywb(pywb: &Pywb, query: &str) -> Vec<Capture> {
    let reply = get(&format!(
        "http://127.0.0.1:{}/ref/cdx?{query}&output=json",
        pywb.port
    ));
    assert_eq!(reply.status, 200, "pywb {query}: {}", reply.text());
    reply
        .lines()
        .iter()
        .map(|l| capture_of(&serde_json::from_str(l).unwrap()))
        .collect()
}

/// Our answer (CDXJ) as captures.
fn from_sediment(server: &Server, query: &str) -> Vec<Capture> {
    let reply = server.get(&format!("/cdx?{query}&output=cdxj"));
    assert_eq!(reply.status, 200, "sediment {query}: {}", reply.text());
    reply
        .lines()
        .iter()
        .map(|line| {
            let mut parts = line.splitn(3, ' ');
            let (urlkey, timestamp) = (parts.next().unwrap(), parts.next().unwrap());
            let mut value: serde_json::Value = serde_json::from_str(parts.next().unwrap()).unwrap();
            value["urlkey"] = urlkey.into();
            value["timestamp"] = timestamp.into();
            capture_of(&value)
        })
        .collect()
}

#[test]
fn pywb_replays_from_sediment_serve_and_agrees_on_cdx_queries() {
    if !have_pywb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let warcs = copy_crawls(dir.path(), &["crawl1.warc.gz", "crawl2.warc.gz"]);
    let store = dir.path().join("store");
    let mut args = vec!["import-warc"];
    args.extend(warcs.iter().map(|w| w.to_str().unwrap()));
    ok(&store, &args);
    let index = Command::new("cdxj-indexer")
        .arg("-s")
        .args(&warcs)
        .output()
        .expect("run cdxj-indexer");
    assert!(index.status.success());
    std::fs::write(dir.path().join("index.cdxj"), &index.stdout).unwrap();

    // The reference payloads, read by `sediment cat` before the server runs.
    let pages = [
        ("/", "3NNDQEXSDE4ATWJQ3EF6OYMCV6BKVENS"),
        ("/about.html", "HBGFKT2VNNX7UVMCFXRATVJVQOGKL7P4"),
        (
            "/papers/sediment-overview.pdf",
            "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A",
        ),
        ("/images/logo.png", "HLJUYZIHAJCXS74NBHBI3XX5HXDLV6FH"),
        // crawl2 stores a revisit: pywb finds the original through our index
        ("/robots.txt", "7TCSNC2G7A5BP5S4W523K6ZBLTDRTTVC"),
    ];
    let cat = |key: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_sediment"))
            .arg("--store")
            .arg(&store)
            .args(["cat", key])
            .output()
            .unwrap();
        assert!(out.status.success(), "cat {key}");
        out.stdout
    };
    let expected: Vec<Vec<u8>> = pages.iter().map(|(_, key)| cat(key)).collect();

    let server = Server::start(&store, &[]);
    let pywb = start_pywb(dir.path(), server.port);

    for ((path, key), bytes) in pages.iter().zip(&expected) {
        let url = format!("{SITE}{path}");
        // Every capture time of the page, the newest first (a revisit, for robots.txt).
        let stamps = server
            .get(&format!(
                "/cdx?url={}&fl=timestamp,digest&sort=reverse",
                enc(&url)
            ))
            .lines();
        let stamp = stamps
            .iter()
            .find(|l| l.ends_with(key))
            .and_then(|l| l.split(' ').next())
            .unwrap()
            .to_string();
        let replay = get(&format!(
            "http://127.0.0.1:{}/live/{stamp}id_/{url}",
            pywb.port
        ));
        assert_eq!(replay.status, 200, "pywb replays {url} at {stamp}");
        assert_eq!(
            &replay.body, bytes,
            "pywb's replay of {url} equals sediment cat {key}"
        );
    }
    assert!(
        server.log_shows("sort=closest"),
        "pywb asked our /cdx: {}",
        server.log()
    );

    let about = enc(&format!("{SITE}/about.html"));
    let site = enc(SITE);
    let day = from_sediment(&server, &format!("url={about}"))[0].1[..8].to_string();
    // (our query, pywb's query): pywb spells regex filters `~field:regex` (matched at
    // the start) where IA and we write `field:regex` (whole value).
    let queries = [
        (format!("url={about}"), format!("url={about}")),
        (format!("url={site}/*"), format!("url={site}/*")),
        (
            format!("url={site}/docs/&matchType=prefix"),
            format!("url={site}/docs/&matchType=prefix"),
        ),
        (
            format!("url={site}/docs/x&matchType=host"),
            format!("url={site}/docs/x&matchType=host"),
        ),
        (
            format!("url={site}&matchType=domain"),
            format!("url={site}&matchType=domain"),
        ),
        (
            format!("url={site}/*&from={day}&to={day}"),
            format!("url={site}/*&from={day}&to={day}"),
        ),
        (
            format!("url={site}/*&to=2001"),
            format!("url={site}/*&to=2001"),
        ),
        (
            format!("url={site}/*&filter=status:404"),
            format!("url={site}/*&filter=%3Dstatus:404"),
        ),
        (
            format!("url={site}/*&filter=!mime:text/.*"),
            format!("url={site}/*&filter=!~mime:text/"),
        ),
        (
            format!("url={site}/*&filter=~url:docs"),
            format!("url={site}/*&filter=url:docs"),
        ),
        (
            format!("url={site}/*&filter=!status:200&filter=mime:warc/revisit"),
            format!("url={site}/*&filter=!%3Dstatus:200&filter=%3Dmime:warc/revisit"),
        ),
    ];
    for (ours, theirs) in &queries {
        let expected: Vec<Capture> = from_pywb(&pywb, theirs);
        let got = from_sediment(&server, ours);
        let as_set = |v: &[Capture]| v.iter().cloned().collect::<BTreeSet<_>>();
        assert_eq!(got.len(), expected.len(), "{ours}");
        assert_eq!(
            as_set(&got),
            as_set(&expected),
            "{ours}: same captures as pywb"
        );
        // Same order up to captures of one URL in one second (pywb sorts those by the
        // rest of the line, we by WARC file and offset).
        let order = |v: &[Capture]| {
            v.iter()
                .map(|c| (c.0.clone(), c.1.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(order(&got), order(&expected), "{ours}: same order");
    }
    assert!(
        queries
            .iter()
            .all(|(q, _)| !from_sediment(&server, q).is_empty() || q.contains("2001"))
    );

    // Limits (pywb has no negative limit: its last N come from sort=reverse). Ties in
    // time may pick different captures of one second, so compare (URL, time) and check
    // each capture exists.
    let all: BTreeSet<Capture> = from_pywb(&pywb, &format!("url={site}/*"))
        .into_iter()
        .collect();
    let keys = |v: &[Capture]| {
        v.iter()
            .map(|c| (c.0.clone(), c.1.clone()))
            .collect::<Vec<_>>()
    };
    for (ours, theirs, reversed) in [
        (
            format!("url={site}/*&limit=7"),
            format!("url={site}/*&limit=7"),
            false,
        ),
        (
            format!("url={site}/*&limit=-5"),
            format!("url={site}/*&sort=reverse&limit=5"),
            true,
        ),
        (
            format!("url={about}&limit=2&from={day}"),
            format!("url={about}&limit=2&from={day}"),
            false,
        ),
    ] {
        let got = from_sediment(&server, &ours);
        let mut expected = from_pywb(&pywb, &theirs);
        if reversed {
            expected.reverse();
        }
        assert_eq!(keys(&got), keys(&expected), "{ours}");
        assert!(got.iter().all(|c| all.contains(c)), "{ours}");
    }
}
