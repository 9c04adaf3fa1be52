//! `sediment captures`: the capture history (the wayback/CDX view), as JSON lines.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::key::Sha1Key;
use crate::store::captures::captures_of_digest;
use crate::store::cells::row_upper_bound;

#[derive(clap::Args)]
pub struct Args {
    /// Captures of this URL (canonicalized to its SURT).
    #[arg(long, conflicts_with_all = ["surt_prefix", "digest"])]
    pub url: Option<String>,
    /// Captures whose SURT starts with this prefix (e.g. `org,example)/` for a site).
    #[arg(long, conflicts_with = "digest")]
    pub surt_prefix: Option<String>,
    /// Captures of one payload, first capture first.
    #[arg(long)]
    pub digest: Option<String>,
    /// At most this many captures.
    #[arg(long)]
    pub limit: Option<u64>,
}

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let store = super::open_reader(store_path)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let limit = args.limit.unwrap_or(u64::MAX);
    if let Some(digest) = &args.digest {
        let key = Sha1Key::parse(digest)?;
        for capture in captures_of_digest(&store, &key)?
            .into_iter()
            .take(limit as usize)
        {
            out.write_all(&capture.to_json())?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        return super::finished();
    }
    let prefix: Vec<u8> = match (&args.url, &args.surt_prefix) {
        (Some(url), _) => {
            let mut p = crate::surt::surt(url).into_bytes();
            p.push(0);
            p
        }
        (None, Some(prefix)) => prefix.as_bytes().to_vec(),
        (None, None) => Vec::new(),
    };
    let end = (!prefix.is_empty()).then(|| row_upper_bound(&prefix));
    let mut n = 0;
    store.scan_captures(&prefix, end.as_deref(), |capture| {
        if n >= limit {
            return Ok(false);
        }
        out.write_all(&capture.to_json())?;
        out.write_all(b"\n")?;
        n += 1;
        Ok(true)
    })?;
    out.flush()?;
    super::finished()
}
