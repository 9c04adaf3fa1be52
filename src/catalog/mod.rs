//! The bibliographic catalog that the `match0` stage matches files against.
//!
//! * [`record`]: catalog records and the input formats (Crossref API works, fatcat
//!   releases, bibjson);
//! * [`normalize`]: folding titles to tokens and keys, surnames, DOIs;
//! * [`index`]: the catalog's key space in the store (records by id, DOI, title key and
//!   title word).

pub mod index;
pub mod normalize;
pub mod record;

pub use index::{Added, Catalog, CatalogWriter};
pub use record::{CatalogRecord, parse_record};
