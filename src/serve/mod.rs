//! `sediment serve`: the store as a wayback index and lookup service over HTTP.
//!
//! axum routes requests; hyper serves each connection from our accept loop, which
//! bounds what one client can hold: the header block (`max_buf_size`), the time to send
//! it (`header_read_timeout`, against slow clients), the number of open connections, in
//! all and per client address, closing idle ones to make room for new ones (`gate.rs`),
//! and each request's time. Searches, the one kind of request whose cost the client
//! chooses, run a few at a time and are interrupted inside SQLite at their deadline,
//! when their client goes away and at shutdown. Store reads run on
//! blocking threads and stream their output through a bounded channel, so memory per
//! request stays bounded however large the answer. Read-only: nothing here writes to
//! the store, and WARC files are opened only through locations the store holds.

mod body;
mod cdx;
mod gate;
mod log;
mod payload;
pub mod request;
mod rows;
mod search;
pub mod store_handle;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::ServiceExt;

use crate::payload::WarcLocator;
use crate::wayback::QueryLimits;
pub use log::AccessLog;
use store_handle::StoreHandle;

/// Everything `sediment serve` is told.
#[derive(Debug, Clone)]
pub struct Config {
    pub store: PathBuf,
    pub bind: SocketAddr,
    pub summary_db: Option<PathBuf>,
    pub warc_dirs: Vec<PathBuf>,
    pub limits: QueryLimits,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    /// Most searches running at once.
    pub max_searches: usize,
    /// Most payloads being read or streamed at once.
    pub max_payloads: usize,
    pub request_timeout: Duration,
    pub header_timeout: Duration,
    pub max_header_bytes: usize,
    /// How often to look for a newer published version of the store.
    pub refresh_interval: Duration,
    pub access_log: AccessLog,
    pub worker_threads: Option<usize>,
    /// Bytes of RocksDB's block cache, one for every version of the store the server opens.
    pub block_cache_bytes: usize,
    /// Wayback URL template (`{timestamp}`, `{url}`) results and captures link to.
    pub replay_url: Option<String>,
}

/// Counters shown by `/stats`.
#[derive(Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub in_flight: AtomicU64,
    pub client_errors: AtomicU64,
    pub server_errors: AtomicU64,
    pub payload_problems: AtomicU64,
    pub timeouts: AtomicU64,
}

/// What every handler sees.
pub struct AppState {
    pub store: StoreHandle,
    pub locator: WarcLocator,
    pub summary_db: Option<PathBuf>,
    pub limits: QueryLimits,
    pub request_timeout: Duration,
    pub counters: Counters,
    pub started: Instant,
    pub log: AccessLog,
    /// Searches may start (a permit each).
    pub searches: Arc<tokio::sync::Semaphore>,
    pub max_searches: usize,
    /// Payloads may be read (a permit each, held until the last byte is sent).
    pub payloads: Arc<tokio::sync::Semaphore>,
    pub max_payloads: usize,
    /// Set at shutdown: long work still running stops.
    pub stopping: Arc<AtomicBool>,
    pub gate: Arc<gate::Gate>,
    /// `--replay-url`, checked.
    pub replay_url: Option<String>,
    /// The store's path, for the commands the landing page shows.
    pub store_path: PathBuf,
    /// Summary database connections and counts kept between requests.
    pub search_cache: search::Cache,
}

pub type Shared = Arc<AppState>;

impl AppState {
    /// A problem the operator should see (a WARC that does not hold what the store says).
    pub fn problem(&self, message: &str) {
        self.counters
            .payload_problems
            .fetch_add(1, Ordering::Relaxed);
        crate::diag!("sediment serve: problem: {message}");
    }
}

/// A 503 that tells the client when to try again.
pub fn busy(message: impl Into<String>) -> Response {
    let mut response = error(StatusCode::SERVICE_UNAVAILABLE, message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    response
}

/// Whether a handler may read `store` right on the connection's task: only the embedded
/// store, whose reads are bounded local ones. A remote backend's reads block on the
/// network (and on a runtime of their own, which cannot start inside this one), which a
/// connection task must never do: they go to a blocking thread.
fn reads_in_place(store: &crate::store::Store) -> bool {
    store.backend().as_rocks().is_some()
}

/// A plain-text error response; the message tells the client what is wrong.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let mut text = message.into();
    text.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

fn router(state: Shared) -> Router {
    Router::new()
        .route("/", get(search::index))
        .route("/cdx", get(cdx::cdx).post(cdx::refuse_write))
        .route("/captures", get(search::captures))
        .route("/captures/{key}", get(cdx::captures_of_digest))
        .route("/sha1/{key}", get(rows::row))
        .route("/payload/{key}", get(payload::payload))
        .route("/search", get(search::search))
        .route("/health", get(rows::health))
        .route("/stats", get(rows::stats))
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such endpoint: try /cdx?url=…, /sha1/KEY, /payload/KEY, /captures/KEY, \
                 /captures?url=…, /search?q=…, /health, /stats",
            )
        })
        .layer(middleware::from_fn_with_state(
            state.clone(),
            around_request,
        ))
        .with_state(state)
}

/// Counts, times out and logs every request.
async fn around_request(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let peer = request
        .extensions()
        .get::<Peer>()
        .map_or_else(|| "-".to_string(), |p| p.0.to_string());
    let line = format!(
        "{} {} {:?}",
        request.method(),
        request.uri(),
        request.version()
    );
    let counters = &state.counters;
    counters.requests.fetch_add(1, Ordering::Relaxed);
    counters.in_flight.fetch_add(1, Ordering::Relaxed);
    let checked = request::check_headers(request.headers().iter().map(|(k, _)| k.as_str()));
    let response = if let Err(message) = checked {
        error(StatusCode::BAD_REQUEST, message)
    } else if request.method() == axum::http::Method::OPTIONS && request.uri() == "*" {
        (
            StatusCode::NO_CONTENT,
            [(header::ALLOW, "GET, HEAD, OPTIONS")],
        )
            .into_response()
    } else {
        // A timeout drops the handler, which stops whatever it started (searches included).
        match tokio::time::timeout(state.request_timeout, next.run(request)).await {
            Ok(response) => response,
            Err(_) => {
                counters.timeouts.fetch_add(1, Ordering::Relaxed);
                busy(format!(
                    "the request took longer than {} s",
                    state.request_timeout.as_secs()
                ))
            }
        }
    };
    counters.in_flight.fetch_sub(1, Ordering::Relaxed);
    let status = response.status();
    if status.is_client_error() {
        counters.client_errors.fetch_add(1, Ordering::Relaxed);
    } else if status.is_server_error() {
        counters.server_errors.fetch_add(1, Ordering::Relaxed);
    }
    // Streamed bodies have no length yet; hyper adds it to the others after this point.
    let bytes = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| {
            axum::body::HttpBody::size_hint(response.body())
                .exact()
                .map(|n| n.to_string())
        })
        .unwrap_or_else(|| "-".to_string());
    state
        .log
        .request(&peer, &line, status.as_u16(), &bytes, started.elapsed());
    response
}

/// The client's address, put into each request by the accept loop.
#[derive(Clone, Copy)]
struct Peer(SocketAddr);

/// Worker threads a core when none are asked for. Small answers (`/cdx`, `/sha1`) are read
/// on the connection's task, so a read that misses the page cache holds its worker while
/// the disk answers; with one worker a core, the cores of a server whose store is larger
/// than its memory sat idle while connections queued behind that read (issue 36, 10 M
/// captures in a memory cap of a quarter of the store, 16 clients: `/sha1` p99 17.8 and
/// 21.7 ms with 2 workers, 8.5 and 6.8 ms with 8).
const WORKERS_PER_CORE: usize = 4;

/// Runs the server until SIGINT or SIGTERM.
pub fn run(config: Config) -> Result<()> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    let workers = config.worker_threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get()) * WORKERS_PER_CORE
    });
    runtime.worker_threads(workers.max(1));
    let runtime = runtime.build().context("cannot start the async runtime")?;
    let served = runtime.block_on(serve(config));
    // Work that ignored the stop (a store read in a blocking thread) does not hold up the
    // exit: dropping the runtime would wait for it.
    runtime.shutdown_timeout(Duration::from_millis(300));
    served
}

/// How long requests in progress get to finish after SIGTERM or Ctrl-C.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

async fn serve(config: Config) -> Result<()> {
    if let Some(template) = &config.replay_url {
        search::check_replay_template(template).map_err(anyhow::Error::msg)?;
    }
    if let Some(db) = &config.summary_db {
        // Fail at start, not at the first search, when the database is not usable.
        crate::search::open(db)?;
    }
    let store_path = config.store.clone();
    let block_cache_bytes = config.block_cache_bytes;
    let store =
        tokio::task::spawn_blocking(move || StoreHandle::open(&store_path, block_cache_bytes))
            .await??;
    let state = Arc::new(AppState {
        store,
        locator: WarcLocator::new(&config.warc_dirs),
        summary_db: config.summary_db.clone(),
        limits: config.limits,
        request_timeout: config.request_timeout,
        counters: Counters::default(),
        started: Instant::now(),
        log: config.access_log.clone(),
        searches: Arc::new(tokio::sync::Semaphore::new(config.max_searches.max(1))),
        max_searches: config.max_searches.max(1),
        payloads: Arc::new(tokio::sync::Semaphore::new(config.max_payloads.max(1))),
        max_payloads: config.max_payloads.max(1),
        stopping: Arc::new(AtomicBool::new(false)),
        gate: gate::Gate::new(config.max_connections, config.max_connections_per_client),
        replay_url: config.replay_url.clone(),
        store_path: search::store_path(&config.store),
        search_cache: search::Cache::default(),
    });
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let address = listener.local_addr()?;
    crate::diag!(
        "sediment serve: listening on http://{address}/ (store {})",
        config.store.display()
    );
    tokio::spawn(refresh_store(state.clone(), config.refresh_interval));
    tokio::spawn(flush_access_log(state.log.clone()));

    let app = router(state.clone());
    let gate = state.gate.clone();
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // Half-close: a connection whose reading side ends (the client's, or ours at a bad
    // request line) still gets the answers to the requests before that.
    http.timer(TokioTimer::new())
        .half_close(true)
        .max_buf_size(config.max_header_bytes.max(8192));
    let header_timeout = config.header_timeout;
    let line_limit = config.max_header_bytes.max(8192);
    let mut shutdown = std::pin::pin!(shutdown_signal());
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    crate::diag!("sediment serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Some(ticket) = gate.admit(peer.ip()) else {
            // Every slot this client could take is answering a request. The socket is
            // fresh, so a short answer fits its send buffer: no waiting here.
            let _ = stream.try_write(&request::plain_answer(
                "503 Service Unavailable",
                "too many connections busy with requests; try again in a moment",
                "retry-after: 1\r\n",
            ));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let http = http.clone();
        let graceful = graceful.watcher();
        tokio::spawn(async move {
            let slot = ticket.slot.clone();
            let serve = async move {
                // Every request line is checked on the way in, so a malformed one gets a
                // message.
                let (watched, handle) = request::Watched::new(stream, line_limit);
                let mut http = http;
                http.header_read_timeout(header_timeout);
                let slot = slot.clone();
                let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
                    request.extensions_mut().insert(Peer(peer));
                    let busy = slot.busy();
                    let answer = app.clone().oneshot(request.map(axum::body::Body::new));
                    async move {
                        let response = answer.await?;
                        // The slot stays busy until the whole body has been sent.
                        Ok::<_, std::convert::Infallible>(
                            response.map(|body| Busy { body, _busy: busy }),
                        )
                    }
                });
                let connection = http.serve_connection(TokioIo::new(watched), service);
                // Errors here are clients going away or timing out; the access log has
                // the rest.
                let _ = graceful.watch(connection).await;
                handle.answer_refused().await;
            };
            tokio::select! {
                _ = serve => {}
                // Closed to make room for a new connection.
                _ = ticket.slot.evicted.notified() => {}
            }
            drop(ticket);
        });
    }
    drop(listener);
    crate::diag!("sediment serve: shutting down, finishing requests in progress");
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(SHUTDOWN_GRACE.min(config.request_timeout)) => {
            crate::diag!(
                "sediment serve: requests still running after {} ms; stopping them",
                SHUTDOWN_GRACE.min(config.request_timeout).as_millis()
            );
        }
    }
    state.stopping.store(true, Ordering::Relaxed);
    state.log.flush();
    crate::diag!(
        "sediment serve: stopped after {} requests",
        state.counters.requests.load(Ordering::Relaxed)
    );
    Ok(())
}

/// A response body that keeps its connection marked busy until it is sent (or dropped).
struct Busy {
    body: axum::body::Body,
    _busy: gate::BusyGuard,
}

impl hyper::body::Body for Busy {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::Body::size_hint(&self.body)
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return interrupt.await.unwrap_or(()),
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// Writes buffered access-log lines once a second.
async fn flush_access_log(log: AccessLog) {
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    loop {
        ticker.tick().await;
        log.flush();
    }
}

/// Looks for a newer published version of the store and swaps it in.
async fn refresh_store(state: Shared, every: Duration) {
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let state = state.clone();
        let refreshed = tokio::task::spawn_blocking(move || state.store.refresh()).await;
        match refreshed {
            Ok(Ok(Some(version))) => {
                crate::diag!("sediment serve: now serving version {version} of the store")
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                crate::diag!("sediment serve: cannot open the newer store version: {e:#}")
            }
            Err(e) => crate::diag!("sediment serve: store refresh failed: {e}"),
        }
    }
}

/// Everything a request's bytes go through before a handler does any work, for the HTTP
/// fuzz target: the request framer (every request line of a connection), the request
/// line's check, the header check, URI parsing, and the parameter parsing of every
/// endpoint (each tried on the query string, whatever the path). Must never panic, and must stay bounded in time and memory.
#[doc(hidden)]
pub fn parse_request_for_fuzzing(data: &[u8]) {
    // The framer passes on a prefix of what it is given, the same however it is split.
    let mut whole = Vec::new();
    let refused = request::RequestFramer::new(8192).feed(data, &mut whole);
    assert!(data.starts_with(&whole));
    let at = usize::from(data.first().copied().unwrap_or(0)).min(data.len());
    let (mut split, mut framer) = (Vec::new(), request::RequestFramer::new(8192));
    let split_refused = framer
        .feed(&data[..at], &mut split)
        .and_then(|()| framer.feed(&data[at..], &mut split));
    assert_eq!((whole, refused), (split, split_refused));
    let mut lines = data
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let line = lines.next().unwrap_or_default();
    let mut headers = axum::http::HeaderMap::new();
    let mut names = Vec::new();
    for header_line in lines.take_while(|l| !l.is_empty()) {
        let Some(colon) = memchr::memchr(b':', header_line) else {
            continue;
        };
        let (name, value) = (&header_line[..colon], header_line[colon + 1..].trim_ascii());
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(name),
            header::HeaderValue::from_bytes(value),
        ) {
            names.push(name.clone());
            headers.append(name, value);
        }
    }
    let _ = request::check_headers(names.iter().map(|n| n.as_str()));
    if request::check_request_line(line).is_err() {
        return;
    }
    let Some(target) = line.split(|&b| b == b' ').nth(1) else {
        return;
    };
    let Ok(uri) = axum::http::Uri::try_from(target) else {
        return;
    };
    if let Some(key) = uri.path().rsplit('/').next() {
        let _ = cdx::key_from_path(key);
    }
    let raw = uri.query();
    let params: Vec<(String, String)> = url::form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let pairs = || params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let limits = QueryLimits::default();
    let _ = cdx::check_fields(&params);
    let _ = crate::wayback::CaptureQuery::from_params(pairs(), &limits);
    let everything = crate::wayback::query::KeyRange {
        start: Vec::new(),
        end: vec![0xFF],
    };
    let _ = crate::wayback::CaptureQuery::over_range(pairs(), &limits, everything);
    if let Ok(search) = search::params(raw, &headers)
        && let Ok(query) = crate::search::Query::parse(&search.q)
    {
        assert!(query.fts_expression().len() <= crate::search::MAX_EXPRESSION_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::parse_request_for_fuzzing;

    /// The fuzz target's entry point on requests to every endpoint, and on those requests
    /// with bytes changed (a few thousand, from a fixed seed): no panic.
    #[test]
    fn request_parsing_survives_mangled_requests() {
        let seeds: [&[u8]; 6] = [
            b"GET /cdx?url=a.com/*&limit=-3&fl=timestamp,url&filter=!status:404&collapse=digest&output=json HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /cdx?url=a.com&closest=2021&sort=closest&showNumPages=true&pageSize=5 HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            b"GET /captures/sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA?output=cdxj HTTP/1.1\r\n\r\n",
            b"GET /search?q=lake+%22flood+layer%22+-mud+site:a.org+lang:de+sedi*&limit=5&format=html HTTP/1.1\r\nAccept: text/html\r\n\r\n",
            b"GET /search?q=web%00archive HTTP/1.0\r\n\r\n",
            b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
        ];
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for seed in seeds {
            parse_request_for_fuzzing(seed);
            for _ in 0..500 {
                let mut bytes = seed.to_vec();
                for _ in 0..(next() % 4 + 1) {
                    let at = (next() as usize) % bytes.len();
                    bytes[at] = match next() % 4 {
                        0 => b'%',
                        1 => b'&',
                        2 => b',',
                        _ => next() as u8,
                    };
                }
                parse_request_for_fuzzing(&bytes);
            }
        }
    }
}
