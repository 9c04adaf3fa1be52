//! The bytes of one record's block as they stream by: where reading stopped, whether the
//! block ended where its Content-Length said, where a swallowed record might start, and
//! the payload's digest state.

use memchr::memmem;
use sha1::{Digest, Sha1};

use super::chunked::Dechunker;
use super::error::WarcError;
use super::record::{PayloadSummary, Record};
use super::source::{ByteSource, Fill};

/// Receives the payload bytes of records, as stored, in order.
pub trait PayloadSink {
    /// Called once the WARC header and HTTP head of a record are parsed, before any of its
    /// payload bytes (`record.payload` is still `None`). Return false to skip this record.
    fn begin(&mut self, record: &Record) -> bool {
        let _ = record;
        true
    }

    /// The next piece of the payload.
    fn payload(&mut self, bytes: &[u8]);
}

impl<F: FnMut(&[u8])> PayloadSink for F {
    fn payload(&mut self, bytes: &[u8]) {
        self(bytes)
    }
}

/// How reading a block stopped early.
pub(super) enum BlockStop {
    /// The input ended inside the block.
    Eof,
    /// A new gzip member starting with `WARC/` came before the block was complete.
    NextRecordInside,
    Source(WarcError),
}

/// Outcome of looking for the CRLFCRLF after a block.
pub(super) enum Terminator {
    Clean,
    /// Fewer than two line ends, but the input (or the gzip member) ends, or the next
    /// record follows (`at_end` false).
    Loose {
        at_end: bool,
    },
    /// Something else follows the block: Content-Length is wrong.
    Mismatch,
}

/// State while reading the bytes of one block.
pub(super) struct BlockCursor {
    pub(super) remaining: u64,
    /// A gzip member ended inside the block.
    pub(super) crossed_member: bool,
    /// Uncompressed input: where a record swallowed by a too-large Content-Length would
    /// start.
    pub(super) candidates: Option<CandidateScan>,
}

impl BlockCursor {
    /// Note where a record might start in block bytes about to be consumed (the source
    /// then keeps the bytes from there, see [`ByteSource::mark_record_candidate`]).
    pub(super) fn scan(&mut self, bytes: &[u8], offset: u64) -> Option<u64> {
        self.candidates.as_mut()?.find(bytes, offset)
    }
}

/// Finds the first line starting with `WARC/` in a block streamed in pieces.
pub(super) struct CandidateScan {
    done: bool,
    /// The last bytes seen (a match may straddle two pieces).
    tail: [u8; 5],
    tail_len: usize,
}

impl CandidateScan {
    pub(super) fn new() -> Self {
        // The header block ends with a line end, so a block starting with `WARC/` counts.
        CandidateScan {
            done: false,
            tail: [b'\n', 0, 0, 0, 0],
            tail_len: 1,
        }
    }

    /// File offset of the `W` of the first `\nWARC/` in the stream, once.
    pub(super) fn find(&mut self, bytes: &[u8], offset: u64) -> Option<u64> {
        const LINE: &[u8] = b"\nWARC/";
        if self.done || bytes.is_empty() {
            return None;
        }
        let head = bytes.len().min(LINE.len() - 1);
        let mut joined = [0u8; 10];
        joined[..self.tail_len].copy_from_slice(&self.tail[..self.tail_len]);
        joined[self.tail_len..self.tail_len + head].copy_from_slice(&bytes[..head]);
        let hit = memmem::find(&joined[..self.tail_len + head], LINE)
            .map(|i| offset + i as u64 + 1 - self.tail_len as u64)
            .or_else(|| memmem::find(bytes, LINE).map(|i| offset + i as u64 + 1));
        let all = &joined[..self.tail_len + head];
        let last: &[u8] = if bytes.len() >= 5 {
            &bytes[bytes.len() - 5..]
        } else {
            &all[all.len().saturating_sub(5)..]
        };
        self.tail[..last.len()].copy_from_slice(last);
        self.tail_len = last.len();
        self.done = hit.is_some();
        hit
    }
}

impl BlockCursor {
    /// The file offset and length of the next bytes of the block in the source's window
    /// (at most what remains of the block), filling the window when it is empty.
    pub(super) fn next_piece<S: ByteSource>(
        &mut self,
        src: &mut S,
    ) -> Result<(u64, usize), BlockStop> {
        loop {
            let remaining = usize::try_from(self.remaining).unwrap_or(usize::MAX);
            let n = src.window().len().min(remaining);
            if n > 0 || remaining == 0 {
                return Ok((src.pos().0, n));
            }
            self.fill(src)?;
        }
    }

    /// Consumes the first `n` bytes of the window, block bytes at file offset `offset`,
    /// noting where a record swallowed by the block might start.
    pub(super) fn consume<S: ByteSource>(&mut self, src: &mut S, n: usize, offset: u64) {
        let at = self.scan(&src.window()[..n], offset);
        src.consume(n);
        if let Some(at) = at {
            src.mark_record_candidate(at);
        }
        self.remaining -= n as u64;
    }

    /// Get more bytes into an empty window.
    pub(super) fn fill<S: ByteSource>(&mut self, src: &mut S) -> Result<(), BlockStop> {
        loop {
            match src.fill() {
                Fill::Data => {
                    if self.crossed_member {
                        self.crossed_member = false;
                        // Records compressed one per member: a member starting with a WARC
                        // version line inside a block means the block was shorter.
                        if src.window().starts_with(b"WARC/") {
                            return Err(BlockStop::NextRecordInside);
                        }
                    }
                    return Ok(());
                }
                Fill::MemberEnd(_) => self.crossed_member = true,
                Fill::Eof => return Err(BlockStop::Eof),
                Fill::Error(error) => return Err(BlockStop::Source(error)),
            }
        }
    }
}

/// The payload digest state of one record.
pub(super) struct PayloadState {
    pub(super) sha1: Sha1,
    pub(super) length: u64,
    pub(super) prefix: Vec<u8>,
    pub(super) prefix_limit: usize,
    pub(super) dechunker: Option<(Dechunker, Sha1)>,
}

impl PayloadState {
    pub(super) fn new(prefix_limit: usize, chunked: bool) -> Self {
        PayloadState {
            sha1: Sha1::new(),
            length: 0,
            prefix: Vec::new(),
            prefix_limit,
            dechunker: chunked.then(|| (Dechunker::new(), Sha1::new())),
        }
    }

    #[inline]
    pub(super) fn update(&mut self, bytes: &[u8], sink: &mut Option<&mut dyn PayloadSink>) {
        self.sha1.update(bytes);
        self.length += bytes.len() as u64;
        if self.prefix.len() < self.prefix_limit {
            let take = (self.prefix_limit - self.prefix.len()).min(bytes.len());
            self.prefix.extend_from_slice(&bytes[..take]);
        }
        if let Some((dechunker, sha1)) = &mut self.dechunker {
            // Errors are kept by the dechunker and read in `finish`.
            let _ = dechunker.feed(bytes, &mut |decoded| sha1.update(decoded));
        }
        if let Some(sink) = sink {
            sink.payload(bytes);
        }
    }

    pub(super) fn finish(self) -> PayloadSummary {
        let chunked = self.dechunker.is_some();
        let (dechunked_sha1, dechunked_length, dechunk_error) = match self.dechunker {
            Some((dechunker, sha1)) => match dechunker.finish() {
                Ok(length) => (Some(sha1.finalize().into()), Some(length), None),
                Err(error) => (None, None, Some(error)),
            },
            None => (None, None, None),
        };
        PayloadSummary {
            sha1: self.sha1.finalize().into(),
            length: self.length,
            prefix: self.prefix,
            chunked,
            dechunked_sha1,
            dechunked_length,
            dechunk_error,
        }
    }
}
