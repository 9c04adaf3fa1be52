//! The small version of issue 36's crash check at scale (`scripts/crash-scale.sh`, run by
//! hand at 10 M lines): `kill -9` of a generated bulk load of several batches early, mid-way
//! and late; each time the killed store opens for a reader with a whole state, and the load
//! run again equals an uninterrupted one (stats and the SHA-256 of the whole export).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The generator `cargo test` built beside the binary (examples are built with the tests).
fn generator() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_sediment"));
    let path = bin.parent()?.join("examples/gen_scale_cdx");
    path.is_file().then_some(path)
}

#[test]
fn a_killed_bulk_load_of_several_batches_reruns_to_the_uninterrupted_store() {
    let Some(generator) = generator() else {
        common::skip(
            "the gen_scale_cdx example",
            "cargo test builds it; cargo build --release --example gen_scale_cdx",
        );
        return;
    };
    for tool in ["bc", "pgrep", "sha256sum"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            common::skip(tool, "apt-get install bc procps coreutils");
            return;
        }
    }
    let Some(_) = common::corpus("sandcrawler") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/crash-scale.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("200000")
        .arg(work.path().join("crash"))
        .env("SEDIMENT_BIN", env!("CARGO_BIN_EXE_sediment"))
        .env("GEN_BIN", &generator)
        .env("SEDIMENT_CORPUS", common::corpus_root())
        .env("BULK_MEMORY_MB", "50")
        .output()
        .expect("run scripts/crash-scale.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 of 3 kills passed"), "{stdout}\n{stderr}");
    // The loads were really several batches, and every kill landed while one ran.
    let batches: u32 = stdout
        .split("s of it after the input was read), ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(batches >= 2, "{stdout}");
    // The uninterrupted load is timed and its store measured.
    assert!(
        stdout.contains("the load: ") && stdout.contains(" a capture"),
        "{stdout}"
    );
    assert_eq!(
        stdout
            .matches("the re-run equals the uninterrupted load")
            .count(),
        3,
        "{stdout}"
    );
}
