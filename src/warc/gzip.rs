//! Gzip member framing on top of raw deflate: parse each member header, inflate, check the
//! trailer (CRC-32, ISIZE), so the exact file offset and length of every member is known.
//! After a broken member it scans for the next member header and goes on.

use std::io::Read;

use flate2::{Crc, Decompress, FlushDecompress, Status};
use memchr::memmem;

use super::error::{ErrorKind, WarcError};
use super::input::Input;
use super::libdeflate::{Crc32, WholeMemberInflater};
use super::source::{ByteSource, Fill};

/// The largest decoded member inflated in one call: the window grows to this size at most
/// (most members of a crawl are far smaller; of an HTML crawl's bytes, 93 % are in
/// members under 1 MiB and all under 4 MiB).
const WHOLE_MEMBER_MAX: usize = 4 << 20;

const FTEXT_UNUSED_FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xE0;

/// Result of parsing a gzip member header from the start of a byte slice.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HeaderParse {
    /// The header is this many bytes long.
    Complete(usize),
    /// More bytes are needed.
    Incomplete,
    /// Not a valid gzip header.
    Invalid(String),
}

/// Parse a gzip member header (RFC 1952): magic, method, flags, and the optional FEXTRA,
/// FNAME, FCOMMENT and FHCRC fields.
pub(crate) fn parse_gzip_header(b: &[u8]) -> HeaderParse {
    if b.len() < 10 {
        let magic = [0x1f, 0x8b, 0x08];
        let n = b.len().min(3);
        if b[..n] != magic[..n] {
            return HeaderParse::Invalid("not a gzip member header".into());
        }
        return HeaderParse::Incomplete;
    }
    if b[0] != 0x1f || b[1] != 0x8b {
        return HeaderParse::Invalid("not a gzip member header".into());
    }
    if b[2] != 8 {
        return HeaderParse::Invalid(format!("compression method {} is not deflate", b[2]));
    }
    let flags = b[3];
    if flags & FRESERVED != 0 {
        return HeaderParse::Invalid(format!("reserved flag bits set (0x{flags:02x})"));
    }
    let mut p = 10;
    if flags & FEXTRA != 0 {
        if b.len() < p + 2 {
            return HeaderParse::Incomplete;
        }
        let xlen = u16::from_le_bytes([b[p], b[p + 1]]) as usize;
        p += 2 + xlen;
        if b.len() < p {
            return HeaderParse::Incomplete;
        }
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match memchr::memchr(0, &b[p..]) {
                Some(nul) => p += nul + 1,
                None => return HeaderParse::Incomplete,
            }
        }
    }
    if flags & FTEXT_UNUSED_FHCRC != 0 {
        if b.len() < p + 2 {
            return HeaderParse::Incomplete;
        }
        let stored = u16::from_le_bytes([b[p], b[p + 1]]);
        let mut crc = Crc::new();
        crc.update(&b[..p]);
        if (crc.sum() & 0xffff) as u16 != stored {
            return HeaderParse::Invalid("header CRC-16 mismatch".into());
        }
        p += 2;
    }
    HeaderParse::Complete(p)
}

/// The decoded size of the member whose deflate data starts `data`, if it likely ends
/// inside `data`: the next member's header (`1f 8b 08`) is buffered, or the input ends with
/// `data`, and the ISIZE just before that end says how large the member is. A guess only
/// (those bytes may occur inside compressed data): it saves attempts that would fail and
/// sizes the output, never decides what the data is.
fn buffered_member_size(data: &[u8], input_ends: bool) -> Option<usize> {
    let end = match memmem::find(data, &[0x1f, 0x8b, 0x08]) {
        Some(next) => next,
        None if input_ends => data.len(),
        None => return None,
    };
    let trailer = data.get(end.checked_sub(8)?..end)?;
    let isize = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    usize::try_from(isize).ok()
}

enum State {
    /// Expecting a member header at the input position.
    Header,
    Inflate,
    Trailer,
    /// The member ended at this offset; `told_empty`: MemberEnd was reported while the
    /// window was empty, so the next `fill` may start the next member.
    Ended {
        end: u64,
        told_empty: bool,
    },
    /// Scan for the next member header from this file offset.
    Resync {
        from: u64,
    },
    Eof,
}

/// Decoded bytes of a gzip file, member after member.
pub(crate) struct GzipSource<R> {
    input: Input<R>,
    inflater: Decompress,
    /// Tried first on each member; `None` if libdeflate could not allocate.
    whole_member: Option<WholeMemberInflater>,
    /// The current member was offered to `whole_member` (once, at its start).
    whole_member_tried: bool,
    crc: Crc32,
    out: Box<[u8]>,
    /// Unconsumed decoded bytes are `out[wstart..wend]`.
    wstart: usize,
    wend: usize,
    /// Decoded offset (within the current member) of `out[0]`.
    out_base: u64,
    member_start: u64,
    state: State,
    /// Decoded offset within the current member to keep for `rewind_to_mark`.
    mark: Option<u64>,
    /// See [`ByteSource::damaged_member_end`].
    damaged_end: Option<u64>,
}

impl<R: Read> GzipSource<R> {
    /// `whole_members`: see [`super::ReaderOptions::whole_members`].
    pub fn new(input: Input<R>, out_capacity: usize, whole_members: bool) -> Self {
        let member_start = input.offset();
        GzipSource {
            input,
            inflater: Decompress::new(false),
            whole_member: whole_members.then(WholeMemberInflater::new).flatten(),
            whole_member_tried: false,
            crc: Crc32::default(),
            out: vec![0u8; out_capacity.max(64 * 1024)].into_boxed_slice(),
            wstart: 0,
            wend: 0,
            out_base: 0,
            member_start,
            state: State::Header,
            mark: None,
            damaged_end: None,
        }
    }

    fn error(&self, kind: ErrorKind, offset: u64, message: String) -> Fill {
        Fill::Error(WarcError::new(kind, offset, message))
    }

    fn io_error(&mut self, e: std::io::Error) -> Fill {
        self.state = State::Eof;
        self.error(
            ErrorKind::Io,
            self.input.offset(),
            format!("read error: {e}"),
        )
    }

    fn drop_window(&mut self) {
        self.out_base += self.wend as u64;
        self.wstart = 0;
        self.wend = 0;
        self.mark = None;
    }

    /// Make room at the end of `out` for more decoded bytes, keeping the window (and the
    /// marked bytes while they are few).
    fn make_room(&mut self) {
        let len = self.out.len();
        let mut from = match self.mark {
            Some(mark)
                if mark >= self.out_base
                    && mark <= self.out_base + self.wstart as u64
                    && self.wend - (mark - self.out_base) as usize <= len / 4 =>
            {
                (mark - self.out_base) as usize
            }
            _ => self.wstart,
        };
        if from == 0 && self.wend == len {
            self.mark = None;
            from = self.wstart;
        }
        if from == self.wend {
            self.out_base += self.wend as u64;
            self.wstart = 0;
            self.wend = 0;
            return;
        }
        if from == 0 || len - self.wend >= len / 4 {
            return;
        }
        self.out.copy_within(from..self.wend, 0);
        self.out_base += from as u64;
        self.wstart -= from;
        self.wend -= from;
    }

    fn start_member(&mut self) -> Option<Fill> {
        let offset = self.input.offset();
        loop {
            match parse_gzip_header(self.input.data()) {
                HeaderParse::Complete(len) => {
                    self.input.consume(len);
                    self.member_start = offset;
                    self.damaged_end = None;
                    self.input.set_keep(Some(offset));
                    self.inflater.reset(false);
                    self.whole_member_tried = false;
                    self.crc = Crc32::default();
                    self.drop_window();
                    self.out_base = 0;
                    self.state = State::Inflate;
                    return None;
                }
                HeaderParse::Incomplete => match self.input.fill() {
                    Ok(true) => continue,
                    Ok(false) if self.input.data().is_empty() => {
                        self.state = State::Eof;
                        return Some(Fill::Eof);
                    }
                    Ok(false) if self.input.is_eof() => {
                        self.state = State::Eof;
                        return Some(self.error(
                            ErrorKind::GzipTruncated,
                            offset,
                            format!("input ends inside the gzip member header at offset {offset}"),
                        ));
                    }
                    Ok(false) => {
                        self.state = State::Resync { from: offset + 1 };
                        return Some(self.error(
                            ErrorKind::GzipHeader,
                            offset,
                            format!("gzip member header at offset {offset} is longer than the read buffer"),
                        ));
                    }
                    Err(e) => return Some(self.io_error(e)),
                },
                HeaderParse::Invalid(reason) => {
                    self.state = State::Resync { from: offset + 1 };
                    let data = self.input.data();
                    let kind = if data.len() >= 2 && data[0] == 0x1f && data[1] == 0x8b {
                        ErrorKind::GzipHeader
                    } else {
                        ErrorKind::Garbage
                    };
                    let message = match kind {
                        ErrorKind::Garbage => format!(
                            "bytes at offset {offset} are not a gzip member (garbage between members)"
                        ),
                        _ => format!("invalid gzip member header at offset {offset}: {reason}"),
                    };
                    return Some(self.error(kind, offset, message));
                }
            }
        }
    }

    /// Inflate into the window. `Some` when there is something to report.
    fn inflate_some(&mut self) -> Option<Fill> {
        self.make_room();
        if self.wend == self.out.len() {
            // The window fills the buffer: the caller must consume first.
            return Some(Fill::Data);
        }
        if !self.whole_member_tried {
            self.whole_member_tried = true;
            if let Some(produced) = self.inflate_whole_member() {
                self.state = State::Trailer;
                return (produced > 0).then_some(Fill::Data);
            }
        }
        loop {
            if self.input.data().is_empty() {
                match self.input.fill() {
                    Ok(_) => {}
                    Err(e) => return Some(self.io_error(e)),
                }
            }
            let at_eof = self.input.data().is_empty();
            let in_before = self.inflater.total_in();
            let out_before = self.inflater.total_out();
            let result = self.inflater.decompress(
                self.input.data(),
                &mut self.out[self.wend..],
                FlushDecompress::None,
            );
            let consumed = (self.inflater.total_in() - in_before) as usize;
            let produced = (self.inflater.total_out() - out_before) as usize;
            self.input.consume(consumed);
            if produced > 0 {
                self.crc.update(&self.out[self.wend..self.wend + produced]);
                self.wend += produced;
            }
            match result {
                Ok(Status::StreamEnd) => {
                    self.state = State::Trailer;
                    return if produced > 0 { Some(Fill::Data) } else { None };
                }
                Ok(_) => {
                    if produced > 0 {
                        return Some(Fill::Data);
                    }
                    if consumed == 0 {
                        // No progress: the inflater needs more input than is buffered.
                        let more = if at_eof { Ok(false) } else { self.input.fill() };
                        match more {
                            Ok(true) => {}
                            Ok(false) => {
                                let start = self.member_start;
                                self.drop_window();
                                let (kind, message) = if self.input.is_eof() {
                                    self.state = State::Eof;
                                    (
                                        ErrorKind::GzipTruncated,
                                        format!(
                                            "input ends inside the gzip member starting at offset {start}"
                                        ),
                                    )
                                } else {
                                    self.state = State::Resync { from: start + 1 };
                                    (
                                        ErrorKind::GzipData,
                                        format!(
                                            "the gzip member starting at offset {start} makes no progress"
                                        ),
                                    )
                                };
                                return Some(self.error(kind, start, message));
                            }
                            Err(e) => return Some(self.io_error(e)),
                        }
                    }
                }
                Err(e) => {
                    let start = self.member_start;
                    self.state = State::Resync { from: start + 1 };
                    self.drop_window();
                    return Some(self.error(
                        ErrorKind::GzipData,
                        start,
                        format!(
                            "invalid deflate data in the gzip member starting at offset {start} \
                             (corrupt, or cut short and followed by other bytes): {e}"
                        ),
                    ));
                }
            }
        }
    }

    /// Inflates the member in one call when its data is buffered (the window is empty at a
    /// member's start); returns the bytes written. The window grows to hold a member of up
    /// to [`WHOLE_MEMBER_MAX`] bytes. `None` leaves everything as it was, for the streaming
    /// inflater.
    fn inflate_whole_member(&mut self) -> Option<usize> {
        let inflater = self.whole_member.as_mut()?;
        let data = self.input.data();
        let size = buffered_member_size(data, self.input.is_eof())?;
        if self.wend != 0 || size > WHOLE_MEMBER_MAX {
            return None;
        }
        if size > self.out.len() {
            self.out = vec![0u8; size.next_power_of_two()].into_boxed_slice();
        }
        let (consumed, produced) = inflater.inflate(data, &mut self.out)?;
        // Only an intact member is taken: libdeflate accepts some invalid streams that
        // zlib-rs rejects (an invalid distance code, for one), so a member whose trailer
        // does not match is streamed again, and reported as zlib-rs finds it.
        let mut crc = Crc32::default();
        crc.update(&self.out[..produced]);
        let trailer = data.get(consumed..consumed + 8)?;
        if trailer[..4] != crc.sum().to_le_bytes() || trailer[4..] != crc.amount().to_le_bytes() {
            return None;
        }
        self.input.consume(consumed);
        self.crc = crc;
        self.wend = produced;
        Some(produced)
    }

    /// Check the trailer after the member's deflate data. A damaged or missing trailer is
    /// an error, but the member's data did decode completely, so its end is kept for the
    /// parser (`damaged_member_end`), which keeps a record that was complete by then.
    fn check_trailer(&mut self) -> Fill {
        let start = self.member_start;
        let data_end = self.input.offset();
        match self.input.fill_to(8) {
            Ok(true) => {}
            Ok(false) => {
                let rest = self.input.data().len();
                self.input.consume(rest);
                self.state = State::Eof;
                self.damaged_end = Some(self.input.offset());
                let message = if rest == 0 {
                    format!(
                        "the gzip member starting at offset {start} has no trailer (CRC-32, ISIZE): the input ends after its data"
                    )
                } else {
                    format!(
                        "input ends inside the trailer of the gzip member starting at offset {start}"
                    )
                };
                return self.error(ErrorKind::GzipTruncated, start, message);
            }
            Err(e) => return self.io_error(e),
        }
        let t = &self.input.data()[..8];
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let isize = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        let crc_ok = crc == self.crc.sum();
        if !crc_ok
            && !matches!(
                parse_gzip_header(self.input.data()),
                HeaderParse::Invalid(_)
            )
        {
            // What should be the trailer is the next member's header: the trailer is missing.
            self.state = State::Resync { from: data_end };
            self.damaged_end = Some(data_end);
            self.drop_window();
            return self.error(
                ErrorKind::GzipChecksum,
                start,
                format!(
                    "the gzip member starting at offset {start} has no trailer (CRC-32, ISIZE): the next member follows its data at offset {data_end}"
                ),
            );
        }
        self.input.consume(8);
        let end = self.input.offset();
        if !crc_ok {
            // A member cut short decodes the following members' bytes as its own data:
            // look for the next member from just after this one's start.
            self.state = State::Resync { from: start + 1 };
            self.damaged_end = Some(end);
            self.drop_window();
            return self.error(
                ErrorKind::GzipChecksum,
                start,
                format!(
                    "CRC-32 mismatch in the gzip member at offset {start}: trailer says {crc:08x}, data gives {:08x}",
                    self.crc.sum()
                ),
            );
        }
        if isize != self.crc.amount() {
            self.state = State::Resync { from: start + 1 };
            self.damaged_end = Some(end);
            self.drop_window();
            return self.error(
                ErrorKind::GzipSize,
                start,
                format!(
                    "size mismatch in the gzip member at offset {start}: trailer says {isize}, data is {} (mod 2^32)",
                    self.crc.amount()
                ),
            );
        }
        self.input.set_keep(None);
        self.state = State::Ended {
            end,
            told_empty: false,
        };
        Fill::MemberEnd(end)
    }

    /// Skip to the next `1f 8b 08` at or after `from`.
    fn resync(&mut self, from: u64) -> Option<Fill> {
        if from > self.input.offset() {
            let skip = ((from - self.input.offset()) as usize).min(self.input.data().len());
            self.input.consume(skip);
        } else {
            // Bytes of the broken member after its header may hold the next member.
            self.input.rewind_to(from);
        }
        self.input.set_keep(None);
        let finder = memmem::Finder::new(&[0x1f, 0x8b, 0x08]);
        loop {
            let data = self.input.data();
            if let Some(i) = finder.find(data) {
                // Only a complete, valid header counts: bytes that merely look like a
                // magic number are skipped without another error.
                match parse_gzip_header(&data[i..]) {
                    HeaderParse::Complete(_) => {
                        self.input.consume(i);
                        self.state = State::Header;
                        return None;
                    }
                    HeaderParse::Invalid(_) => {
                        self.input.consume(i + 1);
                        continue;
                    }
                    HeaderParse::Incomplete if !self.input.is_eof() => {
                        self.input.consume(i);
                        match self.input.fill() {
                            Ok(true) => continue,
                            Ok(false) if self.input.is_eof() => continue,
                            Ok(false) => {
                                self.input.consume(1);
                                continue;
                            }
                            Err(e) => return Some(self.io_error(e)),
                        }
                    }
                    HeaderParse::Incomplete => {
                        // A header cut off by the end of the input: report it there.
                        self.input.consume(i);
                        self.state = State::Header;
                        return None;
                    }
                }
            }
            // Keep two bytes that may begin a magic split across reads.
            let keep = data.len().min(2);
            let skip = data.len() - keep;
            self.input.consume(skip);
            match self.input.fill() {
                Ok(true) => {}
                Ok(false) => {
                    let rest = self.input.data().len();
                    self.input.consume(rest);
                    self.state = State::Eof;
                    return Some(Fill::Eof);
                }
                Err(e) => return Some(self.io_error(e)),
            }
        }
    }
}

impl<R: Read> ByteSource for GzipSource<R> {
    #[inline]
    fn window(&self) -> &[u8] {
        &self.out[self.wstart..self.wend]
    }

    #[inline]
    fn consume(&mut self, n: usize) {
        self.wstart = (self.wstart + n).min(self.wend);
    }

    fn fill(&mut self) -> Fill {
        loop {
            match self.state {
                State::Header => {
                    if self.wstart != self.wend {
                        // Leftover decoded bytes of a member that failed its check.
                        self.drop_window();
                    }
                    if let Some(fill) = self.start_member() {
                        return fill;
                    }
                }
                State::Inflate => {
                    if let Some(fill) = self.inflate_some() {
                        return fill;
                    }
                }
                State::Trailer => return self.check_trailer(),
                State::Ended { end, told_empty } => {
                    let empty = self.wstart == self.wend;
                    if !empty || !told_empty {
                        self.state = State::Ended {
                            end,
                            told_empty: empty,
                        };
                        return Fill::MemberEnd(end);
                    }
                    self.state = State::Header;
                }
                State::Resync { from } => {
                    if let Some(fill) = self.resync(from) {
                        return fill;
                    }
                }
                State::Eof => return Fill::Eof,
            }
        }
    }

    fn pos(&self) -> (u64, u64) {
        (self.member_start, self.out_base + self.wstart as u64)
    }

    fn input_position(&self) -> u64 {
        self.input.offset()
    }

    fn bytes_read(&self) -> u64 {
        self.input.bytes_read()
    }

    fn set_mark(&mut self) {
        self.mark = Some(self.out_base + self.wstart as u64);
    }

    fn clear_mark(&mut self) {
        self.mark = None;
    }

    fn mark_survives_fill(&self) -> bool {
        // The condition under which `make_room` keeps the marked bytes.
        self.mark.is_some_and(|mark| {
            mark >= self.out_base
                && mark <= self.out_base + self.wstart as u64
                && self.wend - (mark - self.out_base) as usize <= self.out.len() / 4
        })
    }

    fn damaged_member_end(&self) -> Option<u64> {
        self.damaged_end
    }

    fn rewind_to_mark(&mut self) -> bool {
        let done = match self.mark {
            Some(mark) if mark >= self.out_base && mark <= self.out_base + self.wstart as u64 => {
                self.wstart = (mark - self.out_base) as usize;
                true
            }
            _ => false,
        };
        self.mark = None;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;

    /// Reads every member; returns the decoded bytes of each and where each one ended.
    fn read_members(file: &[u8], read_buffer: usize, whole: bool) -> Vec<(Vec<u8>, u64)> {
        let mut source = GzipSource::new(Input::new(file, read_buffer, 0), 64 << 10, whole);
        let (mut members, mut current) = (Vec::new(), Vec::new());
        loop {
            match source.fill() {
                Fill::Data => {
                    current.extend_from_slice(source.window());
                    source.consume(source.window().len());
                }
                Fill::MemberEnd(end) => {
                    current.extend_from_slice(source.window());
                    source.consume(source.window().len());
                    if members.last().is_none_or(|(_, last)| *last != end) {
                        members.push((std::mem::take(&mut current), end));
                    }
                }
                Fill::Eof => return members,
                Fill::Error(e) => panic!("{e}"),
            }
        }
    }

    /// Members inflated in one call (small, grown window) and streamed (larger than
    /// `WHOLE_MEMBER_MAX`, not wholly buffered, incompressible) decode alike, with the
    /// same member ends, whatever the read buffer.
    #[test]
    fn whole_and_streamed_members_decode_alike() {
        let mut noise = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        while noise.len() < (WHOLE_MEMBER_MAX + (1 << 20)) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            noise.extend_from_slice(&x.to_le_bytes());
        }
        let texts: Vec<Vec<u8>> = vec![
            b"WARC/1.0\r\n\r\n".to_vec(),
            b"<p>a page</p>".repeat(30_000),
            Vec::new(),
            noise[..300_000].to_vec(),
            b"line\n".repeat(3 << 20),
            noise.clone(),
            b"the last one".to_vec(),
        ];
        let mut file = Vec::new();
        let mut ends = Vec::new();
        for text in &texts {
            let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
            gz.write_all(text).unwrap();
            file.extend_from_slice(&gz.finish().unwrap());
            ends.push(file.len() as u64);
        }
        for (read_buffer, whole) in [(64 << 10, true), (2 << 20, true), (2 << 20, false)] {
            let members = read_members(&file, read_buffer, whole);
            assert_eq!(members.len(), texts.len(), "read buffer {read_buffer}");
            for (i, ((got, end), want)) in members.iter().zip(&texts).enumerate() {
                assert!(got == want, "member {i}, read buffer {read_buffer}");
                assert_eq!(*end, ends[i], "member {i}, read buffer {read_buffer}");
            }
        }
    }

    #[test]
    fn guesses_from_the_next_header_or_the_end() {
        let mut data = vec![0u8; 20];
        data[16..20].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(buffered_member_size(&data, true), Some(1000));
        assert_eq!(
            buffered_member_size(&data, false),
            None,
            "more input may follow"
        );
        data.extend_from_slice(&[0x1f, 0x8b, 0x08, 0]);
        assert_eq!(buffered_member_size(&data, false), Some(1000));
        assert_eq!(buffered_member_size(&[0x1f, 0x8b, 0x08], false), None);
        assert_eq!(buffered_member_size(&[1, 2, 3], true), None);
    }

    #[test]
    fn header_fields() {
        // Minimal header.
        let mut h = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        assert_eq!(parse_gzip_header(&h), HeaderParse::Complete(10));
        assert_eq!(parse_gzip_header(&h[..5]), HeaderParse::Incomplete);
        // FEXTRA + FNAME + FCOMMENT + FHCRC.
        h[3] = FEXTRA | FNAME | FCOMMENT | FTEXT_UNUSED_FHCRC;
        h.extend_from_slice(&[4, 0, b's', b'l', 0, 0]);
        h.extend_from_slice(b"name\0comment\0");
        let mut crc = Crc::new();
        crc.update(&h);
        let crc16 = (crc.sum() & 0xffff) as u16;
        h.extend_from_slice(&crc16.to_le_bytes());
        assert_eq!(parse_gzip_header(&h), HeaderParse::Complete(h.len()));
        for cut in 10..h.len() {
            assert_eq!(
                parse_gzip_header(&h[..cut]),
                HeaderParse::Incomplete,
                "{cut}"
            );
        }
        let last = h.len() - 1;
        h[last] ^= 1;
        assert!(matches!(parse_gzip_header(&h), HeaderParse::Invalid(_)));
        assert!(matches!(
            parse_gzip_header(b"WARC/1.0\r\n"),
            HeaderParse::Invalid(_)
        ));
        assert!(matches!(
            parse_gzip_header(&[0x1f, 0x8b, 8, 0x20, 0, 0, 0, 0, 0, 3]),
            HeaderParse::Invalid(_)
        ));
    }
}
