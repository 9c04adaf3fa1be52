//! Key ranges of the store's `capture` family as a [`CaptureSource`].

use anyhow::Result;
use rocksdb::{DBRawIteratorWithThreadMode, ReadOptions};

use super::query::KeyRange;
use super::run::CaptureSource;
use crate::capture::Capture;
use crate::store::{CF_CAPTURE, Store};

/// The captures of a store, in URL-then-time order.
pub struct StoreCaptures<'s> {
    store: &'s Store,
}

impl<'s> StoreCaptures<'s> {
    pub fn new(store: &'s Store) -> StoreCaptures<'s> {
        StoreCaptures { store }
    }

    fn iterator(&self, range: &KeyRange) -> DBRawIteratorWithThreadMode<'s, rocksdb::DB> {
        let mut opts = ReadOptions::default();
        opts.set_iterate_lower_bound(range.start.clone());
        opts.set_iterate_upper_bound(range.end.clone());
        self.store
            .db()
            .raw_iterator_cf_opt(self.store.cf(CF_CAPTURE), opts)
    }
}

/// Walks a raw iterator, decoding values; a value that does not decode is skipped
/// (a damaged capture must not end the listing of the others).
struct Captures<'s> {
    iter: DBRawIteratorWithThreadMode<'s, rocksdb::DB>,
    reverse: bool,
    done: bool,
}

impl Iterator for Captures<'_> {
    type Item = Result<Capture>;

    fn next(&mut self) -> Option<Result<Capture>> {
        while !self.done {
            let Some(value) = self.iter.value() else {
                self.done = true;
                return self.iter.status().err().map(|e| Err(e.into()));
            };
            let decoded = Capture::decode(value);
            if self.reverse {
                self.iter.prev();
            } else {
                self.iter.next();
            }
            if let Ok(capture) = decoded {
                return Some(Ok(capture));
            }
        }
        None
    }
}

impl CaptureSource for StoreCaptures<'_> {
    fn scan<'a>(
        &'a self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = Result<Capture>> + 'a> {
        let mut iter = self.iterator(range);
        if reverse {
            iter.seek_to_last();
        } else {
            iter.seek(&range.start);
        }
        Box::new(Captures {
            iter,
            reverse,
            done: false,
        })
    }

    /// Counts keys without decoding values.
    fn count(&self, range: &KeyRange) -> Result<u64> {
        let mut iter = self.iterator(range);
        iter.seek(&range.start);
        let mut n = 0;
        while iter.valid() {
            n += 1;
            iter.next();
        }
        iter.status()?;
        Ok(n)
    }
}
