//! WARC locations that survive (issue 12): payloads read back from any working directory,
//! stdin imports that need a name, `sediment warcs`, and `sediment relocate` after a
//! collection moved.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fixture, json_lines, ok, ok_in_dir, sediment, sediment_in};
use sha1::{Digest, Sha1};

const OVERVIEW_PDF: &str = "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A";

fn sha1_base32(bytes: &[u8]) -> String {
    data_encoding::BASE32_NOPAD.encode(&Sha1::digest(bytes))
}

#[test]
fn payloads_are_found_from_any_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    std::fs::copy(
        fixture("crawl/crawl1.warc.gz"),
        crawl.join("crawl1.warc.gz"),
    )
    .unwrap();
    let store = dir.path().join("store");
    // Imported with a relative path, from the collection's parent directory.
    ok_in_dir(dir.path(), &store, &["import-warc", "crawl/crawl1.warc.gz"]);

    let elsewhere = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .current_dir(elsewhere.path())
        .arg("--store")
        .arg(&store)
        .args(["cat", OVERVIEW_PDF])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(sha1_base32(&output.stdout), OVERVIEW_PDF);

    // The name as given stays what captures and rows show; the location is absolute.
    let row = &json_lines(&ok(&store, &["get", OVERVIEW_PDF]))[0];
    assert_eq!(row["file:cdx"]["warc"], "crawl/crawl1.warc.gz");
    assert_eq!(row["f:c"]["f"], "crawl1.warc.gz");
    let capture = &json_lines(&ok(&store, &["captures", "--digest", OVERVIEW_PDF]))[0];
    let canonical = std::fs::canonicalize(crawl.join("crawl1.warc.gz")).unwrap();
    assert_eq!(capture["location"], canonical.to_str().unwrap());
    assert_eq!(capture["warc"], "crawl/crawl1.warc.gz");
}

#[test]
fn standard_input_needs_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let warc = std::fs::read(fixture("crawl/crawl1.warc.gz")).unwrap();
    let run = sediment_in(&store, &["import-warc", "-"], Some(&warc));
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--name"), "{}", run.stderr);
    assert!(!store.exists(), "nothing was written");

    // Named after where the stream is kept, it reads back.
    let kept = dir.path().join("kept.warc.gz");
    std::fs::write(&kept, &warc).unwrap();
    let run = sediment_in(
        &store,
        &["import-warc", "-", "--name", kept.to_str().unwrap()],
        Some(&warc),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let capture = &json_lines(&ok(&store, &["captures", "--digest", OVERVIEW_PDF]))[0];
    assert_eq!(capture["warc"], kept.to_str().unwrap());
    let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(["cat", OVERVIEW_PDF])
        .output()
        .unwrap();
    assert_eq!(sha1_base32(&output.stdout), OVERVIEW_PDF);

    let run = sediment(
        &store,
        &[
            "import-warc",
            "--name",
            "x.warc",
            fixture("crawl/crawl2.warc.gz").to_str().unwrap(),
        ],
    );
    assert_eq!(
        run.status, 2,
        "--name without stdin is a usage error: {}",
        run.stderr
    );
}

/// `sediment warcs --json` as (name, found) pairs.
fn warcs(store: &Path) -> Vec<(String, bool)> {
    json_lines(&ok(store, &["warcs", "--json"]))
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                !w["found"].is_null(),
            )
        })
        .collect()
}

#[test]
fn a_moved_collection_is_re_pointed_without_re_import() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old-disk").join("crawls");
    std::fs::create_dir_all(&old).unwrap();
    for name in ["crawl1.warc.gz", "crawl2.warc.gz"] {
        std::fs::copy(fixture(&format!("crawl/{name}")), old.join(name)).unwrap();
    }
    let store = dir.path().join("store");
    ok(&store, &["import-warc", old.to_str().unwrap()]);
    let captures = ok(&store, &["captures"]).lines().count();
    assert!(warcs(&store).iter().all(|(_, found)| *found));
    // Each WARC's capture count is what importing that file alone gives.
    let listed = json_lines(&ok(&store, &["warcs", "--json"]));
    assert_eq!(listed.len(), 2);
    for warc in &listed {
        let name = warc["name"].as_str().unwrap();
        let alone = dir
            .path()
            .join(format!("alone-{}", name.rsplit('/').next().unwrap()));
        ok(&alone, &["import-warc", name]);
        let own = ok(&alone, &["captures"]).lines().count();
        assert_eq!(warc["captures"].as_u64().unwrap() as usize, own, "{name}");
    }
    let tsv = ok(&store, &["warcs"]);
    let total: u64 = tsv
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total as usize, captures);

    let new = dir.path().join("new-disk");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::rename(&old, new.join("crawls")).unwrap();
    let run = sediment(&store, &["cat", OVERVIEW_PDF]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("sediment relocate"), "{}", run.stderr);
    assert!(warcs(&store).iter().all(|(_, found)| !*found));

    // Locations are canonical paths: the prefixes are too.
    let canonical_old = format!("{}/old-disk/", dir.path().canonicalize().unwrap().display());
    let new_prefix = format!("{}/new-disk/", dir.path().canonicalize().unwrap().display());
    let dry = ok(
        &store,
        &["relocate", &canonical_old, &new_prefix, "--dry-run"],
    );
    assert!(dry.contains("2 WARC files"), "{dry}");
    assert!(dry.contains("2 of them are found"), "{dry}");
    assert!(
        warcs(&store).iter().all(|(_, found)| !*found),
        "a dry run records nothing"
    );
    ok(&store, &["relocate", &canonical_old, &new_prefix]);
    assert!(warcs(&store).iter().all(|(_, found)| *found));
    let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(["cat", OVERVIEW_PDF])
        .output()
        .unwrap();
    assert_eq!(sha1_base32(&output.stdout), OVERVIEW_PDF);

    // Importing the moved files again is recognized as done: no duplicate captures.
    let run = sediment(
        &store,
        &["import-warc", new.join("crawls").to_str().unwrap()],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("already ingested"), "{}", run.stderr);
    assert_eq!(ok(&store, &["captures"]).lines().count(), captures);
}

#[test]
fn warc_names_from_cdx_lines_can_be_pointed_at_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(
        &store,
        &[
            "backfill-cdx",
            fixture("crawl/crawl1.cdx").to_str().unwrap(),
        ],
    );
    assert_eq!(warcs(&store), vec![("crawl1.warc.gz".to_string(), false)]);
    let run = sediment(&store, &["cat", OVERVIEW_PDF]);
    assert_ne!(run.status, 0);

    let crawl_dir = format!("{}/", fixture("crawl").canonicalize().unwrap().display());
    ok(
        &store,
        &["relocate", "crawl1", &format!("{crawl_dir}crawl1")],
    );
    assert_eq!(warcs(&store), vec![("crawl1.warc.gz".to_string(), true)]);
    let output = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(["cat", OVERVIEW_PDF])
        .output()
        .unwrap();
    assert_eq!(sha1_base32(&output.stdout), OVERVIEW_PDF);
}
