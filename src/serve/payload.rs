//! `/payload/KEY`: a file's payload, streamed from the WARC the store locates it in and
//! checked against its key as it streams.
//!
//! The SHA-1 is known only after the last byte, but the status line goes first. So a
//! payload up to [`CHECK_BEFORE_SENDING`] bytes is read and checked before anything is
//! sent (a mismatch is a clean 502); a larger one is streamed with its Content-Length
//! and the last chunk held back until the digest is confirmed: on a mismatch the body is
//! cut short, and the client sees a failed transfer, never a complete wrong file.
//! Which WARC is opened comes only from the store's captures of the key, resolved
//! under the configured WARC directories; nothing in the request names a file.

use std::path::PathBuf;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use super::cdx::key_from_path;
use super::search::QUEUE_WAIT;
use super::{Shared, busy, error};
use crate::capture::CaptureKind;
use crate::key::Sha1Key;
use crate::payload::{check_dechunked, holders_of, read_payload_at};
use crate::store::Store;
use crate::store::cells::Projection;

/// Payloads up to this size are checked before the response starts.
const CHECK_BEFORE_SENDING: u64 = 2 << 20;

/// Where a payload is, and what the store says about it.
struct Located {
    warc: PathBuf,
    offset: u64,
    size: Option<u64>,
    mime: Option<String>,
    /// The key the stored bytes hash to: the asked key, or for a key that names a
    /// chunk-encoded body de-chunked (a warcprox revisit's), the original's key.
    stored: Sha1Key,
}

impl Located {
    /// The asked key names the de-chunked body, so the stored bytes are sent de-chunked.
    fn dechunks(&self, key: &Sha1Key) -> bool {
        self.stored != *key
    }
}

/// The first capture (in first-capture order) that holds the payload in a WARC present
/// here; `Err` with the status and message for the client otherwise.
fn locate(state: &Shared, store: &Store, key: &Sha1Key) -> Result<Located, (StatusCode, String)> {
    let internal = |e: anyhow::Error| (StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"));
    let (captures, stored) = holders_of(store, key).map_err(internal)?;
    if captures.is_empty() {
        return Err((StatusCode::NOT_FOUND, format!("no file with key {key}")));
    }
    let mut missing = Vec::new();
    for capture in &captures {
        if capture.kind == CaptureKind::Revisit {
            continue;
        }
        let (Some(warc), Some(offset)) = (capture.warc.as_deref(), capture.offset) else {
            continue;
        };
        // The stored location, after `sediment relocate` rules and --warc-dir.
        match state
            .locator
            .resolve_capture(store, capture)
            .map_err(internal)?
        {
            Some(path) => {
                return Ok(Located {
                    warc: path,
                    offset,
                    size: capture.size,
                    mime: file_mime(store, &stored).or_else(|| capture.mime.clone()),
                    stored,
                });
            }
            None => missing.push(crate::capture::file_name(warc).to_string()),
        }
    }
    Err(if missing.is_empty() {
        (
            StatusCode::NOT_FOUND,
            format!("{key} has no WARC location in this store (it came from a CDX without one)"),
        )
    } else {
        missing.dedup();
        (
            StatusCode::NOT_FOUND,
            format!(
                "the WARC files holding {key} are not available to this server ({})",
                missing.join(", ")
            ),
        )
    })
}

/// The row's `file:mime`.
fn file_mime(store: &Store, key: &Sha1Key) -> Option<String> {
    let column = store.schema().column_id("file:mime")?;
    let projection = Projection {
        families: vec![column.family],
        columns: Some(vec![column]),
        versions: 1,
    };
    let row = store.read_row(key, &projection).ok()??;
    row.latest(column)
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

fn payload_response(body: Body, mime: Option<&str>, length: Option<u64>) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    let mime = mime
        .and_then(|m| HeaderValue::from_str(m).ok())
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    headers.insert(header::CONTENT_TYPE, mime);
    if let Some(length) = length {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    // Archived pages are someone else's code: never sniff, never run it on our origin.
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox"),
    );
    response
}

enum Read {
    Whole(Located, Vec<u8>),
    Streaming(Located, mpsc::Receiver<Result<Bytes, std::io::Error>>),
}

pub async fn payload(State(state): State<Shared>, Path(key): Path<String>) -> Response {
    let key = match key_from_path(&key) {
        Ok(key) => key,
        Err(response) => return *response,
    };
    let deadline = Instant::now() + state.request_timeout;
    // A payload costs a blocking thread, a file and SHA-1 work for as long as the client
    // reads: without a limit of their own, slow downloads would take every thread.
    let permit =
        match tokio::time::timeout(QUEUE_WAIT, state.payloads.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                return busy(format!(
                    "{} payloads are being sent already (--max-payloads); try again in a moment",
                    state.max_payloads
                ));
            }
        };
    let (tx, rx) = mpsc::channel(4);
    let worker_state = state.clone();
    let read = tokio::task::spawn_blocking(move || {
        read_payload(&worker_state, &key, deadline, permit, tx, rx)
    })
    .await;
    match read {
        Ok(Ok(Read::Whole(located, bytes))) => {
            let length = bytes.len() as u64;
            payload_response(Body::from(bytes), located.mime.as_deref(), Some(length))
        }
        Ok(Ok(Read::Streaming(located, rx))) => {
            let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
            // The stored size is not the de-chunked body's.
            let length = located.size.filter(|_| !located.dechunks(&key));
            payload_response(Body::from_stream(stream), located.mime.as_deref(), length)
        }
        Ok(Err((status, message))) => error(status, message),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Locates and reads (small) or starts streaming (large) a payload. Runs on a blocking
/// thread; for a large payload it hands the receiver back at once and keeps reading on
/// another one.
fn read_payload(
    state: &Shared,
    key: &Sha1Key,
    deadline: Instant,
    permit: OwnedSemaphorePermit,
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
    rx: mpsc::Receiver<Result<Bytes, std::io::Error>>,
) -> Result<Read, (StatusCode, String)> {
    let store = state.store.get();
    let located = locate(state, &store, key)?;
    let dechunk = located.dechunks(key);
    // A de-chunked body is no longer than the stored one.
    let checked_first = located.size.is_some_and(|s| s <= CHECK_BEFORE_SENDING);
    if checked_first {
        let mut bytes = Vec::with_capacity(located.size.unwrap_or(0) as usize);
        match read_payload_at(
            &located.warc,
            located.offset,
            &located.stored,
            dechunk,
            &mut |b| bytes.extend_from_slice(b),
        )
        .and_then(|record| {
            if dechunk {
                check_dechunked(&located.warc, located.offset, &record, key)?;
            }
            Ok(record)
        }) {
            Ok(_) => return Ok(Read::Whole(located, bytes)),
            Err(e) => {
                let message = format!("{e:#}");
                state.problem(&message);
                return Err((StatusCode::BAD_GATEWAY, message));
            }
        }
    }
    let (warc, offset, key, stored) = (located.warc.clone(), located.offset, *key, located.stored);
    let state = state.clone();
    tokio::runtime::Handle::current().spawn_blocking(move || {
        let _permit = permit;
        stream_checked(&state, &warc, offset, &key, &stored, deadline, tx)
    });
    Ok(Read::Streaming(located, rx))
}

/// Streams the payload, always one chunk behind, and sends that last chunk only once
/// the digest matched (`key`; the stored bytes' is `stored`, and they are sent
/// de-chunked when the two differ).
fn stream_checked(
    state: &Shared,
    warc: &std::path::Path,
    offset: u64,
    key: &Sha1Key,
    stored: &Sha1Key,
    deadline: Instant,
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let runtime = tokio::runtime::Handle::current();
    // A client that stops reading must not hold this thread (and its --max-payloads
    // place) past the deadline: every send waits at most until then.
    let send = |item: Result<Bytes, std::io::Error>| -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        matches!(
            runtime.block_on(tokio::time::timeout(left, tx.send(item))),
            Ok(Ok(()))
        )
    };
    let mut held: Option<Bytes> = None;
    let mut gone = false;
    let dechunk = stored != key;
    let result = read_payload_at(warc, offset, stored, dechunk, &mut |bytes| {
        if gone {
            return;
        }
        if Instant::now() > deadline {
            gone = true;
            let _ = tx.try_send(Err(std::io::Error::other("out of time")));
            return;
        }
        if let Some(previous) = held.replace(Bytes::copy_from_slice(bytes)) {
            gone = !send(Ok(previous));
        }
    })
    .and_then(|record| {
        if dechunk {
            check_dechunked(warc, offset, &record, key)?;
        }
        Ok(record)
    });
    match result {
        Ok(_) => {
            if let Some(last) = held
                && !gone
            {
                send(Ok(last));
            }
        }
        Err(e) => {
            let message = format!("{e:#}");
            state.problem(&message);
            send(Err(std::io::Error::other(message)));
        }
    }
}
