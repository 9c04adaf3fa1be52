//! Key ranges of the store's capture key space as a [`CaptureSource`].
//!
//! On the embedded RocksDB store a range is read with one raw iterator, forwards or
//! backwards. Other backends offer a visitor scan in key order only; there the range is
//! read in batches (each resuming after the last key of the one before), so memory stays
//! bounded, and `sort=reverse` is refused.

use anyhow::Result;
use rocksdb::{DB, DBRawIteratorWithThreadMode, ReadOptions};

use super::query::KeyRange;
use super::run::CaptureSource;
use crate::capture::Capture;
use crate::store::Store;
use crate::store::backend::Space;

/// Captures read per visitor scan on backends without iterators.
const BATCH: usize = 1024;

/// The captures of a store, in URL-then-time order.
pub struct StoreCaptures<'s> {
    store: &'s Store,
}

impl<'s> StoreCaptures<'s> {
    pub fn new(store: &'s Store) -> StoreCaptures<'s> {
        StoreCaptures { store }
    }

    fn rocks_iterator(&self, range: &KeyRange) -> Option<DBRawIteratorWithThreadMode<'s, DB>> {
        let rocks = self.store.backend().as_rocks()?;
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        opts.set_iterate_lower_bound(range.start.clone());
        opts.set_iterate_upper_bound(range.end.clone());
        Some(
            rocks
                .db()
                .raw_iterator_cf_opt(rocks.space_cf(Space::Capture), opts),
        )
    }
}

/// Walks a raw iterator, decoding values; a value that does not decode is skipped
/// (a damaged capture must not end the listing of the others).
struct RocksCaptures<'s> {
    iter: DBRawIteratorWithThreadMode<'s, DB>,
    reverse: bool,
    done: bool,
}

impl Iterator for RocksCaptures<'_> {
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

/// Reads a range through the backend's visitor scan, [`BATCH`] captures at a time.
struct BatchedCaptures<'s> {
    store: &'s Store,
    next_start: Option<Vec<u8>>,
    end: Vec<u8>,
    batch: std::vec::IntoIter<Capture>,
}

impl BatchedCaptures<'_> {
    fn fill(&mut self) -> Result<()> {
        let Some(start) = self.next_start.take() else {
            return Ok(());
        };
        let mut captures = Vec::with_capacity(BATCH);
        let mut last_key: Option<Vec<u8>> = None;
        let mut full = false;
        self.store.backend().scan(
            Space::Capture,
            &start,
            Some(&self.end),
            &mut |key, value| {
                if let Ok(capture) = Capture::decode(value) {
                    captures.push(capture);
                }
                if captures.len() == BATCH {
                    last_key = Some(key.to_vec());
                    full = true;
                    return Ok(false);
                }
                Ok(true)
            },
        )?;
        if full && let Some(mut key) = last_key {
            // The smallest key after `key`.
            key.push(0);
            self.next_start = Some(key);
        }
        self.batch = captures.into_iter();
        Ok(())
    }
}

impl Iterator for BatchedCaptures<'_> {
    type Item = Result<Capture>;

    fn next(&mut self) -> Option<Result<Capture>> {
        loop {
            if let Some(capture) = self.batch.next() {
                return Some(Ok(capture));
            }
            self.next_start.as_ref()?;
            if let Err(e) = self.fill() {
                self.next_start = None;
                return Some(Err(e));
            }
        }
    }
}

impl CaptureSource for StoreCaptures<'_> {
    fn scan<'a>(
        &'a self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = Result<Capture>> + 'a> {
        if let Some(mut iter) = self.rocks_iterator(range) {
            if reverse {
                iter.seek_to_last();
            } else {
                iter.seek(&range.start);
            }
            return Box::new(RocksCaptures {
                iter,
                reverse,
                done: false,
            });
        }
        if reverse {
            let backend = self.store.backend().describe();
            let refused: Result<Capture> = Err(anyhow::anyhow!(
                "sort=reverse needs the embedded store, not {backend}"
            ));
            return Box::new(std::iter::once(refused));
        }
        Box::new(BatchedCaptures {
            store: self.store,
            next_start: Some(range.start.clone()),
            end: range.end.clone(),
            batch: Vec::new().into_iter(),
        })
    }

    /// Counts keys without decoding values.
    fn count(&self, range: &KeyRange) -> Result<u64> {
        let Some(mut iter) = self.rocks_iterator(range) else {
            let mut n = 0;
            self.store.backend().scan(
                Space::Capture,
                &range.start,
                Some(&range.end),
                &mut |_, _| {
                    n += 1;
                    Ok(true)
                },
            )?;
            return Ok(n);
        };
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
