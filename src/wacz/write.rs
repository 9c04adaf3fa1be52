//! Writing a WACZ package (`export-wacz`): the WARC records of a capture selection, and
//! the original record of every selected revisit, into `archive/data.warc.gz`, with
//! `indexes/index.cdx`, `pages/pages.jsonl`, `datapackage.json` (SHA-256 of every
//! member) and `datapackage-digest.json`.
//!
//! Records are copied byte for byte when they are gzip members of their own (how
//! crawlers write WARCs); a record of an uncompressed WARC, or one of several in a gzip
//! member, is copied decompressed into a gzip member of its own, so that the package's
//! WARC is per-record gzip as replay tools expect. Every member is stored (the spec
//! requires it of WARCs, and it keeps offsets in the package meaningful).
//!
//! The index is CDXJ named `indexes/index.cdx`, as py-wacz names its CDXJ
//! (`index.cdx.gz`): pywb's `wb-manager add --unpack-wacz` takes only `*.cdx` and
//! `*.cdx.gz` members as indexes, and ReplayWeb.page reads either name.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use crate::capture::{Capture, CaptureKind};
use crate::cdx::lines::LineReader;
use crate::payload::WarcLocator;
use crate::report::{Counts, Location, Report};
use crate::store::Store;
use crate::store::captures::captures_of_digest;
use crate::warc::{Compression, ReaderOptions, WarcReader};
use crate::wayback::{CaptureQuery, StoreCaptures};

/// The WARC member of the package.
const DATA: &str = "data.warc.gz";
/// Index lines sorted in memory before a run is spilled to disk.
const INDEX_SORT_BUFFER: usize = 64 << 20;

/// One record written to the package's WARC, for the index.
struct Written {
    offset: u64,
    length: u64,
}

/// What an export wrote.
#[derive(Debug, Default)]
pub struct Exported {
    pub counts: Counts,
    pub bytes: u64,
}

/// Writes the package of the captures `query` selects to `output` (through a temporary
/// file renamed at the end, so a failed export leaves no half package).
pub fn export(
    store: &Store,
    query: &CaptureQuery,
    locator: &WarcLocator,
    output: &Path,
    report: &Report,
    software: &str,
) -> Result<Exported> {
    let dir = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut counts = Counts::default();
    // The selection, spooled to disk: memory stays bounded however many captures match.
    let mut spool = tempfile::tempfile_in(dir)
        .with_context(|| format!("cannot make a temporary file in {}", dir.display()))?;
    {
        let mut out = BufWriter::new(&mut spool);
        crate::wayback::run(query, &StoreCaptures::new(store), &mut out)?;
        out.flush()?;
    }
    spool.seek(SeekFrom::Start(0))?;
    let mut data = tempfile::tempfile_in(dir)?;
    let mut data_out = Counting {
        inner: BufWriter::with_capacity(1 << 20, &mut data),
        written: 0,
    };
    // The index is sorted on disk, the page list written as it comes: memory stays
    // bounded by the sort's buffer, not by the number of records.
    let mut index = crate::extsort::Sorter::new(dir, INDEX_SORT_BUFFER);
    let mut pages = BufWriter::new(tempfile::tempfile_in(dir)?);
    pages
        .write_all(b"{\"format\":\"json-pages-1.0\",\"id\":\"pages\",\"title\":\"All Pages\"}\n")?;
    let mut copied: HashSet<(PathBuf, u64)> = HashSet::new();
    // The spool is data this run wrote: a line over the cap is damage, an error.
    let mut spool = LineReader::plain(&mut spool).overlong_is_error();
    while let Some((number, line)) = spool
        .next_line()
        .context("the selected captures cannot be read back")?
    {
        let capture = Capture::from_json(line.trim_ascii_end())
            .with_context(|| format!("selected capture {number} cannot be read back"))?;
        counts.incr("captures_selected");
        let Some(written) = copy_capture(
            store,
            locator,
            &capture,
            &mut copied,
            &mut data_out,
            report,
            &mut counts,
        )?
        else {
            continue;
        };
        index.push(cdxj_line(&capture, &written).as_bytes())?;
        counts.incr("records");
        if is_page(&capture) {
            pages.write_all(page_line(store, &capture)?.as_bytes())?;
            pages.write_all(b"\n")?;
            counts.incr("pages");
        }
        if capture.kind == CaptureKind::Revisit {
            original_of(
                store,
                locator,
                &capture,
                &mut copied,
                &mut data_out,
                &mut index,
                report,
                &mut counts,
            )?;
        }
    }
    data_out.inner.flush()?;
    drop(data_out);
    let mut sorted = index.finish()?;
    let mut index = BufWriter::new(tempfile::tempfile_in(dir)?);
    let mut last: Vec<u8> = Vec::new();
    while let Some(line) = sorted.next()? {
        if line != last.as_slice() {
            index.write_all(line)?;
            index.write_all(b"\n")?;
            last.clear();
            last.extend_from_slice(line);
        }
    }
    let mut index = index.into_inner().map_err(|e| e.into_error())?;
    let mut pages = pages.into_inner().map_err(|e| e.into_error())?;
    let bytes = write_zip(dir, output, &mut data, &mut index, &mut pages, software)?;
    Ok(Exported { counts, bytes })
}

/// Copies the record of `capture` into the package's WARC; `None` (reported) when it
/// cannot be, or when it was already copied (as another revisit's original).
#[allow(clippy::too_many_arguments)]
fn copy_capture(
    store: &Store,
    locator: &WarcLocator,
    capture: &Capture,
    copied: &mut HashSet<(PathBuf, u64)>,
    out: &mut Counting<impl Write>,
    report: &Report,
    counts: &mut Counts,
) -> Result<Option<Written>> {
    let (Some(warc), Some(offset)) = (capture.warc.as_deref(), capture.offset) else {
        counts.incr("captures_without_warc");
        return Ok(None);
    };
    let Some(path) = locator.resolve_capture(store, capture)? else {
        counts.incr("warcs_missing");
        report.problem(
            Location::offset(warc.to_string(), offset),
            "warc-missing",
            "the WARC file of this capture is not found (give --warc-dir, or `sediment relocate`)",
            None,
        )?;
        return Ok(None);
    };
    if !copied.insert((path.clone(), offset)) {
        return Ok(None);
    }
    match copy_record(&path, offset, out) {
        Ok(written) => Ok(Some(written)),
        Err(e) => {
            counts.incr("records_unreadable");
            report.problem(
                Location::offset(path.display().to_string(), offset),
                "record-unreadable",
                &format!("{e:#}"),
                None,
            )?;
            Ok(None)
        }
    }
}

/// The original record of a revisit (the first capture of its payload that is not a
/// revisit and whose WARC is here), added to the package and its index.
#[allow(clippy::too_many_arguments)]
fn original_of(
    store: &Store,
    locator: &WarcLocator,
    revisit: &Capture,
    copied: &mut HashSet<(PathBuf, u64)>,
    out: &mut Counting<impl Write>,
    index: &mut crate::extsort::Sorter,
    report: &Report,
    counts: &mut Counts,
) -> Result<()> {
    let Some(digest) = revisit.digest else {
        return Ok(());
    };
    for original in captures_of_digest(store, &digest)? {
        if original.kind == CaptureKind::Revisit || original.offset.is_none() {
            continue;
        }
        let Some(path) = locator.resolve_capture(store, &original)? else {
            continue;
        };
        if copied.contains(&(path, original.offset.unwrap_or(0))) {
            // Already in the package (selected itself, or another revisit's).
            return Ok(());
        }
        if let Some(written) = copy_capture(store, locator, &original, copied, out, report, counts)?
        {
            index.push(cdxj_line(&original, &written).as_bytes())?;
            counts.incr("revisit_originals");
            return Ok(());
        }
    }
    counts.incr("revisit_originals_missing");
    report.problem(
        Location::offset(
            revisit.warc.clone().unwrap_or_default(),
            revisit.offset.unwrap_or(0),
        ),
        "revisit-original-missing",
        &format!(
            "no WARC here holds the original of this revisit ({}); the package has the revisit \
             alone",
            digest
        ),
        None,
    )?;
    Ok(())
}

/// Copies one record from `warc` at `offset` (see the module documentation).
fn copy_record(warc: &Path, offset: u64, out: &mut Counting<impl Write>) -> Result<Written> {
    let open = || -> Result<File> {
        let mut file =
            File::open(warc).with_context(|| format!("cannot open {}", warc.display()))?;
        file.seek(SeekFrom::Start(offset))?;
        Ok(file)
    };
    let mut reader =
        WarcReader::positioned(BufReader::new(open()?), offset, 0, ReaderOptions::default())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    let record = match reader.next_record(None) {
        Some(Ok(record)) => record,
        Some(Err(e)) => anyhow::bail!("{}: {}", e.kind.name(), e.message),
        None => anyhow::bail!("no record at this offset"),
    };
    let start = out.written;
    let whole_member = record.compression == Compression::Gzip
        && record.skip == 0
        && member_ends_at(warc, offset + record.length)?;
    if whole_member {
        let copied = io::copy(&mut open()?.take(record.length), out)?;
        anyhow::ensure!(copied == record.length, "the record is cut short");
    } else {
        let record_bytes = record.header_length + record.content_length + 4;
        let mut gz = flate2::write::GzEncoder::new(&mut *out, flate2::Compression::default());
        let copied = match record.compression {
            Compression::Gzip => {
                let mut inflated = flate2::read::MultiGzDecoder::new(BufReader::new(open()?));
                io::copy(&mut (&mut inflated).take(record.skip), &mut io::sink())?;
                io::copy(&mut inflated.take(record_bytes), &mut gz)?
            }
            Compression::None => io::copy(&mut open()?.take(record.length), &mut gz)?,
        };
        gz.finish()?;
        anyhow::ensure!(
            copied >= record_bytes.min(record.length),
            "the record is cut short"
        );
    }
    Ok(Written {
        offset: start,
        length: out.written - start,
    })
}

/// Whether a gzip member of `warc` ends at `end`: the file ends there or another member
/// starts (a record in a whole-file gzip ends inside its member).
fn member_ends_at(warc: &Path, end: u64) -> Result<bool> {
    let mut file = File::open(warc)?;
    file.seek(SeekFrom::Start(end))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic)?;
    Ok(n == 0 || (n == 2 && magic == [0x1f, 0x8b]))
}

/// `SURT TIMESTAMP {json}`: the CDXJ line pywb and ReplayWeb.page read.
fn cdxj_line(capture: &Capture, written: &Written) -> String {
    let mut fields = serde_json::Map::new();
    fields.insert("url".into(), capture.url.clone().into());
    let mime = match capture.kind {
        CaptureKind::Revisit => Some("warc/revisit".to_string()),
        _ => capture.mime.clone(),
    };
    if let Some(mime) = mime {
        fields.insert("mime".into(), mime.into());
    }
    if let Some(status) = capture.status {
        fields.insert("status".into(), status.to_string().into());
    }
    if let Some(digest) = capture.digest {
        fields.insert("digest".into(), format!("sha1:{digest}").into());
    }
    fields.insert("length".into(), written.length.to_string().into());
    fields.insert("offset".into(), written.offset.to_string().into());
    fields.insert("filename".into(), DATA.into());
    format!(
        "{} {} {}",
        capture.surt,
        capture.ts,
        serde_json::Value::Object(fields)
    )
}

/// A capture a replay tool lists as a page: a successful HTML response.
fn is_page(capture: &Capture) -> bool {
    capture.kind != CaptureKind::Revisit
        && capture.status.is_none_or(|s| (200..300).contains(&s))
        && capture
            .mime
            .as_deref()
            .is_some_and(|m| m == "text/html" || m == "application/xhtml+xml")
}

fn page_line(store: &Store, capture: &Capture) -> Result<String> {
    let mut page = serde_json::Map::new();
    page.insert(
        "id".into(),
        format!("{}/{}", capture.ts, capture.url).into(),
    );
    page.insert("url".into(), capture.url.clone().into());
    page.insert("ts".into(), crate::capture::iso_date(&capture.ts).into());
    if let Some(title) = super::page_title(store, &capture.surt, &capture.ts)? {
        page.insert("title".into(), title.into());
    }
    Ok(serde_json::Value::Object(page).to_string())
}

/// The zip: every member stored, hashed as it is written.
fn write_zip(
    dir: &Path,
    output: &Path,
    data: &mut File,
    index: &mut File,
    pages: &mut File,
    software: &str,
) -> Result<u64> {
    let temporary = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot make a temporary file in {}", dir.display()))?;
    let data_len = data.seek(SeekFrom::End(0))?;
    data.seek(SeekFrom::Start(0))?;
    let mut zip = zip::ZipWriter::new(BufWriter::with_capacity(1 << 20, temporary.as_file()));
    let mut resources = Vec::new();
    add_member(
        &mut zip,
        &format!("archive/{DATA}"),
        &mut BufReader::with_capacity(1 << 20, &mut *data).take(data_len),
        data_len >= u32::MAX as u64,
        &mut resources,
    )?;
    let index_large = index.metadata()?.len() >= u32::MAX as u64;
    let pages_large = pages.metadata()?.len() >= u32::MAX as u64;
    add_member(
        &mut zip,
        "indexes/index.cdx",
        &mut rewound(index)?,
        index_large,
        &mut resources,
    )?;
    add_member(
        &mut zip,
        "pages/pages.jsonl",
        &mut rewound(pages)?,
        pages_large,
        &mut resources,
    )?;
    let created = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let package = serde_json::to_vec_pretty(&serde_json::json!({
        "profile": "data-package",
        "resources": resources,
        "created": created,
        "wacz_version": super::WACZ_VERSION,
        "software": software,
    }))?;
    let digest = serde_json::to_vec_pretty(&serde_json::json!({
        "path": "datapackage.json",
        "hash": format!("sha256:{}", hex::encode(Sha256::digest(&package))),
    }))?;
    zip.start_file("datapackage.json", stored(false))?;
    zip.write_all(&package)?;
    zip.start_file("datapackage-digest.json", stored(false))?;
    zip.write_all(&digest)?;
    let mut writer = zip.finish()?;
    writer.flush()?;
    drop(writer);
    let mut permissions = temporary.as_file().metadata()?.permissions();
    // Readable by others, like a file cp or a crawler writes (a temporary file is 0600),
    // since packages are made to be served.
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o644);
    temporary.as_file().set_permissions(permissions)?;
    temporary.as_file().sync_all()?;
    let bytes = temporary.as_file().metadata()?.len();
    temporary
        .persist(output)
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok(bytes)
}

/// A temporary file read from its start.
fn rewound(file: &mut File) -> io::Result<BufReader<&mut File>> {
    file.seek(SeekFrom::Start(0))?;
    Ok(BufReader::with_capacity(1 << 20, file))
}

fn stored(large: bool) -> zip::write::SimpleFileOptions {
    zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(large)
}

/// Adds one stored member and its datapackage resource (hashed as it is written).
fn add_member<W: Write + Seek>(
    zip: &mut zip::ZipWriter<W>,
    path: &str,
    read: &mut dyn Read,
    large: bool,
    resources: &mut Vec<serde_json::Value>,
) -> Result<()> {
    zip.start_file(path, stored(large))?;
    let mut hashing = Hashing {
        inner: zip,
        sha256: Sha256::new(),
        bytes: 0,
    };
    io::copy(read, &mut hashing)?;
    resources.push(serde_json::json!({
        "name": crate::capture::file_name(path).to_lowercase(),
        "path": path,
        "hash": format!("sha256:{}", hex::encode(hashing.sha256.finalize())),
        "bytes": hashing.bytes,
    }));
    Ok(())
}

struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

struct Hashing<'w, W> {
    inner: &'w mut W,
    sha256: Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha256.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
