//! External merge sort of byte records, so that a projection can order more records than
//! fit its memory budget: records are buffered up to a size, sorted and spilled to a
//! temporary file as a run, and the runs are merged with a heap (in several passes when
//! there are more runs than [`FAN_IN`], so open files and read buffers stay bounded too).
//!
//! Records compare as plain bytes. Callers that sort by a key and carry a value encode
//! the record as `key 0x00 value` with keys free of 0x00: then a key that is a prefix of
//! another still sorts first, as it does when the keys alone are compared.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};

/// Runs merged at once; more are merged in passes of this many.
pub const FAN_IN: usize = 64;
/// Read buffer of each run during a merge.
const RUN_BUFFER: usize = 64 << 10;
/// What one buffered record costs besides its bytes (its slot in the index).
const RECORD_OVERHEAD: usize = 16;

/// Records to sort; see the module documentation.
pub struct Sorter {
    dir: PathBuf,
    run_bytes: usize,
    data: Vec<u8>,
    records: Vec<(usize, usize)>,
    runs: Vec<File>,
    /// Records pushed in all.
    pub len: u64,
    /// Counts the runs spilled, for reports.
    spilled: Option<Arc<AtomicU64>>,
}

impl Sorter {
    /// Spills a run whenever the buffered records reach `run_bytes`; runs are unnamed
    /// temporary files in `dir`.
    pub fn new(dir: &Path, run_bytes: usize) -> Sorter {
        Sorter {
            dir: dir.to_path_buf(),
            run_bytes: run_bytes.max(1),
            data: Vec::new(),
            records: Vec::new(),
            runs: Vec::new(),
            len: 0,
            spilled: None,
        }
    }

    /// Adds every run this sort spills to `counter`.
    pub fn counting_runs(mut self, counter: &Arc<AtomicU64>) -> Sorter {
        self.spilled = Some(Arc::clone(counter));
        self
    }

    pub fn push(&mut self, record: &[u8]) -> Result<()> {
        let start = self.data.len();
        self.data.extend_from_slice(record);
        self.records.push((start, record.len()));
        self.len += 1;
        if self.data.len() + self.records.len() * RECORD_OVERHEAD >= self.run_bytes {
            self.spill()?;
        }
        Ok(())
    }

    /// Runs spilled so far.
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn sort_buffer(&mut self) {
        use rayon::slice::ParallelSliceMut;
        let data = &self.data;
        self.records
            .par_sort_unstable_by(|&(a, la), &(b, lb)| data[a..a + la].cmp(&data[b..b + lb]));
    }

    fn spill(&mut self) -> Result<()> {
        if self.records.is_empty() {
            return Ok(());
        }
        self.sort_buffer();
        let mut run = RunWriter::create(&self.dir)?;
        for &(start, len) in &self.records {
            run.write(&self.data[start..start + len])?;
        }
        self.runs.push(run.finish()?);
        if let Some(counter) = &self.spilled {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        self.data.clear();
        self.records.clear();
        // A buffer that grew to the run size is given back rather than kept for the
        // next run: callers keep several sorters and fill them one after another.
        self.data.shrink_to(self.run_bytes.min(1 << 20));
        self.records.shrink_to(1024);
        Ok(())
    }

    /// The records in byte order.
    pub fn finish(mut self) -> Result<Sorted> {
        if self.runs.is_empty() {
            self.sort_buffer();
            return Ok(Sorted::Memory {
                data: self.data,
                records: self.records.into_iter(),
                current: (0, 0),
            });
        }
        self.spill()?;
        let mut runs = std::mem::take(&mut self.runs);
        while runs.len() > FAN_IN {
            let rest = runs.split_off(FAN_IN);
            let mut merge = Merge::new(runs)?;
            let mut out = RunWriter::create(&self.dir)?;
            while let Some(record) = merge.next()? {
                out.write(record)?;
            }
            runs = rest;
            runs.push(out.finish()?);
        }
        Ok(Sorted::Merge(Merge::new(runs)?))
    }
}

struct RunWriter {
    out: BufWriter<File>,
}

impl RunWriter {
    fn create(dir: &Path) -> Result<RunWriter> {
        let file = tempfile::tempfile_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(RUN_BUFFER, file),
        })
    }

    fn write(&mut self, record: &[u8]) -> Result<()> {
        let len = u32::try_from(record.len()).context("a sort record longer than 4 GiB")?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(record)?;
        Ok(())
    }

    fn finish(self) -> Result<File> {
        let mut file = self
            .out
            .into_inner()
            .map_err(|e| e.into_error())
            .context("cannot write a sorted run")?;
        file.seek(SeekFrom::Start(0))?;
        Ok(file)
    }
}

fn read_record(reader: &mut BufReader<File>, out: &mut Vec<u8>) -> Result<bool> {
    let mut len = [0u8; 4];
    match reader.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
        Err(e) => return Err(e).context("cannot read a sorted run"),
    }
    out.clear();
    out.resize(u32::from_le_bytes(len) as usize, 0);
    reader.read_exact(out).context("cannot read a sorted run")?;
    Ok(true)
}

/// A heap merge of sorted runs.
pub struct Merge {
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
    current: Vec<u8>,
}

impl Merge {
    fn new(runs: Vec<File>) -> Result<Merge> {
        let mut readers: Vec<BufReader<File>> = runs
            .into_iter()
            .map(|f| BufReader::with_capacity(RUN_BUFFER, f))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, reader) in readers.iter_mut().enumerate() {
            let mut record = Vec::new();
            if read_record(reader, &mut record)? {
                heap.push(Reverse((record, i)));
            }
        }
        Ok(Merge {
            readers,
            heap,
            current: Vec::new(),
        })
    }

    fn next(&mut self) -> Result<Option<&[u8]>> {
        let Some(Reverse((record, run))) = self.heap.pop() else {
            return Ok(None);
        };
        // The record handed out last is reused as the buffer of the run's next one.
        let mut next = std::mem::replace(&mut self.current, record);
        if read_record(&mut self.readers[run], &mut next)? {
            self.heap.push(Reverse((next, run)));
        }
        Ok(Some(&self.current))
    }
}

/// Sorted records, read one at a time.
pub enum Sorted {
    Memory {
        data: Vec<u8>,
        records: std::vec::IntoIter<(usize, usize)>,
        current: (usize, usize),
    },
    Merge(Merge),
}

impl Sorted {
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<&[u8]>> {
        match self {
            Sorted::Memory {
                data,
                records,
                current,
            } => match records.next() {
                Some(r) => {
                    *current = r;
                    Ok(Some(&data[current.0..current.0 + current.1]))
                }
                None => Ok(None),
            },
            Sorted::Merge(merge) => merge.next(),
        }
    }
}

/// A key and its value as one record (`key 0x00 value`); keys must not hold 0x00.
pub fn keyed(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    debug_assert!(!key.contains(&0));
    out.clear();
    out.extend_from_slice(key);
    out.push(0);
    out.extend_from_slice(value);
}

/// Splits a [`keyed`] record.
pub fn split_keyed(record: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(0, record) {
        Some(i) => (&record[..i], &record[i + 1..]),
        None => (record, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_by(run_bytes: usize, records: &[Vec<u8>]) -> (Vec<Vec<u8>>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let mut sorter = Sorter::new(dir.path(), run_bytes);
        for r in records {
            sorter.push(r).unwrap();
        }
        let runs = sorter.runs();
        let mut sorted = sorter.finish().unwrap();
        let mut out = Vec::new();
        while let Some(r) = sorted.next().unwrap() {
            out.push(r.to_vec());
        }
        (out, runs)
    }

    #[test]
    fn spilled_runs_merge_into_the_in_memory_order() {
        // Pseudo-random records of varied lengths, with repeats and the empty record.
        let records: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| {
                let x = i.wrapping_mul(2_654_435_761);
                let len = (x >> 7) as usize % 12;
                (0..len).map(|j| (x >> (j % 4 * 8)) as u8 % 7).collect()
            })
            .collect();
        let mut expected = records.clone();
        expected.sort();
        let (in_memory, runs) = sorted_by(usize::MAX, &records);
        assert_eq!(runs, 0);
        assert_eq!(in_memory, expected);
        // Tiny runs: hundreds of them, so the merge goes through intermediate passes.
        let (spilled, runs) = sorted_by(300, &records);
        assert!(runs > 2 * FAN_IN, "{runs}");
        assert_eq!(spilled, expected);
        let (empty, _) = sorted_by(10, &[]);
        assert!(empty.is_empty());
    }

    #[test]
    fn keyed_records_sort_by_key_first() {
        let mut a = Vec::new();
        keyed(&mut a, b"1", b"zz");
        let mut b = Vec::new();
        keyed(&mut b, b"10", b"aa");
        assert!(a < b);
        assert_eq!(split_keyed(&b), (&b"10"[..], &b"aa"[..]));
    }
}
