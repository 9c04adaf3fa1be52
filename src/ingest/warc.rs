//! WARC records → captures.
//!
//! response and resource records are captures of their payload; revisits are captures of
//! the payload they refer to; request records lend their User-Agent to the capture they
//! belong to, metadata records their fetch duration (Heritrix's `fetchTimeMs`); warcinfo
//! records describe the crawl (they become the agent of the crawl projection). Everything
//! else is counted and skipped.

use std::collections::VecDeque;
use std::io::Read;

use anyhow::Result;

use crate::capture::{Capture, CaptureKind, CaptureRef, Origin};
use crate::filter::FileFilter;
use crate::key::Sha1Key;
use crate::report::{Counts, Location, Report};
use crate::store::Store;
use crate::store::writer::Writer;
use crate::warc::{
    DigestCheck, ErrorKind, MandatoryHeader, ParsedDigest, PayloadSink, Record, WarcError,
    WarcReader, WarcType, Warning, index_fields, parse_digest, parse_warc_fields,
};

/// The record a reader error still carries when that record is sound enough to index:
/// only its WARC-Record-ID is missing (the error itself is reported all the same).
pub fn record_despite(error: &mut WarcError) -> Option<Record> {
    match error.kind {
        ErrorKind::MissingHeader(MandatoryHeader::WarcRecordId) => {
            error.record.take().map(|record| *record)
        }
        _ => None,
    }
}

/// The MIME type of a file: the declared type normalized, or sniffed from the first bytes
/// when nothing useful was declared.
pub fn file_mime(declared: Option<&str>, prefix: &[u8]) -> Option<String> {
    let normalized = declared.and_then(crate::mime::normalize);
    match normalized.as_deref() {
        None | Some("application/octet-stream") => crate::mime::sniff(prefix)
            .map(str::to_string)
            .or_else(|| normalized.map(|n| n.into_owned())),
        Some(_) => normalized.map(|n| n.into_owned()),
    }
}

/// A WARC-Record-ID without the angle brackets WARC/1.0 puts around it (`urn:uuid:…`,
/// as `f:c.i` and CDX files spell it).
pub fn bare_record_id(id: &str) -> String {
    let id = id.trim();
    id.strip_prefix('<')
        .and_then(|i| i.strip_suffix('>'))
        .unwrap_or(id)
        .to_string()
}

/// The crawl description of one warcinfo record, stored in the meta family.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Default)]
pub struct WarcInfo {
    pub file: String,
    pub record_id: Option<String>,
    pub date: Option<String>,
    pub software: Option<String>,
    pub operator: Option<String>,
    pub description: Option<String>,
    pub fields: Vec<(String, String)>,
}

/// Where parsers put what they read: the store's write path ([`Writer`]), or the records
/// `sediment extract` prints for a distributed ingest.
pub trait CaptureSink {
    fn add_capture(&mut self, capture: &CaptureRef<'_>);
    /// The end of one input record: a batch may be written now.
    fn end_record(&mut self) -> Result<()>;
    /// The crawl description of a warcinfo record.
    fn warcinfo(&mut self, info: WarcInfo) -> Result<()>;
    /// A request the archive holds no response for (a failed fetch): the capture it would
    /// have been, without status or payload. Sinks that keep only captures drop it.
    fn failed_fetch(&mut self, _fetch: &Capture) -> Result<()> {
        Ok(())
    }
}

impl CaptureSink for Writer<'_> {
    fn add_capture(&mut self, capture: &CaptureRef<'_>) {
        Writer::add_capture(self, capture)
    }

    fn end_record(&mut self) -> Result<()> {
        Writer::end_record(self)
    }

    fn warcinfo(&mut self, info: WarcInfo) -> Result<()> {
        self.store().put_warcinfo(&info)
    }

    fn failed_fetch(&mut self, fetch: &Capture) -> Result<()> {
        Writer::failed_fetch(self, &fetch.view());
        Ok(())
    }
}

/// Keeps the block of warcinfo and metadata records (small) and nothing else.
#[derive(Default)]
struct WarcinfoSink {
    active: bool,
    bytes: Vec<u8>,
}

/// The `fetchTimeMs` field of a metadata record block (Heritrix's WARC writer).
fn fetch_time_ms(block: &[u8]) -> Option<u64> {
    parse_warc_fields(block)
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("fetchTimeMs"))
        .and_then(|(_, v)| v.trim().parse().ok())
}

const WARCINFO_LIMIT: usize = 64 << 10;

/// The count of records of a standard type, named without a string made per record.
fn records_count_name(kind: &WarcType) -> &'static str {
    match kind {
        WarcType::Warcinfo => "records_warcinfo",
        WarcType::Response => "records_response",
        WarcType::Resource => "records_resource",
        WarcType::Request => "records_request",
        WarcType::Revisit => "records_revisit",
        WarcType::Metadata => "records_metadata",
        WarcType::Conversion => "records_conversion",
        WarcType::Continuation => "records_continuation",
        WarcType::Other(_) => "records_other",
    }
}

impl PayloadSink for WarcinfoSink {
    fn begin(&mut self, record: &Record) -> bool {
        self.bytes.clear();
        self.active = matches!(record.warc_type, WarcType::Warcinfo | WarcType::Metadata);
        self.active
    }

    fn payload(&mut self, bytes: &[u8]) {
        if self.active && self.bytes.len() < WARCINFO_LIMIT {
            let room = WARCINFO_LIMIT - self.bytes.len();
            self.bytes
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }
}

/// How many recent captures wait for their request record (crawlers write the request
/// right before or right after the response).
const PENDING: usize = 32;

/// A request record waiting for the response that answers it: one that names it in
/// WARC-Concurrent-To, else the next one of its URL, within [`PENDING`] records.
struct Waiting {
    /// The number of the request record in the file.
    record: u64,
    id: Option<String>,
    url: String,
    ts: String,
    agent: Option<String>,
    /// The request record's offset and length.
    offset: u64,
    length: u64,
}

/// Reads one WARC and hands its captures and warcinfo records to a [`CaptureSink`] (the
/// store's write path, or `sediment extract`'s records). Returns counts for the report.
pub struct WarcImporter<'a> {
    pub report: &'a Report,
    pub filter: &'a FileFilter,
    /// The file's name as given (the `warc` of the captures).
    pub path: String,
    /// Where the file is: its canonical absolute path (the `location` of the captures).
    pub location: Option<String>,
}

impl WarcImporter<'_> {
    pub fn import(&self, read: impl Read, writer: &mut impl CaptureSink) -> Result<Counts> {
        let mut counts = Counts::default();
        let mut reader = match WarcReader::new(read) {
            Ok(r) => r,
            Err(e) => {
                self.report
                    .problem(self.at(e.offset), e.kind.name(), &e.message, None)?;
                counts.incr("files_unreadable");
                return Ok(counts);
            }
        };
        let mut sink = WarcinfoSink::default();
        // Captures waiting for a request record, and request User-Agents waiting for
        // their capture, keyed by record id.
        let mut pending: VecDeque<(Option<String>, Capture)> = VecDeque::new();
        let mut agents: VecDeque<(String, String)> = VecDeque::new();
        // Request records that name no response, waiting for one (see `Waiting`).
        let mut requests: VecDeque<Waiting> = VecDeque::new();
        let mut records = 0u64;
        let mut last_position = 0;
        while let Some(item) = reader.next_record(Some(&mut sink)) {
            records += 1;
            while requests
                .front()
                .is_some_and(|w| w.record + PENDING as u64 <= records)
            {
                if let Some(w) = requests.pop_front() {
                    self.failed_fetch(w, writer, &mut counts)?;
                }
            }
            // The position moves back when the reader reads damaged stretches again.
            let position = reader.position();
            if position > last_position {
                self.report.progress().inc(position - last_position);
                last_position = position;
            }
            let record = match item {
                Ok(record) => record,
                Err(mut error) => {
                    self.report.problem(
                        self.at(error.offset),
                        error.kind.name(),
                        &error.message,
                        None,
                    )?;
                    // A damaged gzip trailer after a complete record lost nothing: the
                    // record came just before.
                    counts.incr(match error.kind {
                        ErrorKind::GzipTrailer => "gzip_trailers_damaged",
                        _ => "record_errors",
                    });
                    match record_despite(&mut error) {
                        Some(record) => record,
                        None => continue,
                    }
                }
            };
            if record
                .warnings
                .iter()
                .any(|w| matches!(w, Warning::HttpHeadTooLong { .. }))
            {
                counts.incr("http_heads_over_limit");
            }
            match &record.warc_type {
                WarcType::Other(other) => counts.incr(&format!("records_{other}")),
                known => counts.incr(records_count_name(known)),
            }
            match record.warc_type {
                WarcType::Warcinfo => writer.warcinfo(self.warcinfo(&record, &sink.bytes))?,
                WarcType::Request => {
                    let agent = record.http.as_ref().and_then(|h| h.user_agent());
                    // Heritrix writes the request after its response and names it; wget
                    // and others write it first, and the response names the request.
                    if record.concurrent_to().next().is_none()
                        && let Ok((url, ts)) = index_fields(&record)
                    {
                        // Most requests are answered: the capture of a failed fetch is
                        // made only when none comes (see `failed_fetch`).
                        requests.push_back(Waiting {
                            record: records,
                            id: record.record_id().map(str::to_string),
                            url: url.to_string(),
                            ts,
                            agent: agent.map(str::to_string),
                            offset: record.offset,
                            length: record.length,
                        });
                    }
                    let Some(agent) = agent else {
                        continue;
                    };
                    let agent = agent.to_string();
                    let mut attached = false;
                    for target in record.concurrent_to() {
                        if let Some((_, capture)) = pending
                            .iter_mut()
                            .find(|(id, _)| id.as_deref() == Some(target))
                        {
                            capture.ua = Some(agent.clone());
                            attached = true;
                        }
                    }
                    if !attached && let Some(id) = record.record_id() {
                        agents.push_back((id.to_string(), agent));
                        if agents.len() > PENDING {
                            agents.pop_front();
                        }
                    }
                }
                WarcType::Metadata => {
                    let Some(ms) = fetch_time_ms(&sink.bytes) else {
                        continue;
                    };
                    for target in record.concurrent_to() {
                        if let Some((_, capture)) = pending
                            .iter_mut()
                            .find(|(id, _)| id.as_deref() == Some(target))
                        {
                            capture.fetch_ms = Some(ms);
                        }
                    }
                }
                WarcType::Response | WarcType::Resource | WarcType::Revisit => {
                    let named = |w: &Waiting| {
                        w.id.as_deref()
                            .is_some_and(|id| record.concurrent_to().any(|t| t == id))
                    };
                    let answered = requests.iter().position(named).or_else(|| {
                        let url = record.target_uri()?;
                        requests.iter().position(|w| w.url == url)
                    });
                    if let Some(i) = answered {
                        requests.remove(i);
                    }
                    let Some(mut capture) = self.capture(&record, &mut counts)? else {
                        continue;
                    };
                    for target in record.concurrent_to() {
                        if let Some(pos) = agents.iter().position(|(id, _)| id == target) {
                            capture.ua = agents.remove(pos).map(|(_, ua)| ua);
                        }
                    }
                    pending.push_back((record.record_id().map(str::to_string), capture));
                    if pending.len() > PENDING
                        && let Some((_, done)) = pending.pop_front()
                    {
                        writer.add_capture(&done.view());
                        writer.end_record()?;
                    }
                }
                _ => {}
            }
        }
        for (_, capture) in pending {
            writer.add_capture(&capture.view());
            writer.end_record()?;
        }
        for waiting in requests {
            self.failed_fetch(waiting, writer, &mut counts)?;
        }
        if reader.resyncs() > 0 {
            counts.add("resyncs", reader.resyncs());
        }
        Ok(counts)
    }

    /// A request no response answered: a failed fetch (wget writes the request of a
    /// fetch that got no data, e.g. "No data received", and nothing else).
    fn failed_fetch(
        &self,
        waiting: Waiting,
        writer: &mut impl CaptureSink,
        counts: &mut Counts,
    ) -> Result<()> {
        counts.incr("failed_fetches");
        writer.failed_fetch(&self.request_capture(waiting))?;
        writer.end_record()
    }

    /// The capture a request record would have made, without status or payload.
    fn request_capture(&self, waiting: Waiting) -> Capture {
        Capture {
            c_size: Some(waiting.length),
            location: self.location.clone(),
            offset: Some(waiting.offset),
            origin: Origin::Warc,
            record_id: waiting.id.as_deref().map(bare_record_id),
            source: self.path.clone(),
            surt: crate::surt::surt(&waiting.url),
            ts: waiting.ts,
            ua: waiting.agent,
            url: waiting.url,
            warc: Some(self.path.clone()),
            ..Capture::default()
        }
    }

    fn at(&self, offset: u64) -> Location {
        Location::offset(self.path.clone(), offset)
    }

    fn warcinfo(&self, record: &Record, block: &[u8]) -> WarcInfo {
        let fields = parse_warc_fields(block);
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        WarcInfo {
            file: crate::capture::file_name(&self.path).to_string(),
            record_id: record.record_id().map(bare_record_id),
            date: record.date().map(str::to_string),
            software: field("software"),
            operator: field("operator"),
            description: field("description"),
            fields: fields.clone(),
        }
    }

    /// The capture of a response, resource or revisit record; `None` (reported) when the
    /// record cannot be a capture (see [`index_fields`]).
    fn capture(&self, record: &Record, counts: &mut Counts) -> Result<Option<Capture>> {
        let (url, ts) = match index_fields(record) {
            Ok(fields) => fields,
            Err(skip) => {
                self.report
                    .problem(self.at(record.offset), skip.reason, &skip.message, None)?;
                counts.incr("records_not_indexed");
                return Ok(None);
            }
        };
        let http = record.http.as_ref();
        let kind = match record.warc_type {
            WarcType::Revisit => CaptureKind::Revisit,
            WarcType::Resource => CaptureKind::Resource,
            _ => CaptureKind::Response,
        };
        let content_type = match kind {
            CaptureKind::Resource => record.content_type(),
            _ => http.and_then(|h| h.content_type()),
        };
        let payload = record.payload.as_ref();
        let (digest, digest_ok, size, dechunked) = match kind {
            CaptureKind::Revisit => {
                let original = match record.payload_digest().map(parse_digest) {
                    Some(ParsedDigest::Sha1(d)) => Some(Sha1Key(d)),
                    _ => None,
                };
                (original, None, None, None)
            }
            _ => {
                let check_ok = match &record.digest_check {
                    DigestCheck::Mismatch { expected, actual } => {
                        counts.incr("digest_mismatches");
                        self.report.problem(
                            self.at(record.offset),
                            "digest-mismatch",
                            &format!(
                                "WARC-Payload-Digest says {} but the payload's SHA-1 is {}",
                                Sha1Key(*expected),
                                Sha1Key(*actual)
                            ),
                            None,
                        )?;
                        Some(false)
                    }
                    DigestCheck::Match | DigestCheck::MatchDechunked => Some(true),
                    _ => None,
                };
                (
                    payload.map(|p| Sha1Key(p.sha1)),
                    check_ok,
                    payload.map(|p| p.length),
                    payload.and_then(|p| p.dechunked_sha1).map(Sha1Key),
                )
            }
        };
        let prefix = payload.map_or(&[][..], |p| p.prefix.as_slice());
        let mime = match kind {
            CaptureKind::Revisit => content_type
                .and_then(crate::mime::normalize)
                .map(|m| m.into_owned()),
            _ => file_mime(content_type, prefix),
        };
        let status = http.and_then(|h| h.status());
        let web = FileFilter::is_web_fetch(url);
        if !web {
            counts.incr("captures_not_web");
        }
        let passes = web
            && self
                .filter
                .passes(kind, status, mime.as_deref(), digest.is_some());
        counts.incr("captures");
        Ok(Some(Capture {
            // What a CDX line says (the same as `sediment cdx` and cdxj-indexer).
            c_size: Some(crate::cdx::writer::cdx_length(record)),
            content_type: content_type.map(str::to_string),
            dechunked,
            // A checked declaration only: a digest that names neither form of the body
            // says nothing a crawler will compare.
            declared_dechunked: matches!(record.digest_check, DigestCheck::MatchDechunked),
            digest,
            digest_ok,
            etag: http.and_then(|h| h.etag()).map(str::to_string),
            fetch_ms: None,
            kind,
            last_modified: http.and_then(|h| h.last_modified()).map(str::to_string),
            line: None,
            location: self.location.clone(),
            mime,
            offset: Some(record.offset),
            origin: Origin::Warc,
            passes,
            record_id: record.record_id().map(bare_record_id),
            redirect: http.and_then(|h| h.location()).map(str::to_string),
            size,
            source: self.path.clone(),
            status,
            surt: crate::surt::surt(url),
            ts,
            ua: None,
            url: url.to_string(),
            warc: Some(self.path.clone()),
        }))
    }
}

impl Store {
    /// Stores the description of a crawl, keyed by WARC file name.
    pub fn put_warcinfo(&self, info: &WarcInfo) -> Result<()> {
        let mut batch = crate::store::backend::Batch::default();
        batch.push(crate::store::backend::Op::Put {
            space: crate::store::Space::Meta,
            key: format!("warcinfo/{}", info.file).into_bytes(),
            value: serde_json::to_vec(info)?,
        });
        self.write(&batch)
    }

    /// The crawl description recorded for a WARC file name.
    pub fn warcinfo(&self, file: &str) -> Result<Option<WarcInfo>> {
        let key = format!("warcinfo/{file}");
        Ok(self
            .get(crate::store::Space::Meta, key.as_bytes())?
            .and_then(|v| serde_json::from_slice(&v).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_counts_are_named_after_the_type() {
        for kind in [
            WarcType::Warcinfo,
            WarcType::Response,
            WarcType::Resource,
            WarcType::Request,
            WarcType::Revisit,
            WarcType::Metadata,
            WarcType::Conversion,
            WarcType::Continuation,
        ] {
            assert_eq!(
                records_count_name(&kind),
                format!("records_{}", kind.as_str())
            );
        }
    }

    #[test]
    fn heritrix_metadata_records_give_the_fetch_time() {
        let block = b"via: http://www.archive.org/\r\nhopsFromSeed: P\r\nfetchTimeMs: 47\r\n\r\n";
        assert_eq!(fetch_time_ms(block), Some(47));
        assert_eq!(fetch_time_ms(b"seed:\r\noutlink: x\r\n"), None);
        assert_eq!(fetch_time_ms(b"fetchTimeMs: soon\r\n"), None);
    }
}
