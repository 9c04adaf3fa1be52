//! `sediment export-wacz -o FILE.wacz`: a capture selection (the options of `captures`)
//! as a WACZ package that ReplayWeb.page and pywb replay.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::payload::WarcLocator;
use crate::report::{Report, ReportArgs};
use crate::wayback::query::{KeyRange, after_prefix};
use crate::wayback::{CaptureQuery, QueryLimits};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment export-wacz -o site.wacz --url 'example.com/*'
  sediment export-wacz -o june.wacz --from 202106 --to 202106 --filter status:200")]
pub struct Args {
    /// The package to write (replaced only once it is complete).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Captures of this URL. `example.com/*` asks for every URL under it, `*.example.com`
    /// for the domain and its subdomains (or say so with --match). Every capture without it.
    #[arg(long)]
    pub url: Option<String>,
    /// How --url matches: exact (the default), prefix, host or domain.
    #[arg(long = "match", value_name = "TYPE", requires = "url")]
    pub match_type: Option<String>,
    /// Captures at or after this time: 1 to 14 digits.
    #[arg(long)]
    pub from: Option<String>,
    /// Captures at or before this time: 1 to 14 digits.
    #[arg(long)]
    pub to: Option<String>,
    /// Keep captures whose field matches: `field:regex`, `!field:regex`, `~field:substring`
    /// (fields: urlkey, timestamp, url, mime, status, digest, length, offset, filename).
    #[arg(long)]
    pub filter: Vec<String>,
    /// Directories holding the WARC files (as for `cat`).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub reporting: ReportArgs,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let limits = QueryLimits {
        max_limit: u64::MAX >> 1,
        ..QueryLimits::default()
    };
    let mut params = vec![("output", "jsonl".to_string())];
    for (name, value) in [
        ("matchType", &args.match_type),
        ("from", &args.from),
        ("to", &args.to),
    ] {
        if let Some(value) = value {
            params.push((name, value.clone()));
        }
    }
    params.extend(args.filter.iter().map(|f| ("filter", f.clone())));
    let query = match &args.url {
        Some(url) => {
            params.push(("url", url.clone()));
            let params = params.iter().map(|(k, v)| (*k, v.as_str()));
            super::usage(CaptureQuery::from_params(params, &limits))?
        }
        None => {
            let params = params.iter().map(|(k, v)| (*k, v.as_str()));
            let range = KeyRange {
                start: Vec::new(),
                end: after_prefix(&[]),
            };
            super::usage(CaptureQuery::over_range(params, &limits, range))?
        }
    };
    let store = super::open_reader(store_path)?;
    let report = Report::new("export-wacz").output(&args.reporting);
    let locator = WarcLocator::new(&args.warc_dirs);
    let software = format!("sediment {}", env!("CARGO_PKG_VERSION"));
    let exported =
        crate::wacz::write::export(&store, &query, &locator, &args.output, &report, &software)?;
    report.add_counts(&exported.counts);
    report.finish("records", Some(exported.bytes))?;
    super::finished(&report)
}
