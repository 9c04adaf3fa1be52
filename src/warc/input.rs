//! A large read buffer over any `Read` that knows the file offset of every byte it holds
//! and can keep a recent stretch of bytes around for re-scanning after an error.
//!
//! A kept stretch longer than the buffer allows can be spilled to a temporary file instead
//! of being dropped (`keep_spilling`): after a `Content-Length` that is far too large, the
//! records it swallowed were already read once and are read again from the spill, so
//! memory stays bounded whatever the length of the over-read.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

pub(crate) struct Input<R> {
    reader: R,
    buf: Box<[u8]>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
    /// `reader` returned 0: only replays are left.
    reader_done: bool,
    /// File offset from which bytes should survive compaction (a gzip member start, the
    /// start of a block), as long as no more than `keep_limit` bytes are kept.
    keep: Option<u64>,
    keep_limit: usize,
    /// Kept bytes beyond `keep_limit` go to `spill` rather than being dropped.
    spilling: bool,
    spill: Option<Spill>,
    /// Spilled stretches being read again, the one to read first last; `reader` after them.
    replays: Vec<Replay>,
    /// Bytes read again from spills so far: with the budget, re-reading stays linear in
    /// the input size however the damage is arranged.
    replayed: u64,
    bytes_read: u64,
}

/// Bytes of the file from offset `from` on, written out in order.
struct Spill {
    file: File,
    from: u64,
    /// File offset just after the last byte written.
    to: u64,
}

struct Replay {
    file: File,
    remaining: u64,
}

/// Bytes that may be read again beyond the bytes read from the input.
const REPLAY_ALLOWANCE: u64 = 64 << 20;

impl<R: Read> Input<R> {
    pub fn new(reader: R, capacity: usize, base: u64) -> Self {
        let capacity = capacity.max(64 * 1024);
        Input {
            reader,
            buf: vec![0u8; capacity].into_boxed_slice(),
            start: 0,
            end: 0,
            base,
            eof: false,
            reader_done: false,
            keep: None,
            keep_limit: capacity / 4,
            spilling: false,
            spill: None,
            replays: Vec::new(),
            replayed: 0,
            bytes_read: 0,
        }
    }

    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    #[inline]
    pub fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.start);
        self.start = (self.start + n).min(self.end);
    }

    /// File offset of the first unconsumed byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    pub fn is_eof(&self) -> bool {
        self.eof
    }

    /// Raw bytes read from the underlying reader (bytes read again from a spill are not
    /// counted).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    pub fn set_keep(&mut self, offset: Option<u64>) {
        self.keep = offset;
        self.spilling = false;
        self.spill = None;
    }

    /// Whether the bytes from `offset` to the current position are still buffered.
    pub fn is_buffered(&self, offset: u64) -> bool {
        offset >= self.base && offset <= self.offset()
    }

    /// Kept bytes are being spilled rather than dropped (see `keep_spilling`).
    pub fn is_spilling(&self) -> bool {
        self.spilling
    }

    /// Keep the bytes from `offset` (already read, still buffered) however many follow,
    /// spilling what the buffer cannot hold.
    pub fn keep_spilling(&mut self, offset: u64) {
        self.set_keep(Some(offset));
        self.spilling = offset >= self.base && offset <= self.offset();
    }

    /// Move back to an earlier file offset if its bytes are still buffered or spilled.
    pub fn rewind_to(&mut self, offset: u64) -> bool {
        if offset >= self.base && offset <= self.offset() {
            self.start = (offset - self.base) as usize;
            self.set_keep(None);
            return true;
        }
        let done = self.replay_from(offset).is_ok_and(|done| done);
        self.set_keep(None);
        done
    }

    /// Read again from `offset` (before the buffer): the spill from there, then what the
    /// buffer holds, then the rest of the input.
    fn replay_from(&mut self, offset: u64) -> io::Result<bool> {
        let Some(spill) = &mut self.spill else {
            return Ok(false);
        };
        let buffered_end = self.base + self.end as u64;
        if offset < spill.from || offset >= self.base || spill.to < self.base {
            return Ok(false);
        }
        let length = buffered_end - offset;
        if self.replayed + length > self.bytes_read + REPLAY_ALLOWANCE {
            return Ok(false);
        }
        let tail = (spill.to - self.base) as usize;
        spill
            .file
            .write_all(&self.buf[tail.min(self.end)..self.end])?;
        spill.file.seek(SeekFrom::Start(offset - spill.from))?;
        let Some(spill) = self.spill.take() else {
            return Ok(false);
        };
        self.replays.push(Replay {
            file: spill.file,
            remaining: length,
        });
        self.replayed += length;
        self.base = offset;
        self.start = 0;
        self.end = 0;
        self.eof = false;
        Ok(true)
    }

    /// Read more bytes after the unconsumed ones (which stay contiguous). Returns false at
    /// the end of the input, or when the buffer is full of unconsumed bytes.
    pub fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.make_room();
        if self.end == self.buf.len() {
            return Ok(false);
        }
        loop {
            if let Some(replay) = self.replays.last_mut() {
                if replay.remaining == 0 {
                    self.replays.pop();
                    continue;
                }
                let room = (self.buf.len() - self.end).min(replay.remaining as usize);
                match replay.file.read(&mut self.buf[self.end..self.end + room]) {
                    Ok(0) => {
                        // The spill is shorter than written: read on from the input.
                        self.replays.clear();
                        continue;
                    }
                    Ok(n) => {
                        replay.remaining -= n as u64;
                        self.end += n;
                        return Ok(true);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            if self.reader_done {
                self.eof = true;
                return Ok(false);
            }
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.reader_done = true;
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    self.bytes_read += n as u64;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Fill until at least `n` unconsumed bytes are available or the input ends.
    pub fn fill_to(&mut self, n: usize) -> io::Result<bool> {
        while self.end - self.start < n {
            if !self.fill()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Write the consumed kept bytes to the spill, so that they need not stay buffered.
    fn spill_kept(&mut self) -> io::Result<()> {
        let Some(keep) = self.keep else {
            return Ok(());
        };
        let from = (keep - self.base) as usize;
        if self.spill.is_none() {
            self.spill = Some(Spill {
                file: tempfile::tempfile()?,
                from: keep,
                to: keep,
            });
        }
        let to = self.offset();
        if let Some(spill) = &mut self.spill {
            spill.file.write_all(&self.buf[from..self.start])?;
            spill.to = to;
        }
        self.keep = Some(to);
        Ok(())
    }

    /// Move the bytes worth keeping to the front when the free tail gets small.
    fn make_room(&mut self) {
        let over_limit =
            |keep: u64, input: &Self| input.end - (keep - input.base) as usize > input.keep_limit;
        if self.spilling
            && let Some(keep) = self.keep
            && keep >= self.base
            && keep <= self.offset()
            && over_limit(keep, self)
            && self.spill_kept().is_err()
        {
            // No room for a spill: the kept bytes are given up like any others.
            self.set_keep(None);
        }
        let mut kept_from = match self.keep {
            Some(keep) if keep >= self.base && keep <= self.offset() && !over_limit(keep, self) => {
                (keep - self.base) as usize
            }
            _ => self.start,
        };
        if kept_from == 0 && self.end == self.buf.len() {
            // Full: give up what was kept rather than stall.
            kept_from = self.start;
        }
        if kept_from == self.end {
            // Nothing to keep: start over at the front for the largest possible read.
            self.base += self.end as u64;
            self.start = 0;
            self.end = 0;
            return;
        }
        if kept_from == 0 || self.buf.len() - self.end >= self.buf.len() / 4 {
            return;
        }
        self.buf.copy_within(kept_from..self.end, 0);
        self.base += kept_from as u64;
        self.start -= kept_from;
        self.end -= kept_from;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes kept with `keep_spilling` come back after the buffer has moved far past them,
    /// followed by exactly the bytes that came after, then the rest of the input.
    #[test]
    fn spilled_bytes_are_read_again_in_order() {
        let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut input = Input::new(&data[..], 64 * 1024, 0);
        input.fill_to(100).unwrap();
        input.consume(100);
        input.keep_spilling(100);
        while input.offset() < 700_000 {
            if input.data().is_empty() {
                assert!(input.fill().unwrap());
            }
            let n = input.data().len().min(700_000 - input.offset() as usize);
            input.consume(n);
        }
        assert!(input.rewind_to(100));
        let mut again = Vec::new();
        loop {
            again.extend_from_slice(input.data());
            let n = input.data().len();
            input.consume(n);
            if !input.fill().unwrap() {
                break;
            }
        }
        assert_eq!(again, &data[100..]);
        assert_eq!(input.bytes_read(), data.len() as u64);
        // Without spilling, the same rewind is refused.
        let mut input = Input::new(&data[..], 64 * 1024, 0);
        input.fill_to(100).unwrap();
        input.consume(100);
        input.set_keep(Some(100));
        while input.offset() < 700_000 {
            if input.data().is_empty() {
                input.fill().unwrap();
            }
            let n = input.data().len().min(700_000 - input.offset() as usize);
            input.consume(n);
        }
        assert!(!input.rewind_to(100));
    }
}
