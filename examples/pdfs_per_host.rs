//! PDFs per host: how many distinct PDF payloads a store holds for each host, from the
//! rows of the `files` table (`file:mime`) and where each was first captured (`f:c`).
//! Written against Sediment's public API only.
//!
//!     cargo run --release --example pdfs_per_host -- STORE

use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: pdfs_per_host STORE");
        std::process::exit(2);
    };
    let store = sediment::Store::open_reader(&path)?;
    let mut per_host: BTreeMap<String, u64> = BTreeMap::new();
    for row in store.rows(b"") {
        let row = row?;
        if row.get("file", "mime").and_then(|m| m.as_str()) != Some("application/pdf") {
            continue;
        }
        // `f:c` is the dedupe record of the first capture: `u` is its URL.
        let url = row
            .get("f", "c")
            .and_then(|c| c.get("u"))
            .and_then(|u| u.as_str())
            .unwrap_or_default();
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| "(unknown)".to_string());
        *per_host.entry(host).or_default() += 1;
    }
    for (host, pdfs) in &per_host {
        println!("{pdfs}\t{host}");
    }
    Ok(())
}
