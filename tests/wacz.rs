//! WACZ packages (issue 38): import through `import-warc` (stored and deflated WARC
//! members read in place, `datapackage.json` hashes checked, page titles kept), hostile
//! packages reported without harm, `export-wacz` read back by Python's zipfile and pywb,
//! and packages written by py-wacz.

mod common;
mod serve_support;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{fixture, json_lines, ok, sediment};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One member of a hand-made zip, with what its central directory entry may lie about.
#[derive(Clone, Default)]
struct Entry {
    name: String,
    /// 0 stored, 8 deflated.
    method: u16,
    /// The member's bytes as stored in the zip.
    data: Vec<u8>,
    crc: u32,
    size: u64,
    /// Central directory lies: compressed size, size, local header offset.
    cd_compressed: Option<u64>,
    cd_size: Option<u64>,
    cd_offset: Option<u64>,
}

fn stored(name: &str, bytes: &[u8]) -> Entry {
    Entry {
        name: name.into(),
        method: 0,
        data: bytes.to_vec(),
        crc: crc32fast::hash(bytes),
        size: bytes.len() as u64,
        ..Entry::default()
    }
}

fn deflated(name: &str, bytes: &[u8]) -> Entry {
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    Entry {
        name: name.into(),
        method: 8,
        data: encoder.finish().unwrap(),
        crc: crc32fast::hash(bytes),
        size: bytes.len() as u64,
        ..Entry::default()
    }
}

/// A zip file as the entries say (no zip64: the test packages are small), written by
/// hand so that the central directory can lie.
fn zip_bytes(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for e in entries {
        offsets.push(out.len() as u32);
        out.extend_from_slice(&0x04034b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&e.method.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0x21u16.to_le_bytes());
        out.extend_from_slice(&e.crc.to_le_bytes());
        out.extend_from_slice(&(e.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(e.size as u32).to_le_bytes());
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(e.name.as_bytes());
        out.extend_from_slice(&e.data);
    }
    let cd_start = out.len() as u32;
    for (e, offset) in entries.iter().zip(&offsets) {
        out.extend_from_slice(&0x02014b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&e.method.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0x21u16.to_le_bytes());
        out.extend_from_slice(&e.crc.to_le_bytes());
        let compressed = e.cd_compressed.unwrap_or(e.data.len() as u64) as u32;
        out.extend_from_slice(&compressed.to_le_bytes());
        out.extend_from_slice(&(e.cd_size.unwrap_or(e.size) as u32).to_le_bytes());
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&0u32.to_le_bytes());
        let offset = e.cd_offset.map_or(*offset, |o| o as u32);
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(e.name.as_bytes());
    }
    let cd_size = out.len() as u32 - cd_start;
    out.extend_from_slice(&0x06054b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_start.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `datapackage.json` (and its digest file) listing `members` with their real hashes.
fn with_datapackage(mut members: Vec<Entry>, contents: &[(&str, &[u8])]) -> Vec<Entry> {
    let resources: Vec<Value> = contents
        .iter()
        .map(|(path, bytes)| {
            serde_json::json!({
                "name": Path::new(path).file_name().unwrap().to_str().unwrap(),
                "path": path,
                "hash": format!("sha256:{}", sha256_hex(bytes)),
                "bytes": bytes.len(),
            })
        })
        .collect();
    let package = serde_json::to_vec_pretty(&serde_json::json!({
        "profile": "data-package",
        "resources": resources,
        "wacz_version": "1.1.1",
    }))
    .unwrap();
    let digest = serde_json::to_vec(&serde_json::json!({
        "path": "datapackage.json",
        "hash": format!("sha256:{}", sha256_hex(&package)),
    }))
    .unwrap();
    members.push(deflated("datapackage.json", &package));
    members.push(stored("datapackage-digest.json", &digest));
    members
}

/// A page list naming crawl1's home page (its time from wget's CDX of the crawl).
fn pages() -> Vec<u8> {
    let cdx = std::fs::read_to_string(fixture("crawl/crawl1.cdx")).unwrap();
    let ts = cdx
        .lines()
        .find_map(|l| l.strip_prefix("http://127.0.0.1:47213/ "))
        .and_then(|rest| rest.split(' ').next())
        .expect("crawl1's home page")
        .to_string();
    let iso = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &ts[0..4],
        &ts[4..6],
        &ts[6..8],
        &ts[8..10],
        &ts[10..12],
        &ts[12..14]
    );
    format!(
        "{{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}}\n\
         {{\"id\": \"p1\", \"url\": \"http://127.0.0.1:47213/\", \"ts\": \"{iso}\", \"title\": \"A page title\"}}\n"
    )
    .into_bytes()
}

/// A package of `fixtures/crawl/crawl1.warc.gz` (as `archive/crawl1.warc.gz`, stored or
/// deflated) with a page list and a correct datapackage.
fn crawl_package(deflate_warc: bool) -> Vec<Entry> {
    let warc = std::fs::read(fixture("crawl/crawl1.warc.gz")).unwrap();
    let member = if deflate_warc {
        deflated("archive/crawl1.warc.gz", &warc)
    } else {
        stored("archive/crawl1.warc.gz", &warc)
    };
    let pages = pages();
    with_datapackage(
        vec![member, stored("pages/pages.jsonl", &pages)],
        &[
            ("archive/crawl1.warc.gz", &warc),
            ("pages/pages.jsonl", &pages),
        ],
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Captures without where they are (which differs between a package and its WARC).
fn captures_ignoring_location(store: &Path) -> Vec<Value> {
    let mut captures = json_lines(&ok(store, &["captures", "--surt-prefix", ""]));
    for c in &mut captures {
        let object = c.as_object_mut().unwrap();
        for field in ["warc", "offset", "location", "source"] {
            object.remove(field);
        }
    }
    captures
}

/// Imports with `--json --rejects`; returns (exit status, report, problems).
fn import(store: &Path, input: &Path, rejects: &Path) -> (i32, Value, Vec<Value>) {
    let run = sediment(
        store,
        &[
            "import-warc",
            "--all-types",
            "--all-statuses",
            "--json",
            "--rejects",
            path(rejects),
            path(input),
        ],
    );
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("report: {e}\n{}\n{}", run.stdout, run.stderr));
    let problems = json_lines(&std::fs::read_to_string(rejects).unwrap_or_default());
    (run.status, report, problems)
}

/// The keys of the files in a store.
fn keys(store: &Path) -> BTreeSet<String> {
    json_lines(&ok(store, &["export"]))
        .into_iter()
        .map(|row| row["key"].as_str().unwrap().to_string())
        .collect()
}

fn cat(store: &Path, key: &str) -> Vec<u8> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(store)
        .args(["cat", key])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cat {key}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

fn cat_decoded(store: &Path, key: &str) -> Vec<u8> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(store)
        .args(["cat", "--decode", key])
        .output()
        .unwrap();
    assert!(output.status.success(), "cat --decode {key}");
    output.stdout
}

fn imports_like_its_warc(deflate_warc: bool) {
    let dir = tempfile::tempdir().unwrap();
    let package = write(
        dir.path(),
        "crawl1.wacz",
        &zip_bytes(&crawl_package(deflate_warc)),
    );
    let from_package = dir.path().join("a");
    let from_warc = dir.path().join("b");
    let (status, report, problems) = import(&from_package, &package, &dir.path().join("a.rej"));
    assert_eq!(status, 0, "{report}\n{problems:?}");
    assert!(problems.is_empty(), "{problems:?}");
    let counts = &report["counts"];
    assert_eq!(counts["wacz_packages"], 1, "{report}");
    assert_eq!(counts["wacz_warcs"], 1, "{report}");
    // Both members the datapackage lists, and the datapackage itself.
    assert_eq!(counts["wacz_hashes_checked"], 3, "{report}");
    assert_eq!(counts["wacz_pages"], 1, "{report}");
    assert_eq!(counts["wacz_page_titles"], 1, "{report}");
    let (status, _, _) = import(
        &from_warc,
        &fixture("crawl/crawl1.warc.gz"),
        &dir.path().join("b.rej"),
    );
    assert_eq!(status, 0);
    assert_eq!(
        captures_ignoring_location(&from_package),
        captures_ignoring_location(&from_warc)
    );
    let captures = json_lines(&ok(&from_package, &["captures", "--surt-prefix", ""]));
    assert!(!captures.is_empty());
    for c in &captures {
        if deflate_warc {
            assert!(
                c["warc"]
                    .as_str()
                    .unwrap()
                    .ends_with("crawl1.wacz#archive/crawl1.warc.gz"),
                "{c}"
            );
        } else {
            assert_eq!(c["warc"].as_str().unwrap(), path(&package), "{c}");
        }
    }
    // `cat` gives every payload back from the package, checked against its key.
    let keys = keys(&from_package);
    assert_eq!(keys, self::keys(&from_warc));
    for key in &keys {
        assert_eq!(cat(&from_package, key), cat(&from_warc, key), "{key}");
    }
    // And so does `serve`'s payload endpoint.
    let server = serve_support::Server::start(&from_package, &[]);
    for key in &keys {
        let reply = server.get(&format!("/payload/{key}"));
        assert_eq!(reply.status, 200, "{key}");
        assert_eq!(reply.body, cat(&from_warc, key), "{key}");
    }
    drop(server);
    // Importing the same package again is a no-op.
    let (status, report, _) = import(&from_package, &package, &dir.path().join("a2.rej"));
    assert_eq!(status, 0);
    assert_eq!(report["counts"]["inputs_skipped"], 1, "{report}");

    // Moved elsewhere, the package is found with --warc-dir, deflated members included.
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    let at = moved.join("crawl1.wacz");
    std::fs::rename(&package, &at).unwrap();
    let missing = common::sediment(&from_package, &["warcs", "--missing"]);
    assert!(missing.stdout.contains("missing"), "{}", missing.stdout);
    let warcs = ok(&from_package, &["warcs", "--warc-dir", path(&moved)]);
    assert!(warcs.starts_with("found\t"), "{warcs}");
    assert!(!warcs.contains("missing"), "{warcs}");
    let key = keys.iter().next().unwrap();
    let moved_cat = std::process::Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&from_package)
        .args(["cat", "--warc-dir", path(&moved), key])
        .output()
        .unwrap();
    assert!(moved_cat.status.success(), "{moved_cat:?}");
    assert_eq!(moved_cat.stdout, cat(&from_warc, key), "{key}");
    std::fs::rename(&at, &package).unwrap();

    // The store's JSON-lines form carries the page list too: a copy made from it exports
    // the same lines, title included.
    let whole = dir.path().join("whole.jsonl");
    ok(&from_package, &["export", "--captures", "-o", path(&whole)]);
    let exported = std::fs::read_to_string(&whole).unwrap();
    let pages: Vec<Value> = json_lines(&exported)
        .into_iter()
        .filter_map(|line| line.get("page").cloned())
        .collect();
    assert_eq!(pages.len(), 1, "{exported}");
    assert_eq!(pages[0]["title"], "A page title");
    assert_eq!(pages[0]["url"], "http://127.0.0.1:47213/");
    let copy = dir.path().join("copy");
    let imported = ok(&copy, &["import-jsonl", "--json", path(&whole)]);
    assert!(imported.contains("\"pages\":1"), "{imported}");
    let again = dir.path().join("again.jsonl");
    ok(&copy, &["export", "--captures", "-o", path(&again)]);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), exported);
}

#[test]
fn a_package_with_a_stored_warc_imports_like_the_warc_and_cat_reads_it_in_place() {
    imports_like_its_warc(false);
}

#[test]
fn a_package_with_a_deflated_warc_imports_like_the_warc_and_cat_inflates_it() {
    imports_like_its_warc(true);
}

/// Imports a hostile package; asserts exit status 3, that every reason in `expected` was
/// reported naming the package and `member`, and returns the store's file keys.
fn hostile(name: &str, entries: &[Entry], expected: &[(&str, &str)]) -> (BTreeSet<String>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let package = write(dir.path(), name, &zip_bytes(entries));
    let store = dir.path().join("store");
    let started = std::time::Instant::now();
    let (status, report, problems) = import(&store, &package, &dir.path().join("rej"));
    assert!(
        started.elapsed().as_secs() < 60,
        "{name} took {:?}",
        started.elapsed()
    );
    assert_eq!(status, 3, "{name}: {report}");
    eprintln!("{name}: {problems:#?}");
    for (member, reason) in expected {
        let file = format!("{}#{member}", path(&package));
        assert!(
            problems
                .iter()
                .any(|p| p["reason"] == *reason && p["file"] == file),
            "{name}: expected {reason} for {file} among {problems:#?}"
        );
    }
    let keys = if store.exists() {
        keys(&store)
    } else {
        BTreeSet::new()
    };
    (keys, report)
}

fn crawl1_keys() -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    import(
        &store,
        &fixture("crawl/crawl1.warc.gz"),
        &dir.path().join("r"),
    );
    keys(&store)
}

#[test]
fn a_hash_that_does_not_match_is_reported_and_counted_and_the_records_still_count() {
    let mut entries = crawl_package(false);
    // Another page list than the one the datapackage hashed.
    entries[1] = stored("pages/pages.jsonl", b"{\"format\": \"json-pages-1.0\"}\n");
    let (keys, report) = hostile(
        "wrong-hash.wacz",
        &entries,
        &[("pages/pages.jsonl", "wacz-hash-mismatch")],
    );
    assert_eq!(report["counts"]["wacz_hash_mismatches"], 1, "{report}");
    // The WARC's records carry their own digests: they are imported.
    assert_eq!(keys, crawl1_keys());
}

#[test]
fn a_member_named_to_escape_the_package_is_refused_and_the_rest_imported() {
    let mut entries = crawl_package(false);
    let warc = std::fs::read(fixture("crawl/crawl2.warc.gz")).unwrap();
    entries.insert(0, stored("archive/../../../tmp/evil.warc.gz", &warc));
    entries.insert(0, stored("/etc/evil.warc.gz", &warc));
    let (keys, report) = hostile(
        "escape.wacz",
        &entries,
        &[
            ("archive/../../../tmp/evil.warc.gz", "wacz-unsafe-name"),
            ("/etc/evil.warc.gz", "wacz-unsafe-name"),
        ],
    );
    assert_eq!(report["counts"]["wacz_members_refused"], 2, "{report}");
    assert_eq!(keys, crawl1_keys());
}

#[test]
fn zip_bombs_are_not_inflated_beyond_what_they_declare() {
    // 512 MiB of zeros deflate to about 500 KiB: one member says so (more than deflate can
    // reach is refused before inflating), one says it holds 1000 bytes (inflating stops
    // there).
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    let mut crc = crc32fast::Hasher::new();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..512 {
        encoder.write_all(&zeros).unwrap();
        crc.update(&zeros);
    }
    let bomb = Entry {
        name: "archive/bomb.warc".into(),
        method: 8,
        data: encoder.finish().unwrap(),
        crc: crc.finalize(),
        size: 512 << 20,
        ..Entry::default()
    };
    let mut honest_but_impossible = bomb.clone();
    honest_but_impossible.name = "archive/impossible.warc".into();
    honest_but_impossible.size = (bomb.data.len() as u64) * 2000;
    honest_but_impossible.cd_size = Some(honest_but_impossible.size.min(u32::MAX as u64));
    let mut lying = bomb;
    lying.size = 1000;
    let mut entries = crawl_package(false);
    entries.insert(0, lying);
    entries.insert(0, honest_but_impossible);
    let (keys, report) = hostile(
        "bomb.wacz",
        &entries,
        &[
            ("archive/bomb.warc", "wacz-zip-bomb"),
            ("archive/impossible.warc", "wacz-zip-bomb"),
        ],
    );
    assert_eq!(keys, crawl1_keys(), "{report}");
}

#[test]
fn a_central_directory_that_lies_is_reported_and_the_honest_members_imported() {
    let warc = std::fs::read(fixture("crawl/crawl2.warc.gz")).unwrap();
    let mut too_long = stored("archive/too-long.warc.gz", &warc);
    // Its data would run over the next member's.
    too_long.cd_compressed = Some(warc.len() as u64 + 100);
    too_long.cd_size = too_long.cd_compressed;
    let mut outside = stored("archive/outside.warc.gz", &warc);
    outside.cd_compressed = Some(1 << 30);
    outside.cd_size = outside.cd_compressed;
    let mut nowhere = stored("archive/nowhere.warc.gz", &warc);
    nowhere.cd_offset = Some(7);
    let mut bad_crc = stored("indexes/index.cdxj", b"com,example)/ 20200101000000 {}\n");
    bad_crc.crc ^= 1;
    let mut entries = vec![
        too_long,
        stored("logs/a.log", b"a log line\n"),
        outside,
        nowhere,
        bad_crc,
    ];
    entries.extend(crawl_package(false));
    let (keys, report) = hostile(
        "lying.wacz",
        &entries,
        &[
            ("archive/outside.warc.gz", "wacz-member-outside-file"),
            ("archive/nowhere.warc.gz", "wacz-member-unreadable"),
            ("archive/too-long.warc.gz", "wacz-crc-mismatch"),
            ("logs/a.log", "wacz-overlapping-members"),
            ("indexes/index.cdxj", "wacz-crc-mismatch"),
        ],
    );
    assert!(
        report["counts"]["wacz_members_refused"].as_u64().unwrap() >= 3,
        "{report}"
    );
    // The over-long member still yields crawl2's records (the extra bytes are reported);
    // crawl1's all come in.
    assert!(crawl1_keys().is_subset(&keys), "{report}");
}

/// `crawl_package` with `pages` (deflated) as its page list, hashed by its datapackage.
fn crawl_package_with_pages(pages: &[u8]) -> Vec<Entry> {
    let warc = std::fs::read(fixture("crawl/crawl1.warc.gz")).unwrap();
    with_datapackage(
        vec![
            stored("archive/crawl1.warc.gz", &warc),
            deflated("pages/pages.jsonl", pages),
        ],
        &[
            ("archive/crawl1.warc.gz", &warc),
            ("pages/pages.jsonl", pages),
        ],
    )
}

#[test]
fn an_overlong_page_line_is_reported_at_its_line_and_offset_and_the_next_page_kept() {
    // The page list's cap is 1 MiB; the long line is a page whose title runs past it.
    let good = pages();
    let header_len = good.iter().position(|&b| b == b'\n').unwrap() + 1;
    let long = format!(
        "{{\"id\": \"p0\", \"url\": \"http://127.0.0.1:47213/long\", \"title\": \"{}\"}}\n",
        "t".repeat((1 << 20) + 10)
    );
    let mut list = good[..header_len].to_vec();
    list.extend_from_slice(long.as_bytes());
    list.extend_from_slice(&good[header_len..]);
    let dir = tempfile::tempdir().unwrap();
    let package = write(
        dir.path(),
        "long-page.wacz",
        &zip_bytes(&crawl_package_with_pages(&list)),
    );
    let store = dir.path().join("store");
    let (status, report, problems) = import(&store, &package, &dir.path().join("rej"));
    assert_eq!(status, 3, "{report}");
    let file = format!("{}#pages/pages.jsonl", path(&package));
    let capped: Vec<&Value> = problems
        .iter()
        .filter(|p| p["reason"] == "wacz-page-line")
        .collect();
    assert_eq!(capped.len(), 1, "{problems:#?}");
    assert_eq!(capped[0]["file"], file.as_str());
    assert_eq!(capped[0]["line"], 2);
    assert_eq!(capped[0]["offset"], header_len as u64);
    assert_eq!(
        capped[0]["message"],
        format!(
            "a page line longer than 1048576 bytes ({} bytes), skipped",
            long.len() - 1
        )
    );
    let counts = &report["counts"];
    assert_eq!(counts["wacz_page_errors"], 1, "{report}");
    // The page after it is kept, and nothing else is wrong with the package.
    assert_eq!(counts["wacz_pages"], 1, "{report}");
    assert_eq!(counts["wacz_page_titles"], 1, "{report}");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(keys(&store), crawl1_keys());
}

#[test]
fn a_page_list_damaged_midway_keeps_its_complete_pages_and_is_reported_damaged() {
    // The page list inflates to its first lines (a header and 20,000 pages, more than
    // one read of the line reader, so that inflating gives them before it fails), then
    // meets a deflate block of the reserved type: an inflate error in the middle of the
    // member.
    let one = pages();
    let header_len = one.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut good = one.clone();
    for _ in 1..20_000 {
        good.extend_from_slice(&one[header_len..]);
    }
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&good).unwrap();
    encoder.flush().unwrap();
    let mut data = encoder.get_ref().clone();
    data.push(0x07);
    data.extend_from_slice(&[0u8; 64]);
    let mut whole = good.clone();
    whole.extend_from_slice(
        b"{\"url\": \"http://127.0.0.1:47213/never\", \"ts\": \"20200101000000\"}\n",
    );
    let damaged = Entry {
        name: "pages/pages.jsonl".into(),
        method: 8,
        data,
        crc: crc32fast::hash(&whole),
        size: whole.len() as u64,
        ..Entry::default()
    };
    let mut entries = crawl_package_with_pages(&whole);
    entries[1] = damaged;
    let (keys, report) = hostile(
        "damaged-pages.wacz",
        &entries,
        &[("pages/pages.jsonl", "wacz-member-damaged")],
    );
    let counts = &report["counts"];
    assert_eq!(counts["wacz_members_damaged"], 1, "{report}");
    // The complete lines before the damage are kept (not necessarily all 20,000: the read
    // that meets the damage gives nothing).
    let pages = counts["wacz_pages"].as_u64().unwrap();
    assert!((1000..=20_000).contains(&pages), "{report}");
    assert_eq!(keys, crawl1_keys());
}

#[test]
fn something_that_is_not_a_zip_is_reported_as_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let package = write(dir.path(), "not.wacz", b"WARC/1.0\r\nthis is no zip\r\n");
    let (status, report, problems) = import(&dir.path().join("s"), &package, &dir.path().join("r"));
    assert_eq!(status, 3, "{report}");
    assert!(
        problems.iter().any(|p| p["reason"] == "wacz-unreadable"),
        "{problems:?}"
    );
}

// ---------------------------------------------------------------------------------------
// export-wacz

/// A store of the two fixture crawls (crawl2's unchanged pages are revisits of crawl1's).
fn crawl_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    for warc in ["crawl/crawl1.warc.gz", "crawl/crawl2.warc.gz"] {
        let (status, report, _) = import(&store, &fixture(warc), &dir.join("import.rej"));
        assert_eq!(status, 0, "{report}");
    }
    store
}

/// The 14-digit time of crawl2 (every capture of it shares the day; crawl1 is earlier).
fn crawl2_day(store: &Path) -> String {
    let captures = json_lines(&ok(store, &["captures", "--surt-prefix", ""]));
    let revisit = captures
        .iter()
        .find(|c| c["kind"] == "revisit")
        .expect("crawl2 has revisits");
    revisit["ts"].as_str().unwrap().to_string()
}

fn export(store: &Path, output: &Path, selection: &[&str]) -> Value {
    let mut args = vec!["export-wacz", "--json", "-o", path(output)];
    args.extend_from_slice(selection);
    let run = sediment(store, &args);
    assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
    // Made to be served: readable by others (not a temporary file's 0600).
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(output).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644, "{mode:o}");
    serde_json::from_str(&run.stdout).unwrap()
}

/// Reads a package with Python's zipfile, hashlib and warcio: every member stored, every
/// datapackage hash and size right, the digest file right, and each index line's record
/// at its offset the record of its URL and time. Prints what it counted.
const CHECK_PACKAGE: &str = r#"
import hashlib, io, json, sys, zipfile
from warcio.archiveiterator import ArchiveIterator
from warcio.timeutils import iso_date_to_timestamp
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
for info in z.infolist():
    assert info.compress_type == zipfile.ZIP_STORED, info.filename
package_bytes = z.read("datapackage.json")
package = json.loads(package_bytes)
assert package["profile"] == "data-package", package["profile"]
assert package["wacz_version"] == "1.1.1"
paths = set()
for r in package["resources"]:
    data = z.read(r["path"])
    assert r["hash"] == "sha256:" + hashlib.sha256(data).hexdigest(), r
    assert r["bytes"] == len(data), r
    paths.add(r["path"])
assert paths == set(z.namelist()) - {"datapackage.json", "datapackage-digest.json"}, paths
digest = json.loads(z.read("datapackage-digest.json"))
assert digest["path"] == "datapackage.json"
assert digest["hash"] == "sha256:" + hashlib.sha256(package_bytes).hexdigest()
kinds = {}
lines = z.read("indexes/index.cdx").decode().splitlines()
assert lines == sorted(lines)
for line in lines:
    surt, ts, fields = line.split(" ", 2)
    fields = json.loads(fields)
    data = z.read("archive/" + fields["filename"])
    start = int(fields["offset"])
    blob = data[start:start + int(fields["length"])]
    record = next(iter(ArchiveIterator(io.BytesIO(blob))))
    assert record.rec_headers.get_header("WARC-Target-URI") == fields["url"], (line, record.rec_headers)
    assert iso_date_to_timestamp(record.rec_headers.get_header("WARC-Date")) == ts, line
    kinds[record.rec_type] = kinds.get(record.rec_type, 0) + 1
pages = z.read("pages/pages.jsonl").decode().splitlines()
assert json.loads(pages[0])["format"] == "json-pages-1.0"
print(json.dumps({"kinds": kinds, "lines": len(lines), "pages": len(pages) - 1,
                  "titles": [json.loads(p).get("title") for p in pages[1:]]}))
"#;

fn check_package(package: &Path) -> Option<Value> {
    if !common::have_python(&["warcio"]) {
        return None;
    }
    let out = std::process::Command::new("python3")
        .args(["-c", CHECK_PACKAGE, path(package)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the package check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn an_exported_package_reads_back_in_python_with_the_originals_of_its_revisits() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let day = crawl2_day(&store)[..8].to_string();
    let package = dir.path().join("crawl2.wacz");
    // Only crawl2's captures: its revisits need crawl1's originals in the package.
    let report = export(&store, &package, &["--from", &day, "--to", &day]);
    let counts = &report["counts"];
    let revisits = json_lines(&ok(
        &store,
        &[
            "captures",
            "--surt-prefix",
            "",
            "--from",
            &day,
            "--to",
            &day,
        ],
    ))
    .into_iter()
    .filter(|c| c["kind"] == "revisit")
    .count() as u64;
    assert!(revisits > 0);
    assert!(
        counts["revisit_originals"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert_eq!(counts.get("revisit_originals_missing"), None, "{report}");
    let Some(checked) = check_package(&package) else {
        return;
    };
    assert_eq!(checked["kinds"]["revisit"], revisits, "{checked}");
    let records: u64 = checked["kinds"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(
        records,
        counts["records"].as_u64().unwrap() + counts["revisit_originals"].as_u64().unwrap(),
        "{checked}\n{report}"
    );
    assert!(checked["pages"].as_u64().unwrap() > 0, "{checked}");

    // The package goes back in: the same payloads, each one readable from the package.
    let again = dir.path().join("again");
    let (status, report, problems) = import(&again, &package, &dir.path().join("again.rej"));
    assert_eq!(status, 0, "{report}\n{problems:?}");
    for key in keys(&again) {
        assert_eq!(cat(&again, &key), cat(&store, &key), "{key}");
    }
}

#[test]
fn page_titles_of_an_imported_package_come_back_out_in_the_exported_one() {
    let dir = tempfile::tempdir().unwrap();
    let package = write(dir.path(), "in.wacz", &zip_bytes(&crawl_package(false)));
    let store = dir.path().join("store");
    let (status, report, _) = import(&store, &package, &dir.path().join("rej"));
    assert_eq!(status, 0, "{report}");
    let out = dir.path().join("out.wacz");
    export(&store, &out, &["--url", "http://127.0.0.1:47213/*"]);
    let Some(checked) = check_package(&out) else {
        return;
    };
    let titles: Vec<&str> = checked["titles"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(titles.contains(&"A page title"), "{checked}");
}

// ---------------------------------------------------------------------------------------
// Real clients: py-wacz writes a package, pywb replays ours.

#[test]
fn a_package_written_by_py_wacz_imports_with_the_captures_of_its_warc() {
    let warc = common::corpus("pywb/sample_archive/warcs/iana.warc.gz");
    let Some(warc) = warc else {
        return;
    };
    if !serve_support::have("wacz", &["--version"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("iana.wacz");
    let out = std::process::Command::new("wacz")
        .args([
            "create",
            "--detect-pages",
            "-o",
            path(&package),
            path(&warc),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wacz create: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (status_package, report, problems) =
        import(&dir.path().join("a"), &package, &dir.path().join("a.rej"));
    let (status_warc, _, warc_problems) =
        import(&dir.path().join("b"), &warc, &dir.path().join("b.rej"));
    assert_eq!(status_package, status_warc, "{report}\n{problems:?}");
    assert_eq!(problems.len(), warc_problems.len(), "{problems:?}");
    let counts = &report["counts"];
    // index.cdx.gz, index.idx, the WARC, pages.jsonl, and the datapackage itself.
    assert_eq!(counts["wacz_hashes_checked"], 5, "{report}");
    assert!(counts["wacz_pages"].as_u64().unwrap() > 0, "{report}");
    let captures = captures_ignoring_location(&dir.path().join("a"));
    assert!(captures.len() > 100);
    assert_eq!(captures, captures_ignoring_location(&dir.path().join("b")));
    let keys = keys(&dir.path().join("a"));
    for key in keys.iter().take(20) {
        assert_eq!(
            cat(&dir.path().join("a"), key),
            cat(&dir.path().join("b"), key)
        );
    }
}

/// pywb's `wayback` on a collection directory; killed when dropped.
struct Pywb {
    child: std::process::Child,
    port: u16,
}

impl Drop for Pywb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn pywb_replays_an_exported_package_revisits_included() {
    if !serve_support::have("wb-manager", &["--help"])
        || !serve_support::have("wayback", &["--help"])
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let day = crawl2_day(&store)[..8].to_string();
    let package = dir.path().join("crawl2.wacz");
    export(&store, &package, &["--from", &day, "--to", &day]);
    let pywb_dir = dir.path().join("pywb");
    std::fs::create_dir(&pywb_dir).unwrap();
    for args in [
        vec!["init", "coll"],
        vec!["add", "--unpack-wacz", "coll", path(&package)],
    ] {
        let out = std::process::Command::new("wb-manager")
            .args(&args)
            .current_dir(&pywb_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wb-manager {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(dir.path().join("pywb.log")).unwrap();
    let child = std::process::Command::new("wayback")
        .args(["-p", &port.to_string(), "-b", "127.0.0.1"])
        .current_dir(&pywb_dir)
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let pywb = Pywb { child, port };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while serve_support::agent()
        .get(&format!(
            "http://127.0.0.1:{}/coll/cdx?url=127.0.0.1:47213/",
            pywb.port
        ))
        .call()
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "pywb did not start: {}",
            std::fs::read_to_string(dir.path().join("pywb.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Every selected capture replays as its payload; a revisit as its original's.
    let captures = json_lines(&ok(
        &store,
        &[
            "captures",
            "--surt-prefix",
            "",
            "--from",
            &day,
            "--to",
            &day,
        ],
    ));
    let mut revisits = 0;
    let mut replayed = 0;
    for c in &captures {
        if c["status"] != 200 {
            continue;
        }
        let (url, ts, key) = (
            c["url"].as_str().unwrap(),
            c["ts"].as_str().unwrap(),
            c["digest"].as_str().unwrap(),
        );
        let reply = serve_support::get(&format!(
            "http://127.0.0.1:{}/coll/{ts}id_/{url}",
            pywb.port
        ));
        assert_eq!(reply.status, 200, "pywb replays {url} at {ts}");
        // pywb's id_ replay gives the body de-chunked.
        assert_eq!(
            reply.body,
            cat_decoded(&store, key),
            "pywb's {url} at {ts} is {key}"
        );
        replayed += 1;
        if c["kind"] == "revisit" {
            revisits += 1;
        }
    }
    assert!(
        replayed > 0 && revisits > 0,
        "{replayed} replayed, {revisits} revisits"
    );
}

#[test]
fn a_directory_of_warcs_and_packages_imports_both() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    write(&inputs, "crawl1.wacz", &zip_bytes(&crawl_package(false)));
    std::fs::copy(
        fixture("crawl/crawl2.warc.gz"),
        inputs.join("crawl2.warc.gz"),
    )
    .unwrap();
    let (status, report, problems) = import(&dir.path().join("s"), &inputs, &dir.path().join("r"));
    assert_eq!(status, 0, "{report}\n{problems:?}");
    assert_eq!(report["counts"]["inputs"], 2, "{report}");
    assert_eq!(report["counts"]["wacz_packages"], 1, "{report}");
}
