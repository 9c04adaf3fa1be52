//! SST files, the one way they are made and ingested: the bulk capture loader
//! ([`super::bulk`]), the bulk cell loader ([`super::bulk_cells`]) and the scale-out range
//! writer (`write-sst`) all write sorted entries through [`SstWriter`], cut a sorted key
//! space into files of a bounded number of entries with [`part_ranges`], keep their files
//! in a [`ScratchDir`] that goes however the load ends, and ingest a family's files in one
//! call with [`ingest_files`] (RocksDB `ingest_external_file`, the counterpart of HBase's
//! LoadIncrementalHFiles).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use rocksdb::{IngestExternalFileOptions, SstFileWriter};

use crate::store::Store;
use crate::store::rocks::{RocksBackend, cf_options_for_sst, keyed_by_row, zstd_at_the_bottom};

/// The options SST files are written with: their family's own bottom level's, so that
/// ingested files read as compacted ones do. By whether the family is keyed by row (its
/// filters hold the row prefix) and whether its bottom level is ZSTD: the table families,
/// the capture index (whole-key filters, ZSTD), the by-digest index (row prefix, ZSTD).
static SST_OPTIONS: [OnceLock<rocksdb::Options>; 4] = [const { OnceLock::new() }; 4];

/// An SST file of sorted entries, created on disk with its first entry (a writer that gets
/// none leaves no file). A writer dropped before [`SstWriter::finish`] (an error on the
/// way) removes the file it began.
pub(crate) struct SstWriter {
    path: PathBuf,
    options: &'static rocksdb::Options,
    writer: Option<SstFileWriter<'static>>,
    entries: u64,
    /// The first and last key, when asked for ([`SstWriter::with_key_range`]).
    key_range: Option<(Vec<u8>, Vec<u8>)>,
}

/// A finished SST file.
#[derive(Debug)]
pub(crate) struct WrittenSst {
    pub path: PathBuf,
    pub entries: u64,
    /// First and last key (empty unless the writer kept them).
    pub first: Vec<u8>,
    pub last: Vec<u8>,
}

impl SstWriter {
    /// A writer of a file for column family `cf`.
    pub(crate) fn new(path: impl Into<PathBuf>, cf: &str) -> Self {
        let kind = usize::from(keyed_by_row(cf)) + 2 * usize::from(zstd_at_the_bottom(cf));
        let options = SST_OPTIONS[kind].get_or_init(|| cf_options_for_sst(cf));
        SstWriter {
            path: path.into(),
            options,
            writer: None,
            entries: 0,
            key_range: None,
        }
    }

    /// Keeps the first and last key written, for a manifest that checks that files do not
    /// overlap.
    pub(crate) fn with_key_range(mut self) -> Self {
        self.key_range = Some((Vec::new(), Vec::new()));
        self
    }

    #[inline]
    fn writer(&mut self, key: &[u8]) -> Result<&mut SstFileWriter<'static>> {
        if self.writer.is_none() {
            let writer = SstFileWriter::create(self.options);
            unlink_stale(&self.path)?;
            writer
                .open(&self.path)
                .with_context(|| format!("cannot create {}", self.path.display()))?;
            self.writer = Some(writer);
            if let Some((first, _)) = &mut self.key_range {
                first.extend_from_slice(key);
            }
        }
        self.entries += 1;
        if let Some((_, last)) = &mut self.key_range {
            last.clear();
            last.extend_from_slice(key);
        }
        Ok(self.writer.as_mut().expect("opened above"))
    }

    /// Writes a value; keys come in ascending order.
    #[inline]
    pub(crate) fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.writer(key)?.put(key, value)?)
    }

    /// Writes a merge operand; keys come in ascending order.
    #[inline]
    pub(crate) fn merge(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.writer(key)?.merge(key, value)?)
    }

    /// Finishes the file; `None` when it got no entry (nothing to ingest).
    pub(crate) fn finish(mut self) -> Result<Option<WrittenSst>> {
        let Some(mut writer) = self.writer.take() else {
            return Ok(None);
        };
        let path = std::mem::take(&mut self.path);
        if let Err(e) = writer.finish() {
            remove_partial(&path);
            return Err(e).with_context(|| format!("cannot write {}", path.display()));
        }
        let (first, last) = self.key_range.take().unwrap_or_default();
        Ok(Some(WrittenSst {
            path,
            entries: self.entries,
            first,
            last,
        }))
    }
}

impl Drop for SstWriter {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            remove_partial(&self.path);
        }
    }
}

fn remove_partial(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => crate::diag!("sediment: cannot remove {}: {e}", path.display()),
    }
}

/// Removes whatever is at `path` before a new SST file is written there: ingestion moves
/// files by hard-linking them into the database, so a name left behind by an interrupted
/// ingestion can be a second name of a live table, which opening it for writing would
/// truncate.
fn unlink_stale(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Entries per SST file when a sorted key space is cut into ranges written in parallel:
/// four ranges per worker thread, none smaller than `min_part`. With two, the threads
/// that ran out of ranges waited for the last one of a key space for a tenth of the time
/// that space took (issue 39).
pub(crate) fn part_len(entries: usize, min_part: usize) -> usize {
    part_len_per_thread(entries, min_part, 4)
}

/// [`part_len`] with `per_thread` ranges per worker thread.
pub(crate) fn part_len_per_thread(entries: usize, min_part: usize, per_thread: usize) -> usize {
    let parts = (rayon::current_num_threads() * per_thread).max(1);
    entries.div_ceil(parts).max(min_part)
}

/// Cuts `len` sorted entries into ranges of about [`part_len`] entries, one SST file each,
/// never between two entries of one key (`same_key(i)`: entry `i` has the key of entry
/// `i - 1`), so that the files' key ranges do not overlap.
pub(crate) fn part_ranges(
    len: usize,
    min_part: usize,
    same_key: impl Fn(usize) -> bool,
) -> Vec<Range<usize>> {
    let part = part_len(len, min_part);
    let mut ranges = Vec::with_capacity(len.div_ceil(part.max(1)));
    let mut start = 0;
    while start < len {
        let mut end = (start + part).min(len);
        while end < len && same_key(end) {
            end += 1;
        }
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// A new directory for a bulk load's SST files, of its own under the writer's staging area.
pub(crate) fn scratch_dir(rocks: &RocksBackend, kind: &str, ts: u64) -> Result<ScratchDir> {
    let dir = crate::store::directory::staging_dir(rocks.path())
        .join(format!("{kind}-{}-{ts}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(ScratchDir(dir))
}

/// The scratch directory of a bulk load, removed with what it holds when the load ends,
/// however it ends: a load that fails (a full disk) gives its space back at once rather
/// than when the next writer empties the staging area (`directory::fresh_staging_dir`).
/// Ingested files were moved into the database (hard links): only their old names go.
pub(crate) struct ScratchDir(PathBuf);

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        match std::fs::remove_dir_all(&self.0) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => crate::diag!(
                "sediment: cannot remove the staging directory {}: {e}",
                self.0.display()
            ),
        }
    }
}

/// Ingests SST files with non-overlapping key ranges into one family, atomically, in one
/// call. The files are moved (hard-linked) into the store when they are on its file system.
pub(crate) fn ingest_files(store: &Store, cf: &str, paths: Vec<PathBuf>) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut opts = IngestExternalFileOptions::default();
    opts.set_move_files(true);
    let rocks: &RocksBackend = store.rocks("an ingestion of SST files")?;
    rocks
        .db()
        .ingest_external_file_cf_opts(rocks.cf(cf), &opts, paths.clone())
        .with_context(|| format!("cannot ingest {} into {cf}", paths[0].display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_never_cut_between_equal_keys() {
        let keys = [1, 1, 2, 2, 2, 3, 4, 4, 5, 6, 6, 6, 6, 7];
        for min_part in [1, 2, 3, 5, 100] {
            let ranges = part_ranges(keys.len(), min_part, |i| keys[i] == keys[i - 1]);
            assert_eq!(ranges.first().map(|r| r.start), Some(0));
            assert_eq!(ranges.last().map(|r| r.end), Some(keys.len()));
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
                assert_ne!(keys[pair[1].start], keys[pair[1].start - 1]);
            }
        }
        assert!(part_ranges(0, 1, |_| false).is_empty());
    }

    #[test]
    fn a_writer_without_entries_leaves_no_file_and_a_dropped_one_removes_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.sst");
        assert!(SstWriter::new(&empty, "f").finish().unwrap().is_none());
        assert!(!empty.exists());

        let dropped = dir.path().join("dropped.sst");
        let mut writer = SstWriter::new(&dropped, "f");
        writer.put(b"a", b"1").unwrap();
        assert!(dropped.exists());
        drop(writer);
        assert!(!dropped.exists(), "an unfinished file is removed");

        let kept = dir.path().join("kept.sst");
        let mut writer = SstWriter::new(&kept, crate::store::CF_CAPTURE).with_key_range();
        writer.put(b"a", b"1").unwrap();
        writer.merge(b"b", b"2").unwrap();
        let written = writer.finish().unwrap().unwrap();
        assert_eq!(written.path, kept);
        assert_eq!(written.entries, 2);
        assert_eq!(
            (&written.first[..], &written.last[..]),
            (&b"a"[..], &b"b"[..])
        );
        assert!(kept.exists());
    }
}
