//! The streaming WARC reader: record framing, header parsing, HTTP head, payload hashing,
//! error reporting and resynchronization, on top of a decoded byte source.

use std::io::{Read, Seek, SeekFrom};

use memchr::{memchr_iter, memmem, memrchr};

use super::block::{BlockCursor, BlockStop, CandidateScan, PayloadSink, PayloadState, Terminator};
use super::digest::{DigestCheck, check_digest};
use super::error::{ErrorKind, MandatoryHeader, WarcError};
use super::gzip::GzipSource;
use super::http::{HttpHead, looks_like_http};
use super::input::Input;
use super::record::{Compression, PayloadSummary, Record, WarcType, Warning, parse_warc_header};
use super::source::{ByteSource, Fill, PlainSource};

/// Buffer sizes and limits. The defaults suit any input.
#[derive(Clone, Debug)]
pub struct ReaderOptions {
    /// Bytes read from the input at a time.
    pub read_buffer: usize,
    /// Decompressed bytes produced at a time (gzip input).
    pub inflate_buffer: usize,
    /// Longest WARC header block accepted.
    pub header_limit: usize,
    /// Longest HTTP head kept: the fields after it are not parsed, but the payload still
    /// starts after the head's empty line (so its SHA-1 is the payload's).
    pub http_head_limit: usize,
    /// Payload bytes kept in [`PayloadSummary::prefix`].
    pub prefix_limit: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            read_buffer: 2 << 20,
            inflate_buffer: 256 << 10,
            header_limit: 1 << 20,
            http_head_limit: 256 << 10,
            prefix_limit: 1024,
        }
    }
}

enum Source<R> {
    Plain(PlainSource<R>),
    Gzip(Box<GzipSource<R>>),
}

/// Reads WARC records one after the other from any `Read`, gzip or not.
///
/// ```no_run
/// # use sediment::warc::WarcReader;
/// let file = std::fs::File::open("crawl.warc.gz").unwrap();
/// let mut reader = WarcReader::new(file).unwrap();
/// while let Some(item) = reader.next_record(None) {
///     match item {
///         Ok(record) => println!("{} {:?}", record.warc_type, record.target_uri()),
///         Err(error) => eprintln!("{error}"),
///     }
/// }
/// ```
pub struct WarcReader<R> {
    source: Source<R>,
    parser: Parser,
}

impl<R: Read> WarcReader<R> {
    /// A reader over a whole input (offsets count from its first byte). Fails only on a
    /// read error or an input that is not WARC (ARC, or another compression than gzip).
    pub fn new(read: R) -> Result<Self, WarcError> {
        Self::with_options(read, ReaderOptions::default())
    }

    pub fn with_options(read: R, options: ReaderOptions) -> Result<Self, WarcError> {
        Self::positioned(read, 0, 0, options)
    }

    /// A reader over an input already positioned at file offset `offset` (offsets are
    /// reported relative to the file), skipping `skip` decompressed bytes first (see
    /// [`Record::skip`]).
    pub fn positioned(
        read: R,
        offset: u64,
        skip: u64,
        options: ReaderOptions,
    ) -> Result<Self, WarcError> {
        let mut input = Input::new(read, options.read_buffer, offset);
        let io_error =
            |e: std::io::Error| WarcError::new(ErrorKind::Io, offset, format!("read error: {e}"));
        input.fill_to(16).map_err(io_error)?;
        let head = input.data();
        let compression = detect(head, offset)?;
        let source = match compression {
            Compression::Gzip => {
                Source::Gzip(Box::new(GzipSource::new(input, options.inflate_buffer)))
            }
            Compression::None => Source::Plain(PlainSource::new(input)),
        };
        Ok(WarcReader {
            source,
            parser: Parser::new(options, compression, skip),
        })
    }

    pub fn compression(&self) -> Compression {
        self.parser.compression
    }

    /// Read the next record. `None` at the end of the input (and after a fatal error).
    /// The sink, if any, receives the payload bytes as they stream by; when the result is
    /// an error, discard what it received for that record.
    pub fn next_record(
        &mut self,
        sink: Option<&mut dyn PayloadSink>,
    ) -> Option<Result<Record, WarcError>> {
        if self.parser.finished {
            return None;
        }
        let result = match &mut self.source {
            Source::Plain(source) => self.parser.next(source, sink),
            Source::Gzip(source) => self.parser.next(source.as_mut(), sink),
        };
        match &result {
            None => self.parser.finished = true,
            Some(Err(error)) if error.kind.is_fatal() => self.parser.finished = true,
            _ => {}
        }
        result
    }

    /// File offset up to which the input has been consumed (for a progress bar by bytes).
    /// It moves back when a stretch after a damaged record is read again.
    pub fn position(&self) -> u64 {
        match &self.source {
            Source::Plain(source) => source.input_position(),
            Source::Gzip(source) => source.input_position(),
        }
    }

    /// Records taken after resynchronizing on a `WARC/` line found by scanning past
    /// damage (in uncompressed input, or gzip members that do not line up with records).
    /// Each was complete and valid; a candidate that was not is returned as an error
    /// without a record.
    pub fn resyncs(&self) -> u64 {
        self.parser.resyncs
    }

    /// Raw bytes read from the input so far.
    pub fn bytes_read(&self) -> u64 {
        match &self.source {
            Source::Plain(source) => source.bytes_read(),
            Source::Gzip(source) => source.bytes_read(),
        }
    }
}

impl<R: Read + Seek> WarcReader<R> {
    /// Seek to `offset` and read from there, e.g. one record at a stored (offset, skip).
    pub fn open_at(
        mut read: R,
        offset: u64,
        skip: u64,
        options: ReaderOptions,
    ) -> Result<Self, WarcError> {
        read.seek(SeekFrom::Start(offset)).map_err(|e| {
            WarcError::new(
                ErrorKind::Io,
                offset,
                format!("cannot seek to offset {offset}: {e}"),
            )
        })?;
        Self::positioned(read, offset, skip, options)
    }
}

impl<R: Read> Iterator for WarcReader<R> {
    type Item = Result<Record, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record(None)
    }
}

/// Tell gzip from uncompressed input by the first bytes; refuse ARC and other compressions.
fn detect(head: &[u8], offset: u64) -> Result<Compression, WarcError> {
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Compression::Gzip);
    }
    let other = [
        (&[0x28, 0xb5, 0x2f, 0xfd][..], "zstd"),
        (&b"BZh"[..], "bzip2"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0][..], "xz"),
        (&[0x04, 0x22, 0x4d, 0x18][..], "lz4"),
    ];
    for (magic, name) in other {
        if head.starts_with(magic) {
            return Err(WarcError::new(
                ErrorKind::UnsupportedCompression,
                offset,
                format!("the input is {name}-compressed; only gzip and uncompressed WARC are read"),
            ));
        }
    }
    let text = &head[head.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
    if text.starts_with(b"filedesc:") {
        return Err(arc_error(offset));
    }
    Ok(Compression::None)
}

fn arc_error(offset: u64) -> WarcError {
    WarcError::new(
        ErrorKind::ArcNotSupported,
        offset,
        "this is an ARC file (filedesc:// header); ARC is not supported, only WARC",
    )
}

/// Record-level parsing state, independent of how the bytes are decoded.
struct Parser {
    options: ReaderOptions,
    compression: Compression,
    header_buf: Vec<u8>,
    head_buf: Vec<u8>,
    /// An error found while resynchronizing, returned by the next call.
    pending: Option<WarcError>,
    /// The window starts at the beginning of a line (for resync).
    at_line_start: bool,
    finished: bool,
    pending_skip: u64,
    first_record: bool,
    /// Gzip: a record started inside a member (one member for the whole file, or members
    /// that do not line up with records). Otherwise records are compressed one per member
    /// and a member boundary is the only place to resynchronize after an error.
    unaligned: bool,
    /// The next record is read after scanning for a `WARC/` line: it counts only when
    /// complete and valid.
    probation: bool,
    on_probation: bool,
    resyncs: u64,
    /// The gzip trailer damage found at the end of the current record (which is kept).
    trailer_damage: Option<WarcError>,
}

/// Look for the end of a header block (an empty line) in `prev` followed by `chunk`.
/// Returns the number of bytes of `chunk` up to and including the end, if found. A line
/// ends with LF after any number of CRs (`\n`, `\r\n`, and `\r\r\n` all occur).
fn find_blank_line(prev: &[u8], chunk: &[u8]) -> Option<usize> {
    let byte_at = |i: isize| -> Option<u8> {
        if i >= 0 {
            chunk.get(i as usize).copied()
        } else {
            let back = i.unsigned_abs();
            prev.len().checked_sub(back).map(|j| prev[j])
        }
    };
    for i in memchr_iter(b'\n', chunk) {
        let mut j = i as isize - 1;
        while byte_at(j) == Some(b'\r') {
            j -= 1;
        }
        if byte_at(j) == Some(b'\n') {
            return Some(i + 1);
        }
    }
    None
}

/// Fill until the window holds `n` bytes. False when it cannot grow (end of input or of
/// the gzip member); errors are returned.
fn ensure<S: ByteSource>(src: &mut S, n: usize) -> Result<bool, WarcError> {
    while src.window().len() < n {
        match src.fill() {
            Fill::Data => {}
            Fill::MemberEnd(_) | Fill::Eof => return Ok(false),
            Fill::Error(error) => return Err(error),
        }
    }
    Ok(true)
}

/// Bytes of an overlong HTTP head kept while looking for its end (a line end preceded by
/// a few CRs still counts).
const OVERFLOW_TAIL: usize = 16;

fn parse_content_length(value: &str) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

impl Parser {
    fn new(options: ReaderOptions, compression: Compression, skip: u64) -> Self {
        Parser {
            options,
            compression,
            header_buf: Vec::with_capacity(4096),
            head_buf: Vec::with_capacity(4096),
            pending: None,
            at_line_start: true,
            finished: false,
            pending_skip: skip,
            first_record: true,
            unaligned: skip > 0,
            probation: false,
            on_probation: false,
            resyncs: 0,
            trailer_damage: None,
        }
    }

    fn next<S: ByteSource>(
        &mut self,
        src: &mut S,
        sink: Option<&mut dyn PayloadSink>,
    ) -> Option<Result<Record, WarcError>> {
        if let Some(error) = self.pending.take() {
            return Some(Err(error));
        }
        if let Err(stop) = self.apply_skip(src) {
            return stop.map(Err);
        }
        self.on_probation = std::mem::take(&mut self.probation);
        let mut result = self.read_record(src, sink);
        self.first_record = false;
        if self.on_probation {
            match &mut result {
                Some(Ok(_)) => self.resyncs += 1,
                Some(Err(error)) => {
                    let had_record = error.record.take().is_some();
                    if had_record {
                        error
                            .message
                            .push_str(" (found by scanning after an error: not taken as a record)");
                    }
                }
                None => {}
            }
        }
        result
    }

    /// Skip the decompressed bytes a reader positioned at (offset, skip) must skip.
    /// `Err(None)`: end of input.
    fn apply_skip<S: ByteSource>(&mut self, src: &mut S) -> Result<(), Option<WarcError>> {
        while self.pending_skip > 0 {
            let available = src.window().len() as u64;
            if available > 0 {
                let n = available.min(self.pending_skip);
                src.consume(n as usize);
                self.pending_skip -= n;
                continue;
            }
            match src.fill() {
                Fill::Data | Fill::MemberEnd(_) => {}
                Fill::Eof => return Err(None),
                Fill::Error(error) => return Err(Some(error)),
            }
        }
        Ok(())
    }

    /// Skip to the next line that starts with `WARC/` (a gzip member start counts as a line
    /// start). False at the end of the input.
    fn find_warc_line<S: ByteSource>(&mut self, src: &mut S) -> Result<bool, WarcError> {
        let finder = memmem::Finder::new(b"\nWARC/");
        loop {
            let w = src.window();
            if self.at_line_start {
                if w.starts_with(b"WARC/") {
                    return Ok(true);
                }
                if !w.is_empty() && w.len() < 5 && b"WARC/".starts_with(w) {
                    if ensure(src, 5)? {
                        continue;
                    }
                    // Cannot grow: these few bytes are not a record.
                    let n = src.window().len();
                    src.consume(n);
                    self.at_line_start = false;
                }
            }
            let w = src.window();
            if let Some(i) = finder.find(w) {
                src.consume(i + 1);
                self.at_line_start = true;
                return Ok(true);
            }
            match memrchr(b'\n', w) {
                Some(i) if w.len() - (i + 1) < 5 && !w.is_empty() => {
                    src.consume(i + 1);
                    self.at_line_start = true;
                    if !src.window().is_empty() {
                        continue;
                    }
                }
                _ => {
                    let n = w.len();
                    src.consume(n);
                    if n > 0 {
                        self.at_line_start = false;
                    }
                }
            }
            match src.fill() {
                Fill::Data => {}
                Fill::MemberEnd(_) => self.at_line_start = true,
                Fill::Eof => return Ok(false),
                Fill::Error(error) => {
                    self.at_line_start = true;
                    return Err(error);
                }
            }
        }
    }

    /// An error after which the next record is found by scanning for a `WARC/` line. The
    /// scan runs now: when it runs into a gzip error of the same member, that error is the
    /// cause (a corrupt member decodes to bytes that look like a wrong Content-Length) and
    /// is returned instead, carrying the record; a gzip error of a later member is kept
    /// for the next call.
    fn resync_error<S: ByteSource>(
        &mut self,
        src: &mut S,
        mut error: WarcError,
        at_line_start: bool,
    ) -> Option<Result<Record, WarcError>> {
        let resynced = if self.compression == Compression::Gzip && !self.unaligned {
            self.skip_member(src)
        } else {
            self.at_line_start = at_line_start;
            self.find_warc_line(src).map(|found| self.probation = found)
        };
        if let Err(source_error) = resynced {
            if source_error.offset == error.offset && !source_error.kind.is_fatal() {
                let record = error.record.take();
                error = source_error;
                error.record = record;
            } else {
                self.pending = Some(source_error);
            }
        }
        Some(Err(error))
    }

    /// Records compressed one per member: skip what is left of the current member, since
    /// nothing inside another record's member is a record.
    fn skip_member<S: ByteSource>(&mut self, src: &mut S) -> Result<(), WarcError> {
        loop {
            let n = src.window().len();
            src.consume(n);
            match src.fill() {
                Fill::Data => {}
                Fill::MemberEnd(_) if src.window().is_empty() => break,
                Fill::MemberEnd(_) => {}
                Fill::Eof => break,
                Fill::Error(error) => {
                    self.at_line_start = true;
                    return Err(error);
                }
            }
        }
        self.at_line_start = true;
        Ok(())
    }

    /// A damaged or missing trailer of the gzip member the current record ends with, met
    /// once all the record's bytes were read: the member's data decoded completely, so the
    /// record is kept and the damage reported after it. Returns the member's end.
    fn trailer_only<S: ByteSource>(&mut self, src: &S, error: &WarcError) -> Option<u64> {
        let trailer_kind = matches!(
            error.kind,
            ErrorKind::GzipChecksum | ErrorKind::GzipSize | ErrorKind::GzipTruncated
        );
        let end = src.damaged_member_end()?;
        if !trailer_kind || !src.window().is_empty() || error.offset != src.pos().0 {
            return None;
        }
        self.trailer_damage = Some(WarcError::new(
            error.kind,
            error.offset,
            error.message.clone(),
        ));
        Some(end)
    }

    fn read_record<S: ByteSource>(
        &mut self,
        src: &mut S,
        sink: Option<&mut dyn PayloadSink>,
    ) -> Option<Result<Record, WarcError>> {
        self.trailer_damage = None;
        // Blank lines between records are tolerated.
        loop {
            let w = src.window();
            let n = w.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            let all = n == w.len();
            src.consume(n);
            if !all {
                break;
            }
            match src.fill() {
                Fill::Data | Fill::MemberEnd(_) => {}
                Fill::Eof => return None,
                Fill::Error(error) => return Some(Err(error)),
            }
        }
        let (offset, skip) = src.pos();
        match ensure(src, 5) {
            Ok(_) => {}
            Err(error) => return Some(Err(error)),
        }
        if !src.window().starts_with(b"WARC/") {
            let w = src.window();
            if self.first_record && w.starts_with(b"filedesc:") {
                return Some(Err(arc_error(offset)));
            }
            let shown = String::from_utf8_lossy(&w[..w.len().min(32)]).into_owned();
            let at = if skip > 0 {
                format!("offset {offset} (+{skip} decompressed bytes)")
            } else {
                format!("offset {offset}")
            };
            return self.resync_error(
                src,
                WarcError::new(
                    ErrorKind::Garbage,
                    offset,
                    format!("expected a WARC record at {at}, found {shown:?}"),
                ),
                false,
            );
        }
        if skip > 0 {
            self.unaligned = true;
        }

        // The header block, up to and including the empty line.
        self.header_buf.clear();
        loop {
            let w = src.window();
            let room = self.options.header_limit + 1
                - self.header_buf.len().min(self.options.header_limit);
            let chunk = &w[..w.len().min(room)];
            let found = find_blank_line(&self.header_buf, chunk);
            let take = found.unwrap_or(chunk.len());
            self.header_buf.extend_from_slice(&chunk[..take]);
            src.consume(take);
            if found.is_some() {
                break;
            }
            if self.header_buf.len() > self.options.header_limit {
                return self.resync_error(
                    src,
                    WarcError::new(
                        ErrorKind::BadHeader,
                        offset,
                        format!(
                            "WARC header block at offset {offset} is longer than {} bytes",
                            self.options.header_limit
                        ),
                    ),
                    false,
                );
            }
            match src.fill() {
                Fill::Data | Fill::MemberEnd(_) => {}
                Fill::Eof => {
                    return Some(Err(WarcError::new(
                        ErrorKind::RecordTruncated,
                        offset,
                        format!(
                            "input ends inside the WARC header of the record at offset {offset}"
                        ),
                    )));
                }
                Fill::Error(error) => return Some(Err(error)),
            }
        }
        let parsed = match parse_warc_header(&self.header_buf) {
            Ok(parsed) => parsed,
            Err(reason) => {
                return self.resync_error(
                    src,
                    WarcError::new(ErrorKind::BadHeader, offset, reason),
                    false,
                );
            }
        };
        let mut record = Record {
            offset,
            length: 0,
            skip,
            compression: self.compression,
            version: parsed.version,
            headers: parsed.headers,
            warc_type: WarcType::Other(String::new()),
            content_length: 0,
            header_length: self.header_buf.len() as u64,
            http: None,
            payload: None,
            digest_check: DigestCheck::NotApplicable,
            warnings: Vec::new(),
        };
        if parsed.malformed_lines > 0 {
            record
                .warnings
                .push(Warning::MalformedHeaderLines(parsed.malformed_lines));
        }
        let content_length = match record.header("Content-Length") {
            None => {
                let error = WarcError::new(
                    ErrorKind::MissingHeader(MandatoryHeader::ContentLength),
                    offset,
                    format!("record at offset {offset} has no Content-Length"),
                );
                return self.resync_error(src, error.with_record(record), true);
            }
            Some(value) => match parse_content_length(value) {
                Some(length) => length,
                None => {
                    let error = WarcError::new(
                        ErrorKind::InvalidContentLength,
                        offset,
                        format!(
                            "record at offset {offset} has an invalid Content-Length {value:?}"
                        ),
                    );
                    return self.resync_error(src, error.with_record(record), true);
                }
            },
        };
        record.content_length = content_length;
        if let Some(value) = record.header("WARC-Type") {
            record.warc_type = WarcType::parse(value);
        }
        let missing = [
            MandatoryHeader::WarcType,
            MandatoryHeader::WarcRecordId,
            MandatoryHeader::WarcDate,
        ]
        .into_iter()
        .find(|m| record.header(m.name()).is_none());

        src.set_mark();
        let mut cursor = BlockCursor {
            remaining: content_length,
            crossed_member: false,
            candidates: (self.compression == Compression::None).then(CandidateScan::new),
        };
        // A record missing a mandatory header is still read (without the sink), so that
        // the error can carry its payload summary.
        let sink = if missing.is_some() { None } else { sink };
        let outcome = self
            .read_block(src, &mut cursor, &mut record, sink)
            .map(Some);
        let payload = match outcome {
            Ok(payload) => payload,
            Err(stop) => return self.block_stopped(src, stop, record),
        };
        record.payload = payload;

        let (terminator, ended_with_member) = match self.read_terminator(src) {
            Ok(terminator) => terminator,
            Err(error) => {
                src.clear_mark();
                return Some(Err(error.with_record(record)));
            }
        };
        // A record found by scanning must end exactly where its Content-Length says.
        let mismatch = match terminator {
            Terminator::Clean => false,
            Terminator::Loose { at_end } => {
                record.warnings.push(Warning::LooseTerminator);
                self.on_probation && !at_end
            }
            Terminator::Mismatch => true,
        };
        if mismatch {
            self.trailer_damage = None;
            record.length = src.input_position().saturating_sub(offset);
            let rewound = src.rewind_to_mark();
            let error = WarcError::new(
                ErrorKind::ContentLengthMismatch,
                offset,
                format!(
                    "record at offset {offset}: the block is not followed by CRLFCRLF after \
                     Content-Length {content_length} bytes (Content-Length is wrong)"
                ),
            );
            return self.resync_error(src, error.with_record(record), rewound);
        }
        src.clear_mark();

        let end = match ended_with_member {
            Some(end) => Ok(end),
            None => self.record_end(src, offset),
        };
        if end.is_err() {
            self.trailer_damage = None;
        }
        match end {
            Ok(end) => record.length = end - offset,
            Err(error) => return Some(Err(error.with_record(record))),
        }

        if let Some(payload) = &record.payload {
            let segmented = record.header("WARC-Segment-Number").is_some();
            record.digest_check = if record.warc_type == WarcType::Revisit || segmented {
                DigestCheck::NotApplicable
            } else {
                check_digest(
                    record.payload_digest(),
                    &payload.sha1,
                    payload.dechunked_sha1.as_ref(),
                )
            };
        }
        if let Some(damage) = self.trailer_damage.take() {
            if matches!(record.digest_check, DigestCheck::Mismatch { .. }) {
                // The payload does not match its digest either: the data itself is damaged.
                return Some(Err(damage.with_record(record)));
            }
            let mut error = damage;
            error.kind = ErrorKind::GzipTrailer;
            error.message.push_str(&format!(
                "; the record at offset {offset} ending with it is complete and was kept"
            ));
            self.pending = Some(error);
        }
        if let Some(missing) = missing {
            let error = WarcError::new(
                ErrorKind::MissingHeader(missing),
                offset,
                format!("record at offset {offset} has no {} header", missing.name()),
            );
            return Some(Err(error.with_record(record)));
        }
        Some(Ok(record))
    }

    /// Turn an early stop inside a block into the error to return. In uncompressed input
    /// the block may have swallowed whole records (Content-Length far too large): read on
    /// from the first place one may start.
    fn block_stopped<S: ByteSource>(
        &mut self,
        src: &mut S,
        stop: BlockStop,
        mut record: Record,
    ) -> Option<Result<Record, WarcError>> {
        let offset = record.offset;
        record.length = src.input_position().saturating_sub(offset);
        let rewound = matches!(stop, BlockStop::Eof)
            && self.compression == Compression::None
            && src.rewind_to_mark();
        src.clear_mark();
        let error = match stop {
            BlockStop::Eof => WarcError::new(
                ErrorKind::RecordTruncated,
                offset,
                format!(
                    "input ends inside the block of the record at offset {offset} (Content-Length {})",
                    record.content_length
                ),
            ),
            BlockStop::NextRecordInside => WarcError::new(
                ErrorKind::ContentLengthMismatch,
                offset,
                format!(
                    "record at offset {offset}: the next gzip member starts a new record before \
                     Content-Length {} bytes were read (Content-Length is too large)",
                    record.content_length
                ),
            ),
            BlockStop::Source(error) => error,
        };
        if rewound {
            return self.resync_error(src, error.with_record(record), true);
        }
        Some(Err(error.with_record(record)))
    }

    /// Read the block: HTTP head if any, then the payload through SHA-1 and the sink.
    fn read_block<S: ByteSource>(
        &mut self,
        src: &mut S,
        cursor: &mut BlockCursor,
        record: &mut Record,
        sink: Option<&mut dyn PayloadSink>,
    ) -> Result<PayloadSummary, BlockStop> {
        let content_type = record.content_type().unwrap_or("");
        let declared_http = content_type
            .as_bytes()
            .get(..16)
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(b"application/http"));
        let (candidate, response_like) = match record.warc_type {
            WarcType::Resource => (false, false),
            WarcType::Response | WarcType::Revisit => (true, true),
            WarcType::Request => (true, false),
            _ => (declared_http, !content_type.contains("request")),
        };
        self.head_buf.clear();
        // True when head_buf holds payload bytes (no HTTP head after all).
        let mut head_is_payload = false;
        if candidate && cursor.remaining > 0 {
            let limit = self.options.http_head_limit.max(1);
            let mut decided = false;
            let mut terminated = false;
            // Past the limit the head is only scanned for its end, keeping the last bytes
            // (to see an empty line straddling two pieces), so the payload still starts
            // where it does and its SHA-1 is the payload's.
            let mut overflow: Option<Vec<u8>> = None;
            let mut head_length = 0u64;
            while cursor.remaining > 0 {
                let offset = src.pos().0;
                let w = src.window();
                if w.is_empty() {
                    cursor.fill(src)?;
                    continue;
                }
                let available = w
                    .len()
                    .min(usize::try_from(cursor.remaining).unwrap_or(usize::MAX));
                let (chunk, prev) = match &overflow {
                    Some(tail) => (&w[..available], &tail[..]),
                    None => (
                        &w[..available.min(limit - self.head_buf.len())],
                        &self.head_buf[..],
                    ),
                };
                let found = find_blank_line(prev, chunk);
                let take = found.unwrap_or(chunk.len());
                match &mut overflow {
                    Some(tail) => {
                        tail.extend_from_slice(&chunk[take.saturating_sub(OVERFLOW_TAIL)..take]);
                        let excess = tail.len().saturating_sub(OVERFLOW_TAIL);
                        tail.drain(..excess);
                    }
                    None => self.head_buf.extend_from_slice(&chunk[..take]),
                }
                let at = cursor.scan(&chunk[..take], offset);
                src.consume(take);
                if let Some(at) = at {
                    src.mark_record_candidate(at);
                }
                cursor.remaining -= take as u64;
                head_length += take as u64;
                if !decided && overflow.is_none() {
                    match looks_like_http(&self.head_buf, response_like, cursor.remaining > 0) {
                        Some(true) => decided = true,
                        Some(false) => break,
                        None => {}
                    }
                }
                if found.is_some() {
                    terminated = true;
                    break;
                }
                if overflow.is_none() && self.head_buf.len() >= limit {
                    record.warnings.push(Warning::HttpHeadTooLong {
                        limit: limit as u64,
                    });
                    if !decided {
                        // Not even a start line within the limit: not an HTTP message.
                        head_is_payload = true;
                        break;
                    }
                    let keep = self.head_buf.len().saturating_sub(OVERFLOW_TAIL);
                    overflow = Some(self.head_buf[keep..].to_vec());
                }
            }
            if overflow.is_some() {
                // The fields after the limit are not kept: parse whole lines only.
                let cut = memrchr(b'\n', &self.head_buf).map_or(0, |i| i + 1);
                self.head_buf.truncate(cut);
            }
            if !head_is_payload {
                let parsed = if decided {
                    HttpHead::parse(&self.head_buf)
                } else {
                    None
                };
                match parsed {
                    Some(mut head) => {
                        head.length = head_length;
                        if !terminated {
                            record.warnings.push(Warning::HttpHeadUnterminated);
                        }
                        if head.malformed_lines > 0 {
                            record
                                .warnings
                                .push(Warning::MalformedHttpHeaderLines(head.malformed_lines));
                        }
                        record.http = Some(head);
                    }
                    None => {
                        if declared_http {
                            record.warnings.push(Warning::HttpHeadUnparseable);
                        }
                        head_is_payload = true;
                    }
                }
            }
        }

        let chunked = record
            .http
            .as_ref()
            .is_some_and(HttpHead::transfer_encoding_chunked);
        let mut payload = PayloadState::new(self.options.prefix_limit, chunked);
        let mut sink = sink;
        if let Some(receiver) = sink.as_deref_mut()
            && !receiver.begin(record)
        {
            sink = None;
        }
        if head_is_payload {
            payload.update(&self.head_buf, &mut sink);
        }
        while cursor.remaining > 0 {
            let offset = src.pos().0;
            let w = src.window();
            if w.is_empty() {
                cursor.fill(src)?;
                continue;
            }
            let n = w
                .len()
                .min(usize::try_from(cursor.remaining).unwrap_or(usize::MAX));
            payload.update(&w[..n], &mut sink);
            let at = cursor.scan(&w[..n], offset);
            src.consume(n);
            if let Some(at) = at {
                src.mark_record_candidate(at);
            }
            cursor.remaining -= n as u64;
        }
        Ok(payload.finish())
    }

    /// Read the two line ends after a block. Also returns the end of the gzip member the
    /// record ends with, when the terminator is cut short by a member end and the next
    /// member starts the next record.
    fn read_terminator<S: ByteSource>(
        &mut self,
        src: &mut S,
    ) -> Result<(Terminator, Option<u64>), WarcError> {
        let mut ends = 0;
        let mut member_end = None;
        while ends < 2 {
            let w = src.window();
            match w.first() {
                None => match src.fill() {
                    Fill::Data => {}
                    Fill::MemberEnd(end) => member_end = Some(end),
                    Fill::Eof => return Ok((Terminator::Loose { at_end: true }, member_end)),
                    Fill::Error(error) => {
                        return match self.trailer_only(src, &error) {
                            Some(end) => Ok((Terminator::Loose { at_end: true }, Some(end))),
                            None => Err(error),
                        };
                    }
                },
                Some(b'\n') => {
                    src.consume(1);
                    ends += 1;
                    member_end = None;
                }
                Some(b'\r') => {
                    // CRs then LF (a few CRs at most), growing the window if they reach
                    // its end.
                    let count = |w: &[u8]| w.iter().take(8).take_while(|&&b| b == b'\r').count();
                    loop {
                        let w = src.window();
                        let crs = count(w);
                        if crs < w.len() || crs == 8 || !ensure(src, crs + 1)? {
                            break;
                        }
                    }
                    let w = src.window();
                    let crs = count(w);
                    if crs < w.len() && w[crs] == b'\n' {
                        src.consume(crs + 1);
                    } else if crs == w.len() {
                        // CRs at the end of the input or member: take them as a line end.
                        src.consume(crs);
                    } else {
                        return Ok((Terminator::Mismatch, None));
                    }
                    ends += 1;
                    member_end = None;
                }
                Some(_) => {
                    ensure(src, 5)?;
                    return Ok(if src.window().starts_with(b"WARC/") {
                        let at_end = member_end.is_some();
                        (Terminator::Loose { at_end }, member_end)
                    } else {
                        (Terminator::Mismatch, None)
                    });
                }
            }
        }
        Ok((Terminator::Clean, None))
    }

    /// File offset where the record ends: for gzip, the end of its member when the member
    /// ends with it (extra line ends before the member end are part of the record).
    fn record_end<S: ByteSource>(&mut self, src: &mut S, offset: u64) -> Result<u64, WarcError> {
        if self.compression == Compression::None {
            return Ok(src.pos().0);
        }
        let mut end = src.input_position().max(offset);
        loop {
            let w = src.window();
            let n = w.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            let all = n == w.len();
            src.consume(n);
            if n > 0 {
                end = src.input_position();
            }
            if !all {
                return Ok(end);
            }
            match src.fill() {
                Fill::Data => {}
                Fill::MemberEnd(member_end) => return Ok(member_end),
                Fill::Eof => return Ok(end),
                Fill::Error(error) => return self.trailer_only(src, &error).ok_or(error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use flate2::Compression as Level;
    use flate2::write::GzEncoder;
    use sha1::{Digest, Sha1};

    use super::*;
    use crate::warc::digest::sha1_base32;

    fn record_bytes(
        id: &str,
        kind: &str,
        content_type: &str,
        block: &[u8],
        extra: &str,
    ) -> Vec<u8> {
        let mut out = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{id}>\r\n\
             WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/{id}\r\n\
             {extra}Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Level::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    fn sha1(data: &[u8]) -> [u8; 20] {
        Sha1::digest(data).into()
    }

    /// Returns at most `step` bytes per read, to put every boundary somewhere awkward.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn read_all(data: &[u8]) -> Vec<Result<Record, WarcError>> {
        WarcReader::new(data).unwrap().collect()
    }

    fn sample() -> (Vec<Vec<u8>>, Vec<u8>) {
        let body = b"<html>hello</html>";
        let chunked_body = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
        http.extend_from_slice(body);
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        chunked.extend_from_slice(chunked_body);
        let digest = format!("WARC-Payload-Digest: sha1:{}\r\n", sha1_base32(&sha1(body)));
        let dechunked = format!(
            "WARC-Payload-Digest: sha1:{}\r\n",
            sha1_base32(&sha1(b"hello world"))
        );
        let records = vec![
            record_bytes(
                "1",
                "warcinfo",
                "application/warc-fields",
                b"software: test\r\n",
                "",
            ),
            record_bytes(
                "2",
                "response",
                "application/http; msgtype=response",
                &http,
                &digest,
            ),
            record_bytes(
                "3",
                "request",
                "application/http; msgtype=request",
                b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
                "",
            ),
            record_bytes(
                "4",
                "response",
                "application/http; msgtype=response",
                &chunked,
                &dechunked,
            ),
            record_bytes(
                "5",
                "resource",
                "text/plain",
                b"HTTP/1.1 200 looks like http but is a resource",
                "",
            ),
            record_bytes("6", "metadata", "application/warc-fields", b"", ""),
        ];
        let plain = records.concat();
        (records, plain)
    }

    #[test]
    fn plain_records_and_fields() {
        let (records, plain) = sample();
        let items = read_all(&plain);
        assert_eq!(items.len(), records.len());
        let mut offset = 0;
        for (item, bytes) in items.iter().zip(&records) {
            let record = item.as_ref().unwrap();
            assert_eq!(
                (record.offset, record.length, record.skip),
                (offset, bytes.len() as u64, 0)
            );
            offset += bytes.len() as u64;
        }
        let r: Vec<&Record> = items.iter().map(|i| i.as_ref().unwrap()).collect();
        assert_eq!(r[1].digest_check, DigestCheck::Match);
        assert_eq!(r[1].http_status(), Some(200));
        assert_eq!(r[1].payload.as_ref().unwrap().prefix, b"<html>hello</html>");
        assert_eq!(r[2].http.as_ref().unwrap().method(), Some("GET"));
        assert_eq!(r[2].payload.as_ref().unwrap().length, 0);
        let chunked = r[3].payload.as_ref().unwrap();
        assert!(chunked.chunked);
        assert_eq!(chunked.dechunked_length, Some(11));
        assert_eq!(chunked.dechunked_sha1, Some(sha1(b"hello world")));
        assert_eq!(r[3].digest_check, DigestCheck::MatchDechunked);
        assert!(r[4].http.is_none());
        assert_eq!(r[4].payload.as_ref().unwrap().length, 46);
        assert_eq!(r[0].target_uri(), Some("http://example.com/1"));
        assert_eq!(r[5].payload.as_ref().unwrap().length, 0);
    }

    #[test]
    fn any_read_sizes_give_the_same_records() {
        let (records, plain) = sample();
        let per_record: Vec<u8> = records.iter().flat_map(|r| gz(r)).collect();
        let whole = gz(&plain);
        // Members that cut records anywhere (like bgzip's fixed-size blocks).
        let unaligned: Vec<u8> = plain.chunks(37).flat_map(gz).collect();
        for (data, exact_lengths) in [
            (&plain, true),
            (&per_record, true),
            (&whole, false),
            (&unaligned, false),
        ] {
            // Where a record ends inside a member that holds more, its length is where the
            // inflater had read to, which depends on the read sizes.
            let normalize = |mut r: Record| {
                if !exact_lengths {
                    r.length = 0;
                }
                r
            };
            let expected: Vec<Record> = read_all(data)
                .into_iter()
                .map(Result::unwrap)
                .map(normalize)
                .collect();
            assert_eq!(expected.len(), records.len());
            for step in [1, 2, 3, 7, 64, 1000] {
                let reader = WarcReader::new(Trickle { data, step }).unwrap();
                let got: Vec<Record> = reader.map(Result::unwrap).map(normalize).collect();
                assert_eq!(got, expected, "step {step}");
            }
        }
        // Whole-file gzip: one member, records found by their decompressed skip.
        let whole_records: Vec<Record> = read_all(&whole).into_iter().map(Result::unwrap).collect();
        let mut skip = 0;
        for (record, bytes) in whole_records.iter().zip(&records) {
            assert_eq!((record.offset, record.skip), (0, skip));
            skip += bytes.len() as u64;
        }
        assert_eq!(whole_records.last().unwrap().length, whole.len() as u64);
        // Per-record gzip: exact member offsets and lengths.
        let mut offset = 0;
        for (record, bytes) in read_all(&per_record).iter().zip(&records) {
            let record = record.as_ref().unwrap();
            let len = gz(bytes).len() as u64;
            assert_eq!(
                (record.offset, record.length, record.skip),
                (offset, len, 0)
            );
            offset += len;
        }
    }

    #[test]
    fn lf_line_ends_blank_lines_and_loose_terminators() {
        let data = b"\r\n\r\nWARC/0.18\nWARC-Type: resource\nWARC-Record-ID: <urn:x:1>\nWARC-Date: 2008-01-01T00:00:00Z\n\
                     X-Folded: a\n  b\nContent-Length: 3\n\nabc\n\n\n\
                     WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x:2>\r\nWARC-Date: 2008-01-01T00:00:00Z\r\n\
                     Content-Length: 2\r\n\r\nxy\r\nWARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x:3>\r\n\
                     WARC-Date: 2008-01-01T00:00:00Z\r\nContent-Length: 1\r\n\r\nz";
        let items = read_all(data);
        let records: Vec<&Record> = items.iter().map(|i| i.as_ref().unwrap()).collect();
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].version, "0.18");
        assert_eq!(records[0].offset, 4);
        assert_eq!(records[0].header("x-folded"), Some("a b"));
        assert!(records[0].warnings.is_empty());
        assert_eq!(records[1].warnings, vec![Warning::LooseTerminator]);
        assert_eq!(records[2].warnings, vec![Warning::LooseTerminator]);
        assert_eq!(records[2].payload.as_ref().unwrap().prefix, b"z");
    }

    /// A head longer than the limit is not kept, but the payload still starts after it:
    /// its SHA-1 is the payload's, never the whole block's.
    #[test]
    fn overlong_http_head_is_skipped_not_hashed() {
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n".to_vec();
        while block.len() < 300_000 {
            block.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        let head_length = block.len() as u64 + 2;
        block.extend_from_slice(b"\r\nbody");
        let data = record_bytes("1", "response", "application/http", &block, "");
        for step in [1 << 20, 4093] {
            let items: Vec<_> = WarcReader::new(Trickle { data: &data, step })
                .unwrap()
                .collect();
            let record = items[0].as_ref().unwrap();
            let http = record.http.as_ref().unwrap();
            assert_eq!(http.status(), Some(200));
            assert_eq!(http.content_type(), Some("text/html"));
            assert_eq!(http.length, head_length);
            assert_eq!(
                record.warnings,
                vec![Warning::HttpHeadTooLong { limit: 256 << 10 }]
            );
            let payload = record.payload.as_ref().unwrap();
            assert_eq!((payload.length, payload.sha1), (4, sha1(b"body")));
        }
        // A start line that does not fit: not an HTTP message, the block is the payload.
        let block = vec![b'x'; 300_000];
        let data = record_bytes("2", "response", "application/http", &block, "");
        let items = read_all(&data);
        let record = items[0].as_ref().unwrap();
        assert!(record.http.is_none());
        assert_eq!(record.payload.as_ref().unwrap().sha1, sha1(&block));
    }

    /// Gzip, one member per record: after a wrong Content-Length the rest of the member is
    /// skipped, so a record stored in the payload is never returned; uncompressed, a
    /// record found by scanning must be complete and valid.
    #[test]
    fn records_inside_a_payload_are_not_records() {
        let inner = record_bytes(
            "inner",
            "response",
            "application/http",
            b"HTTP/1.1 200 OK\r\n\r\nx",
            "",
        );
        let mut block = b"stored:\r\n".to_vec();
        block.extend_from_slice(&inner);
        let mut carrier = record_bytes("carrier", "resource", "application/warc", &block, "");
        let declared = format!("Content-Length: {}", block.len());
        let shorter = format!("Content-Length: {}", block.len() - 5);
        let at = memmem::find(&carrier, declared.as_bytes()).unwrap();
        carrier.splice(at..at + declared.len(), shorter.bytes());
        let (records, _) = sample();
        let per_record: Vec<u8> = [gz(&records[0]), gz(&carrier), gz(&records[1])].concat();
        let items = read_all(&per_record);
        let ids: Vec<_> = items
            .iter()
            .filter_map(|i| i.as_ref().ok())
            .map(|r| r.record_id().unwrap().to_string())
            .collect();
        assert_eq!(ids, ["<urn:uuid:1>", "<urn:uuid:2>"]);
        assert_eq!(items.len(), 3);
        // Uncompressed, the same stored record lacking its id is not taken after the resync.
        let id_line = b"WARC-Record-ID: <urn:uuid:inner>\r\n";
        let at = memmem::find(&carrier, id_line).unwrap();
        carrier.drain(at..at + id_line.len());
        let plain = [records[0].clone(), carrier, records[1].clone()].concat();
        let mut reader = WarcReader::new(&plain[..]).unwrap();
        let items: Vec<_> = reader.by_ref().collect();
        let kinds: Vec<_> = items
            .iter()
            .map(|i| {
                i.as_ref()
                    .map(|r| r.record_id().unwrap().to_string())
                    .map_err(|e| (e.kind, e.record.is_some()))
            })
            .collect();
        assert_eq!(
            kinds,
            [
                Ok("<urn:uuid:1>".to_string()),
                Err((ErrorKind::ContentLengthMismatch, true)),
                Err((
                    ErrorKind::MissingHeader(MandatoryHeader::WarcRecordId),
                    false
                )),
                Ok("<urn:uuid:2>".to_string()),
            ]
        );
        assert_eq!(reader.resyncs(), 0);
    }

    /// A block far longer than the read buffer swallows the records after it: they are read
    /// again from the spill, each once.
    #[test]
    fn records_swallowed_by_a_huge_content_length_are_read_again() {
        let payload = vec![b'p'; 40_000];
        let records: Vec<Vec<u8>> = (0..40)
            .map(|i| record_bytes(&i.to_string(), "resource", "text/plain", &payload, ""))
            .collect();
        let mut bad = records[3].clone();
        let declared = format!("Content-Length: {}", payload.len());
        let at = memmem::find(&bad, declared.as_bytes()).unwrap();
        let larger = format!("Content-Length: {}", payload.len() + 500_000);
        bad.splice(at..at + declared.len(), larger.bytes());
        let mut data = records[..3].concat();
        data.extend_from_slice(&bad);
        data.extend_from_slice(&records[4..].concat());
        let options = ReaderOptions {
            read_buffer: 64 << 10,
            ..ReaderOptions::default()
        };
        for step in [1 << 20, 777] {
            let mut reader =
                WarcReader::with_options(Trickle { data: &data, step }, options.clone()).unwrap();
            let items: Vec<_> = reader.by_ref().collect();
            let ok: Vec<u64> = items
                .iter()
                .filter_map(|i| i.as_ref().ok())
                .map(|r| r.offset)
                .collect();
            let errors: Vec<ErrorKind> = items
                .iter()
                .filter_map(|i| i.as_ref().err())
                .map(|e| e.kind)
                .collect();
            assert_eq!(errors, [ErrorKind::ContentLengthMismatch], "step {step}");
            assert_eq!(ok.len(), 39, "step {step}");
            assert_eq!(reader.resyncs(), 1);
            assert_eq!(reader.bytes_read(), data.len() as u64);
        }
        // Past the end of the input: the records after it are still read.
        let larger = format!("Content-Length: {}", 1u64 << 40);
        let mut bad = records[3].clone();
        bad.splice(at..at + declared.len(), larger.bytes());
        let mut data = records[..3].concat();
        data.extend_from_slice(&bad);
        data.extend_from_slice(&records[4..].concat());
        let items: Vec<_> = WarcReader::with_options(&data[..], options)
            .unwrap()
            .collect();
        let errors: Vec<ErrorKind> = items
            .iter()
            .filter_map(|i| i.as_ref().err())
            .map(|e| e.kind)
            .collect();
        assert_eq!(errors, [ErrorKind::RecordTruncated]);
        assert_eq!(items.iter().filter(|i| i.is_ok()).count(), 39);
    }

    #[test]
    fn bad_chunking_is_reported_not_fatal() {
        let block = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot chunked";
        let data = record_bytes("1", "response", "application/http", block, "");
        let items = read_all(&data);
        let payload = items[0].as_ref().unwrap().payload.as_ref().unwrap();
        assert!(payload.chunked);
        assert_eq!(payload.dechunked_sha1, None);
        assert!(payload.dechunk_error.is_some());
        assert_eq!(payload.sha1, sha1(b"zz\r\nnot chunked"));
    }

    #[test]
    fn garbage_and_empty_input() {
        assert!(read_all(b"").is_empty());
        assert!(read_all(b"\r\n\r\n").is_empty());
        let (_, plain) = sample();
        let mut data = b"junk at the start\r\nmore\r\n".to_vec();
        data.extend_from_slice(&plain);
        let items = read_all(&data);
        assert_eq!(items[0].as_ref().unwrap_err().kind, ErrorKind::Garbage);
        assert_eq!(items[0].as_ref().unwrap_err().offset, 0);
        assert_eq!(items.iter().filter(|i| i.is_ok()).count(), 6);
        assert_eq!(items[1].as_ref().unwrap().offset, 25);
        // Garbage at the end of a gzip file.
        let mut data = gz(&plain);
        data.extend_from_slice(b"\0\0\0\0");
        let items = read_all(&data);
        assert_eq!(items.len(), 7);
        assert_eq!(items[6].as_ref().unwrap_err().kind, ErrorKind::Garbage);
    }

    #[test]
    fn readers_can_move_to_threads() {
        fn send<T: Send>() {}
        send::<WarcReader<std::fs::File>>();
        send::<Record>();
        send::<WarcError>();
    }

    #[test]
    fn sink_can_skip_records() {
        struct OnlyResponses(Vec<u8>, bool);
        impl PayloadSink for OnlyResponses {
            fn begin(&mut self, record: &Record) -> bool {
                self.1 = record.warc_type == WarcType::Response;
                self.1
            }
            fn payload(&mut self, bytes: &[u8]) {
                assert!(self.1);
                self.0.extend_from_slice(bytes);
            }
        }
        let (_, plain) = sample();
        let mut reader = WarcReader::new(&plain[..]).unwrap();
        let mut sink = OnlyResponses(Vec::new(), false);
        while let Some(item) = reader.next_record(Some(&mut sink)) {
            item.unwrap();
        }
        assert_eq!(
            sink.0,
            b"<html>hello</html>5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        );
    }
}
