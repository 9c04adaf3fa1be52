//! Sediment: web archives (WARC, CDX) into a content-addressed wide-column store on
//! RocksDB, and out again as JSON lines, capture queries, SQLite databases and word
//! indexes. The `sediment` program is this library's command line; programs use the
//! same code through the API below.
//!
//! # The data flow
//!
//! ```text
//!  WARC files ──import_warc──┐                    ┌──► row(key), rows(prefix)
//!  CDX files ───import_cdx───┼──► Store ──────────┼──► for_each_capture(query)
//!  JSON lines ─import_jsonl──┘  files table       └──► export_jsonl ──► JSON lines
//!                               (one row per payload SHA-1: families f, file,
//!                                grobid0, match0) + captures in URL/time order
//! ```
//!
//! Every payload is keyed by the 20-byte SHA-1 of its bytes ([`Sha1Key`]); its row holds
//! what is known of the file (`file:mime`, `file:size`, the first capture in `f:c`, …).
//! Every capture (a URL fetched at a time, found in a WARC or CDX line) is kept in the
//! wayback order of the capture index, queried with [`CaptureQuery`].
//!
//! # Example
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let store_dir = dir.path().join("store");
//! # let warc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crawl/crawl1.warc.gz");
//! use sediment::{CaptureQuery, IngestOptions, Store};
//!
//! let store = Store::create(&store_dir)?;
//! let report = store.import_warc(&[warc], &IngestOptions::default())?;
//! assert!(report.count("captures") > 0);
//! store.close()?;
//!
//! let store = Store::open_reader(&store_dir)?;
//! for capture in store.captures(&CaptureQuery::url("http://127.0.0.1:47213/"))? {
//!     let digest = capture.digest.as_deref().unwrap_or("-");
//!     println!("{} {} {}", capture.timestamp, capture.url, digest);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The parsers are public too: [`warc::WarcReader`] (records with their offsets, every
//! problem with its position), [`cdx::CdxParser`] (the CDX dialects) and [`surt::surt`]
//! (URL keys as the Python `surt` package makes them).

mod api;
mod error;
mod export;

pub use api::{
    Capture, CaptureQuery, Cell, IngestOptions, MatchType, Problem, Row, Rows, RunReport, Store,
};
pub use error::{Error, Result};
pub use key::{KeyError, Sha1Key};
/// A field of a CDX line, by the names of IA's wayback CDX server and pywb.
pub use wayback::record::Field as CdxField;

pub mod cdx;
pub mod surt;
pub mod warc;

/// Runs the `sediment` command line on the process's arguments (what `src/main.rs`
/// does).
pub fn run_cli() -> std::process::ExitCode {
    // The PDF text child (see doctext::pdf): not a command, and before anything else.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .take(2)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.first().map(String::as_str) == Some(doctext::pdf::HELPER_COMMAND) {
        return doctext::pdf::helper_main(&args[1..]);
    }
    cli::main()
}

mod capture;
mod catalog;
mod cli;
mod codec;
#[cfg(feature = "parquet")]
mod columnar;
mod commands;
mod doctext;
mod extsort;
mod filter;
mod grobid;
mod ingest;
mod input;
mod jsonl;
mod key;
mod matching;
mod mime;
mod payload;
mod project;
mod report;
mod scaleout;
mod schema;
#[cfg(feature = "server")]
mod serve;
mod stage;
mod store;
mod text;
mod wacz;
mod wayback;

// Not part of the API (hidden from its documentation): HTML analysis, the summary's full
// text search and GROBID TEI conversion, exercised directly by the project's tests, fuzz
// targets and benchmarks through `internals`.
#[doc(hidden)]
pub mod html;
#[doc(hidden)]
pub mod search;
#[doc(hidden)]
pub mod tei;

/// Not part of the API: the internals that the project's own tests, fuzz targets and
/// benchmarks exercise directly. Nothing here is stable.
#[doc(hidden)]
pub mod internals {
    pub use crate::codec::{canonical_json, is_canonical_json};
    pub use crate::html;
    pub use crate::jsonl::{parse_row, parse_row_as_value};
    pub use crate::schema::{EMBEDDED_SCHEMA, Schema};
    pub use crate::search;
    #[cfg(feature = "server")]
    pub use crate::serve::parse_request_for_fuzzing;
    pub use crate::store::captures::count_captures;
    pub use crate::store::cells::Projection;
    pub use crate::store::directory::{latest_version, published_versions, version_dir};
    pub use crate::store::writer::Writer;
    pub use crate::tei;

    /// The store as the crate sees it (the API's [`crate::Store`] wraps it).
    pub use crate::store::Store;
}

/// What a unit test needs and may lack, and strict mode: the integration tests' helpers.
#[cfg(test)]
#[path = "../tests/common/prerequisites.rs"]
pub(crate) mod prerequisites;
