//! Projections of the store into other shapes: the crawl and summary SQLite databases
//! and the word indexes of older engines. They share the base tables (`base`) and read
//! captures and bodies the same way (`source`).

pub mod base;
pub mod budget;
pub mod bulk_load;
pub mod checkpoint;
pub mod crawl;
pub mod exit_code;
pub mod identity;
pub mod jdbm;
pub mod limits;
pub mod locust;
pub mod originals;
pub mod run;
pub mod signals;
pub mod source;
pub mod summary;
pub mod tokenize;
mod tokenize_tables;
pub mod wordindex;
