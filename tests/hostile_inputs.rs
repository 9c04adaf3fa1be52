//! Hostile inputs on the input side (issue 11, defects 2, 3, 4, 9 and 15): special files
//! and bad entries among the inputs, gzip inputs cut short, bad CDX header lines and
//! overlong lines, empty inputs, huge bad values. Each damaged input is made here from a
//! real fixture; the valid data around it must land exactly as in a run without the
//! damage (same export, same counts), and the damage is a reported problem (exit 3).

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, corpus, fixture, json_lines, ok, sediment, sediment_in};
use serde_json::Value;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs sediment; a run still going after `GUARD` is killed (status -1), so that a
/// regression to waiting on a FIFO fails the test instead of hanging it. Not a timing
/// assertion: a healthy run of these small inputs takes well under a second.
fn guarded(store: &Path, args: &[&str]) -> Run {
    const GUARD: Duration = Duration::from_secs(300);
    let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(store)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sediment");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > GUARD {
            let _ = child.kill();
            let _ = child.wait();
            break -1;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Next to `good` files (copied into `dir`), every kind of entry that cannot be an input,
/// each called `name(stem)` so that directory expansion accepts it. Returns the names of
/// the bad entries and the reason each is reported with.
fn hostile_dir(
    dir: &Path,
    good: &[PathBuf],
    name: impl Fn(&str) -> String,
) -> Vec<(String, &'static str)> {
    std::fs::create_dir_all(dir).unwrap();
    for file in good {
        std::fs::copy(file, dir.join(file.file_name().unwrap())).unwrap();
    }
    let at = |stem: &str| dir.join(name(stem));
    mkfifo(&at("a-fifo"));
    std::os::unix::fs::symlink(dir.join("nothing-here"), at("b-dangling")).unwrap();
    // A loop of links: the entry exists but cannot be opened (ELOOP), the closest to an
    // unreadable file a test running as root can make.
    std::os::unix::fs::symlink(at("c-loop2"), at("c-loop1")).unwrap();
    std::os::unix::fs::symlink(at("c-loop1"), at("c-loop2")).unwrap();
    std::fs::write(at("d-empty"), b"").unwrap();
    std::os::unix::fs::symlink("/dev/null", at("e-device")).unwrap();
    [
        ("a-fifo", "not_a_regular_file"),
        ("b-dangling", "unreadable_input"),
        ("c-loop1", "unreadable_input"),
        ("c-loop2", "unreadable_input"),
        ("d-empty", "empty_input"),
        ("e-device", "not_a_regular_file"),
    ]
    .into_iter()
    .map(|(stem, reason)| (name(stem), reason))
    .collect()
}

fn warc_name(stem: &str) -> String {
    format!("{stem}.warc.gz")
}

/// Asserts the run finished with problems, exactly those of `bad` (one each).
fn assert_bad_entries_reported(run: &Run, dir: &Path, bad: &[(String, &str)]) {
    assert_eq!(run.status, 3, "{}", run.stderr);
    for (name, reason) in bad {
        let line = format!("{}: {reason}: ", dir.join(name).display());
        assert!(
            run.stderr.contains(&line),
            "{line:?} not in\n{}",
            run.stderr
        );
    }
    let total = format!("problems {} (", bad.len());
    assert!(
        run.stderr.contains(&total),
        "{total:?} not in\n{}",
        run.stderr
    );
}

/// `stats --json` without the size on disk, which compactions make differ between equal
/// stores.
fn stats(store: &Path) -> Value {
    let mut stats: Value = serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
    stats.as_object_mut().unwrap().remove("store_bytes_on_disk");
    stats
}

#[test]
fn import_warc_skips_special_files_and_bad_entries_and_imports_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let good = [
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ];
    let inputs = dir.path().join("in");
    let bad = hostile_dir(&inputs, &good, warc_name);
    let reference = dir.path().join("reference");
    let copies: Vec<PathBuf> = good
        .iter()
        .map(|f| inputs.join(f.file_name().unwrap()))
        .collect();
    ok(&reference, &["import-warc", s(&copies[0]), s(&copies[1])]);

    let store = dir.path().join("store");
    let run = guarded(&store, &["import-warc", "--threads", "2", s(&inputs)]);
    assert_bad_entries_reported(&run, &inputs, &bad);
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
    assert_eq!(stats(&store), stats(&reference));

    // The empty file was not recorded as ingested: a re-run says so again.
    let again = guarded(&store, &["import-warc", s(&inputs)]);
    assert_eq!(again.status, 3, "{}", again.stderr);
    assert!(
        again.stderr.contains("inputs_skipped 2"),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains("d-empty.warc.gz: empty_input"),
        "{}",
        again.stderr
    );

    // A FIFO named on the command line is refused, not opened; the other input lands.
    let named = dir.path().join("named");
    let fifo = inputs.join("a-fifo.warc.gz");
    let run = guarded(&named, &["import-warc", s(&fifo), s(&copies[0])]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("{}: not_a_regular_file: a FIFO", fifo.display())),
        "{}",
        run.stderr
    );
    let one = dir.path().join("one");
    ok(&one, &["import-warc", s(&copies[0])]);
    assert_eq!(ok(&named, &["export"]), ok(&one, &["export"]));
}

#[test]
fn cdx_skips_special_files_and_bad_entries_and_indexes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let good = [
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ];
    let inputs = dir.path().join("in");
    let bad = hostile_dir(&inputs, &good, warc_name);
    let store = dir.path().join("unused");
    let reference = dir.path().join("reference.cdx");
    let copies: Vec<PathBuf> = good
        .iter()
        .map(|f| inputs.join(f.file_name().unwrap()))
        .collect();
    let run = guarded(
        &store,
        &["cdx", s(&copies[0]), s(&copies[1]), "-o", s(&reference)],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);

    let out = dir.path().join("out.cdx");
    let run = guarded(&store, &["cdx", s(&inputs), "-o", s(&out)]);
    assert_bad_entries_reported(&run, &inputs, &bad);
    let lines = std::fs::read_to_string(&out).unwrap();
    assert!(lines.lines().count() > 10, "{lines}");
    assert_eq!(lines, std::fs::read_to_string(&reference).unwrap());
}

#[test]
fn import_tei_skips_special_files_and_bad_entries() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(
        &store,
        &["import-warc", s(&fixture("crawl/crawl1.warc.gz"))],
    );
    let inputs = dir.path().join("tei");
    // TEI files are named by the SHA-1 (hex) of their PDF.
    let expected = hostile_dir(&inputs, &[], |stem| {
        format!("{:0>40}.tei.xml", hex::encode(stem))
    });
    let mut rows_written = 0;
    if let Some(tei) = corpus("grobid/example.tei.xml") {
        // The row of one of the crawl's PDFs (OVERVIEW in tests/grobid.rs).
        let key = "R65U7XLDOU4UUUDGDGYHD3LZL62VJT3A";
        let raw = data_encoding::BASE32_NOPAD.decode(key.as_bytes()).unwrap();
        std::fs::copy(tei, inputs.join(format!("{}.tei.xml", hex::encode(raw)))).unwrap();
        rows_written = 1;
    }
    let run = guarded(&store, &["import-tei", s(&inputs)]);
    assert_bad_entries_reported(&run, &inputs, &expected);
    if rows_written > 0 {
        assert!(run.stderr.contains("rows_written 1"), "{}", run.stderr);
    }
}

#[test]
fn backfill_cdx_skips_special_files_and_bad_entries_and_reads_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let good = [fixture("crawl/crawl1.cdx"), fixture("crawl/crawl2.cdx")];
    let inputs = dir.path().join("in");
    let bad = hostile_dir(&inputs, &good, |stem| format!("{stem}.cdx"));
    let reference = dir.path().join("reference");
    ok(&reference, &["backfill-cdx", s(&good[0]), s(&good[1])]);

    let store = dir.path().join("store");
    let run = guarded(&store, &["backfill-cdx", s(&inputs)]);
    assert_bad_entries_reported(&run, &inputs, &bad);
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
    assert_eq!(stats(&store), stats(&reference));

    // A FIFO named on the command line is refused; stdin `-` is still read.
    let fifo = inputs.join("a-fifo.cdx");
    let piped = dir.path().join("piped");
    let crawl1 = std::fs::read(&good[0]).unwrap();
    let run = sediment_in(&piped, &["backfill-cdx", s(&fifo), "-"], Some(&crawl1));
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(run.stderr.contains("not_a_regular_file"), "{}", run.stderr);
    let one = dir.path().join("one");
    ok(&one, &["backfill-cdx", s(&good[0])]);
    assert_eq!(ok(&piped, &["export"]), ok(&one, &["export"]));

    // An empty standard input is an empty input too.
    let run = sediment_in(&dir.path().join("e"), &["backfill-cdx", "-"], Some(b""));
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(run.stderr.contains("-: empty_input"), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------
// Gzip inputs cut short

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// What `gzip -dc` (an independent decoder) gets out of a cut gzip file: its complete
/// lines, and how many.
fn complete_lines_by_gzip(cut: &Path) -> (Vec<u8>, usize) {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(cut)
        .output()
        .expect("run gzip");
    assert!(!out.status.success(), "gzip must see the cut");
    let data = out.stdout;
    let end = data.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let lines = data[..end].iter().filter(|&&b| b == b'\n').count();
    (data[..end].to_vec(), lines)
}

/// Cuts the gzip of `text` at `fraction` of its length; returns the cut file and the
/// plain file of the complete lines before the cut (by `gzip -dc`), and their number.
fn cut_gzip(dir: &Path, name: &str, text: &[u8], fraction: f64) -> (PathBuf, PathBuf, usize) {
    let whole = gzip(text);
    let cut = dir.join(format!("{name}.gz"));
    std::fs::write(&cut, &whole[..(whole.len() as f64 * fraction) as usize]).unwrap();
    let (prefix, lines) = complete_lines_by_gzip(&cut);
    let plain = dir.join(format!("{name}.prefix"));
    std::fs::write(&plain, prefix).unwrap();
    (cut, plain, lines)
}

/// A CDX of a few thousand lines made of the fixture CDX files (wget's layout), each copy
/// of a line with its own timestamp so that every line is a capture of its own.
fn many_cdx_lines() -> Vec<u8> {
    let sources = [fixture("crawl/crawl1.cdx"), fixture("crawl/crawl2.cdx")];
    let lines: Vec<String> = sources
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with(' ') && !l.trim().is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut out = String::from(" CDX a b a m s k r M V g u\n");
    for year in 1990..2030 {
        for line in &lines {
            let mut fields: Vec<&str> = line.split(' ').collect();
            let ts = format!("{year}{}", &fields[1][4..]);
            fields[1] = &ts;
            out.push_str(&fields.join(" "));
            out.push('\n');
        }
    }
    out.into_bytes()
}

#[test]
fn a_cut_gzip_cdx_keeps_every_line_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let text = many_cdx_lines();
    let crawl2 = fixture("crawl/crawl2.cdx");
    for (i, fraction) in [0.3, 0.55, 0.8].into_iter().enumerate() {
        let (cut, prefix, lines) = cut_gzip(dir.path(), &format!("c{i}.cdx"), &text, fraction);
        assert!(lines > 10, "{lines} complete lines before the cut");
        let reference = dir.path().join(format!("ref{i}"));
        ok(&reference, &["backfill-cdx", s(&prefix), s(&crawl2)]);
        for bulk in [false, true] {
            let store = dir.path().join(format!("s{i}{bulk}"));
            let mut args = vec!["backfill-cdx", s(&cut), s(&crawl2)];
            if bulk {
                args.push("--bulk");
            }
            let run = sediment(&store, &args);
            assert_eq!(run.status, 3, "{}", run.stderr);
            let at = format!(
                "{}:{lines}: truncated_input: cannot read past line {lines}",
                cut.display()
            );
            assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
            assert!(run.stderr.contains("problems 1 ("), "{}", run.stderr);
            assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
            // Not recorded as ingested: a run over the file applies it (and says so) again.
            let again = sediment(&store, &["backfill-cdx", s(&cut)]);
            assert_eq!(again.status, 3, "{}", again.stderr);
            assert!(again.stderr.contains(&at), "{}", again.stderr);
        }
    }
    // Cut inside the first line: nothing to keep, the problem names the file.
    let one_line: Vec<u8> = text[..200]
        .iter()
        .map(|&b| if b == b'\n' { b' ' } else { b })
        .collect();
    let (cut, _, lines) = cut_gzip(dir.path(), "tiny.cdx", &one_line, 0.5);
    assert_eq!(lines, 0);
    let run = sediment(&dir.path().join("tiny"), &["backfill-cdx", s(&cut)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let at = format!(
        "{}: truncated_input: cannot read the first line",
        cut.display()
    );
    assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
}

/// A store of the fixture crawl, as rows exported to JSON lines.
fn exported_rows(dir: &Path) -> String {
    let store = dir.join("source");
    let (crawl1, crawl2) = (fixture("crawl/crawl1.cdx"), fixture("crawl/crawl2.cdx"));
    ok(&store, &["backfill-cdx", s(&crawl1), s(&crawl2)]);
    let mut rows = ok(&store, &["export"]);
    if let Some(cdx) = corpus("sandcrawler/example.cdx") {
        let more = dir.join("more");
        ok(&more, &["backfill-cdx", s(&cdx)]);
        rows.push_str(&ok(&more, &["export"]));
    }
    rows
}

#[test]
fn a_cut_gzip_jsonl_keeps_every_line_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let rows = exported_rows(dir.path());
    // Enough lines for the cut to fall after many of them: the rows, repeated.
    let text = rows.repeat(40);
    let (cut, prefix, lines) = cut_gzip(dir.path(), "rows.jsonl", text.as_bytes(), 0.6);
    assert!(lines > 100, "{lines}");
    let reference = dir.path().join("reference");
    ok(&reference, &["import-jsonl", s(&prefix)]);
    let store = dir.path().join("store");
    let run = sediment(&store, &["import-jsonl", s(&cut)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let at = format!(
        "{}:{lines}: truncated_input: cannot read past line {lines}",
        cut.display()
    );
    assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("lines {lines},")),
        "{}",
        run.stderr
    );
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

/// The TSV of the HBase dump made from the fixture crawl's rows (key, f:c, file:mime,
/// file:cdx), and the corpus's dump when it is there.
fn hbase_tsv(dir: &Path) -> String {
    let mut tsv = String::new();
    for row in json_lines(&exported_rows(dir)) {
        let json = |v: &Value| {
            if v.is_null() {
                String::new()
            } else {
                v.to_string()
            }
        };
        tsv.push_str(&format!(
            "sha1:{}\t{}\t{}\t{}\n",
            row["key"].as_str().unwrap(),
            json(&row["f:c"]),
            row["file:mime"].as_str().unwrap_or(""),
            json(&row["file:cdx"]),
        ));
    }
    if let Some(dump) = corpus("sandcrawler/example_ungrobided.tsv") {
        tsv.push_str(&std::fs::read_to_string(dump).unwrap());
    }
    tsv
}

#[test]
fn a_cut_gzip_hbase_tsv_keeps_every_line_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let text = hbase_tsv(dir.path()).repeat(40);
    let (cut, prefix, lines) = cut_gzip(dir.path(), "dump.tsv", text.as_bytes(), 0.6);
    assert!(lines > 100, "{lines}");
    let reference = dir.path().join("reference");
    ok(&reference, &["import-hbase-tsv", s(&prefix)]);
    let store = dir.path().join("store");
    let run = sediment(&store, &["import-hbase-tsv", s(&cut)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let at = format!(
        "{}:{lines}: truncated_input: cannot read past line {lines}",
        cut.display()
    );
    assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("lines {lines},")),
        "{}",
        run.stderr
    );
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

// ---------------------------------------------------------------------------------------
// CDX: later header lines, overlong lines

/// The lines of a fixture CDX with `extra` inserted so that each lands at its 1-based
/// line number.
fn cdx_with(path: &Path, extra: &[(usize, Vec<u8>)]) -> Vec<u8> {
    let text = std::fs::read(path).unwrap();
    let mut lines: Vec<Vec<u8>> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    for (at, line) in extra {
        lines.insert(at - 1, line.clone());
    }
    let mut out = lines.join(&b'\n');
    out.push(b'\n');
    out
}

#[test]
fn a_bad_later_cdx_header_costs_one_line_not_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let crawl1 = fixture("crawl/crawl1.cdx");
    let reference = dir.path().join("reference");
    ok(&reference, &["backfill-cdx", s(&crawl1)]);
    // crawl1.cdx is wget's ` CDX a b a m s k r M V g u`.
    let bad = [
        (10, b" CDX N b a".to_vec()),
        (20, b" CDX ??? garbage".to_vec()),
        (30, b" CDX N b a m s k r M S V g".to_vec()),
        // The file's own header again, as in concatenated files: not a problem.
        (40, b" CDX a b a m s k r M V g u".to_vec()),
    ];
    let path = dir.path().join("headers.cdx");
    std::fs::write(&path, cdx_with(&crawl1, &bad)).unwrap();
    let store = dir.path().join("store");
    let run = sediment(&store, &["backfill-cdx", s(&path)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    for line in [10, 20, 30] {
        let at = format!("{}:{line}: bad_header: ", path.display());
        assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
    }
    assert!(
        run.stderr.contains("problems 3 (bad_header: 3)"),
        "{}",
        run.stderr
    );
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

#[test]
fn an_overlong_cdx_line_is_rejected_and_the_next_lines_land() {
    let dir = tempfile::tempdir().unwrap();
    let crawl1 = fixture("crawl/crawl1.cdx");
    let crawl2 = fixture("crawl/crawl2.cdx");
    let reference = dir.path().join("reference");
    ok(&reference, &["backfill-cdx", s(&crawl1), s(&crawl2)]);
    let long = 65 << 20;
    let mut line = b"com,example)/ 20200101000000 http://example.com/".to_vec();
    line.resize(long, b'x');
    let path = dir.path().join("long.cdx");
    let text = cdx_with(&crawl1, &[(20, line)]);
    let offset = offset_of_line(&text, 20);
    std::fs::write(&path, text).unwrap();
    let rejects = dir.path().join("rejects.jsonl");
    let store = dir.path().join("store");
    let run = sediment(
        &store,
        &[
            "backfill-cdx",
            s(&path),
            s(&crawl2),
            "--rejects",
            s(&rejects),
        ],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    let at = format!(
        "{}:20 at byte {offset}: line_too_long: {long} bytes",
        path.display()
    );
    assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
    assert!(run.stderr.contains("problems 1 ("), "{}", run.stderr);
    assert!(run.stderr.contains("rejected 1"), "{}", run.stderr);
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
    let rejected = json_lines(&std::fs::read_to_string(&rejects).unwrap());
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["line"], 20);
    assert_eq!(rejected[0]["offset"], offset);
}

/// Where 1-based line `n` of `text` starts.
fn offset_of_line(text: &[u8], n: usize) -> usize {
    text.split_inclusive(|&b| b == b'\n')
        .take(n - 1)
        .map(<[u8]>::len)
        .sum()
}

/// `text` with a line of `long` bytes (`start`, then `x` to its length) inserted as line
/// `at`, and where that line starts.
fn with_long_line(text: &str, at: usize, start: &str, long: usize) -> (Vec<u8>, usize) {
    let mut lines: Vec<&[u8]> = text.as_bytes().split_inclusive(|&b| b == b'\n').collect();
    let mut line = start.as_bytes().to_vec();
    line.resize(long, b'x');
    line.push(b'\n');
    lines.insert(at - 1, &line);
    let out = lines.concat();
    let offset = offset_of_line(&out, at);
    (out, offset)
}

/// Imports `text` and the same with a line longer than the line cap inserted as line 30:
/// the line is reported at its line and byte offset, and everything else lands.
fn an_overlong_line_costs_only_itself(command: &str, name: &str, text: &str, start: &str) {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join(format!("plain-{name}"));
    std::fs::write(&plain, text).unwrap();
    let reference = dir.path().join("reference");
    ok(&reference, &[command, s(&plain)]);
    let long = 65 << 20;
    let (damaged, offset) = with_long_line(text, 30, start, long);
    let path = dir.path().join(name);
    std::fs::write(&path, damaged).unwrap();
    let store = dir.path().join("store");
    let run = sediment(&store, &[command, s(&path)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let at = format!(
        "{}:30 at byte {offset}: line_too_long: {long} bytes",
        path.display()
    );
    assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
    assert!(run.stderr.contains("problems 1 ("), "{}", run.stderr);
    let lines = text.lines().count() + 1;
    assert!(
        run.stderr.contains(&format!("lines {lines},")),
        "{}",
        run.stderr
    );
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

#[test]
fn an_overlong_jsonl_line_is_reported_and_the_lines_around_it_land() {
    let dir = tempfile::tempdir().unwrap();
    // Twice over (the second copy of a row rewrites it): lines enough for line 30.
    let rows = exported_rows(dir.path()).repeat(2);
    assert!(rows.lines().count() > 40, "{rows}");
    an_overlong_line_costs_only_itself("import-jsonl", "rows.jsonl", &rows, "{\"key\": \"");
}

#[test]
fn an_overlong_hbase_tsv_line_is_reported_and_the_lines_around_it_land() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = hbase_tsv(dir.path());
    assert!(tsv.lines().count() > 40, "{tsv}");
    an_overlong_line_costs_only_itself("import-hbase-tsv", "dump.tsv", &tsv, "sha1:");
}

// ---------------------------------------------------------------------------------------
// Empty inputs, huge bad values

#[test]
fn empty_inputs_are_problems_and_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let empty_gz = dir.path().join("empty.jsonl.gz");
    std::fs::write(&empty_gz, gzip(b"")).unwrap();
    let zero = dir.path().join("zero.warc.gz");
    std::fs::write(&zero, b"").unwrap();
    let store = dir.path().join("store");
    for (command, file) in [
        ("import-jsonl", &empty_gz),
        ("import-warc", &zero),
        ("backfill-cdx", &zero),
        ("import-hbase-tsv", &zero),
    ] {
        for round in 0..2 {
            let run = sediment(&store, &[command, s(file)]);
            assert_eq!(run.status, 3, "{command} round {round}: {}", run.stderr);
            let at = format!("{}: empty_input: ", file.display());
            assert!(run.stderr.contains(&at), "{at:?} not in\n{}", run.stderr);
            assert!(!run.stderr.contains("already"), "{}", run.stderr);
        }
    }
    let out = dir.path().join("out.cdx");
    let run = sediment(&store, &["cdx", s(&zero), "-o", s(&out)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(run.stderr.contains("empty_input"), "{}", run.stderr);
}

/// The stderr line that reports `reason`.
fn problem_line<'a>(stderr: &'a str, reason: &str) -> &'a str {
    stderr
        .lines()
        .find(|l| l.contains(&format!(": {reason}: ")))
        .unwrap_or_else(|| panic!("no {reason} line in\n{stderr}"))
}

#[test]
fn huge_bad_values_are_quoted_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let huge = "Q".repeat(100_000);
    let shown = format!("\"{}\"…(100000 bytes)", "Q".repeat(64));

    let jsonl = dir.path().join("rows.jsonl");
    std::fs::write(&jsonl, format!("{{\"key\":\"{huge}\"}}\n")).unwrap();
    let run = sediment(&dir.path().join("a"), &["import-jsonl", s(&jsonl)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let line = problem_line(&run.stderr, "bad_key");
    assert!(line.len() < 400 && line.contains(&shown), "{line}");

    let tsv = dir.path().join("dump.tsv");
    std::fs::write(&tsv, format!("sha1:{huge}\t\t\t\n")).unwrap();
    let run = sediment(&dir.path().join("b"), &["import-hbase-tsv", s(&tsv)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let line = problem_line(&run.stderr, "bad_key");
    let shown_tsv = format!("\"sha1:{}\"…(100005 bytes)", "Q".repeat(59));
    assert!(line.len() < 400 && line.contains(&shown_tsv), "{line}");

    let cdx = dir.path().join("bad.cdx");
    let text = std::fs::read_to_string(fixture("crawl/crawl1.cdx")).unwrap();
    let first = text.lines().find(|l| !l.starts_with(' ')).unwrap();
    let mut fields: Vec<&str> = first.split(' ').collect();
    fields[5] = &huge;
    std::fs::write(&cdx, fields.join(" ") + "\n").unwrap();
    let run = sediment(&dir.path().join("c"), &["backfill-cdx", s(&cdx)]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let line = problem_line(&run.stderr, "bad_digest");
    assert!(line.len() < 400 && line.contains(&shown), "{line}");
}
