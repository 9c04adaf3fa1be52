//! The streaming WARC reader: tells gzip from uncompressed input (and refuses ARC and
//! other compressions), then hands records over one at a time from the parser
//! (`parser.rs`) running over the decoded byte source.

use std::io::{Read, Seek, SeekFrom};

use super::block::PayloadSink;
use super::error::{ErrorKind, WarcError};
use super::gzip::GzipSource;
use super::input::Input;
use super::parser::{Parser, ReaderOptions, arc_error};
use super::record::{Compression, Record};
use super::source::{ByteSource, PlainSource};

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
                let whole_members = options.whole_members;
                Source::Gzip(Box::new(GzipSource::new(
                    input,
                    options.inflate_buffer,
                    whole_members,
                )))
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

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use flate2::Compression as Level;
    use flate2::write::GzEncoder;
    use memchr::memmem;
    use sha1::{Digest, Sha1};

    use super::*;
    use crate::warc::digest::sha1_base32;
    use crate::warc::{DigestCheck, MandatoryHeader, WarcType, Warning};

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
        // Record 2 is taken on probation too: the carrier's end is still unknown there.
        assert_eq!(reader.resyncs(), 1);
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

    /// How a test damages the Content-Length of a record.
    const LENGTH_DAMAGE: [&str; 7] = [
        "non-numeric",
        "missing",
        "zero",
        "short",
        "short-into-quote",
        "long-by-10",
        "past-the-end",
    ];

    /// A page quoting a complete, valid WARC record (in the middle of its HTML, or at its
    /// very end), its Content-Length damaged; with or without digests.
    fn quoting_page(damage: &str, digests: bool, quote_at_end: bool) -> Vec<u8> {
        let body = b"<html>not a capture of this file</html>";
        let mut quoted_block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
        quoted_block.extend_from_slice(body);
        let quoted_digest = format!("WARC-Payload-Digest: sha1:{}\r\n", sha1_base32(&sha1(body)));
        let quoted = record_bytes(
            "phantom",
            "response",
            "application/http; msgtype=response",
            &quoted_block,
            &quoted_digest,
        );
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
        let mut html = b"<html><body><p>A WARC record:</p><pre>\r\n".to_vec();
        html.extend_from_slice(&quoted);
        if !quote_at_end {
            html.extend_from_slice(b"</pre><p>That was it.</p></body></html>\r\n");
        }
        let mut block = head.clone();
        block.extend_from_slice(&html);
        let extra = if digests {
            format!(
                "WARC-Block-Digest: sha1:{}\r\nWARC-Payload-Digest: sha1:{}\r\n",
                sha1_base32(&sha1(&block)),
                sha1_base32(&sha1(&html))
            )
        } else {
            String::new()
        };
        let mut page = record_bytes(
            "page",
            "response",
            "application/http; msgtype=response",
            &block,
            &extra,
        );
        let declared = format!("Content-Length: {}\r\n", block.len());
        let at = memmem::find(&page, declared.as_bytes()).unwrap();
        let quote_at = memmem::find(&block, b"WARC/1.0").unwrap();
        let replacement = match damage {
            "non-numeric" => "Content-Length: 12x4\r\n".to_string(),
            "missing" => String::new(),
            "zero" => "Content-Length: 0\r\n".to_string(),
            "short" => format!("Content-Length: {}\r\n", head.len() + 10),
            "short-into-quote" => format!("Content-Length: {}\r\n", quote_at + 100),
            "long-by-10" => format!("Content-Length: {}\r\n", block.len() + 10),
            "past-the-end" => format!("Content-Length: {}\r\n", block.len() + 100_000),
            _ => unreachable!(),
        };
        page.splice(at..at + declared.len(), replacement.bytes());
        page
    }

    /// Issue 33: after a wrong or missing Content-Length, a WARC record quoted in the damaged
    /// record's page is never taken as a record, in uncompressed and whole-file gzip input;
    /// the records before and after the page are all read, the page is an error at its
    /// offset. With digests, the page's end is placed by them wherever the quote is.
    #[test]
    fn records_quoted_in_a_damaged_record_are_not_records() {
        let (records, _) = sample();
        let ids: Vec<String> = (1..=6).map(|i| format!("<urn:uuid:{i}>")).collect();
        for damage in LENGTH_DAMAGE {
            for (digests, quote_at_end) in [(false, false), (true, false), (true, true)] {
                let page = quoting_page(damage, digests, quote_at_end);
                let mut plain = records[..2].concat();
                let page_at = plain.len() as u64;
                plain.extend_from_slice(&page);
                plain.extend_from_slice(&records[2..].concat());
                for (data, gzip) in [(plain.clone(), false), (gz(&plain), true)] {
                    let case =
                        format!("{damage}, digests {digests}, at end {quote_at_end}, gzip {gzip}");
                    for step in [1 << 20, 97] {
                        let items: Vec<_> = WarcReader::new(Trickle { data: &data, step })
                            .unwrap()
                            .collect();
                        let taken: Vec<String> = items
                            .iter()
                            .filter_map(|i| i.as_ref().ok())
                            .map(|r| r.record_id().unwrap().to_string())
                            .collect();
                        assert_eq!(taken, ids, "{case}, step {step}");
                        let first_error = items.iter().find_map(|i| i.as_ref().err()).unwrap();
                        let expected_offset = if gzip { 0 } else { page_at };
                        assert_eq!(first_error.offset, expected_offset, "{case}");
                        let kind = match damage {
                            "non-numeric" => ErrorKind::InvalidContentLength,
                            "missing" => ErrorKind::MissingHeader(MandatoryHeader::ContentLength),
                            "past-the-end" => ErrorKind::RecordTruncated,
                            _ => ErrorKind::ContentLengthMismatch,
                        };
                        assert_eq!(first_error.kind, kind, "{case}: {first_error}");
                        let page = first_error.record.as_ref().unwrap();
                        assert_eq!(page.record_id(), Some("<urn:uuid:page>"), "{case}");
                    }
                }
            }
        }
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
