//! The command line as scripts see it: exit statuses, JSON reports, `--quiet`, argument
//! checks, the default file filter, missing WARCs in projections, diagnostics that cannot
//! be written, completions, manual pages and the examples in `--help`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{fixture, json_lines, ok, sediment};
use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sediment"))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A CDX file: the fixture crawl's lines plus `bad` broken ones.
fn cdx_with_bad_lines(dir: &Path, bad: usize) -> PathBuf {
    let mut text = std::fs::read_to_string(fixture("crawl/crawl1.cdx")).unwrap();
    for i in 0..bad {
        text.push_str(&format!("this is not a CDX line {i}\n"));
    }
    let out = dir.join(format!("bad{bad}.cdx"));
    std::fs::write(&out, text).unwrap();
    out
}

fn json(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not one JSON object: {e}\n{text}"))
}

#[test]
fn exit_status_is_0_clean_3_with_problems_1_failed() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean");
    let cdx = fixture("crawl/crawl1.cdx");
    let run = sediment(&clean, &["backfill-cdx", path(&cdx)]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("problems 0"), "{}", run.stderr);

    // Re-running is a no-op, not a problem.
    let again = sediment(&clean, &["backfill-cdx", path(&cdx)]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("inputs_skipped 1"),
        "{}",
        again.stderr
    );

    // Bad lines: the run completes (the good lines land) and says so with 3.
    let bad = cdx_with_bad_lines(dir.path(), 25);
    let store = dir.path().join("bad");
    let run = sediment(&store, &["backfill-cdx", path(&bad)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(run.stderr.contains("problems 25"), "{}", run.stderr);
    let rows = ok(&store, &["export"]);
    assert_eq!(rows, ok(&clean, &["export"]), "the valid lines all landed");

    // --strict stops at the first bad line: a failure.
    let strict = dir.path().join("strict");
    let run = sediment(&strict, &["backfill-cdx", "--strict", path(&bad)]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("stopping: --strict"), "{}", run.stderr);

    // A damaged WARC: records skipped, exit 3; the intact records are imported.
    let warc = fixture("corrupt/gz-truncated-member.warc.gz");
    let run = sediment(&dir.path().join("warc"), &["import-warc", path(&warc)]);
    assert_eq!(run.status, 3, "{}", run.stderr);

    // An export with nothing wrong is clean.
    let run = sediment(&clean, &["export", "-o", path(&dir.path().join("x.jsonl"))]);
    assert_eq!(run.status, 0, "{}", run.stderr);
}

#[test]
fn usage_mistakes_exit_2_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let cdx = fixture("crawl/crawl1.cdx");
    let cdx = path(&cdx);

    let run = sediment(&store, &["backfill-cdx", "--mime", "html", cdx]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("did you mean text/html?"),
        "{}",
        run.stderr
    );
    assert!(!store.exists(), "nothing was done");

    let run = sediment(&store, &["import-warc", "--mime", "pdf", cdx]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("did you mean application/pdf?"),
        "{}",
        run.stderr
    );

    let run = sediment(
        &store,
        &["backfill-cdx", "--mime", "html", "--all-types", cdx],
    );
    assert_eq!(run.status, 2, "{}", run.stderr);

    let run = sediment(
        &store,
        &["grobid", "--url", "http://127.0.0.1:9", "--mime", "pdf"],
    );
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("did you mean application/pdf?"),
        "{}",
        run.stderr
    );

    let run = sediment(&store, &["import-tei", "--shape", "bogus", cdx]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--shape must be"), "{}", run.stderr);

    let run = sediment(&store, &["no-such-command"]);
    assert_eq!(run.status, 2, "{}", run.stderr);

    // Mistakes found once the store is open are usage errors too.
    ok(&store, &["backfill-cdx", cdx]);
    let run = sediment(&store, &["export", "--columns", "file:nope"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("unknown column"), "{}", run.stderr);
    let run = sediment(&store, &["export", "--prefix", "01"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    let run = sediment(&store, &["get", "not-a-key"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    let run = sediment(&store, &["export", "--json"]);
    assert_eq!(run.status, 2, "--json and rows on stdout: {}", run.stderr);
    assert!(run.stderr.contains("--report FILE"), "{}", run.stderr);

    // A key that is well formed but absent is a failure, not a usage error.
    let run = sediment(&store, &["get", "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
}

#[test]
fn status_takes_one_value_and_leaves_the_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cdx = fixture("crawl/crawl1.cdx");
    let cdx = path(&cdx);
    let rows = |store: &str, args: &[&str]| -> usize {
        let store = dir.path().join(store);
        let mut all = vec!["backfill-cdx"];
        all.extend_from_slice(args);
        ok(&store, &all);
        json_lines(&ok(&store, &["export"])).len()
    };
    // `--status 200 FILE`: the file is an input, not a second status.
    let default = rows("default", &[cdx]);
    assert_eq!(rows("one", &["--status", "200", cdx]), default);
    assert!(default > 0);
    let with_404 = rows("comma", &["--all-types", "--status", "200,404", cdx]);
    assert_eq!(
        rows(
            "repeated",
            &["--all-types", "--status", "200", "--status", "404", cdx]
        ),
        with_404
    );
    assert!(with_404 > rows("only200", &["--all-types", "--status", "200", cdx]));
}

/// Distinct MIME types of the rows of a store.
fn row_types(store: &Path) -> Vec<String> {
    let mut types: Vec<String> = json_lines(&ok(store, &["export"]))
        .iter()
        .filter_map(|r| r["file:mime"].as_str().map(str::to_string))
        .collect();
    types.sort();
    types.dedup();
    types
}

fn captures(store: &Path) -> usize {
    ok(store, &["captures"]).lines().count()
}

#[test]
fn default_file_filter_takes_full_text_types_and_keeps_every_capture() {
    let dir = tempfile::tempdir().unwrap();
    let warc = fixture("crawl/crawl1.warc.gz");
    let warc = path(&warc);
    let default = dir.path().join("default");
    ok(&default, &["import-warc", warc]);
    let all = dir.path().join("all");
    ok(&all, &["import-warc", "--all-types", warc]);

    let fulltext = ["application/pdf", "text/html", "text/plain"];
    assert_eq!(row_types(&default), fulltext);
    let every = row_types(&all);
    for other in ["image/png", "text/css"] {
        assert!(every.iter().any(|t| t == other), "{other} in {every:?}");
    }
    // Captures of every type are kept either way.
    assert_eq!(captures(&default), captures(&all));

    // --mime narrows and widens; the same with CDX input.
    let pdf = dir.path().join("pdf");
    ok(&pdf, &["import-warc", "--mime", "application/x-pdf", warc]);
    assert_eq!(row_types(&pdf), ["application/pdf"]);
    let wider = dir.path().join("wider");
    ok(&wider, &["import-warc", "--mime", "fulltext,image/*", warc]);
    assert_eq!(
        row_types(&wider),
        ["application/pdf", "image/png", "text/html", "text/plain"]
    );
    let cdx = fixture("crawl/crawl1.cdx");
    let from_cdx = dir.path().join("cdx");
    ok(&from_cdx, &["backfill-cdx", path(&cdx)]);
    assert_eq!(row_types(&from_cdx), fulltext);
    let cdx_all = dir.path().join("cdx-all");
    ok(&cdx_all, &["backfill-cdx", "--all-types", path(&cdx)]);
    assert!(row_types(&cdx_all).len() > fulltext.len());
}

/// Every row of a table, in rowid order, as text.
fn table(db: &Path, name: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM {name} ORDER BY rowid"))
        .unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        Ok((0..n)
            .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
            .collect::<Vec<_>>()
            .join("|"))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn projections_do_not_depend_on_the_file_filter() {
    // Captures of every type are kept, so the crawl and summary databases are the same
    // whether images, scripts and styles got file rows or not (revisits of them included).
    let dir = tempfile::tempdir().unwrap();
    let warcs = [
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ];
    let mut dbs = Vec::new();
    for (name, filter) in [("default", None), ("all", Some("--all-types"))] {
        let store = dir.path().join(name);
        let mut args = vec!["import-warc"];
        args.extend(filter);
        args.extend(warcs.iter().map(|w| path(w)));
        ok(&store, &args);
        let crawl = dir.path().join(format!("{name}-crawl.db"));
        ok(&store, &["project", "crawl", "-o", path(&crawl)]);
        let summary = dir.path().join(format!("{name}-summary.db"));
        ok(&store, &["project", "summary", "-o", path(&summary)]);
        dbs.push((crawl, summary));
    }
    assert_ne!(
        row_types(&dir.path().join("default")),
        row_types(&dir.path().join("all"))
    );
    for t in ["crawl_log", "request", "file", "file_text", "redirect"] {
        let default = table(&dbs[0].0, t);
        assert!(!default.is_empty(), "{t}");
        assert_eq!(default, table(&dbs[1].0, t), "crawl.db {t}");
    }
    for t in [
        "crawl_summary",
        "http_summary",
        "file_summary",
        "entity_generation",
    ] {
        let default = table(&dbs[0].1, t);
        assert!(!default.is_empty(), "{t}");
        assert_eq!(default, table(&dbs[1].1, t), "summary.db {t}");
    }
}

#[test]
fn json_report_on_stdout_and_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = cdx_with_bad_lines(dir.path(), 3);
    let store = dir.path().join("store");
    let report = dir.path().join("report.json");
    let run = sediment(
        &store,
        &[
            "backfill-cdx",
            "--json",
            "--report",
            path(&report),
            path(&bad),
        ],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    let object = json(&run.stdout);
    assert_eq!(object, json(&std::fs::read_to_string(&report).unwrap()));
    assert_eq!(object["command"], "backfill-cdx");
    assert_eq!(object["status"], "problems");
    assert_eq!(object["exit_code"], 3);
    assert_eq!(object["problems_total"], 3);
    assert_eq!(object["counts"]["lines"], 62);
    let first = &object["problem_examples"][0];
    assert_eq!(first["file"], path(&bad));
    assert_eq!(first["line"], 60);
    // The human summary stays on stderr.
    assert!(run.stderr.contains("backfill-cdx: "), "{}", run.stderr);

    // Clean run: status ok.
    let clean = dir.path().join("clean");
    let cdx = fixture("crawl/crawl1.cdx");
    let run = sediment(&clean, &["backfill-cdx", "--json", path(&cdx)]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let object = json(&run.stdout);
    assert_eq!(
        (object["status"].as_str(), object["exit_code"].as_i64()),
        (Some("ok"), Some(0))
    );
    assert_eq!(object["problems_total"], 0);

    // An input that cannot be read is a skipped input: the run goes on and says so.
    let absent = dir.path().join("absent.jsonl");
    let run = sediment(
        &clean,
        &["import-jsonl", "--report", path(&report), path(&absent)],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    let object = json(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(object["status"], "problems");
    assert_eq!(object["problems"]["unreadable_input"], 1);
    assert!(
        object["problem_examples"][0]["file"]
            .as_str()
            .unwrap()
            .contains("absent.jsonl"),
        "{object}"
    );

    // A failed run leaves a failure object, so a pipeline never reads a stale report.
    let not_a_store = dir.path().join("not-a-store");
    std::fs::write(&not_a_store, "a regular file").unwrap();
    let run = sediment(
        &not_a_store,
        &["import-jsonl", "--report", path(&report), path(&absent)],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    let object = json(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(object["status"], "failed");
    assert_eq!(object["exit_code"], 1);
    assert!(
        object["error"].as_str().unwrap().contains("not-a-store"),
        "{object}"
    );

    // Every long command takes the options.
    let out = dir.path().join("rows.jsonl");
    let run = sediment(&clean, &["export", "-o", path(&out), "--json", "--quiet"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        json(&run.stdout)["counts"]["rows"].as_u64(),
        Some(json_lines(&std::fs::read_to_string(&out).unwrap()).len() as u64)
    );
    let warc = fixture("crawl/crawl1.warc.gz");
    let cdx_out = dir.path().join("out.cdx");
    let run = sediment(
        &clean,
        &["cdx", path(&warc), "-o", path(&cdx_out), "--json"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(json(&run.stdout)["command"], "cdx");
    let run = sediment(&clean, &["import-jsonl", path(&out), "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(json(&run.stdout)["command"], "import-jsonl");
}

#[test]
fn quiet_prints_only_the_summary_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = cdx_with_bad_lines(dir.path(), 30);
    let store = dir.path().join("store");
    let rejects = dir.path().join("rejects.jsonl");
    let run = sediment(
        &store,
        &[
            "backfill-cdx",
            "--quiet",
            "--rejects",
            path(&rejects),
            path(&bad),
        ],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].starts_with("backfill-cdx: "), "{}", run.stderr);
    assert!(lines[0].contains("problems 30"), "{}", run.stderr);
    // The problems are still all in the rejects file.
    assert_eq!(
        std::fs::read_to_string(&rejects).unwrap().lines().count(),
        30
    );

    // Without --quiet the first problems are printed one per line.
    let loud = dir.path().join("loud");
    let run = sediment(&loud, &["backfill-cdx", path(&bad)]);
    assert!(run.stderr.lines().count() > 10, "{}", run.stderr);
}

/// Runs with stderr connected to `stderr` and returns (status, stdout).
fn run_with_stderr(store: &Path, args: &[&str], stderr: Stdio) -> (i32, String) {
    let out = bin()
        .arg("--store")
        .arg(store)
        .args(args)
        .stderr(stderr)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn diagnostics_that_cannot_be_written_do_not_stop_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let bad = cdx_with_bad_lines(dir.path(), 20);
    let reference = dir.path().join("reference");
    sediment(&reference, &["backfill-cdx", path(&bad)]);
    let expected = ok(&reference, &["export"]);

    // stderr on a full disk: every problem line and the summary fail to be written.
    let full = dir.path().join("full");
    let dev_full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (status, _) = run_with_stderr(&full, &["backfill-cdx", path(&bad)], dev_full.into());
    assert_eq!(status, 3, "the run completes with its real status");
    assert_eq!(ok(&full, &["export"]), expected, "and its commit");

    // stderr a pipe nobody reads any more (EPIPE on every write).
    let closed = dir.path().join("closed");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let (status, _) = run_with_stderr(&closed, &["backfill-cdx", path(&bad)], writer.into());
    assert_eq!(status, 3);
    assert_eq!(ok(&closed, &["export"]), expected);

    // stderr closed altogether.
    let shut = dir.path().join("shut");
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#""$0" --store "$1" backfill-cdx "$2" 2>&-"#)
        .arg(env!("CARGO_BIN_EXE_sediment"))
        .arg(&shut)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(ok(&shut, &["export"]), expected);

    // The same for an import of damaged WARCs and for a projection with missing WARCs.
    let warc = fixture("corrupt/gz-truncated-member.warc.gz");
    let dev_full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (status, _) = run_with_stderr(
        &dir.path().join("warc"),
        &["import-warc", path(&warc)],
        dev_full.into(),
    );
    assert_eq!(status, 3);
    let db = dir.path().join("crawl.db");
    let dev_full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (status, stdout) = run_with_stderr(
        &reference,
        &["project", "crawl", "-o", path(&db), "--json"],
        dev_full.into(),
    );
    assert_eq!(status, 3, "the CDX names WARCs that are not here");
    assert_eq!(json(&stdout)["status"], "problems");
}

#[test]
fn projections_count_missing_warcs_as_problems_and_name_them() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl1.warc.gz");
    std::fs::copy(fixture("crawl/crawl1.warc.gz"), &warc).unwrap();
    let store = dir.path().join("store");
    ok(&store, &["import-warc", path(&warc)]);
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    std::fs::rename(&warc, moved.join("crawl1.warc.gz")).unwrap();

    for (projection, output) in [
        ("crawl", "crawl.db"),
        ("summary", "summary.db"),
        ("locust", "locust"),
        ("jdbm", "jdbm"),
    ] {
        let blind = dir.path().join(format!("blind-{output}"));
        let run = sediment(
            &store,
            &["project", projection, "-o", path(&blind), "--json"],
        );
        assert_eq!(run.status, 3, "{projection}: {}", run.stderr);
        assert!(
            run.stderr.contains("crawl1.warc.gz") && run.stderr.contains("--warc-dir"),
            "{projection}: {}",
            run.stderr
        );
        let object = json(&run.stdout);
        assert!(
            object["problems"]["warc_not_found"].as_u64() > Some(0),
            "{projection}: {object}"
        );
        assert!(
            object["problem_examples"][0]["file"]
                .as_str()
                .unwrap()
                .ends_with("crawl1.warc.gz"),
            "{projection}: {object}"
        );

        let seeing = dir.path().join(format!("seeing-{output}"));
        let run = sediment(
            &store,
            &[
                "project",
                projection,
                "-o",
                path(&seeing),
                "--warc-dir",
                path(&moved),
            ],
        );
        assert_eq!(run.status, 0, "{projection}: {}", run.stderr);
    }
}

#[test]
fn completions_and_manual_pages() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("unused");
    let bash = ok(&store, &["completions", "bash"]);
    assert!(bash.contains("_sediment()"), "{bash}");
    assert!(bash.contains("import-warc") && bash.contains("--all-types"));
    let zsh = ok(&store, &["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef sediment"), "{zsh}");
    let fish = ok(&store, &["completions", "fish"]);
    assert!(fish.contains("complete -c sediment"), "{fish}");
    let run = sediment(&store, &["completions", "tcsh"]);
    assert_eq!(run.status, 2);
    assert!(!store.exists(), "no store is made for these");

    let man = ok(&store, &["manpage"]);
    assert!(man.contains(".TH sediment 1"), "{man}");
    assert!(man.contains("import\\-warc"), "{man}");
    assert!(man.contains("Exit status"), "{man}");
    let pages = dir.path().join("man");
    ok(&store, &["manpage", "--dir", path(&pages)]);
    for page in [
        "sediment.1",
        "sediment-import-warc.1",
        "sediment-project-crawl.1",
    ] {
        let text = std::fs::read_to_string(pages.join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    let page = std::fs::read_to_string(pages.join("sediment-backfill-cdx.1")).unwrap();
    assert!(page.contains("Examples:"), "{page}");

    // Into a pipe that closes early (`| head -3`): no panic.
    for args in [&["completions", "bash"][..], &["manpage"]] {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn help_ends_with_examples() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("unused");
    for command in [
        &["import-warc"][..],
        &["backfill-cdx"],
        &["export"],
        &["project", "summary"],
        &["catalog", "load"],
        &["completions"],
    ] {
        let mut args = command.to_vec();
        args.push("--help");
        let help = ok(&store, &args);
        let examples = help
            .rfind("Examples:")
            .unwrap_or_else(|| panic!("{command:?}: {help}"));
        let tail = &help[examples..];
        assert!(
            tail.lines()
                .skip(1)
                .all(|l| l.trim().is_empty() || l.starts_with("  "))
        );
        assert!(tail.contains("sediment "), "{command:?}: {tail}");
    }
}

#[test]
fn the_project_is_licensed() {
    assert_eq!(env!("CARGO_PKG_LICENSE"), "MIT OR Apache-2.0");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let apache = std::fs::read_to_string(root.join("LICENSE-APACHE")).unwrap();
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0"));
    let mit = std::fs::read_to_string(root.join("LICENSE-MIT")).unwrap();
    assert!(mit.starts_with("MIT License"));
    let notice = std::fs::read_to_string(root.join("LICENSE")).unwrap();
    assert!(notice.contains("MIT OR Apache-2.0"));
}
