//! `sediment serve` keeps serving while an import runs, and shows the captures of the
//! completed input without a restart.

mod common;
mod serve_support;

use std::time::{Duration, Instant};

use common::ok;
use serve_support::*;

#[test]
fn captures_of_an_input_imported_while_serving_become_visible() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = copy_crawls(dir.path(), &["crawl1.warc.gz", "crawl2.warc.gz"]);
    let store = dir.path().join("store");
    ok(&store, &["import-warc", warcs[0].to_str().unwrap()]);
    // One block cache for every version the server opens (`store::rocks` tests that
    // readers sharing it find each other's blocks).
    let server = Server::start(&store, &["--block-cache-mb", "4"]);
    let query = format!(
        "/cdx?url={}&fl=filename",
        enc(&format!("{SITE}/about.html"))
    );
    assert_eq!(
        server.get(&query).lines(),
        ["crawl1.warc.gz", "crawl1.warc.gz"]
    );

    // The import runs while the server answers.
    let import = std::process::Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(["import-warc", warcs[1].to_str().unwrap()])
        .spawn()
        .unwrap();
    let mut import = import;
    while import.try_wait().unwrap().is_none() {
        assert_eq!(server.get("/health").status, 200);
        let seen = server.get(&query).lines();
        assert!(
            seen.len() == 2 || seen.len() == 4,
            "whole inputs only: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        import.wait().unwrap().success(),
        "the import is not blocked by the server"
    );

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = server.get(&query).lines();
        if seen.len() == 4 {
            assert_eq!(seen.iter().filter(|f| *f == "crawl2.warc.gz").count(), 2);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "crawl2 never became visible: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let stats = server.get("/stats").json();
    assert!(stats["store_reloads"].as_u64().unwrap() >= 1);
    let cached = stats["block_cache_bytes"].as_u64().unwrap();
    assert!(
        cached > 0 && cached <= 4 << 20,
        "{cached} bytes in a block cache of 4 MiB"
    );
}
