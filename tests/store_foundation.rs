//! The store foundation (issue 2): schema, versions, export filters, JSON-lines round
//! trip, the HBase TSV migration, and bad input.

mod common;

use std::collections::BTreeMap;

use common::{corpus, json_lines, ok, sediment, sediment_in};
use sediment::Sha1Key;
use sediment::internals::Projection;
use sediment::internals::Schema;
use sediment::internals::Store;
use sediment::internals::Writer;
use serde_json::{Value, json};

#[test]
fn schema_command_prints_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&dir.path().join("s"), &["schema"]);
    for needle in [
        "f        c",
        "file     size",
        "u64",
        "grobid0  status_code",
        "i64",
        "match0   minfo",
        "snappy",
    ] {
        assert!(out.contains(needle), "{needle:?} missing from\n{out}");
    }
}

#[test]
fn every_family_is_snappy_compressed_in_the_options_file_the_capture_spaces_bottom_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("s");
    drop(Store::open(&store_dir).unwrap());
    let options = std::fs::read_dir(&store_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .max_by_key(|e| e.file_name())
        .expect("RocksDB writes an OPTIONS file");
    let text = std::fs::read_to_string(options.path()).unwrap();
    let mut family = None;
    let mut compression: BTreeMap<String, String> = BTreeMap::new();
    let mut bottommost: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("[CFOptions \"")
            .and_then(|l| l.strip_suffix("\"]"))
        {
            family = Some(name.to_string());
        } else if let (Some(f), Some(value)) = (&family, line.trim().strip_prefix("compression=")) {
            compression.insert(f.clone(), value.to_string());
        } else if let (Some(f), Some(value)) =
            (&family, line.trim().strip_prefix("bottommost_compression="))
        {
            bottommost.insert(f.clone(), value.to_string());
        }
    }
    for name in [
        "f",
        "file",
        "grobid0",
        "match0",
        "capture",
        "capture_by_digest",
        "meta",
    ] {
        assert_eq!(
            compression.get(name).map(String::as_str),
            Some("kSnappyCompression"),
            "family {name} in {compression:?}"
        );
        // The bottom level, where a family's data stays: ZSTD for the two capture key
        // spaces only, the seed's families keep Snappy there too.
        let bottom = if name.starts_with("capture") {
            "kZSTD"
        } else {
            "kSnappyCompression"
        };
        assert_eq!(
            bottommost.get(name).map(String::as_str),
            Some(bottom),
            "family {name} in {bottommost:?}"
        );
    }
}

#[test]
fn version_caps_hold_on_read_and_surplus_is_compacted_away() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = sediment::internals::EMBEDDED_SCHEMA.to_string();
    // Allow two versions in `file` to see the cap bite at 2, keep 1 elsewhere.
    text = text.replacen(
        "\"name\": \"file\",\n      \"description\": \"What the file is: size, type and the CDX view of its first capture.\",\n      \"max_versions\": 1",
        "\"name\": \"file\",\n      \"description\": \"What the file is: size, type and the CDX view of its first capture.\",\n      \"max_versions\": 2",
        1,
    );
    let schema = Schema::parse(&text).unwrap();
    assert_eq!(schema.families[1].max_versions, 2);
    let store = Store::open_with_schema(&dir.path().join("s"), schema).unwrap();
    let key = Sha1Key([9; 20]);
    let mime = store.schema().column_id("file:mime").unwrap();
    let fc = store.schema().column_id("f:c").unwrap();
    let mut writer = Writer::new(&store, 0);
    for (ts, value) in [(100, "a/1"), (300, "a/3"), (200, "a/2")] {
        writer.put_cell_at(&key, mime, ts, value.as_bytes());
        writer.put_cell_at(&key, fc, ts, format!("{{\"c\":{ts}}}").as_bytes());
    }
    writer.finish().unwrap();

    let mut projection = Projection::all(store.schema());
    projection.versions = 10;
    let row = store.read_row(&key, &projection).unwrap().unwrap();
    let mime_versions: Vec<_> = row
        .cell(mime)
        .unwrap()
        .versions
        .iter()
        .map(|v| v.ts)
        .collect();
    assert_eq!(mime_versions, vec![300, 200], "newest two of file:mime");
    let fc_versions: Vec<_> = row
        .cell(fc)
        .unwrap()
        .versions
        .iter()
        .map(|v| v.ts)
        .collect();
    assert_eq!(fc_versions, vec![300], "f keeps one version");
    assert_eq!(
        store.raw_version_count(0),
        3,
        "before compaction all are stored"
    );

    store.flush().unwrap();
    store.compact();
    assert_eq!(store.raw_version_count(0), 1, "f: surplus removed");
    assert_eq!(store.raw_version_count(1), 2, "file: cap of 2 kept");
}

/// Imports the real HBase dump and returns the store path.
fn store_with_tsv(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let tsv = corpus("sandcrawler/example_ungrobided.tsv")?;
    let store = dir.join("s");
    let run = sediment(&store, &["import-hbase-tsv", tsv.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("rows 20"), "{}", run.stderr);
    Some(store)
}

#[test]
fn hbase_tsv_migration_keeps_every_cell_value() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = store_with_tsv(dir.path()) else {
        return;
    };
    let tsv = corpus("sandcrawler/example_ungrobided.tsv").unwrap();
    // Expected values straight from the dump, parsed here independently of the importer.
    let mut expected: BTreeMap<String, Value> = BTreeMap::new();
    for line in std::fs::read_to_string(&tsv).unwrap().lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4);
        let key = f[0].strip_prefix("sha1:").unwrap().to_string();
        expected.insert(
            key,
            json!({
                "f:c": serde_json::from_str::<Value>(f[1]).unwrap(),
                "file:mime": f[2],
                "file:cdx": serde_json::from_str::<Value>(f[3]).unwrap(),
            }),
        );
    }
    let rows = json_lines(&ok(&store, &["export"]));
    assert_eq!(rows.len(), expected.len());
    for row in rows {
        let key = row["key"].as_str().unwrap();
        let want = &expected[key];
        for column in ["f:c", "file:mime", "file:cdx"] {
            assert_eq!(row[column], want[column], "{key} {column}");
        }
        let hex = Sha1Key::parse(key).unwrap().to_hex();
        assert_eq!(row["sha1hex"], hex.as_str());
    }
}

#[test]
fn get_accepts_all_key_spellings() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = store_with_tsv(dir.path()) else {
        return;
    };
    let b32 = "23LOSW2QVMKUYXPFZBXQHBBNQR45WTMU";
    let hex = Sha1Key::parse(b32).unwrap().to_hex();
    let a = ok(&store, &["get", b32]);
    assert_eq!(ok(&store, &["get", &hex]), a);
    assert_eq!(ok(&store, &["get", &format!("sha1:{b32}")]), a);
    assert_eq!(ok(&store, &["get", &b32.to_lowercase()]), a);
    let row: Value = serde_json::from_str(&a).unwrap();
    assert_eq!(row["file:cdx"]["c_size"], 1050532);
    let bad = sediment(&store, &["get", "NOTAKEY"]);
    assert_ne!(bad.status, 0);
    assert!(
        bad.stderr.contains("expected 32 (base32) or 40 (hex)"),
        "{}",
        bad.stderr
    );
    let missing = sediment(&store, &["get", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]);
    assert_ne!(missing.status, 0);
    assert!(missing.stderr.contains("no row"), "{}", missing.stderr);
}

#[test]
fn export_import_export_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = store_with_tsv(dir.path()) else {
        return;
    };
    // add a second version and a grobid cell so every type is exercised
    let extra = dir.path().join("extra.jsonl");
    std::fs::write(
        &extra,
        "{\"key\":\"23LOSW2QVMKUYXPFZBXQHBBNQR45WTMU\",\"file:size\":1050000,\"grobid0:status_code\":200,\
         \"grobid0:status\":{\"status\":\"success\"},\"grobid0:tei_xml\":\"<TEI>\\u00e9\\t</TEI>\"}\n",
    )
    .unwrap();
    ok(&store, &["import-jsonl", extra.to_str().unwrap()]);
    for versions in [None, Some("3")] {
        let mut args = vec!["export"];
        if let Some(v) = versions {
            args.extend(["--versions", v]);
        }
        let first = ok(&store, &args);
        let dump = dir.path().join(format!("dump-{versions:?}.jsonl"));
        std::fs::write(&dump, &first).unwrap();
        for bulk in [false, true] {
            let copy = dir.path().join(format!("copy-{versions:?}-{bulk}"));
            let mut import = vec!["import-jsonl", dump.to_str().unwrap()];
            if bulk {
                import.push("--bulk");
            }
            ok(&copy, &import);
            let second = ok(&copy, &args);
            assert_eq!(
                first, second,
                "round trip with versions={versions:?}, bulk={bulk}"
            );
        }
        assert_eq!(first.lines().count(), 20);
    }
}

#[test]
fn export_filters() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = store_with_tsv(dir.path()) else {
        return;
    };
    let all = json_lines(&ok(&store, &["export"]));
    let keys: Vec<&str> = all.iter().map(|r| r["key"].as_str().unwrap()).collect();
    let raw: Vec<Sha1Key> = keys.iter().map(|k| Sha1Key::parse(k).unwrap()).collect();
    assert!(
        raw.windows(2).all(|w| w[0] < w[1]),
        "rows come in key (byte) order"
    );

    let only_mime = json_lines(&ok(&store, &["export", "--columns", "file:mime"]));
    assert_eq!(only_mime.len(), 20);
    for row in &only_mime {
        let cols: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(cols, ["file:mime", "key", "sha1hex"]);
    }
    let only_f = json_lines(&ok(&store, &["export", "--families", "f"]));
    assert!(
        only_f
            .iter()
            .all(|r| r.get("f:c").is_some() && r.get("file:mime").is_none())
    );

    let limited = json_lines(&ok(&store, &["export", "--limit", "3"]));
    assert_eq!(limited.len(), 3);
    assert_eq!(limited[2]["key"], all[2]["key"]);

    // start inclusive, end exclusive
    let ranged = json_lines(&ok(
        &store,
        &["export", "--start", keys[5], "--end", keys[9]],
    ));
    let ranged_keys: Vec<&str> = ranged.iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(ranged_keys, keys[5..9]);

    let prefix = &keys[0][..3];
    let by_prefix = json_lines(&ok(&store, &["export", "--prefix", prefix]));
    let want: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| k.starts_with(prefix))
        .collect();
    let got: Vec<&str> = by_prefix
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(got, want);
    assert!(!got.is_empty());

    let versions = json_lines(&ok(&store, &["export", "--limit", "1", "--versions", "2"]));
    let cell = versions[0]["file:mime"].as_array().unwrap();
    assert_eq!(cell.len(), 1);
    assert!(cell[0]["ts"].as_u64().unwrap() > 1_600_000_000_000);

    let out = dir.path().join("out.jsonl");
    ok(&store, &["export", "-o", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 20);

    let bad = sediment(&store, &["export", "--columns", "file:nope"]);
    assert_ne!(bad.status, 0);
    assert!(bad.stderr.contains("unknown column"), "{}", bad.stderr);
}

#[test]
fn malformed_lines_are_counted_and_valid_ones_land() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let input = "\
{\"key\":\"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\",\"file:mime\":\"text/plain\"}
{\"key\":\"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBY\",\"file:mime\":\"text/plain\"}
not json at all
{\"key\":\"MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V\",\"file:nope\":1}
{\"key\":\"MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V\",\"file:size\":-4}

{\"key\":\"KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR\",\"file:size\":344175}
";
    let path = dir.path().join("in.jsonl");
    std::fs::write(&path, input).unwrap();
    let rejects = dir.path().join("rejects.jsonl");
    let run = sediment(
        &store,
        &[
            "import-jsonl",
            path.to_str().unwrap(),
            "--rejects",
            rejects.to_str().unwrap(),
        ],
    );
    assert_eq!(run.status, 3, "done, with bad lines: {}", run.stderr);
    assert!(run.stderr.contains(":2: bad_key:"), "{}", run.stderr);
    assert!(run.stderr.contains(":3: bad_json:"), "{}", run.stderr);
    assert!(run.stderr.contains(":4: unknown_column:"), "{}", run.stderr);
    assert!(run.stderr.contains(":5: bad_value:"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("problems 4 (bad_json: 1, bad_key: 1, bad_value: 1, unknown_column: 1)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("rows 2"), "{}", run.stderr);
    let rows = json_lines(&ok(&store, &["export"]));
    assert_eq!(rows.len(), 2);
    let reject_lines = json_lines(&std::fs::read_to_string(&rejects).unwrap());
    assert_eq!(reject_lines.len(), 4);
    assert_eq!(reject_lines[0]["line"], 2);
    assert_eq!(reject_lines[1]["raw"], "not json at all");

    // strict: the first bad line is fatal
    let strict = sediment(
        &dir.path().join("s2"),
        &["import-jsonl", "--strict", path.to_str().unwrap()],
    );
    assert_ne!(strict.status, 0);
    assert!(strict.stderr.contains("--strict"), "{}", strict.stderr);
    // Nothing after the bad line lands (its chunk's rows are sharded over threads).
    let kept = sediment(&dir.path().join("s2"), &["export"]);
    assert!(
        !kept.stdout.contains("KJBCOT7LGBNIAVGEGPUELK5OK6RTFORR"),
        "{}",
        kept.stdout
    );

    // bad TSV lines too
    let tsv = dir.path().join("in.tsv");
    std::fs::write(
        &tsv,
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\t{\"c\":1}\ttext/plain\t{\"dt\":\"1\"}\n\
         sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\t{\"c\":1}\n\
         sha1:MQHD36X5MNZPWFNMD5LFOYZSFGCHUN3V\t{bad\ttext/plain\t{}\n",
    )
    .unwrap();
    let run = sediment(
        &dir.path().join("s3"),
        &["import-hbase-tsv", tsv.to_str().unwrap()],
    );
    assert_eq!(run.status, 3, "done, with bad lines: {}", run.stderr);
    assert!(
        run.stderr.contains(":2: wrong_field_count"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(":3: bad_value: f:c"), "{}", run.stderr);
    assert!(run.stderr.contains("rows 1"), "{}", run.stderr);
}

#[test]
fn reapplying_an_input_is_a_no_op_and_stdin_works() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = store_with_tsv(dir.path()) else {
        return;
    };
    let before = ok(&store, &["export", "--versions", "5"]);
    let tsv = corpus("sandcrawler/example_ungrobided.tsv").unwrap();
    let again = sediment(&store, &["import-hbase-tsv", tsv.to_str().unwrap()]);
    assert!(
        again.stderr.contains("already imported"),
        "{}",
        again.stderr
    );
    assert_eq!(ok(&store, &["export", "--versions", "5"]), before);

    let dump = ok(&store, &["export"]);
    let copy = dir.path().join("copy");
    let run = sediment_in(&copy, &["import-jsonl", "-"], Some(dump.as_bytes()));
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(ok(&copy, &["export"]), dump);
}

#[test]
fn stats_counts_rows_cells_and_mime_types() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = store_with_tsv(dir.path()) else {
        return;
    };
    let stats: Value = serde_json::from_str(&ok(&store, &["stats", "--json"])).unwrap();
    assert_eq!(stats["rows"], 20);
    assert_eq!(stats["cells"]["f:c"], 20);
    assert_eq!(stats["cells"]["file:cdx"], 20);
    assert_eq!(stats["cells"]["grobid0:tei_xml"], 0);
    assert_eq!(stats["mime_types"]["application/pdf"], 20);
    assert_eq!(stats["inputs"], 1);
    assert!(stats["store_bytes_on_disk"].as_u64().unwrap() > 0);
    let text = ok(&store, &["stats"]);
    assert!(text.contains("rows       20"), "{text}");
}
