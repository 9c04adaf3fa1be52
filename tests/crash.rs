//! Kill -9 at random moments (issue 11, "standing checks"): after every kill the store
//! opens for readers, the SQLite output of a projection opens, the re-run completes, and
//! the result equals an uninterrupted run.
//!
//! CI runs `SEDIMENT_CRASH_KILLS` (default 3) kills per command; `scripts/crash-test.sh`
//! runs many more and reports the counts for RELIABILITY.md. `SEDIMENT_CRASH_SEED`
//! repeats a run's kill times.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_consistent_database, corpus, fixture, ok, sediment};

fn rounds() -> usize {
    std::env::var("SEDIMENT_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// A small deterministic generator of kill times (xorshift), seeded per test.
struct Kills {
    state: u64,
}

impl Kills {
    fn new(test: &str) -> Kills {
        let seed = std::env::var("SEDIMENT_CRASH_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("{test}: SEDIMENT_CRASH_SEED={seed}");
        Kills { state: seed | 1 }
    }

    /// A moment within `span`, uniformly.
    fn within(&mut self, span: Duration) -> Duration {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        span.mul_f64((self.state % 10_000) as f64 / 10_000.0)
    }
}

/// Runs `args` against `store`, killing it with SIGKILL after `after` (if still running).
/// Returns whether the kill landed.
fn run_and_kill(store: &Path, args: &[String], after: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(store)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + after;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let landed = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    landed
}

/// Everything a reader can see of a store: rows, captures and counts.
fn store_fingerprint(store: &Path) -> String {
    let mut stats: serde_json::Value =
        serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
    stats.as_object_mut().unwrap().remove("store_bytes_on_disk");
    format!(
        "{}\n{}\n{}",
        stats,
        ok(store, &["export"]),
        ok(store, &["captures"])
    )
}

/// The kill loop for a command that writes the store: each round starts from a copy of
/// `base` (a store holding earlier inputs), kills the command at a random moment, checks
/// the store still opens for readers and shows either the old or the new state, re-runs
/// the command and compares with the uninterrupted result.
fn crash_writes(test: &str, base: &Path, args: &[String]) {
    let work = tempfile::tempdir().unwrap();
    let reference = work.path().join("reference");
    copy_store(base, &reference);
    let before = store_fingerprint(&reference);
    let started = Instant::now();
    let run = sediment(
        &reference,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(matches!(run.status, 0 | 3), "{args:?}: {}", run.stderr);
    let span = started.elapsed().mul_f64(1.2);
    let expected = store_fingerprint(&reference);

    let mut kill_times = Kills::new(test);
    let mut landed = 0;
    for round in 0..rounds() {
        let store = work.path().join(format!("round-{round}"));
        copy_store(base, &store);
        let after = kill_times.within(span);
        if run_and_kill(&store, args, after) {
            landed += 1;
        }
        // Readers open the store and see a whole state: the old one or the new one.
        let seen = store_fingerprint(&store);
        assert!(
            seen == before || seen == expected,
            "{test} round {round} (killed after {after:?}): a reader sees a partial state"
        );
        let rerun = sediment(&store, &args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            matches!(rerun.status, 0 | 3),
            "{test} round {round}: the re-run failed: {}",
            rerun.stderr
        );
        assert_eq!(
            store_fingerprint(&store),
            expected,
            "{test} round {round} (killed after {after:?}): the re-run differs from an uninterrupted run"
        );
        std::fs::remove_dir_all(&store).unwrap();
    }
    eprintln!(
        "{test}: {} rounds, {landed} kills landed mid-run, 0 failures",
        rounds()
    );
}

fn copy_store(from: &Path, to: &Path) {
    // `cp -a` keeps the hard links that versions share with the live database.
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// WARC inputs: the fixture crawls and corpus WARCs, copied under many names so an
/// import takes long enough to be killed in every phase.
fn warc_inputs(dir: &Path, copies: usize) -> PathBuf {
    let inputs = dir.join("warcs");
    std::fs::create_dir_all(&inputs).unwrap();
    let mut sources = vec![
        fixture("crawl/crawl1.warc.gz"),
        fixture("crawl/crawl2.warc.gz"),
    ];
    sources.extend(corpus("pywb/sample_archive/warcs/example.warc.gz"));
    for i in 0..copies {
        for (j, source) in sources.iter().enumerate() {
            std::fs::copy(source, inputs.join(format!("copy-{i:03}-{j}.warc.gz"))).unwrap();
        }
    }
    inputs
}

/// N lines made by a scripts/gen_*.py; `None` after `common::skip` without python3 (or,
/// for gen_cdx.py, the corpus files it starts from).
#[track_caller]
fn generated(dir: &Path, script: &str, n: usize, name: &str) -> Option<PathBuf> {
    if script == "gen_cdx.py" {
        common::corpus("sandcrawler/example.cdx")?;
        common::corpus("pywb/sample_archive/cdx/iana.cdx")?;
    }
    let out = dir.join(name);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(script);
    let generated = common::python_output(&[], [script.into_os_string(), n.to_string().into()])?;
    std::fs::write(&out, generated).unwrap();
    Some(out)
}

/// A store holding the first fixture crawl (published), the base of every round.
fn base_store(dir: &Path) -> PathBuf {
    let base = dir.join("base");
    ok(
        &base,
        &[
            "backfill-cdx",
            fixture("crawl/crawl1.cdx").to_str().unwrap(),
        ],
    );
    base
}

#[test]
fn kill_import_warc_with_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = warc_inputs(dir.path(), 40);
    let base = base_store(dir.path());
    let args = vec![
        "import-warc".to_string(),
        "--threads".into(),
        "2".into(),
        inputs.display().to_string(),
    ];
    crash_writes("import-warc --threads 2", &base, &args);
}

#[test]
fn kill_backfill_cdx() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cdx) = generated(dir.path(), "gen_cdx.py", 40_000, "gen.cdx") else {
        return;
    };
    let base = base_store(dir.path());
    let args = vec!["backfill-cdx".to_string(), cdx.display().to_string()];
    crash_writes("backfill-cdx", &base, &args);
}

#[test]
fn kill_backfill_cdx_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cdx) = generated(dir.path(), "gen_cdx.py", 150_000, "gen.cdx") else {
        return;
    };
    let base = base_store(dir.path());
    // A small batch memory makes several batches, so kills land between ingestions.
    let args = vec![
        "backfill-cdx".to_string(),
        "--bulk".into(),
        "--bulk-memory-mb".into(),
        "16".into(),
        cdx.display().to_string(),
    ];
    crash_writes("backfill-cdx --bulk", &base, &args);
}

#[test]
fn kill_import_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let Some(rows) = generated(dir.path(), "gen_rows.py", 60_000, "rows.jsonl") else {
        return;
    };
    let base = base_store(dir.path());
    let args = vec!["import-jsonl".to_string(), rows.display().to_string()];
    crash_writes("import-jsonl", &base, &args);
}

#[test]
fn kill_import_jsonl_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let Some(rows) = generated(dir.path(), "gen_rows.py", 60_000, "rows.jsonl") else {
        return;
    };
    let base = base_store(dir.path());
    // A small batch memory makes several batches, so kills land between ingestions.
    let args = vec![
        "import-jsonl".to_string(),
        "--bulk".into(),
        "--bulk-memory-mb".into(),
        "4".into(),
        rows.display().to_string(),
    ];
    crash_writes("import-jsonl --bulk", &base, &args);
}

/// What a projection's database holds: every table's row count, after an integrity check
/// and a foreign-key check (the projections do not have SQLite enforce foreign keys).
fn database_fingerprint(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    assert_consistent_database(&conn, &db.display().to_string());
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables
        .iter()
        .filter(|t| !t.starts_with("sqlite_") && !t.contains("_fts_") && !t.ends_with("_data"))
        .map(|t| {
            let n: i64 = conn
                .query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
                .unwrap();
            format!("{t} {n}")
        })
        .chain(
            // The schema too: a first run fills a fresh database without some indexes and
            // UNIQUE constraints, and a run after an interrupted one must restore them.
            conn.prepare(
                "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master
                 ORDER BY type, name",
            )
            .unwrap()
            .query_map([], |r| {
                Ok(format!(
                    "{} {} {} {}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?
                ))
            })
            .unwrap()
            .map(Result::unwrap),
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// The kill loop for a projection: the store is only read; the database must open
/// after every kill and the re-run must give the same tables as an uninterrupted run.
/// `extra`: options of the interrupted runs and their re-runs only (the reference runs
/// without them, so they must not change the database).
fn crash_projection(test: &str, kind: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = warc_inputs(dir.path(), 12);
    let store = dir.path().join("store");
    ok(&store, &["import-warc", inputs.to_str().unwrap()]);
    let warc_dir = inputs.display().to_string();
    let args = |db: &Path| {
        vec![
            "project".to_string(),
            kind.into(),
            "-o".into(),
            db.display().to_string(),
            "--warc-dir".into(),
            warc_dir.clone(),
        ]
    };
    let reference = dir.path().join("reference.db");
    let started = Instant::now();
    let run = sediment(
        &store,
        &args(&reference)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(matches!(run.status, 0 | 3), "{}", run.stderr);
    let span = started.elapsed().mul_f64(1.2);
    let expected = database_fingerprint(&reference);

    let mut kill_times = Kills::new(test);
    let mut landed = 0;
    for round in 0..rounds() {
        let db = dir.path().join(format!("round-{round}.db"));
        let after = kill_times.within(span);
        let mut killed_args = args(&db);
        killed_args.extend(extra.iter().map(|a| a.to_string()));
        if run_and_kill(&store, &killed_args, after) {
            landed += 1;
        }
        if db.exists() {
            // The interrupted database opens and passes SQLite's integrity check.
            database_fingerprint(&db);
        }
        let rerun = sediment(
            &store,
            &killed_args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert!(
            matches!(rerun.status, 0 | 3),
            "{test} round {round}: {}",
            rerun.stderr
        );
        assert_eq!(
            database_fingerprint(&db),
            expected,
            "{test} round {round} (killed after {after:?})"
        );
    }
    eprintln!(
        "{test}: {} rounds, {landed} kills landed mid-run, 0 failures",
        rounds()
    );
}

#[test]
fn kill_project_crawl() {
    // Transactions end after a few pages' text, so that kills land between commits
    // inside a batch too.
    crash_projection("project crawl", "crawl", &["--commit-text-kib", "8"]);
}

#[test]
fn kill_project_summary() {
    crash_projection("project summary", "summary", &[]);
}
