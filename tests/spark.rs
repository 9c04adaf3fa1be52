//! The Spark application (scripts/spark/sediment_spark.py) against single-process imports
//! of the same inputs: exports and captures byte for byte, with one and several key
//! ranges, with tasks killed once and retried, for WARC and CDX inputs. Skips (fails in
//! strict mode) when spark-submit, pyspark or Java is missing (scripts/setup.sh installs
//! them); the Sediment stages alone (extract, split-ranges, write-sst --sort, ingest-sst) always run.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Run, corpus, fixture, ok, sediment};

/// Whether Java, pyspark and its spark-submit are here; when not, `common::skip`.
fn spark_available() -> bool {
    common::have_java()
        && common::have_python(&["pyspark"])
        && common::have_program("spark-submit", common::SETUP)
}

/// Runs the Spark application on loopback; `master` like `local[2]`, `local[2,2]` to let
/// a failed task run again.
fn spark(master: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    spark_in(None, master, args, env)
}

/// [`spark`] with the driver in working directory `cwd`.
fn spark_in(cwd: Option<&Path>, master: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/spark/sediment_spark.py");
    let mut command = Command::new("spark-submit");
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let output = command
        .args(["--master", master])
        .args(["--conf", "spark.ui.enabled=false"])
        .args(["--conf", "spark.driver.host=127.0.0.1"])
        .args(["--conf", "spark.driver.bindAddress=127.0.0.1"])
        .args(["--conf", "spark.log.level=WARN"])
        .arg(script)
        .args(args)
        .env("SEDIMENT_BIN", env!("CARGO_BIN_EXE_sediment"))
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .envs(env.iter().copied())
        .output()
        .expect("run spark-submit");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn spark_ok(master: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let run = spark(master, args, env);
    assert!(
        run.status == 0 || run.status == 3,
        "spark-submit {args:?} failed ({}):\n{}\n{}",
        run.status,
        run.stdout,
        run.stderr
    );
    run
}

/// What must be equal between two stores: rows, captures, and the counts `stats` gives
/// (rows, cells, MIME types, payload bytes, captures, inputs).
fn contents(store: &Path) -> (String, String, serde_json::Value) {
    let mut stats: serde_json::Value =
        serde_json::from_str(&ok(store, &["stats", "--json"])).expect("stats JSON");
    stats
        .as_object_mut()
        .expect("stats object")
        .remove("store_bytes_on_disk");
    (ok(store, &["export"]), ok(store, &["captures"]), stats)
}

fn assert_same_store(single: &Path, spark: &Path) {
    let (a, b) = (contents(single), contents(spark));
    assert!(!a.0.is_empty() && !a.1.is_empty(), "the import found rows");
    assert!(a.0 == b.0, "exports differ");
    assert!(a.1 == b.1, "captures differ");
    assert_eq!(a.2, b.2, "stats differ");
}

fn strings(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

fn warc_inputs() -> Option<Vec<PathBuf>> {
    let mut inputs = vec![
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
        fixture("crawl/crawl1-plain.warc"),
    ];
    for name in [
        "pywb/sample_archive/warcs/iana.warc.gz",
        "pywb/sample_archive/warcs/dupes.warc.gz",
        "pywb/sample_archive/warcs/example-url-agnostic-revisit.warc.gz",
        "pywb/sample_archive/warcs/example-url-agnostic-orig.warc.gz",
        "warcio/test/data/example-iana.org-chunked.warc",
        "warcio/test/data/example-trunc.warc",
        "chatnoir-resiliparse/tests/data/warcfile.warc.gz",
    ] {
        inputs.push(corpus(name)?);
    }
    Some(inputs)
}

#[test]
fn spark_warc_import_equals_the_single_process_import_with_one_and_several_ranges() {
    if !spark_available() {
        return;
    }
    let Some(mut inputs) = warc_inputs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A byte copy under another name: the same content hash, two inputs.
    let copy = dir.path().join("copy-of-crawl1.warc.gz");
    std::fs::copy(fixture("crawl/crawl1.warc.gz"), &copy).unwrap();
    inputs.push(copy);
    let inputs = strings(&inputs);
    let single = dir.path().join("single");
    let mut args = vec!["import-warc"];
    args.extend(inputs.iter().map(String::as_str));
    let run = sediment(&single, &args);
    assert!(run.status == 0 || run.status == 3, "{}", run.stderr);

    for ranges in ["1", "4"] {
        let store = dir.path().join(format!("spark-{ranges}"));
        let store_arg = store.display().to_string();
        let mut args = vec!["import-warc", "--store", &store_arg, "--ranges", ranges];
        args.extend(inputs.iter().map(String::as_str));
        let run = spark_ok("local[2]", &args, &[]);
        // Bad records are reported by the executors with file and offset, as by import-warc.
        assert!(
            run.stdout.contains("example-trunc.warc") || run.stderr.contains("example-trunc.warc"),
            "the truncated WARC's problem is reported"
        );
        assert_same_store(&single, &store);
        let staging: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("sediment-spark"))
            .collect();
        assert!(staging.is_empty(), "the staging directory is removed");
    }

    // A re-run applies nothing: every input is skipped, the store is unchanged.
    let store = dir.path().join("spark-4");
    let before = contents(&store);
    let store_arg = store.display().to_string();
    let mut args = vec!["import-warc", "--store", &store_arg];
    args.extend(inputs.iter().map(String::as_str));
    let run = spark_ok("local[2]", &args, &[]);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains(&format!("inputs_skipped {}", inputs.len())),
        "{said}"
    );
    assert_eq!(before, contents(&store));
}

/// The two fixture crawls, and a store `single` under `dir` that imported them in one process.
fn two_crawls_imported(dir: &Path) -> (Vec<String>, PathBuf) {
    let inputs = strings(&[
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ]);
    let single = dir.join("single");
    ok(&single, &["import-warc", &inputs[0], &inputs[1]]);
    (inputs, single)
}

/// A standalone Spark cluster on loopback (scripts/spark/cluster.sh: a master and two
/// one-core workers), stopped with its executors when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    url: String,
}

impl Cluster {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/spark/cluster.sh")
    }

    fn start(workers: u32) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let output = Command::new(Self::script())
            .arg("start")
            .arg(dir.path())
            .args([&workers.to_string(), "1", "1g"])
            .output()
            .expect("run scripts/spark/cluster.sh");
        // Dropped from here on: a failed start is stopped too.
        let mut cluster = Cluster {
            dir,
            url: String::new(),
        };
        assert!(
            output.status.success(),
            "the cluster did not start:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        cluster.url = String::from_utf8_lossy(&output.stdout).trim().to_string();
        assert!(
            cluster.url.starts_with("spark://127.0.0.1:"),
            "{}",
            cluster.url
        );
        cluster
    }

    /// The executors' logs that worker `i` (from 1) kept: one per application it ran.
    fn executor_logs(&self, worker: u32) -> Vec<String> {
        let work = self.dir.path().join(format!("work{worker}"));
        let mut logs = Vec::new();
        for app in std::fs::read_dir(work).into_iter().flatten().flatten() {
            for executor in std::fs::read_dir(app.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if let Ok(log) = std::fs::read_to_string(executor.path().join("stderr")) {
                    logs.push(log);
                }
            }
        }
        logs
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Self::script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

/// `--master spark://…` on a standalone cluster, not `local[N]`: the executors are other
/// processes started by two workers, in directories of their own, without the driver's
/// environment. Relative input paths (resolved in the driver's directory), the binary found
/// through the driver's path: the store equals the single-process import of the same
/// arguments in the same directory, and both workers ran tasks.
#[test]
fn spark_on_a_standalone_cluster_equals_the_single_process_import() {
    if !spark_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let crawls = fixture("crawl");
    let inputs = ["crawl1.warc.gz", "crawl2.warc.gz", "crawl1-plain.warc"];
    let single = dir.path().join("single");
    let mut args = vec!["import-warc"];
    args.extend(inputs);
    common::ok_in_dir(&crawls, &single, &args);

    let cluster = Cluster::start(2);
    let store = dir.path().join("spark");
    let store_arg = store.display().to_string();
    let mut args = vec!["import-warc", "--store", &store_arg, "--ranges", "2"];
    args.extend(inputs);
    let run = spark_in(Some(&crawls), &cluster.url, &args, &[]);
    assert!(
        run.status == 0,
        "spark-submit on {} failed ({}):\n{}\n{}",
        cluster.url,
        run.status,
        run.stdout,
        run.stderr
    );
    assert_same_store(&single, &store);
    for worker in [1, 2] {
        let logs = cluster.executor_logs(worker);
        assert!(
            logs.iter().any(|log| log.contains("Finished task")),
            "worker {worker} ran no task: {logs:?}"
        );
    }
}

#[test]
fn killed_tasks_run_again_and_the_store_is_the_same() {
    if !spark_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (inputs, single) = two_crawls_imported(dir.path());
    let store = dir.path().join("spark");
    let store_arg = store.display().to_string();
    let parquet = dir.path().join("parquet");
    let parquet_arg = parquet.display().to_string();
    // The first attempt of crawl2's extract, of part 0's split-ranges and of range 1's
    // write-sst are killed; `local[2,2]` lets Spark run each again.
    let run = spark_ok(
        "local[2,2]",
        &[
            "import-warc",
            "--store",
            &store_arg,
            "--ranges",
            "3",
            "--parquet",
            &parquet_arg,
            &inputs[0],
            &inputs[1],
        ],
        &[(
            "SEDIMENT_SPARK_FAIL_ONCE",
            "extract:crawl2.warc.gz,split:0,write:1",
        )],
    );
    let said = format!("{}{}", run.stdout, run.stderr);
    for killed in [
        "extract of ",
        "split-ranges of part 0 killed",
        "write-sst of range 1 killed",
    ] {
        assert!(said.contains(killed), "{killed}: {said}");
    }
    assert_same_store(&single, &store);
    // --parquet: the capture index as the single-process store exports it, byte for byte.
    let expected = dir.path().join("expected-parquet");
    ok(
        &single,
        &["export-captures", "-o", expected.to_str().unwrap()],
    );
    // The files under crawl=…/subset=… directories, by relative path.
    let files = |d: &Path| {
        let mut names = Vec::new();
        let mut stack = vec![d.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                } else {
                    let name = e.path().strip_prefix(d).unwrap().to_path_buf();
                    names.push((name, std::fs::read(e.path()).unwrap()));
                }
            }
        }
        names.sort();
        names
    };
    assert!(!files(&expected).is_empty());
    assert!(
        files(&expected) == files(&parquet),
        "Parquet exports differ"
    );
}

#[test]
fn a_failing_child_fails_the_job_and_leaves_the_store_alone() {
    if !spark_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A sediment whose extract prints everything, then exits 1: output that looks whole
    // must still not be used.
    let wrapper = dir.path().join("sediment");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\"{}\" \"$@\"\nstatus=$?\n[ \"$1\" = extract ] && exit 1\nexit $status\n",
            env!("CARGO_BIN_EXE_sediment")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let store = dir.path().join("spark");
    let store_arg = store.display().to_string();
    let input = fixture("crawl/crawl1.warc.gz").display().to_string();
    let run = spark(
        "local[2]",
        &["import-warc", "--store", &store_arg, &input],
        &[("SEDIMENT_BIN", wrapper.to_str().unwrap())],
    );
    assert_eq!(run.status, 1, "{}\n{}", run.stdout, run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("failed (exit status 1)"), "{said}");
    assert!(!store.exists(), "no store was made");
}

#[test]
fn spark_cdx_backfill_equals_the_single_process_backfill_with_parts_and_retries() {
    if !spark_available() {
        return;
    }
    let mut inputs = vec![
        fixture("crawl/crawl1.cdx"),
        fixture("crawl/crawl2.cdx"),
        fixture("crawl/crawl1-plain.cdx"),
    ];
    for name in [
        "pywb/sample_archive/cdx/example.cdx",
        "pywb/sample_archive/cdx/iana.cdx",
        "pywb/sample_archive/cdx/bad.cdx",
        "pywb/sample_archive/cdx/dupes.cdx",
        "pywb/sample_archive/cdxj/example.cdxj",
        "pywb/sample_archive/cdxj/example.cdx.gz",
        "pywb/sample_archive/zipcdx/zipnum-sample.cdx.gz",
    ] {
        let Some(path) = corpus(name) else { return };
        inputs.push(path);
    }
    // A CDX file large enough to be read in parts: 4 MB chunks of lines, 3 parts.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.cdx");
    let mut text = String::new();
    for i in 0..120_000u32 {
        if i == 60_000 {
            // A bad line in the middle, read by one of the parts: reported at its line.
            text.push_str("org,example)/short 2020 http://example.org/short\n");
        }
        text.push_str(&format!(
            "org,example)/page/{} 2020{:02}{:02}000000 http://example.org/page/{} text/html 200 {} - - 1000 {} big-{}.warc.gz\n",
            i % 20_000,
            1 + i % 12,
            1 + i % 28,
            i % 20_000,
            digest(i % 30_000),
            i * 1000,
            i % 7
        ));
    }
    std::fs::write(&big, text).unwrap();
    inputs.push(big);
    let inputs = strings(&inputs);

    let single = dir.path().join("single");
    let mut args = vec!["backfill-cdx"];
    args.extend(inputs.iter().map(String::as_str));
    let run = sediment(&single, &args);
    assert!(run.status == 0 || run.status == 3, "{}", run.stderr);

    let store = dir.path().join("spark");
    let store_arg = store.display().to_string();
    let mut args = vec![
        "backfill-cdx",
        "--store",
        &store_arg,
        "--ranges",
        "3",
        "--split-mb",
        "4",
    ];
    args.extend(inputs.iter().map(String::as_str));
    let run = spark_ok(
        "local[2,2]",
        &args,
        &[("SEDIMENT_SPARK_FAIL_ONCE", "extract:big.cdx,write:2")],
    );
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("killed (SEDIMENT_SPARK_FAIL_ONCE)"), "{said}");
    assert!(
        said.contains("big.cdx:60001:"),
        "bad lines are reported with file:line"
    );
    assert_same_store(&single, &store);
}

/// A base32 SHA-1 spelling made from a number (valid as a CDX digest).
fn digest(n: u32) -> String {
    let mut bytes = [0u8; 20];
    bytes[..4].copy_from_slice(&n.to_be_bytes());
    bytes[19] = 1;
    data_encoding::BASE32_NOPAD.encode(&bytes)
}

#[test]
fn spark_into_bigtable_equals_the_single_process_import_with_retries() {
    if !spark_available() {
        return;
    }
    let Some(emulator) = common::emulator::Emulator::start() else {
        return;
    };
    let host = [("BIGTABLE_EMULATOR_HOST", emulator.host.as_str())];
    let dir = tempfile::tempdir().unwrap();
    let warcs = strings(&warc_inputs().unwrap_or_else(|| {
        vec![
            fixture("crawl/crawl1.warc.gz"),
            fixture("crawl/crawl2.warc.gz"),
        ]
    }));
    let cdx = strings(&[fixture("crawl/crawl1.cdx"), fixture("crawl/crawl2.cdx")]);
    for (command, inputs, kill) in [
        ("import-warc", &warcs, "extract:crawl2.warc.gz,write:1"),
        ("backfill-cdx", &cdx, "extract:crawl2.cdx,write:2"),
    ] {
        let single = dir.path().join(format!("single-{command}"));
        let mut args = vec![command];
        args.extend(inputs.iter().map(String::as_str));
        let run = sediment(&single, &args);
        assert!(run.status == 0 || run.status == 3, "{}", run.stderr);

        let table = emulator.store(&command.replace('-', "_"));
        emulator.ok(&table, &["bigtable", "create"]);
        let mut args = vec![command, "--store", &table, "--ranges", "3"];
        args.extend(inputs.iter().map(String::as_str));
        let run = spark_ok(
            "local[2,2]",
            &args,
            &[host[0], ("SEDIMENT_SPARK_FAIL_ONCE", kill)],
        );
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(said.contains("killed (SEDIMENT_SPARK_FAIL_ONCE)"), "{said}");
        let export = ok(&single, &["export"]);
        assert!(!export.is_empty());
        assert!(
            emulator.ok(&table, &["export"]) == export,
            "{command}: exports differ"
        );
        assert!(
            emulator.ok(&table, &["captures"]) == ok(&single, &["captures"]),
            "{command}: captures differ"
        );
        let inputs_of = |stats: String| {
            serde_json::from_str::<serde_json::Value>(&stats).unwrap()["inputs"].clone()
        };
        assert_eq!(
            inputs_of(emulator.ok(&table, &["stats", "--json"])),
            inputs_of(ok(&single, &["stats", "--json"])),
            "{command}: the inputs are recorded"
        );
        // A re-run skips every input.
        let mut args = vec![command, "--store", &table];
        args.extend(inputs.iter().map(String::as_str));
        let run = spark_ok("local[2]", &args, &host);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains(&format!("inputs_skipped {}", inputs.len())),
            "{said}"
        );
        assert!(emulator.ok(&table, &["export"]) == export);
    }
}

/// The Sediment stages of the Spark path without Spark, as a shell could run them: two
/// extracts, their records cut by `split-ranges` into three ranges (each range gets several
/// blocks, handed over in reverse), `write-sst --sort` per range, `ingest-sst`: the store
/// equals the single-process import.
#[test]
fn split_ranges_and_sorting_range_writers_make_the_single_process_store() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, single) = two_crawls_imported(dir.path());
    let no_store = dir.path().join("unused");
    let (mut summaries, mut halves) = (String::new(), Vec::new());
    for input in &inputs {
        let mut records = String::new();
        for line in ok(&no_store, &["extract", "import-warc", input]).lines() {
            match line.strip_prefix("s\t") {
                Some(summary) => summaries += &format!("{summary}\n"),
                None => records += &format!("{line}\n"),
            }
        }
        halves.push(records);
    }
    let summaries_path = dir.path().join("inputs.jsonl");
    std::fs::write(&summaries_path, summaries).unwrap();

    // Bounds at a third and two thirds of the partition keys.
    let all: String = halves.concat();
    let mut keys: Vec<&str> = all
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .map(|k| if k.starts_with('d') { &k[..41] } else { k })
        .collect();
    keys.sort();
    keys.dedup();
    let bounds_path = dir.path().join("bounds.txt");
    let bounds = format!("{}\n{}\n", keys[keys.len() / 3], keys[2 * keys.len() / 3]);
    std::fs::write(&bounds_path, bounds).unwrap();

    let mut shares: Vec<Vec<String>> = vec![Vec::new(); 3];
    let mut lines = 0;
    for records in &halves {
        let run = common::sediment_in(
            &no_store,
            &["split-ranges", "--bounds", bounds_path.to_str().unwrap()],
            Some(records.as_bytes()),
        );
        assert_eq!(run.status, 0, "{}", run.stderr);
        let mut rest = run.stdout.as_str();
        while !rest.is_empty() {
            let (header, after) = rest.split_once('\n').unwrap();
            let fields: Vec<usize> = header.split('\t').map(|f| f.parse().unwrap()).collect();
            let (share, after) = after.split_at(fields[1]);
            assert_eq!(share.lines().count(), fields[2]);
            lines += fields[2];
            shares[fields[0]].push(share.to_string());
            rest = after;
        }
    }
    assert_eq!(lines, all.lines().count(), "every line in one range");
    assert!(shares.iter().all(|s| !s.is_empty()), "three ranges");

    let store = dir.path().join("staged");
    let ts = "1700000000000";
    let mut ranges = Vec::new();
    for (index, blocks) in shares.iter().enumerate() {
        let out = dir.path().join(format!("range-{index}"));
        let input: String = blocks.iter().rev().cloned().collect();
        let run = common::sediment_in(
            &no_store,
            &[
                "write-sst",
                "--sort",
                "--out",
                out.to_str().unwrap(),
                "--ts",
                ts,
                "--derive",
            ],
            Some(input.as_bytes()),
        );
        assert_eq!(run.status, 0, "{}", run.stderr);
        ranges.push(out.display().to_string());
    }
    let mut args = vec!["ingest-sst", "--ts", ts, "--inputs"];
    args.push(summaries_path.to_str().unwrap());
    args.extend(ranges.iter().map(String::as_str));
    ok(&store, &args);
    assert_same_store(&single, &store);

    // Unsorted lines without --sort are refused, not written wrong.
    let run = common::sediment_in(
        &no_store,
        &[
            "write-sst",
            "--out",
            dir.path().join("unsorted").to_str().unwrap(),
            "--ts",
            ts,
        ],
        Some(
            shares[1]
                .iter()
                .rev()
                .cloned()
                .collect::<String>()
                .as_bytes(),
        ),
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("not sorted"), "{}", run.stderr);
}
