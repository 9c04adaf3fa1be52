//! `sediment export`: rows as JSON lines, streamed in key order; with `--captures`, then
//! the capture index and the crawl descriptions, so that `import-jsonl` rebuilds the
//! whole store.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::export::{ExportOptions, Selection, export_jsonl};
use crate::key::Sha1Key;
use crate::report::{Report, ReportArgs};
use crate::schema::Schema;
use crate::store::backend::row_upper_bound;
use crate::store::cells::Projection;

#[derive(clap::Args, Default)]
#[command(after_help = "Examples:
  sediment export -o rows.jsonl --report export.json
  sediment export --columns file:mime,f:c --prefix 3I --limit 10
  # the whole store (rows, captures, crawl descriptions), for import-jsonl:
  sediment export --captures -o store.jsonl")]
pub struct Args {
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Only these families, comma-separated (e.g. f,file).
    #[arg(long, value_delimiter = ',')]
    pub families: Vec<String>,
    /// Only these columns, comma-separated (e.g. file:mime,f:c).
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Only keys whose base32 spelling starts with this prefix.
    #[arg(long)]
    pub prefix: Option<String>,
    /// First key (inclusive), any key spelling.
    #[arg(long)]
    pub start: Option<String>,
    /// Last key (exclusive), any key spelling.
    #[arg(long)]
    pub end: Option<String>,
    /// At most this many rows.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Up to N versions per cell, each with its timestamp.
    #[arg(long)]
    pub versions: Option<usize>,
    /// After the rows, every capture of the capture index (`{"capture":{…}}` lines, in
    /// URL then time order), every failed fetch, every crawl description
    /// (`{"warcinfo":{…}}`) and every page a WACZ listed (`{"page":{…}}`): the whole store,
    /// which `import-jsonl` reads back. Not with the options that select rows.
    #[arg(long, conflicts_with_all = ["families", "columns", "prefix", "start", "end", "limit"])]
    pub captures: bool,
    /// Only the captures and crawl descriptions, no rows.
    #[arg(long, conflicts_with_all = ["families", "columns", "prefix", "start", "end", "limit", "versions"])]
    pub only_captures: bool,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

/// Builds the projection (families/columns) from the options.
pub fn projection(schema: &Schema, families: &[String], columns: &[String]) -> Result<Projection> {
    let mut projection = Projection::all(schema);
    if !families.is_empty() {
        projection.families = families
            .iter()
            .map(|name| {
                schema.family_index(name).with_context(|| {
                    let known: Vec<_> = schema.families.iter().map(|f| f.name.as_str()).collect();
                    format!("unknown family {name:?} (known: {})", known.join(", "))
                })
            })
            .collect::<Result<_>>()?;
    }
    if !columns.is_empty() {
        let ids = columns
            .iter()
            .map(|name| {
                schema
                    .column_id(name)
                    .with_context(|| format!("unknown column {name:?} (see `sediment schema`)"))
            })
            .collect::<Result<Vec<_>>>()?;
        if families.is_empty() {
            projection.families = ids.iter().map(|c| c.family).collect();
            projection.families.dedup();
        }
        projection.columns = Some(ids);
    }
    Ok(projection)
}

/// The key range `[start, end)` of a base32 prefix.
pub fn prefix_range(prefix: &str) -> Result<(Vec<u8>, Vec<u8>)> {
    let upper = prefix.to_ascii_uppercase();
    if upper.len() > 32
        || !upper
            .bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
    {
        bail!("prefix {prefix:?} is not a base32 key prefix (A-Z, 2-7, at most 32 characters)");
    }
    let low = format!("{upper:A<32}");
    let high = format!("{upper:7<32}");
    let (Some(low), Some(high)) = (
        Sha1Key::from_base32(low.as_bytes()),
        Sha1Key::from_base32(high.as_bytes()),
    ) else {
        bail!("prefix {prefix:?} is not a base32 key prefix");
    };
    Ok((low.0.to_vec(), row_upper_bound(&high.0)))
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    if args.reporting.json && args.output.is_none() {
        crate::usage_error!(
            "--json prints to standard output, which carries the rows here: write them to a file with -o FILE, or the report with --report FILE"
        );
    }
    let store = super::open_reader(store_path)?;
    let selection = selection(store.schema(), &args)?;
    let sink: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(super::NamedWriter::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
            path,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let report = Report::new("export")
        .output(&args.reporting)
        .with_progress(None, "rows");
    let options = ExportOptions {
        rows: !args.only_captures,
        limit: args.limit,
        with_versions: args.versions.is_some(),
        captures: args.captures || args.only_captures,
    };
    export_jsonl(&store, selection, &options, &mut out, &report)?;
    report.finish("rows", None)?;
    super::finished(&report)
}

/// Checks the selection arguments (usage errors) before anything is written.
fn selection(schema: &Schema, args: &Args) -> Result<Selection> {
    let mut projection = super::usage(projection(schema, &args.families, &args.columns))?;
    projection.versions = args.versions.unwrap_or(1).max(1);

    let mut start: Option<Vec<u8>> = args
        .start
        .as_deref()
        .map(|k| super::usage(Sha1Key::parse(k)).map(|k| k.0.to_vec()))
        .transpose()?;
    let mut end: Option<Vec<u8>> = args
        .end
        .as_deref()
        .map(|k| super::usage(Sha1Key::parse(k)).map(|k| k.0.to_vec()))
        .transpose()?;
    if let Some(prefix) = &args.prefix {
        let (low, high) = super::usage(prefix_range(prefix))?;
        start = Some(start.map_or(low.clone(), |s| s.max(low)));
        end = Some(end.map_or(high.clone(), |e| e.min(high)));
    }

    Ok(Selection {
        projection,
        start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ranges_cover_exactly_the_prefix() {
        let (low, high) = prefix_range("3I").unwrap();
        let key = Sha1Key::parse("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ").unwrap();
        assert!(low.as_slice() <= key.0.as_slice() && key.0.as_slice() < high.as_slice());
        let other = Sha1Key::parse("3J42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ").unwrap();
        assert!(other.0.as_slice() >= high.as_slice());
        assert!(prefix_range("01").is_err());
        let (low, high) = prefix_range("").unwrap();
        assert_eq!(low, vec![0; 20]);
        assert_eq!(high, vec![0xff; 21]);
    }
}
