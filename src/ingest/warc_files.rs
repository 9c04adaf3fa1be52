//! Importing WARC files: the inputs planned (directories searched, wrong kinds refused),
//! then read in parallel through the ingest pipeline. What `sediment import-warc` and
//! the library's `Store::import_warc` run.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::filter::FileFilter;
use crate::ingest::warc::WarcImporter;
use crate::ingest::{IngestRun, thread_count};
use crate::input::{InputKind, PlannedInput, plan_inputs, refuse_kind, report_empty_directories};
use crate::report::Report;
use crate::store::Store;

const COMMAND: &str = "import-warc";

/// How WARC files are imported.
pub struct WarcImport {
    /// Which captures locate file rows.
    pub filter: FileFilter,
    /// Worker threads (default: one per core).
    pub threads: Option<usize>,
    /// Apply inputs the store has already ingested.
    pub force: bool,
    /// Commit after inputs started within this time are done.
    pub commit_every: Duration,
    /// The name a WARC read from standard input (`-`) is kept under.
    pub stdin_name: Option<String>,
    /// Load a wave that starts on an empty store through SST files (see
    /// [`crate::ingest::input_sink`]); the store ends up the same either way.
    pub bulk_into_empty: bool,
}

/// Names that directory expansion treats as WARC files.
pub fn is_warc_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// The WARC files and WACZ packages among `paths` (directories searched), wrong kinds
/// refused.
pub fn plan_warcs(paths: &[PathBuf], report: &Report) -> Result<Vec<PlannedInput>> {
    let accept = |p: &Path| is_warc_name(p) || crate::wacz::is_wacz_name(p);
    let mut inputs = plan_inputs(paths, accept, report)?;
    refuse_kind(&mut inputs, InputKind::Cdx, report)?;
    report_empty_directories(
        paths,
        &inputs,
        "WARC files (*.warc, *.warc.gz, *.wacz)",
        report,
    )?;
    Ok(inputs)
}

/// Imports `inputs` into the open `store`; returns the bytes read.
pub fn import_warcs(
    store: &Store,
    inputs: Vec<PlannedInput>,
    options: &WarcImport,
    report: &Report,
) -> Result<u64> {
    let filter = &options.filter;
    let mut run = IngestRun::new(store, report, COMMAND, filter.describe());
    run.commit_interval = options.commit_every;
    run.bulk_into_empty = options.bulk_into_empty;
    let file_bytes: u64 = inputs.iter().filter_map(|i| i.size).sum();
    let stdin_bytes = AtomicU64::new(0);
    report.start_progress(Some(file_bytes), "bytes");
    run.apply(
        inputs,
        thread_count(options.threads),
        options.force,
        |input, sink| {
            let (path, location) = match &options.stdin_name {
                Some(name) if input.is_stdin() => (name.clone(), absolute(Path::new(name))),
                _ => (input.display(), canonical(&input.path)),
            };
            let importer = WarcImporter {
                report,
                filter,
                path,
                location,
            };
            let counts = if !input.is_stdin() && crate::wacz::is_wacz_name(&input.path) {
                crate::wacz::read::WaczImporter {
                    report,
                    filter,
                    path: input.display(),
                    location: canonical(&input.path),
                }
                .import(input, sink)?
            } else if input.is_stdin() {
                let mut counted = Counted {
                    inner: std::io::stdin().lock(),
                    bytes: &stdin_bytes,
                };
                importer.import(&mut counted, sink)?
            } else {
                let file = File::open(&input.path)
                    .with_context(|| format!("cannot open {}", input.display()))?;
                let mut reader = input.hashing(file);
                let counts = importer.import(&mut reader, sink)?;
                reader.finish()?;
                counts
            };
            report.add_counts(&counts);
            Ok(serde_json::to_value(&counts)?)
        },
    )?;
    // Standard input has no size beforehand: its bytes are counted as they are read.
    Ok(file_bytes + stdin_bytes.load(Ordering::Relaxed))
}

/// A reader that counts the bytes read through it.
struct Counted<'a, R> {
    inner: R,
    bytes: &'a AtomicU64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The canonical absolute path of an input file (symbolic links resolved).
fn canonical(path: &Path) -> Option<String> {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
}

/// An absolute path for a name given on the command line (the file need not exist).
fn absolute(path: &Path) -> Option<String> {
    std::path::absolute(path)
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
}
