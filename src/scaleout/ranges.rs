//! Record lines into key ranges, the way a Hadoop job moves map output: the map side cuts
//! each extract's lines into the ranges' shares ([`split`]), the engine moves those shares
//! as opaque blocks, and each range sorts what it received ([`sort`]) before it is written.
//! The engine never parses or compares a record, so it costs per block, not per record;
//! the sort is an external merge sort, so a range larger than memory spills to disk.
//!
//! A range is the partition keys from its lower bound (inclusive) to the next bound
//! (exclusive): range `i` holds the keys with exactly `i` bounds at or below them, as
//! Python's `bisect_right` counts them (see [`super::records::partition_key`]).

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::records::partition_key;
use crate::cdx::lines::LineReader;
use crate::extsort::{Sorted, Sorter};

/// The range bounds of a job: sorted partition keys, one per line.
pub fn read_bounds(text: &[u8]) -> Result<Vec<Vec<u8>>> {
    let bounds: Vec<Vec<u8>> = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if let Some(i) = bounds.windows(2).position(|w| w[0] >= w[1]) {
        bail!(
            "range bound {} is not above the one before it (bounds must be sorted and distinct)",
            i + 2
        );
    }
    Ok(bounds)
}

/// The range a record line belongs to.
pub fn range_of(line: &[u8], bounds: &[Vec<u8>]) -> usize {
    let key = line.split(|&b| b == b'\t').next().unwrap_or_default();
    let key = partition_key(key);
    bounds.partition_point(|bound| bound.as_slice() <= key)
}

/// What [`split`] wrote.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub lines: u64,
    pub blocks: u64,
}

/// Reads record lines and writes each range's share in blocks: a header line
/// `RANGE \t BYTES \t LINES` and then the lines themselves, in input order. A range's lines
/// are written out whenever they reach `block_bytes`, and the rest at the end, so memory
/// stays at about `block_bytes` per range whatever the input.
pub fn split(
    input: impl Read + Send,
    bounds: &[Vec<u8>],
    block_bytes: usize,
    out: &mut impl Write,
) -> Result<Split> {
    let mut shares: Vec<(Vec<u8>, u64)> = vec![(Vec::new(), 0); bounds.len() + 1];
    let mut split = Split::default();
    let mut write_block = |range: usize, share: &mut (Vec<u8>, u64), split: &mut Split| {
        writeln!(out, "{range}\t{}\t{}", share.0.len(), share.1)?;
        out.write_all(&share.0)?;
        share.0.clear();
        share.1 = 0;
        split.blocks += 1;
        anyhow::Ok(())
    };
    let mut lines = RecordLines::new(input);
    while let Some(line) = lines.next_line()? {
        if line.first() == Some(&super::records::SUMMARY) {
            bail!(
                "record line {}: input summaries go to ingest-sst, not into ranges",
                split.lines + 1
            );
        }
        let range = range_of(line, bounds);
        let share = &mut shares[range];
        share.0.extend_from_slice(line);
        share.0.push(b'\n');
        share.1 += 1;
        split.lines += 1;
        if share.0.len() >= block_bytes {
            write_block(range, share, &mut split)?;
        }
    }
    for (range, share) in shares.iter_mut().enumerate() {
        if share.1 > 0 {
            write_block(range, share, &mut split)?;
        }
    }
    Ok(split)
}

/// Sorts a range's record lines (in any order, possibly several blocks of [`split`]
/// concatenated) by key, spilling runs of `run_bytes` into unnamed files in `scratch`.
pub fn sort(input: impl Read + Send, scratch: &Path, run_bytes: usize) -> Result<Sorted> {
    let mut sorter = Sorter::new(scratch, run_bytes);
    let mut lines = RecordLines::new(input);
    while let Some(line) = lines.next_line()? {
        // Whole lines compare as their keys do: the tab after a key sorts below every hex
        // digit, so a key sorts before the longer keys it is a prefix of.
        sorter.push(line)?;
    }
    sorter.finish()
}

/// Record lines of one range in key order, one at a time: read as given (sorted by the
/// engine) or sorted here.
pub trait RangeLines {
    fn next_line(&mut self) -> Result<Option<&[u8]>>;
}

impl RangeLines for Sorted {
    fn next_line(&mut self) -> Result<Option<&[u8]>> {
        self.next()
    }
}

/// The record lines of a reader one at a time, blank lines skipped and line ends taken
/// off, through the one line reader; as [`RangeLines`], lines that are already in key
/// order. Record lines are short: one longer than the line cap is damage, an error that
/// names its line and byte offset.
pub struct RecordLines<'r> {
    lines: LineReader<'r>,
}

impl<'r> RecordLines<'r> {
    pub fn new(input: impl Read + Send + 'r) -> Self {
        RecordLines {
            lines: LineReader::plain(input).overlong_is_error(),
        }
    }
}

impl RangeLines for RecordLines<'_> {
    fn next_line(&mut self) -> Result<Option<&[u8]>> {
        Ok(self
            .lines
            .next_nonempty_line()
            .context("cannot read records")?
            .map(|(_, line)| line))
    }
}

/// How a range writer (`write-sst`, `write-range`) gets its lines in key order.
#[derive(clap::Args)]
pub struct SortArgs {
    /// The lines come in any order (blocks of `split-ranges`): sort them first, spilling
    /// sorted runs to temporary files beyond --sort-memory-mb.
    #[arg(long)]
    pub sort: bool,
    /// Memory for sorting, in MiB (with --sort).
    #[arg(long, value_name = "MIB", default_value_t = 256, requires = "sort")]
    pub sort_memory_mb: usize,
}

impl SortArgs {
    /// Where to sort and in how much memory, when sorting.
    pub fn sort_in<'a>(&self, scratch: &'a Path) -> Option<(&'a Path, usize)> {
        self.sort
            .then_some((scratch, self.sort_memory_mb.max(1) << 20))
    }
}

/// The input of a range writer: `sort` when the engine moved blocks of [`split`] and left
/// the sorting to the writer.
pub fn range_input<'a>(
    input: impl Read + Send + 'a,
    sort_in: Option<(&Path, usize)>,
) -> Result<Box<dyn RangeLines + 'a>> {
    Ok(match sort_in {
        Some((scratch, run_bytes)) => Box::new(sort(input, scratch, run_bytes)?),
        None => Box::new(RecordLines::new(input)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaleout::records::{push_capture_line, push_index_line};

    fn lines() -> Vec<u8> {
        let mut out = Vec::new();
        push_capture_line(b"org,example)/b", b"2", &mut out);
        push_index_line(&[0xf0; 24], b"e", b"c", &mut out);
        push_capture_line(b"org,example)/a", b"1", &mut out);
        push_index_line(&[0x10; 24], b"e", b"c", &mut out);
        push_capture_line(b"org,example)/", b"0", &mut out);
        out
    }

    #[test]
    fn split_cuts_by_partition_key_and_sort_restores_key_order() {
        let bounds = read_bounds(b"c\nd8\n").unwrap();
        let mut out = Vec::new();
        let split = split(&lines()[..], &bounds, 1 << 20, &mut out).unwrap();
        assert_eq!(
            split,
            Split {
                lines: 5,
                blocks: 2
            }
        );
        // Range 0 is below `c` (the `d` space's digests never go there), 1 the captures
        // and the low digests, 2 the high digests.
        let text = String::from_utf8_lossy(&out);
        let headers: Vec<&str> = text
            .lines()
            .filter(|l| l.split('\t').count() == 3 && l.len() < 16)
            .collect();
        assert_eq!(headers.len(), 2, "{text}");
        assert!(headers[0].starts_with("1\t") && headers[0].ends_with("\t4"));
        assert!(headers[1].starts_with("2\t") && headers[1].ends_with("\t1"));

        let scratch = tempfile::tempdir().unwrap();
        // A run of one line at a time: every line spills, the merge puts them in order.
        let mut sorted = sort(&lines()[..], scratch.path(), 1).unwrap();
        let mut keys = Vec::new();
        while let Some(line) = sorted.next_line().unwrap() {
            keys.push(line.split(|&b| b == b'\t').next().unwrap().to_vec());
        }
        let mut expected = keys.clone();
        expected.sort();
        assert_eq!(keys, expected);
        assert_eq!(keys.len(), 5);
        assert!(keys[0] < keys[1], "a key sorts before the keys it prefixes");
    }

    #[test]
    fn a_range_is_written_in_blocks_of_bounded_size() {
        let mut out = Vec::new();
        // Blocks of one line: every line is its own block, in input order.
        let split = split(&lines()[..], &[], 1, &mut out).unwrap();
        assert_eq!(
            split,
            Split {
                lines: 5,
                blocks: 5
            }
        );
        let mut at = 0;
        let mut lines_back = Vec::new();
        while at < out.len() {
            let end = at + out[at..].iter().position(|&b| b == b'\n').unwrap();
            let header = std::str::from_utf8(&out[at..end]).unwrap();
            let fields: Vec<usize> = header.split('\t').map(|f| f.parse().unwrap()).collect();
            assert_eq!((fields[0], fields[2]), (0, 1));
            lines_back.extend_from_slice(&out[end + 1..end + 1 + fields[1]]);
            at = end + 1 + fields[1];
        }
        assert_eq!(lines_back, lines());
    }

    #[test]
    fn bad_bounds_and_summaries_are_refused() {
        assert!(read_bounds(b"d\nc\n").is_err());
        assert!(read_bounds(b"c\nc\n").is_err());
        let err = split(&b"s\t{}\n"[..], &[], 1, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("summaries"), "{err}");
    }

    #[test]
    fn presorted_lines_skip_blank_lines_and_carriage_returns() {
        let mut lines = RecordLines::new(&b"a\r\n\nb\n"[..]);
        assert_eq!(lines.next_line().unwrap(), Some(&b"a"[..]));
        assert_eq!(lines.next_line().unwrap(), Some(&b"b"[..]));
        assert_eq!(lines.next_line().unwrap(), None);
    }
}
