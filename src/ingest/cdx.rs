//! CDX lines → captures.
//!
//! A CDX file is read in chunks of whole lines; chunks are parsed in parallel (the
//! dialect is fixed by the file's first deciding line, a header or a data line) and each
//! line that parses is one capture.

use std::borrow::Cow;
use std::io::Read;

use anyhow::Result;

use crate::capture::{CaptureKind, CaptureRef, Origin};
use crate::cdx::lines::{LineReader, MAX_LINE_LEN, Overlong, lines};
use crate::cdx::{CdxLine, CdxParser, CdxRecord, Dialect, detect_dialect};
use crate::filter::FileFilter;
use crate::input::report_overlong;
use crate::report::{Counts, Location, Report};

/// Bytes of lines handed to one worker at a time.
pub const CHUNK_BYTES: usize = 4 << 20;

/// What a CDX capture has that is not cut from its line as it is: the normalized MIME
/// type (revisits have none) and, for keys that are not SURTs, a SURT made from the URL.
pub struct CdxComputed<'a> {
    mime: Option<Cow<'a, str>>,
    surt: &'a str,
}

impl<'a> CdxComputed<'a> {
    /// What `record` lacks, a SURT made from its URL written into `surt_buf` (a buffer
    /// kept from line to line: a new `String` a line was 1 % of a bulk load, issue 39).
    pub fn of(record: &'a CdxRecord<'_>, surt_buf: &'a mut String) -> CdxComputed<'a> {
        let mime = match record.is_revisit {
            true => None,
            false => record.mime.as_deref().and_then(crate::mime::normalize),
        };
        let surt = match record.surt {
            Some(s) => s,
            None => {
                crate::surt::surt_into(&record.url, surt_buf);
                surt_buf.as_str()
            }
        };
        CdxComputed { mime, surt }
    }
}

/// The capture a CDX line describes, its texts borrowed from the line (nothing is copied:
/// the bulk loader encodes it as it is; `to_capture` makes an owned one).
pub fn capture_ref_from_cdx<'a>(
    record: &'a CdxRecord<'_>,
    computed: &'a CdxComputed<'_>,
    source: &'a str,
    line: u64,
    filter: &FileFilter,
) -> CaptureRef<'a> {
    let kind = if record.is_revisit {
        CaptureKind::Revisit
    } else {
        CaptureKind::Response
    };
    let mime = computed.mime.as_deref();
    // Not web captures (`metadata://`, `dns:`, `whois://`) locate no file row: see
    // `FileFilter::is_web_fetch`.
    let passes = FileFilter::is_web_fetch(&record.url)
        && filter.passes(kind, record.status, mime, record.digest.is_some());
    CaptureRef {
        c_size: record.compressed_size,
        content_type: record.mime.as_deref(),
        dechunked: None,
        declared_dechunked: false,
        digest: record.digest,
        digest_ok: None,
        etag: None,
        fetch_ms: None,
        kind,
        last_modified: None,
        line: Some(line),
        location: None,
        mime,
        offset: record.offset,
        origin: Origin::Cdx,
        passes,
        record_id: record.record_id.as_deref(),
        redirect: record.redirect.as_deref(),
        size: None,
        source,
        status: record.status,
        surt: computed.surt,
        ts: record.timestamp.as_str(),
        ua: None,
        url: &record.url,
        warc: record.filename.as_deref(),
    }
}

/// A chunk of one CDX file, ready for a worker.
pub struct CdxChunk {
    pub source: String,
    pub dialect: Option<Dialect>,
    pub first_line: u64,
    pub data: Vec<u8>,
    /// Lines before `first_line` skipped for being longer than [`MAX_LINE_LEN`]: each is
    /// a rejected line.
    pub overlong: Vec<Overlong>,
}

/// Reads a CDX input as chunks of whole lines; the first line that decides the dialect
/// (a header or a data line) decides it for the whole file.
pub struct CdxChunks<'r> {
    reader: LineReader<'r>,
    source: String,
    dialect: Option<Dialect>,
    /// A read error, given after the chunk that carries the overlong lines before it.
    failed: Option<std::io::Error>,
}

impl<'r> CdxChunks<'r> {
    pub fn new(read: impl Read + Send + 'r, source: String) -> std::io::Result<Self> {
        Ok(CdxChunks {
            reader: LineReader::new(read)?,
            source,
            dialect: None,
            failed: None,
        })
    }

    /// The next chunk; `None` at the end. A read error (a gzip file cut short) comes after
    /// the chunks of the complete lines before it; [`CdxChunks::last_line`] then names
    /// the last of them.
    pub fn next_chunk(&mut self) -> std::io::Result<Option<CdxChunk>> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut data = Vec::with_capacity(CHUNK_BYTES + 4096);
        let read = self.reader.next_chunk(CHUNK_BYTES, &mut data);
        let overlong = self.reader.take_overlong();
        let first_line = match read {
            Ok(Some(first)) => first,
            // Overlong lines at the end (or before an error) still need their report.
            Ok(None) | Err(_) if !overlong.is_empty() => {
                if let Err(e) = read {
                    self.failed = Some(e);
                }
                self.reader.last_line() + 1
            }
            Ok(None) => return Ok(None),
            Err(e) => return Err(e),
        };
        if self.dialect.is_none() {
            self.dialect = detect_dialect(&data);
        }
        Ok(Some(CdxChunk {
            source: self.source.clone(),
            dialect: self.dialect,
            first_line,
            data,
            overlong,
        }))
    }

    /// The number of the last line read (0 before the first).
    pub fn last_line(&self) -> u64 {
        self.reader.last_line()
    }

    /// Bytes of (decompressed) input read so far.
    pub fn bytes_read(&self) -> u64 {
        self.reader.bytes_consumed()
    }
}

/// Parses a chunk, calling `each` for every capture (borrowed from its line); rejects go
/// to the report.
pub fn parse_chunk(
    chunk: &CdxChunk,
    filter: &FileFilter,
    report: &Report,
    counts: &mut Counts,
    mut each: impl FnMut(&CaptureRef<'_>) -> Result<()>,
) -> Result<()> {
    let mut parser = match chunk.dialect {
        Some(d) => CdxParser::with_dialect(d),
        None => CdxParser::new(),
    };
    for skipped in &chunk.overlong {
        counts.incr("lines");
        counts.incr("rejected");
        report_overlong(report, &chunk.source, skipped, MAX_LINE_LEN)?;
    }
    // The counts of every line are tallied here and added once: a counter looked up by
    // name three times a line was a few per cent of a bulk load.
    let mut tally = [0u64; 5];
    let [lines_seen, captures, file_captures, revisits, rejected] = &mut tally;
    let mut not_web = 0u64;
    let mut surt_buf = String::new();
    let parsed = (|| -> Result<()> {
        for (line_no, line) in lines(&chunk.data, chunk.first_line) {
            *lines_seen += 1;
            match parser.parse_line(line) {
                Ok(CdxLine::Record(record)) => {
                    let computed = CdxComputed::of(&record, &mut surt_buf);
                    let capture =
                        capture_ref_from_cdx(&record, &computed, &chunk.source, line_no, filter);
                    *captures += 1;
                    *file_captures += u64::from(capture.passes);
                    *revisits += u64::from(capture.kind == CaptureKind::Revisit);
                    not_web += u64::from(!FileFilter::is_web_fetch(capture.url));
                    each(&capture)?;
                }
                Ok(CdxLine::Skipped(reason)) => counts.incr(&format!("skipped_{}", reason.name())),
                Err(reject) => {
                    *rejected += 1;
                    report.problem(
                        Location::line(chunk.source.clone(), line_no),
                        reject.reason.name(),
                        &reject.detail,
                        Some(line),
                    )?;
                }
            }
        }
        Ok(())
    })();
    let names = ["lines", "captures", "file_captures", "revisits", "rejected"];
    for (name, n) in names.into_iter().zip(tally) {
        counts.add(name, n);
    }
    if not_web > 0 {
        counts.add("captures_not_web", not_web);
    }
    parsed
}
