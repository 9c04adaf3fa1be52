//! CDX backfill (issue 3) on real CDX files: rows, cell shapes, duplicates and revisits,
//! filters, rejects, re-runs, order independence.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{corpus, fixture, json_lines, ok, sediment};
use serde_json::Value;

/// The 11-column lines of a CDX file, split here without the code under test.
fn cdx11_lines(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect()
}

fn is_base32_sha1(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
}

fn export_by_key(store: &Path) -> BTreeMap<String, Value> {
    json_lines(&ok(store, &["export"]))
        .into_iter()
        .map(|row| (row["key"].as_str().unwrap().to_string(), row))
        .collect()
}

#[test]
fn sandcrawler_example_cdx_rows_and_cell_shapes() {
    let Some(cdx) = corpus("sandcrawler/example.cdx") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let run = sediment(&store, &["backfill-cdx", cdx.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);

    let lines = cdx11_lines(&cdx);
    assert_eq!(lines.len(), 20);
    // Expected: one row per distinct digest among HTTP 200 lines, first capture by
    // (timestamp, WARC name, offset), count = number of such lines.
    let mut expected: BTreeMap<String, Vec<&Vec<String>>> = BTreeMap::new();
    for l in &lines {
        if l[4] == "200" && is_base32_sha1(&l[5]) {
            expected.entry(l[5].clone()).or_default().push(l);
        }
    }
    let rows = export_by_key(&store);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    assert_eq!(rows.len(), 9, "7 PDFs, 1 HTML page, 1 robots.txt");
    for (key, caps) in &expected {
        let mut caps = caps.clone();
        caps.sort_by(|a, b| {
            (
                &a[1],
                a[10].rsplit('/').next(),
                a[9].parse::<u64>().unwrap(),
            )
                .cmp(&(
                    &b[1],
                    b[10].rsplit('/').next(),
                    b[9].parse::<u64>().unwrap(),
                ))
        });
        let first = caps[0];
        let row = &rows[key];
        let ts = &first[1];
        let d = format!(
            "{}-{}-{}T{}:{}:{}Z",
            &ts[0..4],
            &ts[4..6],
            &ts[6..8],
            &ts[8..10],
            &ts[10..12],
            &ts[12..14]
        );
        assert_eq!(
            row["f:c"],
            serde_json::json!({
                "c": caps.len(),
                "d": d,
                "f": first[10].rsplit('/').next().unwrap(),
                "o": first[9].parse::<u64>().unwrap(),
                "u": first[2],
            }),
            "{key}"
        );
        assert_eq!(
            row["file:cdx"],
            serde_json::json!({
                "surt": first[0],
                "url": first[2],
                "dt": first[1],
                "warc": first[10],
                "offset": first[9].parse::<u64>().unwrap(),
                "c_size": first[8].parse::<u64>().unwrap(),
            }),
            "{key}"
        );
        assert_eq!(row["file:mime"], first[3].as_str(), "{key}");
        assert!(
            row.get("file:size").is_none(),
            "CDX does not know the payload size"
        );
        // the JSON cells are stored with sorted keys, as the HBase dumps show them
        let text = serde_json::to_string(&row["f:c"]).unwrap();
        assert!(text.starts_with("{\"c\":"), "{text}");
    }
    // every line is a capture, whatever its status
    let stats: Value = serde_json::from_str(&ok(&store, &["stats", "--json"])).unwrap();
    assert_eq!(stats["captures"], 20);
    assert!(run.stderr.contains("lines 20"), "{}", run.stderr);
    assert!(run.stderr.contains("captures 20"), "{}", run.stderr);
    assert!(run.stderr.contains("rows_written 9"), "{}", run.stderr);
    // captures folded into a row beyond its first one
    let duplicates: usize = expected.values().map(|caps| caps.len() - 1).sum();
    let reported = format!("duplicates {duplicates}");
    if duplicates == 0 {
        assert!(!run.stderr.contains("duplicates"), "{}", run.stderr);
    } else {
        assert!(run.stderr.contains(&reported), "{}", run.stderr);
    }
}

#[test]
fn filters_select_rows() {
    let Some(cdx) = corpus("sandcrawler/example.cdx") else {
        return;
    };
    let lines = cdx11_lines(&cdx);
    let dir = tempfile::tempdir().unwrap();
    let cdx = cdx.to_str().unwrap();

    let pdf = dir.path().join("pdf");
    ok(&pdf, &["backfill-cdx", cdx, "--mime", "application/pdf"]);
    let want: BTreeSet<&str> = lines
        .iter()
        .filter(|l| l[4] == "200" && l[3] == "application/pdf")
        .map(|l| l[5].as_str())
        .collect();
    let got = export_by_key(&pdf);
    assert_eq!(
        got.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        want
    );
    assert_eq!(want.len(), 7);

    // The default: HTTP 200 captures of full-text types (here PDF, HTML, plain text).
    let default = dir.path().join("default");
    ok(&default, &["backfill-cdx", cdx]);
    let want: BTreeSet<&str> = lines
        .iter()
        .filter(|l| {
            l[4] == "200" && ["application/pdf", "text/html", "text/plain"].contains(&l[3].as_str())
        })
        .map(|l| l[5].as_str())
        .collect();
    assert_eq!(
        export_by_key(&default)
            .keys()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        want
    );

    let all = dir.path().join("all");
    ok(
        &all,
        &["backfill-cdx", cdx, "--all-statuses", "--all-types"],
    );
    // Every line with a digest, but the `whois://` one: a lookup the crawler made, not a
    // file of the web, kept as a capture without a row (`FileFilter::is_web_fetch`, as
    // every projection skips it).
    let want: BTreeSet<&str> = lines
        .iter()
        .filter(|l| is_base32_sha1(&l[5]) && !l[2].starts_with("whois://"))
        .map(|l| l[5].as_str())
        .collect();
    let got = export_by_key(&all);
    let whois: Vec<_> = lines
        .iter()
        .filter(|l| l[2].starts_with("whois://"))
        .collect();
    assert_eq!(whois.len(), 1);
    let captures = json_lines(&ok(&all, &["captures", "--digest", &whois[0][5]]));
    assert_eq!(captures.len(), 1, "the whois capture is kept");
    assert_eq!(captures[0]["url"], whois[0][2].as_str());
    assert_eq!(
        got.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        want
    );
    // the empty-file digest is on 4 redirect lines
    let empty = &got["3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"];
    assert_eq!(empty["f:c"]["c"], 4);

    let redirects = dir.path().join("redirects");
    ok(
        &redirects,
        &["backfill-cdx", cdx, "--status", "301,302", "--all-types"],
    );
    let want: BTreeSet<&str> = lines
        .iter()
        .filter(|l| l[4] == "301" || l[4] == "302")
        .map(|l| l[5].as_str())
        .collect();
    let got = export_by_key(&redirects);
    assert_eq!(
        got.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        want
    );
}

#[test]
fn revisits_count_as_captures_of_their_digest() {
    let Some(cdx) = corpus("pywb/sample_archive/cdx/dupes.cdx") else {
        return;
    };
    let lines = cdx11_lines(&cdx);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    // Every type: the revisited digests here include a script.
    ok(
        &store,
        &["backfill-cdx", "--all-types", cdx.to_str().unwrap()],
    );
    let rows = export_by_key(&store);
    let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
    for l in &lines {
        if l[4] == "200" {
            *expected.entry(&l[5]).or_default() += 1;
        }
    }
    for l in &lines {
        if l[3] == "warc/revisit"
            && let Some(c) = expected.get_mut(l[5].as_str())
        {
            *c += 1;
        }
    }
    assert!(
        expected.values().any(|&c| c > 1),
        "the file has revisits of stored digests"
    );
    assert_eq!(rows.len(), expected.len());
    for (key, count) in expected {
        assert_eq!(rows[key]["f:c"]["c"], count, "{key}");
    }
}

#[test]
fn wget_cdx_gets_computed_surts_and_no_compressed_size() {
    let cdx = fixture("crawl/crawl1.cdx");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let run = sediment(&store, &["backfill-cdx", cdx.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("problems 0"), "{}", run.stderr);
    let rows = json_lines(&ok(&store, &["export"]));
    assert!(!rows.is_empty());
    let urls: Vec<String> = rows
        .iter()
        .map(|r| r["file:cdx"]["url"].as_str().unwrap().to_string())
        .collect();
    for row in &rows {
        let cdx = &row["file:cdx"];
        assert!(
            cdx.get("c_size").is_none(),
            "wget's CDX has no compressed length: {cdx}"
        );
        assert!(cdx["offset"].is_u64());
        assert_eq!(cdx["warc"], "crawl1.warc.gz");
        assert!(
            row["f:c"]["i"].as_str().unwrap().starts_with("urn:uuid:"),
            "{row}"
        );
    }
    // SURTs equal the Python surt package's.
    if !common::have_python(&["surt"]) {
        return;
    }
    let script = "import sys, surt\nfor u in sys.stdin.read().split('\\n'):\n    print(surt.surt(u)) if u else None";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run python3");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(urls.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 with surt failed");
    let want: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    let got: Vec<&str> = rows
        .iter()
        .map(|r| r["file:cdx"]["surt"].as_str().unwrap())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn every_reject_reason_is_reported_and_valid_lines_land() {
    let dir = tempfile::tempdir().unwrap();
    let good = "org,example)/a.pdf 20170706005950 http://example.org/a.pdf application/pdf 200 MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V - - 361006 17120058 CRAWL/a.warc.gz";
    let bad = [
        (
            "too_few_columns",
            "org,example)/b 20170706005950 http://example.org/b text/html 200",
        ),
        (
            "bad_timestamp",
            "org,example)/c 2017x706005950 http://example.org/c text/html 200 KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR - - 1 2 a.warc.gz",
        ),
        (
            "bad_offset",
            "org,example)/d 20170706005950 http://example.org/d text/html 200 KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR - - 1 -5 a.warc.gz",
        ),
        (
            "bad_size",
            "org,example)/e 20170706005950 http://example.org/e text/html 200 KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR - - big 2 a.warc.gz",
        ),
        (
            "bad_digest",
            "org,example)/f 20170706005950 http://example.org/f text/html 200 NOT-A-DIGEST - - 1 2 a.warc.gz",
        ),
        (
            "bad_status",
            "org,example)/g 20170706005950 http://example.org/g text/html 2x0 KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR - - 1 2 a.warc.gz",
        ),
    ];
    let mut text = String::from(" CDX N b a m s k r M S V g\n# a comment\n");
    text.push_str(good);
    text.push('\n');
    for (_, line) in &bad {
        text.push_str(line);
        text.push('\n');
    }
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"org,example)/h 20170706005950 http://example.org/\xff text/html 200 KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR - - 1 2 a.warc.gz\n");
    bytes.extend_from_slice(b"org,example)/z.pdf 20180706005950 http://example.org/z.pdf application/pdf 200 KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR - - 344175 255650124 CRAWL/b.warc.gz\n");
    let path = dir.path().join("bad.cdx");
    std::fs::write(&path, &bytes).unwrap();
    let rejects = dir.path().join("rejects.jsonl");
    let store = dir.path().join("s");
    let run = sediment(
        &store,
        &[
            "backfill-cdx",
            path.to_str().unwrap(),
            "--rejects",
            rejects.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status, 3, "done, with rejected lines: {}", run.stderr);
    let reject_lines = json_lines(&std::fs::read_to_string(&rejects).unwrap());
    let reasons: Vec<&str> = reject_lines
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = bad.iter().map(|(r, _)| *r).collect();
    want.push("not_utf8");
    assert_eq!(reasons, want);
    // line numbers count the header and the comment
    assert_eq!(reject_lines[0]["line"], 4);
    assert_eq!(reject_lines[0]["raw"], bad[0].1);
    assert!(
        run.stderr
            .contains(&format!("{}:4: too_few_columns", path.display())),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("problems 7"), "{}", run.stderr);
    let rows = export_by_key(&store);
    assert_eq!(rows.len(), 2, "both valid lines land: {rows:?}");

    let strict = sediment(
        &dir.path().join("s2"),
        &["backfill-cdx", "--strict", path.to_str().unwrap()],
    );
    assert_ne!(strict.status, 0);
    assert!(strict.stderr.contains("--strict"), "{}", strict.stderr);
}

#[test]
fn reruns_are_no_ops_and_order_does_not_matter() {
    let (Some(a), Some(b)) = (
        corpus("sandcrawler/example.cdx"),
        corpus("pywb/sample_archive/cdx/iana.cdx"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let one = dir.path().join("one");
    ok(&one, &["backfill-cdx", a, b, "--threads", "1"]);
    let first = ok(&one, &["export"]);
    let again = sediment(&one, &["backfill-cdx", a, b]);
    assert!(
        again.stderr.contains("already ingested"),
        "{}",
        again.stderr
    );
    assert_eq!(ok(&one, &["export"]), first);
    ok(&one, &["backfill-cdx", "--force", a]);
    assert_eq!(ok(&one, &["export"]), first, "re-applying changes nothing");

    let two = dir.path().join("two");
    ok(&two, &["backfill-cdx", b, "--threads", "2"]);
    ok(&two, &["backfill-cdx", a, "--threads", "2"]);
    assert_eq!(
        ok(&two, &["export"]),
        first,
        "same rows whatever the order and threads"
    );
}

#[test]
fn real_cdx_files_of_every_dialect_backfill() {
    for name in [
        "sandcrawler/papers_domain_words.cdx",
        "sandcrawler/papers_edu_tilde.cdx",
        "sandcrawler/papers_url_doi.cdx",
        "sandcrawler/papers_url_words.cdx",
        "sandcrawler/sourcecode.cdx",
        "sandcrawler/tarballs.cdx",
        "pywb/sample_archive/cdx/iana.cdx",
        "pywb/sample_archive/cdxj/iana.cdxj",
        "pywb/sample_archive/cdxj/example.cdx.gz",
        "pywb/sample_archive/non-surt-cdx/example-non-surt.cdx",
    ] {
        let Some(path) = corpus(name) else { return };
        // The pig test files carry a few hand-edited digests with 8s and 9s, which base32
        // does not have: those lines, and only those, are rejects.
        let bad_digests = std::fs::read_to_string(&path)
            .map(|text| {
                text.lines()
                    .filter(|l| !l.starts_with('#') && !l.starts_with(' '))
                    .filter_map(|l| l.split(' ').nth(5).map(str::to_string))
                    .filter(|d| {
                        d.len() == 32 && d.bytes().any(|b| matches!(b, b'0' | b'1' | b'8' | b'9'))
                    })
                    .count()
            })
            .unwrap_or(0);
        let dir = tempfile::tempdir().unwrap();
        let run = sediment(
            &dir.path().join("s"),
            &["backfill-cdx", path.to_str().unwrap()],
        );
        let status = if bad_digests == 0 { 0 } else { 3 };
        assert_eq!(run.status, status, "{name}: {}", run.stderr);
        if bad_digests == 0 {
            assert!(run.stderr.contains("problems 0"), "{name}: {}", run.stderr);
        } else {
            let want = format!("problems {bad_digests} (bad_digest: {bad_digests})");
            assert!(run.stderr.contains(&want), "{name}: {}", run.stderr);
        }
        assert!(!run.stderr.contains("captures 0"), "{name}: {}", run.stderr);
    }
}

#[test]
fn bulk_load_gives_the_same_store_as_the_normal_path() {
    let (Some(a), Some(b), Some(c)) = (
        corpus("sandcrawler/example.cdx"),
        corpus("pywb/sample_archive/cdx/dupes.cdx"),
        corpus("pywb/sample_archive/cdxj/iana.cdxj"),
    ) else {
        return;
    };
    let wget = fixture("crawl/crawl1.cdx");
    let files = [
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
        wget.to_str().unwrap(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let normal = dir.path().join("normal");
    let mut args = vec!["backfill-cdx", "--all-statuses"];
    args.extend(files);
    ok(&normal, &args);
    let want_rows = ok(&normal, &["export"]);
    let want_captures = ok(&normal, &["captures"]);

    // one batch, and many tiny batches (a limit of 0 MB writes one batch per chunk)
    for memory in ["2048", "0"] {
        let bulk = dir.path().join(format!("bulk-{memory}"));
        let mut bulk_args = args.clone();
        bulk_args.extend(["--bulk", "--bulk-memory-mb", memory]);
        let run = sediment(&bulk, &bulk_args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert!(run.stderr.contains("sst_files"), "{}", run.stderr);
        assert_eq!(ok(&bulk, &["export"]), want_rows, "bulk memory {memory}");
        assert_eq!(
            ok(&bulk, &["captures"]),
            want_captures,
            "bulk memory {memory}"
        );
    }
    // bulk on top of an existing store merges with what is there
    let mixed = dir.path().join("mixed");
    ok(
        &mixed,
        &["backfill-cdx", "--all-statuses", files[0], files[1]],
    );
    ok(
        &mixed,
        &[
            "backfill-cdx",
            "--all-statuses",
            "--bulk",
            files[2],
            files[3],
        ],
    );
    assert_eq!(ok(&mixed, &["export"]), want_rows);
}
