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

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use sediment::{CaptureQuery, CdxField, Row, Sha1Key, Store as Inner};

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

/// A row as `{family: {qualifier: value}}`, in schema order, values decoded as
/// `sediment get` shows them (cells that do not decode are left out, as `get` leaves
/// them out): made as JSON and loaded by Python's `json`, so that values are the types
/// `json.loads` gives for `get`'s output.
fn row_dict<'py>(
    py: Python<'py>,
    loads: &Bound<'py, PyAny>,
    json: &[u8],
) -> PyResult<Bound<'py, PyDict>> {
    loads
        .call1((PyBytes::new(py, json),))?
        .cast_into::<PyDict>()
        .map_err(Into::into)
}

/// The JSON of [`row_dict`].
fn row_json(row: &Row) -> Vec<u8> {
    let mut families = serde_json::Map::new();
    for cell in &row.cells {
        let cells = families
            .entry(cell.family.clone())
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let serde_json::Value::Object(cells) = cells {
            cells.insert(cell.qualifier.clone(), cell.value.clone());
        }
    }
    serde_json::to_vec(&families).unwrap_or_default()
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
            .detach(|| store.row(&key).map(|row| row.as_ref().map(row_json)))
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
            let limit = usize::try_from(limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
            for row in store.rows(&prefix).take(limit) {
                let row = row?;
                if tx.send(Ok((row.key.0, row_json(&row)))).is_err()
                    || cancel.load(Ordering::Relaxed)
                {
                    break;
                }
            }
            Ok(())
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
        let mut query = CaptureQuery::url(url);
        let limit = limit.map(|n| n.to_string());
        let optional = [
            ("matchType", match_type),
            ("from", from_ts),
            ("to", to),
            ("limit", limit.as_deref()),
            ("closest", closest),
            ("sort", reverse.then_some("reverse")),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                query = query.param(name, value);
            }
        }
        for filter in filter.map(Strings::into_vec).unwrap_or_default() {
            query = query.param("filter", &filter);
        }
        for collapse in collapse.map(Strings::into_vec).unwrap_or_default() {
            query = query.param("collapse", &collapse);
        }
        // The fields and their order, as the CDX server's `fl` takes them.
        let fields: Vec<CdxField> = match fields.map(Strings::into_vec) {
            None => CdxField::ALL.to_vec(),
            Some(names) => names
                .iter()
                .flat_map(|n| n.split(','))
                .map(|name| {
                    CdxField::parse(name.trim())
                        .ok_or_else(|| error(format!("unknown field {name:?} in fl")))
                })
                .collect::<PyResult<_>>()?,
        };
        query.check().map_err(error)?;
        let names = fields.iter().map(|f| f.ia_name()).collect();
        let store = self.inner.clone();
        let stream = Stream::start(move |tx, cancel| {
            let query = query.cancel_when(cancel);
            store.for_each_capture(&query, |capture| {
                let values = fields
                    .iter()
                    .map(|f| capture.get(*f).unwrap_or_else(|| "-".to_string()))
                    .collect();
                tx.send(Ok(values)).is_ok()
            })?;
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
        work: impl FnOnce(&Sender<Message<T>>, Arc<AtomicBool>) -> sediment::Result<()> + Send + 'static,
    ) -> Stream<T> {
        let (tx, rx) = crossbeam_channel::bounded(CHANNEL_DEPTH);
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let worker = std::thread::spawn(move || {
            if let Err(e) = work(&tx, flag.clone())
                && !flag.load(Ordering::Relaxed)
            {
                let _ = tx.send(Err(e.to_string()));
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
