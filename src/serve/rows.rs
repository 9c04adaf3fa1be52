//! `/sha1/KEY` (a row as `sediment export` writes it), `/health` and `/stats`.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::cdx::key_from_path;
use super::{Shared, body, error, reads_in_place};
use crate::jsonl::write_row;
use crate::key::Sha1Key;
use crate::store::Store;
use crate::store::backend::Space;
use crate::store::cells::Projection;

/// `GET /sha1/KEY`. On the embedded store the row is read right on the connection's task,
/// as `/cdx` reads its small answers (see `cdx::INLINE_ANSWER`): a row is one version of
/// each of a few columns, a block or two of each family, and handing it to a blocking
/// thread and back cost more than reading it (at 100 M captures, 16 clients: context
/// switches of the blocking pool were 7 % of the server's CPU, issue 36). The largest cell
/// a row can have is the TEI of one document, which the GROBID stage only makes for files
/// within its size limit. On a remote backend it goes to a blocking thread
/// (`serve::reads_in_place`).
pub async fn row(State(state): State<Shared>, Path(key): Path<String>) -> Response {
    let key = match key_from_path(&key) {
        Ok(key) => key,
        Err(response) => return *response,
    };
    let store = state.store.get();
    let read = if reads_in_place(&store) {
        read_row_line(&state, &store, &key)
    } else {
        tokio::task::spawn_blocking(move || read_row_line(&state, &store, &key))
            .await
            .unwrap_or_else(|e| Err(anyhow::Error::new(e)))
    };
    match read {
        Ok(Some(line)) => {
            let length = line.len();
            body::response("application/json", line.into(), Some(length))
        }
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no row with key {key}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
    }
}

/// The row of `key` as a line of `sediment export`; `None` when the store has no row.
fn read_row_line(state: &Shared, store: &Store, key: &Sha1Key) -> anyhow::Result<Option<Vec<u8>>> {
    let Some(row) = store.read_row(key, &Projection::all(store.schema()))? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let mut bad_cells = Vec::new();
    write_row(store.schema(), &row, false, &mut out, &mut bad_cells);
    if !bad_cells.is_empty() {
        state.problem(&format!(
            "row {key}: cells left out: {}",
            bad_cells.join(", ")
        ));
    }
    Ok(Some(out))
}

pub async fn health(State(state): State<Shared>) -> Response {
    Json(json!({
        "status": "ok",
        "sediment": env!("CARGO_PKG_VERSION"),
        "store_version": state.store.version(),
    }))
    .into_response()
}

/// RocksDB's estimate of the keys in a column family (cheap: no scan); `None` on other
/// backends.
fn estimated_keys(store: &Store, family: Family) -> Option<u64> {
    let rocks = store.backend().as_rocks()?;
    let cf = match family {
        Family::Captures => rocks.space_cf(Space::Capture),
        Family::Table(index) => rocks.family_cf(index),
    };
    rocks
        .db()
        .property_int_value_cf(cf, "rocksdb.estimate-num-keys")
        .ok()
        .flatten()
}

enum Family {
    Captures,
    Table(usize),
}

pub async fn stats(State(state): State<Shared>) -> Response {
    let store = state.store.get();
    let c = &state.counters;
    let load = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
    let (connections, connections_closed_for_room) = state.gate.counts();
    Json(json!({
        "store": state.store.path().display().to_string(),
        "store_version": state.store.version(),
        "store_reloads": state.store.reloads(),
        "block_cache_bytes": state.store.block_cache_usage(),
        "captures_estimate": estimated_keys(&store, Family::Captures),
        "cells_estimate_first_family": estimated_keys(&store, Family::Table(0)),
        "uptime_seconds": state.started.elapsed().as_secs(),
        "requests": load(&c.requests),
        "in_flight": load(&c.in_flight),
        "client_errors": load(&c.client_errors),
        "server_errors": load(&c.server_errors),
        "timeouts": load(&c.timeouts),
        "payload_problems": load(&c.payload_problems),
        "connections": connections,
        "connections_closed_for_room": connections_closed_for_room,
        "searches_running": state.max_searches - state.searches.available_permits(),
        "payloads_running": state.max_payloads - state.payloads.available_permits(),
        "summary_db": state.summary_db.as_ref().map(|p| p.display().to_string()),
    }))
    .into_response()
}
