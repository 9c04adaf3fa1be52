//! Reading a file's payload back from its WARC through a stored location.
//!
//! Shared by `sediment cat`, the projections (HTML bodies) and the GROBID client (PDFs).
//! Every read checks the payload SHA-1 against the row key as the bytes stream.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use std::sync::OnceLock;

use crate::capture::{Capture, CaptureKind, file_name};
use crate::key::Sha1Key;
use crate::store::Store;
use crate::store::captures::captures_of_digest;
use crate::store::locations::{Relocation, relocate};
use crate::warc::{Dechunker, PayloadSink, ReaderOptions, Record, WarcReader};
use crate::wayback::StoreCaptures;
use crate::wayback::query::KeyRange;
use crate::wayback::run::CaptureSource;

/// Finds the WARC file of a capture: where it was imported from (re-pointed by the
/// store's relocation rules), else its name as given, else under a list of directories.
#[derive(Debug, Clone, Default)]
pub struct WarcLocator {
    roots: Vec<PathBuf>,
    /// The store's relocation rules, read once by the first lookup against a store.
    rules: OnceLock<Vec<Relocation>>,
}

impl WarcLocator {
    pub fn new(roots: &[PathBuf]) -> WarcLocator {
        WarcLocator {
            roots: roots.to_vec(),
            rules: OnceLock::new(),
        }
    }

    fn rules(&self, store: &Store) -> Result<&[Relocation]> {
        if let Some(rules) = self.rules.get() {
            return Ok(rules);
        }
        let rules = store.relocations()?;
        Ok(self.rules.get_or_init(|| rules))
    }

    /// The local WARC file of a capture: its recorded location, else its name as given
    /// (see [`WarcLocator::resolve`]), both re-pointed by the relocation rules.
    pub fn resolve_capture(&self, store: &Store, capture: &Capture) -> Result<Option<PathBuf>> {
        let rules = self.rules(store)?;
        if let Some(location) = &capture.location {
            let path = PathBuf::from(relocate(rules, location));
            if path.is_file() || crate::wacz::split_member_location(&path).is_some() {
                return Ok(Some(path));
            }
        }
        Ok(capture
            .warc
            .as_deref()
            .and_then(|warc| self.resolve(&relocate(rules, warc))))
    }

    /// The local file for a WARC path as stored: the path itself when it exists, else
    /// `ROOT/path` (the item prefix kept), else `ROOT/name`, for each root in order.
    pub fn resolve(&self, warc: &str) -> Option<PathBuf> {
        // A deflated member of a WACZ (`PACKAGE.wacz#MEMBER`): the package is the file
        // to look for, the member stays as it is.
        if let Some((package, member)) = warc.rsplit_once(".wacz#") {
            let package = self.resolve_file(&format!("{package}.wacz"))?;
            let located = PathBuf::from(crate::wacz::member_location(package.to_str()?, member));
            return crate::wacz::split_member_location(&located).map(|_| located);
        }
        self.resolve_file(warc)
    }

    fn resolve_file(&self, warc: &str) -> Option<PathBuf> {
        let stored = Path::new(warc);
        if stored.is_file() && (stored.is_absolute() || self.roots.is_empty()) {
            return Some(stored.to_path_buf());
        }
        let name = file_name(warc);
        for root in &self.roots {
            for candidate in [root.join(warc.trim_start_matches('/')), root.join(name)] {
                if candidate.is_file() {
                    return Some(candidate);
                }
            }
        }
        stored.is_file().then(|| stored.to_path_buf())
    }
}

/// Where a payload was read from and what it was.
#[derive(Debug, Clone)]
pub struct PayloadRead {
    pub warc: PathBuf,
    pub offset: u64,
    /// The record's HTTP head, when it had one.
    pub record: Record,
}

struct ForwardingSink<'a> {
    out: &'a mut dyn FnMut(&[u8]),
    dechunker: Option<Dechunker>,
    decode: bool,
}

impl PayloadSink for ForwardingSink<'_> {
    fn begin(&mut self, record: &Record) -> bool {
        let chunked = record
            .http
            .as_ref()
            .is_some_and(|h| h.transfer_encoding_chunked());
        self.dechunker = (self.decode && chunked).then(Dechunker::new);
        true
    }

    fn payload(&mut self, bytes: &[u8]) {
        match &mut self.dechunker {
            Some(d) => {
                // A broken chunk stream stops the decoded output; the caller sees it in the
                // record's payload summary (dechunk_error).
                let _ = d.feed(bytes, &mut *self.out);
            }
            None => (self.out)(bytes),
        }
    }
}

/// Streams the payload of the record at `offset` in `warc` to `out` (de-chunked when
/// `decode` and the body is chunk-encoded). Fails when the record cannot be read or its
/// payload SHA-1 is not `expected`.
pub fn read_payload_at(
    warc: &Path,
    offset: u64,
    expected: &Sha1Key,
    decode: bool,
    out: &mut dyn FnMut(&[u8]),
) -> Result<Record> {
    let options = ReaderOptions {
        read_buffer: 256 << 10,
        ..ReaderOptions::default()
    };
    // A WARC deflated inside a WACZ package: inflated up to the record.
    let read: Box<dyn std::io::Read> = match crate::wacz::split_member_location(warc) {
        Some((package, member)) if !warc.is_file() => {
            crate::wacz::open_member_at(&package, &member, offset)?
        }
        _ => {
            let mut file =
                File::open(warc).with_context(|| format!("cannot open {}", warc.display()))?;
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset))
                .with_context(|| format!("{}: cannot seek to byte {offset}", warc.display()))?;
            Box::new(file)
        }
    };
    let mut reader = WarcReader::positioned(BufReader::new(read), offset, 0, options)
        .map_err(|e| anyhow::anyhow!("{}: {e}", warc.display()))?;
    let mut sink = ForwardingSink {
        out,
        dechunker: None,
        decode,
    };
    let record = match reader.next_record(Some(&mut sink)) {
        Some(Ok(record)) => record,
        Some(Err(e)) => bail!(
            "{} at byte {offset}: {}: {}",
            warc.display(),
            e.kind.name(),
            e.message
        ),
        None => bail!("{}: no record at byte {offset}", warc.display()),
    };
    let Some(payload) = &record.payload else {
        bail!(
            "{} at byte {offset}: the record has no payload",
            warc.display()
        );
    };
    if payload.sha1 != expected.0 {
        bail!(
            "{} at byte {offset}: payload SHA-1 is {}, expected {expected}: the WARC does not hold this file at that offset",
            warc.display(),
            Sha1Key(payload.sha1)
        );
    }
    Ok(record)
}

/// How many captures of one URL, and how many URLs, [`holders_of`] reads looking for the
/// original of revisits that name a de-chunked digest: a request's work stays bounded.
const ORIGINAL_SCAN: usize = 10_000;
const ORIGINAL_URLS: usize = 16;

/// The captures that hold the payload named `key`, and the key their stored bytes hash
/// to. Usually `key`'s own captures and `key`. But warcprox's revisit of a chunk-encoded
/// page names the SHA-1 of the de-chunked body, which is no store key: the original is
/// then an earlier capture of the revisit's URL whose `dechunked` is `key` (as pywb finds
/// it, by URL and digest), and the captures of its own key hold the bytes, which hash to
/// `key` once de-chunked.
pub fn holders_of(store: &Store, key: &Sha1Key) -> Result<(Vec<Capture>, Sha1Key)> {
    let captures = captures_of_digest(store, key)?;
    if captures.iter().any(|c| c.kind != CaptureKind::Revisit) {
        return Ok((captures, *key));
    }
    let mut revisits: Vec<(&str, &str)> = captures
        .iter()
        .map(|c| (c.surt.as_str(), c.ts.as_str()))
        .collect();
    // The latest revisit of each URL bounds the search for its original, newest first.
    revisits.sort_unstable_by(|a, b| a.0.cmp(b.0).then(b.1.cmp(a.1)));
    revisits.dedup_by(|a, b| a.0 == b.0);
    let source = StoreCaptures::new(store);
    for (surt, ts) in revisits.into_iter().take(ORIGINAL_URLS) {
        let mut start = surt.as_bytes().to_vec();
        start.push(0);
        let mut end = start.clone();
        end.extend_from_slice(ts.as_bytes());
        end.push(1);
        for capture in source
            .scan(&KeyRange { start, end }, true)
            .take(ORIGINAL_SCAN)
        {
            let capture = capture?;
            if capture.kind != CaptureKind::Revisit
                && capture.dechunked == Some(*key)
                && let Some(stored) = capture.digest
            {
                return Ok((captures_of_digest(store, &stored)?, stored));
            }
        }
    }
    Ok((captures, *key))
}

/// Fails unless the record's body, de-chunked whole, hashes to `key`.
pub fn check_dechunked(warc: &Path, offset: u64, record: &Record, key: &Sha1Key) -> Result<()> {
    let payload = record.payload.as_ref();
    if let Some(error) = payload.and_then(|p| p.dechunk_error.as_ref()) {
        bail!(
            "{} at byte {offset}: the chunked body is malformed ({error}), so it cannot give {key}",
            warc.display()
        );
    }
    match payload.and_then(|p| p.dechunked_sha1) {
        Some(sha1) if sha1 == key.0 => Ok(()),
        found => bail!(
            "{} at byte {offset}: the de-chunked payload's SHA-1 is {}, expected {key}",
            warc.display(),
            found.map_or_else(|| "unknown".to_string(), |s| Sha1Key(s).to_string())
        ),
    }
}

/// Where a file's payload can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// A local WARC file and the record offset in it.
    Found { warc: PathBuf, offset: u64 },
    /// Captures name WARC files, but none of them was found.
    Missing { tried: Vec<String> },
    /// No capture of this file has a WARC location (e.g. it came from a CDX without one).
    NoLocation,
}

/// Finds the first capture of a file (in first-capture order) whose WARC is present.
pub fn locate(store: &Store, key: &Sha1Key, locator: &WarcLocator) -> Result<Located> {
    locate_in(store, &captures_of_digest(store, key)?, locator)
}

/// [`locate`] among the given captures of one payload.
fn locate_in(store: &Store, captures: &[Capture], locator: &WarcLocator) -> Result<Located> {
    let mut tried = Vec::new();
    for capture in captures {
        if capture.kind == crate::capture::CaptureKind::Revisit {
            continue;
        }
        let (Some(warc), Some(offset)) = (capture.warc.as_deref(), capture.offset) else {
            continue;
        };
        match locator.resolve_capture(store, capture)? {
            Some(path) => return Ok(Located::Found { warc: path, offset }),
            None => tried.push(capture.location.as_deref().unwrap_or(warc).to_string()),
        }
    }
    Ok(if tried.is_empty() {
        Located::NoLocation
    } else {
        Located::Missing { tried }
    })
}

/// Streams a file's payload from the first of its captures whose WARC can be found.
pub fn read_payload(
    store: &Store,
    key: &Sha1Key,
    locator: &WarcLocator,
    decode: bool,
    out: &mut dyn FnMut(&[u8]),
) -> Result<PayloadRead> {
    let (captures, stored) = holders_of(store, key)?;
    match locate_in(store, &captures, locator)? {
        Located::Found { warc, offset } => {
            // A key that names the de-chunked body (a warcprox revisit's) gets the bytes
            // it names: the stored ones de-chunked.
            let dechunk = stored != *key;
            let record = read_payload_at(&warc, offset, &stored, decode || dechunk, out)?;
            if dechunk {
                check_dechunked(&warc, offset, &record, key)?;
            }
            Ok(PayloadRead {
                warc,
                offset,
                record,
            })
        }
        Located::Missing { tried } => bail!(
            "none of the WARC files holding {key} was found ({}); give the directories that hold them with --warc-dir, or re-point a moved collection with `sediment relocate OLD NEW`",
            tried.join(", ")
        ),
        Located::NoLocation => {
            bail!("no stored WARC location for {key}: was it ingested from a CDX or WARC?")
        }
    }
}
