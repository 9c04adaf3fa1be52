//! The pages for people, over the summary database given with `--summary-db`:
//!
//! * `/`: what the store holds (counts, capture dates, largest hosts) and a search box;
//!   without a summary database, the commands that make one;
//! * `/search?q=`: full-text search, as JSON (the fields of `sediment search --json`, the
//!   payload key, the capture's timestamp and replay link, the total and the facets) or as
//!   an HTML page with a count, facets by site, type and year, and pages of results;
//! * `/captures?url=`: the captures of one URL as an HTML table, each linked to its
//!   payload and (with `--replay-url`) to its replay.
//!
//! Each result links to the archived page in a replay when the server is given a wayback
//! URL template (`--replay-url 'http://host:8080/coll/{timestamp}/{url}'`, as pywb and
//! OpenWayback take them), to the raw payload otherwise.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use rusqlite::Connection;
use serde::Serialize;

use super::{Shared, busy, error};
use crate::capture::{Capture, CaptureKind};
use crate::search::facets::{self, COUNT_CAP, FacetValue, Holdings, Overview};
use crate::search::{
    DocValues, Hit, MATCH_END, MATCH_START, Query, Stop, Stopped, open, search_page,
    search_page_with_overview,
};
use crate::store::Store;
use crate::wayback::query::{MatchType, key_range};
use crate::wayback::{CaptureSource, StoreCaptures};

const DEFAULT_RESULTS: usize = 10;
const MAX_RESULTS: usize = 100;
/// How long a search waits for one of the `--max-searches` places before a 503.
pub(super) const QUEUE_WAIT: Duration = Duration::from_secs(1);
/// Most captures listed on one `/captures?url=` page (the rest through `/cdx`).
const MAX_CAPTURES_SHOWN: usize = 1000;
/// Most captures of one URL looked at to pick a result's payload: a URL captured every
/// hour for years must not cost a search its time.
const PAYLOAD_SCAN: usize = 10_000;
/// Totals and facets kept for the next pages of recent queries.
const OVERVIEWS_KEPT: usize = 64;
/// How long the landing page waits for counts being made.
const LANDING_WAIT: Duration = Duration::from_secs(3);
/// Open database connections kept for the next searches (their prepared statements too).
const IDLE_CONNECTIONS: usize = 16;

/// What the search pages keep between requests: open connections to the summary
/// database, and the landing page's counts (a scan of the database each).
#[derive(Default)]
pub struct Cache {
    idle: Mutex<Vec<(FileVersion, Connection)>>,
    holdings: Mutex<Option<(FileVersion, Arc<Holdings>)>>,
    /// A job is counting the landing page's holdings.
    counting: AtomicBool,
    /// The totals and facets of the last queries, newest last: the next page of a query
    /// costs only its ranking.
    overviews: Mutex<std::collections::VecDeque<(FileVersion, String, Overview)>>,
    /// What the ranking reads per match, for one version of the database
    /// ([`DocValues`]: the same results, without four lookups a match).
    docs: Mutex<Option<(FileVersion, Arc<DocValues>)>>,
    /// A job is loading them.
    loading_docs: AtomicBool,
}

/// Which file (and which state of it) a connection or count belongs to: a database
/// replaced by a new one is opened anew; one written since is counted anew.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileVersion {
    identity: (u64, u64),
    changed: Vec<(Option<SystemTime>, u64)>,
}

fn file_version(db: &Path) -> FileVersion {
    let stat = |path: &Path| std::fs::metadata(path).ok();
    let main = stat(db);
    #[cfg(unix)]
    let identity = {
        use std::os::unix::fs::MetadataExt;
        main.as_ref().map_or((0, 0), |m| (m.dev(), m.ino()))
    };
    #[cfg(not(unix))]
    let identity = (0, 0);
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let changed = [main, stat(Path::new(&wal))]
        .iter()
        .map(|m| {
            m.as_ref()
                .map_or((None, 0), |m| (m.modified().ok(), m.len()))
        })
        .collect();
    FileVersion { identity, changed }
}

impl Cache {
    fn connection(&self, db: &Path) -> anyhow::Result<(FileVersion, Connection)> {
        let version = file_version(db);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        while let Some((of, conn)) = idle.pop() {
            if of.identity == version.identity {
                return Ok((of, conn));
            }
        }
        drop(idle);
        Ok((version, open(db)?))
    }

    fn overview(&self, version: &FileVersion, query: &str) -> Option<Overview> {
        let kept = self.overviews.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter()
            .rev()
            .find(|(of, q, _)| of == version && q == query)
            .map(|(_, _, overview)| overview.clone())
    }

    fn keep_overview(&self, version: FileVersion, query: String, overview: &Overview) {
        let mut kept = self.overviews.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|(of, q, _)| !(*of == version && *q == query));
        if kept.len() == OVERVIEWS_KEPT {
            kept.pop_front();
        }
        kept.push_back((version, query, overview.clone()));
    }

    /// The doc values of `version` of the database when they are loaded; otherwise starts
    /// a job loading them (one at a time) and returns `None`: searches go on without them
    /// (slower, the same results) instead of waiting for a scan of the database. As with
    /// the kept totals, a search whose read sees a write made after its version was taken
    /// may list or leave out the generations that write changed; the next search loads
    /// the values of the new version.
    fn doc_values(
        &self,
        state: &Shared,
        db: &Path,
        version: &FileVersion,
    ) -> Option<Arc<DocValues>> {
        if let Some((of, docs)) = &*self.docs.lock().unwrap_or_else(|e| e.into_inner())
            && of == version
        {
            return Some(docs.clone());
        }
        if !self.loading_docs.swap(true, Ordering::SeqCst) {
            let (state, db, version) = (state.clone(), db.to_path_buf(), version.clone());
            std::thread::spawn(move || {
                let cache = &state.search_cache;
                let stop = Stop {
                    deadline: None,
                    cancel: vec![state.stopping.clone()],
                };
                let started = std::time::Instant::now();
                let loaded = cache.connection(&db).and_then(|(of, mut conn)| {
                    let docs = DocValues::load(&mut conn, &stop)?;
                    cache.give_back(of, conn);
                    Ok(docs)
                });
                match loaded {
                    Ok(docs) => {
                        crate::diag!(
                            "sediment serve: search doc values loaded from {}: {} searchable \
                             documents in {} ms",
                            db.display(),
                            docs.len(),
                            started.elapsed().as_millis()
                        );
                        *cache.docs.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some((version, Arc::new(docs)));
                    }
                    Err(e) => crate::diag!(
                        "sediment serve: cannot load the search's doc values from {}: {e:#}",
                        db.display()
                    ),
                }
                cache.loading_docs.store(false, Ordering::SeqCst);
            });
        }
        None
    }

    /// A connection whose work ended without an error goes back for the next search.
    fn give_back(&self, version: FileVersion, conn: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE_CONNECTIONS {
            idle.push((version, conn));
        }
    }
}

/// Checks a `--replay-url` template: an absolute http(s) URL or a path on this host, with
/// `{url}` where the archived URL goes and optionally `{timestamp}` (14 digits).
pub fn check_replay_template(template: &str) -> std::result::Result<(), String> {
    let lower = template.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with('/')) {
        return Err(format!(
            "--replay-url {template:?} must start with http://, https:// or / \
             (e.g. 'http://localhost:8080/my-coll/{{timestamp}}/{{url}}')"
        ));
    }
    if !template.contains("{url}") {
        return Err(format!(
            "--replay-url {template:?} has no {{url}}: write where the archived URL goes, \
             e.g. 'http://localhost:8080/my-coll/{{timestamp}}/{{url}}'"
        ));
    }
    if template
        .chars()
        .any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!(
            "--replay-url {template:?} holds white space or a control character"
        ));
    }
    Ok(())
}

/// The replay link of a capture: the template with its timestamp and URL filled in.
fn replay_link(template: &str, timestamp: &str, url: &str) -> String {
    template
        .replace("{timestamp}", timestamp)
        .replace("{url}", url)
}

#[derive(Serialize)]
struct Result {
    #[serde(flatten)]
    hit: Hit,
    /// Base32 key of the payload captured closest to the end of this version, for
    /// `/payload/KEY`.
    payload: Option<String>,
    /// That capture's time, 14 digits.
    timestamp: Option<String>,
    /// The capture in the replay named by `--replay-url`.
    replay: Option<String>,
    /// `/captures?url=…`: every capture of the URL.
    captures_page: String,
}

pub(super) struct Params {
    pub q: String,
    limit: usize,
    offset: usize,
    html: bool,
}

pub(super) fn params(
    raw: Option<&str>,
    headers: &HeaderMap,
) -> std::result::Result<Params, String> {
    let mut params = Params {
        q: String::new(),
        limit: DEFAULT_RESULTS,
        offset: 0,
        html: wants_html(headers),
    };
    for (name, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        match &*name {
            "q" => params.q = value.into_owned(),
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_RESULTS).contains(&n) => params.limit = n,
                _ => return Err(format!("limit must be between 1 and {MAX_RESULTS}")),
            },
            "offset" => match value.parse::<usize>() {
                Ok(n) if n <= COUNT_CAP => params.offset = n,
                _ => {
                    return Err(format!(
                        "offset must be between 0 and {COUNT_CAP} (results beyond the first \
                         {COUNT_CAP} are not paged to: narrow the query instead)"
                    ));
                }
            },
            "format" => match &*value {
                "html" => params.html = true,
                "json" => params.html = false,
                other => return Err(format!("format {other:?} is not html or json")),
            },
            _ => {}
        }
    }
    Ok(params)
}

fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// Runs `work` on a blocking thread once one of the `--max-searches` places is free,
/// stopped at the request's deadline, when the client goes away, and at shutdown.
async fn limited<T: Send + 'static>(
    state: &Shared,
    work: impl FnOnce(Stop) -> anyhow::Result<T> + Send + 'static,
) -> std::result::Result<T, Response> {
    let deadline = Instant::now() + state.request_timeout;
    let permit =
        match tokio::time::timeout(QUEUE_WAIT, state.searches.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                return Err(busy(format!(
                    "{} searches are running already (--max-searches); try again in a moment",
                    state.max_searches
                )));
            }
        };
    // Dropped with this handler (a timeout, the client gone): the work stops in SQLite.
    let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
    let stop = Stop {
        deadline: Some(deadline),
        cancel: vec![cancel.0.clone(), state.stopping.clone()],
    };
    let timeout = state.request_timeout;
    let done = tokio::task::spawn_blocking(move || {
        // Held until the work is done, not just until the client stops waiting for it.
        let _permit = permit;
        work(stop)
    })
    .await;
    drop(cancel);
    match done {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) if e.is::<Stopped>() => Err(busy(format!(
            "the search took longer than {} s: fewer or rarer words may help",
            timeout.as_secs()
        ))),
        Ok(Err(e)) => Err(error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))),
        Err(e) => Err(error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}

/// `/`: the landing page.
/// `/`: the landing page. Its counts scan the whole database, so they are made once per
/// version of the file, by one background job at a time (stopped only at shutdown, so a
/// large database is counted however long it takes); the page waits a little for them,
/// else shows the last ones made, or says they are being made.
pub async fn index(State(state): State<Shared>) -> Response {
    let Some(db) = state.summary_db.clone() else {
        return Html(no_summary_page(&state.store_path)).into_response();
    };
    let version = file_version(&db);
    let (current, stale) = match &*state
        .search_cache
        .holdings
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    {
        Some((of, holdings)) if *of == version => (Some(holdings.clone()), None),
        Some((_, holdings)) => (None, Some(holdings.clone())),
        None => (None, None),
    };
    if let Some(holdings) = current {
        return Html(landing_page(Some(&holdings))).into_response();
    }
    let mut fresh = None;
    if !state.search_cache.counting.swap(true, Ordering::SeqCst) {
        let worker = state.clone();
        let job = tokio::task::spawn_blocking(move || {
            let cache = &worker.search_cache;
            let counted = cache.connection(&db).and_then(|(of, mut conn)| {
                let stop = Stop {
                    deadline: None,
                    cancel: vec![worker.stopping.clone()],
                };
                let holdings = Arc::new(facets::holdings(&mut conn, &stop)?);
                cache.give_back(of, conn);
                Ok(holdings)
            });
            match &counted {
                Ok(holdings) => {
                    *cache.holdings.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some((version, holdings.clone()));
                }
                Err(e) => crate::diag!(
                    "sediment serve: cannot count what {} holds: {e:#}",
                    db.display()
                ),
            }
            cache.counting.store(false, Ordering::SeqCst);
            counted.ok()
        });
        let wait = LANDING_WAIT.min(state.request_timeout);
        fresh = tokio::time::timeout(wait, job)
            .await
            .ok()
            .and_then(|joined| joined.ok())
            .flatten();
    }
    Html(landing_page(fresh.or(stale).as_deref())).into_response()
}

pub async fn search(
    State(state): State<Shared>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    let params = match params(raw.as_deref(), &headers) {
        Ok(p) => p,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let Some(db) = state.summary_db.clone() else {
        return error(
            StatusCode::NOT_FOUND,
            "this server has no summary database: start it with --summary-db FILE \
             (made by `sediment project summary`)",
        );
    };
    if params.q.trim().is_empty() {
        return if params.html {
            Html(page(&params, None, None, &[])).into_response()
        } else {
            error(StatusCode::BAD_REQUEST, "q is required: /search?q=words")
        };
    }
    let query = match Query::parse(&params.q) {
        Ok(q) => q,
        Err(e) if params.html => {
            return (
                StatusCode::BAD_REQUEST,
                Html(page(&params, Some(&e.to_string()), None, &[])),
            )
                .into_response();
        }
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let (offset, limit) = (params.offset, params.limit);
    let worker = state.clone();
    let found = limited(&state, move |stop| {
        let cache = &worker.search_cache;
        let (version, mut conn) = cache.connection(&db)?;
        // The parsed query, so that spellings of one query share their counts.
        let key = format!("{query:?}");
        let current = file_version(&db);
        let docs = cache.doc_values(&worker, &db, &current);
        let docs = docs.as_deref();
        let (hits, overview) = match cache.overview(&current, &key) {
            Some(overview) => (
                search_page(&mut conn, docs, &query, offset, limit, &stop)?,
                overview,
            ),
            None => {
                let (hits, overview) =
                    search_page_with_overview(&mut conn, docs, &query, offset, limit, &stop)?;
                cache.keep_overview(current, key, &overview);
                (hits, overview)
            }
        };
        cache.give_back(version, conn);
        let store = worker.store.get();
        let mut results = Vec::with_capacity(hits.len());
        for hit in hits {
            if stop.cancel.iter().any(|c| c.load(Ordering::Relaxed)) {
                return Err(Stopped("was cancelled").into());
            }
            let capture = nearest_capture(&store, &hit.url, hit.last_seen);
            let replay = match (&worker.replay_url, &capture) {
                (Some(template), Some((ts, _))) => Some(replay_link(template, ts, &hit.url)),
                _ => None,
            };
            results.push(Result {
                payload: capture.as_ref().map(|(_, key)| key.to_base32()),
                timestamp: capture.map(|(ts, _)| ts),
                replay,
                captures_page: format!("/captures?url={}", encode(&hit.url)),
                hit,
            });
        }
        Ok((overview, results))
    })
    .await;
    let (overview, results) = match found {
        Ok(found) => found,
        Err(response) => return response,
    };
    if params.html {
        Html(page(&params, None, Some(&overview), &results)).into_response()
    } else {
        let link = |offset: usize| search_link(&params.q, offset, params.limit, "json");
        let shown = params.offset + results.len();
        let next = has_next(&params, &overview, results.len()).then(|| link(shown));
        let previous =
            (params.offset > 0).then(|| link(params.offset.saturating_sub(params.limit)));
        axum::Json(serde_json::json!({
            "query": params.q,
            "offset": params.offset,
            "limit": params.limit,
            "total": overview.total,
            "total_exact": overview.total_exact,
            "facets": overview.facets,
            "results": results,
            "next": next,
            "previous": previous,
        }))
        .into_response()
    }
}

fn has_next(params: &Params, overview: &Overview, shown: usize) -> bool {
    let end = params.offset + shown;
    shown == params.limit && (end as u64) < overview.total && end <= COUNT_CAP
}

struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The capture of `url` nearest to `seconds` (unix time) that has a payload: its
/// timestamp and payload key.
fn nearest_capture(
    store: &Store,
    url: &str,
    seconds: i64,
) -> Option<(String, crate::key::Sha1Key)> {
    let range = key_range(url, MatchType::Exact);
    StoreCaptures::new(store)
        .scan(&range, false)
        .take(PAYLOAD_SCAN)
        .filter_map(|c| c.ok())
        .filter(|c| c.kind != CaptureKind::Revisit && c.status == Some(200))
        .filter_map(|c| {
            let distance = (crate::wayback::query::timestamp_seconds(&c.ts) - seconds).abs();
            Some((distance, c.ts, c.digest?))
        })
        .min_by_key(|(distance, _, _)| *distance)
        .map(|(_, ts, key)| (ts, key))
}

/// `/captures?url=`: every capture of one URL (the first [`MAX_CAPTURES_SHOWN`]).
pub async fn captures(State(state): State<Shared>, RawQuery(raw): RawQuery) -> Response {
    let url = url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes())
        .find(|(name, _)| name == "url")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    if url.trim().is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "url is required: /captures?url=http://example.org/page",
        );
    }
    let store = state.store.get();
    let wanted = url.clone();
    let read = tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<Capture>> {
        let range = key_range(&wanted, MatchType::Exact);
        StoreCaptures::new(&store)
            .scan(&range, false)
            .take(MAX_CAPTURES_SHOWN + 1)
            .collect()
    });
    let captures = match tokio::time::timeout(state.request_timeout, read).await {
        Ok(Ok(Ok(captures))) => captures,
        Ok(Ok(Err(e))) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        Ok(Err(e)) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(_) => return busy("reading the captures took too long"),
    };
    let status = if captures.is_empty() {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::OK
    };
    (
        status,
        Html(captures_page(&url, &captures, state.replay_url.as_deref())),
    )
        .into_response()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A snippet with its match marks as `<mark>`, everything else escaped.
fn snippet_html(snippet: &str) -> String {
    escape(snippet)
        .replace(MATCH_START, "<mark>")
        .replace(MATCH_END, "</mark>")
}

fn date(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| unix.to_string())
}

/// `20240131120000` as `2024-01-31 12:00:00`.
fn timestamp_date(ts: &str) -> String {
    if ts.len() == 14 && ts.bytes().all(|b| b.is_ascii_digit()) {
        format!(
            "{}-{}-{} {}:{}:{}",
            &ts[..4],
            &ts[4..6],
            &ts[6..8],
            &ts[8..10],
            &ts[10..12],
            &ts[12..]
        )
    } else {
        ts.to_string()
    }
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A link to a page of results.
fn search_link(q: &str, offset: usize, limit: usize, format: &str) -> String {
    let mut link = format!("/search?q={}&format={format}", encode(q));
    if offset > 0 {
        let _ = write!(link, "&offset={offset}");
    }
    if limit != DEFAULT_RESULTS {
        let _ = write!(link, "&limit={limit}");
    }
    link
}

/// The query with the filter `name:value` added, or taken out when it is there.
fn toggled(q: &str, name: &str, value: &str, active: bool) -> String {
    let filter = format!("{name}:{value}");
    if active {
        q.split_whitespace()
            .filter(|word| {
                !word
                    .trim_matches('"')
                    .eq_ignore_ascii_case(filter.trim_matches('"'))
                    && !word.eq_ignore_ascii_case(&format!("{name}:\"{value}\""))
            })
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        format!("{} {filter}", q.trim())
    }
}

const STYLE: &str = "body{font:16px/1.45 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.5rem}h1 a{color:inherit;text-decoration:none}\
form{display:flex;gap:.5rem;margin-bottom:1rem}input[name=q]{flex:1;font-size:1.1rem;padding:.4rem}\
button{font-size:1.1rem;padding:.4rem 1rem}.layout{display:flex;gap:2rem;align-items:flex-start}\
#facets{flex:0 0 13rem;font-size:.9rem}#facets h2{font-size:.95rem;margin:.8rem 0 .3rem}\
#facets ul{list-style:none;padding:0;margin:0}#facets li{margin:.15rem 0;word-break:break-all}\
#facets .active a{font-weight:bold}#facets .active a::before{content:'\\2715  '}\
.count{color:#666}main{flex:1;min-width:0}ol{padding-left:1.2rem}li.result{margin-bottom:1.2rem}\
.url{color:#006621;font-size:.9rem;word-break:break-all}.meta{color:#666;font-size:.85rem}\
mark{background:#fff2a8}.error{color:#a00}#pages{display:flex;gap:1rem;align-items:center;margin:1rem 0}\
table{border-collapse:collapse;font-size:.9rem}td,th{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:left}\
td.digest{font-family:monospace;font-size:.8rem}pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}";

fn head(html: &mut String, title: &str) {
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\
         <h1><a href=\"/\">Sediment</a></h1>",
        escape(title)
    );
}

fn search_form(html: &mut String, q: &str, autofocus: bool) {
    let _ = write!(
        html,
        "<form id=\"search\" action=\"/search\" method=\"get\">\
         <input type=\"search\" name=\"q\" value=\"{}\" aria-label=\"search\" \
         placeholder=\"words, &quot;a phrase&quot;, -word, site:example.org, mime:pdf, year:2024\"{}>\
         <input type=\"hidden\" name=\"format\" value=\"html\">\
         <button type=\"submit\">Search</button></form>",
        escape(q),
        if autofocus { " autofocus" } else { "" }
    );
}

fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@=".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

fn no_summary_page(store: &Path) -> String {
    let store = shell_quote(&store.display().to_string());
    let mut html = String::with_capacity(2048);
    head(&mut html, "Sediment");
    let _ = write!(
        html,
        "<div id=\"no-summary\"><p>This server has no summary database, so there is nothing to \
         search yet. Make one from this store, then start the server with it:</p>\
         <pre id=\"make-summary\">sediment --store {store} project summary -o summary.db\n\
         sediment --store {store} serve --summary-db summary.db</pre>\
         <p>(Add <code>--warc-dir DIR</code> to the first command when the WARC files have moved \
         since they were imported.) Meanwhile the capture index answers at \
         <a href=\"/cdx?url=example.org/*&amp;limit=10\">/cdx?url=…</a> and \
         <code>/captures?url=…</code>.</p></div></body></html>",
        store = escape(&store)
    );
    html
}

fn landing_page(holdings: Option<&Holdings>) -> String {
    let mut html = String::with_capacity(4096);
    head(&mut html, "Sediment search");
    search_form(&mut html, "", true);
    let Some(h) = holdings else {
        html.push_str(
            "<p id=\"holdings-busy\">The counts of this archive are being made; \
             reload in a moment.</p></body></html>",
        );
        return html;
    };
    let range = match (h.first_capture, h.last_capture) {
        (Some(first), Some(last)) => format!(
            ", captured from <span id=\"first-capture\">{}</span> to <span id=\"last-capture\">{}</span>",
            date(first),
            date(last)
        ),
        _ => String::new(),
    };
    let _ = write!(
        html,
        "<section id=\"holdings\"><p>This archive holds <b id=\"searchable\">{}</b> searchable \
         documents from <b id=\"captures\">{}</b> captures of <b id=\"urls\">{}</b> URLs on \
         <b id=\"hosts\">{}</b> hosts{range}.</p>",
        thousands(h.searchable),
        thousands(h.captures),
        thousands(h.urls),
        thousands(h.hosts),
    );
    if !h.largest_hosts.is_empty() {
        html.push_str("<h2>Largest hosts</h2><ol id=\"largest-hosts\">");
        for FacetValue { value, count } in &h.largest_hosts {
            let _ = write!(
                html,
                "<li><a href=\"{}\">{}</a> <span class=\"count\">{}</span></li>",
                escape(&search_link(
                    &format!("site:{value}"),
                    0,
                    DEFAULT_RESULTS,
                    "html"
                )),
                escape(value),
                thousands(*count)
            );
        }
        html.push_str("</ol>");
    }
    html.push_str("</section></body></html>");
    html
}

fn facets_html(html: &mut String, params: &Params, overview: &Overview) {
    let query = Query::parse(&params.q).unwrap_or_default();
    let groups: [(&str, &str, &[FacetValue]); 3] = [
        ("site", "Site", &overview.facets.site),
        ("mime", "Type", &overview.facets.mime),
        ("year", "Year", &overview.facets.year),
    ];
    html.push_str("<aside id=\"facets\">");
    for (name, title, values) in groups {
        if values.is_empty() {
            continue;
        }
        let _ = write!(
            html,
            "<section class=\"facet\" data-facet=\"{name}\"><h2>{title}</h2><ul>"
        );
        for FacetValue { value, count } in values {
            let active = match name {
                "site" => query.sites.iter().any(|s| s.eq_ignore_ascii_case(value)),
                "mime" => query
                    .mime_types
                    .iter()
                    .any(|m| m.eq_ignore_ascii_case(value)),
                _ => query.years.iter().any(|y| y.to_string() == *value),
            };
            let link = search_link(
                &toggled(&params.q, name, value, active),
                0,
                params.limit,
                "html",
            );
            let _ = write!(
                html,
                "<li{} data-value=\"{}\"><a href=\"{}\">{}</a> <span class=\"count\">{}</span></li>",
                if active { " class=\"active\"" } else { "" },
                escape(value),
                escape(&link),
                escape(value),
                thousands(*count)
            );
        }
        html.push_str("</ul></section>");
    }
    html.push_str("</aside>");
}

fn page(
    params: &Params,
    problem: Option<&str>,
    overview: Option<&Overview>,
    results: &[Result],
) -> String {
    let q = params.q.as_str();
    let mut html = String::with_capacity(8192);
    head(
        &mut html,
        &if q.is_empty() {
            "Sediment search".to_string()
        } else {
            format!("{q} – Sediment search")
        },
    );
    search_form(&mut html, q, q.is_empty());
    if let Some(problem) = problem {
        let _ = write!(
            html,
            "<p class=\"error\" id=\"error\">{}</p>",
            escape(problem)
        );
    }
    if let Some(overview) = overview {
        let total = if overview.total_exact {
            thousands(overview.total)
        } else {
            format!("more than {}", thousands(overview.total))
        };
        let noun = if overview.total == 1 {
            "result"
        } else {
            "results"
        };
        if results.is_empty() {
            if overview.total == 0 {
                html.push_str("<p id=\"no-results\">No results.</p>");
            } else {
                let _ = write!(
                    html,
                    "<p id=\"count\" data-total=\"{}\"><span id=\"total\">{total}</span> {noun}; \
                     none on this page.</p>",
                    overview.total
                );
            }
        } else {
            let _ = write!(
                html,
                "<p id=\"count\" data-total=\"{}\"><span id=\"total\">{total}</span> {noun}, \
                 showing <span id=\"shown\">{}–{}</span></p>",
                overview.total,
                params.offset + 1,
                params.offset + results.len()
            );
        }
        html.push_str("<div class=\"layout\">");
        facets_html(&mut html, params, overview);
        html.push_str("<main>");
        if !results.is_empty() {
            let _ = write!(html, "<ol id=\"results\" start=\"{}\">", params.offset + 1);
            for result in results {
                result_html(&mut html, result);
            }
            html.push_str("</ol>");
        }
        pages_html(&mut html, params, overview, results.len());
        html.push_str("</main></div>");
    }
    html.push_str("</body></html>");
    html
}

fn result_html(html: &mut String, result: &Result) {
    let hit = &result.hit;
    let title = if hit.title.trim().is_empty() {
        &hit.url
    } else {
        &hit.title
    };
    let payload = result.payload.as_ref().map(|key| format!("/payload/{key}"));
    let link = result
        .replay
        .clone()
        .or_else(|| payload.clone())
        .unwrap_or_else(|| result.captures_page.clone());
    let seen = if hit.first_seen == hit.last_seen {
        date(hit.first_seen)
    } else {
        format!("{} – {}", date(hit.first_seen), date(hit.last_seen))
    };
    let _ = write!(
        html,
        "<li class=\"result\"><a class=\"title\" href=\"{}\">{}</a>\
         <div class=\"url\">{}</div><div class=\"snippet\">{}</div>\
         <div class=\"meta\">captured {} ({} capture{})",
        escape(&link),
        escape(title.trim()),
        escape(&hit.url),
        snippet_html(&hit.snippet),
        seen,
        hit.captures,
        if hit.captures == 1 { "" } else { "s" },
    );
    if let Some(replay) = &result.replay {
        let _ = write!(
            html,
            " · <a class=\"replay\" href=\"{}\">replay</a>",
            escape(replay)
        );
    }
    let _ = write!(
        html,
        " · <a class=\"captures\" href=\"{}\">all captures</a>",
        escape(&result.captures_page)
    );
    if let Some(payload) = &payload {
        let _ = write!(
            html,
            " · <a class=\"payload\" href=\"{}\">payload</a>",
            escape(payload)
        );
    }
    html.push_str("</div></li>");
}

fn pages_html(html: &mut String, params: &Params, overview: &Overview, shown: usize) {
    let previous = params.offset > 0;
    let next = has_next(params, overview, shown);
    if !previous && !next {
        return;
    }
    html.push_str("<nav id=\"pages\">");
    if previous {
        let _ = write!(
            html,
            "<a id=\"previous\" rel=\"prev\" href=\"{}\">← previous</a>",
            escape(&search_link(
                &params.q,
                params.offset.saturating_sub(params.limit),
                params.limit,
                "html"
            ))
        );
    }
    let pages = overview.total.div_ceil(params.limit as u64).max(1);
    let _ = write!(
        html,
        "<span id=\"page\">page {} of {}{}</span>",
        params.offset / params.limit + 1,
        thousands(pages),
        if overview.total_exact { "" } else { "+" }
    );
    if next {
        let _ = write!(
            html,
            "<a id=\"next\" rel=\"next\" href=\"{}\">next →</a>",
            escape(&search_link(
                &params.q,
                params.offset + shown,
                params.limit,
                "html"
            ))
        );
    }
    html.push_str("</nav>");
}

fn captures_page(url: &str, captures: &[Capture], replay: Option<&str>) -> String {
    let mut html = String::with_capacity(4096 + captures.len() * 400);
    head(&mut html, &format!("Captures of {url}"));
    let _ = write!(
        html,
        "<h2>Captures of <span id=\"captured-url\">{}</span></h2>",
        escape(url)
    );
    if captures.is_empty() {
        html.push_str(
            "<p id=\"no-captures\">The store holds no capture of this URL (the URL must match \
             exactly; <code>/cdx?url=…&amp;matchType=prefix</code> lists a whole path).</p>\
             </body></html>",
        );
        return html;
    }
    let shown = captures.len().min(MAX_CAPTURES_SHOWN);
    let more = if captures.len() > MAX_CAPTURES_SHOWN {
        format!(" (the first {MAX_CAPTURES_SHOWN}; all of them through /cdx)")
    } else {
        String::new()
    };
    let _ = write!(
        html,
        "<p id=\"capture-count\">{shown} capture{}{more} · <a href=\"/cdx?url={}&amp;output=json\">as JSON</a></p>\
         <table id=\"captures\"><thead><tr><th>captured</th><th>status</th><th>type</th>\
         <th>size</th><th>digest</th><th></th></tr></thead><tbody>",
        if shown == 1 { "" } else { "s" },
        escape(&encode(url)),
    );
    for capture in &captures[..shown] {
        let status = capture
            .status
            .map_or_else(|| "–".to_string(), |s| s.to_string());
        let mut kind = capture.mime.clone().unwrap_or_default();
        if capture.kind == CaptureKind::Revisit {
            kind.push_str(" (revisit)");
        }
        let size = capture.size.map_or_else(String::new, thousands);
        let digest = capture.digest.map(|d| d.to_base32());
        let mut links = String::new();
        if let Some(key) = &digest {
            let _ = write!(
                links,
                "<a class=\"payload\" href=\"/payload/{}\">payload</a>",
                escape(key)
            );
        }
        if let Some(template) = replay {
            if !links.is_empty() {
                links.push_str(" · ");
            }
            let _ = write!(
                links,
                "<a class=\"replay\" href=\"{}\">replay</a>",
                escape(&replay_link(template, &capture.ts, &capture.url))
            );
        }
        let _ = write!(
            html,
            "<tr class=\"capture\" data-timestamp=\"{}\"><td class=\"timestamp\">{}</td>\
             <td class=\"status\">{}</td><td class=\"mime\">{}</td><td class=\"size\">{}</td>\
             <td class=\"digest\">{}</td><td class=\"links\">{links}</td></tr>",
            escape(&capture.ts),
            escape(&timestamp_date(&capture.ts)),
            escape(&status),
            escape(&kind),
            size,
            escape(digest.as_deref().unwrap_or("")),
        );
    }
    html.push_str("</tbody></table></body></html>");
    html
}

/// The store's path as a server was told it, for the landing page's commands.
pub fn store_path(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(q: &str) -> Params {
        Params {
            q: q.into(),
            limit: DEFAULT_RESULTS,
            offset: 0,
            html: true,
        }
    }

    fn hostile_hit() -> Hit {
        Hit {
            url: "http://x/?a=<b>".into(),
            title: "<script>alert(1)</script>".into(),
            snippet: "a [match] & more".into(),
            first_seen: 0,
            last_seen: 60,
            captures: 2,
            score: 0.0,
            index_page: false,
            entity_generation_uuid: String::new(),
            copies: 0,
            copy_urls: Vec::new(),
        }
    }

    #[test]
    fn pages_escape_what_they_show() {
        let result = Result {
            hit: hostile_hit(),
            payload: None,
            timestamp: Some("19700101000100".into()),
            replay: Some(replay_link(
                "http://r/c/{timestamp}/{url}",
                "19700101000100",
                "http://x/?a=<b>\"'",
            )),
            captures_page: format!("/captures?url={}", encode("http://x/?a=<b>")),
        };
        let overview = Overview {
            total: 1,
            total_exact: true,
            facets: facets::Facets {
                site: vec![FacetValue {
                    value: "<img src=x onerror=alert(1)>".into(),
                    count: 1,
                }],
                ..Default::default()
            },
        };
        let html = page(&params("q\"<"), None, Some(&overview), &[result]);
        assert!(!html.contains("<script>"));
        assert!(!html.contains("<img"));
        assert!(!html.contains("<b>\""));
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("a <mark>match</mark> &amp; more"));
        assert!(html.contains("value=\"q&quot;&lt;\""));
        assert!(
            html.contains("href=\"http://r/c/19700101000100/http://x/?a=&lt;b&gt;&quot;&#39;\"")
        );
        let mut capture = Capture {
            url: "http://x/<script>".into(),
            ts: "2024<i>".into(),
            mime: Some("text/html\"><script>".into()),
            ..Default::default()
        };
        capture.status = Some(200);
        let html = captures_page(
            "http://x/<script>",
            &[capture],
            Some("/r/{timestamp}/{url}"),
        );
        assert!(
            !html.contains("<script>") && !html.contains("<i>"),
            "{html}"
        );
        let html = no_summary_page(Path::new("/data/it's <here>"));
        assert!(
            html.contains("&#39;/data/it&#39;\\&#39;&#39;s &lt;here&gt;&#39;"),
            "{html}"
        );
    }

    #[test]
    fn replay_templates() {
        assert!(check_replay_template("http://localhost:8080/coll/{timestamp}/{url}").is_ok());
        assert!(check_replay_template("/wayback/{url}").is_ok());
        for bad in [
            "javascript:alert(1)/{url}",
            "http://x/{timestamp}",
            "http://x/ {url}",
            "localhost:8080/{url}",
        ] {
            assert!(check_replay_template(bad).is_err(), "{bad}");
        }
        assert_eq!(
            replay_link(
                "http://h:8080/my-coll/{timestamp}/{url}",
                "20240102030405",
                "https://example.org/a?b=c"
            ),
            "http://h:8080/my-coll/20240102030405/https://example.org/a?b=c"
        );
    }

    #[test]
    fn facet_links_add_and_remove_filters() {
        assert_eq!(toggled("flood", "site", "a.org", false), "flood site:a.org");
        assert_eq!(
            toggled("flood site:A.org year:2021", "site", "a.org", true),
            "flood year:2021"
        );
        assert_eq!(toggled("x year:2021", "year", "2021", true), "x");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(timestamp_date("20240131120005"), "2024-01-31 12:00:05");
    }
}
