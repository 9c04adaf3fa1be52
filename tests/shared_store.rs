//! The store as a shared table (issue 12, "The store"): read commands never create a
//! store, one writer at a time with a clear message for the second, readers that work
//! while a writer runs and see whole inputs only, on a read-only file system and a full
//! disk, and other tools (ldb, sst_dump, rocksdict) reading it.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{corpus, fixture, json_lines, ok, sediment};
use sediment::Sha1Key;
use sediment::internals::Store;
use sediment::internals::Writer;

fn crawl1_cdx() -> String {
    fixture("crawl/crawl1.cdx").display().to_string()
}

fn crawl2_cdx() -> String {
    fixture("crawl/crawl2.cdx").display().to_string()
}

/// A store holding the first fixture crawl's CDX.
fn crawl_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    ok(&store, &["backfill-cdx", &crawl1_cdx()]);
    store
}

#[test]
fn read_commands_never_create_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo-store");
    let not_a_store = dir.path().join("documents");
    std::fs::create_dir(&not_a_store).unwrap();
    std::fs::write(not_a_store.join("notes.txt"), "mine").unwrap();
    let db = dir.path().join("crawl.db");
    let key = "MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V";
    let commands: Vec<Vec<&str>> = vec![
        vec!["stats"],
        vec!["export"],
        vec!["get", key],
        vec!["cat", key],
        vec!["captures", "--url", "http://example.org/"],
        vec!["catalog", "get", "10.1/x"],
        vec!["project", "crawl", "-o", db.to_str().unwrap()],
        vec!["project", "summary", "-o", db.to_str().unwrap()],
    ];
    for path in [&missing, &not_a_store] {
        for args in &commands {
            let run = sediment(path, args);
            assert_eq!(
                run.status,
                1,
                "{args:?} on {}: {}",
                path.display(),
                run.stderr
            );
            assert!(
                run.stderr.contains("no Sediment store at")
                    && run.stderr.contains("import-warc or backfill-cdx"),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
    assert!(
        !missing.exists(),
        "a read command created {}",
        missing.display()
    );
    let names: Vec<_> = std::fs::read_dir(&not_a_store)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec!["notes.txt"],
        "nothing was written into the directory"
    );
}

#[test]
fn write_commands_refuse_a_directory_that_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let documents = dir.path().join("documents");
    std::fs::create_dir(&documents).unwrap();
    std::fs::write(documents.join("notes.txt"), "mine").unwrap();
    let run = sediment(&documents, &["backfill-cdx", &crawl1_cdx()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("is not a Sediment store and is not empty"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_dir(&documents).unwrap().count(), 1);

    // An empty directory becomes a store.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    ok(&empty, &["backfill-cdx", &crawl1_cdx()]);
    assert!(empty.join("SEDIMENT").is_file());
}

#[test]
fn a_second_writer_is_told_who_writes_and_can_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let holder = Store::open(&store).unwrap();

    let run = sediment(&store, &["backfill-cdx", &crawl2_cdx()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let pid = format!("pid {}", std::process::id());
    for needle in [
        store.to_str().unwrap(),
        "being written by another Sediment process",
        pid.as_str(),
        "--wait",
    ] {
        assert!(
            run.stderr.contains(needle),
            "{needle:?} missing: {}",
            run.stderr
        );
    }
    assert!(
        !run.stderr.contains("LOCK"),
        "no raw RocksDB text: {}",
        run.stderr
    );

    // Readers are not blocked by the writer.
    let stats: serde_json::Value = serde_json::from_str(&ok(&store, &["stats", "--json"])).unwrap();
    assert!(stats["captures"].as_u64().unwrap() > 0);

    // `--wait` queues behind the writer and runs when it is gone.
    let mut waiting = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(["--wait", "backfill-cdx", &crawl2_cdx()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "the second writer waits"
    );
    holder.close().unwrap();
    let output = waiting.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("waiting for the writer"), "{stderr}");
}

#[test]
fn readers_see_only_what_the_writer_published() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let before = ok(&store, &["export"]);

    // A writer in the middle of an input: a capture and a row written, not published.
    let writer_store = Store::open(&store).unwrap();
    writer_store.mark_inconsistent().unwrap();
    let key = Sha1Key([0x42; 20]);
    let mime = writer_store.schema().column_id("file:mime").unwrap();
    let mut writer = Writer::new(&writer_store, 1);
    writer.put_cell(&key, mime, b"application/pdf");
    writer.finish().unwrap();
    writer_store.flush().unwrap();

    assert_eq!(
        ok(&store, &["export"]),
        before,
        "the unpublished row is not seen"
    );
    let run = sediment(&store, &["get", &key.to_base32()]);
    assert_ne!(run.status, 0, "{}", run.stdout);

    writer_store.mark_consistent().unwrap();
    writer_store.close().unwrap();
    let after = ok(&store, &["get", &key.to_base32()]);
    assert!(after.contains("application/pdf"), "{after}");
}

#[test]
fn an_interrupted_import_stays_invisible_and_the_rerun_completes_it() {
    if !cfg!(feature = "crash-points") {
        // The binary only has the simulated crash with the feature; without it the run
        // would complete and prove nothing.
        common::skip(
            "the crash-points feature",
            "cargo test --features crash-points (scripts/test.sh)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let before = ok(&store, &["export"]);
    let stats = |store: &Path| {
        let mut stats: serde_json::Value =
            serde_json::from_str(&ok(store, &["stats", "--json"])).unwrap();
        stats.as_object_mut().unwrap().remove("store_bytes_on_disk");
        stats
    };
    let stats_before = stats(&store);

    let crashed = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .env("SEDIMENT_TEST_CRASH_AFTER_CAPTURES", "7")
        .arg("--store")
        .arg(&store)
        .args(["backfill-cdx", &crawl2_cdx()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&crashed.stderr).contains("simulated crash"),
        "{}",
        String::from_utf8_lossy(&crashed.stderr)
    );
    assert_eq!(
        ok(&store, &["export"]),
        before,
        "half an input is never visible"
    );
    assert_eq!(stats(&store), stats_before);

    let rerun = sediment(&store, &["backfill-cdx", &crawl2_cdx()]);
    assert_eq!(rerun.status, 0, "{}", rerun.stderr);
    assert!(rerun.stderr.contains("rolling back"), "{}", rerun.stderr);

    let reference = dir.path().join("reference");
    ok(&reference, &["backfill-cdx", &crawl1_cdx()]);
    ok(&reference, &["backfill-cdx", &crawl2_cdx()]);
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

#[test]
fn a_reader_keeps_its_version_while_the_writer_publishes_newer_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let reader = Store::open_reader(&store).unwrap();
    let first = reader.version().unwrap();
    ok(&store, &["backfill-cdx", &crawl2_cdx()]);
    let newest = sediment::internals::latest_version(&store).unwrap();
    assert!(newest > first);
    // The old version is still there for the reader, and goes once it is released.
    assert!(sediment::internals::version_dir(&store, first).is_dir());
    let rows = sediment::internals::count_captures(&reader).unwrap();
    assert!(rows > 0);
    drop(reader);
    ok(
        &store,
        &[
            "import-warc",
            fixture("crawl/crawl1.warc.gz").to_str().unwrap(),
        ],
    );
    assert!(!sediment::internals::version_dir(&store, first).exists());
    assert_eq!(
        sediment::internals::published_versions(&store).len(),
        1,
        "only the newest version is kept when nobody reads an older one"
    );
}

/// Runs the mount commands of `setup`; when one fails (no privileges here), undoes
/// them with `teardown` and returns false after `common::skip` (CI runs as root, where
/// they work).
#[track_caller]
fn with_mount(setup: &[&[&str]], teardown: &[&str]) -> bool {
    for cmd in setup {
        let status = Command::new(cmd[0]).args(&cmd[1..]).status();
        if !status.is_ok_and(|s| s.success()) {
            let _ = Command::new(teardown[0]).args(&teardown[1..]).status();
            common::skip(
                &format!("the privilege to run {cmd:?} (root or CAP_SYS_ADMIN)"),
                "run the tests as root, as CI does",
            );
            return false;
        }
    }
    true
}

struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn readers_work_on_a_read_only_file_system_and_a_full_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    ok(
        &store,
        &[
            "import-warc",
            fixture("crawl/crawl1.warc.gz").to_str().unwrap(),
        ],
    );
    let export = ok(&store, &["export"]);
    let key = json_lines(&export)[0]["key"].as_str().unwrap().to_string();

    // Read-only: the same directory through a read-only bind mount.
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let (s, r) = (store.to_str().unwrap(), ro.to_str().unwrap());
    if with_mount(
        &[
            &["mount", "--bind", s, r],
            &["mount", "-o", "remount,bind,ro", r],
        ],
        &["umount", r],
    ) {
        let _guard = Unmount(ro.clone());
        assert!(
            std::fs::write(ro.join("probe"), b"x").is_err(),
            "the mount is read-only"
        );
        assert_eq!(ok(&ro, &["export"]), export);
        ok(&ro, &["get", &key]);
        ok(&ro, &["stats"]);
        let run = sediment(&ro, &["backfill-cdx", &crawl2_cdx()]);
        assert_ne!(run.status, 0, "a writer cannot work on a read-only store");
    }

    // Full disk: a small file system holding a copy of the store, filled up.
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let m = small.to_str().unwrap();
    if with_mount(
        &[&["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", m]],
        &["umount", m],
    ) {
        let _guard = Unmount(small.clone());
        let copy = small.join("store");
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&store)
            .arg(&copy)
            .status()
            .unwrap();
        assert!(copied.success());
        let _ = Command::new("dd")
            .args(["if=/dev/zero", "bs=1M", "count=64"])
            .arg(format!("of={}", small.join("filler").display()))
            .stderr(std::process::Stdio::null())
            .status();
        assert!(
            std::fs::write(small.join("probe"), vec![0u8; 1 << 20]).is_err(),
            "the disk is full"
        );
        assert_eq!(ok(&copy, &["export"]), export);
        ok(&copy, &["stats"]);
    }
}

/// Row keys (hex) of an export.
fn exported_keys(store: &Path) -> BTreeSet<String> {
    json_lines(&ok(store, &["export"]))
        .iter()
        .map(|row| row["sha1hex"].as_str().unwrap().to_uppercase())
        .collect()
}

/// Where `ldb` and `sst_dump` (RocksDB 7.8) come from.
const ROCKSDB_TOOLS: &str = "Debian's rocksdb-tools, which scripts/setup.sh installs";

#[test]
fn ldb_sst_dump_and_rocksdict_read_the_store() {
    let (Some(cdx), Some(warc)) = (
        corpus("sandcrawler/example.cdx"),
        corpus("pywb/sample_archive/warcs/example.warc.gz"),
    ) else {
        return;
    };
    if !common::have_program("ldb", ROCKSDB_TOOLS)
        || !common::have_program("sst_dump", ROCKSDB_TOOLS)
        || !common::have_python(&["rocksdict"])
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(&store, &["backfill-cdx", cdx.to_str().unwrap()]);
    ok(&store, &["import-warc", warc.to_str().unwrap()]);
    let expected = exported_keys(&store);
    assert!(expected.len() > 5);
    let current = store.join("current");

    // ldb of RocksDB 7.8: every row key of the `f` and `file` families.
    let mut keys = BTreeSet::new();
    for family in ["f", "file"] {
        let out = Command::new("ldb")
            .arg(format!("--db={}", current.display()))
            .args(["--ignore_unknown_options", "--key_hex"])
            .arg(format!("--column_family={family}"))
            .arg("scan")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ldb scan {family}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let hex = line.strip_prefix("0x").expect("hex key");
            keys.insert(hex[..40].to_string());
        }
    }
    assert_eq!(keys, expected, "ldb lists every row key");

    // sst_dump reads the table files.
    let sst = std::fs::read_dir(&current)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .expect("an SST file")
        .path();
    let out = Command::new("sst_dump")
        .arg(format!("--file={}", sst.display()))
        .args(["--command=check", "--verify_checksum"])
        .output()
        .unwrap();
    assert!(
        out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("Corrupt"),
        "sst_dump: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // rocksdict (PyPI) iterates family `f` without any custom merge operator.
    let script = r#"
import sys
from rocksdict import Rdict, AccessType, Options
path = sys.argv[1]
families = Rdict.list_cf(path)
db = Rdict(path, options=Options(raw_mode=True), access_type=AccessType.read_only(),
           column_families={name: Options(raw_mode=True) for name in families})
for key in db.get_column_family("f").keys():
    print(key[:20].hex().upper())
# What the README says of the capture index: other tools cannot merge its operands.
for name in ("capture", "capture_by_digest"):
    it = db.get_column_family(name).iter()
    it.seek_to_first()
    try:
        it.status()
        print("capture family", name, "read", it.valid())
    except Exception as e:
        print("capture family", name, "stops:", e)
"#;
    let args = [
        std::ffi::OsStr::new("-c"),
        std::ffi::OsStr::new(script),
        current.as_os_str(),
    ];
    let out = common::python_output(&["rocksdict"], args).expect("rocksdict was found above");
    let stdout = String::from_utf8_lossy(&out);
    let (capture_lines, key_lines): (Vec<&str>, Vec<&str>) = stdout
        .lines()
        .partition(|l| l.starts_with("capture family"));
    let from_rocksdict: BTreeSet<String> = key_lines.into_iter().map(str::to_string).collect();
    assert_eq!(from_rocksdict, expected, "rocksdict iterates family f");
    // It does not read the capture index (README "Other tools"); `export --only-captures` does.
    assert_eq!(capture_lines.len(), 2, "{stdout}");
    for line in capture_lines {
        assert!(
            line.contains("stops: Invalid argument: merge_operator_ must be set"),
            "{line}"
        );
    }
    let captures = ok(&store, &["export", "--only-captures"]);
    assert!(
        captures
            .lines()
            .filter(|l| l.starts_with("{\"capture\":"))
            .count()
            > 5
    );
}

/// `sst_dump --show_properties --command=check --verify_checksum` of one SST file:
/// (compression algorithm, entries); fails the test on any error or corruption.
fn sst_compression_and_entries(sst: &Path) -> (String, u64) {
    let out = Command::new("sst_dump")
        .arg(format!("--file={}", sst.display()))
        .args(["--show_properties", "--command=check", "--verify_checksum"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !text.contains("Corrupt"),
        "sst_dump {}: {text}{}",
        sst.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name:?} in sst_dump's output: {text}"))
            .trim()
            .to_string()
    };
    (
        field("SST file compression algo:"),
        field("# entries:").parse().unwrap(),
    )
}

#[test]
fn a_bulk_load_writes_the_capture_spaces_in_zstd_which_rocksdb_7_reads() {
    let Some(cdx) = corpus("sandcrawler/example.cdx") else {
        return;
    };
    if !common::have_program("sst_dump", ROCKSDB_TOOLS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(&store, &["backfill-cdx", "--bulk", cdx.to_str().unwrap()]);
    let captures: u64 = ok(&store, &["stats"])
        .lines()
        .find_map(|l| l.strip_prefix("captures"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(captures > 5);
    // Every table file of the published version, through RocksDB 7.8's reader (Debian's),
    // checksums verified: ZSTD for the capture index and the by-digest index (one entry
    // a capture each, as the loader writes them), Snappy for every other family.
    let mut entries = std::collections::BTreeMap::<String, u64>::new();
    for file in std::fs::read_dir(store.join("current")).unwrap().flatten() {
        if file.file_name().to_string_lossy().ends_with(".sst") {
            let (algo, n) = sst_compression_and_entries(&file.path());
            *entries.entry(algo).or_default() += n;
        }
    }
    assert_eq!(entries.get("ZSTD"), Some(&(2 * captures)), "{entries:?}");
    assert!(entries.get("Snappy").is_some_and(|&n| n > 0), "{entries:?}");
    assert_eq!(entries.len(), 2, "{entries:?}");
}

#[test]
fn the_live_store_and_a_busy_writer_do_not_stop_a_long_reader() {
    // A reader opened before a long import keeps reading while the import publishes.
    let dir = tempfile::tempdir().unwrap();
    let store = crawl_store(dir.path());
    let reader = Store::open_reader(&store).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args([
            "import-warc",
            fixture("crawl/crawl2.warc.gz").to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(sediment::internals::count_captures(&reader).unwrap() > 0);
        assert!(Instant::now() < deadline, "the import finishes");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_stale_staging_link_to_a_live_table_is_never_written_through() {
    // A bulk load killed between RocksDB's hard link of an ingested SST and the removal
    // of its staging name leaves a second name of a live table in staging/.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(&store, &["backfill-cdx", "--bulk", &crawl1_cdx()]);
    let live = std::fs::read_dir(&store)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .expect("a live table");
    let content = std::fs::read(&live).unwrap();
    let staging = store.join("staging").join("bulk-1-1");
    std::fs::create_dir_all(&staging).unwrap();
    let stale = staging.join("capture-1-0.sst");
    std::fs::hard_link(&live, &stale).unwrap();

    ok(&store, &["backfill-cdx", "--bulk", &crawl2_cdx()]);
    assert!(!stale.exists(), "the writer cleared the staging area first");
    if live.exists() {
        assert_eq!(
            std::fs::read(&live).unwrap(),
            content,
            "the live table is intact"
        );
    }
    let reference = dir.path().join("reference");
    ok(&reference, &["backfill-cdx", "--bulk", &crawl1_cdx()]);
    ok(&reference, &["backfill-cdx", "--bulk", &crawl2_cdx()]);
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));
}

#[test]
fn a_long_run_publishes_each_wave_of_whole_inputs() {
    if !cfg!(feature = "crash-points") {
        // The binary only has the simulated crash with the feature; without it the run
        // would complete and prove nothing.
        common::skip(
            "the crash-points feature",
            "cargo test --features crash-points (scripts/test.sh)",
        );
        return;
    }
    // Waves of no length: each input is committed and published before the next starts.
    // A crash in the second input leaves the first one visible, whole.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let crawl1 = fixture("crawl/crawl1.warc.gz");
    let crawl2 = fixture("crawl/crawl2.warc.gz");
    let crashed = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .env("SEDIMENT_TEST_CRASH_AFTER_CAPTURES", "70")
        .arg("--store")
        .arg(&store)
        .args(["import-warc", "--threads", "1", "--commit-every", "0"])
        .args([&crawl1, &crawl2])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&crashed.stderr).contains("simulated crash"));
    let first_only = dir.path().join("first-only");
    ok(&first_only, &["import-warc", crawl1.to_str().unwrap()]);
    assert_eq!(ok(&store, &["export"]), ok(&first_only, &["export"]));
    assert_eq!(ok(&store, &["captures"]), ok(&first_only, &["captures"]));

    // The re-run skips the committed input and completes the other.
    let rerun = sediment(
        &store,
        &[
            "import-warc",
            "--commit-every",
            "0",
            crawl1.to_str().unwrap(),
            crawl2.to_str().unwrap(),
        ],
    );
    assert_eq!(rerun.status, 0, "{}", rerun.stderr);
    let reference = dir.path().join("reference");
    ok(
        &reference,
        &[
            "import-warc",
            crawl1.to_str().unwrap(),
            crawl2.to_str().unwrap(),
        ],
    );
    assert_eq!(ok(&store, &["export"]), ok(&reference, &["export"]));

    // The same with CDX inputs and bulk loads.
    let bulk = dir.path().join("bulk");
    ok(
        &bulk,
        &[
            "backfill-cdx",
            "--bulk",
            "--commit-every",
            "0",
            &crawl1_cdx(),
            &crawl2_cdx(),
        ],
    );
    let bulk_reference = dir.path().join("bulk-reference");
    ok(
        &bulk_reference,
        &["backfill-cdx", &crawl1_cdx(), &crawl2_cdx()],
    );
    assert_eq!(ok(&bulk, &["export"]), ok(&bulk_reference, &["export"]));
}

/// What a reader of one published version sees: rows, captures and inputs counted by one
/// process (so they come from the same version), and the export.
/// The counts and the export a reader sees, or `None` before the first publication and
/// when a publication came between the reads (versions only grow, so equal counts before
/// and after the export mean all three read one version).
fn observed_state(store: &Path) -> Option<(String, String)> {
    let counts = || {
        let stats = sediment(store, &["stats", "--json"]);
        if stats.status != 0 {
            return None;
        }
        let stats: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
        Some(format!(
            "rows {} captures {} inputs {}",
            stats["rows"], stats["captures"], stats["inputs"]
        ))
    };
    let before = counts()?;
    let export = sediment(store, &["export"]);
    let after = counts()?;
    (export.status == 0 && before == after).then_some((before, export.stdout))
}

#[test]
fn exports_taken_while_an_import_runs_show_only_whole_inputs() {
    // A real multi-input import publishes after each input; readers running meanwhile must
    // see one of the states "the first k inputs, whole" and nothing in between.
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<String> = [
        "crawl/crawl1.warc.gz",
        "crawl/crawl2.warc.gz",
        "crawl-run/run-00000.warc.gz",
        "crawl-run/run-00001.warc.gz",
        "crawl-run/run-00002.warc.gz",
        "crawl-run/run-meta.warc.gz",
    ]
    .iter()
    .map(|f| fixture(f).display().to_string())
    .collect();
    fn import(inputs: &[String]) -> Vec<&str> {
        let mut args = vec!["import-warc", "--threads", "1", "--commit-every", "0"];
        args.extend(inputs.iter().map(String::as_str));
        args
    }
    // The states a reader may see: the first k inputs imported, k = 1..=n, each counted
    // by stats and exported.
    let mut states = Vec::new();
    for k in 1..=inputs.len() {
        let reference = dir.path().join(format!("reference-{k}"));
        let run = sediment(&reference, &import(&inputs[..k]));
        assert!(run.status == 0 || run.status == 3, "{}", run.stderr);
        states.push(observed_state(&reference).expect("a reference store"));
    }

    let store = dir.path().join("store");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .arg("--store")
        .arg(&store)
        .args(import(&inputs))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = BTreeSet::new();
    loop {
        let finished = child.try_wait().unwrap().is_some();
        if let Some((counts, export)) = observed_state(&store) {
            let k = states
                .iter()
                .position(|(c, e)| *c == counts && *e == export)
                .unwrap_or_else(|| {
                    panic!("a reader saw a state no whole prefix of the inputs gives: {counts}")
                });
            seen.insert(k + 1);
        }
        if finished {
            break;
        }
        assert!(Instant::now() < deadline, "the import finishes");
    }
    assert!(
        child
            .wait()
            .unwrap()
            .code()
            .is_some_and(|c| c == 0 || c == 3)
    );
    assert!(
        seen.contains(&inputs.len()),
        "the finished import is seen whole: {seen:?}"
    );
    eprintln!("readers saw the states after inputs {seen:?}");
}
