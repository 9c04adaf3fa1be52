//! CDX lines from WARC records: the 11-column `CDX N b a m s k r M S V g` format and
//! CDXJ, as the public indexers (pywb's cdxj-indexer) write them, so that wayback
//! machines and tools reading those files read ours.
//!
//! Which records get a line, and what each field holds, follows cdxj-indexer: response,
//! revisit, resource and metadata records (resource and metadata records holding
//! `application/warc-fields` are left out); mime is `warc/revisit` for revisits, the HTTP
//! Content-Type for responses and the WARC Content-Type otherwise, cut at the first `;` or
//! space; the digest is the record's WARC-Payload-Digest (the computed payload SHA-1 when
//! the header is absent); length and offset are the record's place in the file (for
//! uncompressed files the record without its trailing CRLFCRLF); filename is the file's
//! base name. Lines are sorted by their bytes (code point order) and exact duplicates are
//! dropped.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::capture::file_name;
use crate::cdx::lines::LineReader;
use crate::warc::{Compression, Record, Unindexable, WarcType, index_fields, sha1_base32};

pub const CDX11_HEADER: &str = " CDX N b a m s k r M S V g";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CdxFormat {
    Cdx11,
    Cdxj,
}

/// The indexed fields of one record, as strings (absent fields are `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub urlkey: String,
    pub timestamp: String,
    pub url: String,
    pub mime: Option<String>,
    pub status: Option<String>,
    pub digest: Option<String>,
    pub length: u64,
    pub offset: u64,
    pub filename: String,
}

/// Whether a record gets an index line.
pub fn is_indexed(record: &Record) -> bool {
    match record.warc_type {
        WarcType::Response | WarcType::Revisit => true,
        WarcType::Resource | WarcType::Metadata => {
            record.header("Content-Type") != Some("application/warc-fields")
        }
        _ => false,
    }
}

fn cut_parameters(value: &str) -> String {
    let end = value
        .find(|c: char| c == ';' || c.is_whitespace())
        .unwrap_or(value.len());
    value[..end].trim().to_string()
}

/// The index entry of a record: `Ok(None)` for records of a kind that gets no line, an
/// error (to report) for those that should but cannot (the rule `import-warc` applies
/// to captures: [`index_fields`]).
/// The CDX length of a record: its gzip member; in an uncompressed WARC its header and
/// block without the CRLFCRLF that ends the record (cdxj-indexer's and wget's convention).
pub fn cdx_length(record: &Record) -> u64 {
    match record.compression {
        Compression::Gzip => record.length,
        Compression::None => record.header_length + record.content_length,
    }
}

pub fn index_entry(record: &Record, filename: &str) -> Result<Option<IndexEntry>, Unindexable> {
    if !is_indexed(record) {
        return Ok(None);
    }
    let (url, timestamp) = index_fields(record)?;
    let url = url.to_string();
    let http = record.http.as_ref();
    let mime = match record.warc_type {
        WarcType::Revisit => Some("warc/revisit".to_string()),
        WarcType::Response => http
            .and_then(|h| h.header("Content-Type"))
            .map(cut_parameters),
        _ => record.header("Content-Type").map(cut_parameters),
    };
    let status = match record.warc_type {
        WarcType::Response | WarcType::Revisit => {
            http.and_then(|h| h.status()).map(|s| s.to_string())
        }
        _ => None,
    };
    let digest = match record.payload_digest() {
        Some(value) => Some(value.to_string()),
        None => record
            .payload
            .as_ref()
            .map(|p| format!("sha1:{}", sha1_base32(&p.sha1))),
    };
    let length = cdx_length(record);
    Ok(Some(IndexEntry {
        urlkey: crate::surt::surt(&url),
        timestamp,
        url,
        mime,
        status,
        digest,
        length,
        offset: record.offset,
        filename: filename.to_string(),
    }))
}

impl IndexEntry {
    /// The line (without newline) in the given format.
    pub fn line(&self, format: CdxFormat) -> String {
        match format {
            CdxFormat::Cdx11 => {
                let digest = self
                    .digest
                    .as_deref()
                    .map(|d| d.rsplit(':').next().unwrap_or(d));
                [
                    Some(self.urlkey.as_str()),
                    Some(self.timestamp.as_str()),
                    Some(self.url.as_str()),
                    self.mime.as_deref(),
                    self.status.as_deref(),
                    digest,
                    None,
                    None,
                    Some(&*self.length.to_string()),
                    Some(&*self.offset.to_string()),
                    Some(self.filename.as_str()),
                ]
                .iter()
                .map(|f| f.unwrap_or("-").to_string())
                .collect::<Vec<_>>()
                .join(" ")
            }
            CdxFormat::Cdxj => {
                let mut json = String::from("{");
                let mut first = true;
                let mut field = |name: &str, value: Option<&str>| {
                    if let Some(v) = value {
                        if !first {
                            json.push_str(", ");
                        }
                        first = false;
                        push_python_json_string(name, &mut json);
                        json.push_str(": ");
                        push_python_json_string(v, &mut json);
                    }
                };
                field("url", Some(&self.url));
                field("mime", self.mime.as_deref());
                field("status", self.status.as_deref());
                field("digest", self.digest.as_deref());
                field("length", Some(&self.length.to_string()));
                field("offset", Some(&self.offset.to_string()));
                field("filename", Some(&self.filename));
                json.push('}');
                format!("{} {} {json}", self.urlkey, self.timestamp)
            }
        }
    }
}

/// A JSON string the way Python's `json.dumps` writes it by default (`ensure_ascii`):
/// non-ASCII as `\uXXXX` (UTF-16), so our CDXJ equals cdxj-indexer's byte for byte.
pub fn push_python_json_string(text: &str, out: &mut String) {
    out.push('"');
    // Most fields (URLs, timestamps, digests, file names) need no escape: copied whole.
    if text
        .bytes()
        .all(|b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push_str(text);
        out.push('"');
        return;
    }
    use std::fmt::Write as _;
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7f => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Base name used in the `filename` field.
pub fn index_filename(path: &str) -> String {
    file_name(path).to_string()
}

/// Bytes each spilled run reads at a time during the merge.
const RUN_READ_SIZE: usize = 64 << 10;

/// Sorts lines (byte order) and drops exact duplicates, spilling sorted runs to
/// temporary files past `memory_limit` bytes so that any number of lines fits.
pub struct LineSorter {
    lines: Vec<String>,
    bytes: usize,
    memory_limit: usize,
    runs: Vec<File>,
}

impl LineSorter {
    pub fn new(memory_limit: usize) -> LineSorter {
        LineSorter {
            lines: Vec::new(),
            bytes: 0,
            memory_limit,
            runs: Vec::new(),
        }
    }

    pub fn push(&mut self, line: String) -> io::Result<()> {
        self.bytes += line.len() + 24;
        self.lines.push(line);
        if self.bytes > self.memory_limit {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.lines.sort_unstable();
        self.lines.dedup();
        let mut file = tempfile::tempfile()?;
        {
            let mut out = BufWriter::new(&mut file);
            for line in self.lines.drain(..) {
                out.write_all(line.as_bytes())?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
        }
        use std::io::Seek;
        file.seek(io::SeekFrom::Start(0))?;
        self.runs.push(file);
        self.bytes = 0;
        Ok(())
    }

    /// Writes every line once, in order, each followed by a newline.
    pub fn finish(mut self, out: &mut dyn Write) -> io::Result<u64> {
        let mut written = 0u64;
        let mut last: Option<String> = None;
        let mut emit = |line: String, out: &mut dyn Write| -> io::Result<()> {
            if last.as_deref() != Some(line.as_str()) {
                out.write_all(line.as_bytes())?;
                out.write_all(b"\n")?;
                written += 1;
                last = Some(line);
            }
            Ok(())
        };
        if self.runs.is_empty() {
            self.lines.sort_unstable();
            for line in self.lines.drain(..) {
                emit(line, out)?;
            }
            return Ok(written);
        }
        if !self.lines.is_empty() {
            self.spill()?;
        }
        // The runs are data this sort wrote: a line over the cap is damage, an error.
        // Every run is open at once, so each reads a small buffer at a time.
        let mut readers: Vec<LineReader<'static>> = self
            .runs
            .drain(..)
            .map(|f| LineReader::plain_with_read_size(f, RUN_READ_SIZE).overlong_is_error())
            .collect();
        let mut heap = BinaryHeap::new();
        for (i, reader) in readers.iter_mut().enumerate() {
            if let Some(line) = next_run_line(reader)? {
                heap.push(Reverse((line, i)));
            }
        }
        while let Some(Reverse((line, i))) = heap.pop() {
            if let Some(next) = next_run_line(&mut readers[i])? {
                heap.push(Reverse((next, i)));
            }
            emit(line, out)?;
        }
        Ok(written)
    }
}

/// The next line of a spilled run (the run holds the `String`s it was given).
fn next_run_line(reader: &mut LineReader<'_>) -> io::Result<Option<String>> {
    reader
        .next_line()?
        .map(|(_, line)| {
            String::from_utf8(line.to_vec())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_json_strings() {
        let mut s = String::new();
        push_python_json_string("a\"b\\c\té😀\u{1}", &mut s);
        assert_eq!(s, r#""a\"b\\c\t\u00e9\ud83d\ude00\u0001""#);
    }

    #[test]
    fn sorter_dedups_across_spills() {
        let mut sorter = LineSorter::new(64);
        for line in ["b", "a", "c", "a", "b", "d", "a"].iter().cycle().take(70) {
            sorter.push(line.to_string()).unwrap();
        }
        let mut out = Vec::new();
        let n = sorter.finish(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a\nb\nc\nd\n");
        assert_eq!(n, 4);
    }
}
