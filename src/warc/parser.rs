//! Record framing over a decoded byte source: the WARC header, the HTTP head, the block
//! and its terminator, payload hashing, and what to do after damage (the error, then
//! resynchronisation on the next gzip member or `WARC/` line). [`super::WarcReader`] drives
//! it over a plain or gzip source.

use memchr::{memmem, memrchr};

use super::block::{BlockCursor, BlockStop, CandidateScan, PayloadSink, PayloadState, Terminator};
use super::bytes::find_blank_line;
use super::digest::{DigestCheck, check_digest};
use super::end_check::EndCheck;
use super::error::{ErrorKind, MandatoryHeader, WarcError};
use super::http::{HttpHead, looks_like_http};
use super::record::{Compression, PayloadSummary, Record, WarcType, Warning, parse_warc_header};
use super::source::{ByteSource, Fill};

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
    /// Inflate a gzip member in one call (libdeflate) when it is wholly buffered and at
    /// most 4 MiB decoded, which is faster; `false` streams every member (zlib-rs). What
    /// the reader gives is the same either way (the tests and a fuzz target compare).
    pub whole_members: bool,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            read_buffer: 2 << 20,
            inflate_buffer: 256 << 10,
            header_limit: 1 << 20,
            http_head_limit: 256 << 10,
            prefix_limit: 1024,
            whole_members: true,
        }
    }
}

/// Record-level parsing state, independent of how the bytes are decoded.
pub(super) struct Parser {
    options: ReaderOptions,
    pub(super) compression: Compression,
    header_buf: Vec<u8>,
    head_buf: Vec<u8>,
    /// An error found while resynchronizing, returned by the next call.
    pending: Option<WarcError>,
    /// The window starts at the beginning of a line (for resync).
    at_line_start: bool,
    pub(super) finished: bool,
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
    pub(super) resyncs: u64,
    /// Offset of a damaged record whose end is not known (its Content-Length is wrong or
    /// missing, and no digest placed its end): every record found by scanning until one is
    /// taken may lie inside its block, and is taken only when another record (or the end
    /// of the input) follows it.
    inside: Option<u64>,
    /// The gzip trailer damage found at the end of the current record (which is kept).
    trailer_damage: Option<WarcError>,
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

/// How far past the start of a damaged block its end is looked for by its digest. The
/// source reads the stretch again when it is not found (uncompressed input keeps it in a
/// temporary file), so it is bounded.
const END_SCAN_LIMIT: u64 = 64 << 20;

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
    pub(super) fn new(options: ReaderOptions, compression: Compression, skip: u64) -> Self {
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
            inside: None,
            trailer_damage: None,
        }
    }

    pub(super) fn next<S: ByteSource>(
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
        // Inside a damaged record every record is on probation until one is taken.
        self.on_probation = std::mem::take(&mut self.probation) || self.inside.is_some();
        let mut result = self.read_record(src, sink);
        self.first_record = false;
        if self.on_probation {
            match &mut result {
                Some(Ok(record)) => {
                    if let Some(damaged) = self.inside
                        && !self.followed_by_record(src)
                    {
                        return Some(Err(self.not_followed(src, record, damaged)));
                    }
                    self.inside = None;
                    self.resyncs += 1;
                }
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

    /// Whether what follows the record just read is another record (after blank lines) or
    /// the end of the input (or of the gzip member). A gzip error there is kept for the
    /// next call and counts as an end.
    fn followed_by_record<S: ByteSource>(&mut self, src: &mut S) -> bool {
        // Blank lines between records are tolerated, but not without bound.
        const MAX_BLANK: usize = 4096;
        loop {
            let w = src.window();
            let n = w.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            if n < w.len() && w.len() >= n + 5 {
                return w[n..].starts_with(b"WARC/");
            }
            if n > MAX_BLANK {
                return false;
            }
            let have = w.len();
            match ensure(src, have + 1) {
                Ok(true) => {}
                Ok(false) => {
                    let w = src.window();
                    return w.iter().all(|&b| b == b'\r' || b == b'\n');
                }
                Err(error) => {
                    self.pending.get_or_insert(error);
                    return true;
                }
            }
        }
    }

    /// A complete and valid record found by scanning inside a damaged record that is not
    /// followed by another record: it is text inside the damaged record's block (a stored
    /// or quoted WARC record), not a record of this file. Scanning goes on after it.
    fn not_followed<S: ByteSource>(
        &mut self,
        src: &mut S,
        record: &Record,
        damaged: u64,
    ) -> WarcError {
        let at = if record.skip > 0 {
            format!(
                "offset {} (+{} decompressed bytes)",
                record.offset, record.skip
            )
        } else {
            format!("offset {}", record.offset)
        };
        let error = WarcError::new(
            ErrorKind::Garbage,
            record.offset,
            format!(
                "a WARC record at {at}, found by scanning after the damaged record at offset \
                 {damaged}, is not followed by another record: it is text inside the damaged \
                 record's block, not taken as a record"
            ),
        );
        self.at_line_start = true;
        match self.find_warc_line(src) {
            Ok(found) => self.probation = found,
            Err(source_error) => self.pending = Some(source_error),
        }
        error
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
            self.resync_scan(src, &mut error)
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

    /// Find where to read on after an error, scanning for a `WARC/` line. After the header
    /// of a record was read, the record has started and its block may hold the text of
    /// other records: when its digests place its end, reading goes on there (the records
    /// that looked like records before it were its bytes); otherwise every record found is
    /// on probation until one is followed by another record (see [`Parser::inside`]).
    fn resync_scan<S: ByteSource>(
        &mut self,
        src: &mut S,
        error: &mut WarcError,
    ) -> Result<(), WarcError> {
        if !self.on_probation && error.kind != ErrorKind::Garbage {
            self.inside = Some(error.offset);
            let block_start = error.record.as_deref().and_then(|record| {
                let (offset, skip) = src.pos();
                let (block_offset, block_skip) = match self.compression {
                    Compression::None => (record.offset + record.header_length, 0),
                    Compression::Gzip => (record.offset, record.skip + record.header_length),
                };
                (offset == block_offset && skip == block_skip).then_some(record)
            });
            let check = block_start.and_then(|r| EndCheck::of(r, self.options.http_head_limit));
            if let Some(mut check) = check {
                src.set_mark();
                let (offset, _) = src.pos();
                src.mark_record_candidate(offset);
                if self.find_verified_end(src, &mut check)? {
                    src.clear_mark();
                    self.inside = None;
                    self.at_line_start = true;
                    self.probation = true;
                    let (offset, skip) = src.pos();
                    let at = match self.compression {
                        Compression::None => format!("offset {offset}"),
                        Compression::Gzip => {
                            format!("{skip} decompressed bytes into the member at offset {offset}")
                        }
                    };
                    error.message.push_str(&format!(
                        "; its digest places its end before the record at {at}, where reading goes on"
                    ));
                    return Ok(());
                }
                if !src.rewind_to_mark() {
                    self.at_line_start = false;
                }
            }
        }
        self.probation = self.find_warc_line(src)?;
        Ok(())
    }

    /// The window starts at the block of a damaged record: look for the first place where
    /// the block can end (line ends, then a `WARC/` line) and its digest matches. True:
    /// the window starts at that `WARC/` line. False: not found within what the source can
    /// read again (`rewind_to_mark` then goes back to the block).
    fn find_verified_end<S: ByteSource>(
        &mut self,
        src: &mut S,
        check: &mut EndCheck,
    ) -> Result<bool, WarcError> {
        // Line ends before a `WARC/` line that may be the terminator (more are the block's).
        const RUN: usize = 8;
        // Kept unconsumed at the end of the window: a `\nWARC/` may straddle two reads.
        const TAIL: usize = 16;
        let finder = memmem::Finder::new(b"\nWARC/");
        let mut scanned = 0u64;
        loop {
            let w = src.window();
            let mut fed = 0;
            let mut from = 0;
            while let Some(i) = finder.find(&w[from..]).map(|i| i + from) {
                let line = i + 1;
                let mut start = line;
                while start > fed && line - start < RUN && matches!(w[start - 1], b'\r' | b'\n') {
                    start -= 1;
                }
                check.feed(&w[fed..start]);
                fed = start;
                // The terminator is at least the line end before `WARC/`.
                if (start..line).any(|end| check.ends_after(&w[start..end])) {
                    src.consume(line);
                    return Ok(true);
                }
                from = i + 1;
            }
            let upto = w.len().saturating_sub(TAIL).max(fed);
            check.feed(&w[fed..upto]);
            src.consume(upto);
            scanned += upto as u64;
            if scanned > END_SCAN_LIMIT || !src.mark_survives_fill() {
                return Ok(false);
            }
            match src.fill() {
                Fill::Data => {}
                Fill::MemberEnd(_) => {
                    // Members that do not line up with records: read on into the next.
                    let w = src.window();
                    check.feed(w);
                    let n = w.len();
                    src.consume(n);
                    scanned += n as u64;
                }
                Fill::Eof => return Ok(false),
                Fill::Error(error) => return Err(error),
            }
        }
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
            && (self.compression == Compression::None || self.unaligned)
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
                let (offset, available) = cursor.next_piece(src)?;
                let w = src.window();
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
                cursor.consume(src, take, offset);
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
            let (offset, n) = cursor.next_piece(src)?;
            payload.update(&src.window()[..n], &mut sink);
            cursor.consume(src, n, offset);
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

/// The error for an ARC file, told by its `filedesc:` header.
pub(super) fn arc_error(offset: u64) -> WarcError {
    WarcError::new(
        ErrorKind::ArcNotSupported,
        offset,
        "this is an ARC file (filedesc:// header); ARC is not supported, only WARC",
    )
}
