//! The Python module `sediment`: a store opened read-only (its newest published
//! version), rows by SHA-1, the wayback capture query of `sediment captures`, and row
//! scans by key prefix.
//!
//! Everything here calls the library the way the CLI does, so that Python sees what the
//! commands print: a row is `sediment get`'s JSON object regrouped by family, a capture is
//! the CDX record `sediment captures --output json` shows. Reads run with the
//! interpreter released; the two iterators stream from a worker thread through a small
//! bounded channel, so a listing as long as the store holds a few dozen items in memory
//! and stops reading when the iterator is dropped.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use sediment::capture::Capture;
use sediment::jsonl::write_row;
use sediment::key::Sha1Key;
use sediment::store::Store as Inner;
use sediment::store::cells::Projection;
use sediment::wayback::query::KeyRange;
use sediment::wayback::{CaptureQuery, CaptureSource, CdxRecord, QueryLimits, StoreCaptures};

create_exception!(
    sediment,
    SedimentError,
    PyException,
    "An error of the store or of a query, with the message the CLI prints."
);

/// Items a worker may be ahead of the Python loop that takes them.
const CHANNEL_DEPTH: usize = 64;

/// The message `sediment` prints after `error:` (the whole cause chain).
fn error(e: impl std::fmt::Display) -> PyErr {
    SedimentError::new_err(format!("{e:#}"))
}

/// Raw 20 bytes, or a text spelling `sediment get` accepts (base32, hex, `sha1:BASE32`)
/// as `str` or ASCII `bytes`.
fn parse_key(key: &Bound<'_, PyAny>) -> PyResult<Sha1Key> {
    if let Ok(bytes) = key.cast::<PyBytes>() {
        let bytes = bytes.as_bytes();
        if let Some(key) = Sha1Key::from_slice(bytes) {
            return Ok(key);
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| error("a key in bytes is 20 raw bytes or an ASCII spelling"))?;
        return Sha1Key::parse(text).map_err(error);
    }
    if let Ok(text) = key.cast::<PyString>() {
        return Sha1Key::parse(&text.to_cow()?).map_err(error);
    }
    Err(PyTypeError::new_err(
        "a key is bytes (20 raw bytes) or str (base32, hex or sha1:BASE32)",
    ))
}

/// `sediment get`'s JSON object of a row (`{"key":…,"sha1hex":…,"family:qualifier":value}`)
/// as `{family: {qualifier: value}}`, in schema order. Cells that do not decode are left
/// out, as `get` leaves them out.
fn row_dict<'py>(
    py: Python<'py>,
    loads: &Bound<'py, PyAny>,
    json: &[u8],
) -> PyResult<Bound<'py, PyDict>> {
    let flat = loads.call1((PyBytes::new(py, json),))?;
    let flat = flat.cast::<PyDict>()?;
    let row = PyDict::new(py);
    for (name, value) in flat.iter() {
        let name: String = name.extract()?;
        // HBase family names cannot hold a colon; qualifiers may.
        let Some((family, qualifier)) = name.split_once(':') else {
            continue; // "key" and "sha1hex"
        };
        let cells = match row.get_item(family)? {
            Some(cells) => cells.cast_into::<PyDict>()?,
            None => {
                let cells = PyDict::new(py);
                row.set_item(family, &cells)?;
                cells
            }
        };
        cells.set_item(qualifier, value)?;
    }
    Ok(row)
}

fn json_loads(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("json")?.getattr("loads")
}

/// A store opened read-only: the newest version its writer has published, as
/// `sediment captures` and `sediment serve` open it. Never blocks or disturbs a writer.
/// It keeps reading the version it opened; open the store again to see a newer one.
#[pyclass(module = "sediment", frozen)]
struct Store {
    inner: Arc<Inner>,
    path: PathBuf,
}

#[pymethods]
impl Store {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| Inner::open_reader(&path)).map_err(error)?;
        Ok(Store {
            inner: Arc::new(inner),
            path,
        })
    }

    /// The store as opened.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The published version this reader sees (None where the backend has no versions).
    #[getter]
    fn version(&self) -> Option<u64> {
        self.inner.version()
    }

    fn __repr__(&self) -> String {
        format!("sediment.Store({:?})", self.path.display().to_string())
    }

    /// The row of a SHA-1 as `{family: {qualifier: value}}`, values decoded as
    /// `sediment get` shows them; None when the store has no row for it.
    fn row<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let key = parse_key(key)?;
        let store = &self.inner;
        let json = py
            .detach(|| -> anyhow::Result<Option<Vec<u8>>> {
                let projection = Projection::all(store.schema());
                Ok(store
                    .read_row(&key, &projection)?
                    .map(|row| row_json(store, &row)))
            })
            .map_err(error)?;
        json.map(|json| row_dict(py, &json_loads(py)?, &json))
            .transpose()
    }

    /// Rows whose raw key starts with `prefix` (bytes), in key order, as `(key, row)`
    /// pairs: `key` the 20 raw bytes, `row` as [`Store::row`] gives it.
    #[pyo3(signature = (prefix = None, limit = None))]
    fn scan(&self, py: Python<'_>, prefix: Option<&[u8]>, limit: Option<u64>) -> PyResult<Rows> {
        let prefix = prefix.unwrap_or_default().to_vec();
        let store = self.inner.clone();
        let stream = Stream::start(move |tx, cancel| {
            let projection = Projection::all(store.schema());
            let end = prefix_end(&prefix);
            let start = (!prefix.is_empty()).then_some(prefix.as_slice());
            let mut left = limit.unwrap_or(u64::MAX);
            if left == 0 {
                return Ok(());
            }
            store.scan_rows(&projection, start, end.as_deref(), |row| {
                let item = (row.key.0, row_json(&store, &row));
                left -= 1;
                Ok(tx.send(Ok(item)).is_ok() && left > 0 && !cancel.load(Ordering::Relaxed))
            })
        });
        Ok(Rows {
            stream,
            loads: json_loads(py)?.unbind(),
        })
    }

    /// The captures of a URL, as `sediment captures --url` selects them, each a dict of
    /// the CDX fields by IA's names (`urlkey`, `timestamp`, `original`, `mimetype`,
    /// `statuscode`, `digest`, `length`, `offset`, `filename`, …), values as strings
    /// with `-` for absent, as `--output json` shows them.
    ///
    /// `match_type`: exact, prefix, host or domain (or a wildcard in `url`). `from_ts`,
    /// `to`: 1 to 14 digits, inclusive. `limit`: at most N, negative for the last N.
    /// `filter`, `collapse`, `closest`, `reverse` and `fields` are the CDX server's
    /// `filter`, `collapse`, `closest`, `sort=reverse` and `fl`.
    #[pyo3(signature = (
        url, match_type = None, from_ts = None, to = None, limit = None,
        *, filter = None, collapse = None, closest = None, reverse = false, fields = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn captures(
        &self,
        url: &str,
        match_type: Option<&str>,
        from_ts: Option<&str>,
        to: Option<&str>,
        limit: Option<i64>,
        filter: Option<Strings>,
        collapse: Option<Strings>,
        closest: Option<&str>,
        reverse: bool,
        fields: Option<Strings>,
    ) -> PyResult<Captures> {
        let limit = limit.map(|n| n.to_string());
        let fields = fields.map(|f| f.into_vec().join(","));
        let filter = filter.map(Strings::into_vec).unwrap_or_default();
        let collapse = collapse.map(Strings::into_vec).unwrap_or_default();
        let mut params = vec![("url", url), ("output", "jsonl")];
        let optional = [
            ("matchType", match_type),
            ("from", from_ts),
            ("to", to),
            ("limit", limit.as_deref()),
            ("closest", closest),
            ("sort", reverse.then_some("reverse")),
            ("fl", fields.as_deref()),
        ];
        params.extend(
            optional
                .into_iter()
                .filter_map(|(name, value)| Some((name, value?))),
        );
        params.extend(filter.iter().map(|f| ("filter", f.as_str())));
        params.extend(collapse.iter().map(|c| ("collapse", c.as_str())));
        // As `sediment captures`: a listing may be as long as the store; only the windows
        // (the last N, the closest sort) stay bounded.
        let limits = QueryLimits {
            max_limit: u64::MAX >> 1,
            ..QueryLimits::default()
        };
        let query = CaptureQuery::from_params(params, &limits).map_err(error)?;
        let names = query.fields.iter().map(|f| f.ia_name()).collect();
        let store = self.inner.clone();
        let stream = Stream::start(move |tx, cancel| {
            let source = Cancellable {
                inner: StoreCaptures::new(&store),
                cancel,
            };
            let mut sink = CdxSink {
                tx,
                query: &query,
                line: Vec::new(),
            };
            sediment::wayback::run(&query, &source, &mut sink)?;
            sink.flush()?;
            Ok(())
        });
        Ok(Captures { stream, names })
    }
}

/// A parameter that may be repeated: one string or a sequence of them.
#[derive(FromPyObject)]
enum Strings {
    One(String),
    Many(Vec<String>),
}

impl Strings {
    fn into_vec(self) -> Vec<String> {
        match self {
            Strings::One(one) => vec![one],
            Strings::Many(many) => many,
        }
    }
}

/// `sediment get`'s JSON object of a row.
fn row_json(store: &Inner, row: &sediment::store::cells::Row) -> Vec<u8> {
    let mut json = Vec::new();
    write_row(store.schema(), row, false, &mut json, &mut Vec::new());
    json
}

/// The smallest key above every key that starts with `prefix` (None: no bound).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last != 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// What a worker sends: an item, or the error that ended its work.
type Message<T> = Result<T, String>;

/// The receiving end of a worker: the Python iterator's state.
struct Stream<T> {
    rx: Receiver<Message<T>>,
    cancel: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Stream<T> {
    /// Runs `work` on a thread that sends its items; its error, if any, comes last.
    fn start(
        work: impl FnOnce(&Sender<Message<T>>, &AtomicBool) -> anyhow::Result<()> + Send + 'static,
    ) -> Stream<T> {
        let (tx, rx) = crossbeam_channel::bounded(CHANNEL_DEPTH);
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let worker = std::thread::spawn(move || {
            if let Err(e) = work(&tx, &flag)
                && !flag.load(Ordering::Relaxed)
            {
                let _ = tx.send(Err(format!("{e:#}")));
            }
        });
        Stream {
            rx,
            cancel,
            worker: Some(worker),
        }
    }

    /// The next item, waiting for the worker with the interpreter released.
    fn next(&mut self, py: Python<'_>) -> PyResult<Option<T>> {
        if self.worker.is_none() {
            return Ok(None);
        }
        let rx = &self.rx;
        match py.detach(|| rx.recv()) {
            Ok(Ok(item)) => Ok(Some(item)),
            Ok(Err(message)) => {
                self.stop();
                Err(SedimentError::new_err(message))
            }
            // The worker hung up: it is done, or it panicked (then its items are not all
            // there, which must not pass for the end).
            Err(_) => match self.worker.take().map(JoinHandle::join) {
                Some(Err(_)) => Err(SedimentError::new_err(
                    "the reading thread stopped on a bug: the listing is incomplete",
                )),
                _ => Ok(None),
            },
        }
    }
}

impl<T> Stream<T> {
    /// Stops the worker: it sees the flag at its next read, or its next send fails.
    fn stop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.rx = crossbeam_channel::never();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl<T> Drop for Stream<T> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Iterator of `(key, row)` pairs from [`Store::scan`].
#[pyclass(module = "sediment")]
struct Rows {
    stream: Stream<([u8; 20], Vec<u8>)>,
    loads: Py<PyAny>,
}

#[pymethods]
impl Rows {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyDict>)>> {
        let Some((key, json)) = self.stream.next(py)? else {
            return Ok(None);
        };
        let row = row_dict(py, self.loads.bind(py), &json)?;
        Ok(Some((PyBytes::new(py, &key), row)))
    }

    /// Stops the scan before its end (also done when the iterator is dropped).
    fn close(&mut self) {
        self.stream.stop();
    }
}

/// Iterator of capture dicts from [`Store::captures`].
#[pyclass(module = "sediment")]
struct Captures {
    stream: Stream<Vec<String>>,
    names: Vec<&'static str>,
}

#[pymethods]
impl Captures {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(values) = self.stream.next(py)? else {
            return Ok(None);
        };
        let capture = PyDict::new(py);
        for (name, value) in self.names.iter().zip(values) {
            capture.set_item(name, value)?;
        }
        Ok(Some(capture))
    }

    /// Stops the query before its end (also done when the iterator is dropped).
    fn close(&mut self) {
        self.stream.stop();
    }
}

/// The store's captures, read until the Python iterator is dropped: a query that reads
/// much and yields little (the last N, a filter that rarely matches) stops too.
struct Cancellable<'a> {
    inner: StoreCaptures<'a>,
    cancel: &'a AtomicBool,
}

impl CaptureSource for Cancellable<'_> {
    fn scan<'b>(
        &'b self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = anyhow::Result<Capture>> + 'b> {
        let mut captures = self.inner.scan(range, reverse);
        let cancel = self.cancel;
        Box::new(std::iter::from_fn(move || {
            if cancel.load(Ordering::Relaxed) {
                return Some(Err(anyhow::anyhow!("the iterator was closed")));
            }
            captures.next()
        }))
    }
}

/// Takes the query's output (`jsonl`: one capture per line, every stored detail) and
/// sends each capture's CDX fields, computed as the `json` output computes them.
struct CdxSink<'a> {
    tx: &'a Sender<Message<Vec<String>>>,
    query: &'a CaptureQuery,
    line: Vec<u8>,
}

impl CdxSink<'_> {
    fn send_line(&mut self, line: &[u8]) -> io::Result<()> {
        let capture: Capture = serde_json::from_slice(line)
            .map_err(|e| io::Error::other(format!("a capture line did not parse: {e}")))?;
        let record = CdxRecord::of(&capture);
        let values = self
            .query
            .fields
            .iter()
            .map(|f| record.shown(*f).to_string())
            .collect();
        self.tx
            .send(Ok(values))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the iterator was closed"))
    }
}

impl Write for CdxSink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for part in buf.split_inclusive(|&b| b == b'\n') {
            self.line.extend_from_slice(part);
            if let Some(line) = self.line.strip_suffix(b"\n") {
                let line = line.to_vec();
                self.line.clear();
                self.send_line(&line)?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.send_line(&line)?;
        }
        Ok(())
    }
}

/// Opens the newest published version of the store at `path` for reading.
#[pyfunction]
fn open(py: Python<'_>, path: PathBuf) -> PyResult<Store> {
    Store::new(py, path)
}

#[pymodule(name = "sediment")]
fn sediment_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SedimentError", m.py().get_type::<SedimentError>())?;
    m.add_class::<Store>()?;
    m.add_class::<Rows>()?;
    m.add_class::<Captures>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    Ok(())
}
