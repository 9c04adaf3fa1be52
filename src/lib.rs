//! Sediment: web archives (WARC, CDX) into a content-addressed wide-column store on
//! RocksDB, and from there into JSON lines, SQLite crawl/summary databases and word
//! indexes. See DESIGN.md for the data model.

pub mod cdx;
pub mod key;
pub mod mime;
pub mod surt;
