//! Sediment: web archives (WARC, CDX) into a content-addressed wide-column store on
//! RocksDB, and from there into JSON lines, SQLite crawl/summary databases and word
//! indexes. See ARCHITECTURE.md for the data model.
//!
//! Modules follow the data flow: inputs (`input`, `warc`, `cdx`) become captures
//! (`capture`), the store (`store`, shaped by `schema` and `codec`) keeps them, outputs
//! (`jsonl`, projections) read them back; `commands` holds one short recipe per subcommand.

pub mod capture;
pub mod catalog;
pub mod cdx;
pub mod cli;
pub mod codec;
pub mod columnar;
pub mod commands;
pub mod extsort;
pub mod filter;
pub mod grobid;
pub mod html;
pub mod ingest;
pub mod input;
pub mod jsonl;
pub mod key;
pub mod matching;
pub mod mime;
pub mod payload;
pub mod project;
pub mod report;
pub mod scaleout;
pub mod schema;
pub mod search;
pub mod serve;
pub mod stage;
pub mod store;
pub mod surt;
pub mod tei;
pub(crate) mod wacz;
pub mod warc;
pub mod wayback;

/// What a unit test needs and may lack, and strict mode: the integration tests' helpers.
#[cfg(test)]
#[path = "../tests/common/prerequisites.rs"]
pub(crate) mod prerequisites;
