//! Ingestion beyond one machine, the way HBase bulk loads are built: a distributed engine
//! (Apache Spark, `scripts/spark/sediment_spark.py`) runs Sediment on every input in
//! parallel and shuffles what it prints by key; Sediment writes each key range as sorted
//! SST files, and the store's one writer ingests them atomically.
//!
//! ```text
//! input ──extract──> record lines ──shuffle by key range, sort──> write-sst ──> SST files
//!   (one task per input, or per part of a large CDX)      (one task per range)      │
//!                                                                   ingest-sst <────┘
//!                          (the driver: ingest, derive, record the inputs, publish)
//! ```
//!
//! - [`records`]: the line format between the stages;
//! - [`extract`]: one input into records, with the parsers of `import-warc`/`backfill-cdx`;
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
pub mod records;
pub mod sst;
