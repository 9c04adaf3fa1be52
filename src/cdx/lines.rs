//! Line input for CDX files: plain or gzip (detected from the magic bytes), read line by
//! line or in chunks of whole lines, without allocating per line.
//!
//! Gzip input is read member by member. When a member ends in the middle of a line, the
//! line ends there too: ZipNum CDX shards (pywb, IA) are series of gzip blocks whose last
//! line has no line break, each block being read on its own by their readers. Members
//! carrying an FEXTRA field are the exception: block-gzip formats (BGZF) cut the stream at
//! fixed sizes regardless of lines, and mark their members that way.

use std::io::{self, BufRead, BufReader, Cursor, Read};

use flate2::bufread::GzDecoder;
use memchr::{memchr, memchr_iter, memrchr};

/// Bytes read at a time, and the initial buffer size.
const READ_SIZE: usize = 1 << 20;
/// A line longer than this is skipped (a binary file read as lines, most likely, or a
/// damaged line) rather than buffered: the reader reads on to the next line break, keeping
/// none of it, and goes on with the next line (see [`LineReader::take_overlong`]). The same
/// cap holds for every line format: CDX, JSON lines, TSV.
pub const MAX_LINE_LEN: usize = 64 << 20;

/// A line skipped for being longer than [`MAX_LINE_LEN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlong {
    /// Its 1-based number.
    pub line: u64,
    /// Its length without the line break (as far as it could be read).
    pub bytes: u64,
    /// Where it starts: bytes of (decompressed) input before it.
    pub offset: u64,
}

impl Overlong {
    /// What a report says of the line (its location aside).
    pub fn describe(&self, max_line: usize) -> String {
        format!(
            "{} bytes: longer than {} MiB, skipped without reading it into memory",
            self.bytes,
            max_line >> 20
        )
    }
}

/// Numbered lines (1-based) from plain or gzip input: the one line reader of every line
/// format (CDX, JSON lines, TSV, record lines). Lines longer than the cap
/// ([`MAX_LINE_LEN`]) are skipped in bounded memory and listed with their byte offsets
/// ([`LineReader::take_overlong`]); `\r\n` ends a line as `\n` does.
pub struct LineReader<'r> {
    source: Box<dyn Read + Send + 'r>,
    gzip: bool,
    buf: Vec<u8>,
    /// Unconsumed data is `buf[start..end]`.
    start: usize,
    end: usize,
    /// `buf[start..scanned]` is known to hold no line break.
    scanned: usize,
    eof: bool,
    /// Number of the next line.
    next_line_no: u64,
    /// Bytes consumed from the decompressed stream (for error positions).
    consumed: u64,
    /// A read error; the input ends there, once the complete lines before it are given.
    failed: Option<io::Error>,
    /// Lines skipped for their length, not yet taken by the caller.
    overlong: Vec<Overlong>,
    /// The largest the buffer has been (the memory bound the tests check).
    largest_buffer: usize,
    /// Bytes read at a time (the buffer's size when it holds no long line).
    read_size: usize,
    /// The line cap.
    max_line: usize,
    /// Whether [`LineReader::next_line`] fails at an overlong line rather than skip it.
    overlong_is_error: bool,
}

impl<'r> LineReader<'r> {
    /// Wraps a reader; gzip is recognized from its first two bytes (`1f 8b`).
    pub fn new<R: Read + Send + 'r>(mut reader: R) -> io::Result<Self> {
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < head.len() {
            match reader.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let gzip = got == 2 && head == [0x1f, 0x8b];
        let replay = Cursor::new(head[..got].to_vec()).chain(reader);
        let source: Box<dyn Read + Send + 'r> = if gzip {
            Box::new(GzipMembers::new(BufReader::with_capacity(
                256 << 10,
                replay,
            )))
        } else {
            Box::new(replay)
        };
        let mut reader = Self::plain(source);
        reader.gzip = gzip;
        Ok(reader)
    }

    /// Wraps a reader of plain (or already decompressed) lines, without looking for gzip.
    pub fn plain<R: Read + Send + 'r>(reader: R) -> Self {
        Self::plain_with_read_size(reader, READ_SIZE)
    }

    /// [`LineReader::plain`] reading `read_size` bytes at a time: small for a reader that
    /// wants one line at a place it sought to (a binary search over a sorted file).
    pub fn plain_with_read_size<R: Read + Send + 'r>(reader: R, read_size: usize) -> Self {
        let read_size = read_size.max(64);
        LineReader {
            source: Box::new(reader),
            gzip: false,
            buf: vec![0; read_size],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            next_line_no: 1,
            consumed: 0,
            failed: None,
            overlong: Vec::new(),
            largest_buffer: read_size,
            read_size,
            max_line: MAX_LINE_LEN,
            overlong_is_error: false,
        }
    }

    /// Sets the line cap (the tests use small ones; every input format uses
    /// [`MAX_LINE_LEN`]).
    pub fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line.max(1);
        self
    }

    /// The line cap.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Makes an overlong line an error of [`LineReader::next_line`] (`InvalidData`, naming
    /// the line and its byte offset) rather than a skipped line: for data a program wrote,
    /// where such a line is damage and skipping it would lose a record without a word.
    pub fn overlong_is_error(mut self) -> Self {
        self.overlong_is_error = true;
        self
    }

    /// The number of the last line given or skipped (0 before the first).
    pub fn last_line(&self) -> u64 {
        self.next_line_no - 1
    }

    /// Bytes of (decompressed) input consumed so far.
    pub fn bytes_consumed(&self) -> u64 {
        self.consumed
    }

    /// The lines skipped for their length since the last call, in order. Each is counted
    /// in the line numbers: the line after one has the next number.
    pub fn take_overlong(&mut self) -> Vec<Overlong> {
        std::mem::take(&mut self.overlong)
    }

    /// Whether the input was gzip.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// The next line without its line break (`\n` or `\r\n`), with its 1-based number.
    /// A last line without a line break is returned too.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        Ok(self
            .next_span()?
            .map(|(no, start, end)| (no, &self.buf[start..end])))
    }

    /// [`LineReader::next_line`], passing over empty lines (after taking off `\r`).
    pub fn next_nonempty_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        loop {
            match self.next_span()? {
                Some((_, start, end)) if start == end => {}
                Some((no, start, end)) => return Ok(Some((no, &self.buf[start..end]))),
                None => return Ok(None),
            }
        }
    }

    /// The next line as (number, start, end) in `buf`, without its line break.
    fn next_span(&mut self) -> io::Result<Option<(u64, usize, usize)>> {
        loop {
            if let Some(p) = memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let nl = self.scanned + p;
                let line_start = self.start;
                self.start = nl + 1;
                self.scanned = self.start;
                let offset = self.consumed;
                self.consumed += (nl + 1 - line_start) as u64;
                let no = self.next_line_no;
                self.next_line_no += 1;
                // A line over the cap that still fit in the buffer (which grows to the
                // cap plus one read) is skipped all the same: the cap is exact.
                if nl - line_start > self.max_line {
                    self.overlong.push(Overlong {
                        line: no,
                        bytes: (nl - line_start) as u64,
                        offset,
                    });
                    if self.overlong_is_error {
                        return Err(self.overlong_error());
                    }
                    continue;
                }
                return Ok(Some((no, line_start, self.cr_stripped(line_start, nl))));
            }
            self.scanned = self.end;
            if self.eof {
                if let Some(e) = self.failed.take() {
                    return Err(self.drop_incomplete(e));
                }
                if self.start == self.end {
                    return Ok(None);
                }
                let line_start = self.start;
                self.consumed += (self.end - line_start) as u64;
                self.start = self.end;
                let no = self.next_line_no;
                self.next_line_no += 1;
                return Ok(Some((
                    no,
                    line_start,
                    self.cr_stripped(line_start, self.end),
                )));
            }
            self.fill();
            if self.overlong_is_error && !self.overlong.is_empty() {
                return Err(self.overlong_error());
            }
        }
    }

    /// The error of the first overlong line (see [`LineReader::overlong_is_error`]),
    /// taken from the list.
    fn overlong_error(&mut self) -> io::Error {
        let skipped = self.overlong.remove(0);
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "line {} at byte {}: {}",
                skipped.line,
                skipped.offset,
                skipped.describe(self.max_line)
            ),
        )
    }

    /// The end of `buf[start..end]` without a final `\r`.
    fn cr_stripped(&self, start: usize, end: usize) -> usize {
        if end > start && self.buf[end - 1] == b'\r' {
            end - 1
        } else {
            end
        }
    }

    /// Ends the input at a read error: the incomplete line it cut is dropped, and the
    /// error names the last complete line.
    fn drop_incomplete(&mut self, error: io::Error) -> io::Error {
        let dropped = (self.end - self.start) as u64;
        self.start = self.end;
        self.scanned = self.end;
        cut_short(error, self.last_line(), self.consumed, dropped)
    }

    /// Moves whole lines, at least `min_bytes` of them unless the input ends first, into
    /// `out` (cleared first; each line keeps its line break, the last line of the input may
    /// lack one). Returns the number of the chunk's first line, or `None` at the end.
    /// Iterate the chunk with [`lines`].
    ///
    /// A read error comes after the complete lines read before it (the incomplete line it
    /// cut is dropped); lines skipped for their length are not in any chunk, but counted
    /// in the numbering (see [`LineReader::take_overlong`]). Unlike
    /// [`LineReader::next_line`], a chunk may hold a line up to one read (`read_size`)
    /// longer than the cap: lines are only measured when one does not fit the buffer.
    pub fn next_chunk(&mut self, min_bytes: usize, out: &mut Vec<u8>) -> io::Result<Option<u64>> {
        out.clear();
        loop {
            let have = self.end - self.start;
            if self.eof || have >= min_bytes {
                let data = &self.buf[self.start..self.end];
                let cut = if self.eof && self.failed.is_none() {
                    Some(data.len())
                } else {
                    memrchr(b'\n', data).map(|p| p + 1)
                };
                match cut {
                    Some(cut) if cut > 0 => {
                        out.extend_from_slice(&data[..cut]);
                        let first = self.next_line_no;
                        let breaks = memchr_iter(b'\n', &out[..]).count() as u64;
                        let unterminated = u64::from(!out.ends_with(b"\n"));
                        self.next_line_no += breaks + unterminated;
                        self.start += cut;
                        self.scanned = self.start;
                        self.consumed += cut as u64;
                        return Ok(Some(first));
                    }
                    _ if self.eof => {
                        return match self.failed.take() {
                            Some(e) => Err(self.drop_incomplete(e)),
                            None => Ok(None),
                        };
                    }
                    _ => {}
                }
            }
            self.fill();
        }
    }

    /// Reads more input after the unconsumed data, growing the buffer for long lines up to
    /// [`MAX_LINE_LEN`]. A read error is kept in `failed` and ends the input like its end.
    fn fill(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start;
            self.end -= self.start;
            self.start = 0;
        }
        let read_size = self.read_size;
        if self.buf.len() - self.end < read_size / 4 {
            // Callers ask for more only when what they have holds no line break they can
            // use: without one, the buffer holds the start of a single line.
            let one_line = memchr(b'\n', &self.buf[..self.end]).is_none();
            if one_line && self.end > self.max_line {
                self.skip_overlong();
                return;
            }
            let cap = if one_line {
                self.max_line + read_size
            } else {
                usize::MAX
            };
            let grown = (self.buf.len() * 2)
                .max(read_size)
                .min(cap)
                .max(self.end + read_size / 4);
            self.buf.resize(grown, 0);
            self.largest_buffer = self.largest_buffer.max(grown);
        }
        loop {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    self.drop_overlong_tail();
                    return;
                }
                Ok(n) => {
                    self.end += n;
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    self.eof = true;
                    return;
                }
            }
        }
    }

    /// At the end of the input, leaves out a last line (without a line break) longer than
    /// the cap, as a longer line followed by one is left out.
    fn drop_overlong_tail(&mut self) {
        let data = &self.buf[self.start..self.end];
        let tail_start = memrchr(b'\n', data).map_or(0, |p| p + 1);
        let tail = data.len() - tail_start;
        if tail > self.max_line {
            let breaks = memchr_iter(b'\n', &data[..tail_start]).count() as u64;
            self.overlong.push(Overlong {
                line: self.next_line_no + breaks,
                bytes: tail as u64,
                offset: self.consumed + tail_start as u64,
            });
            self.consumed += tail as u64;
            self.end = self.start + tail_start;
            self.scanned = self.scanned.min(self.end);
        }
    }

    /// Skips the line that fills the buffer (`buf[..end]`, no line break in it): reads on
    /// to its line break keeping nothing, records it in `overlong`, and shrinks the buffer
    /// back, so that memory stays bounded whatever the line's length.
    fn skip_overlong(&mut self) {
        let mut bytes = self.end as u64;
        let mut ended_by_break = false;
        self.start = 0;
        self.end = 0;
        let read_size = self.read_size;
        loop {
            match self.source.read(&mut self.buf[..read_size]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => match memchr(b'\n', &self.buf[..n]) {
                    Some(p) => {
                        bytes += p as u64;
                        self.start = p + 1;
                        self.end = n;
                        ended_by_break = true;
                        break;
                    }
                    None => bytes += n as u64,
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    self.eof = true;
                    break;
                }
            }
        }
        let line_break = u64::from(ended_by_break);
        self.overlong.push(Overlong {
            line: self.next_line_no,
            bytes,
            offset: self.consumed,
        });
        self.next_line_no += 1;
        self.consumed += bytes + line_break;
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        self.scanned = 0;
        self.buf.truncate(read_size);
        self.buf.shrink_to_fit();
    }
}

/// The error of an input that could not be read past line `last_line` (0: not even the
/// first line), with where it stopped; `bytes_read` counts the (decompressed) bytes of the
/// complete lines, `dropped` those of the incomplete line that was cut.
pub(crate) fn cut_short(
    error: io::Error,
    last_line: u64,
    bytes_read: u64,
    dropped: u64,
) -> io::Error {
    let at = if last_line == 0 {
        "cannot read the first line".to_string()
    } else {
        format!("cannot read past line {last_line}")
    };
    let tail = if dropped > 0 {
        format!("; the incomplete line after it ({dropped} bytes) was dropped")
    } else {
        String::new()
    };
    io::Error::new(
        error.kind(),
        format!(
            "{at}: {error} (after {bytes_read} bytes of data){tail}; the lines before were kept"
        ),
    )
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Decompresses a series of gzip members, ending a line at each member boundary that falls
/// inside one (see the module documentation).
struct GzipMembers<R: BufRead> {
    decoder: Option<GzDecoder<R>>,
    last_byte: u8,
    pending_newline: bool,
}

impl<R: BufRead> GzipMembers<R> {
    fn new(reader: R) -> Self {
        GzipMembers {
            decoder: Some(GzDecoder::new(reader)),
            last_byte: b'\n',
            pending_newline: false,
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pending_newline {
                self.pending_newline = false;
                self.last_byte = b'\n';
                out[0] = b'\n';
                return Ok(1);
            }
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let n = decoder.read(out)?;
            if n > 0 {
                self.last_byte = out[n - 1];
                return Ok(n);
            }
            // End of a member: another one follows unless the input is exhausted.
            let block_gzip = decoder.header().is_some_and(|h| h.extra().is_some());
            let Some(finished) = self.decoder.take() else {
                return Ok(0);
            };
            let mut inner = finished.into_inner();
            if inner.fill_buf()?.is_empty() {
                // No member follows: a final line needs no break.
                return Ok(0);
            }
            self.decoder = Some(GzDecoder::new(inner));
            if self.last_byte != b'\n' && !block_gzip {
                self.pending_newline = true;
            }
        }
    }
}

/// A piece of a buffer made of whole lines, with the number of its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineChunk<'a> {
    pub bytes: &'a [u8],
    pub first_line: u64,
}

impl<'a> LineChunk<'a> {
    pub fn lines(&self) -> Lines<'a> {
        lines(self.bytes, self.first_line)
    }
}

/// Splits `buf` into chunks of about `target_bytes` (at least one line each), cut just
/// after a line break, numbering lines from `first_line`. For parsing a large
/// uncompressed buffer (e.g. a memory-mapped file) in parallel.
pub fn split_at_line_boundaries(
    buf: &[u8],
    target_bytes: usize,
    first_line: u64,
) -> Vec<LineChunk<'_>> {
    let target = target_bytes.max(1);
    let mut chunks = Vec::with_capacity(buf.len() / target + 1);
    let mut start = 0;
    let mut line = first_line;
    while start < buf.len() {
        let want = (start + target).min(buf.len());
        // Cut after the first line break at or after the target size.
        let end = if want >= buf.len() {
            buf.len()
        } else {
            memchr(b'\n', &buf[want - 1..]).map_or(buf.len(), |p| want - 1 + p + 1)
        };
        let bytes = &buf[start..end];
        chunks.push(LineChunk {
            bytes,
            first_line: line,
        });
        line += memchr_iter(b'\n', bytes).count() as u64;
        start = end;
    }
    chunks
}

/// The lines of a chunk (without line breaks), numbered from `first_line`.
pub fn lines(chunk: &[u8], first_line: u64) -> Lines<'_> {
    Lines {
        rest: chunk,
        next_line: first_line,
    }
}

/// Iterator over numbered lines of a buffer; see [`lines`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    rest: &'a [u8],
    next_line: u64,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = match memchr(b'\n', self.rest) {
            Some(p) => (&self.rest[..p], &self.rest[p + 1..]),
            None => (self.rest, &self.rest[self.rest.len()..]),
        };
        self.rest = rest;
        let no = self.next_line;
        self.next_line += 1;
        Some((no, strip_cr(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, GzBuilder, write::GzEncoder};
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn gz_with_extra(data: &[u8]) -> Vec<u8> {
        let mut e = GzBuilder::new()
            .extra(b"BC\x02\x00\x00\x00".to_vec())
            .write(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn all_lines(input: &[u8]) -> Vec<(u64, String)> {
        let mut r = LineReader::new(input).unwrap();
        let mut out = Vec::new();
        while let Some((n, l)) = r.next_line().unwrap() {
            out.push((n, String::from_utf8_lossy(l).into_owned()));
        }
        out
    }

    #[test]
    fn plain_lines_with_crlf_and_no_final_break() {
        let got = all_lines(b"a\r\nb\n\nc");
        let want = [(1, "a"), (2, "b"), (3, ""), (4, "c")];
        assert_eq!(got, want.map(|(n, s)| (n, s.to_string())));
        assert!(all_lines(b"").is_empty());
        assert_eq!(all_lines(b"x"), vec![(1, "x".to_string())]);
    }

    #[test]
    fn gzip_members_end_lines_unless_block_gzip() {
        let mut data = gz(b"one\ntwo");
        data.extend(gz(b"three\nfour\n"));
        data.extend(gz(b"five"));
        let r = LineReader::new(&data[..]).unwrap();
        assert!(r.is_gzip());
        let got: Vec<String> = all_lines(&data).into_iter().map(|(_, l)| l).collect();
        assert_eq!(got, ["one", "two", "three", "four", "five"]);

        let mut bgzf = gz_with_extra(b"one\ntw");
        bgzf.extend(gz_with_extra(b"o\nthree\n"));
        let got: Vec<String> = all_lines(&bgzf).into_iter().map(|(_, l)| l).collect();
        assert_eq!(got, ["one", "two", "three"]);
    }

    #[test]
    fn long_lines_grow_the_buffer() {
        let long = "x".repeat(3 * READ_SIZE);
        let input = format!("a\n{long}\nb\n");
        let got = all_lines(input.as_bytes());
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].1.len(), long.len());
        assert_eq!(got[2], (3, "b".to_string()));
    }

    #[test]
    fn chunks_hold_whole_lines_and_number_them() {
        let input: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let mut r = LineReader::new(input.as_bytes()).unwrap();
        let mut chunk = Vec::new();
        let mut seen = Vec::new();
        while let Some(first) = r.next_chunk(1000, &mut chunk).unwrap() {
            assert!(chunk.ends_with(b"\n"));
            for (n, l) in lines(&chunk, first) {
                assert_eq!(l, format!("line {n}").as_bytes());
                seen.push(n);
            }
        }
        assert_eq!(seen, (1..=1000).collect::<Vec<_>>());
    }

    #[test]
    fn split_buffer_at_line_boundaries() {
        let input: String = (1..=500).map(|i| format!("{i}\n")).collect();
        for target in [1, 7, 100, 10_000] {
            let chunks = split_at_line_boundaries(input.as_bytes(), target, 1);
            let joined: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.to_vec()).collect();
            assert_eq!(joined, input.as_bytes());
            for c in &chunks {
                assert!(c.bytes.ends_with(b"\n"));
                for (n, l) in c.lines() {
                    assert_eq!(l, n.to_string().as_bytes());
                }
            }
        }
        let tail = split_at_line_boundaries(b"a\nb", 1, 10);
        assert_eq!(tail.len(), 2);
        assert_eq!(tail[1].first_line, 11);
    }
    #[test]
    fn a_cut_gzip_gives_its_complete_lines_then_names_the_last() {
        let input: String = (1..=20_000).map(|i| format!("line {i}\n")).collect();
        let whole = gz(input.as_bytes());
        let cut = &whole[..whole.len() / 2];
        // Line by line.
        let mut r = LineReader::new(cut).unwrap();
        let mut last = 0;
        let error = loop {
            match r.next_line() {
                Ok(Some((n, l))) => {
                    assert_eq!(l, format!("line {n}").as_bytes());
                    last = n;
                }
                Ok(None) => panic!("a cut gzip stream must end in an error"),
                Err(e) => break e,
            }
        };
        assert!(last > 1000, "{last}");
        assert_eq!(r.last_line(), last);
        assert!(
            error
                .to_string()
                .contains(&format!("cannot read past line {last}")),
            "{error}"
        );
        assert!(r.next_line().unwrap().is_none());
        // In chunks: the same lines, then the same error.
        let mut r = LineReader::new(cut).unwrap();
        let mut chunk = Vec::new();
        let mut seen = 0;
        let error = loop {
            match r.next_chunk(1000, &mut chunk) {
                Ok(Some(first)) => {
                    for (n, l) in lines(&chunk, first) {
                        assert_eq!(l, format!("line {n}").as_bytes());
                        seen = n;
                    }
                }
                Ok(None) => panic!("a cut gzip stream must end in an error"),
                Err(e) => break e,
            }
        };
        assert_eq!(seen, last);
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        assert!(r.next_chunk(1000, &mut chunk).unwrap().is_none());
    }

    /// A line of `len` bytes made on the fly (never held in memory by the test).
    fn with_long_line(len: u64) -> impl Read + Send {
        Cursor::new(b"first\n".to_vec())
            .chain(io::repeat(b'x').take(len))
            .chain(Cursor::new(b"\nthird\r\nfourth".to_vec()))
    }

    #[test]
    fn an_overlong_line_is_skipped_in_bounded_memory() {
        let len = MAX_LINE_LEN as u64 * 2 + 12_345;
        let mut r = LineReader::new(with_long_line(len)).unwrap();
        let mut got = Vec::new();
        while let Some((n, l)) = r.next_line().unwrap() {
            got.push((n, String::from_utf8_lossy(l).into_owned()));
        }
        let peak = r.largest_buffer;
        assert_eq!(
            got,
            vec![
                (1, "first".into()),
                (3, "third".into()),
                (4, "fourth".into())
            ]
        );
        assert_eq!(
            r.take_overlong(),
            vec![Overlong {
                line: 2,
                bytes: len,
                offset: 6
            }]
        );
        assert!(peak <= MAX_LINE_LEN + READ_SIZE, "buffer of {peak} bytes");
        assert!(r.buf.capacity() <= READ_SIZE, "the buffer shrinks back");
        assert_eq!(r.bytes_consumed(), 6 + len + 1 + 7 + 6);

        let mut r = LineReader::new(with_long_line(len)).unwrap();
        let mut chunk = Vec::new();
        let mut seen = Vec::new();
        while let Some(first) = r.next_chunk(4096, &mut chunk).unwrap() {
            seen.extend(lines(&chunk, first).map(|(n, _)| n));
        }
        assert!(r.largest_buffer <= MAX_LINE_LEN + READ_SIZE);
        assert_eq!(seen, [1, 3, 4]);
        assert_eq!(
            r.take_overlong(),
            vec![Overlong {
                line: 2,
                bytes: len,
                offset: 6
            }]
        );

        // An overlong last line without a line break.
        let tail =
            Cursor::new(b"a\n".to_vec()).chain(io::repeat(b'y').take(MAX_LINE_LEN as u64 + 1));
        let mut r = LineReader::new(tail).unwrap();
        assert_eq!(r.next_line().unwrap().map(|(n, _)| n), Some(1));
        assert!(r.next_line().unwrap().is_none());
        assert_eq!(
            r.take_overlong(),
            vec![Overlong {
                line: 2,
                bytes: MAX_LINE_LEN as u64 + 1,
                offset: 2
            }]
        );
    }

    /// Lines under a small cap, read a few bytes at a time: every way a line can end, and
    /// overlong lines in the middle and at the end.
    const CAPPED: &[u8] = b"a\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n\n\r\nb\n0123456789\nyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy";

    fn capped(input: &[u8]) -> LineReader<'_> {
        LineReader::plain_with_read_size(input, 64).with_max_line(100)
    }

    fn capped_overlong() -> Vec<Overlong> {
        let long = |c: u8| CAPPED.iter().filter(|&&b| b == c).count() as u64;
        let second = CAPPED.iter().position(|&b| b == b'y').unwrap() as u64;
        vec![
            Overlong {
                line: 2,
                bytes: long(b'x') + 1,
                offset: 3,
            },
            Overlong {
                line: 7,
                bytes: long(b'y'),
                offset: second,
            },
        ]
    }

    #[test]
    fn the_cap_skips_long_lines_with_their_offsets_and_keeps_the_others() {
        let want: Vec<(u64, String)> = [(1, "a"), (3, ""), (4, ""), (5, "b"), (6, "0123456789")]
            .map(|(n, s)| (n, s.to_string()))
            .to_vec();
        let mut r = capped(CAPPED);
        let mut got = Vec::new();
        while let Some((n, l)) = r.next_line().unwrap() {
            got.push((n, String::from_utf8_lossy(l).into_owned()));
        }
        assert_eq!(got, want);
        assert_eq!(r.take_overlong(), capped_overlong());
        assert_eq!(r.bytes_consumed(), CAPPED.len() as u64);
        assert!(r.largest_buffer <= 100 + 64, "{}", r.largest_buffer);

        // In chunks: the same lines and the same skipped ones.
        let mut r = capped(CAPPED);
        let mut chunk = Vec::new();
        let mut got = Vec::new();
        while let Some(first) = r.next_chunk(8, &mut chunk).unwrap() {
            for (n, l) in lines(&chunk, first) {
                got.push((n, String::from_utf8_lossy(l).into_owned()));
            }
        }
        assert_eq!(got, want);
        assert_eq!(r.take_overlong(), capped_overlong());

        // Empty lines passed over; the offsets name where each skipped line starts.
        let mut r = capped(CAPPED);
        let mut kept = Vec::new();
        while let Some((n, _)) = r.next_nonempty_line().unwrap() {
            kept.push(n);
        }
        assert_eq!(kept, [1, 5, 6]);
        for skipped in capped_overlong() {
            let at = skipped.offset as usize;
            assert!(at == 0 || CAPPED[at - 1] == b'\n');
        }

        // A line just over the cap is skipped even when the buffer holds it whole.
        let mut r = LineReader::plain_with_read_size(&b"ok\n0123456789x\r\nnext"[..], 4096)
            .with_max_line(10);
        let mut got = Vec::new();
        while let Some((n, l)) = r.next_line().unwrap() {
            got.push((n, String::from_utf8_lossy(l).into_owned()));
        }
        assert_eq!(got, [(1, "ok".to_string()), (3, "next".to_string())]);
        assert_eq!(
            r.take_overlong(),
            [Overlong {
                line: 2,
                bytes: 12,
                offset: 3
            }]
        );
        let mut r = LineReader::plain_with_read_size(&b"0123456789x\n"[..], 4096)
            .with_max_line(10)
            .overlong_is_error();
        let e = r.next_line().unwrap_err();
        assert!(e.to_string().starts_with("line 1 at byte 0: "), "{e}");
        assert!(r.next_line().unwrap().is_none());

        // For data a program wrote, an overlong line is an error naming it; the reader
        // goes on after it.
        let mut r = capped(CAPPED).overlong_is_error();
        assert_eq!(r.next_line().unwrap().map(|(n, _)| n), Some(1));
        let e = r.next_line().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().starts_with("line 2 at byte 3: "), "{e}");
        assert_eq!(r.next_line().unwrap().map(|(n, _)| n), Some(3));
    }
}
