//! `/cdx` (the CDX server API) and `/captures/KEY` (every capture of a payload).

use std::time::Instant;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::{Shared, body, error, reads_in_place};
use crate::capture::Capture;
use crate::key::Sha1Key;
use crate::store::captures::captures_of_digest as read_captures_of_digest;
use crate::wayback::query::{KeyRange, Output};
use crate::wayback::run::{CaptureSource, VecSource};
use crate::wayback::{CaptureQuery, Field, StoreCaptures, run, run_until};

/// Query parameters, percent-decoded; names may repeat (`filter`, `collapse`).
fn parameters(raw: Option<&str>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// `fl` (or `fields`) names each field at most once: a field named 3,000 times would be
/// written 3,000 times on every line. So a field list has at most [`Field::ALL`]'s length.
pub fn check_fields(params: &[(String, String)]) -> Result<(), String> {
    let mut seen: Vec<Field> = Vec::new();
    let names = params
        .iter()
        .filter(|(name, _)| name == "fl" || name == "fields")
        .flat_map(|(_, value)| value.split(',').filter(|n| !n.is_empty()));
    for name in names {
        let Some(field) = Field::parse(name) else {
            return Err(format!(
                "fl names no known field {name:?} (fields: {})",
                Field::NAMES
            ));
        };
        if seen.contains(&field) {
            return Err(format!(
                "fl names the field {name:?} more than once (each of the {} fields at most once)",
                Field::ALL.len()
            ));
        }
        seen.push(field);
    }
    Ok(())
}

fn parse_query(
    state: &Shared,
    raw: Option<&str>,
) -> Result<CaptureQuery, crate::wayback::QueryError> {
    let params = parameters(raw);
    check_fields(&params).map_err(crate::wayback::QueryError)?;
    CaptureQuery::from_params(
        params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        &state.limits,
    )
}

pub async fn cdx(State(state): State<Shared>, RawQuery(raw): RawQuery) -> Response {
    let mut query = match parse_query(&state, raw.as_deref()) {
        Ok(query) => query,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    query.names_only = true;
    let deadline = Instant::now() + state.request_timeout;
    let content_type = match query.paging {
        Some(crate::wayback::query::Paging::Count { .. }) if query.output == Output::Json => {
            "application/json"
        }
        _ => query.output.content_type(),
    };
    let store = state.store.get();
    let in_place = query.paging.is_none() && reads_in_place(&store);
    if in_place {
        let source = Budgeted {
            inner: &StoreCaptures::new(&store),
            captures: INLINE_CAPTURES,
        };
        let mut out = Capped::default();
        match run_until(&query, &source, &mut out, Some(deadline)) {
            Ok(_) => {
                let length = out.bytes.len();
                return body::response(content_type, out.bytes.into(), Some(length));
            }
            Err(e) if Capped::overflowed(&e) => {}
            Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        }
    }
    drop(store);
    body::from_blocking(content_type, deadline, move |out| {
        let store = state.store.get();
        run_until(&query, &StoreCaptures::new(&store), out, Some(deadline))?;
        Ok(())
    })
    .await
}

/// `POST /cdx`: OutbackCDX's write call, which Heritrix's OutbackCDX client makes to
/// record each fetch (one CDX line in the body). The server reads published store
/// versions and never writes, and a capture learned from such a line would lack what the
/// WARC record says; so the call is refused, with how to ingest instead. The body is not
/// read.
pub async fn refuse_write() -> Response {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "sediment serve is read-only: it answers GET /cdx (OutbackCDX's and the wayback CDX \
         server's query) but takes no CDX lines. Ingest the crawler's WARCs instead, as it \
         closes them: `sediment import-warc --follow DIR`, and leave the crawler's \
         write-back (Heritrix: OutbackCDXPersistStoreProcessor) unconfigured",
    );
    response.headers_mut().insert(
        axum::http::header::ALLOW,
        axum::http::HeaderValue::from_static("GET, HEAD"),
    );
    response
}

/// Answers of up to this size, read from up to [`INLINE_CAPTURES`] captures, are computed
/// right on the connection's task: the captures of one URL, or the first hundred under a
/// prefix, are a few adjacent keys, usually in RocksDB's block cache, and handing them to
/// a blocking thread and back through a channel costs more than reading them (it doubled
/// the p99 latency under load). A query that needs more (a filter that skips most of a
/// domain, a large limit) is started again on a blocking thread and streamed, so no
/// connection task is held up for longer than a bounded read.
const INLINE_ANSWER: usize = 128 << 10;
const INLINE_CAPTURES: usize = 1000;

/// A capture source that fails with [`Overflow`] instead of reading more than `captures`.
struct Budgeted<'a> {
    inner: &'a dyn CaptureSource,
    captures: usize,
}

impl CaptureSource for Budgeted<'_> {
    fn scan<'b>(
        &'b self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = anyhow::Result<Capture>> + 'b> {
        let mut inner = self.inner.scan(range, reverse);
        let mut left = self.captures;
        let mut over = false;
        Box::new(std::iter::from_fn(move || {
            if over {
                return None;
            }
            let item = inner.next()?;
            if left == 0 {
                over = true;
                return Some(Err(anyhow::Error::new(Overflow)));
            }
            left -= 1;
            Some(item)
        }))
    }
}

#[derive(Default)]
struct Capped {
    bytes: Vec<u8>,
}

#[derive(Debug)]
struct Overflow;

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("answer too large to build in place")
    }
}

impl std::error::Error for Overflow {}

impl Capped {
    /// Whether `error` is the answer outgrowing its size or its read budget.
    fn overflowed(error: &anyhow::Error) -> bool {
        error.is::<Overflow>()
            || error
                .downcast_ref::<std::io::Error>()
                .and_then(|e| e.get_ref())
                .is_some_and(|inner| inner.is::<Overflow>())
    }
}

impl std::io::Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + data.len() > INLINE_ANSWER {
            return Err(std::io::Error::other(Overflow));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A row key from the path, or a 400 that says which spellings are accepted.
pub fn key_from_path(text: &str) -> Result<Sha1Key, Box<Response>> {
    Sha1Key::parse(text).map_err(|e| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            format!("{e}; a key is 32 base32 characters, 40 hex characters, or sha1:BASE32"),
        ))
    })
}

/// Every capture of a payload, first capture first, as JSON lines (or `?output=cdx`,
/// `cdxj`, `json` like `/cdx`).
pub async fn captures_of_digest(
    State(state): State<Shared>,
    Path(key): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let key = match key_from_path(&key) {
        Ok(key) => key,
        Err(response) => return *response,
    };
    let mut params = parameters(raw.as_deref());
    if let Err(message) = check_fields(&params) {
        return error(StatusCode::BAD_REQUEST, message);
    }
    if !params.iter().any(|(k, _)| k == "output") {
        params.push(("output".into(), "jsonl".into()));
    }
    // The digest's captures, in first-capture order, stand in for a key range.
    let everything = KeyRange {
        start: Vec::new(),
        end: vec![0xFF],
    };
    let mut query = match CaptureQuery::over_range(
        params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        &state.limits,
        everything,
    ) {
        Ok(query) => query,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    query.names_only = true;
    let deadline = Instant::now() + state.request_timeout;
    let content_type = query.output.content_type();
    body::from_blocking(content_type, deadline, move |out| {
        let store = state.store.get();
        let captures = read_captures_of_digest(&store, &key)?;
        if captures.is_empty() {
            out_fail(out, &key);
            return Ok(());
        }
        run(&query, &VecSource::in_order(captures), out)?;
        Ok(())
    })
    .await
}

fn out_fail(out: &mut body::ChannelWriter, key: &Sha1Key) {
    out.fail(
        StatusCode::NOT_FOUND,
        format!("no captures of {key} in this store"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captures(n: u64) -> VecSource {
        VecSource::in_order(
            (0..n)
                .map(|i| Capture {
                    offset: Some(i),
                    ..Capture::default()
                })
                .collect(),
        )
    }

    fn scanned(source: &VecSource, budget: usize) -> (usize, bool) {
        let budgeted = Budgeted {
            inner: source,
            captures: budget,
        };
        let everything = KeyRange {
            start: Vec::new(),
            end: vec![0xFF],
        };
        let items: Vec<_> = budgeted.scan(&everything, false).collect();
        let overflowed = items
            .iter()
            .any(|item| item.as_ref().is_err_and(Capped::overflowed));
        (items.iter().filter(|item| item.is_ok()).count(), overflowed)
    }

    #[test]
    fn field_lists_name_known_fields_once() {
        let fl = |value: &str| vec![("fl".to_string(), value.to_string())];
        assert!(check_fields(&fl("timestamp,url,,digest")).is_ok());
        let repeated = check_fields(&fl(&"timestamp,".repeat(3000))).unwrap_err();
        assert!(repeated.contains("more than once"), "{repeated}");
        // Spellings of one field, and repeats across parameters, are repeats too.
        assert!(check_fields(&fl("url,original")).is_err());
        let mut two = fl("digest");
        two.push(("fields".into(), "digest".into()));
        assert!(check_fields(&two).is_err());
        assert!(
            check_fields(&fl("size"))
                .unwrap_err()
                .contains("no known field")
        );
    }

    #[test]
    fn a_budget_stops_a_scan_only_when_there_is_more_to_read() {
        assert_eq!(scanned(&captures(5), 3), (3, true));
        assert_eq!(scanned(&captures(3), 3), (3, false));
        assert_eq!(scanned(&captures(0), 3), (0, false));
    }
}
