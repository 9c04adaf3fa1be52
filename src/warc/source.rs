//! The decoded byte stream the record parser reads: uncompressed input as it is, or the
//! output of the gzip member decoder. Both keep the unconsumed bytes contiguous, so the
//! parser can ask for more bytes to look a few bytes ahead.

use std::io::Read;

use super::error::{ErrorKind, WarcError};
use super::input::Input;

/// What `fill` did.
pub(crate) enum Fill {
    /// More bytes were appended to the window.
    Data,
    /// The current gzip member ended at this file offset: the window cannot grow until it
    /// is consumed. Reported again on each call while the window is not empty, and at
    /// least once with an empty window, before the next member's bytes come.
    MemberEnd(u64),
    /// The input ended (reported again on each call).
    Eof,
    /// A problem in the input; the source has already moved on (to the next gzip member).
    Error(WarcError),
}

pub(crate) trait ByteSource {
    /// Decoded bytes not yet consumed.
    fn window(&self) -> &[u8];
    fn consume(&mut self, n: usize);
    /// Append more decoded bytes to the window.
    fn fill(&mut self) -> Fill;
    /// Position of `window()[0]`: (file offset, decoded bytes to skip from there). For
    /// gzip the offset is the member start and the skip counts decoded bytes into it.
    fn pos(&self) -> (u64, u64);
    /// File offset up to which the input has been consumed (for gzip: by the inflater).
    fn input_position(&self) -> u64;
    /// Raw bytes read from the underlying reader so far.
    fn bytes_read(&self) -> u64;
    /// Remember the current position to come back to it (`rewind_to_mark`) while its bytes
    /// are still buffered (a few hundred KiB).
    fn set_mark(&mut self);
    fn clear_mark(&mut self);
    fn rewind_to_mark(&mut self) -> bool;
    /// Move the mark forward to the first place inside a block where a record might start
    /// (uncompressed input only): the bytes from there are kept for `rewind_to_mark`
    /// however far reading goes past them.
    fn mark_record_candidate(&mut self, offset: u64) {
        let _ = offset;
    }
    /// Whether the mark is still there for `rewind_to_mark` after the next `fill` (with
    /// the window consumed but for a few bytes).
    fn mark_survives_fill(&self) -> bool {
        false
    }
    /// Where the last gzip member whose trailer was damaged or missing ended (its data
    /// had decoded completely), while no other member has been started since.
    fn damaged_member_end(&self) -> Option<u64> {
        None
    }
}

/// Uncompressed input.
pub(crate) struct PlainSource<R> {
    input: Input<R>,
    mark: Option<u64>,
    failed: bool,
}

impl<R: Read> PlainSource<R> {
    pub fn new(input: Input<R>) -> Self {
        PlainSource {
            input,
            mark: None,
            failed: false,
        }
    }
}

impl<R: Read> ByteSource for PlainSource<R> {
    #[inline]
    fn window(&self) -> &[u8] {
        self.input.data()
    }

    #[inline]
    fn consume(&mut self, n: usize) {
        self.input.consume(n);
    }

    fn fill(&mut self) -> Fill {
        if self.failed {
            return Fill::Eof;
        }
        match self.input.fill() {
            Ok(true) => Fill::Data,
            Ok(false) if self.input.is_eof() => Fill::Eof,
            Ok(false) => Fill::Error(WarcError::new(
                ErrorKind::Io,
                self.input.offset(),
                "read buffer full (internal limit)",
            )),
            Err(e) => {
                self.failed = true;
                Fill::Error(WarcError::new(
                    ErrorKind::Io,
                    self.input.offset(),
                    format!("read error: {e}"),
                ))
            }
        }
    }

    fn pos(&self) -> (u64, u64) {
        (self.input.offset(), 0)
    }

    fn input_position(&self) -> u64 {
        self.input.offset()
    }

    fn bytes_read(&self) -> u64 {
        self.input.bytes_read()
    }

    fn set_mark(&mut self) {
        let offset = self.input.offset();
        self.mark = Some(offset);
        self.input.set_keep(Some(offset));
    }

    fn clear_mark(&mut self) {
        self.mark = None;
        self.input.set_keep(None);
    }

    fn rewind_to_mark(&mut self) -> bool {
        let done = match self.mark {
            Some(mark) => self.input.rewind_to(mark),
            None => false,
        };
        self.clear_mark();
        done
    }

    /// The bytes are kept from the mark (the start of the block) while it is still
    /// buffered, so that the whole block can be read again and its end placed by its
    /// digest; from the candidate otherwise.
    fn mark_record_candidate(&mut self, offset: u64) {
        let from = match self.mark {
            Some(mark) if self.input.is_buffered(mark) => mark,
            _ => offset,
        };
        self.mark = Some(from);
        self.input.keep_spilling(from);
    }

    fn mark_survives_fill(&self) -> bool {
        self.mark.is_some() && self.input.is_spilling()
    }
}
