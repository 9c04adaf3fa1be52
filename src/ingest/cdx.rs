//! CDX lines → captures.
//!
//! A CDX file is read in chunks of whole lines; chunks are parsed in parallel (the
//! dialect is fixed by the file's first deciding line, a header or a data line) and each
//! line that parses is one capture.

use std::io::Read;

use anyhow::Result;

use crate::capture::{Capture, CaptureKind, Origin};
use crate::cdx::lines::{LineReader, MAX_LINE_LEN, Overlong, lines};
use crate::cdx::{CdxLine, CdxParser, CdxRecord, Dialect, detect_dialect};
use crate::filter::FileFilter;
use crate::report::{Counts, Location, Report};

/// Bytes of lines handed to one worker at a time.
pub const CHUNK_BYTES: usize = 4 << 20;

/// The capture a CDX line describes.
pub fn capture_from_cdx(
    record: &CdxRecord<'_>,
    source: &str,
    line: u64,
    filter: &FileFilter,
) -> Capture {
    let kind = if record.is_revisit {
        CaptureKind::Revisit
    } else {
        CaptureKind::Response
    };
    let mime = match kind {
        CaptureKind::Revisit => None,
        _ => record
            .mime
            .as_deref()
            .and_then(crate::mime::normalize)
            .map(|m| m.into_owned()),
    };
    let passes = filter.passes(
        kind,
        record.status,
        mime.as_deref(),
        record.digest.is_some(),
    );
    let surt = match record.surt {
        Some(s) => s.to_string(),
        None => crate::surt::surt(&record.url),
    };
    Capture {
        c_size: record.compressed_size,
        content_type: record.mime.as_deref().map(str::to_string),
        dechunked: None,
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
        record_id: record.record_id.as_deref().map(str::to_string),
        redirect: record.redirect.as_deref().map(str::to_string),
        size: None,
        source: source.to_string(),
        status: record.status,
        surt,
        ts: record.timestamp.as_str().to_string(),
        ua: None,
        url: record.url.to_string(),
        warc: record.filename.as_deref().map(str::to_string),
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

/// Parses a chunk, calling `each` for every capture; rejects go to the report.
pub fn parse_chunk(
    chunk: &CdxChunk,
    filter: &FileFilter,
    report: &Report,
    counts: &mut Counts,
    mut each: impl FnMut(Capture) -> Result<()>,
) -> Result<()> {
    let mut parser = match chunk.dialect {
        Some(d) => CdxParser::with_dialect(d),
        None => CdxParser::new(),
    };
    for skipped in &chunk.overlong {
        counts.incr("lines");
        counts.incr("rejected");
        report.problem(
            Location::line(chunk.source.clone(), skipped.line),
            "line_too_long",
            &format!(
                "{} bytes: longer than {} MiB, skipped without reading it into memory",
                skipped.bytes,
                MAX_LINE_LEN >> 20
            ),
            None,
        )?;
    }
    for (line_no, line) in lines(&chunk.data, chunk.first_line) {
        counts.incr("lines");
        match parser.parse_line(line) {
            Ok(CdxLine::Record(record)) => {
                let capture = capture_from_cdx(&record, &chunk.source, line_no, filter);
                counts.incr("captures");
                if capture.passes {
                    counts.incr("file_captures");
                }
                if capture.kind == CaptureKind::Revisit {
                    counts.incr("revisits");
                }
                each(capture)?;
            }
            Ok(CdxLine::Skipped(reason)) => counts.incr(&format!("skipped_{}", reason.name())),
            Err(reject) => {
                counts.incr("rejected");
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
}
