//! The Cloud Bigtable backend: `--store bigtable://PROJECT/INSTANCE/TABLE`.
//!
//! Layout (documented in ARCHITECTURE.md):
//! - `TABLE` is the seed's table: row key = the raw 20-byte SHA-1, families `f`, `file`,
//!   `grobid0`, `match0` with the GC policy (max versions) of `schemas/table.json`, cells
//!   encoded as in RocksDB, cell timestamps in microseconds (Sediment's milliseconds ×
//!   1000, so real Bigtable's millisecond granularity holds).
//! - one companion table per key space, `TABLE_capture`, `TABLE_capture_by_digest`,
//!   `TABLE_dirty`, `TABLE_meta`, `TABLE_catalog`, each with one family `v`: a plain key
//!   is one cell (empty qualifier); a key of a merging space holds one cell per distinct
//!   value written, its qualifier a hash of the value (writing the same value twice is the
//!   same cell), combined with the space's merge function when read. Row keys longer than
//!   Bigtable allows are cut and completed by a hash, the full key kept in a cell.
//!
//! Calls go through bigtable_rs (tonic): ReadRows streamed row by row, MutateRows in
//! bounded requests, CheckAndMutateRow for leases and conditional deletes. Every call
//! that fails transiently (a retryable code, a reset connection, a timeout) is retried
//! under one policy, `Retry`: exponential back-off with jitter, capped in attempts and
//! in time, on a new channel when the transport broke. MutateRows is retried as it is
//! (every mutation carries its own timestamp or is a delete, merge cells are named by a
//! hash of their value, so applying it twice is applying it once); a ReadRows stream
//! that breaks resumes after the last row it gave; a CheckAndMutateRow whose outcome is
//! unknown is not sent again blindly, the cell is read to learn whether it took effect.
//! Credentials are Google's usual ones (application
//! default credentials, a service-account key in GOOGLE_APPLICATION_CREDENTIALS);
//! `BIGTABLE_EMULATOR_HOST` points at an emulator instead, with none.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bigtable_rs::bigtable::{BigTable, BigTableConnection, RowCell};
use bigtable_rs::google::bigtable::v2::{
    CheckAndMutateRowRequest, MutateRowsRequest, Mutation, ReadRowsRequest, RowFilter, RowRange,
    RowSet, ValueRange, mutate_rows_request, mutation, row_filter, row_range, value_range,
};
use futures_util::StreamExt;

use super::backend::{Backend, Batch, CellFilter, KeyVisitor, Op, RawCell, RowVisitor, Space};
use crate::key::Sha1Key;
use crate::schema::Schema;

/// The family of every companion table.
const SPACE_FAMILY: &str = "v";
/// Where the full key of a row whose key was cut is kept.
const FULL_KEY_QUALIFIER: &[u8] = b"\0key";
/// Bigtable's row keys are at most 4 KiB.
const MAX_ROW_KEY: usize = 4000;
/// Entries (rows) and bytes per MutateRows request.
const ROWS_PER_REQUEST: usize = 2000;
const BYTES_PER_REQUEST: usize = 16 << 20;
/// MutateRows requests of one table sent at once: enough to hide a round trip, few enough
/// that a batch's memory stays a few requests (Bigtable's client libraries default to a
/// similar number of outstanding batches).
const REQUESTS_IN_FLIGHT: usize = 4;
/// Rows asked for by key per ReadRows request.
const KEYS_PER_READ: usize = 1000;
/// Attempts of a call that keeps failing transiently, and the time it may take in all,
/// counted from its first failure (a stream that makes progress starts again).
const ATTEMPTS: u32 = 12;
const RETRY_FOR: Duration = Duration::from_secs(120);
/// The first wait after a failure, doubled after each, and the longest.
const FIRST_DELAY: Duration = Duration::from_millis(50);
const MAX_DELAY: Duration = Duration::from_secs(8);
/// Per-call timeout of the channel.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// `bigtable://PROJECT/INSTANCE/TABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub project: String,
    pub instance: String,
    pub table: String,
}

impl Address {
    /// The address in a `--store` value, `None` when it names a directory.
    pub fn parse(store: &Path) -> Result<Option<Address>> {
        let Some(text) = store.to_str() else {
            return Ok(None);
        };
        let Some(rest) = text.strip_prefix("bigtable://") else {
            return Ok(None);
        };
        let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        match parts.as_slice() {
            [project, instance, table]
                if [project, instance, table].iter().all(|p| !p.is_empty()) =>
            {
                Ok(Some(Address {
                    project: project.to_string(),
                    instance: instance.to_string(),
                    table: table.to_string(),
                }))
            }
            _ => bail!("a Bigtable store is bigtable://PROJECT/INSTANCE/TABLE, not {text}"),
        }
    }

    /// The table id of the files table or of a key space's companion table.
    pub fn table_id(&self, space: Option<Space>) -> String {
        match space {
            None => self.table.clone(),
            Some(space) => format!("{}_{}", self.table, space.name()),
        }
    }

    pub fn instance_name(&self) -> String {
        format!("projects/{}/instances/{}", self.project, self.instance)
    }

    pub fn table_name(&self, space: Option<Space>) -> String {
        format!("{}/tables/{}", self.instance_name(), self.table_id(space))
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bigtable://{}/{}/{}",
            self.project, self.instance, self.table
        )
    }
}

pub struct BigtableBackend {
    address: Address,
    writer: bool,
    runtime: tokio::runtime::Runtime,
    /// Google's credentials, kept to reconnect without asking for them again (none for
    /// the emulator).
    token_provider: Option<Arc<dyn gcp_auth::TokenProvider>>,
    /// The client and its generation, replaced when its transport broke.
    client: Mutex<(u64, BigTable)>,
    /// Family names of the files table, by schema index.
    families: Vec<String>,
    family_index: HashMap<String, usize>,
}

/// A runtime for the async client; the backend's calls block on it.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the Bigtable client's runtime")
}

/// How a failed call may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transience {
    Permanent,
    /// Again on the same channel (the server said so).
    Retry,
    /// Again on a new channel: the connection failed under the call.
    Reconnect,
}

fn status_transience(status: &tonic::Status) -> Transience {
    // A status made on this side from a local error (it has a source: an I/O, hyper or h2
    // error) says the connection failed, whatever its code; one the server sent has none.
    let local = std::error::Error::source(status).is_some();
    match status.code() {
        tonic::Code::Unavailable
        | tonic::Code::DeadlineExceeded
        | tonic::Code::Aborted
        | tonic::Code::ResourceExhausted
        | tonic::Code::Internal
        | tonic::Code::Unknown
        | tonic::Code::Cancelled
            if local =>
        {
            Transience::Reconnect
        }
        // Sediment never cancels a call: a cancellation is the connection going away.
        tonic::Code::Cancelled => Transience::Reconnect,
        code if is_retryable(code) => Transience::Retry,
        _ => Transience::Permanent,
    }
}

fn transience(error: &bigtable_rs::bigtable::Error) -> Transience {
    use bigtable_rs::bigtable::Error;
    match error {
        Error::RpcError(status) => status_transience(status),
        Error::TransportError(_) | Error::IoError(_) => Transience::Reconnect,
        Error::TimeoutError(_) => Transience::Retry,
        _ => Transience::Permanent,
    }
}

/// The retry policy of every call: how many times and how long a call that keeps failing
/// transiently is tried again, and how long to wait before each attempt.
struct Retry {
    failures: u32,
    first_failure: Option<Instant>,
    delay: Duration,
}

impl Retry {
    fn new() -> Retry {
        Retry {
            failures: 0,
            first_failure: None,
            delay: FIRST_DELAY,
        }
    }

    /// The call made progress (a stream gave a row): its failures so far are forgiven.
    fn progressed(&mut self) {
        *self = Retry::new();
    }

    /// The wait before the next attempt after a failure, `None` when the failure is
    /// permanent or the call has been retried enough.
    fn next_delay(&mut self, transience: Transience) -> Option<Duration> {
        if transience == Transience::Permanent {
            return None;
        }
        self.failures += 1;
        let first = *self.first_failure.get_or_insert_with(Instant::now);
        if self.failures >= ATTEMPTS || first.elapsed() >= RETRY_FOR {
            return None;
        }
        // "Equal jitter": between half the delay and all of it, so that the calls a reset
        // broke at once do not all come back at once.
        let delay = self.delay;
        self.delay = (self.delay * 2).min(MAX_DELAY);
        let half = delay / 2;
        Some(half + half.mul_f64(jitter()))
    }

    /// What to say when the call is given up.
    fn gave_up(&self) -> String {
        match self.failures {
            0 | 1 => String::new(),
            n => format!(
                " (after {n} attempts in {:.1} s)",
                self.first_failure
                    .map_or(0.0, |t| t.elapsed().as_secs_f64())
            ),
        }
    }
}

/// A number in [0, 1) that differs between calls and between processes.
fn jitter() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let seed = [
        nanos,
        CALLS.fetch_add(1, Ordering::Relaxed),
        std::process::id() as u64,
    ];
    let bytes: Vec<u8> = seed.iter().flat_map(|n| n.to_le_bytes()).collect();
    (xxhash_rust::xxh3::xxh3_64(&bytes) >> 11) as f64 / (1u64 << 53) as f64
}

/// A client for `address` (no I/O: the channel connects on its first call).
fn connection(
    address: &Address,
    writer: bool,
    token_provider: Option<&Arc<dyn gcp_auth::TokenProvider>>,
) -> Result<BigTableConnection> {
    let connection = match (emulator_host()?, token_provider) {
        (Some(host), _) => BigTableConnection::new_with_emulator(
            &host,
            &address.project,
            &address.instance,
            !writer,
            2,
            Some(CALL_TIMEOUT),
        ),
        (None, Some(provider)) => BigTableConnection::new_with_token_provider(
            &address.project,
            &address.instance,
            !writer,
            2,
            Some(CALL_TIMEOUT),
            provider.clone(),
        ),
        (None, None) => bail!("no Google credentials for {address}"),
    };
    connection.with_context(|| format!("cannot connect to {address}"))
}

impl BigtableBackend {
    /// Connects to the tables of `address`; every table must exist (see
    /// [`create_tables`]).
    pub fn open(address: &Address, schema: &Schema, writer: bool) -> Result<BigtableBackend> {
        // The client library panics on an emulator address it cannot parse.
        let emulator = emulator_host()?;
        let runtime = runtime()?;
        let token_provider = match emulator {
            Some(_) => None,
            None => Some(
                runtime
                    .block_on(gcp_auth::provider())
                    .with_context(|| format!("no Google credentials for {address}"))?,
            ),
        };
        // The channel spawns its workers on the runtime.
        let client = {
            let _inside = runtime.enter();
            connection(address, writer, token_provider.as_ref())?.client()
        };
        let families: Vec<String> = schema.families.iter().map(|f| f.name.clone()).collect();
        let backend = BigtableBackend {
            address: address.clone(),
            writer,
            runtime,
            token_provider,
            client: Mutex::new((0, client)),
            family_index: families
                .iter()
                .enumerate()
                .map(|(i, f)| (f.clone(), i))
                .collect(),
            families,
        };
        backend.check_tables()?;
        Ok(backend)
    }

    /// The current client and its generation (to name it in [`Self::recover`]).
    fn client(&self) -> (u64, BigTable) {
        let guard = self.client.lock().unwrap_or_else(|e| e.into_inner());
        (guard.0, guard.1.clone())
    }

    /// After a failed call on the client of `generation`: a new client when the transport
    /// broke (once, however many calls failed with it), and the wait before trying again,
    /// or `None` when the call must not be tried again.
    fn recover(
        &self,
        retry: &mut Retry,
        generation: u64,
        transience: Transience,
    ) -> Option<Duration> {
        let delay = retry.next_delay(transience)?;
        if transience == Transience::Reconnect {
            let _inside = self.runtime.enter();
            let mut guard = self.client.lock().unwrap_or_else(|e| e.into_inner());
            if guard.0 == generation
                && let Ok(fresh) =
                    connection(&self.address, self.writer, self.token_provider.as_ref())
            {
                *guard = (generation + 1, fresh.client());
            }
        }
        Some(delay)
    }

    /// Blocks on `call` with a fresh client until it succeeds, fails permanently or has
    /// been retried enough. For idempotent calls only.
    fn call<T, F, Fut>(&self, what: &dyn Fn() -> String, mut call: F) -> Result<T>
    where
        F: FnMut(BigTable) -> Fut,
        Fut: std::future::Future<Output = Result<T, bigtable_rs::bigtable::Error>>,
    {
        let mut retry = Retry::new();
        loop {
            let (generation, client) = self.client();
            let error = match self.runtime.block_on(call(client)) {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            match self.recover(&mut retry, generation, transience(&error)) {
                Some(delay) => std::thread::sleep(delay),
                None => {
                    return Err(anyhow::anyhow!("{error}"))
                        .with_context(|| format!("{}{}", what(), retry.gave_up()));
                }
            }
        }
    }

    /// Fails clearly when a table is missing (a read of at most one row of each).
    fn check_tables(&self) -> Result<()> {
        let spaces = std::iter::once(None).chain(Space::ALL.into_iter().map(Some));
        for space in spaces {
            let request = ReadRowsRequest {
                table_name: self.address.table_name(space),
                rows_limit: 1,
                ..Default::default()
            };
            let read = self.call(&|| format!("cannot read {}", self.address), |mut client| {
                let request = request.clone();
                async move {
                    match client.read_rows(request).await {
                        Err(bigtable_rs::bigtable::Error::RpcError(status))
                            if status.code() == tonic::Code::NotFound =>
                        {
                            Ok(false)
                        }
                        Err(e) => Err(e),
                        Ok(_) => Ok(true),
                    }
                }
            })?;
            if !read {
                bail!(
                    "the Bigtable table {} of {} does not exist: create the tables with \
                     `sediment --store {} bigtable create`",
                    self.address.table_id(space),
                    self.address,
                    self.address
                );
            }
        }
        Ok(())
    }

    /// Streams the rows of a ReadRows request to `visit` (not inside the runtime, so
    /// `visit` may call the backend again); stops when `visit` returns false. A stream
    /// that fails transiently is asked again for the rows after the last one it gave.
    fn stream(
        &self,
        mut request: ReadRowsRequest,
        visit: &mut dyn FnMut(Vec<u8>, Vec<RowCell>) -> Result<bool>,
    ) -> Result<()> {
        let mut retry = Retry::new();
        loop {
            let (generation, mut client) = self.client();
            let mut last: Option<Vec<u8>> = None;
            let mut given: i64 = 0;
            let error = match self.runtime.block_on(client.stream_rows(request.clone())) {
                Err(e) => e,
                Ok(stream) => {
                    let mut stream = Box::pin(stream);
                    loop {
                        match self.runtime.block_on(stream.next()) {
                            None => return Ok(()),
                            Some(Ok((key, cells))) => {
                                retry.progressed();
                                last = Some(key.clone());
                                given += 1;
                                if !visit(key, cells)? {
                                    return Ok(());
                                }
                            }
                            Some(Err(e)) => break e,
                        }
                    }
                }
            };
            match self.recover(&mut retry, generation, transience(&error)) {
                Some(delay) => std::thread::sleep(delay),
                None => {
                    return Err(anyhow::anyhow!("{error}")).with_context(|| {
                        format!("while reading {}{}", self.address, retry.gave_up())
                    });
                }
            }
            if let Some(last) = last
                && !resume_after(&mut request, &last, given)
            {
                return Ok(());
            }
        }
    }

    fn row_filter(&self, filter: &CellFilter) -> RowFilter {
        let per_family: Vec<RowFilter> = filter
            .families
            .iter()
            .map(|(family, qualifiers)| {
                let mut chain = vec![filter_of(row_filter::Filter::FamilyNameRegexFilter(
                    format!("^{}$", regex_escape(self.families[*family].as_bytes())),
                ))];
                if let Some(qualifiers) = qualifiers {
                    let alternatives: Vec<String> =
                        qualifiers.iter().map(|q| regex_escape(q)).collect();
                    chain.push(filter_of(row_filter::Filter::ColumnQualifierRegexFilter(
                        format!("^({})$", alternatives.join("|")).into_bytes(),
                    )));
                }
                chain.push(filter_of(row_filter::Filter::CellsPerColumnLimitFilter(
                    filter.versions.min(i32::MAX as usize) as i32,
                )));
                filter_of(row_filter::Filter::Chain(row_filter::Chain {
                    filters: chain,
                }))
            })
            .collect();
        match per_family.len() {
            1 => per_family.into_iter().next().unwrap_or_default(),
            _ => filter_of(row_filter::Filter::Interleave(row_filter::Interleave {
                filters: per_family,
            })),
        }
    }

    fn raw_cells(&self, cells: Vec<RowCell>) -> Vec<RawCell> {
        cells
            .into_iter()
            .filter_map(|cell| {
                Some(RawCell {
                    family: *self.family_index.get(&cell.family_name)?,
                    qualifier: cell.qualifier,
                    ts: (cell.timestamp_micros.max(0) as u64) / 1000,
                    value: cell.value,
                })
            })
            .collect()
    }
}

/// Where one operation of a batch goes: its table, its row key there, its place in the
/// batch.
struct Placed {
    table: Option<Space>,
    row: Vec<u8>,
    op: usize,
}

/// Tables in the order a batch writes them: captures before the index entries that point
/// at them, both before the dirty marks that send a deriver to read them (a deriver must
/// never find a mark whose captures are not written yet).
const TABLE_ORDER: [Option<Space>; 6] = [
    Some(Space::Capture),
    Some(Space::ByDigest),
    None,
    Some(Space::Catalog),
    Some(Space::Meta),
    Some(Space::Dirty),
];

fn table_rank(table: Option<Space>) -> usize {
    TABLE_ORDER
        .iter()
        .position(|t| *t == table)
        .unwrap_or(TABLE_ORDER.len())
}

/// Sends one batch: its operations grouped by table and row (a row's mutations in one
/// entry, in the order they were made), in bounded requests, retrying what fails with a
/// retryable code. Requests are built from the batch when sent, and again for the entries
/// a retry sends, so no copy of the mutations is kept for retries.
struct Mutator<'b> {
    backend: &'b BigtableBackend,
    address: &'b Address,
    families: &'b [String],
    ops: &'b [Op],
    placed: Vec<Placed>,
}

impl<'b> Mutator<'b> {
    fn new(backend: &'b BigtableBackend, batch: &'b Batch) -> Self {
        let mut placed: Vec<Placed> = batch
            .ops
            .iter()
            .enumerate()
            .map(|(op_index, op)| {
                let (table, row) = match op {
                    Op::PutCell { row, .. } | Op::DeleteRowFamily { row, .. } => {
                        (None, row.as_bytes().to_vec())
                    }
                    Op::Put { space, key, .. }
                    | Op::Merge { space, key, .. }
                    | Op::Delete { space, key } => (Some(*space), row_key(key)),
                };
                Placed {
                    table,
                    row,
                    op: op_index,
                }
            })
            .collect();
        // Stable: a row's operations keep their order (Bigtable applies the entries of a
        // request in no particular order, the mutations of one entry in order).
        placed.sort_by(|a, b| (table_rank(a.table), &a.row).cmp(&(table_rank(b.table), &b.row)));
        Mutator {
            backend,
            address: &backend.address,
            families: &backend.families,
            ops: &batch.ops,
            placed,
        }
    }

    async fn send(&self) -> Result<()> {
        let placed = &self.placed;
        let mut start = 0;
        while start < placed.len() {
            let table = placed[start].table;
            // This table's rows, each a run of `placed` with one row key.
            let mut rows: Vec<Range<usize>> = Vec::new();
            let mut end = start;
            while end < placed.len() && placed[end].table == table {
                let row_start = end;
                while end < placed.len()
                    && placed[end].table == table
                    && placed[end].row == placed[row_start].row
                {
                    end += 1;
                }
                rows.push(row_start..end);
            }
            let mut requests: Vec<Vec<Range<usize>>> = vec![Vec::new()];
            let mut bytes = 0;
            for row in rows {
                bytes += placed[row.start].row.len()
                    + placed[row.clone()]
                        .iter()
                        .map(|p| op_bytes(&self.ops[p.op]))
                        .sum::<usize>();
                let request = requests.last_mut().expect("one request at least");
                request.push(row);
                if request.len() >= ROWS_PER_REQUEST || bytes >= BYTES_PER_REQUEST {
                    requests.push(Vec::new());
                    bytes = 0;
                }
            }
            // One table's requests in parallel (their rows are distinct), the tables in order.
            let sent: Vec<Result<()>> = futures_util::stream::iter(requests)
                .map(|rows| self.mutate_rows(table, rows))
                .buffer_unordered(REQUESTS_IN_FLIGHT)
                .collect()
                .await;
            sent.into_iter().collect::<Result<()>>()?;
            start = end;
        }
        Ok(())
    }

    /// The entry of one row: its key and the mutations of its operations, in order.
    fn entry(&self, row: &Range<usize>) -> mutate_rows_request::Entry {
        let mut mutations = Vec::with_capacity(row.len());
        for placed in &self.placed[row.clone()] {
            push_mutations(&self.ops[placed.op], self.families, &mut mutations);
        }
        mutate_rows_request::Entry {
            row_key: self.placed[row.start].row.clone(),
            mutations,
            ..Default::default()
        }
    }

    async fn mutate_rows(&self, table: Option<Space>, mut rows: Vec<Range<usize>>) -> Result<()> {
        let mut retry = Retry::new();
        loop {
            if rows.is_empty() {
                return Ok(());
            }
            let request = MutateRowsRequest {
                table_name: self.address.table_name(table),
                entries: rows.iter().map(|row| self.entry(row)).collect(),
                ..Default::default()
            };
            let (generation, mut client) = self.backend.client();
            let outcome: Result<Vec<usize>, (Transience, String)> = async {
                let mut stream = match client.mutate_rows(request).await {
                    Ok(s) => s,
                    Err(e) => return Err((transience(&e), e.to_string())),
                };
                let mut failed = Vec::new();
                loop {
                    let response = match stream.message().await {
                        Ok(Some(response)) => response,
                        Ok(None) => break,
                        Err(status) => {
                            return Err((status_transience(&status), status.to_string()));
                        }
                    };
                    for entry in response.entries {
                        if let Some(status) = entry.status
                            && status.code != 0
                        {
                            let code = tonic::Code::from(status.code);
                            if !is_retryable(code) {
                                return Err((
                                    Transience::Permanent,
                                    format!("{code:?} {}", status.message),
                                ));
                            }
                            failed.push(entry.index as usize);
                        }
                    }
                }
                Ok(failed)
            }
            .await;
            let (transience, message) = match outcome {
                Ok(failed) if failed.is_empty() => return Ok(()),
                Ok(failed) => {
                    // Only the entries that failed, each with a code that says try again.
                    rows = failed
                        .into_iter()
                        .filter_map(|i| rows.get(i).cloned())
                        .collect();
                    (Transience::Retry, "some rows were not written".to_string())
                }
                // Whatever the stream acknowledged before it broke, the request is sent
                // again whole: applying its mutations twice is applying them once.
                Err(failure) => failure,
            };
            match self.backend.recover(&mut retry, generation, transience) {
                Some(delay) => tokio::time::sleep(delay).await,
                None => bail!(
                    "writing to {} failed{}: {message}",
                    self.address.table_id(table),
                    retry.gave_up()
                ),
            }
        }
    }
}

/// The mutations one operation makes, appended to its row's.
fn push_mutations(op: &Op, families: &[String], out: &mut Vec<Mutation>) {
    match op {
        Op::PutCell {
            family,
            qualifier,
            ts,
            value,
            ..
        } => out.push(set_cell(
            &families[*family],
            qualifier.clone(),
            (*ts as i64).saturating_mul(1000),
            value.clone(),
        )),
        Op::DeleteRowFamily { family, .. } => out.push(Mutation {
            mutation: Some(mutation::Mutation::DeleteFromFamily(
                mutation::DeleteFromFamily {
                    family_name: families[*family].clone(),
                },
            )),
        }),
        Op::Put { key, value, .. } => out.extend(put_mutations(key, value)),
        Op::Merge { key, value, .. } => {
            // One cell per distinct value: the same value written twice (a re-run, a
            // retried request) is the same cell.
            let qualifier = xxhash_rust::xxh3::xxh3_64(value).to_be_bytes().to_vec();
            out.push(set_cell(SPACE_FAMILY, qualifier, 0, value.clone()));
            if key.len() > MAX_ROW_KEY {
                out.push(set_cell(
                    SPACE_FAMILY,
                    FULL_KEY_QUALIFIER.to_vec(),
                    0,
                    key.clone(),
                ));
            }
        }
        Op::Delete { .. } => out.push(delete_row()),
    }
}

/// About what an operation adds to a request.
fn op_bytes(op: &Op) -> usize {
    match op {
        Op::PutCell {
            qualifier, value, ..
        } => 32 + qualifier.len() + value.len(),
        Op::Put { key, value, .. } | Op::Merge { key, value, .. } => 64 + key.len() + value.len(),
        Op::DeleteRowFamily { .. } | Op::Delete { .. } => 16,
    }
}

fn filter_of(filter: row_filter::Filter) -> RowFilter {
    RowFilter {
        filter: Some(filter),
    }
}

fn is_retryable(code: tonic::Code) -> bool {
    matches!(
        code,
        tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Aborted
            | tonic::Code::ResourceExhausted
            | tonic::Code::Internal
    )
}

/// RE2 escaping of bytes (family names and qualifiers in filters).
fn regex_escape(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                (b as char).to_string()
            } else {
                format!("\\x{{{b:02x}}}")
            }
        })
        .collect()
}

/// The Bigtable row key of a key: itself, or when too long its head and a hash of the
/// whole (the full key is then kept in a cell).
fn row_key(key: &[u8]) -> Vec<u8> {
    if key.len() <= MAX_ROW_KEY {
        return key.to_vec();
    }
    let mut cut = key[..MAX_ROW_KEY - 16].to_vec();
    cut.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(key).to_be_bytes());
    cut
}

fn set_cell(family: &str, qualifier: Vec<u8>, ts_micros: i64, value: Vec<u8>) -> Mutation {
    Mutation {
        mutation: Some(mutation::Mutation::SetCell(mutation::SetCell {
            family_name: family.to_string(),
            column_qualifier: qualifier,
            timestamp_micros: ts_micros,
            value,
        })),
    }
}

fn delete_row() -> Mutation {
    Mutation {
        mutation: Some(mutation::Mutation::DeleteFromRow(
            mutation::DeleteFromRow {},
        )),
    }
}

/// The mutations that set a key of a space to one value.
fn put_mutations(key: &[u8], value: &[u8]) -> Vec<Mutation> {
    let mut mutations = vec![
        delete_row(),
        set_cell(SPACE_FAMILY, Vec::new(), 0, value.to_vec()),
    ];
    if key.len() > MAX_ROW_KEY {
        mutations.push(set_cell(
            SPACE_FAMILY,
            FULL_KEY_QUALIFIER.to_vec(),
            0,
            key.to_vec(),
        ));
    }
    mutations
}

/// The key and value of a companion-table row: its cells combined.
fn space_row(space: Space, row: Vec<u8>, cells: Vec<RowCell>) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut key = row;
    let mut values: Vec<Vec<u8>> = Vec::new();
    for cell in cells {
        if cell.qualifier == FULL_KEY_QUALIFIER {
            key = cell.value;
        } else {
            values.push(cell.value);
        }
    }
    let value = match (values.len(), space.merge()) {
        (0, _) => return None,
        (1, _) | (_, None) => values.swap_remove(0),
        (_, Some(merge)) => {
            let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
            merge(&refs)?
        }
    };
    Some((key, value))
}

impl Backend for BigtableBackend {
    fn describe(&self) -> String {
        self.address.to_string()
    }

    fn exclusive_writer(&self) -> bool {
        false
    }

    fn read_rows(
        &self,
        rows: &[Sha1Key],
        filter: &CellFilter,
        visit: &mut RowVisitor<'_>,
    ) -> Result<()> {
        let row_filter = self.row_filter(filter);
        for chunk in rows.chunks(KEYS_PER_READ) {
            let request = ReadRowsRequest {
                table_name: self.address.table_name(None),
                rows: Some(RowSet {
                    row_keys: chunk.iter().map(|k| k.as_bytes().to_vec()).collect(),
                    row_ranges: Vec::new(),
                }),
                filter: Some(row_filter.clone()),
                ..Default::default()
            };
            let mut rows: Vec<(Sha1Key, Vec<RawCell>)> = Vec::new();
            self.stream(request, &mut |key, cells| {
                if let Some(key) = Sha1Key::from_slice(&key) {
                    rows.push((key, self.raw_cells(cells)));
                }
                Ok(true)
            })?;
            // Bigtable answers in key order; give the rows in the order asked.
            let mut by_key: HashMap<Sha1Key, Vec<RawCell>> = rows.into_iter().collect();
            for key in chunk {
                if let Some(cells) = by_key.remove(key)
                    && !cells.is_empty()
                    && !visit(key, cells)?
                {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn scan_rows(
        &self,
        filter: &CellFilter,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        visit: &mut RowVisitor<'_>,
    ) -> Result<()> {
        let request = ReadRowsRequest {
            table_name: self.address.table_name(None),
            rows: Some(RowSet {
                row_keys: Vec::new(),
                row_ranges: vec![range(start, end)],
            }),
            filter: Some(self.row_filter(filter)),
            ..Default::default()
        };
        self.stream(request, &mut |key, cells| {
            let Some(key) = Sha1Key::from_slice(&key) else {
                return Ok(true);
            };
            let cells = self.raw_cells(cells);
            if cells.is_empty() {
                return Ok(true);
            }
            visit(&key, cells)
        })
    }

    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let request = ReadRowsRequest {
            table_name: self.address.table_name(Some(space)),
            rows: Some(RowSet {
                row_keys: vec![row_key(key)],
                row_ranges: Vec::new(),
            }),
            ..Default::default()
        };
        let mut found = None;
        self.stream(request, &mut |row, cells| {
            found = space_row(space, row, cells).map(|(_, v)| v);
            Ok(false)
        })?;
        Ok(found)
    }

    fn scan(
        &self,
        space: Space,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut KeyVisitor<'_>,
    ) -> Result<()> {
        let start = row_key(start);
        let end = end.map(row_key);
        let request = ReadRowsRequest {
            table_name: self.address.table_name(Some(space)),
            rows: Some(RowSet {
                row_keys: Vec::new(),
                row_ranges: vec![range(Some(&start), end.as_deref())],
            }),
            ..Default::default()
        };
        self.stream(
            request,
            &mut |row, cells| match space_row(space, row, cells) {
                Some((key, value)) => visit(&key, &value),
                None => Ok(true),
            },
        )
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        // Synchronous: on the emulator, where both sides share the CPU, overlapping the
        // next batch's encoding with this one's sending measured slower (BENCHMARKS.md).
        self.runtime.block_on(Mutator::new(self, batch).send())
    }

    fn check_and_set(
        &self,
        space: Space,
        key: &[u8],
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool> {
        let mutations = match new {
            Some(value) => put_mutations(key, value),
            None => vec![delete_row()],
        };
        let family = filter_of(row_filter::Filter::FamilyNameRegexFilter(format!(
            "^{SPACE_FAMILY}$"
        )));
        let (predicate, true_mutations, false_mutations) = match expected {
            // The value is exactly `expected`: a closed range of one value.
            Some(value) => (
                filter_of(row_filter::Filter::Chain(row_filter::Chain {
                    filters: vec![
                        family,
                        filter_of(row_filter::Filter::ColumnQualifierRegexFilter(
                            b"^$".to_vec(),
                        )),
                        filter_of(row_filter::Filter::ValueRangeFilter(ValueRange {
                            start_value: Some(value_range::StartValue::StartValueClosed(
                                value.to_vec(),
                            )),
                            end_value: Some(value_range::EndValue::EndValueClosed(value.to_vec())),
                        })),
                    ],
                })),
                mutations,
                Vec::new(),
            ),
            // The key is absent: the row has no cell.
            None => (family, Vec::new(), mutations),
        };
        let request = CheckAndMutateRowRequest {
            table_name: self.address.table_name(Some(space)),
            row_key: row_key(key),
            predicate_filter: Some(predicate),
            true_mutations,
            false_mutations,
            ..Default::default()
        };
        let mut retry = Retry::new();
        loop {
            let (generation, mut client) = self.client();
            let error = match self
                .runtime
                .block_on(client.check_and_mutate_row(request.clone()))
            {
                Ok(response) => return Ok(response.predicate_matched == expected.is_some()),
                Err(e) => e,
            };
            match self.recover(&mut retry, generation, transience(&error)) {
                Some(delay) => std::thread::sleep(delay),
                None => {
                    return Err(anyhow::anyhow!("{error}")).with_context(|| {
                        format!("conditional write to {}{}", self.address, retry.gave_up())
                    });
                }
            }
            // The failed call may have been applied before the answer was lost: sent
            // again, it would find the cell changed (by itself) and report a conflict, or
            // apply again what another writer has since replaced. The cell says which.
            let now = self.get(space, key)?;
            match unknown_outcome(expected, new, now.as_deref()) {
                Some(applied) => return Ok(applied),
                None => continue,
            }
        }
    }

    fn flush(&self) -> Result<()> {
        Ok(())
    }

    /// Bigtable writes are visible as soon as they are acknowledged: nothing to publish.
    fn publish(&self) -> Result<Option<u64>> {
        Ok(None)
    }

    fn publish_if_due(&self, _interval: Duration) -> Result<()> {
        Ok(())
    }

    fn mark_inconsistent(&self) -> Result<()> {
        Ok(())
    }

    fn mark_consistent(&self) -> Result<()> {
        Ok(())
    }

    fn close(&self) -> Result<()> {
        Ok(())
    }

    fn version(&self) -> Option<u64> {
        None
    }

    fn size_on_disk(&self) -> Option<u64> {
        None
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// What the cell's value `now` says of a conditional write (from `expected` to `new`)
/// whose answer was lost: applied (`Some(true)`: the cell holds what it wrote, or it
/// deleted the cell), not applied and never will be (`Some(false)`: another writer changed
/// the cell), or not applied yet (`None`: the cell is as expected, send it again). Sound
/// because the values written conditionally are unique to their writer (a lease names its
/// owner and expiry, a dirty mark its writer's token).
fn unknown_outcome(
    expected: Option<&[u8]>,
    new: Option<&[u8]>,
    now: Option<&[u8]>,
) -> Option<bool> {
    if now == expected {
        return None;
    }
    Some(now == new)
}

/// Narrows a ReadRows request to the rows after `last` (the last row a broken stream gave,
/// `given` rows in all); false when none is left to read.
fn resume_after(request: &mut ReadRowsRequest, last: &[u8], given: i64) -> bool {
    if request.rows_limit > 0 {
        request.rows_limit -= given.min(request.rows_limit);
        if request.rows_limit == 0 {
            return false;
        }
    }
    let after = || Some(row_range::StartKey::StartKeyOpen(last.to_vec()));
    let rows = request.rows.get_or_insert_with(|| RowSet {
        row_keys: Vec::new(),
        // No row set is the whole table.
        row_ranges: vec![RowRange::default()],
    });
    rows.row_keys.retain(|k| k.as_slice() > last);
    rows.row_ranges.retain_mut(|r| {
        let ended = match &r.end_key {
            Some(row_range::EndKey::EndKeyOpen(e)) | Some(row_range::EndKey::EndKeyClosed(e)) => {
                e.as_slice() <= last
            }
            None => false,
        };
        if ended {
            return false;
        }
        let started = match &r.start_key {
            Some(row_range::StartKey::StartKeyClosed(s)) => s.as_slice() <= last,
            Some(row_range::StartKey::StartKeyOpen(s)) => s.as_slice() < last,
            None => true,
        };
        if started {
            r.start_key = after();
        }
        true
    });
    // An empty row set would be read as the whole table.
    !(rows.row_keys.is_empty() && rows.row_ranges.is_empty())
}

fn range(start: Option<&[u8]>, end: Option<&[u8]>) -> RowRange {
    RowRange {
        start_key: start
            .filter(|s| !s.is_empty())
            .map(|s| row_range::StartKey::StartKeyClosed(s.to_vec())),
        end_key: end.map(|e| row_range::EndKey::EndKeyOpen(e.to_vec())),
    }
}

/// `BIGTABLE_EMULATOR_HOST` when set: `HOST:PORT` (or `unix://PATH`), checked so that a
/// typo is an error that names the variable rather than a panic in the client library.
fn emulator_host() -> Result<Option<String>> {
    let Some(value) = std::env::var_os("BIGTABLE_EMULATOR_HOST") else {
        return Ok(None);
    };
    let host = value
        .into_string()
        .map_err(|_| anyhow::anyhow!("BIGTABLE_EMULATOR_HOST is not UTF-8"))?;
    let valid = host.starts_with("unix://")
        || (!host.is_empty()
            && format!("http://{host}")
                .parse::<tonic::transport::Uri>()
                .is_ok_and(|uri| uri.port_u16().is_some() && uri.path() == "/"));
    if !valid {
        bail!(
            "BIGTABLE_EMULATOR_HOST={host:?} is not HOST:PORT (the address the emulator prints, \
             e.g. 127.0.0.1:8086); unset it to use Google Cloud"
        );
    }
    Ok(Some(host))
}

/// Creates the files table and its companion tables with their families and GC
/// policies (max versions from the schema), or completes them: idempotent.
pub fn create_tables(address: &Address, schema: &Schema) -> Result<Vec<String>> {
    admin::create_tables(address, schema)
}

mod admin;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let a = Address::parse(Path::new("bigtable://p/i/files"))
            .unwrap()
            .unwrap();
        assert_eq!(a.table_id(None), "files");
        assert_eq!(a.table_id(Some(Space::ByDigest)), "files_capture_by_digest");
        assert_eq!(a.table_name(None), "projects/p/instances/i/tables/files");
        assert_eq!(a.to_string(), "bigtable://p/i/files");
        assert!(Address::parse(Path::new("./store")).unwrap().is_none());
        assert!(Address::parse(Path::new("bigtable://p/i")).is_err());
        assert!(Address::parse(Path::new("bigtable://p//t")).is_err());
    }

    #[test]
    fn long_keys_are_cut_and_completed_by_a_hash() {
        let short = b"org,example)/".to_vec();
        assert_eq!(row_key(&short), short);
        let long_a = vec![b'a'; 5000];
        let mut long_b = long_a.clone();
        long_b[4999] = b'b';
        assert_eq!(row_key(&long_a).len(), MAX_ROW_KEY);
        assert_ne!(row_key(&long_a), row_key(&long_b));
        assert!(row_key(&long_a).starts_with(&long_a[..100]));
    }

    #[test]
    fn a_broken_stream_resumes_after_its_last_row() {
        let mut by_keys = ReadRowsRequest {
            rows: Some(RowSet {
                row_keys: vec![b"c".to_vec(), b"a".to_vec(), b"b".to_vec()],
                row_ranges: Vec::new(),
            }),
            ..Default::default()
        };
        assert!(resume_after(&mut by_keys, b"b", 2));
        assert_eq!(by_keys.rows.as_ref().unwrap().row_keys, vec![b"c".to_vec()]);
        assert!(!resume_after(&mut by_keys, b"c", 1), "nothing left");

        let mut ranged = ReadRowsRequest {
            rows: Some(RowSet {
                row_keys: Vec::new(),
                row_ranges: vec![range(Some(b"b"), Some(b"d")), range(Some(b"x"), None)],
            }),
            ..Default::default()
        };
        assert!(resume_after(&mut ranged, b"bb", 1));
        let ranges = &ranged.rows.as_ref().unwrap().row_ranges;
        assert_eq!(
            ranges[0].start_key,
            Some(row_range::StartKey::StartKeyOpen(b"bb".to_vec()))
        );
        assert_eq!(
            ranges[1].start_key,
            Some(row_range::StartKey::StartKeyClosed(b"x".to_vec())),
            "a range not reached yet is kept whole"
        );
        assert!(resume_after(&mut ranged, b"y", 5));
        assert_eq!(ranged.rows.as_ref().unwrap().row_ranges.len(), 1);

        let mut whole = ReadRowsRequest {
            rows_limit: 3,
            ..Default::default()
        };
        assert!(resume_after(&mut whole, b"k", 2));
        assert_eq!(whole.rows_limit, 1);
        assert_eq!(
            whole.rows.as_ref().unwrap().row_ranges[0].start_key,
            Some(row_range::StartKey::StartKeyOpen(b"k".to_vec()))
        );
        assert!(!resume_after(&mut whole, b"l", 1), "the limit is reached");
    }

    #[test]
    fn a_lost_answer_to_a_conditional_write_is_read_from_the_cell() {
        let (old, mine, theirs) = (Some(&b"old"[..]), Some(&b"mine"[..]), Some(&b"theirs"[..]));
        assert_eq!(unknown_outcome(old, mine, old), None, "not applied: again");
        assert_eq!(unknown_outcome(old, mine, mine), Some(true), "applied");
        assert_eq!(unknown_outcome(old, mine, theirs), Some(false), "lost");
        assert_eq!(unknown_outcome(None, mine, None), None);
        assert_eq!(unknown_outcome(None, mine, mine), Some(true));
        assert_eq!(unknown_outcome(old, None, None), Some(true), "deleted");
        assert_eq!(unknown_outcome(old, None, theirs), Some(false));
    }

    #[test]
    fn transport_failures_are_retried_on_a_new_channel() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let reset = tonic::Status::from_error(Box::new(io));
        assert_eq!(status_transience(&reset), Transience::Reconnect);
        assert_eq!(
            status_transience(&tonic::Status::cancelled("")),
            Transience::Reconnect
        );
        assert_eq!(
            status_transience(&tonic::Status::unavailable("")),
            Transience::Retry
        );
        assert_eq!(
            status_transience(&tonic::Status::not_found("")),
            Transience::Permanent
        );
        assert_eq!(
            status_transience(&tonic::Status::unknown("from the server")),
            Transience::Permanent
        );
        let mut retry = Retry::new();
        let delays: Vec<Duration> =
            std::iter::from_fn(|| retry.next_delay(Transience::Retry)).collect();
        assert_eq!(delays.len() as u32, ATTEMPTS - 1, "capped");
        assert!(delays.iter().all(|d| *d <= MAX_DELAY));
        assert!(delays[3] >= FIRST_DELAY * 4, "exponential: {delays:?}");
        assert_eq!(Retry::new().next_delay(Transience::Permanent), None);
    }

    #[test]
    fn regex_escaping() {
        assert_eq!(regex_escape(b"file"), "file");
        assert_eq!(regex_escape(b"a.b"), "a\\x{2e}b");
    }
}
