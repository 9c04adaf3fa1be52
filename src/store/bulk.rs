//! Bulk load: captures are collected in memory, sorted, written as SST files and
//! ingested atomically into their column families (RocksDB `ingest_external_file`, the
//! counterpart of HBase's LoadIncrementalHFiles); the file rows of the batch's digests are
//! derived and ingested the same way. The store ends up exactly as the normal write path
//! would leave it (the tests compare exports).
//!
//! Memory is bounded by `memory_limit`: past it a batch is written and a new one starts.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Context, Result};
use rayon::prelude::*;
use rocksdb::{IngestExternalFileOptions, SstFileWriter};

use crate::capture::Capture;
use crate::key::Sha1Key;
use crate::store::captures::{
    DerivedColumns, IndexEntry, MaterializeStats, by_digest_key, capture_key, derive_from_index,
    index_entries, merge_index_entries, read_capture,
};
use crate::store::cells::{ROW_LEN, cell_key};
use crate::store::{CF_BY_DIGEST, CF_CAPTURE, Store, base_cf_options_for_sst};

/// Captures of one parsed chunk, packed in one buffer (no allocation per capture).
#[derive(Default)]
pub struct CaptureRun {
    data: Vec<u8>,
    entries: Vec<Entry>,
}

#[derive(Clone, Copy)]
struct Entry {
    /// Start of the capture key in `data`, and its length.
    capture_key: (u32, u32),
    /// The by-digest key and index entry, when the capture has a digest.
    digest_key: Option<(u32, u32)>,
    index_value: (u32, u32),
    value: (u32, u32),
}

impl CaptureRun {
    pub fn push(&mut self, capture: &Capture, scratch: &mut Vec<u8>) {
        let mut put = |bytes: &[u8]| {
            let start = self.data.len() as u32;
            self.data.extend_from_slice(bytes);
            (start, bytes.len() as u32)
        };
        capture_key(capture, scratch);
        let ckey = put(scratch);
        let mut index_value = (0, 0);
        let dkey = capture.digest.map(|d| {
            let mut entry = Vec::with_capacity(scratch.len() + 2);
            IndexEntry::encode(IndexEntry::flags_of(capture), scratch, &mut entry);
            by_digest_key(&d, capture, scratch);
            let dkey = put(scratch);
            index_value = put(&entry);
            dkey
        });
        let value = put(&capture.to_bytes());
        self.entries.push(Entry {
            capture_key: ckey,
            digest_key: dkey,
            index_value,
            value,
        });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn bytes(&self) -> usize {
        self.data.len() + self.entries.len() * std::mem::size_of::<Entry>()
    }

    fn slice(&self, (start, len): (u32, u32)) -> &[u8] {
        &self.data[start as usize..(start + len) as usize]
    }
}

/// A reference to one capture of a batch: (run, entry).
type Ref = (u32, u32);

pub struct BulkLoader<'s> {
    store: &'s Store,
    ts: u64,
    memory_limit: usize,
    pending: Mutex<(Vec<CaptureRun>, usize)>,
    /// Serializes batch writes (a batch holds the whole pending set).
    writing: Mutex<BulkStats>,
    scratch_dir: PathBuf,
    store_was_empty: bool,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct BulkStats {
    pub batches: u64,
    pub captures: u64,
    pub sst_files: u64,
    pub rows: MaterializeStats,
}

impl<'s> BulkLoader<'s> {
    pub fn new(store: &'s Store, ts: u64, memory_limit: usize) -> Result<Self> {
        let scratch_dir = store.path().join("bulk-load.tmp");
        std::fs::create_dir_all(&scratch_dir)
            .with_context(|| format!("cannot create {}", scratch_dir.display()))?;
        let mut probe = store.db().raw_iterator_cf(store.cf(CF_BY_DIGEST));
        probe.seek_to_first();
        let store_was_empty = !probe.valid();
        Ok(BulkLoader {
            store,
            ts,
            memory_limit,
            pending: Mutex::new((Vec::new(), 0)),
            writing: Mutex::new(BulkStats::default()),
            scratch_dir,
            store_was_empty,
        })
    }

    /// Adds a chunk's captures; writes a batch when the memory limit is reached.
    pub fn add(&self, run: CaptureRun) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let full = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.1 += run.bytes();
            pending.0.push(run);
            if pending.1 >= self.memory_limit {
                let runs = std::mem::take(&mut pending.0);
                pending.1 = 0;
                Some(runs)
            } else {
                None
            }
        };
        if let Some(runs) = full {
            self.write_batch(runs)?;
        }
        Ok(())
    }

    /// Writes what is pending and removes the scratch directory.
    pub fn finish(self) -> Result<BulkStats> {
        let runs = std::mem::take(&mut self.pending.lock().unwrap_or_else(|e| e.into_inner()).0);
        self.write_batch(runs)?;
        let _ = std::fs::remove_dir_all(&self.scratch_dir);
        Ok(*self.writing.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn write_batch(&self, runs: Vec<CaptureRun>) -> Result<()> {
        let mut stats = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        if runs.iter().all(CaptureRun::is_empty) {
            return Ok(());
        }
        let first_batch = stats.batches == 0;
        stats.batches += 1;
        let n = stats.batches;

        let mut by_capture: Vec<Ref> = Vec::new();
        let mut by_digest: Vec<(u64, Ref)> = Vec::new();
        for (r, run) in runs.iter().enumerate() {
            for (e, entry) in run.entries.iter().enumerate() {
                by_capture.push((r as u32, e as u32));
                if let Some(dkey) = entry.digest_key {
                    let key = run.slice(dkey);
                    let prefix = u64::from_be_bytes(key[..8].try_into().unwrap_or_default());
                    by_digest.push((prefix, (r as u32, e as u32)));
                }
            }
        }
        stats.captures += by_capture.len() as u64;
        let capture_key_of = |&(r, e): &Ref| {
            runs[r as usize].slice(runs[r as usize].entries[e as usize].capture_key)
        };
        let digest_key_of = |&(r, e): &Ref| {
            let run = &runs[r as usize];
            run.entries[e as usize]
                .digest_key
                .map_or(&[][..], |k| run.slice(k))
        };
        let value_of =
            |&(r, e): &Ref| runs[r as usize].slice(runs[r as usize].entries[e as usize].value);
        let index_value_of = |&(r, e): &Ref| {
            runs[r as usize].slice(runs[r as usize].entries[e as usize].index_value)
        };

        // Input CDX is usually sorted already: a stable (run-adaptive) sort is near linear.
        // Digests are random: sort on their first 8 bytes, then the full key.
        rayon::join(
            || by_capture.par_sort_by(|a, b| capture_key_of(a).cmp(capture_key_of(b))),
            || {
                by_digest.par_sort_unstable_by(|a, b| match a.0.cmp(&b.0) {
                    Ordering::Equal => digest_key_of(&a.1).cmp(digest_key_of(&b.1)),
                    other => other,
                })
            },
        );
        let by_digest: Vec<Ref> = by_digest.into_iter().map(|(_, r)| r).collect();

        let capture_sst = self.scratch_dir.join(format!("capture-{n}.sst"));
        let digest_sst = self.scratch_dir.join(format!("by-digest-{n}.sst"));
        let (a, b) = rayon::join(
            || {
                write_merge_sst(
                    &capture_sst,
                    &by_capture,
                    capture_key_of,
                    value_of,
                    |values| crate::capture::merge_encoded(values),
                )
            },
            || {
                write_merge_sst(
                    &digest_sst,
                    &by_digest,
                    digest_key_of,
                    index_value_of,
                    |values| merge_index_entries(values),
                )
            },
        );
        let wrote = [a?, b?];
        let mut files = Vec::new();
        for (cf, path, written) in [
            (CF_CAPTURE, &capture_sst, wrote[0]),
            (CF_BY_DIGEST, &digest_sst, wrote[1]),
        ] {
            if written {
                self.ingest(cf, path)?;
                files.push(path);
            }
        }
        stats.sst_files += files.len() as u64;

        // Derive the rows of this batch's digests. On a store that was empty, the batch
        // holds every capture of them; otherwise the store (now including the batch) is read.
        let columns = DerivedColumns::resolve(self.store)?;
        let mut groups: Vec<(Sha1Key, &[Ref])> = Vec::new();
        let mut start = 0;
        while start < by_digest.len() {
            let digest = &digest_key_of(&by_digest[start])[..ROW_LEN];
            let mut end = start + 1;
            while end < by_digest.len() && &digest_key_of(&by_digest[end])[..ROW_LEN] == digest {
                end += 1;
            }
            if let Some(key) = Sha1Key::from_slice(digest) {
                groups.push((key, &by_digest[start..end]));
            }
            start = end;
        }
        let in_memory = self.store_was_empty && first_batch;
        let derived: Vec<(Sha1Key, Option<crate::store::captures::DerivedRow>)> = groups
            .par_iter()
            .map(|(key, refs)| {
                if !in_memory {
                    let entries = index_entries(self.store, key).unwrap_or_default();
                    let entries: Vec<(u8, &[u8])> =
                        entries.iter().map(|(f, k)| (*f, k.as_slice())).collect();
                    let row =
                        derive_from_index(&entries, |k| read_capture(self.store, k).ok().flatten());
                    return (*key, row);
                }
                // The batch holds every capture of this digest. The same capture may be
                // here twice (a CDX line and its WARC record): merge those entries.
                let mut entries: Vec<(u8, &[u8])> = Vec::with_capacity(refs.len());
                let mut last: Option<&[u8]> = None;
                for r in refs.iter() {
                    let k = digest_key_of(r);
                    let Some((flags, ckey)) = IndexEntry::decode(index_value_of(r)) else {
                        continue;
                    };
                    match entries.last_mut() {
                        Some(prev) if last == Some(k) => prev.0 |= flags,
                        _ => entries.push((flags, ckey)),
                    }
                    last = Some(k);
                }
                let row = derive_from_index(&entries, |wanted| {
                    let values: Vec<&[u8]> = refs
                        .iter()
                        .filter(|r| capture_key_of(r) == wanted)
                        .map(value_of)
                        .collect();
                    crate::capture::merge_encoded(values).and_then(|v| Capture::decode(&v).ok())
                });
                (*key, row)
            })
            .collect();
        let f_sst = self.scratch_dir.join(format!("f-{n}.sst"));
        let file_sst = self.scratch_dir.join(format!("file-{n}.sst"));
        let schema = self.store.schema();
        let mut f_writer = SstWriter::open(&f_sst)?;
        let mut file_writer = SstWriter::open(&file_sst)?;
        let qualifier = |c: crate::schema::ColumnId| schema.column(c).qualifier.as_str();
        for (key, row) in &derived {
            let Some(row) = row else {
                stats.rows.without_file += 1;
                continue;
            };
            stats.rows.rows += 1;
            f_writer.put(
                &cell_key(key, qualifier(columns.dedupe), self.ts),
                &row.dedupe,
            )?;
            // `file` cells in key order: cdx < mime < size.
            let mut cells: Vec<(Vec<u8>, Vec<u8>)> = vec![(
                cell_key(key, qualifier(columns.cdx), self.ts),
                row.cdx.clone(),
            )];
            if let Some(mime) = &row.mime {
                cells.push((
                    cell_key(key, qualifier(columns.mime), self.ts),
                    mime.as_bytes().to_vec(),
                ));
            }
            if let Some(size) = row.size {
                cells.push((
                    cell_key(key, qualifier(columns.size), self.ts),
                    size.to_be_bytes().to_vec(),
                ));
            }
            cells.sort();
            for (k, v) in cells {
                file_writer.put(&k, &v)?;
            }
        }
        stats.rows.digests += derived.len() as u64;
        for (family, writer, path) in [("f", f_writer, &f_sst), ("file", file_writer, &file_sst)] {
            if writer.finish()? {
                self.ingest(family, path)?;
                stats.sst_files += 1;
            }
        }
        Ok(())
    }

    fn ingest(&self, cf: &str, path: &PathBuf) -> Result<()> {
        let mut opts = IngestExternalFileOptions::default();
        opts.set_move_files(true);
        self.store
            .db()
            .ingest_external_file_cf_opts(self.store.cf(cf), &opts, vec![path])
            .with_context(|| format!("cannot ingest {} into {cf}", path.display()))
    }
}

/// Writes sorted entries as merge operands (equal keys collapse into one value with
/// `merge`). Returns whether the file has any entry.
fn write_merge_sst<'a>(
    path: &PathBuf,
    refs: &[Ref],
    key_of: impl Fn(&Ref) -> &'a [u8],
    value_of: impl Fn(&Ref) -> &'a [u8],
    merge: impl Fn(&mut dyn Iterator<Item = &'a [u8]>) -> Option<Vec<u8>>,
) -> Result<bool> {
    if refs.is_empty() {
        return Ok(false);
    }
    let opts = base_cf_options_for_sst();
    let mut writer = SstFileWriter::create(&opts);
    writer.open(path)?;
    let mut i = 0;
    while i < refs.len() {
        let key = key_of(&refs[i]);
        let mut j = i + 1;
        while j < refs.len() && key_of(&refs[j]) == key {
            j += 1;
        }
        if j == i + 1 {
            writer.merge(key, value_of(&refs[i]))?;
        } else {
            let merged = merge(&mut refs[i..j].iter().map(&value_of))
                .unwrap_or_else(|| value_of(&refs[i]).to_vec());
            writer.merge(key, merged)?;
        }
        i = j;
    }
    writer.finish()?;
    Ok(true)
}

/// An SST writer that is only created on disk when it gets its first entry.
struct SstWriter<'o> {
    writer: SstFileWriter<'o>,
    entries: u64,
}

static SST_OPTIONS: std::sync::OnceLock<rocksdb::Options> = std::sync::OnceLock::new();

impl SstWriter<'static> {
    fn open(path: &PathBuf) -> Result<Self> {
        let opts = SST_OPTIONS.get_or_init(base_cf_options_for_sst);
        let writer = SstFileWriter::create(opts);
        writer.open(path)?;
        Ok(SstWriter { writer, entries: 0 })
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.writer.put(key, value)?;
        self.entries += 1;
        Ok(())
    }

    /// Finishes the file; `false` when it is empty (nothing to ingest).
    fn finish(mut self) -> Result<bool> {
        if self.entries == 0 {
            return Ok(false);
        }
        self.writer.finish()?;
        Ok(true)
    }
}
