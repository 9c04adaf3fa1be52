//! `import-warc --follow DIR`: a directory that a crawler is writing into, imported as its
//! WARC files are finished.
//!
//! A file is finished when its writer has given it its final name (warcprox and Heritrix
//! write `NAME.warc.gz.open` and rename it when they close it; `.open` names are never
//! taken) and it has not changed for the settle time (for writers that do not rename).
//! Each round of finished files is one ordinary import, so each commits and publishes a
//! version that a running `serve` picks up. After a restart, files the store has already
//! recorded (same path, same size, not changed since) are passed over without reading
//! them; anything else is recognized by its content as a normal import does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::ingest::warc_files::{WarcImport, import_warcs, is_warc_name};
use crate::input::PlannedInput;
use crate::report::Report;
use crate::store::Store;

/// How a followed directory is watched.
pub struct Follow {
    pub dir: PathBuf,
    /// A file is taken once its size and time have not changed for this long.
    pub settle: Duration,
    /// How often the directory is listed.
    pub poll: Duration,
}

/// What a file looked like when last listed.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Seen {
    size: u64,
    modified: SystemTime,
}

/// Imports the directory's finished WARC files until `stop` is set (checked between
/// rounds and while waiting, never inside an import). Returns the bytes read.
pub fn follow(
    store: &Store,
    follow: &Follow,
    options: &WarcImport,
    report: &Report,
    stop: &AtomicBool,
) -> Result<u64> {
    let recorded = recorded_inputs(store)?;
    // Per path: what it looked like, and since when it looked so.
    let mut watching: HashMap<PathBuf, (Seen, Instant)> = HashMap::new();
    // Per path: what it looked like when it was taken (imported, passed over or refused).
    let mut taken: HashMap<PathBuf, Seen> = HashMap::new();
    let mut bytes = 0;
    let mut rounds = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let mut ready = Vec::new();
        for (path, seen) in list(&follow.dir)? {
            if taken.get(&path) == Some(&seen) {
                continue;
            }
            let since = match watching.get(&path) {
                Some((before, since)) if *before == seen => *since,
                _ => now,
            };
            watching.insert(path.clone(), (seen, since));
            if now.duration_since(since) < follow.settle {
                continue;
            }
            watching.remove(&path);
            taken.insert(path.clone(), seen);
            if was_recorded(&recorded, &path, seen) {
                report.note(&format!(
                    "{}: already imported (same path and size, unchanged since)",
                    path.display()
                ));
                report.count("inputs_skipped", 1);
                continue;
            }
            ready.push(path);
        }
        if !ready.is_empty() {
            ready.sort();
            rounds += 1;
            let mut inputs = Vec::with_capacity(ready.len());
            for path in ready {
                match PlannedInput::new(path.clone()) {
                    Ok(input) if input.size != Some(0) => inputs.push(input),
                    Ok(_) => report.note(&format!("{}: empty, not imported", path.display())),
                    // Gone between the listing and now (a writer's temporary file).
                    Err(e) => report.note(&format!("{e:#}")),
                }
            }
            if !inputs.is_empty() {
                bytes += import_warcs(store, inputs, options, report)?;
            }
        }
        sleep_unless_stopped(follow.poll, stop);
    }
    report.count("follow_rounds", rounds);
    Ok(bytes)
}

/// The directory's WARC files and WACZ packages (regular files, one level), as they are now.
fn list(dir: &Path) -> Result<Vec<(PathBuf, Seen)>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !(is_warc_name(&path) || crate::wacz::is_wacz_name(&path)) {
            continue;
        }
        // A symbolic link is not followed: the same rule as a directory given to an import.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let modified = meta.modified().unwrap_or(UNIX_EPOCH);
        found.push((
            path,
            Seen {
                size: meta.len(),
                modified,
            },
        ));
    }
    Ok(found)
}

/// The store's completed imports: path as recorded, its size and when it completed.
fn recorded_inputs(store: &Store) -> Result<HashMap<String, Vec<(u64, SystemTime)>>> {
    let mut recorded: HashMap<String, Vec<(u64, SystemTime)>> = HashMap::new();
    for input in store.inputs()? {
        if input.command != "import-warc" {
            continue;
        }
        let completed = UNIX_EPOCH + Duration::from_millis(input.completed_ms);
        recorded
            .entry(input.path)
            .or_default()
            .push((input.size, completed));
    }
    Ok(recorded)
}

/// True when the store recorded this path with this size, completed after the file last
/// changed: it is the same file, and reading it again would only find that out.
fn was_recorded(
    recorded: &HashMap<String, Vec<(u64, SystemTime)>>,
    path: &Path,
    seen: Seen,
) -> bool {
    recorded
        .get(&path.display().to_string())
        .is_some_and(|runs| {
            runs.iter()
                .any(|&(size, completed)| size == seen.size && completed >= seen.modified)
        })
}

fn sleep_unless_stopped(total: Duration, stop: &AtomicBool) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// Set by SIGINT and SIGTERM from the first call on: a follower stops between rounds
/// instead of dying inside an import.
pub fn stop_on_signals() -> &'static AtomicBool {
    static STOP: AtomicBool = AtomicBool::new(false);
    extern "C" fn on_signal(_: libc::c_int) {
        // Only an atomic store: async-signal-safe.
        STOP.store(true, Ordering::Relaxed);
    }
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    &STOP
}
