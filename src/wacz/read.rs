//! A WACZ package into the store: its WARC members through the WARC importer, its page
//! lists into the meta family, its `datapackage.json` hashes checked.
//!
//! Hostile packages are bounded by construction: the central directory only lists
//! members (the zip crate reads it), every member's data is then read once, in file
//! order, through a reader that stops at the member's compressed size and, inflated, at
//! its declared size; a member whose data overlaps another's, lies outside the file,
//! claims a size deflate cannot reach (a zip bomb), or has a name that leaves the package
//! is reported (file `PACKAGE#MEMBER`, reason) and skipped, never followed.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read};

use anyhow::Result;
use sha2::{Digest, Sha256};

use super::page::StoredPage;
use crate::capture::{Capture, CaptureRef};
use crate::cdx::lines::LineReader;
use crate::filter::FileFilter;
use crate::ingest::warc::{WarcImporter, WarcInfo};
use crate::ingest::{CaptureSink, InputSink};
use crate::input::PlannedInput;
use crate::report::{Counts, Location, Report};
use crate::store::backend::{Batch, Op};

/// Deflate cannot expand more than this (a run of one byte: 258 bytes per 2 bits, about
/// 1032:1); a member declaring more is lying about its size, the mark of a zip bomb.
const MAX_DEFLATE_RATIO: u64 = 1032;
/// `datapackage.json` and `datapackage-digest.json` are read whole, up to this.
const MAX_JSON: u64 = 16 << 20;
/// A page list line longer than this is reported (with its line and byte offset) and
/// skipped in bounded memory by the line reader.
const MAX_PAGE_LINE: usize = 1 << 20;
/// Page list entries written to the store per batch.
const PAGE_BATCH: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Method {
    Stored,
    Deflated,
}

struct Member {
    name: String,
    method: Method,
    data_start: u64,
    compressed: u64,
    size: u64,
    crc32: u32,
}

/// What one member turned out to hold.
struct Hashed {
    sha256: String,
    bytes: u64,
}

/// Imports one WACZ file (see the module documentation).
pub struct WaczImporter<'a> {
    pub report: &'a Report,
    pub filter: &'a FileFilter,
    /// The package's name as given (the `warc` of captures of stored members).
    pub path: String,
    /// Its canonical absolute path (their `location`).
    pub location: Option<String>,
}

impl WaczImporter<'_> {
    fn at(&self, member: &str, offset: u64) -> Location {
        Location::offset(super::member_location(&self.path, member), offset)
    }

    fn problem(
        &self,
        counts: &mut Counts,
        count: &str,
        member: &str,
        offset: u64,
        reason: &str,
        message: &str,
    ) -> Result<()> {
        counts.incr(count);
        self.report
            .problem(self.at(member, offset), reason, message, None)?;
        Ok(())
    }

    pub fn import(&self, input: &PlannedInput, sink: &mut InputSink<'_, '_>) -> Result<Counts> {
        let mut counts = Counts::default();
        let file = File::open(&input.path)?;
        let file_len = file.metadata()?.len();
        let members = match zip::ZipArchive::new(BufReader::new(file)) {
            Ok(mut archive) => self.list(&mut archive, file_len, &mut counts)?,
            Err(e) => {
                self.report.problem(
                    Location::offset(self.path.clone(), 0),
                    "wacz-unreadable",
                    &format!("not a readable zip package: {e}"),
                    None,
                )?;
                counts.incr("files_unreadable");
                input
                    .hashing(BufReader::new(File::open(&input.path)?))
                    .finish()?;
                return Ok(counts);
            }
        };
        counts.incr("wacz_packages");
        let mut hashed: BTreeMap<String, Hashed> = BTreeMap::new();
        let mut datapackage: Option<Vec<u8>> = None;
        let mut digest_file: Option<Vec<u8>> = None;
        let mut sequential = Positioned {
            inner: input.hashing(BufReader::with_capacity(1 << 20, File::open(&input.path)?)),
            position: 0,
        };
        let mut end_of_previous = 0u64;
        for member in members {
            if member.data_start < end_of_previous {
                self.problem(
                    &mut counts,
                    "wacz_members_refused",
                    &member.name,
                    member.data_start,
                    "wacz-overlapping-members",
                    &format!(
                        "the central directory puts this member's data at byte {}, inside the \
                         previous member's (which ends at byte {end_of_previous})",
                        member.data_start
                    ),
                )?;
                continue;
            }
            let gap = member.data_start - sequential.position;
            skip(&mut sequential, gap)?;
            end_of_previous = member.data_start + member.compressed;
            let outcome = self.read_member(
                &member,
                &mut sequential,
                sink,
                &mut counts,
                &mut datapackage,
                &mut digest_file,
            )?;
            // The rest of the member's stored bytes (a reader may stop early).
            let left = end_of_previous.saturating_sub(sequential.position);
            skip(&mut sequential, left)?;
            if let Some(h) = outcome {
                hashed.insert(member.name.clone(), h);
            }
        }
        sequential.inner.finish()?;
        self.check_hashes(&hashed, datapackage, digest_file, &mut counts)?;
        Ok(counts)
    }

    /// The members the central directory lists, in the order of their data in the file;
    /// those that cannot be read safely are reported and left out.
    fn list<R: Read + io::Seek>(
        &self,
        archive: &mut zip::ZipArchive<R>,
        file_len: u64,
        counts: &mut Counts,
    ) -> Result<Vec<Member>> {
        let mut members = Vec::new();
        for index in 0..archive.len() {
            let placeholder = match archive.name_for_index(index) {
                Some(Ok(name)) => name.into_owned(),
                _ => format!("(member {index})"),
            };
            let entry = match archive.by_index_raw(index) {
                Ok(entry) => entry,
                Err(e) => {
                    self.problem(
                        counts,
                        "wacz_members_refused",
                        &placeholder,
                        0,
                        "wacz-member-unreadable",
                        &format!("the central directory entry does not lead to a member: {e}"),
                    )?;
                    continue;
                }
            };
            let Ok(name) = std::str::from_utf8(entry.name_raw()).map(str::to_string) else {
                self.problem(
                    counts,
                    "wacz_members_refused",
                    &placeholder,
                    entry.header_start(),
                    "wacz-member-name",
                    "the member name is not UTF-8",
                )?;
                continue;
            };
            if name.ends_with('/') {
                continue;
            }
            let at = entry.header_start();
            let refuse = |counts: &mut Counts, reason: &str, message: String| {
                self.problem(counts, "wacz_members_refused", &name, at, reason, &message)
            };
            if !super::is_safe_member_name(&name) {
                refuse(
                    counts,
                    "wacz-unsafe-name",
                    "the member name leads out of the package (absolute, `..`, backslash or \
                     drive letter); it is not read"
                        .into(),
                )?;
                continue;
            }
            let method = match entry.compression() {
                zip::CompressionMethod::Stored => Method::Stored,
                // DEFLATE, not the variant: the variant exists only with a compression
                // feature of the zip crate, which inflating with flate2 does not need.
                m if m == zip::CompressionMethod::DEFLATE => Method::Deflated,
                other => {
                    refuse(
                        counts,
                        "wacz-compression",
                        format!("compressed with {other:?}; WACZ members are stored or deflated"),
                    )?;
                    continue;
                }
            };
            let Some(data_start) = entry.data_start() else {
                refuse(counts, "wacz-member-unreadable", "no local header".into())?;
                continue;
            };
            let (compressed, size) = (entry.compressed_size(), entry.size());
            if data_start
                .checked_add(compressed)
                .is_none_or(|end| end > file_len)
            {
                refuse(
                    counts,
                    "wacz-member-outside-file",
                    format!(
                        "the central directory says {compressed} bytes from byte {data_start}, \
                         beyond the end of the {file_len}-byte file"
                    ),
                )?;
                continue;
            }
            if method == Method::Stored && size != compressed {
                refuse(
                    counts,
                    "wacz-size-mismatch",
                    format!("a stored member of {compressed} bytes said to hold {size}"),
                )?;
                continue;
            }
            if method == Method::Deflated
                && size > compressed.saturating_mul(MAX_DEFLATE_RATIO).max(1024)
            {
                refuse(
                    counts,
                    "wacz-zip-bomb",
                    format!(
                        "{compressed} deflated bytes said to inflate to {size}, more than \
                         deflate can (a zip bomb); not inflated"
                    ),
                )?;
                continue;
            }
            members.push(Member {
                name,
                method,
                data_start,
                compressed,
                size,
                crc32: entry.crc32(),
            });
        }
        members.sort_by_key(|m| m.data_start);
        Ok(members)
    }

    /// Reads one member from the sequential reader (positioned at its data); `None` when
    /// it could not be read to its end (reported).
    fn read_member<R: Read + Send>(
        &self,
        member: &Member,
        sequential: &mut Positioned<R>,
        sink: &mut InputSink<'_, '_>,
        counts: &mut Counts,
        datapackage: &mut Option<Vec<u8>>,
        digest_file: &mut Option<Vec<u8>>,
    ) -> Result<Option<Hashed>> {
        let raw = (&mut *sequential).take(member.compressed);
        // Send, as the one line reader (which the page lists go through) takes only
        // readers that can move to another thread.
        let inflated: Box<dyn Read + Send + '_> = match member.method {
            Method::Stored => Box::new(raw),
            Method::Deflated => Box::new(flate2::read::DeflateDecoder::new(raw)),
        };
        let mut reader = Checked {
            inner: inflated,
            left: member.size,
            over: false,
            error: None,
            sha256: Sha256::new(),
            crc: crc32fast::Hasher::new(),
            bytes: 0,
        };
        let name = member.name.as_str();
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("archive/")
            && (lower.ends_with(".warc") || lower.ends_with(".warc.gz"))
        {
            counts.incr("wacz_warcs");
            let package_location = self.location.clone();
            let (importer_location, base, warc) = match member.method {
                // The record is where the package holds it: read like any WARC.
                Method::Stored => (package_location, member.data_start, self.path.clone()),
                Method::Deflated => (
                    package_location.map(|l| super::member_location(&l, name)),
                    0,
                    super::member_location(&self.path, name),
                ),
            };
            let importer = WarcImporter {
                report: self.report,
                filter: self.filter,
                path: super::member_location(&self.path, name),
                location: importer_location,
            };
            let mut placed = InPackage {
                inner: sink,
                base,
                warc: &warc,
            };
            let warc_counts = importer.import(&mut reader, &mut placed)?;
            counts.merge(&warc_counts);
        } else if lower.starts_with("pages/") && lower.ends_with(".jsonl") {
            self.read_pages(name, &mut reader, sink, counts)?;
        } else if name == "datapackage.json" || name == "datapackage-digest.json" {
            let mut bytes = Vec::new();
            (&mut reader).take(MAX_JSON).read_to_end(&mut bytes).ok();
            if name == "datapackage.json" {
                *datapackage = Some(bytes);
            } else {
                *digest_file = Some(bytes);
            }
        }
        // Whatever the member's reader left: hashed too.
        io::copy(&mut reader, &mut io::sink()).ok();
        if let Some(e) = &reader.error {
            self.problem(
                counts,
                "wacz_members_damaged",
                name,
                reader.bytes,
                "wacz-member-damaged",
                &format!("the member's data cannot be read to its end: {e}"),
            )?;
            return Ok(None);
        }
        if reader.over {
            self.problem(
                counts,
                "wacz_members_damaged",
                name,
                reader.bytes,
                "wacz-zip-bomb",
                &format!(
                    "the member inflates beyond the {} bytes the central directory declares; \
                     read no further",
                    member.size
                ),
            )?;
            return Ok(None);
        }
        if reader.bytes != member.size {
            self.problem(
                counts,
                "wacz_members_damaged",
                name,
                reader.bytes,
                "wacz-size-mismatch",
                &format!(
                    "the central directory says {} bytes, the member holds {}",
                    member.size, reader.bytes
                ),
            )?;
            return Ok(None);
        }
        if reader.crc.clone().finalize() != member.crc32 {
            self.problem(
                counts,
                "wacz_members_damaged",
                name,
                0,
                "wacz-crc-mismatch",
                "the member's CRC-32 is not the one the central directory says",
            )?;
        }
        Ok(Some(Hashed {
            sha256: hex::encode(reader.sha256.finalize()),
            bytes: reader.bytes,
        }))
    }

    /// `pages/*.jsonl`: one page per line after the header line; each kept in the meta
    /// family under its SURT and timestamp (see [`super::page_title`]). Lines are read by
    /// the one line reader ([`LineReader`]) with the page line cap: a longer line is
    /// reported at its line and byte offset (in the inflated member) and skipped. A read
    /// error ends the list after its complete lines; `read_member` reports the damaged
    /// member (the [`Checked`] reader keeps the error).
    fn read_pages(
        &self,
        list: &str,
        reader: &mut (impl Read + Send),
        sink: &mut InputSink<'_, '_>,
        counts: &mut Counts,
    ) -> Result<()> {
        let mut lines = LineReader::plain(reader).with_max_line(MAX_PAGE_LINE);
        let mut line = Vec::new();
        let mut batch = Batch::default();
        let mut in_batch = 0;
        let wacz = crate::capture::file_name(&self.path).to_string();
        let file = super::member_location(&self.path, list);
        loop {
            // The line is copied out so that the lines skipped before it can be taken
            // from the reader (and reported first, in line order).
            line.clear();
            let number = match lines.next_line() {
                Ok(Some((number, text))) => {
                    line.extend_from_slice(text);
                    Some(number)
                }
                Ok(None) => None,
                // Only the member's reader fails, and it keeps its error for
                // `read_member`, which reports the member damaged at that byte.
                Err(_) => None,
            };
            for skipped in lines.take_overlong() {
                counts.incr("wacz_page_errors");
                self.report.problem(
                    Location {
                        offset: Some(skipped.offset),
                        ..Location::line(file.clone(), skipped.line)
                    },
                    "wacz-page-line",
                    &format!(
                        "a page line longer than {MAX_PAGE_LINE} bytes ({} bytes), skipped",
                        skipped.bytes
                    ),
                    None,
                )?;
            }
            let Some(number) = number else {
                break;
            };
            let location = Location::line(file.clone(), number);
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let page: PageLine = match serde_json::from_slice(text) {
                Ok(page) => page,
                Err(e) => {
                    counts.incr("wacz_page_errors");
                    self.report.problem(
                        location,
                        "wacz-page-line",
                        &format!("not a page: {e}"),
                        Some(text),
                    )?;
                    continue;
                }
            };
            if page.format.is_some() {
                continue;
            }
            let (Some(url), Some(ts)) = (page.url, page.ts.as_deref().and_then(super::timestamp14))
            else {
                counts.incr("wacz_page_errors");
                self.report.problem(
                    location,
                    "wacz-page-line",
                    "a page needs a url and a ts (ISO 8601 or 14 digits)",
                    Some(text),
                )?;
                continue;
            };
            let surt = crate::surt::surt(&url);
            counts.incr("wacz_pages");
            if page.title.is_some() {
                counts.incr("wacz_page_titles");
            }
            let stored = StoredPage {
                url,
                ts: ts.clone(),
                title: page.title,
                wacz: wacz.clone(),
                list: list.to_string(),
            };
            batch.push(Op::Put {
                space: crate::store::Space::Meta,
                key: super::page_key(&surt, &ts),
                value: serde_json::to_vec(&stored)?,
            });
            in_batch += 1;
            if in_batch == PAGE_BATCH {
                sink.store().write(&batch)?;
                batch = Batch::default();
                in_batch = 0;
            }
        }
        if in_batch > 0 {
            sink.store().write(&batch)?;
        }
        Ok(())
    }

    /// `datapackage.json`'s hashes against the members' (and `datapackage-digest.json`'s
    /// against `datapackage.json`'s).
    fn check_hashes(
        &self,
        hashed: &BTreeMap<String, Hashed>,
        datapackage: Option<Vec<u8>>,
        digest_file: Option<Vec<u8>>,
        counts: &mut Counts,
    ) -> Result<()> {
        let Some(bytes) = datapackage else {
            return self.problem(
                counts,
                "wacz_hash_mismatches",
                "datapackage.json",
                0,
                "wacz-no-datapackage",
                "the package has no readable datapackage.json: its members' hashes cannot be \
                 checked",
            );
        };
        let package: DataPackage = match serde_json::from_slice(&bytes) {
            Ok(p) => p,
            Err(e) => {
                return self.problem(
                    counts,
                    "wacz_hash_mismatches",
                    "datapackage.json",
                    0,
                    "wacz-bad-datapackage",
                    &format!("datapackage.json is not a data package: {e}"),
                );
            }
        };
        for resource in &package.resources {
            let Some(path) = resource.path.as_deref() else {
                continue;
            };
            let Some(found) = hashed.get(path) else {
                self.problem(
                    counts,
                    "wacz_hash_mismatches",
                    path,
                    0,
                    "wacz-resource-missing",
                    "datapackage.json lists this resource, but the package holds no readable \
                     member of that name",
                )?;
                continue;
            };
            self.check_one(
                path,
                resource.hash.as_deref(),
                resource.bytes,
                found,
                counts,
            )?;
        }
        if let Some(digest) = digest_file {
            match serde_json::from_slice::<Resource>(&digest) {
                Ok(d) => {
                    if let Some(found) = hashed.get("datapackage.json") {
                        self.check_one("datapackage.json", d.hash.as_deref(), None, found, counts)?;
                    }
                }
                Err(e) => self.problem(
                    counts,
                    "wacz_hash_mismatches",
                    "datapackage-digest.json",
                    0,
                    "wacz-bad-datapackage",
                    &format!("datapackage-digest.json cannot be read: {e}"),
                )?,
            }
        }
        Ok(())
    }

    fn check_one(
        &self,
        path: &str,
        hash: Option<&str>,
        bytes: Option<u64>,
        found: &Hashed,
        counts: &mut Counts,
    ) -> Result<()> {
        match hash.map(|h| h.split_once(':').unwrap_or(("", h))) {
            Some(("sha256", hex)) => {
                counts.incr("wacz_hashes_checked");
                if !hex.eq_ignore_ascii_case(&found.sha256) {
                    return self.problem(
                        counts,
                        "wacz_hash_mismatches",
                        path,
                        0,
                        "wacz-hash-mismatch",
                        &format!(
                            "datapackage.json says sha256:{hex}, the member's SHA-256 is {}",
                            found.sha256
                        ),
                    );
                }
            }
            _ => counts.incr("wacz_hashes_unchecked"),
        }
        if let Some(bytes) = bytes
            && bytes != found.bytes
        {
            return self.problem(
                counts,
                "wacz_hash_mismatches",
                path,
                0,
                "wacz-hash-mismatch",
                &format!(
                    "datapackage.json says {bytes} bytes, the member holds {}",
                    found.bytes
                ),
            );
        }
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct PageLine {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    ts: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

#[derive(serde::Deserialize)]
struct DataPackage {
    #[serde(default)]
    resources: Vec<Resource>,
}

#[derive(serde::Deserialize)]
struct Resource {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    hash: Option<String>,
    #[serde(default)]
    bytes: Option<u64>,
}

/// The captures of a WARC member: a stored member's offsets moved by where its data
/// starts in the package, so they are offsets in the package file.
struct InPackage<'w, 'i, 's> {
    inner: &'w mut InputSink<'i, 's>,
    base: u64,
    warc: &'w str,
}

impl InPackage<'_, '_, '_> {
    fn placed(&self, capture: &Capture) -> Capture {
        let mut capture = capture.clone();
        capture.offset = capture.offset.map(|o| o + self.base);
        capture.warc = Some(self.warc.to_string());
        capture
    }
}

impl CaptureSink for InPackage<'_, '_, '_> {
    fn add_capture(&mut self, capture: &CaptureRef<'_>) {
        let placed = self.placed(&capture.to_capture());
        CaptureSink::add_capture(self.inner, &placed.view());
    }

    fn end_record(&mut self) -> Result<()> {
        CaptureSink::end_record(self.inner)
    }

    fn warcinfo(&mut self, info: WarcInfo) -> Result<()> {
        CaptureSink::warcinfo(self.inner, info)
    }

    fn failed_fetch(&mut self, fetch: &Capture) -> Result<()> {
        let placed = self.placed(fetch);
        CaptureSink::failed_fetch(self.inner, &placed)
    }
}

/// A reader that knows how far it has read.
struct Positioned<R> {
    inner: R,
    position: u64,
}

impl<R: Read> Read for Positioned<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.position += n as u64;
        Ok(n)
    }
}

fn skip(reader: &mut impl Read, n: u64) -> io::Result<()> {
    io::copy(&mut reader.take(n), &mut io::sink())?;
    Ok(())
}

/// A member's bytes (inflated), hashed as they pass, never more than the declared size:
/// what lies beyond it sets `over` and is not read.
struct Checked<R> {
    inner: R,
    left: u64,
    over: bool,
    /// The first read error (the member is damaged); reads return end of data after it.
    error: Option<io::Error>,
    sha256: Sha256,
    crc: crc32fast::Hasher,
    bytes: u64,
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.error.is_some() || self.over || buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // One byte more than declared is enough to know the size lied.
            let mut probe = [0u8; 1];
            match self.inner.read(&mut probe) {
                Ok(0) => {}
                Ok(_) => self.over = true,
                Err(e) => self.error = Some(e),
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        match self.inner.read(&mut buf[..want]) {
            Ok(n) => {
                self.sha256.update(&buf[..n]);
                self.crc.update(&buf[..n]);
                self.bytes += n as u64;
                self.left -= n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                let message = e.to_string();
                self.error = Some(e);
                Err(io::Error::other(message))
            }
        }
    }
}
