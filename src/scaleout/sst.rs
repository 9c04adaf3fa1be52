//! `write-sst`: one key range of shuffled records (sorted by the engine) into SST files
//! for the capture key spaces, ready for `ingest-sst` — the HFiles of an HBase bulk load.
//!
//! Records of one key are merged here as the store's merge operators would (a CDX line and
//! the WARC record of the same capture), and written as merge operands, so ingesting them
//! into a store that already holds the key merges with what is there.
//!
//! With `derive`, the range also derives the file rows (`f:c`, `file:*`) of its digests:
//! valid only when the store holds no capture of them (it was empty), which `ingest-sst`
//! checks before it uses them. A range derives rows from the captures the `d` records carry;
//! where the store would read a different capture (one capture key named with two
//! digests, or one by-digest key pointing at two capture keys — rare), the digests are
//! listed for `ingest-sst` to derive again from the store.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::capture::{Capture, merge_encoded};
use crate::key::Sha1Key;
use crate::scaleout::ranges::RangeLines;
use crate::scaleout::records::{BY_DIGEST, CAPTURE, Record};
use crate::schema::Schema;
use crate::store::bulk::RowCellWriter;
use crate::store::captures::{DerivedColumns, derive_from};
use crate::store::cells::ROW_LEN;
use crate::store::keys::{IndexEntry, merge_index_entries};
use crate::store::sst::SstWriter;
use crate::store::{CF_BY_DIGEST, CF_CAPTURE};

/// The files of one key range, as `ingest-sst` reads them (`manifest.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// SST file per column family (names relative to the directory).
    pub files: Vec<SstFile>,
    /// Whether the `f` and `file` files hold the rows of every digest of the range.
    pub derived: bool,
    /// Digests whose rows must be derived from the store after ingestion.
    pub recheck: Vec<String>,
    /// The distinct digests of the range, 20 bytes each, ascending (file name).
    pub digests: Option<String>,
    pub digest_count: u64,
    /// Record lines read.
    pub records: u64,
    /// Keys written per key space (equal keys merged).
    pub captures: u64,
    pub index_entries: u64,
    pub rows: RowStats,
    /// The derivation timestamp of the cells (must equal the ingest's).
    pub ts: u64,
}

/// File rows derived by a range (the counts of `MaterializeStats`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct RowStats {
    pub digests: u64,
    pub rows: u64,
    pub without_file: u64,
    pub duplicates: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SstFile {
    pub cf: String,
    pub file: String,
    pub entries: u64,
    /// First and last key, hex, to check that ranges do not overlap.
    pub first: String,
    pub last: String,
}

pub const MANIFEST: &str = "manifest.json";
const DIGESTS: &str = "digests.bin";

/// The SST file of one family of the range, created on its first entry.
struct Sst {
    cf: &'static str,
    writer: SstWriter,
}

impl Sst {
    fn new(dir: &Path, cf: &'static str) -> Sst {
        Sst {
            cf,
            writer: SstWriter::new(dir.join(format!("{cf}.sst")), cf).with_key_range(),
        }
    }

    fn merge(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.writer.merge(key, value)
    }

    fn finish(self) -> Result<Option<SstFile>> {
        let Some(written) = self.writer.finish()? else {
            return Ok(None);
        };
        let hex = data_encoding::HEXLOWER;
        Ok(Some(SstFile {
            cf: self.cf.to_string(),
            file: format!("{}.sst", self.cf),
            entries: written.entries,
            first: hex.encode(&written.first),
            last: hex.encode(&written.last),
        }))
    }
}

/// The file row of the digest being read: what [`crate::store::captures::derive_from_index`]
/// looks at, kept as the entries stream by (first-capture order).
#[derive(Default)]
struct DigestRow {
    digest: Option<Sha1Key>,
    counted: u64,
    first: Option<Capture>,
    /// The MIME type and size of the first captures that have them.
    mime: Option<String>,
    size: Option<u64>,
}

impl DigestRow {
    fn add(&mut self, flags: u8, capture: &[u8]) {
        if flags & IndexEntry::COUNTS != 0 {
            self.counted += 1;
        }
        let wanted = (flags & IndexEntry::LOCATES != 0 && self.first.is_none())
            || (flags & IndexEntry::HAS_MIME != 0 && self.mime.is_none())
            || (flags & IndexEntry::HAS_SIZE != 0 && self.size.is_none());
        if !wanted {
            return;
        }
        let Ok(capture) = Capture::decode(capture) else {
            return;
        };
        if flags & IndexEntry::HAS_MIME != 0 && self.mime.is_none() {
            self.mime = capture.mime.clone();
        }
        if flags & IndexEntry::HAS_SIZE != 0 && self.size.is_none() {
            self.size = capture.size;
        }
        if flags & IndexEntry::LOCATES != 0 && self.first.is_none() {
            self.first = Some(capture);
        }
    }
}

/// Writes one key range.
pub struct RangeWriter<'a> {
    dir: PathBuf,
    derive: bool,
    cells: RowCellWriter<'a>,
    capture: Sst,
    by_digest: Sst,
    f: Sst,
    file: Sst,
    digests: BufWriter<File>,
    manifest: Manifest,
    recheck: BTreeSet<Sha1Key>,
    row: DigestRow,
}

impl<'a> RangeWriter<'a> {
    /// Starts a range in `dir`, which must not exist yet (each attempt of a task writes
    /// its own directory, so a retried one never mixes with a failed one).
    pub fn create(dir: &Path, schema: &'a Schema, ts: u64, derive: bool) -> Result<Self> {
        std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let digests = File::create(dir.join(DIGESTS))
            .with_context(|| format!("cannot create {}", dir.join(DIGESTS).display()))?;
        Ok(RangeWriter {
            dir: dir.to_path_buf(),
            derive,
            cells: RowCellWriter::new(schema, &DerivedColumns::of(schema)?, ts),
            capture: Sst::new(dir, CF_CAPTURE),
            by_digest: Sst::new(dir, CF_BY_DIGEST),
            f: Sst::new(dir, "f"),
            file: Sst::new(dir, "file"),
            digests: BufWriter::new(digests),
            manifest: Manifest {
                derived: derive,
                ts,
                ..Default::default()
            },
            recheck: BTreeSet::new(),
            row: DigestRow::default(),
        })
    }

    /// Reads the range's record lines (in key order) to the end and writes the range.
    pub fn write_all(mut self, input: &mut dyn RangeLines) -> Result<Manifest> {
        let mut group: Vec<Record> = Vec::new();
        let mut group_key: Vec<u8> = Vec::new();
        let mut n = 0u64;
        while let Some(line) = input.next_line()? {
            n += 1;
            let record = Record::parse(line).with_context(|| format!("record line {n}"))?;
            self.manifest.records += 1;
            let key = match &record {
                Record::Capture { key, .. } => space_key(CAPTURE, key),
                Record::Index { key, .. } => space_key(BY_DIGEST, key),
                Record::Summary(_) => {
                    bail!("record line {n}: input summaries go to ingest-sst, not write-sst")
                }
            };
            if !group.is_empty() && key != group_key {
                if key < group_key {
                    bail!(
                        "record line {n}: records are not sorted by key (sort each range \
                         first, or give --sort)"
                    );
                }
                self.write_group(&mut group)?;
            }
            group_key = key;
            group.push(record);
        }
        self.write_group(&mut group)?;
        self.finish()
    }

    /// Writes the records of one key, merged.
    fn write_group(&mut self, group: &mut Vec<Record>) -> Result<()> {
        match group.first() {
            None => return Ok(()),
            Some(Record::Capture { .. }) => self.write_capture(group)?,
            Some(Record::Index { .. }) => self.write_index(group)?,
            Some(Record::Summary(_)) => {}
        }
        group.clear();
        Ok(())
    }

    fn write_capture(&mut self, group: &[Record]) -> Result<()> {
        let values: Vec<&[u8]> = group
            .iter()
            .filter_map(|r| match r {
                Record::Capture { capture, .. } => Some(capture.as_slice()),
                _ => None,
            })
            .collect();
        let Some(Record::Capture { key, .. }) = group.first() else {
            return Ok(());
        };
        if values.len() > 1 {
            // One capture key with several digests: the store's merged capture is what
            // their rows must be derived from.
            let digests: BTreeSet<Option<Sha1Key>> = values
                .iter()
                .filter_map(|v| Capture::decode(v).ok())
                .map(|c| c.digest)
                .collect();
            if digests.len() > 1 {
                self.recheck.extend(digests.into_iter().flatten());
            }
        }
        let merged = merge_encoded(values.iter().copied()).unwrap_or_default();
        self.capture.merge(key, &merged)?;
        self.manifest.captures += 1;
        Ok(())
    }

    fn write_index(&mut self, group: &[Record]) -> Result<()> {
        let mut entries: Vec<&[u8]> = Vec::with_capacity(group.len());
        let mut captures: Vec<&[u8]> = Vec::with_capacity(group.len());
        for record in group {
            if let Record::Index { entry, capture, .. } = record {
                entries.push(entry);
                captures.push(capture);
            }
        }
        let Some(Record::Index { key, .. }) = group.first() else {
            return Ok(());
        };
        let Some(digest) = key.get(..ROW_LEN).and_then(Sha1Key::from_slice) else {
            bail!("a by-digest key is shorter than a digest");
        };
        let entry = merge_index_entries(entries.iter().copied()).unwrap_or_default();
        let capture_keys: BTreeSet<Cow<[u8]>> = entries
            .iter()
            .filter_map(|e| IndexEntry::decode(key, e).map(|(_, k)| k))
            .collect();
        if capture_keys.len() > 1 {
            self.recheck.insert(digest);
        }
        self.by_digest.merge(key, &entry)?;
        self.manifest.index_entries += 1;
        if self.row.digest != Some(digest) {
            self.finish_row()?;
            self.row.digest = Some(digest);
            self.digests.write_all(digest.as_bytes())?;
            self.manifest.digest_count += 1;
        }
        if self.derive
            && let Some(flags) = IndexEntry::decode_flags(&entry)
        {
            let capture = merge_encoded(captures.iter().copied()).unwrap_or_default();
            self.row.add(flags, &capture);
        }
        Ok(())
    }

    /// Writes the file row of the digest read so far (when deriving).
    fn finish_row(&mut self) -> Result<()> {
        let row = std::mem::take(&mut self.row);
        let (Some(digest), true) = (row.digest, self.derive) else {
            return Ok(());
        };
        let stats = &mut self.manifest.rows;
        stats.digests += 1;
        let Some(first) = &row.first else {
            stats.without_file += 1;
            return Ok(());
        };
        let mime = first.mime.clone().or(row.mime);
        let size = first.size.or(row.size);
        let derived = derive_from(&first.view(), row.counted, mime, size);
        stats.rows += 1;
        stats.duplicates += derived.captures.saturating_sub(1);
        self.cells
            .write(&digest, &derived, &mut self.f.writer, &mut self.file.writer)
    }

    fn finish(mut self) -> Result<Manifest> {
        self.finish_row()?;
        self.digests.flush()?;
        let mut manifest = self.manifest;
        for sst in [self.capture, self.by_digest, self.f, self.file] {
            manifest.files.extend(sst.finish()?);
        }
        manifest.digests = Some(DIGESTS.to_string());
        manifest.recheck = self.recheck.iter().map(Sha1Key::to_hex).collect();
        let path = self.dir.join(MANIFEST);
        std::fs::write(&path, serde_json::to_vec_pretty(&manifest)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(manifest)
    }
}

/// A key with its space letter in front: the order of record lines.
fn space_key(space: u8, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 1);
    out.push(space);
    out.extend_from_slice(key);
    out
}

/// Reads the manifest of a range directory.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let bytes = std::fs::read(&path).with_context(|| {
        format!(
            "{} has no {MANIFEST}: not a finished write-sst range",
            dir.display()
        )
    })?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", path.display()))
}
