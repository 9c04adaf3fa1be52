//! Issue 33, item 9: on a full disk, errors name the file being written, and a bulk load
//! that fails gives its staging files back on the way out. The disk is a small tmpfs
//! (mounting needs root; the test is skipped without it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{ok, sediment};

/// A tmpfs of `kib` KiB mounted at `dir`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Some(Tmpfs(dir.to_path_buf())),
            _ => {
                common::skip(
                    "a small tmpfs (mount -t tmpfs needs root)",
                    "run the test as root, or in a container allowed to mount",
                );
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the disk mounted at `disk` but for about `leave_kib` KiB: the next writer there
/// runs out of space after writing a little, not at its first byte.
fn fill(disk: &Path, leave_kib: u64) {
    use std::io::Write;
    let path = disk.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 4096];
    let mut written = 0u64;
    while file.write_all(&block).is_ok() {
        written += block.len() as u64;
    }
    drop(file);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(written.saturating_sub(leave_kib << 10))
        .unwrap();
}

/// Empties a disk for the next check.
fn empty(disk: &Path) {
    for entry in std::fs::read_dir(disk).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// CDX lines of `n` captures, each of its own digest, in the WARC `crawl.warc.gz`.
fn cdx(n: usize) -> String {
    const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::from(" CDX N b a m s k r M S V g\n");
    for i in 0..n {
        let digest: String = (0..32)
            .map(|k| BASE32[(i >> (5 * (k % 6))) & 31] as char)
            .collect();
        out.push_str(&format!(
            "example,full)/{i} 20240501100000 http://full.example/{i} text/html 200 \
             {digest} - - 1234 {} crawl.warc.gz\n",
            i * 1234
        ));
    }
    out
}

/// A WARC of `n` small responses, each with its own payload.
fn warc(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let body = format!("<html><body>page number {i}</body></html>");
        let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{body}");
        out.extend_from_slice(
            format!(
                "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{i:012}>\r\n\
                 WARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Target-URI: http://full.example/{i}\r\n\
                 Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
                block.len()
            )
            .as_bytes(),
        );
    }
    out
}

#[test]
fn a_full_disk_is_named_and_a_bulk_load_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), 256) else {
        return;
    };
    let input = dir.path().join("pages.warc");
    std::fs::write(&input, warc(5000)).unwrap();
    let store = dir.path().join("store");
    ok(&store, &["import-warc", input.to_str().unwrap()]);

    let rows = disk.0.join("rows.jsonl");
    let run = sediment(&store, &["export", "-o", rows.to_str().unwrap()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&rows.display().to_string()),
        "{}",
        run.stderr
    );
    std::fs::remove_file(&rows).unwrap();

    let lines = disk.0.join("index.cdx");
    let run = sediment(
        &store,
        &[
            "cdx",
            input.to_str().unwrap(),
            "-o",
            lines.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&lines.display().to_string()),
        "{}",
        run.stderr
    );
    std::fs::remove_file(&lines).unwrap();

    let db = disk.0.join("summary.db");
    let run = sediment(&store, &["project", "summary", "-o", db.to_str().unwrap()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&db.display().to_string()),
        "{}",
        run.stderr
    );
    for entry in std::fs::read_dir(&disk.0).unwrap() {
        let _ = std::fs::remove_file(entry.unwrap().path());
    }

    // A bulk load into a store on the full disk fails, naming a file, and leaves no
    // staging files behind.
    let all_rows = dir.path().join("all.jsonl");
    ok(&store, &["export", "-o", all_rows.to_str().unwrap()]);
    // A disk with room for a small store, not for the load's staging files.
    let Some(bulk_disk) = Tmpfs::mount(&dir.path().join("bulk-disk"), 640) else {
        return;
    };
    let small = bulk_disk.0.join("store");
    // The store is there before (a failed run that created it would remove it whole).
    let few_rows = dir.path().join("few.jsonl");
    let text = std::fs::read_to_string(&all_rows).unwrap();
    let few: Vec<&str> = text.lines().take(5).collect();
    std::fs::write(&few_rows, few.join("\n") + "\n").unwrap();
    ok(&small, &["import-jsonl", few_rows.to_str().unwrap()]);
    let run = sediment(
        &small,
        &["import-jsonl", "--bulk", all_rows.to_str().unwrap()],
    );
    assert_ne!(run.status, 0, "{}", run.stderr);
    let staging = small.join("staging");
    assert!(
        run.stderr.contains(&staging.display().to_string()),
        "{}",
        run.stderr
    );
    assert!(small.join("SEDIMENT").is_file());
    let left: Vec<_> = std::fs::read_dir(&staging)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "staging files left: {left:?}");
}

/// Every other file a command writes (`export-captures -o DIR`, `project jdbm -o DIR`,
/// `project locust -o DIR`, `--rejects FILE`) names itself on a full disk, and a failed
/// Parquet export leaves no half-written file.
#[test]
fn every_output_file_is_named_on_a_full_disk() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), 512) else {
        return;
    };
    let input = dir.path().join("pages.warc");
    std::fs::write(&input, warc(5000)).unwrap();
    let store = dir.path().join("store");
    ok(&store, &["import-warc", input.to_str().unwrap()]);

    let named = |args: &[&str], path: &Path| {
        let run = sediment(&store, args);
        assert_eq!(run.status, 1, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&path.display().to_string()),
            "{args:?}: {}",
            run.stderr
        );
    };

    fill(&disk.0, 16);
    let parquet = disk.0.join("captures");
    named(
        &[
            "export-captures",
            "-o",
            parquet.to_str().unwrap(),
            "--file-rows",
            "1000",
        ],
        &parquet,
    );
    let half_written: Vec<_> = files_under(&parquet)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(half_written.is_empty(), "{half_written:?}");
    empty(&disk.0);

    for projection in ["jdbm", "locust"] {
        fill(&disk.0, 16);
        let out = disk.0.join(projection);
        named(&["project", projection, "-o", out.to_str().unwrap()], &out);
        empty(&disk.0);
    }

    // Bad lines enough to overflow the rejects file's buffer several times.
    let bad = dir.path().join("bad.cdx");
    let lines: String = (0..5000)
        .map(|i| format!("not a cdx line number {i}\n"))
        .collect();
    std::fs::write(&bad, lines).unwrap();
    fill(&disk.0, 16);
    let rejects = disk.0.join("rejects.jsonl");
    named(
        &[
            "backfill-cdx",
            bad.to_str().unwrap(),
            "--rejects",
            rejects.to_str().unwrap(),
        ],
        &rejects,
    );
}

/// `backfill-cdx --bulk` into a store on a disk without room for its staging files fails
/// naming the staging area, and gives the space back on the way out.
#[test]
fn a_bulk_backfill_on_a_full_disk_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), 640) else {
        return;
    };
    let store = disk.0.join("store");
    let few = dir.path().join("few.cdx");
    std::fs::write(&few, cdx(5)).unwrap();
    ok(&store, &["backfill-cdx", few.to_str().unwrap()]);
    let all = dir.path().join("all.cdx");
    std::fs::write(&all, cdx(100_000)).unwrap();
    let run = sediment(&store, &["backfill-cdx", "--bulk", all.to_str().unwrap()]);
    assert_ne!(run.status, 0, "{}", run.stderr);
    let staging = store.join("staging");
    assert!(
        run.stderr.contains(&staging.display().to_string()),
        "{}",
        run.stderr
    );
    assert!(store.join("SEDIMENT").is_file());
    let left = files_under(&staging);
    assert!(left.is_empty(), "staging files left: {left:?}");
    ok(&store, &["stats"]);
}
