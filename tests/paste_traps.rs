//! What users copy and paste works: the examples of every `--help`, the README's Spark
//! lines, the names `warcs` prints given to `relocate`, `-` for standard input in `cdx`,
//! and a standard-input import that says how much it read.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fixture, ok, ok_in_dir, sediment, sediment_in};

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sediment"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommand names a help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn help_examples_paste_into_a_shell() {
    let mut commands: Vec<Vec<String>> = subcommands(&help(&[]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    let mut checked = 0;
    while let Some(command) = commands.pop() {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let text = help(&args);
        for sub in subcommands(&text) {
            let mut deeper = command.clone();
            deeper.push(sub);
            commands.push(deeper);
        }
        let examples = text
            .lines()
            .skip_while(|l| !l.starts_with("Examples:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "));
        for line in examples {
            // A comment after a command is set off by spaces and must start with `#`,
            // or the shell takes its words as arguments.
            if let Some(at) = line.trim_start().find("   ") {
                let after = line.trim_start()[at..].trim_start();
                assert!(
                    after.is_empty() || after.starts_with('#'),
                    "`sediment {} --help`: {line:?} does not paste",
                    args.join(" ")
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked} example lines");
}

#[test]
fn the_readme_spark_example_uses_the_binary_the_readme_builds() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("export SEDIMENT_BIN="))
        .expect("the Spark example sets SEDIMENT_BIN");
    let builds_target = readme.contains("cargo build --release");
    assert!(
        builds_target || !line.contains("target/release"),
        "{line:?}: the README builds with `cargo install`, which makes no target/release"
    );
    assert!(
        readme.contains("cargo install") && line.contains("command -v sediment"),
        "{line:?}"
    );
}

#[test]
fn relocate_takes_the_names_warcs_prints() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let store = root.join("store");
    std::fs::create_dir(root.join("old")).unwrap();
    std::fs::copy(
        fixture("crawl/crawl1.warc.gz"),
        root.join("old/crawl1.warc.gz"),
    )
    .unwrap();
    // Imported by a relative path: `warcs` prints that name beside the location.
    ok_in_dir(&root, &store, &["import-warc", "old/crawl1.warc.gz"]);
    std::fs::rename(root.join("old"), root.join("new")).unwrap();
    let listed = ok(&store, &["warcs"]);
    let columns: Vec<&str> = listed.trim_end().split('\t').collect();
    assert_eq!(columns[0], "missing", "{listed}");
    assert_eq!(columns[2], "old/crawl1.warc.gz", "{listed}");

    // The printed name's directory, relative, from the directory it is relative to.
    let dry = ok_in_dir(&root, &store, &["relocate", "old/", "new/", "--dry-run"]);
    assert!(
        dry.contains(&format!("1 WARC files ({}", columns[1])),
        "{dry}"
    );
    assert!(dry.contains("1 of them are found"), "{dry}");
    assert!(
        dry.contains(&format!("start with {}/old/", root.display())),
        "{dry}"
    );
    // From elsewhere, with an absolute new place.
    let elsewhere = tempfile::tempdir().unwrap();
    let new = format!("{}/new/", root.display());
    ok_in_dir(elsewhere.path(), &store, &["relocate", "old/", &new]);
    let listed = ok(&store, &["warcs"]);
    assert!(listed.starts_with("found\t"), "{listed}");
    ok(
        &store,
        &["cat", "3NNDQEXSDE4ATWJQ3EF6OYMCV6BKVENS"], // the v1 home page
    );
}

#[test]
fn cdx_reads_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let warc = fixture("crawl/crawl1.warc.gz");
    let store = dir.path().join("store");
    let from_file = ok(&store, &["cdx", warc.to_str().unwrap()]);
    let bytes = std::fs::read(&warc).unwrap();
    let run = sediment_in(&store, &["cdx", "-"], Some(&bytes));
    assert_eq!(run.status, 0, "{}", run.stderr);
    // Equal but for the file name column (the last), which standard input lacks.
    let without_name = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.rsplit_once(' ').map_or(l, |(rest, _)| rest).to_string())
            .collect()
    };
    assert!(from_file.lines().count() > 30);
    assert_eq!(without_name(&run.stdout), without_name(&from_file));
}

#[test]
fn a_standard_input_import_reports_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let warc = fixture("crawl/crawl1.warc.gz");
    let bytes = std::fs::read(&warc).unwrap();
    let store = dir.path().join("store");
    let run = sediment_in(
        &store,
        &["import-warc", "-", "--name", "crawl1.warc.gz", "--json"],
        Some(&bytes),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(report["counts"]["bytes"], bytes.len() as u64, "{report}");
    assert_eq!(report["bytes_in"], bytes.len() as u64, "{report}");
    let mb = format!("{:.1} MB in", bytes.len() as f64 / 1e6);
    assert!(run.stderr.contains(&mb), "{}", run.stderr);
    // The same as reading the file.
    let file_store = dir.path().join("file-store");
    let by_file = sediment(
        &file_store,
        &["import-warc", warc.to_str().unwrap(), "--json"],
    );
    let by_file: serde_json::Value = serde_json::from_str(by_file.stdout.trim()).unwrap();
    assert_eq!(report["counts"]["bytes"], by_file["counts"]["bytes"]);
}
