//! The catalog's key space in the store (column family `catalog`).
//!
//! | key | value |
//! |---|---|
//! | `r\0<id>` | the record, canonical JSON |
//! | `d\0<doi>\0<id>` | empty: records by DOI (lower case) |
//! | `t\0<title key>\0<id>` | empty: records by normalized title key |
//! | `w\0<token>\0<id>` | empty: records by title word (stop words left out) |
//!
//! Index entries carry the id, so several records may share a DOI or a title and
//! loading the same record twice changes nothing. When a record is replaced, the index
//! entries of its old version are deleted in the same batch.

use std::collections::HashMap;

use anyhow::{Context, Result};

use super::normalize::{is_stop_word, key_of_tokens, tokens};
use super::record::CatalogRecord;
use crate::store::Store;
use crate::store::backend::{Batch, Op, Space};

const RECORD: u8 = b'r';
const BY_DOI: u8 = b'd';
const BY_TITLE: u8 = b't';
const BY_WORD: u8 = b'w';

/// Batches are written once they hold this many bytes.
const BATCH_BYTES: usize = 4 << 20;

fn index_prefix(kind: u8, value: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(value.len() + 3);
    key.push(kind);
    key.push(0);
    key.extend_from_slice(value.as_bytes());
    key.push(0);
    key
}

fn index_key(kind: u8, value: &str, id: &str) -> Vec<u8> {
    let mut key = index_prefix(kind, value);
    key.extend_from_slice(id.as_bytes());
    key
}

fn record_key(id: &str) -> Vec<u8> {
    let mut key = vec![RECORD, 0];
    key.extend_from_slice(id.as_bytes());
    key
}

/// The words a record is found by: distinct folded title tokens of two or more
/// characters that are not stop words.
pub fn index_words(title_tokens: &[String]) -> Vec<&str> {
    let mut words: Vec<&str> = title_tokens
        .iter()
        .map(String::as_str)
        .filter(|t| t.chars().count() >= 2 && !is_stop_word(t))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// Every index key of a record.
fn index_keys(record: &CatalogRecord) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    if let Some(doi) = &record.doi {
        keys.push(index_key(BY_DOI, doi, &record.id));
    }
    if let Some(title) = &record.title {
        let toks = tokens(title);
        let key = key_of_tokens(&toks);
        if !key.is_empty() {
            keys.push(index_key(BY_TITLE, &key, &record.id));
        }
        for word in index_words(&toks) {
            keys.push(index_key(BY_WORD, word, &record.id));
        }
    }
    keys
}

/// Read access to the catalog.
pub struct Catalog<'s> {
    store: &'s Store,
}

impl<'s> Catalog<'s> {
    pub fn new(store: &'s Store) -> Catalog<'s> {
        Catalog { store }
    }

    pub fn get(&self, id: &str) -> Result<Option<CatalogRecord>> {
        match self.store.get(Space::Catalog, &record_key(id))? {
            None => Ok(None),
            Some(bytes) => Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
                format!("catalog record {id:?} in the store is not valid")
            })?)),
        }
    }

    /// Ids under an index prefix, at most `cap + 1` of them (so a caller can tell that
    /// there are more than `cap`), in key order.
    fn ids_under(&self, prefix: &[u8], cap: usize) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        self.store
            .scan_prefix(Space::Catalog, prefix, &mut |key, _| {
                if let Some(id) = key.strip_prefix(prefix) {
                    ids.push(String::from_utf8_lossy(id).into_owned());
                }
                Ok(ids.len() <= cap)
            })?;
        Ok(ids)
    }

    /// Records with this DOI (normalized, lower case).
    pub fn by_doi(&self, doi: &str) -> Result<Vec<CatalogRecord>> {
        let ids = self.ids_under(&index_prefix(BY_DOI, doi), 100)?;
        let mut records = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(record) = self.get(&id)? {
                records.push(record);
            }
        }
        Ok(records)
    }

    /// Ids of records with this title key; more than `cap` entries means "more than cap".
    pub fn ids_by_title_key(&self, key: &str, cap: usize) -> Result<Vec<String>> {
        if key.is_empty() {
            return Ok(Vec::new());
        }
        self.ids_under(&index_prefix(BY_TITLE, key), cap)
    }

    /// Ids of records whose title has this word; more than `cap` entries means the word
    /// is too common to select by.
    pub fn ids_by_word(&self, word: &str, cap: usize) -> Result<Vec<String>> {
        self.ids_under(&index_prefix(BY_WORD, word), cap)
    }

    /// True when no record has been loaded.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.ids_under(&[RECORD, 0], 0)?.is_empty())
    }

    /// Number of records (a scan: for reports, not hot paths).
    #[cfg(test)]
    pub fn record_count(&self) -> Result<u64> {
        let mut count = 0;
        self.store
            .scan_prefix(Space::Catalog, &[RECORD, 0], &mut |_, _| {
                count += 1;
                Ok(true)
            })?;
        Ok(count)
    }
}

/// Adds records to the catalog in batches. A record whose id is already in the catalog
/// (or earlier in the same batch) replaces it, index entries included.
pub struct CatalogWriter<'s> {
    store: &'s Store,
    batch: Batch,
    /// Records put in the current batch, which a read of the store cannot see yet.
    pending: HashMap<String, CatalogRecord>,
}

/// What adding a record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New,
    Replaced,
    Unchanged,
}

impl<'s> CatalogWriter<'s> {
    pub fn new(store: &'s Store) -> CatalogWriter<'s> {
        CatalogWriter {
            store,
            batch: Batch::default(),
            pending: HashMap::new(),
        }
    }

    pub fn add(&mut self, record: CatalogRecord) -> Result<Added> {
        let old = match self.pending.get(&record.id) {
            Some(old) => Some(old.clone()),
            None => Catalog::new(self.store).get(&record.id)?,
        };
        if old.as_ref() == Some(&record) {
            return Ok(Added::Unchanged);
        }
        let space = Space::Catalog;
        if let Some(old) = &old {
            for key in index_keys(old) {
                self.batch.push(Op::Delete { space, key });
            }
        }
        for key in index_keys(&record) {
            self.batch.push(Op::Put {
                space,
                key,
                value: Vec::new(),
            });
        }
        let json = serde_json::to_vec(&record)?;
        self.batch.push(Op::Put {
            space,
            key: record_key(&record.id),
            value: json,
        });
        let added = if old.is_some() {
            Added::Replaced
        } else {
            Added::New
        };
        self.pending.insert(record.id.clone(), record);
        if self.batch.bytes() >= BATCH_BYTES {
            self.write()?;
        }
        Ok(added)
    }

    fn write(&mut self) -> Result<()> {
        self.store.write(&self.batch)?;
        self.batch.clear();
        self.pending.clear();
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.write()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, doi: Option<&str>, title: &str) -> CatalogRecord {
        CatalogRecord {
            id: id.into(),
            source: "bibjson".into(),
            doi: doi.map(String::from),
            title: Some(title.into()),
            authors: vec!["Ann Author".into()],
            surnames: Vec::new(),
            year: Some(2001),
            journal: None,
            work: None,
        }
    }

    #[test]
    fn records_are_found_by_doi_title_and_word_and_replaced_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut writer = CatalogWriter::new(&store);
        let a = record("doi:10.1/a", Some("10.1/a"), "The Geography of Life");
        assert_eq!(writer.add(a.clone()).unwrap(), Added::New);
        assert_eq!(writer.add(a.clone()).unwrap(), Added::Unchanged);
        let b = record("doi:10.1/b", Some("10.1/b"), "Geography of LIFE!");
        writer.add(b).unwrap();
        writer.finish().unwrap();
        let catalog = Catalog::new(&store);
        assert_eq!(catalog.get("doi:10.1/a").unwrap(), Some(a.clone()));
        assert_eq!(catalog.by_doi("10.1/b").unwrap().len(), 1);
        assert_eq!(
            catalog.ids_by_title_key("geographyoflife", 10).unwrap(),
            ["doi:10.1/b"]
        );
        assert_eq!(
            catalog.ids_by_word("geography", 10).unwrap(),
            ["doi:10.1/a", "doi:10.1/b"]
        );
        assert!(catalog.ids_by_word("the", 10).unwrap().is_empty());
        assert_eq!(catalog.ids_by_word("geography", 1).unwrap().len(), 2);
        assert_eq!(catalog.record_count().unwrap(), 2);
        assert!(!catalog.is_empty().unwrap());

        // A new version of a record drops its old index entries.
        let mut writer = CatalogWriter::new(&store);
        let a2 = record("doi:10.1/a", Some("10.1/a"), "Another Title");
        assert_eq!(writer.add(a2).unwrap(), Added::Replaced);
        writer.finish().unwrap();
        assert_eq!(
            catalog.ids_by_word("geography", 10).unwrap(),
            ["doi:10.1/b"]
        );
        assert!(
            catalog
                .ids_by_title_key("thegeographyoflife", 10)
                .unwrap()
                .is_empty()
        );
        assert_eq!(catalog.ids_by_word("another", 10).unwrap(), ["doi:10.1/a"]);
        assert_eq!(catalog.record_count().unwrap(), 2);
    }
}
