//! `sediment import-tei PATH…`: GROBID outputs made elsewhere into `grobid0`, exactly as
//! if `sediment grobid` had fetched them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use rayon::prelude::*;

use crate::grobid::{GrobidCells, tei_file_key};
use crate::input::expand_paths;
use crate::key::Sha1Key;
use crate::report::{Counts, Location, Report, ReportArgs};
use crate::schema::{ColumnId, Schema};
use crate::stage::StageBatch;
use crate::store::Store;
use crate::store::cells::Projection;
use crate::store::writer::now_millis;
use crate::tei::{Quality, TeiOptions, TeiShape};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment import-tei /data/tei/
  sediment import-tei --force --shape legacy2018 0a1b2c….tei.xml")]
pub struct Args {
    /// TEI files named `<sha1hex>.tei.xml` (or `<sha1hex>.xml`), or directories searched
    /// recursively for them (flat or in the `xx/yy/<sha1hex>.tei.xml` layout).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Replace rows that were already processed (have a `grobid0:status` or status code).
    #[arg(long)]
    pub force: bool,
    /// JSON shape of grobid0:tei_json and metadata: current or legacy2018.
    #[arg(long, default_value = "current")]
    pub shape: String,
    /// Stop at the first bad file (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Write every bad file to this file (JSON lines: file, offset, reason).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "import-tei";

/// Files converted in parallel, then written in one batch: at most this many files and,
/// whatever their number, at most `BATCH_BYTES` of TEI. A converted file's cells take about
/// three times its size (the XML, its JSON and the metadata), so a byte bound rather than a
/// file count is what keeps memory flat when GROBID outputs run to tens of megabytes.
const FILES_PER_BATCH: usize = 64;
const BATCH_BYTES: u64 = 16 << 20;

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let Some(shape) = TeiShape::parse(&args.shape) else {
        crate::usage_error!(
            "--shape must be current or legacy2018, not {:?}",
            args.shape
        );
    };
    let options = TeiOptions::with_shape(shape);
    let store = super::open_creator(store_path, COMMAND)?;
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?
        .with_progress(None, "files");
    let schema = store.schema();
    let Some(status_code) = schema.column_id("grobid0:status_code") else {
        bail!("the store's schema has no grobid0:status_code");
    };
    let Some(status) = schema.column_id("grobid0:status") else {
        bail!("the store's schema has no grobid0:status");
    };
    let mut replaced = vec![status_code.family];
    replaced.extend(schema.family_index("match0"));
    // A row is processed when it has a status code (a GROBID call) or a status (an
    // imported TEI file, which records no status code).
    let projection = Projection {
        families: vec![status_code.family],
        columns: Some(vec![status_code, status]),
        versions: 1,
    };

    // Named files must follow the naming rule; directories contribute the files that do.
    let files = expand_paths(&args.paths, |p| tei_file_key(p).is_some(), &report)?;
    let ts = now_millis();
    let mut batch = StageBatch::new(&store, ts);
    for group in batches(&files) {
        let converted: Vec<(PathBuf, Converted)> = group
            .par_iter()
            .map(|path| {
                (
                    path.clone(),
                    convert(&store, &projection, path, options, args.force)
                        .map(|(key, cells)| (key, cells.map(|c| Encoded::of(c, schema)))),
                )
            })
            .collect();
        let mut counts = Counts::default();
        for (path, outcome) in converted {
            counts.incr("files");
            match outcome {
                Ok((_, None)) => counts.incr("skipped_done"),
                Ok((key, Some(encoded))) => {
                    batch.replace_row(&key, &replaced, &encoded.cells)?;
                    counts.incr("rows_written");
                    if let Some(quality) = encoded.quality {
                        counts.incr(&format!("quality_{quality}"));
                    }
                }
                Err(problem) => {
                    let at = Location {
                        file: path.display().to_string(),
                        line: None,
                        offset: problem.offset,
                    };
                    report.problem(at, problem.code, &problem.message, None)?;
                }
            }
        }
        batch.commit()?;
        if group_bytes(group) > BATCH_BYTES {
            // A document larger than a batch: its cells leave memory now, not while the
            // next one is converted.
            store.flush()?;
        }
        report.progress().inc(group.len() as u64);
        report.add_counts(&counts);
    }
    drop(batch);
    store.close()?;
    report.finish("files", None)?;
    super::finished(&report)
}

/// Groups of files for one batch each: at most `FILES_PER_BATCH` files and `BATCH_BYTES`
/// of TEI (a larger file is a batch of its own). Sizes come from the directory listing;
/// a file that cannot be measured counts as empty and fails later with its own problem.
fn batches(files: &[PathBuf]) -> Vec<&[PathBuf]> {
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, path) in files.iter().enumerate() {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if i > start && (i - start == FILES_PER_BATCH || bytes + size > BATCH_BYTES) {
            groups.push(&files[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < files.len() {
        groups.push(&files[start..]);
    }
    groups
}

fn group_bytes(group: &[PathBuf]) -> u64 {
    group
        .iter()
        .map(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .sum()
}

/// A converted file as the cells written to the store: encoded on the converting thread,
/// so the JSON trees are freed before the batch collects the next file.
struct Encoded {
    cells: Vec<(ColumnId, Vec<u8>)>,
    quality: Option<Quality>,
}

impl Encoded {
    fn of(cells: GrobidCells, schema: &Schema) -> Encoded {
        Encoded {
            quality: cells.quality,
            cells: cells.into_cells(schema),
        }
    }
}

/// A file's row and cells (`None` when already processed), or why it was refused.
type Converted = Result<(Sha1Key, Option<Encoded>), Problem>;

/// A file that could not be imported.
struct Problem {
    code: &'static str,
    message: String,
    offset: Option<u64>,
}

/// Reads and converts one file; `None` cells when the row is already processed.
fn convert(
    store: &Store,
    projection: &Projection,
    path: &Path,
    options: TeiOptions,
    force: bool,
) -> Result<(Sha1Key, Option<GrobidCells>), Problem> {
    let Some(key) = tei_file_key(path) else {
        return Err(Problem {
            code: "bad_name",
            message: "not named <sha1hex>.tei.xml: the name must give the SHA-1 of the PDF".into(),
            offset: None,
        });
    };
    if !force {
        match store.read_row(&key, projection) {
            Ok(Some(_)) => return Ok((key, None)),
            Ok(None) => {}
            Err(e) => {
                return Err(Problem {
                    code: "store_error",
                    message: format!("{e:#}"),
                    offset: None,
                });
            }
        }
    }
    let xml = std::fs::read(path).map_err(|e| Problem {
        code: "unreadable",
        message: format!("cannot read: {e}"),
        offset: None,
    })?;
    match GrobidCells::from_tei_owned(xml, options) {
        Ok(cells) => Ok((key, Some(cells))),
        Err(e) => Err(Problem {
            code: "bad_tei",
            message: format!("{}: {}", e.kind, e.reason),
            offset: Some(e.position),
        }),
    }
}
