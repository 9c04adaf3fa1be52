//! `/search?q=`: full-text search over the summary database given with `--summary-db`,
//! as JSON (the fields of `sediment search --json`, plus the payload key) or as an HTML
//! page with a query box, for people.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Serialize;

use super::{Shared, busy, error};
use crate::capture::CaptureKind;
use crate::key::Sha1Key;
use crate::search::{Hit, MATCH_END, MATCH_START, Query, Stop, Stopped, open, search_until};
use crate::store::Store;
use crate::wayback::query::{MatchType, key_range};
use crate::wayback::{CaptureSource, StoreCaptures};

const DEFAULT_RESULTS: usize = 10;
const MAX_RESULTS: usize = 100;
/// How long a search waits for one of the `--max-searches` places before a 503.
pub(super) const QUEUE_WAIT: Duration = Duration::from_secs(1);

pub async fn index() -> Redirect {
    Redirect::to("/search")
}

#[derive(Serialize)]
struct Result {
    #[serde(flatten)]
    hit: Hit,
    /// Base32 key of the payload captured closest to the end of this version, for
    /// `/payload/KEY`.
    payload: Option<String>,
}

pub(super) struct Params {
    pub q: String,
    limit: usize,
    html: bool,
}

pub(super) fn params(
    raw: Option<&str>,
    headers: &HeaderMap,
) -> std::result::Result<Params, String> {
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    let mut params = Params {
        q: String::new(),
        limit: DEFAULT_RESULTS,
        html: wants_html,
    };
    for (name, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        match &*name {
            "q" => params.q = value.into_owned(),
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_RESULTS).contains(&n) => params.limit = n,
                _ => return Err(format!("limit must be between 1 and {MAX_RESULTS}")),
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
            Html(page("", None, &[])).into_response()
        } else {
            error(StatusCode::BAD_REQUEST, "q is required: /search?q=words")
        };
    }
    let query = match Query::parse(&params.q) {
        Ok(q) => q,
        Err(e) if params.html => {
            return (
                StatusCode::BAD_REQUEST,
                Html(page(&params.q, Some(&e.to_string()), &[])),
            )
                .into_response();
        }
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let limit = params.limit;
    let deadline = Instant::now() + state.request_timeout;
    let permit =
        match tokio::time::timeout(QUEUE_WAIT, state.searches.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                return busy(format!(
                    "{} searches are running already (--max-searches); try again in a moment",
                    state.max_searches
                ));
            }
        };
    // Dropped with this handler (a timeout, the client gone): the search stops in SQLite.
    let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
    let stop = Stop {
        deadline: Some(deadline),
        cancel: vec![cancel.0.clone(), state.stopping.clone()],
    };
    let timeout = state.request_timeout;
    let found = tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<Result>> {
        // Held until the work is done, not just until the client stops waiting for it.
        let _permit = permit;
        let mut conn = open(&db)?;
        let hits = search_until(&mut conn, &query, limit, &stop)?;
        let store = state.store.get();
        let mut results = Vec::with_capacity(hits.len());
        for hit in hits {
            if stop.cancel.iter().any(|c| c.load(Ordering::Relaxed)) {
                return Err(Stopped("was cancelled").into());
            }
            results.push(Result {
                payload: payload_key(&store, &hit.url, hit.last_seen).map(|k| k.to_base32()),
                hit,
            });
        }
        Ok(results)
    })
    .await;
    let results = match found {
        Ok(Ok(results)) => results,
        Ok(Err(e)) if e.is::<Stopped>() => {
            return busy(format!(
                "the search took longer than {} s: fewer or rarer words may help",
                timeout.as_secs()
            ));
        }
        Ok(Err(e)) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    drop(cancel);
    if params.html {
        Html(page(&params.q, None, &results)).into_response()
    } else {
        axum::Json(serde_json::json!({ "query": params.q, "results": results })).into_response()
    }
}

struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The payload of the capture of `url` nearest to `seconds` (unix time) that has one.
fn payload_key(store: &Store, url: &str, seconds: i64) -> Option<Sha1Key> {
    let range = key_range(url, MatchType::Exact);
    StoreCaptures::new(store)
        .scan(&range, false)
        .filter_map(|c| c.ok())
        .filter(|c| c.kind != CaptureKind::Revisit && c.status == Some(200))
        .filter_map(|c| {
            let distance = (crate::wayback::query::timestamp_seconds(&c.ts) - seconds).abs();
            Some((distance, c.digest?))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, key)| key)
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

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

const STYLE: &str = "body{font:16px/1.45 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}\
form{display:flex;gap:.5rem;margin-bottom:1.5rem}input[name=q]{flex:1;font-size:1.1rem;padding:.4rem}\
button{font-size:1.1rem;padding:.4rem 1rem}ol{padding-left:1.2rem}li{margin-bottom:1.2rem}\
.url{color:#006621;font-size:.9rem;word-break:break-all}.meta{color:#666;font-size:.85rem}\
mark{background:#fff2a8}.error{color:#a00}";

fn page(q: &str, problem: Option<&str>, results: &[Result]) -> String {
    let mut html = String::with_capacity(4096);
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}Sediment search</title><style>{STYLE}</style></head><body>\
         <h1>Sediment search</h1>\
         <form id=\"search\" action=\"/search\" method=\"get\">\
         <input type=\"search\" name=\"q\" value=\"{}\" placeholder=\"words, &quot;a phrase&quot;, -word, site:example.org\" autofocus>\
         <input type=\"hidden\" name=\"format\" value=\"html\">\
         <button type=\"submit\">Search</button></form>",
        if q.is_empty() {
            String::new()
        } else {
            format!("{} – ", escape(q))
        },
        escape(q)
    );
    if let Some(problem) = problem {
        let _ = write!(
            html,
            "<p class=\"error\" id=\"error\">{}</p>",
            escape(problem)
        );
    } else if !q.is_empty() && results.is_empty() {
        html.push_str("<p id=\"no-results\">No results.</p>");
    }
    if !results.is_empty() {
        html.push_str("<ol id=\"results\">");
        for result in results {
            let hit = &result.hit;
            let title = if hit.title.trim().is_empty() {
                &hit.url
            } else {
                &hit.title
            };
            let link = match &result.payload {
                Some(key) => format!("/payload/{key}"),
                None => format!("/cdx?url={}", encode(&hit.url)),
            };
            let seen = if hit.first_seen == hit.last_seen {
                date(hit.first_seen)
            } else {
                format!("{} – {}", date(hit.first_seen), date(hit.last_seen))
            };
            let _ = write!(
                html,
                "<li class=\"result\"><a class=\"title\" href=\"{}\">{}</a>\
                 <div class=\"url\">{}</div><div class=\"snippet\">{}</div>\
                 <div class=\"meta\">captured {} ({} capture{}) · <a href=\"/cdx?url={}&amp;output=json\">all captures</a></div></li>",
                escape(&link),
                escape(title.trim()),
                escape(&hit.url),
                snippet_html(&hit.snippet),
                seen,
                hit.captures,
                if hit.captures == 1 { "" } else { "s" },
                escape(&encode(&hit.url)),
            );
        }
        html.push_str("</ol>");
    }
    html.push_str("</body></html>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_what_they_show() {
        let hit = Hit {
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
        };
        let html = page("q\"<", None, &[Result { hit, payload: None }]);
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("a <mark>match</mark> &amp; more"));
        assert!(html.contains("value=\"q&quot;&lt;\""));
    }
}
