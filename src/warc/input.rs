//! A large read buffer over any `Read` that knows the file offset of every byte it holds
//! and can keep a recent stretch of bytes around for re-scanning after an error.

use std::io::{self, Read};

pub(crate) struct Input<R> {
    reader: R,
    buf: Box<[u8]>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
    /// File offset from which bytes should survive compaction (a gzip member start, the
    /// start of a block), as long as no more than `keep_limit` bytes are kept.
    keep: Option<u64>,
    keep_limit: usize,
    bytes_read: u64,
}

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
            keep: None,
            keep_limit: capacity / 4,
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

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    pub fn set_keep(&mut self, offset: Option<u64>) {
        self.keep = offset;
    }

    /// Move back to an earlier file offset if its bytes are still in the buffer.
    pub fn rewind_to(&mut self, offset: u64) -> bool {
        if offset >= self.base && offset <= self.offset() {
            self.start = (offset - self.base) as usize;
            true
        } else {
            false
        }
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
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
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

    /// Move the bytes worth keeping to the front when the free tail gets small.
    fn make_room(&mut self) {
        let mut kept_from = match self.keep {
            Some(keep)
                if keep >= self.base
                    && keep <= self.offset()
                    && self.end - (keep - self.base) as usize <= self.keep_limit =>
            {
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
