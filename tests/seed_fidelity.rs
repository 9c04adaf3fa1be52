//! Rows and captures of an imported WARC say what seed 002's CDX route says: the file
//! column is the item and file name (never the importing machine's absolute path), and
//! the compressed size of a record in an uncompressed WARC is the CDX length
//! (`sediment cdx`, cdxj-indexer, wget), without the CRLFCRLF that ends the record.

mod common;

use std::collections::BTreeMap;

use common::{fixture, json_lines, ok};

#[test]
fn file_cdx_names_the_file_and_sizes_agree_with_cdx() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["crawl1-plain.warc", "crawl1.warc.gz"] {
        let warc = fixture(&format!("crawl/{name}"));
        let warc = warc.canonicalize().unwrap();
        let store = dir.path().join(name);
        ok(&store, &["import-warc", warc.to_str().unwrap()]);
        // `sediment cdx`: offset → length (11 columns, S and V are the 9th and 10th).
        let lengths: BTreeMap<String, String> = ok(&store, &["cdx", warc.to_str().unwrap()])
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f[9].to_string(), f[8].to_string())
            })
            .collect();
        let rows = json_lines(&ok(&store, &["export"]));
        assert!(rows.len() > 10, "{name}");
        for row in &rows {
            let cdx = &row["file:cdx"];
            assert_eq!(cdx["warc"], name, "{name}: {row}");
            let offset = cdx["offset"].to_string();
            assert_eq!(
                cdx["c_size"].to_string(),
                lengths[&offset],
                "{name} at {offset}: c_size is the CDX length"
            );
        }
        for capture in json_lines(&ok(&store, &["captures"])) {
            let offset = capture["offset"].to_string();
            if let Some(length) = lengths.get(&offset) {
                assert_eq!(&capture["c_size"].to_string(), length, "{name} {offset}");
            }
        }
    }
}
