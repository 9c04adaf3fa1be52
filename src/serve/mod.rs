//! `sediment serve`: the store as a wayback index and lookup service over HTTP.
//!
//! axum routes requests; hyper serves each connection from our accept loop, which
//! bounds what one client can hold: the header block (`max_buf_size`), the time to send
//! it (`header_read_timeout`, against slow clients), the number of open connections (a
//! semaphore taken before `accept`), and each request's time. Store reads run on
//! blocking threads and stream their output through a bounded channel, so memory per
//! request stays bounded however large the answer. Read-only: nothing here writes to
//! the store, and WARC files are opened only through locations the store holds.

mod body;
mod cdx;
mod log;
mod payload;
mod rows;
mod search;
pub mod store_handle;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
    pub request_timeout: Duration,
    pub header_timeout: Duration,
    pub max_header_bytes: usize,
    /// How often to look for a newer published version of the store.
    pub refresh_interval: Duration,
    pub access_log: AccessLog,
    pub worker_threads: Option<usize>,
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
}

pub type Shared = Arc<AppState>;

impl AppState {
    /// A problem the operator should see (a WARC that does not hold what the store says).
    pub fn problem(&self, message: &str) {
        self.counters
            .payload_problems
            .fetch_add(1, Ordering::Relaxed);
        eprintln!("sediment serve: problem: {message}");
    }
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
        .route("/cdx", get(cdx::cdx))
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
                 /search?q=…, /health, /stats",
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
    let response = match tokio::time::timeout(state.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            counters.timeouts.fetch_add(1, Ordering::Relaxed);
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the request took longer than {} s",
                    state.request_timeout.as_secs()
                ),
            )
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

/// Runs the server until SIGINT or SIGTERM.
pub fn run(config: Config) -> Result<()> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(n) = config.worker_threads {
        runtime.worker_threads(n.max(1));
    }
    runtime
        .build()
        .context("cannot start the async runtime")?
        .block_on(serve(config))
}

async fn serve(config: Config) -> Result<()> {
    if let Some(db) = &config.summary_db {
        // Fail at start, not at the first search, when the database is not usable.
        crate::search::open(db)?;
    }
    let store_path = config.store.clone();
    let store = tokio::task::spawn_blocking(move || StoreHandle::open(&store_path)).await??;
    let state = Arc::new(AppState {
        store,
        locator: WarcLocator::new(&config.warc_dirs),
        summary_db: config.summary_db.clone(),
        limits: config.limits,
        request_timeout: config.request_timeout,
        counters: Counters::default(),
        started: Instant::now(),
        log: config.access_log.clone(),
    });
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let address = listener.local_addr()?;
    eprintln!(
        "sediment serve: listening on http://{address}/ (store {})",
        config.store.display()
    );
    tokio::spawn(refresh_store(state.clone(), config.refresh_interval));
    tokio::spawn(flush_access_log(state.log.clone()));

    let app = router(state.clone());
    let connections = Arc::new(tokio::sync::Semaphore::new(config.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .max_buf_size(config.max_header_bytes.max(8192));
    let mut shutdown = std::pin::pin!(shutdown_signal());
    loop {
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => permit?,
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    eprintln!("sediment serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
            request.extensions_mut().insert(Peer(peer));
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // Errors here are clients going away or timing out; the access log has the rest.
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    eprintln!("sediment serve: shutting down, finishing requests in progress");
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(config.request_timeout) => {
            eprintln!("sediment serve: requests still running after {} s; stopping", config.request_timeout.as_secs());
        }
    }
    state.log.flush();
    eprintln!(
        "sediment serve: stopped after {} requests",
        state.counters.requests.load(Ordering::Relaxed)
    );
    Ok(())
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
                eprintln!("sediment serve: now serving version {version} of the store")
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => eprintln!("sediment serve: cannot open the newer store version: {e:#}"),
            Err(e) => eprintln!("sediment serve: store refresh failed: {e}"),
        }
    }
}
