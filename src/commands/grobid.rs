//! `sediment grobid --url URL`: the store's PDFs through a GROBID server into `grobid0`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use crate::grobid::stage::DEFAULT_MAX_SIZE;
use crate::grobid::{GrobidOptions, GrobidStage, run_stage};
use crate::report::{Report, ReportArgs};
use crate::tei::{TeiOptions, TeiShape};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment grobid --url http://localhost:8070 --warc-dir /data/warcs --workers 8
  sediment grobid --url http://localhost:8070 --limit 100 --report grobid.json")]
pub struct Args {
    /// Base URL of the GROBID server (e.g. http://localhost:8070).
    #[arg(long, env = "GROBID_URL")]
    pub url: String,
    /// Directories holding the WARC files (the stored path is tried under each, with
    /// and without its directory part).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Concurrent calls (GROBID processes several documents at once).
    #[arg(long, default_value_t = 4)]
    pub workers: usize,
    /// Process at most this many rows (the rest is left for the next run).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Process rows that already have a `grobid0:status_code` again.
    #[arg(long)]
    pub force: bool,
    /// MIME types to process (repeatable; compared after normalization).
    #[arg(
        long = "mime",
        value_name = "TYPE",
        default_value = "application/pdf",
        value_parser = crate::mime::parse_mime_type
    )]
    pub mimes: Vec<String>,
    /// Files larger than this many bytes are not sent (status `oversize`).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_SIZE)]
    pub max_size: u64,
    /// Seconds to wait for one reply (status `error-timeout` after that).
    #[arg(long, value_name = "SECS", default_value_t = 180.0)]
    pub timeout: f64,
    /// GROBID consolidateHeader (0 none, 1 full, 2 DOI only, 3 …).
    #[arg(long, value_name = "N")]
    pub consolidate_header: Option<u8>,
    /// GROBID consolidateCitations.
    #[arg(long, value_name = "N")]
    pub consolidate_citations: Option<u8>,
    /// GROBID consolidateFunders.
    #[arg(long, value_name = "N")]
    pub consolidate_funders: Option<u8>,
    /// GROBID includeRawCitations: keep every reference string as printed.
    #[arg(long)]
    pub include_raw_citations: bool,
    /// GROBID includeRawAffiliations.
    #[arg(long)]
    pub include_raw_affiliations: bool,
    /// GROBID includeRawCopyrights.
    #[arg(long)]
    pub include_raw_copyrights: bool,
    /// GROBID segmentSentences.
    #[arg(long)]
    pub segment_sentences: bool,
    /// GROBID generateIDs.
    #[arg(long)]
    pub generate_ids: bool,
    /// GROBID teiCoordinates: elements to give PDF coordinates (comma-separated).
    #[arg(long, value_name = "ELEMENTS", value_delimiter = ',')]
    pub tei_coordinates: Vec<String>,
    /// A further form field for GROBID (repeatable).
    #[arg(long = "form", value_name = "NAME=VALUE")]
    pub form: Vec<String>,
    /// Retries while GROBID answers 503 (busy).
    #[arg(long, default_value_t = 6)]
    pub retries: u32,
    /// First wait after a 503, in milliseconds (doubled each time, at most 60 s;
    /// GROBID's Retry-After wins).
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub backoff_ms: u64,
    /// JSON shape of grobid0:tei_json and metadata: current or legacy2018.
    #[arg(long, default_value = "current")]
    pub shape: String,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

const COMMAND: &str = "grobid";

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let Some(shape) = TeiShape::parse(&args.shape) else {
        crate::usage_error!(
            "--shape must be current or legacy2018, not {:?}",
            args.shape
        );
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        crate::usage_error!("--timeout must be a positive number of seconds");
    }
    let mut client = GrobidOptions::new(&args.url);
    client.timeout = Duration::from_secs_f64(args.timeout);
    client.consolidate_header = args.consolidate_header;
    client.consolidate_citations = args.consolidate_citations;
    client.consolidate_funders = args.consolidate_funders;
    client.include_raw_citations = args.include_raw_citations;
    client.include_raw_affiliations = args.include_raw_affiliations;
    client.include_raw_copyrights = args.include_raw_copyrights;
    client.segment_sentences = args.segment_sentences;
    client.generate_ids = args.generate_ids;
    client.tei_coordinates = args.tei_coordinates;
    client.retries = args.retries;
    client.backoff = Duration::from_millis(args.backoff_ms);
    for field in &args.form {
        let Some((name, value)) = field.split_once('=') else {
            crate::usage_error!("--form takes NAME=VALUE, not {field:?}");
        };
        client
            .extra_fields
            .push((name.trim().to_string(), value.to_string()));
    }
    let stage = GrobidStage {
        client,
        warc_dirs: args.warc_dirs,
        workers: args.workers.max(1),
        limit: args.limit,
        force: args.force,
        mimes: args.mimes,
        max_size: args.max_size,
        tei: TeiOptions::with_shape(shape),
    };
    let store = super::open_writer(store_path, COMMAND)?;
    let report = Report::new(COMMAND)
        .output(&args.reporting)
        .with_progress(None, "rows");
    let result = run_stage(&store, &stage, &report);
    // Every committed batch holds whole rows, so what was done is published even when
    // the run stopped on an error: the GROBID calls it paid for are not lost.
    store.close()?;
    if let Err(e) = result {
        // Say how much was done, then fail.
        report.abandon("rows_written");
        return Err(e);
    }
    report.finish("rows_written", None)?;
    super::finished(&report)
}
