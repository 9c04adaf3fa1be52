//! `sediment extract`: the captures of one input as record lines on standard output, for
//! a distributed ingest (see `scaleout`); problems are reported as by the ingest commands.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use super::UsageError;
use crate::filter::{FileFilter, FilterArgs};
use crate::report::{Report, ReportArgs};
use crate::scaleout::extract::{Completed, Extraction};

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    pub kind: Kind,
}

const EXAMPLES: &str = "Examples:
  sediment extract import-warc crawl-00001.warc.gz > crawl-00001.records
  sediment extract backfill-cdx --part 2/8 big.cdx.gz > big.part2.records";

#[derive(clap::Subcommand)]
pub enum Kind {
    /// The captures of one WARC file, as `import-warc` reads it.
    #[command(after_help = EXAMPLES)]
    ImportWarc(InputArgs),
    /// The captures of one CDX file (or one part of it), as `backfill-cdx` reads it.
    #[command(after_help = EXAMPLES)]
    BackfillCdx(InputArgs),
}

#[derive(clap::Args)]
pub struct InputArgs {
    /// The input file, or `-` for standard input (with --name).
    pub input: PathBuf,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// The name of an input read from standard input (its path or URL).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Part J of K of a CDX input: the chunks of lines i with i % K == J (every part reads
    /// the whole file, parses its share). Default 0/1.
    #[arg(long, value_name = "J/K", value_parser = parse_part, default_value = "0/1")]
    pub part: (u32, u32),
    /// Inputs the store completed (JSON lines of `ingest-sst --plan`'s `completed`): an
    /// input among them is skipped, as the ingest commands skip it.
    #[arg(long, value_name = "FILE")]
    pub completed: Option<PathBuf>,
    /// Stop at the first bad record or line (exit status 1).
    #[arg(long)]
    pub strict: bool,
    /// Write every problem to this file (JSON lines).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    /// `--report FILE` and `--quiet` (standard output carries the records, so the JSON
    /// report goes to a file).
    #[command(flatten)]
    pub reporting: ReportArgs,
}

fn parse_part(text: &str) -> Result<(u32, u32), String> {
    let (j, k) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?} is not J/K"))?;
    let j: u32 = j.parse().map_err(|_| format!("{text:?} is not J/K"))?;
    let k: u32 = k.parse().map_err(|_| format!("{text:?} is not J/K"))?;
    if k == 0 || j >= k {
        return Err(format!("part {j}/{k}: J must be below K"));
    }
    Ok((j, k))
}

pub fn run(args: Args) -> Result<ExitCode> {
    let (command, args) = match args.kind {
        Kind::ImportWarc(a) => ("import-warc", a),
        Kind::BackfillCdx(a) => ("backfill-cdx", a),
    };
    let reads_stdin = args.input == Path::new("-");
    match (&args.name, reads_stdin) {
        (Some(name), true) if name.trim().is_empty() => {
            return Err(UsageError("--name must not be empty".into()).into());
        }
        (None, true) => {
            return Err(UsageError(
                "an input read from standard input needs --name NAME (its path or URL)".into(),
            )
            .into());
        }
        (Some(_), false) => {
            return Err(UsageError(
                "--name names an input read from standard input; give `-` as the input".into(),
            )
            .into());
        }
        _ => {}
    }
    if args.reporting.json {
        crate::usage_error!(
            "--json prints to standard output, which carries the records here: write the report with --report FILE"
        );
    }
    let report = Report::new(&format!("extract {command}"))
        .output(&args.reporting)
        .strict(args.strict)
        .rejects_to(args.rejects.as_deref())?;
    let completed = read_completed(args.completed.as_deref())?;
    let filter = FileFilter::from_args(&args.filter);
    let extraction = Extraction {
        command,
        filter: &filter,
        report: &report,
        input: &args.input,
        name: args.name,
        part: args.part.0,
        parts: args.part.1,
        completed: &completed,
    };
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    match command {
        "import-warc" => extraction.warc(&mut out)?,
        _ => extraction.cdx(&mut out)?,
    }
    out.flush()?;
    report.finish("captures", None)?;
    super::finished(&report)
}

fn read_completed(path: Option<&Path>) -> Result<Vec<Completed>> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("{}: bad line", path.display())))
        .collect()
}
