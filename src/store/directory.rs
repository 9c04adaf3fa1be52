//! The store directory: what makes a directory a Sediment store, the writer's lock, and
//! the published versions that readers open.
//!
//! ```text
//! STORE/                   the live RocksDB database; only the writer opens it
//! STORE/SEDIMENT           marker: this directory is a Sediment store (JSON)
//! STORE/writer.lock        locked (flock) by the one writer; says who holds it
//! STORE/DIRTY              the live database may hold changes no version has
//! STORE/staging/           scratch files of the writer (SST files of a bulk load)
//! STORE/versions/N/        published version N: a RocksDB checkpoint (hard links)
//! STORE/versions/N/PUBLISHED  written last: the version is complete
//! STORE/versions/N/READERS    readers hold a shared lock on it while they read
//! STORE/current            symbolic link to the newest version, for other tools
//!                          (`ldb --db=STORE/current …`, `rocksdict`)
//! ```
//!
//! Readers never open the live database: they open the newest published version
//! read-only, so they see the store as it was at a consistent point (whole inputs only),
//! never block the writer, and also work on a read-only file system. A writer publishes
//! a version at consistent points (the end of a run, or of a batch of whole inputs).
//! A writer that stops without publishing (crash, kill, error) leaves `DIRTY` behind; the
//! next writer rolls the live database back to the newest version before it writes, so
//! a half-applied input can never become visible and the re-run applies it whole.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

const MARKER: &str = "SEDIMENT";
const WRITER_LOCK: &str = "writer.lock";
const DIRTY: &str = "DIRTY";
const STAGING: &str = "staging";
const VERSIONS: &str = "versions";
const PUBLISHED: &str = "PUBLISHED";
const READERS: &str = "READERS";
const CURRENT_LINK: &str = "current";
const CURRENT_LINK_TMP: &str = "current.tmp";

/// What the marker file says.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    format: String,
    /// Version of the directory layout described above.
    directory_layout: u32,
}

const FORMAT_NAME: &str = "sediment-store";
const DIRECTORY_LAYOUT: u32 = 1;

/// Names in the store directory that belong to Sediment, not to the live RocksDB.
fn is_sediment_entry(name: &str) -> bool {
    matches!(
        name,
        MARKER | WRITER_LOCK | DIRTY | STAGING | VERSIONS | CURRENT_LINK | CURRENT_LINK_TMP
    )
}

/// Whether `path` holds a Sediment store.
pub fn is_store(path: &Path) -> bool {
    path.join(MARKER).is_file()
}

/// A path without a store, given to something that does not create one.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoStore(String);

/// A store another process is writing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StoreBusy(String);

/// The error of a read command pointed at a path without a store.
pub fn no_store_error(path: &Path) -> anyhow::Error {
    NoStore(format!(
        "no Sediment store at {}; create one with import-warc or backfill-cdx \
         (or point --store / SEDIMENT_STORE at an existing store)",
        path.display()
    ))
    .into()
}

/// Whether `error` (or an error it wraps) is [`no_store_error`].
pub fn is_no_store_error(error: &anyhow::Error) -> bool {
    error.chain().any(|e| e.is::<NoStore>())
}

/// Whether `error` (or an error it wraps) says that another process writes the store.
pub fn is_busy_error(error: &anyhow::Error) -> bool {
    error.chain().any(|e| e.is::<StoreBusy>())
}

/// How a writer made a new store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Created {
    /// It created the directory.
    Directory,
    /// The directory was there, empty.
    InEmptyDirectory,
    /// Not created: a store of before the directory layout, given its marker.
    Legacy,
}

/// Prepares `path` to hold a new store, or checks that it holds one. A directory that
/// is not empty and not a store is refused: a mistyped `--store` must not scatter
/// database files into someone's directory. Says whether it made a new store.
pub fn prepare_for_writer(path: &Path) -> Result<Option<Created>> {
    if is_store(path) {
        return Ok(None);
    }
    let mut created = Created::InEmptyDirectory;
    match fs::read_dir(path) {
        Ok(mut entries) => {
            if entries.next().is_some() && !is_legacy_store(path) {
                bail!(
                    "{} is not a Sediment store and is not empty; refusing to write into it \
                     (give --store a new or empty directory)",
                    path.display()
                );
            }
            if is_legacy_store(path) {
                created = Created::Legacy;
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            fs::create_dir_all(path)
                .with_context(|| format!("cannot create the store directory {}", path.display()))?;
            created = Created::Directory;
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read {}", path.display()));
        }
    }
    let marker = Marker {
        format: FORMAT_NAME.into(),
        directory_layout: DIRECTORY_LAYOUT,
    };
    write_durably(&path.join(MARKER), &serde_json::to_vec_pretty(&marker)?)?;
    Ok((created != Created::Legacy).then_some(created))
}

/// Takes back a store [`prepare_for_writer`] created: the directory it made, or what it
/// put into the empty directory it was given.
pub fn remove_created(path: &Path, created: Created) {
    let result = match created {
        Created::Directory => fs::remove_dir_all(path),
        Created::Legacy => Ok(()),
        Created::InEmptyDirectory => fs::read_dir(path).and_then(|entries| {
            for entry in entries {
                let entry = entry?;
                if entry.file_type()?.is_dir() {
                    fs::remove_dir_all(entry.path())?;
                } else {
                    fs::remove_file(entry.path())?;
                }
            }
            Ok(())
        }),
    };
    if let Err(e) = result {
        crate::diag!(
            "sediment: cannot remove the new store at {}: {e}",
            path.display()
        );
    }
}

/// A store written before the directory layout existed: a RocksDB database whose
/// `meta` family is Sediment's (checked when it is opened).
pub fn is_legacy_store(path: &Path) -> bool {
    path.join("CURRENT").is_file() && path.join("IDENTITY").is_file() && !path.join(MARKER).exists()
}

/// Checks the marker of an existing store.
pub fn check_marker(path: &Path) -> Result<()> {
    let text = fs::read(path.join(MARKER))
        .with_context(|| format!("cannot read {}", path.join(MARKER).display()))?;
    let marker: Marker = serde_json::from_slice(&text)
        .with_context(|| format!("{} is damaged", path.join(MARKER).display()))?;
    if marker.format != FORMAT_NAME || marker.directory_layout != DIRECTORY_LAYOUT {
        bail!(
            "the store at {} has directory layout {} {}; this build reads {FORMAT_NAME} {DIRECTORY_LAYOUT}",
            path.display(),
            marker.format,
            marker.directory_layout
        );
    }
    Ok(())
}

/// Who holds the writer lock, as written into the lock file.
#[derive(Debug, Serialize, Deserialize)]
struct Holder {
    pid: u32,
    command: String,
    started: String,
}

/// The writer's exclusive lock on a store, held for the life of the writer.
pub struct WriterLock {
    file: File,
}

impl WriterLock {
    /// Takes the lock, or explains who holds it. With `wait`, queues behind the holder.
    pub fn acquire(store: &Path, command: &str, wait: bool) -> Result<WriterLock> {
        let path = store.join(WRITER_LOCK);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = describe_holder(&mut file);
                if !wait {
                    return Err(StoreBusy(format!(
                        "the store at {} is being written by another Sediment process ({holder}); \
                         only one process writes a store at a time: wait for it to finish, or pass \
                         --wait to queue behind it (reading commands work meanwhile)",
                        store.display()
                    ))
                    .into());
                }
                crate::diag!(
                    "sediment: waiting for the writer of {} to finish ({holder})",
                    store.display()
                );
                file.lock()
                    .with_context(|| format!("cannot lock {}", path.display()))?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        let holder = Holder {
            pid: std::process::id(),
            command: command.to_string(),
            started: chrono::Utc::now()
                .format("%Y-%m-%d %H:%M:%S UTC")
                .to_string(),
        };
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&serde_json::to_vec(&holder)?)?;
        file.flush()?;
        Ok(WriterLock { file })
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

fn describe_holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    match serde_json::from_str::<Holder>(&text) {
        Ok(h) => format!(
            "pid {}, `sediment {}`, since {}",
            h.pid, h.command, h.started
        ),
        Err(_) => "a process that is starting".to_string(),
    }
}

/// The scratch directory of the writer, emptied whenever a writer starts: a killed bulk
/// load may leave hard links there to SST files that were ingested into the live
/// database, and writing a new file through such a link would damage a live table.
pub fn fresh_staging_dir(store: &Path) -> Result<PathBuf> {
    let dir = store.join(STAGING);
    match fs::remove_dir_all(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot clear {}", dir.display())),
    }
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

pub fn staging_dir(store: &Path) -> PathBuf {
    store.join(STAGING)
}

/// Whether a writer stopped without publishing what it wrote.
pub fn is_dirty(store: &Path) -> bool {
    store.join(DIRTY).exists()
}

/// Marks the live database as possibly ahead of the newest version.
pub fn mark_dirty(store: &Path) -> Result<()> {
    write_durably(&store.join(DIRTY), b"")
}

pub fn clear_dirty(store: &Path) -> Result<()> {
    match fs::remove_file(store.join(DIRTY)) {
        Ok(()) => sync_dir(store),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).context("cannot remove the DIRTY marker"),
    }
}

pub fn versions_dir(store: &Path) -> PathBuf {
    store.join(VERSIONS)
}

pub fn version_dir(store: &Path, version: u64) -> PathBuf {
    versions_dir(store).join(format!("{version:012}"))
}

/// Published versions, oldest first.
pub fn published_versions(store: &Path) -> Vec<u64> {
    let mut out: Vec<u64> = fs::read_dir(versions_dir(store))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n: u64 = e.file_name().to_str()?.parse().ok()?;
            e.path().join(PUBLISHED).is_file().then_some(n)
        })
        .collect();
    out.sort_unstable();
    out
}

/// The newest published version, cheap enough to poll.
pub fn latest_version(store: &Path) -> Option<u64> {
    published_versions(store).pop()
}

/// What `PUBLISHED` says of a version (its number, time, sequence number).
pub fn version_info(store: &Path, version: u64) -> Option<serde_json::Value> {
    let text = fs::read(version_dir(store, version).join(PUBLISHED)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// The number the next version gets: above every version directory, even unfinished
/// ones, so a name is never reused.
pub fn next_version(store: &Path) -> u64 {
    fs::read_dir(versions_dir(store))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            name.split('.').next()?.parse::<u64>().ok()
        })
        .max()
        .map_or(1, |n| n + 1)
}

/// Completes a version directory written by RocksDB's checkpoint: the readers' lock
/// file first, then the marker that makes it visible.
pub fn seal_version(dir: &Path, info: &serde_json::Value) -> Result<()> {
    write_durably(&dir.join(READERS), b"")?;
    write_durably(&dir.join(PUBLISHED), &serde_json::to_vec_pretty(info)?)?;
    if let Some(parent) = dir.parent() {
        sync_dir(parent)?;
    }
    point_current_link(dir)
}

/// Points `STORE/current` at a new version (a new link renamed over the old one, so
/// the name always resolves). Best effort where symbolic links are not supported.
fn point_current_link(version_dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let (Some(versions), Some(name)) = (version_dir.parent(), version_dir.file_name()) else {
            return Ok(());
        };
        let Some(store) = versions.parent() else {
            return Ok(());
        };
        let tmp = store.join(CURRENT_LINK_TMP);
        let _ = fs::remove_file(&tmp);
        std::os::unix::fs::symlink(Path::new(VERSIONS).join(name), &tmp)
            .and_then(|()| fs::rename(&tmp, store.join(CURRENT_LINK)))
            .with_context(|| format!("cannot update {}", store.join(CURRENT_LINK).display()))?;
    }
    Ok(())
}

/// A reader's hold on one version: while it lives, the writer does not delete it.
pub struct ReaderLease {
    _file: File,
    pub version: u64,
    pub dir: PathBuf,
}

/// Takes a lease on the newest published version.
pub fn lease_latest(store: &Path) -> Result<ReaderLease> {
    // A version can be retired between listing and locking; then the next newest is taken.
    for _ in 0..5 {
        let Some(version) = latest_version(store) else {
            bail!(
                "the store at {} has no published version yet: its first import is still \
                 running or was interrupted (run the import again to complete it)",
                store.display()
            );
        };
        let dir = version_dir(store, version);
        let file = match File::open(dir.join(READERS)) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("cannot open {}", dir.display()));
            }
        };
        file.lock_shared()
            .with_context(|| format!("cannot lock {}", dir.join(READERS).display()))?;
        if dir.join(PUBLISHED).is_file() {
            return Ok(ReaderLease {
                _file: file,
                version,
                dir,
            });
        }
    }
    bail!(
        "the store at {} keeps changing under the reader; try again",
        store.display()
    )
}

/// Deletes versions older than `keep` that no reader holds, and unfinished checkpoint
/// directories. Returns how many were removed.
pub fn retire_old_versions(store: &Path, keep: u64) -> usize {
    let mut removed = 0;
    for entry in fs::read_dir(versions_dir(store))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let dir = entry.path();
        let number = name.split('.').next().and_then(|n| n.parse::<u64>().ok());
        let unfinished = name.contains('.') || !dir.join(PUBLISHED).exists();
        match number {
            Some(n) if n >= keep => continue,
            Some(_) | None if unfinished => {}
            Some(_) => {
                // Only a version no reader holds goes; readers lock READERS shared.
                let Ok(file) = File::open(dir.join(READERS)) else {
                    continue;
                };
                if file.try_lock().is_err() {
                    continue;
                }
                if fs::remove_file(dir.join(PUBLISHED)).is_err() {
                    continue;
                }
            }
            None => continue,
        }
        if fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Rolls the live database back to `version` (or to an empty store when no version was
/// ever published): every live file goes, and the version's files come back, tables as
/// hard links (they are never modified) and the rest as copies (RocksDB appends to its
/// MANIFEST, which must not be shared with the version).
pub fn restore_live(store: &Path, version: Option<u64>) -> Result<()> {
    for entry in fs::read_dir(store)
        .with_context(|| format!("cannot read {}", store.display()))?
        .flatten()
    {
        let name = entry.file_name();
        if name.to_str().is_some_and(is_sediment_entry) {
            continue;
        }
        let path = entry.path();
        let removed = match entry.file_type() {
            Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
        removed.with_context(|| format!("cannot remove {} while rolling back", path.display()))?;
    }
    if let Some(version) = version {
        let dir = version_dir(store, version);
        for entry in fs::read_dir(&dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .flatten()
        {
            let name = entry.file_name();
            let Some(text) = name.to_str() else { continue };
            if text == PUBLISHED || text == READERS {
                continue;
            }
            let target = store.join(&name);
            let is_table = text.ends_with(".sst") || text.ends_with(".blob");
            if !is_table || fs::hard_link(entry.path(), &target).is_err() {
                fs::copy(entry.path(), &target)
                    .with_context(|| format!("cannot restore {} from {}", text, dir.display()))?;
            }
        }
    }
    sync_dir(store)
}

/// Total size of the files in the store directory: the live database and its
/// versions, each file counted once although versions share them (hard links).
pub fn size_on_disk(path: &Path) -> u64 {
    fn walk(dir: &Path, seen: &mut std::collections::HashSet<(u64, u64)>) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        let mut total = 0;
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                total += walk(&entry.path(), seen);
            } else if meta.is_file() && first_sight(&meta, seen) {
                total += meta.len();
            }
        }
        total
    }
    #[cfg(unix)]
    fn first_sight(
        meta: &std::fs::Metadata,
        seen: &mut std::collections::HashSet<(u64, u64)>,
    ) -> bool {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() < 2 || seen.insert((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    fn first_sight(_: &std::fs::Metadata, _: &mut std::collections::HashSet<(u64, u64)>) -> bool {
        true
    }
    walk(path, &mut Default::default())
}

/// Writes a small file and makes it durable (file and directory entry).
fn write_durably(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file =
        File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> Result<()> {
    // Directories can be opened for fsync on Unix; elsewhere this is best effort.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_empty_directory_that_is_not_a_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        let err = prepare_for_writer(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("is not a Sediment store and is not empty"),
            "{err}"
        );
        assert!(!is_store(dir.path()));

        let new = dir.path().join("new");
        prepare_for_writer(&new).unwrap();
        assert!(is_store(&new));
        check_marker(&new).unwrap();
    }

    #[test]
    fn the_second_writer_is_told_who_writes() {
        let dir = tempfile::tempdir().unwrap();
        prepare_for_writer(dir.path()).unwrap();
        let first = WriterLock::acquire(dir.path(), "import-warc", false).unwrap();
        let err = WriterLock::acquire(dir.path(), "backfill-cdx", false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("being written by another Sediment process"),
            "{err}"
        );
        assert!(err.contains("`sediment import-warc`"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert!(err.contains("--wait"), "{err}");
        drop(first);
        WriterLock::acquire(dir.path(), "backfill-cdx", false).unwrap();
    }

    #[test]
    fn readers_hold_versions_against_retirement() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path();
        for v in 1..=3 {
            let d = version_dir(store, v);
            fs::create_dir_all(&d).unwrap();
            seal_version(&d, &serde_json::json!({"version": v})).unwrap();
        }
        fs::create_dir_all(versions_dir(store).join("000000000004.tmp")).unwrap();
        assert_eq!(published_versions(store), vec![1, 2, 3]);
        assert_eq!(next_version(store), 5);
        let lease = lease_latest(store).unwrap();
        assert_eq!(lease.version, 3);
        // The writer publishes 5 and retires what nobody reads.
        let d = version_dir(store, 5);
        fs::create_dir_all(&d).unwrap();
        seal_version(&d, &serde_json::json!({})).unwrap();
        assert_eq!(
            retire_old_versions(store, 5),
            3,
            "1, 2 and the unfinished 4"
        );
        assert_eq!(published_versions(store), vec![3, 5]);
        drop(lease);
        assert_eq!(retire_old_versions(store, 5), 1);
        assert_eq!(published_versions(store), vec![5]);
    }

    #[test]
    fn rolling_back_restores_a_version_and_keeps_sediment_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path();
        prepare_for_writer(store).unwrap();
        let v = version_dir(store, 1);
        fs::create_dir_all(&v).unwrap();
        fs::write(v.join("000007.sst"), b"table").unwrap();
        fs::write(v.join("MANIFEST-000009"), b"manifest").unwrap();
        fs::write(v.join("CURRENT"), b"MANIFEST-000009\n").unwrap();
        seal_version(&v, &serde_json::json!({})).unwrap();
        fs::write(store.join("000012.sst"), b"half an input").unwrap();
        fs::write(store.join("MANIFEST-000011"), b"newer").unwrap();
        mark_dirty(store).unwrap();
        restore_live(store, Some(1)).unwrap();
        assert!(!store.join("000012.sst").exists());
        assert!(!store.join("MANIFEST-000011").exists());
        assert_eq!(fs::read(store.join("000007.sst")).unwrap(), b"table");
        assert_eq!(
            fs::read(store.join("CURRENT")).unwrap(),
            b"MANIFEST-000009\n"
        );
        assert!(is_store(store), "the marker stays");
        assert!(is_dirty(store), "clearing DIRTY is the caller's decision");
        assert_eq!(published_versions(store), vec![1], "versions stay");
    }
}
