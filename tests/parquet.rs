//! `export-captures --format parquet` read by DuckDB and Spark SQL: as many rows as
//! `sediment stats` counts captures, and a query by `url_surtkey` prefix returns the
//! captures `sediment captures --surt-prefix` lists. Skips (fails in strict mode) without the
//! readers (scripts/setup.sh installs them).

mod common;

use std::path::Path;
use std::process::Command;

use common::{corpus, fixture, json_lines, ok};

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
files = sys.argv[1] + "/*.parquet"
con = duckdb.connect()
print(con.execute(f"select count(*) from read_parquet('{files}')").fetchone()[0])
for prefix in sys.argv[2:]:
    print("@@ " + prefix)
    rows = con.execute(f"""
      select url_surtkey, epoch_ms(fetch_time),
             coalesce(content_digest, ''), coalesce(cast(warc_record_offset as varchar), '')
      from read_parquet('{files}') where starts_with(url_surtkey, ?)""", [prefix]).fetchall()
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
    let files = std::fs::read_dir(&out).unwrap().count();
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
