//! `export-captures --format parquet` read by DuckDB and Spark SQL: as many rows as
//! `sediment stats` counts captures, a query by `url_surtkey` prefix returns the captures
//! `sediment captures --surt-prefix` lists, and the example queries of Common Crawl's
//! cc-index-table run unchanged over the `crawl=…/subset=…/` partitions with the answers
//! computed here from `sediment captures`. Skips (common::skip) without the readers
//! (scripts/setup.sh installs them).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::{corpus, fixture, json_lines, ok, sediment};
use serde_json::Value;

/// The crawl name the export is given: the one the example queries of Common Crawl name.
const CRAWL: &str = "CC-MAIN-2018-05";

/// Runs a Python program with arguments; `None` after `common::skip` when a module it
/// needs (or, for pyspark, Java) is missing.
fn python(module: &str, program: &str, args: &[&str]) -> Option<String> {
    if !common::have_python(&[module]) || (module == "pyspark" && !common::have_java()) {
        return None;
    }
    let output = Command::new("python3")
        .arg("-c")
        .arg(program)
        .args(args)
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// A store with the fixture crawls and corpus WARCs, exported as Parquet in small files
/// (so a query spans several files and row groups).
fn exported(dir: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let store = dir.join("store");
    let inputs = [
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
        corpus("pywb/sample_archive/warcs/iana.warc.gz")?,
        corpus("pywb/sample_archive/warcs/dupes.warc.gz")?,
    ];
    let mut args = vec!["import-warc".to_string()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&store, &args);
    let cdx = corpus("pywb/sample_archive/cdx/example.cdx")?;
    ok(&store, &["backfill-cdx", cdx.to_str().unwrap()]);
    let out = dir.join("parquet");
    ok(
        &store,
        &[
            "export-captures",
            "--format",
            "parquet",
            "-o",
            out.to_str().unwrap(),
            "--file-rows",
            "50",
            "--crawl",
            CRAWL,
        ],
    );
    Some((store, out))
}

fn captures_count(store: &Path) -> u64 {
    let stats: serde_json::Value = serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
    stats["captures"].as_u64().unwrap()
}

/// (url_surtkey, fetch time as 14 digits, content_digest, warc_record_offset) of the
/// captures `sediment captures` lists under a SURT prefix, sorted.
fn listed(store: &Path, args: &[&str]) -> Vec<String> {
    let mut command = vec!["captures"];
    command.extend(args);
    let mut rows: Vec<String> = json_lines(&ok(store, &command))
        .iter()
        .map(|c| {
            format!(
                "{}|{}|{}|{}",
                c["surt"].as_str().unwrap(),
                c["ts"].as_str().unwrap(),
                c["digest"].as_str().unwrap_or(""),
                c["offset"]
                    .as_u64()
                    .map_or(String::new(), |o| o.to_string())
            )
        })
        .collect();
    rows.sort();
    rows
}

const DUCKDB: &str = r#"
import sys, duckdb
from datetime import datetime, timezone
files = sys.argv[1] + "/*/*/*.parquet"
con = duckdb.connect()
print(con.execute(f"select count(*) from read_parquet('{files}', hive_partitioning=1)").fetchone()[0])
for prefix in sys.argv[2:]:
    print("@@ " + prefix)
    rows = con.execute(f"""
      select url_surtkey, epoch_ms(fetch_time),
             coalesce(content_digest, ''), coalesce(cast(warc_record_offset as varchar), '')
      from read_parquet('{files}', hive_partitioning=1) where starts_with(url_surtkey, ?)""", [prefix]).fetchall()
    for surt, ms, digest, offset in rows:
        ts = datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y%m%d%H%M%S")
        print("|".join([surt, ts, digest, offset]))
"#;

const SPARK_SQL: &str = r#"
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").appName("parquet-test")
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark.read.parquet(sys.argv[1]).createOrReplaceTempView("ccindex")
print(spark.sql("select count(*) from ccindex").collect()[0][0])
for prefix in sys.argv[2:]:
    print("@@ " + prefix)
    rows = spark.sql("""
      select url_surtkey, date_format(fetch_time, 'yyyyMMddHHmmss') as ts,
             coalesce(content_digest, '') as d, coalesce(cast(warc_record_offset as string), '') as o
      from ccindex where startswith(url_surtkey, '%s')""" % prefix).collect()
    for r in rows:
        print("|".join(r))
spark.stop()
"#;

fn check_reader(module: &str, program: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some((store, out)) = exported(dir.path()) else {
        return;
    };
    let files = parquet_files(&out).len();
    assert!(files > 2, "small files: {files}");
    let prefixes = ["org,iana)/", "com,example)/"];
    let mut args = vec![out.to_str().unwrap()];
    args.extend(prefixes);
    let Some(text) = python(module, program, &args) else {
        return;
    };
    let mut sections = text.split("@@ ");
    let count: u64 = sections.next().unwrap().trim().parse().unwrap();
    assert_eq!(count, captures_count(&store), "{module}: row count");
    for (prefix, section) in prefixes.iter().zip(sections) {
        let mut lines = section.lines();
        assert_eq!(lines.next(), Some(*prefix));
        let mut rows: Vec<String> = lines.map(str::to_string).collect();
        rows.sort();
        let expected = listed(&store, &["--surt-prefix", prefix]);
        assert!(!expected.is_empty(), "captures under {prefix}");
        assert_eq!(rows, expected, "{module}: captures under {prefix}");
        if *prefix == "com,example)/" {
            // The same captures as a URL prefix query (`--match prefix`).
            let by_url = listed(
                &store,
                &["--url", "http://example.com/", "--match", "prefix"],
            );
            assert_eq!(rows, by_url, "{module}: captures --match prefix");
        }
    }
}

#[test]
fn duckdb_reads_the_parquet_capture_index() {
    check_reader("duckdb", DUCKDB);
}

#[test]
fn spark_sql_reads_the_parquet_capture_index() {
    check_reader("pyspark", SPARK_SQL);
}

/// The `.parquet` files under `dir`, relative to it.
fn parquet_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                let relative = path.strip_prefix(dir).unwrap();
                found.push(relative.display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn files_are_in_common_crawls_partition_directories() {
    let dir = tempfile::tempdir().unwrap();
    let Some((store, out)) = exported(dir.path()) else {
        return;
    };
    let files = parquet_files(&out);
    let in_partition = |subset: &str| {
        let prefix = format!("crawl={CRAWL}/subset={subset}/part-");
        files.iter().filter(|f| f.starts_with(&prefix)).count()
    };
    // The fixture crawls have redirects, 404s and a robots.txt.
    for subset in ["warc", "crawldiagnostics", "robotstxt"] {
        assert!(in_partition(subset) > 0, "{subset}: {files:?}");
    }
    assert_eq!(
        in_partition("warc") + in_partition("crawldiagnostics") + in_partition("robotstxt"),
        files.len(),
        "{files:?}"
    );
    // The same crawl again is refused; another crawl shares the directory.
    let again = sediment(
        &store,
        &[
            "export-captures",
            "-o",
            out.to_str().unwrap(),
            "--crawl",
            CRAWL,
        ],
    );
    assert_ne!(again.status, 0);
    assert!(
        again.stderr.contains("already holds an export of crawl"),
        "{}",
        again.stderr
    );
    ok(
        &store,
        &[
            "export-captures",
            "-o",
            out.to_str().unwrap(),
            "--crawl",
            "CC-MAIN-2018-09",
        ],
    );
    let bad = sediment(
        &store,
        &[
            "export-captures",
            "-o",
            out.to_str().unwrap(),
            "--crawl",
            "a/b",
        ],
    );
    assert!(
        bad.stderr.contains("cannot name a partition directory"),
        "{}",
        bad.stderr
    );
}

/// Example queries of Common Crawl's cc-index-table (src/sql/examples/cc-index/, as its
/// README lists them), as they are written there for Athena: the table `"ccindex"."ccindex"`
/// and the crawl `CC-MAIN-2018-05` (the name given to the export). Only literals naming a
/// domain or a top-level domain the fixtures do not have are changed, by `run_examples`.
const EXAMPLES: [(&str, &str); 6] = [
    (
        "count-by-partition",
        "-- count captures per partition (crawls and subsets):
-- how many pages are contained in the monthly crawl
-- archives (and are also indexed in the table)?
SELECT COUNT(*) as n_captures,
       crawl,
       subset
FROM \"ccindex\".\"ccindex\"
GROUP BY crawl, subset;",
    ),
    (
        "count-by-tld-page-host-domain",
        "-- page/host/domain count per TLD
SELECT COUNT(*) AS n_pages,
       url_host_tld AS tld,
       COUNT(DISTINCT url_host_name) AS n_hosts,
       COUNT(DISTINCT url_host_registered_domain) AS n_domains
FROM \"ccindex\".\"ccindex\"
WHERE crawl = 'CC-MAIN-2018-05'
  AND subset = 'warc'
GROUP BY  url_host_tld
ORDER BY  n_pages DESC;",
    ),
    (
        "count-fetch-status",
        "-- fetch status counts
-- (only for the 'crawldiagnostics' subset,
--  captures in the 'warc' subset have status 200)
SELECT COUNT(*) as count,
       fetch_status
FROM \"ccindex\".\"ccindex\"
WHERE crawl = 'CC-MAIN-2018-05'
  AND subset = 'crawldiagnostics'
GROUP BY  fetch_status
ORDER BY  count DESC;",
    ),
    (
        "count-domains-of-tld",
        "-- count domains (number of captured pages per domain)
--  of a single top-level domain (here: .no)
--  restricted to a single monthly crawl
--  and successfully fetched pages (subset = warc)
--  only show domains with at least 100 pages
SELECT COUNT(*) AS count,
       url_host_registered_domain
FROM \"ccindex\".\"ccindex\"
WHERE crawl = 'CC-MAIN-2018-05'
  AND subset = 'warc'
  AND url_host_tld = 'no'
GROUP BY  url_host_registered_domain
HAVING (COUNT(*) >= 100)
ORDER BY  count DESC;",
    ),
    (
        "get-records-of-domain",
        "-- export WARC record specs (file, offset, length)
--  - of a single domain
--  - limited to 1000 records
SELECT url,
       warc_filename,
       warc_record_offset,
       warc_record_length
FROM \"ccindex\".\"ccindex\"
WHERE crawl = 'CC-MAIN-2018-05'
  AND subset = 'warc'
  AND url_host_registered_domain = 'commoncrawl.org'
LIMIT 1000;",
    ),
    (
        "compare-mime-type-http-vs-detected",
        "-- confusion matrix MIME type:
--      Content-Type in HTTP response header sent by server
--   <> detected MIME type by Tika/Nutch (stored as WARC-Identified-Payload-Type)
SELECT COUNT(*) as n_pages,
       content_mime_type,
       content_mime_detected
FROM \"ccindex\".\"ccindex\"
WHERE crawl = 'CC-MAIN-2018-05'
  AND subset = 'warc'
GROUP BY content_mime_type,
         content_mime_detected
ORDER BY n_pages DESC;",
    ),
];

/// Registers the export as Common Crawl's table (`ccindex.ccindex`, and `ccindex` as the
/// brief examples name it) and prints each query's rows as one JSON line.
const DUCKDB_EXAMPLES: &str = r#"
import sys, json, duckdb
con = duckdb.connect()
con.execute("CREATE SCHEMA ccindex")
con.execute(f"""CREATE VIEW ccindex.ccindex AS SELECT * FROM
    read_parquet('{sys.argv[1]}/*/*/*.parquet', hive_partitioning=1)""")
con.execute("CREATE VIEW ccindex AS SELECT * FROM ccindex.ccindex")
queries = json.loads(sys.stdin.read())
for name, sql in queries:
    print(json.dumps([name, con.execute(sql).fetchall()], default=str))
"#;

/// The registered domain (Public Suffix List, ICANN section) of each host of the fixtures,
/// checked by hand; no private-section rule applies to them, so the private columns are
/// the same.
fn registered_domain(host: &str) -> Option<&'static str> {
    match host {
        "iana.org" | "www.iana.org" => Some("iana.org"),
        "example.com" | "www.example.com" => Some("example.com"),
        "gnu.org" => Some("gnu.org"),
        "127.0.0.1" => None,
        other => panic!("host {other} of the fixtures is not checked by hand yet"),
    }
}

/// What the test expects of one capture: host, TLD, registered domain and subset.
struct Expected {
    capture: Value,
    host: String,
    tld: Option<String>,
    domain: Option<&'static str>,
    subset: &'static str,
}

impl Expected {
    fn of(capture: Value) -> Expected {
        let url = url::Url::parse(capture["url"].as_str().unwrap()).unwrap();
        let host = url.host_str().unwrap().to_string();
        let tld = match url.host() {
            Some(url::Host::Domain(d)) => d.rsplit('.').next().map(str::to_string),
            _ => None,
        };
        let status = capture["status"].as_u64();
        // Common Crawl's subsets: robots.txt fetches; successful fetches and the revisits
        // of unchanged ones, which its crawler writes into the same WARC files; the rest.
        let subset = if url.path() == "/robots.txt" {
            "robotstxt"
        } else if capture["kind"] == "resource" || status == Some(200) {
            "warc"
        } else {
            "crawldiagnostics"
        };
        Expected {
            domain: registered_domain(&host),
            host,
            tld,
            subset,
            capture,
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn common_crawls_example_queries_run_unchanged_in_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let Some((store, out)) = exported(dir.path()) else {
        return;
    };
    let captures: Vec<Expected> = json_lines(&ok(&store, &["captures"]))
        .into_iter()
        .map(Expected::of)
        .collect();
    let mut queries: Vec<(&str, String)> = EXAMPLES
        .iter()
        .map(|(name, sql)| {
            // The fixtures have no .no domains nor commoncrawl.org.
            let sql = sql
                .replace("url_host_tld = 'no'", "url_host_tld = 'org'")
                .replace("'commoncrawl.org'", "'iana.org'");
            (*name, sql)
        })
        .collect();
    queries.push((
        "host-suffixes",
        "SELECT DISTINCT url_host_name, url_host_registry_suffix, url_host_registered_domain,
                url_host_private_suffix, url_host_private_domain FROM ccindex"
            .to_string(),
    ));
    queries.push((
        "unknown-columns",
        "SELECT count(*) FROM ccindex WHERE content_languages IS NULL
           AND content_truncated IS NULL AND warc_segment IS NULL"
            .to_string(),
    ));
    queries.push((
        "file-columns",
        format!(
            "SELECT name FROM parquet_schema('{}/crawl={CRAWL}/subset=warc/part-00000.parquet')
             WHERE num_children IS NULL",
            out.display()
        ),
    ));
    let input = serde_json::to_string(&queries).unwrap();
    let Some(text_out) =
        python_with_input("duckdb", DUCKDB_EXAMPLES, out.to_str().unwrap(), &input)
    else {
        return;
    };
    let answers: BTreeMap<String, Vec<Vec<Value>>> = text_out
        .lines()
        .map(|line| {
            let v: (String, Vec<Vec<Value>>) = serde_json::from_str(line).unwrap();
            v
        })
        .collect();
    let rows = |name: &str| -> BTreeSet<Vec<String>> {
        answers[name]
            .iter()
            .map(|row| row.iter().map(text).collect())
            .collect()
    };
    let in_subset = |subset: &'static str| captures.iter().filter(move |c| c.subset == subset);

    // count-by-partition: every capture in its subset, revisits of 200s among the pages.
    let mut expected = BTreeMap::new();
    for c in &captures {
        *expected.entry(c.subset).or_insert(0u64) += 1;
    }
    let expected: BTreeSet<Vec<String>> = expected
        .iter()
        .map(|(subset, n)| vec![n.to_string(), CRAWL.to_string(), subset.to_string()])
        .collect();
    assert_eq!(rows("count-by-partition"), expected, "count-by-partition");
    let revisits = in_subset("warc")
        .filter(|c| c.capture["kind"] == "revisit")
        .count();
    assert!(revisits > 0, "the fixtures have revisits of 200 responses");

    // count-by-tld-page-host-domain.
    // Pages, hosts and registered domains per TLD.
    type Counts<'a> = (u64, BTreeSet<&'a str>, BTreeSet<&'a str>);
    let mut per_tld: BTreeMap<Option<String>, Counts> = BTreeMap::new();
    for c in in_subset("warc") {
        let entry = per_tld.entry(c.tld.clone()).or_default();
        entry.0 += 1;
        entry.1.insert(&c.host);
        entry.2.extend(c.domain);
    }
    let expected: BTreeSet<Vec<String>> = per_tld
        .iter()
        .map(|(tld, (pages, hosts, domains))| {
            vec![
                pages.to_string(),
                tld.clone().unwrap_or("null".into()),
                hosts.len().to_string(),
                domains.len().to_string(),
            ]
        })
        .collect();
    assert!(expected.len() >= 3, "org, com and IP hosts: {expected:?}");
    assert_eq!(rows("count-by-tld-page-host-domain"), expected);

    // count-fetch-status.
    let mut per_status: BTreeMap<String, u64> = BTreeMap::new();
    for c in in_subset("crawldiagnostics") {
        *per_status.entry(text(&c.capture["status"])).or_default() += 1;
    }
    let expected: BTreeSet<Vec<String>> = per_status
        .iter()
        .map(|(status, n)| vec![n.to_string(), status.clone()])
        .collect();
    assert!(per_status.contains_key("404") && per_status.contains_key("301"));
    assert_eq!(rows("count-fetch-status"), expected);

    // count-domains-of-tld, for .org: iana.org, with its revisits past the 100 pages.
    let iana = in_subset("warc")
        .filter(|c| c.domain == Some("iana.org"))
        .count();
    assert!(iana >= 100, "iana.org pages: {iana}");
    assert_eq!(
        rows("count-domains-of-tld"),
        BTreeSet::from([vec![iana.to_string(), "iana.org".to_string()]])
    );

    // get-records-of-domain, for iana.org.
    let expected: BTreeSet<Vec<String>> = in_subset("warc")
        .filter(|c| c.domain == Some("iana.org"))
        .map(|c| {
            ["url", "warc", "offset", "c_size"]
                .iter()
                .map(|k| text(&c.capture[*k]))
                .collect()
        })
        .collect();
    assert_eq!(rows("get-records-of-domain"), expected);

    // compare-mime-type-http-vs-detected: every page once, HTML pages as HTML.
    let answer = rows("compare-mime-type-http-vs-detected");
    let pages: u64 = answer.iter().map(|r| r[0].parse::<u64>().unwrap()).sum();
    assert_eq!(pages, in_subset("warc").count() as u64);
    assert!(
        answer
            .iter()
            .any(|r| r[1] == "text/html" && r[2] == "text/html"),
        "{answer:?}"
    );

    // The suffix columns of every host, as checked by hand.
    let hosts: BTreeSet<&str> = captures.iter().map(|c| c.host.as_str()).collect();
    let expected: BTreeSet<Vec<String>> = hosts
        .iter()
        .map(|host| {
            let domain = registered_domain(host);
            let suffix = domain.map(|d| d.split_once('.').unwrap().1);
            let or_null = |v: Option<&str>| v.unwrap_or("null").to_string();
            vec![
                host.to_string(),
                or_null(suffix),
                or_null(domain),
                or_null(suffix),
                or_null(domain),
            ]
        })
        .collect();
    assert_eq!(rows("host-suffixes"), expected);

    // Columns Sediment does not know are there, and null.
    assert_eq!(
        rows("unknown-columns"),
        BTreeSet::from([vec![captures.len().to_string()]])
    );

    // The files' columns start with Common Crawl's flat schema, in its order (`crawl` and
    // `subset` are the partition directories).
    let columns: Vec<String> = answers["file-columns"]
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    let common_crawl = [
        "url_surtkey",
        "url",
        "url_host_name",
        "url_host_tld",
        "url_host_2nd_last_part",
        "url_host_3rd_last_part",
        "url_host_4th_last_part",
        "url_host_5th_last_part",
        "url_host_registry_suffix",
        "url_host_registered_domain",
        "url_host_private_suffix",
        "url_host_private_domain",
        "url_host_name_reversed",
        "url_protocol",
        "url_port",
        "url_path",
        "url_query",
        "fetch_time",
        "fetch_status",
        "fetch_redirect",
        "content_digest",
        "content_mime_type",
        "content_mime_detected",
        "content_charset",
        "content_languages",
        "content_truncated",
        "warc_record_id",
        "warc_filename",
        "warc_record_offset",
        "warc_record_length",
        "warc_segment",
    ];
    assert_eq!(&columns[..common_crawl.len()], common_crawl, "{columns:?}");
    assert!(!columns.iter().any(|c| c == "crawl" || c == "subset"));
}

/// Like `python`, with one argument and `input` on standard input.
fn python_with_input(module: &str, program: &str, arg: &str, input: &str) -> Option<String> {
    use std::io::Write;
    python(module, "pass", &[])?;
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(program)
        .arg(arg)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}
