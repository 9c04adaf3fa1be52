//! Kill -9 at random moments (issue 11, "standing checks"): after every kill the store
//! opens for readers, the SQLite output of a projection opens, the re-run completes, and
//! the result equals an uninterrupted run.
//!
//! A kill proves something only if it hits the command while it works. Each test first
//! times uninterrupted runs and draws its kill moments from 5% to 80% of that time; a
//! kill that finds the command already gone counts as missed (its store is checked all the
//! same), and the test fails unless [`minimum_landed`] of its kills landed mid-run.
//!
//! CI runs `SEDIMENT_CRASH_KILLS` (default 5) kills per command; `scripts/crash-test.sh`
//! runs many more and reports the counts for RELIABILITY.md. Every test prints its
//! `SEDIMENT_CRASH_SEED`, and its failures name it: setting it repeats a run's draws.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_consistent_database, corpus, fixture, ok, sediment};

fn rounds() -> usize {
    std::env::var("SEDIMENT_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

/// Of `rounds` kills, how many must land while the command runs: four in five (all of
/// them below five kills). The draws avoid the run's ends, so a miss means the run was
/// much faster than the timed ones; that is rare but happens on a busy machine.
fn minimum_landed(rounds: usize) -> usize {
    (rounds * 4).div_ceil(5)
}

/// A test's kill moments and their tally. The moments come from a small deterministic
/// generator (xorshift) seeded per test.
struct Kills {
    test: String,
    seed: u64,
    state: u64,
    /// How long the command runs: the uninterrupted run's time, lowered to the time of a
    /// killed run that ended before its kill, so that later kills do not miss it too.
    run: Duration,
    landed: usize,
    missed: usize,
}

/// How a kill went.
enum Kill {
    /// The command was running when SIGKILL was sent.
    Landed,
    /// The command had exited, after this long, before its kill moment.
    Missed(Duration),
}

impl Kills {
    /// `run`: the time of an uninterrupted run of the command.
    fn new(test: &str, run: Duration) -> Kills {
        let seed = std::env::var("SEDIMENT_CRASH_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("{test}: SEDIMENT_CRASH_SEED={seed}, an uninterrupted run takes {run:?}");
        Kills {
            test: test.to_string(),
            seed,
            state: seed | 1,
            run,
            landed: 0,
            missed: 0,
        }
    }

    /// The next kill moment, uniformly from 5% to 80% of the run: a kill at the very start
    /// hits a process that has not opened anything yet, and one near the end misses a run
    /// a little faster than the timed ones (kills after the end prove nothing).
    fn next(&mut self) -> Duration {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let fraction = (self.state % 10_000) as f64 / 10_000.0;
        self.run.mul_f64(0.05 + 0.75 * fraction)
    }

    fn record(&mut self, kill: Kill) {
        match kill {
            Kill::Landed => self.landed += 1,
            Kill::Missed(ran) => {
                self.missed += 1;
                self.run = self.run.min(ran);
            }
        }
    }

    /// Names the test and its seed in a failure message.
    fn context(&self) -> String {
        format!("{} (SEDIMENT_CRASH_SEED={})", self.test, self.seed)
    }

    /// Runs a round's checks; a failure among them, theirs or a helper's, names the test,
    /// its seed, the round and the kill moment.
    fn check(&self, round: usize, after: Duration, checks: impl FnOnce()) {
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(checks)) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a check failed");
            panic!(
                "{} round {round} (killed after {after:?}): {message}",
                self.context()
            );
        }
    }

    /// Prints the tally and fails the test if too few kills landed.
    fn finish(self) {
        let rounds = self.landed + self.missed;
        let minimum = minimum_landed(rounds);
        eprintln!(
            "{}: {rounds} rounds, {} kills landed mid-run, {} missed (at least {minimum} must land), \
             0 failures, SEDIMENT_CRASH_SEED={}",
            self.test, self.landed, self.missed, self.seed
        );
        assert!(
            self.landed >= minimum,
            "{}: only {} of {rounds} kills landed while the command ran (at least {minimum} \
             must); the kills that missed found it already exited, the uninterrupted run took \
             {:?}",
            self.context(),
            self.landed,
            self.run
        );
    }
}

/// Runs `args` against `store`, killing it with SIGKILL after `after` if it still runs.
fn run_and_kill(store: &Path, args: &[String], after: Duration) -> Kill {
    // From before the spawn, as the uninterrupted run is timed.
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(store)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = started + after;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Kill::Missed(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    if child.try_wait().unwrap().is_some() {
        return Kill::Missed(started.elapsed());
    }
    let _ = child.kill();
    let _ = child.wait();
    Kill::Landed
}

/// Runs `args` against `store` uninterrupted and returns how long it took. The tests time
/// two such runs and draw kills within the faster: one run slowed by a busy machine (CI
/// runs two tests at once on two cores) would put late kills past the usual run's end.
fn timed_run(store: &Path, args: &[String]) -> Duration {
    let started = Instant::now();
    let run = sediment(store, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let took = started.elapsed();
    assert!(matches!(run.status, 0 | 3), "{args:?}: {}", run.stderr);
    took
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
    let first = timed_run(&reference, args);
    let expected = store_fingerprint(&reference);
    let timing = work.path().join("timing");
    copy_store(base, &timing);
    let mut kills = Kills::new(test, first.min(timed_run(&timing, args)));
    std::fs::remove_dir_all(&timing).unwrap();

    for round in 0..rounds() {
        let store = work.path().join(format!("round-{round}"));
        copy_store(base, &store);
        let after = kills.next();
        kills.record(run_and_kill(&store, args, after));
        kills.check(round, after, || {
            // Readers open the store and see a whole state: the old one or the new one.
            let seen = store_fingerprint(&store);
            assert!(
                seen == before || seen == expected,
                "a reader sees a partial state"
            );
            let rerun = sediment(&store, &args.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(
                matches!(rerun.status, 0 | 3),
                "the re-run failed: {}",
                rerun.stderr
            );
            assert!(
                store_fingerprint(&store) == expected,
                "the re-run differs from an uninterrupted run"
            );
        });
        std::fs::remove_dir_all(&store).unwrap();
    }
    kills.finish();
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

/// Kills `import-warc --threads 2` of many WARC copies into the store `base` makes.
fn kill_import_warc(test: &str, base: fn(&Path) -> PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = warc_inputs(dir.path(), 80);
    let base = base(dir.path());
    let args = vec![
        "import-warc".to_string(),
        "--threads".into(),
        "2".into(),
        inputs.display().to_string(),
    ];
    crash_writes(test, &base, &args);
}

#[test]
fn kill_import_warc_with_two_threads() {
    kill_import_warc("import-warc --threads 2", base_store);
}

/// A store that holds a crawl description and no capture: an import into it goes
/// through SST files.
fn store_without_captures(dir: &Path) -> PathBuf {
    let block = "software: crash test\r\n";
    let warc = format!(
        "WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n\
         WARC-Date: 2026-01-01T00:00:00Z\r\nContent-Type: application/warc-fields\r\n\
         Content-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    );
    let path = dir.join("warcinfo.warc");
    std::fs::write(&path, warc).unwrap();
    let base = dir.join("without-captures");
    ok(&base, &["import-warc", path.to_str().unwrap()]);
    base
}

#[test]
fn kill_import_warc_into_an_empty_store() {
    kill_import_warc(
        "import-warc --threads 2 (empty store: SST files)",
        store_without_captures,
    );
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
    let inputs = warc_inputs(dir.path(), 36);
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
    let first = timed_run(&store, &args(&reference));
    let expected = database_fingerprint(&reference);
    let timing = dir.path().join("timing.db");
    let mut kills = Kills::new(test, first.min(timed_run(&store, &args(&timing))));

    for round in 0..rounds() {
        let db = dir.path().join(format!("round-{round}.db"));
        let after = kills.next();
        let mut killed_args = args(&db);
        killed_args.extend(extra.iter().map(|a| a.to_string()));
        kills.record(run_and_kill(&store, &killed_args, after));
        kills.check(round, after, || {
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
                "the re-run failed: {}",
                rerun.stderr
            );
            let got = database_fingerprint(&db);
            assert!(
                got == expected,
                "the re-run's database differs from an uninterrupted run's:\n{got}\nexpected:\n{expected}"
            );
        });
    }
    kills.finish();
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

/// The tally itself: a command whose kills mostly found it exited fails its test.
#[test]
#[should_panic(expected = "only 3 of 5 kills landed")]
fn too_few_landed_kills_fail_the_test() {
    let mut kills = Kills::new("a command that ends too soon", Duration::from_millis(100));
    for _ in 0..3 {
        kills.record(Kill::Landed);
    }
    for _ in 0..2 {
        kills.record(Kill::Missed(Duration::from_millis(10)));
    }
    kills.finish();
}

#[test]
fn kill_moments_stay_inside_the_run_and_follow_a_faster_one() {
    let mut kills = Kills::new("draws", Duration::from_millis(1000));
    for _ in 0..1000 {
        let after = kills.next();
        assert!(
            (Duration::from_millis(50)..=Duration::from_millis(800)).contains(&after),
            "{after:?}"
        );
    }
    // A run that ended after 200 ms, before its kill: later kills come before 160 ms.
    kills.record(Kill::Missed(Duration::from_millis(200)));
    for _ in 0..1000 {
        assert!(kills.next() <= Duration::from_millis(160));
    }
}
