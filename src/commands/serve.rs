//! `sediment serve`: the store as a live wayback index and lookup service over HTTP.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use crate::serve::{self, AccessLog, Config};
use crate::wayback::QueryLimits;

#[derive(clap::Args)]
#[command(
    after_help = "Endpoints: /cdx?url=… (pywb / IA CDX server API), /sha1/KEY, /payload/KEY, \
/captures/KEY, /captures?url=… (a page listing one URL's captures), /search?q=… (with \
--summary-db; HTML or JSON, with the total, facets by site, type and year, and offset= for
pages), / (what the archive holds, and a search box), /health, /stats.

Limits: a search query holds at most 32 words (a repeated word counts once), 16 site:/lang:/mime:
values and 4096 bytes of search expression; at most --max-searches run at once (others wait a
second, then get 503 with Retry-After), each stopped at --request-timeout or when its client
goes away; likewise at most --max-payloads payloads are read or streamed at once, each cut
short at --request-timeout, also when its client stops reading. When all --max-connections (or a client's --max-connections-per-client) are taken,
the longest-open idle connection (still sending its headers, or between requests) is closed
to make room; a connection is refused (503) only when every slot it could take is busy.
SIGTERM or Ctrl-C gives requests in progress a second to finish, then stops them.

Examples:
  sediment serve --warc-dir /data/warcs
  curl 'http://127.0.0.1:8080/cdx?url=example.com/*&from=2021&output=json'
  sediment serve --bind 127.0.0.1:9000 --summary-db summary.db   # then open /
  sediment serve --summary-db summary.db --replay-url 'http://localhost:8080/my-coll/{timestamp}/{url}'"
)]
pub struct Args {
    /// Address and port to listen on (loopback by default; give 0.0.0.0:PORT to expose it).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Summary database (from `sediment project summary`) for /search.
    #[arg(long, value_name = "FILE")]
    pub summary_db: Option<PathBuf>,
    /// Directories holding the WARC files, when they are no longer where they were
    /// imported from (the stored name is tried under each).
    #[arg(long = "warc-dir", value_name = "DIR")]
    pub warc_dirs: Vec<PathBuf>,
    /// Most open connections.
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Most open connections from one client address.
    #[arg(long, default_value_t = 64)]
    pub max_connections_per_client: usize,
    /// Most searches running at once (default: one per core).
    #[arg(long)]
    pub max_searches: Option<usize>,
    /// Most payloads (/payload/KEY) read or streamed at once (default: two per core).
    #[arg(long)]
    pub max_payloads: Option<usize>,
    /// Most seconds one request may take (the answer is cut short after that).
    #[arg(long, default_value_t = 30)]
    pub request_timeout: u64,
    /// Most seconds a client may take to send its request line and headers.
    #[arg(long, default_value_t = 10)]
    pub header_timeout: u64,
    /// Most bytes of request line and headers (at least 8192).
    #[arg(long, default_value_t = 16384)]
    pub max_header_bytes: usize,
    /// Most captures in one /cdx answer (and the answer's size without a limit).
    #[arg(long, default_value_t = 100_000)]
    pub max_limit: u64,
    /// Most captures held in memory for one query (negative limits, closest sort).
    #[arg(long, default_value_t = 10_000)]
    pub max_window: u64,
    /// Captures per page of the paging API (`page=`, `showNumPages=`) when the query
    /// gives no pageSize.
    #[arg(long, default_value_t = 5_000)]
    pub page_size: u64,
    /// Seconds between looks for a newer published version of the store.
    #[arg(long, default_value_t = 2)]
    pub refresh: u64,
    /// Access log: `-` for standard error, `off`, or a file to append to.
    #[arg(long, default_value = "-")]
    pub access_log: String,
    /// Worker threads (default: four per core, so that reads waiting on the disk do not
    /// leave the cores idle).
    #[arg(long)]
    pub threads: Option<usize>,
    /// RocksDB's block cache, in MiB: the store's blocks kept uncompressed in the server's
    /// memory, shared by every version of the store it opens. The operating system's page
    /// cache keeps more of the store, compressed, outside this bound: give the cache part
    /// of the memory left over, not all of it (a quarter to a half).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_BLOCK_CACHE_MIB)]
    pub block_cache_mb: usize,
    /// Link search results and captures to a replay of the archived page (pywb,
    /// OpenWayback, …): a URL template where `{timestamp}` becomes the capture's 14-digit
    /// time and `{url}` the archived URL, e.g. pywb's
    /// 'http://localhost:8080/my-coll/{timestamp}/{url}'. Without it, results link to the
    /// raw payload (/payload/KEY).
    #[arg(long, value_name = "TEMPLATE")]
    pub replay_url: Option<String>,
}

/// The block cache of a writer and of other readers (256 MiB).
const DEFAULT_BLOCK_CACHE_MIB: usize = crate::store::rocks::WRITER_BLOCK_CACHE >> 20;

pub fn run(store_path: &Path, args: Args) -> Result<ExitCode> {
    let config = Config {
        store: store_path.to_path_buf(),
        bind: args.bind,
        summary_db: args.summary_db,
        warc_dirs: args.warc_dirs,
        limits: QueryLimits {
            max_limit: args.max_limit.max(1),
            max_window: args.max_window.max(1),
            default_page_size: args.page_size.clamp(1, args.max_limit.max(1)),
        },
        max_connections: args.max_connections,
        max_connections_per_client: args.max_connections_per_client,
        max_searches: args.max_searches.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
        }),
        max_payloads: args.max_payloads.unwrap_or_else(|| {
            2 * std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
        }),
        request_timeout: Duration::from_secs(args.request_timeout.max(1)),
        header_timeout: Duration::from_secs(args.header_timeout.max(1)),
        max_header_bytes: args.max_header_bytes,
        refresh_interval: Duration::from_secs(args.refresh.max(1)),
        access_log: AccessLog::open(&args.access_log)?,
        worker_threads: args.threads,
        block_cache_bytes: args.block_cache_mb.saturating_mul(1 << 20),
        replay_url: args.replay_url,
    };
    serve::run(config)?;
    super::done()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::search::{MAX_EXPRESSION_BYTES, MAX_FILTERS, MAX_WORDS};

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: super::Args,
    }

    #[test]
    fn the_help_states_the_query_limits() {
        let help = Cli::command().render_long_help().to_string();
        for limit in [
            format!("{MAX_WORDS} words"),
            format!("{MAX_FILTERS} site:/lang:/mime:"),
            format!("{MAX_EXPRESSION_BYTES} bytes"),
        ] {
            assert!(help.contains(&limit), "{limit} in: {help}");
        }
    }
}
