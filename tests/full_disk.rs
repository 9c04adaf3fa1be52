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
