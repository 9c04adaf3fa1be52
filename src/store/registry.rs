//! Which inputs the store has ingested, by content hash, so re-runs are no-ops and an
//! interrupted run is completed by running it again.
//!
//! An input is recorded only after everything it produced is durable (flushed), so a
//! recorded input is always complete.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::store::Store;
use crate::store::backend::{Batch, Op, Space};

const PREFIX: &str = "input/";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRecord {
    /// Which command ingested it (`backfill-cdx`, `import-warc`, …).
    pub command: String,
    /// Path as given on the command line when it was ingested.
    pub path: String,
    pub size: u64,
    /// Content hash of the file's bytes (see [`ContentHash`]).
    pub content_hash: String,
    /// Options that change what the input writes (e.g. the file filter).
    pub options: String,
    pub completed_ms: u64,
    /// The input's own report (counts), for `sediment stats` and curious users.
    pub summary: serde_json::Value,
}

/// Identifies an input by its bytes: XXH3-128, which hashes at memory speed, so checking
/// a multi-gigabyte WARC costs a small fraction of importing it (a cryptographic hash would
/// add a few percent to every import; accidental collisions are what matters here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub u128);

impl ContentHash {
    pub fn to_hex(self) -> String {
        format!("xxh3-128:{:032x}", self.0)
    }
}

/// The content hash of a file, streamed.
pub fn content_hash(path: &Path) -> Result<ContentHash> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(ContentHash(hasher.digest128()))
}

fn registry_key(command: &str, content: &ContentHash, options: &str) -> Vec<u8> {
    format!("{PREFIX}{command}/{}/{options}", content.to_hex()).into_bytes()
}

impl Store {
    /// The record of an input already ingested by `command` with the same options.
    pub fn completed_input(
        &self,
        command: &str,
        content: &ContentHash,
        options: &str,
    ) -> Result<Option<InputRecord>> {
        let key = registry_key(command, content, options);
        Ok(match self.get(Space::Meta, &key)? {
            Some(bytes) => serde_json::from_slice(&bytes).ok(),
            None => None,
        })
    }

    /// Records an input as complete. Call only after the data it wrote is flushed.
    pub fn record_input(&self, content: &ContentHash, record: &InputRecord) -> Result<()> {
        let key = registry_key(&record.command, content, &record.options);
        let mut batch = Batch::default();
        batch.push(Op::Put {
            space: Space::Meta,
            key,
            value: serde_json::to_vec(record)?,
        });
        self.write(&batch)
    }

    /// Every recorded input.
    pub fn inputs(&self) -> Result<Vec<InputRecord>> {
        let mut out = Vec::new();
        self.scan_prefix(Space::Meta, PREFIX.as_bytes(), &mut |_, value| {
            if let Ok(rec) = serde_json::from_slice(value) {
                out.push(rec);
            }
            Ok(true)
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_files_and_remembers_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("empty");
        std::fs::write(&file, b"").unwrap();
        let hash = content_hash(&file).unwrap();
        assert_eq!(hash, ContentHash(xxhash_rust::xxh3::xxh3_128(b"")));
        std::fs::write(&file, b"x").unwrap();
        assert_ne!(content_hash(&file).unwrap(), hash);

        let store = Store::open(&dir.path().join("store")).unwrap();
        assert!(
            store
                .completed_input("backfill-cdx", &hash, "")
                .unwrap()
                .is_none()
        );
        let rec = InputRecord {
            command: "backfill-cdx".into(),
            path: file.display().to_string(),
            size: 0,
            content_hash: hash.to_hex(),
            options: "status=200".into(),
            completed_ms: 1,
            summary: serde_json::json!({"lines": 0}),
        };
        store.record_input(&hash, &rec).unwrap();
        assert_eq!(
            store
                .completed_input("backfill-cdx", &hash, "status=200")
                .unwrap(),
            Some(rec.clone())
        );
        assert!(
            store
                .completed_input("backfill-cdx", &hash, "other")
                .unwrap()
                .is_none()
        );
        assert!(
            store
                .completed_input("import-warc", &hash, "status=200")
                .unwrap()
                .is_none()
        );
        assert_eq!(store.inputs().unwrap(), vec![rec]);
    }
}
