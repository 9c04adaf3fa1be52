//! `sediment captures`: the capture history (the wayback/CDX view), by URL with the
//! wayback query options (match type, time span, limit, output format), by SURT prefix,
//! or by payload digest.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::key::Sha1Key;
use crate::store::captures::captures_of_digest;
use crate::wayback::query::{KeyRange, after_prefix};
use crate::wayback::run::VecSource;
use crate::wayback::{CaptureQuery, QueryLimits, StoreCaptures};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment captures --url example.com/ --from 2021 --to 202106 --output cdx
  sediment captures --url 'example.com/*' --limit -10
  sediment captures --url '*.example.com' --filter '!status:200' --output json")]
pub struct Args {
    /// Captures of this URL. `example.com/*` asks for every URL under it, `*.example.com`
    /// for the domain and its subdomains (or say so with --match).
    #[arg(long, conflicts_with_all = ["surt_prefix", "digest"])]
    pub url: Option<String>,
    /// How --url matches: exact (the default), prefix, host or domain.
    #[arg(long = "match", value_name = "TYPE", requires = "url")]
    pub match_type: Option<String>,
    /// Captures whose SURT starts with this prefix (e.g. `org,example)/` for a site).
    #[arg(long, conflicts_with = "digest")]
    pub surt_prefix: Option<String>,
    /// Captures of one payload, first capture first.
    #[arg(long)]
    pub digest: Option<String>,
    /// Captures at or after this time: 1 to 14 digits, `2021` means 20210101000000.
    #[arg(long)]
    pub from: Option<String>,
    /// Captures at or before this time: 1 to 14 digits, `2021` means 20211231235959.
    #[arg(long)]
    pub to: Option<String>,
    /// At most this many captures; a negative number gives the last N.
    #[arg(long, allow_negative_numbers = true)]
    pub limit: Option<i64>,
    /// Keep captures whose field matches: `field:regex`, `!field:regex`, `~field:substring`
    /// (fields: urlkey, timestamp, url, mime, status, digest, length, offset, filename).
    #[arg(long)]
    pub filter: Vec<String>,
    /// Of adjacent captures with the same field (or first N characters: `field:N`), keep
    /// the first.
    #[arg(long)]
    pub collapse: Vec<String>,
    /// Nearest in time to this timestamp first.
    #[arg(long)]
    pub closest: Option<String>,
    /// Newest first.
    #[arg(long, conflicts_with = "closest")]
    pub reverse: bool,
    /// jsonl (every stored detail, one JSON object per line: the default), cdx (11-column
    /// lines as `sediment cdx` writes them), cdxj, or json (arrays, first the field names).
    #[arg(long, default_value = "jsonl")]
    pub output: String,
}

/// The wayback query parameters the arguments stand for.
fn query_params(args: &Args, url: &str) -> Vec<(&'static str, String)> {
    let mut params = vec![("url", url.to_string()), ("output", args.output.clone())];
    let optional = [
        ("matchType", &args.match_type),
        ("from", &args.from),
        ("to", &args.to),
        ("closest", &args.closest),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            params.push((name, value.clone()));
        }
    }
    if let Some(limit) = args.limit {
        params.push(("limit", limit.to_string()));
    }
    if args.reverse {
        params.push(("sort", "reverse".to_string()));
    }
    params.extend(args.filter.iter().map(|f| ("filter", f.clone())));
    params.extend(args.collapse.iter().map(|c| ("collapse", c.clone())));
    params
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    // A command-line listing may be as long as the store; only windows stay bounded.
    let limits = QueryLimits {
        max_limit: u64::MAX >> 1,
        ..QueryLimits::default()
    };
    let url = args.url.as_deref().unwrap_or_default();
    let params = query_params(&args, url);
    let params = params.iter().map(|(k, v)| (*k, v.as_str()));
    let query = if args.url.is_some() {
        CaptureQuery::from_params(params, &limits)?
    } else {
        // Without --url the same options apply to a SURT prefix (every capture by
        // default) or to the captures of a digest.
        let prefix = args.surt_prefix.clone().unwrap_or_default().into_bytes();
        let range = KeyRange {
            end: after_prefix(&prefix),
            start: prefix,
        };
        CaptureQuery::over_range(params, &limits, range)?
    };
    let store = super::open_reader(store_path)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    match &args.digest {
        Some(digest) => {
            let key = Sha1Key::parse(digest)?;
            let source = VecSource::in_order(captures_of_digest(&store, &key)?);
            crate::wayback::run(&query, &source, &mut out)?;
        }
        None => {
            crate::wayback::run(&query, &StoreCaptures::new(&store), &mut out)?;
        }
    }
    out.flush()?;
    super::finished()
}
