//! `sediment match`: every row's `grobid0:metadata` against the catalog, into `match0`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use rayon::prelude::*;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::codec::canonical_json;
use crate::ingest::thread_count;
use crate::key::Sha1Key;
use crate::matching::{MatchOptions, MatchQuery, MatchResult, Matcher};
use crate::report::{Counts, Location, Report, ReportArgs};
use crate::schema::ColumnId;
use crate::stage::StageBatch;
use crate::store::cells::Projection;
use crate::store::writer::now_millis;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment match
  sediment match --limit 1000 --json")]
pub struct Args {
    /// Match at most this many rows (the rest is left for the next run).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Match rows that already have match0 cells again.
    #[arg(long)]
    pub force: bool,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// For tuning only (scripts/tune-match.sh): replace thresholds of the title
    /// comparison, `NAME=VALUE,…` (src/matching/similarity.rs, `TitleThresholds`).
    /// Hidden: the defaults are the tuned values, and a store matched with others says
    /// so in every `match0:minfo` (`title_thresholds`).
    #[arg(long, hide = true, value_name = "NAME=VALUE,…")]
    pub title_thresholds: Option<String>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

/// Rows matched in parallel and then written in one batch.
const ROWS_PER_BATCH: usize = 256;

struct Columns {
    metadata: ColumnId,
    mstatus: ColumnId,
    doi: ColumnId,
    minfo: ColumnId,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    // Checked before the store is opened: a refused value leaves it untouched.
    let mut options = MatchOptions::default();
    if let Some(overrides) = &args.title_thresholds {
        options.title = options
            .title
            .with_overrides(overrides)
            .map_err(|e| anyhow::anyhow!("--title-thresholds: {e}"))?;
    }
    let tuned = args
        .title_thresholds
        .clone()
        .filter(|_| options.title != Default::default());
    let store = super::open_writer(store_path, "match")?;
    let schema = store.schema();
    let column = |name: &str| match schema.column_id(name) {
        Some(c) => Ok(c),
        None => bail!("the store's schema has no column {name}"),
    };
    let columns = Columns {
        metadata: column("grobid0:metadata")?,
        mstatus: column("match0:mstatus")?,
        doi: column("match0:doi")?,
        minfo: column("match0:minfo")?,
    };
    let catalog = Catalog::new(&store);
    if catalog.is_empty()? {
        bail!("the catalog is empty: load records first with `sediment catalog load FILE…`");
    }
    let matcher = Matcher::new(catalog, options);
    let report = Report::new("match")
        .output(&args.reporting)
        .with_progress(None, "rows");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(thread_count(args.threads))
        .build()?;
    let projection = Projection {
        families: vec![columns.metadata.family, columns.mstatus.family],
        columns: Some(vec![columns.metadata, columns.mstatus]),
        versions: 1,
    };
    let mut batch = StageBatch::new(&store, now_millis());
    let mut pending: Vec<(Sha1Key, Vec<u8>)> = Vec::with_capacity(ROWS_PER_BATCH);
    let mut selected: u64 = 0;
    let mut flush = |pending: &mut Vec<(Sha1Key, Vec<u8>)>| -> Result<()> {
        let results: Vec<(Sha1Key, Result<MatchResult, String>)> = pool.install(|| {
            pending
                .par_iter()
                .map(|(key, metadata)| Ok((*key, match_one(&matcher, metadata)?)))
                .collect::<Result<_>>()
        })?;
        pending.clear();
        let mut counts = Counts::default();
        for (key, result) in results {
            match result {
                Ok(mut result) => {
                    if let Some(overrides) = &tuned {
                        result.info["title_thresholds"] = Value::from(overrides.as_str());
                    }
                    let mut cells = vec![
                        (columns.mstatus, result.status.as_str().as_bytes().to_vec()),
                        (columns.minfo, canonical_json(&result.info)),
                    ];
                    if let Some(doi) = &result.doi {
                        cells.push((columns.doi, doi.as_bytes().to_vec()));
                    }
                    batch.replace_row(&key, &[columns.mstatus.family], &cells)?;
                    counts.incr("rows_matched");
                    counts.incr(result.status.as_str());
                }
                Err(message) => {
                    let at = Location::named(format!("row {key}"));
                    report.problem(at, "bad_metadata", &message, None)?;
                }
            }
        }
        batch.commit()?;
        report.progress().inc(counts.get("rows_matched"));
        report.add_counts(&counts);
        Ok(())
    };
    store.scan_rows(&projection, None, None, |row| {
        let Some(metadata) = row.latest(columns.metadata) else {
            return Ok(true);
        };
        if row.latest(columns.mstatus).is_some() && !args.force {
            report.count("skipped_done", 1);
            return Ok(true);
        }
        if args.limit.is_some_and(|limit| selected >= limit) {
            return Ok(false);
        }
        selected += 1;
        pending.push((row.key, metadata.to_vec()));
        if pending.len() >= ROWS_PER_BATCH {
            flush(&mut pending)?;
        }
        Ok(true)
    })?;
    flush(&mut pending)?;
    drop(batch);
    store.close()?;
    report.finish("rows_matched", None)?;
    super::finished(&report)
}

/// Matches one row; the inner error is bad metadata (reported, the run goes on), the
/// outer one a store failure (the run stops).
fn match_one(matcher: &Matcher<'_>, metadata: &[u8]) -> Result<Result<MatchResult, String>> {
    let value: Value = match serde_json::from_slice(metadata) {
        Ok(value) => value,
        Err(e) => return Ok(Err(format!("grobid0:metadata is not valid JSON: {e}"))),
    };
    if !value.is_object() {
        return Ok(Err("grobid0:metadata is not a JSON object".into()));
    }
    Ok(Ok(matcher.match_query(&MatchQuery::from_metadata(&value))?))
}
