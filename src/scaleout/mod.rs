//! Ingestion beyond one machine, the way HBase bulk loads are built: a distributed engine
//! (Apache Spark, `scripts/spark/sediment_spark.py`) runs Sediment on every input in
//! parallel and moves what it prints by key range; Sediment writes each key range as
//! sorted SST files, and the store's one writer ingests them atomically.
//!
//! ```text
//! input ──extract──> record lines ──split-ranges──> one share per range ──engine shuffle──┐
//!   (one task per input, or per part of a large CDX)                                       │
//!   SST files <──write-sst --sort (one task per range: sort the shares, write)  <─────────┘
//!       └──> ingest-sst (the driver: ingest, derive, record the inputs, publish)
//! ```
//!
//! The engine moves blocks of lines and never parses, compares or sorts a record: the cost
//! of a Python task or element is paid per block of megabytes, not per capture.
//!
//! - [`records`]: the line format between the stages;
//! - [`extract`]: one input into records, with the parsers of `import-warc`/`backfill-cdx`;
//! - [`ranges`]: records cut into the shares of key ranges, and a range's shares sorted;
//! - [`sst`]: one sorted key range into SST files (and, on an empty store, its file rows);
//! - [`ingest`]: the ranges into the store, checked whole first;
//! - [`mutations`]: on a shared store (Bigtable), a range written straight into the
//!   table by its own task, which then derives its digests' rows under the table's lease
//!   (`write-range`); the driver only records the inputs (`ingest-sst --records-written`).
//!
//! The store ends up as a single-process import of the same inputs leaves it (the tests
//! compare exports byte for byte), whatever the number of tasks or ranges, and a task that
//! failed and ran again changes nothing: the engine keeps the output of one attempt, each
//! attempt writes its own directory, and the captures are merged idempotently anyway.

pub mod extract;
pub mod ingest;
pub mod mutations;
pub mod ranges;
pub mod records;
pub mod sst;
