//! Wayback-style capture queries: the CDX server API of pywb and IA's wayback-cdx-server
//! over the store's capture key space, shared by `sediment captures` and `sediment serve`.
//!
//! [`query`] turns parameters into a key range and the steps to apply; [`run()`] applies
//! them while streaming captures from a [`run::CaptureSource`]; [`record`] writes each
//! capture as the CDX line `sediment cdx` would write for its WARC record; [`scan`] reads
//! key ranges of the store.

pub mod query;
pub mod record;
pub mod run;
pub mod scan;

pub use query::{CaptureQuery, QueryError, QueryLimits};
pub use record::{CdxRecord, Field};
pub use run::{CaptureSource, run, run_until};
pub use scan::StoreCaptures;
