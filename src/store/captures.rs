//! Reading the capture key spaces (layouts in [`super::keys`]) and deriving file rows
//! from captures.
//!
//! A `capture_by_digest` entry is an index entry ([`IndexEntry`]): a few flags and the
//! key of the capture in URL order, where the capture itself is stored once.
//!
//! File rows are a pure function of the set of captures of a digest, derived when a
//! digest's captures are written (a digest new to the store, see [`super::writer`]) or
//! recomputed at the end of a run for the digests it marked (the `dirty` family). That is
//! what makes ingestion independent of thread count, input order, and interruptions.

use anyhow::Result;

use crate::capture::{Capture, CaptureRef, file_name};
use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::backend::{Batch, Op, Space};
use crate::store::keys::{FAILED_FETCH_PREFIX, IndexEntry};
use crate::store::{PrefixScanner, Store};

/// The derived cells of one file row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedRow {
    /// Captures of the digest counted in `f:c.c`.
    pub captures: u64,
    pub dedupe: Vec<u8>,
    pub cdx: Vec<u8>,
    pub mime: Option<String>,
    pub size: Option<u64>,
}

/// Derives a file row from the captures of one digest, given in first-capture order.
/// `None` when no capture may locate the file (e.g. only revisits or filtered-out
/// captures are known).
#[cfg(test)]
pub fn derive_row(captures: &[Capture]) -> Option<DerivedRow> {
    let first = captures.iter().find(|c| c.locates_file())?;
    let count = captures.iter().filter(|c| c.counts()).count() as u64;
    let mime = first
        .mime
        .clone()
        .or_else(|| captures.iter().find_map(|c| c.mime.clone()));
    let size = first.size.or_else(|| captures.iter().find_map(|c| c.size));
    Some(derive_from(&first.view(), count, mime, size))
}

/// The file row for a digest whose first capture is `first`, seen `count` times; `mime`
/// and `size` may come from another capture when the first one lacks them.
pub fn derive_from(
    first: &CaptureRef<'_>,
    count: u64,
    mime: Option<String>,
    size: Option<u64>,
) -> DerivedRow {
    let mut row = DerivedRow {
        captures: count,
        dedupe: Vec::with_capacity(64 + first.url.len() + first.record_id.map_or(0, str::len)),
        cdx: Vec::with_capacity(96 + first.surt.len() + first.url.len()),
        mime: None,
        size,
    };
    row.fill(first, count, None, size);
    row.mime = mime;
    row
}

impl DerivedRow {
    /// An empty row, whose buffers [`DerivedRow::fill`] reuses.
    pub fn empty() -> DerivedRow {
        DerivedRow {
            captures: 0,
            dedupe: Vec::new(),
            cdx: Vec::new(),
            mime: None,
            size: None,
        }
    }

    /// Makes this the row [`derive_from`] makes, in the buffers the row already has: a
    /// bulk load derives a row per digest, and allocating each one's buffers anew was
    /// ~3 % of its CPU (issue 39).
    pub fn fill(
        &mut self,
        first: &CaptureRef<'_>,
        count: u64,
        mime: Option<&str>,
        size: Option<u64>,
    ) {
        // Seed 002: the item and file name, as a CDX's file column gives it. A path given
        // to import-warc as absolute names the importing machine's disk, not the file.
        let warc = first
            .warc
            .map(|w| if w.starts_with('/') { file_name(w) } else { w });
        self.captures = count;
        self.dedupe.clear();
        dedupe_json(&mut self.dedupe, first, count);
        self.cdx.clear();
        cdx_json(&mut self.cdx, first, warc);
        match (&mut self.mime, mime) {
            (Some(kept), Some(mime)) => {
                kept.clear();
                kept.push_str(mime);
            }
            (kept, mime) => *kept = mime.map(str::to_owned),
        }
        self.size = size;
    }
}

/// `f:c`: `{"c":…,"d":…,"f":…,"i":…,"o":…,"u":…}`, fields in alphabetical order so the
/// JSON is canonical, absent ones left out. Written directly rather than through serde:
/// one of these and one [`cdx_json`] per digest is most of a bulk load's row derivation
/// (the bytes are serde_json's, which the tests check).
fn dedupe_json(out: &mut Vec<u8>, first: &CaptureRef<'_>, count: u64) {
    out.extend_from_slice(b"{\"c\":");
    json_u64(out, count);
    out.extend_from_slice(b",\"d\":");
    json_iso_date(out, first.ts);
    if let Some(f) = first.warc.map(file_name) {
        out.extend_from_slice(b",\"f\":");
        json_str(out, f);
    }
    if let Some(i) = first.record_id {
        out.extend_from_slice(b",\"i\":");
        json_str(out, i);
    }
    if let Some(o) = first.offset {
        out.extend_from_slice(b",\"o\":");
        json_u64(out, o);
    }
    out.extend_from_slice(b",\"u\":");
    json_str(out, first.url);
    out.push(b'}');
}

/// `file:cdx`: `{"c_size":…,"dt":…,"offset":…,"surt":…,"url":…,"warc":…}`, as
/// [`dedupe_json`].
fn cdx_json(out: &mut Vec<u8>, first: &CaptureRef<'_>, warc: Option<&str>) {
    out.push(b'{');
    if let Some(c_size) = first.c_size {
        out.extend_from_slice(b"\"c_size\":");
        json_u64(out, c_size);
        out.push(b',');
    }
    out.extend_from_slice(b"\"dt\":");
    json_str(out, first.ts);
    if let Some(offset) = first.offset {
        out.extend_from_slice(b",\"offset\":");
        json_u64(out, offset);
    }
    out.extend_from_slice(b",\"surt\":");
    json_str(out, first.surt);
    out.extend_from_slice(b",\"url\":");
    json_str(out, first.url);
    if let Some(warc) = warc {
        out.extend_from_slice(b",\"warc\":");
        json_str(out, warc);
    }
    out.push(b'}');
}

fn json_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A JSON string as serde_json writes it: `"` and `\\` escaped, the control characters
/// as `\b \t \n \f \r` or `\u00xx`, everything else (non-ASCII too) as it is.
///
/// URLs, SURTs and file names rarely hold a byte to escape: sixteen bytes (SSE2), then
/// eight, are tested at a time and copied whole (a byte-by-byte loop was 6 % of a bulk
/// load's CPU, eight at a time 4 %, issue 39).
fn json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        i += clean_blocks(&bytes[i..]);
        if let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if !word_needs_escape(word) {
                i += 8;
                continue;
            }
        }
        // A word with a byte to escape, or the tail: byte by byte up to the next word.
        let end = (i + 8).min(bytes.len());
        for (j, &b) in bytes.iter().enumerate().take(end).skip(i) {
            let escape: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0..=0x1f => {
                    out.extend_from_slice(&bytes[start..j]);
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(b"\\u00");
                    out.push(HEX[usize::from(b >> 4)]);
                    out.push(HEX[usize::from(b & 0xf)]);
                    start = j + 1;
                    continue;
                }
                _ => continue,
            };
            out.extend_from_slice(&bytes[start..j]);
            out.extend_from_slice(escape);
            start = j + 1;
        }
        i = end;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// How many bytes at the start of `bytes` are known to hold no byte that [`json_str`]
/// escapes: whole blocks of sixteen up to the first that holds one, or all of them when
/// none does (the last block may overlap the one before, or be padded, so that no tail is
/// left to test byte by byte).
#[cfg(target_arch = "x86_64")]
fn clean_blocks(bytes: &[u8]) -> usize {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let has_escape = |block: &[u8; 16]| {
        // SAFETY: SSE2 is part of every x86-64 CPU, and the load reads the sixteen bytes
        // of `block`.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().cast());
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            // Unsigned: bytes of 0x80 and above are not control characters.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) != 0
        }
    };
    let mut clean = 0;
    let (blocks, tail) = bytes.as_chunks::<16>();
    for block in blocks {
        if has_escape(block) {
            return clean;
        }
        clean += 16;
    }
    let last = match bytes.last_chunk::<16>() {
        Some(last) => *last,
        // Shorter than a block (timestamps, file names): tested padded with a byte that
        // needs no escape.
        None => {
            let mut padded = [b' '; 16];
            padded[..tail.len()].copy_from_slice(tail);
            padded
        }
    };
    if tail.is_empty() || has_escape(&last) {
        clean
    } else {
        bytes.len()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn clean_blocks(_: &[u8]) -> usize {
    0
}

/// Whether any of eight bytes (little-endian in `word`) is `"`, `\\` or below 0x20. The
/// classic SWAR tests: `(x - 0x01…) & !x & 0x80…` is non-zero exactly when a byte of `x`
/// is zero, and `(w - 0x20…) & !w & 0x80…` when a byte of `w` is below 0x20.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    quote | backslash | control != 0
}

/// [`crate::capture::iso_date`] of a 14-digit timestamp as a JSON string, written in
/// place (anything else is kept as it is, as there).
fn json_iso_date(out: &mut Vec<u8>, ts14: &str) {
    let b = ts14.as_bytes();
    if b.len() != 14 || !b.iter().all(u8::is_ascii_digit) {
        return json_str(out, ts14);
    }
    out.push(b'"');
    for (part, sep) in [
        (0..4, b'-'),
        (4..6, b'-'),
        (6..8, b'T'),
        (8..10, b':'),
        (10..12, b':'),
    ] {
        out.extend_from_slice(&b[part]);
        out.push(sep);
    }
    out.extend_from_slice(&b[12..14]);
    out.extend_from_slice(b"Z\"");
}

/// The index entries of one digest as the index holds them, from its by-digest entries in
/// key order, `(by-digest key, flags, capture key)`: entries of equal keys (`same`) are
/// one, their flags joined.
pub(crate) fn fold_index_entries<'a, K>(
    entries: impl IntoIterator<Item = (K, u8, &'a [u8])>,
    same: impl Fn(&K, &K) -> bool,
) -> Vec<(u8, &'a [u8])> {
    let entries = entries.into_iter();
    let mut folded: Vec<(u8, &[u8])> = Vec::with_capacity(entries.size_hint().0);
    let mut last: Option<K> = None;
    for (key, flags, capture_key) in entries {
        match folded.last_mut() {
            Some(prev) if last.as_ref().is_some_and(|l| same(l, &key)) => prev.0 |= flags,
            _ => folded.push((flags, capture_key)),
        }
        last = Some(key);
    }
    folded
}

/// Derives a file row from the index entries of one digest (in first-capture order),
/// reading only the captures it needs through `read`.
pub fn derive_from_index(
    entries: &[(u8, &[u8])],
    read: impl FnMut(&[u8]) -> Option<Capture>,
) -> Option<DerivedRow> {
    let mut row = DerivedRow::empty();
    derive_from_index_into(entries, read, &mut row).then_some(row)
}

/// A capture a row is derived from: owned (read from the store) or read in place (a bulk
/// batch's).
pub(crate) trait CaptureView {
    fn view(&self) -> CaptureRef<'_>;
}

impl CaptureView for Capture {
    fn view(&self) -> CaptureRef<'_> {
        Capture::view(self)
    }
}

impl CaptureView for CaptureRef<'_> {
    fn view(&self) -> CaptureRef<'_> {
        self.clone()
    }
}

/// [`derive_from_index`] into `row`, whose buffers are reused; false when the digest has
/// no row. A bulk load reads the captures in place (a digest of several captures took
/// a copy of each and of every text in it, issue 39).
pub(crate) fn derive_from_index_into<C: CaptureView>(
    entries: &[(u8, &[u8])],
    mut read: impl FnMut(&[u8]) -> Option<C>,
    row: &mut DerivedRow,
) -> bool {
    let count = entries
        .iter()
        .filter(|(f, _)| f & IndexEntry::COUNTS != 0)
        .count() as u64;
    let Some((_, first_key)) = entries.iter().find(|(f, _)| f & IndexEntry::LOCATES != 0) else {
        return false;
    };
    let Some(first) = read(first_key) else {
        return false;
    };
    let first = first.view();
    let mut other = |flag: u8| {
        entries
            .iter()
            .filter(|(f, k)| f & flag != 0 && k != first_key)
            .find_map(|(_, k)| read(k))
    };
    let with_mime = first
        .mime
        .is_none()
        .then(|| other(IndexEntry::HAS_MIME))
        .flatten();
    let mime = first.mime.or_else(|| with_mime.as_ref()?.view().mime);
    let size = first
        .size
        .or_else(|| other(IndexEntry::HAS_SIZE)?.view().size);
    row.fill(&first, count, mime, size);
    true
}

/// Reads one capture by its key in URL order.
pub fn read_capture(store: &Store, capture_key: &[u8]) -> Result<Option<Capture>> {
    Ok(store
        .get(Space::Capture, capture_key)?
        .and_then(|v| Capture::decode(&v).ok()))
}

/// [`read_capture`] for deriving a row, without filling the block cache
/// ([`super::RocksBackend::get_uncached`]).
pub(crate) fn read_capture_to_derive(store: &Store, capture_key: &[u8]) -> Result<Option<Capture>> {
    let value = match store.backend().as_rocks() {
        Some(rocks) => rocks.get_uncached(Space::Capture, capture_key)?,
        None => store.get(Space::Capture, capture_key)?,
    };
    Ok(value.and_then(|v| Capture::decode(&v).ok()))
}

/// The columns the derivation writes.
pub struct DerivedColumns {
    pub dedupe: ColumnId,
    pub cdx: ColumnId,
    pub mime: ColumnId,
    pub size: ColumnId,
}

impl DerivedColumns {
    pub fn resolve(store: &Store) -> Result<DerivedColumns> {
        DerivedColumns::of(store.schema())
    }

    /// The columns of `schema`; an error names the one it lacks.
    pub fn of(schema: &crate::schema::Schema) -> Result<DerivedColumns> {
        let get = |name: &str| {
            schema
                .column_id(name)
                .ok_or_else(|| anyhow::anyhow!("the schema lacks column {name}"))
        };
        Ok(DerivedColumns {
            dedupe: get("f:c")?,
            cdx: get("file:cdx")?,
            mime: get("file:mime")?,
            size: get("file:size")?,
        })
    }
}

/// Appends the cells of a derived row to a batch.
pub fn put_derived_row(
    store: &Store,
    columns: &DerivedColumns,
    batch: &mut Batch,
    row: &Sha1Key,
    derived: &DerivedRow,
    ts: u64,
) {
    let mut put = |column: ColumnId, value: &[u8]| {
        batch.push(Op::PutCell {
            row: *row,
            family: column.family,
            qualifier: store.schema().column(column).qualifier.as_bytes().to_vec(),
            ts,
            value: value.to_vec(),
        });
    };
    put(columns.dedupe, &derived.dedupe);
    put(columns.cdx, &derived.cdx);
    if let Some(mime) = &derived.mime {
        put(columns.mime, mime.as_bytes());
    }
    if let Some(size) = derived.size {
        put(columns.size, &size.to_be_bytes());
    }
}

/// The index entries of one digest, in first-capture order: (flags, capture key).
pub fn index_entries(store: &Store, digest: &Sha1Key) -> Result<Vec<(u8, Vec<u8>)>> {
    index_entries_from(&mut store.prefix_scanner(Space::ByDigest), digest)
}

/// [`index_entries`] through a scanner of the by-digest space, for digests in order.
pub(crate) fn index_entries_from(
    by_digest: &mut PrefixScanner<'_>,
    digest: &Sha1Key,
) -> Result<Vec<(u8, Vec<u8>)>> {
    let mut out = Vec::new();
    by_digest.scan_prefix(digest.as_bytes(), &mut |key, value| {
        if let Some((flags, capture_key)) = IndexEntry::decode(key, value) {
            out.push((flags, capture_key.into_owned()));
        }
        Ok(true)
    })?;
    Ok(out)
}

/// Reads the captures of one digest in first-capture order.
pub fn captures_of_digest(store: &Store, digest: &Sha1Key) -> Result<Vec<Capture>> {
    let mut out = Vec::new();
    for (_, key) in index_entries(store, digest)? {
        if let Some(capture) = read_capture(store, &key)? {
            out.push(capture);
        }
    }
    Ok(out)
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MaterializeStats {
    /// Digests whose captures were looked at.
    pub digests: u64,
    /// File rows (re)written.
    pub rows: u64,
    /// Digests with captures but no capture that may locate a file.
    pub without_file: u64,
    /// Captures folded into the rows written, beyond the first of each (`f:c.c` − 1 summed).
    pub duplicates: u64,
}

impl MaterializeStats {
    pub fn add(&mut self, other: &MaterializeStats) {
        self.digests += other.digests;
        self.rows += other.rows;
        self.without_file += other.without_file;
        self.duplicates += other.duplicates;
    }

    pub(crate) fn count(&mut self, derived: Option<&DerivedRow>) {
        self.digests += 1;
        match derived {
            Some(row) => {
                self.rows += 1;
                self.duplicates += row.captures.saturating_sub(1);
            }
            None => self.without_file += 1,
        }
    }
}

/// The file row of one digest, derived from its captures in the store.
fn derive_digest(store: &Store, digest: &Sha1Key) -> Result<Option<DerivedRow>> {
    derive_digest_from(store, &mut store.prefix_scanner(Space::ByDigest), digest)
}

/// [`derive_digest`] reading the index through `by_digest` (digests in order).
fn derive_digest_from(
    store: &Store,
    by_digest: &mut PrefixScanner<'_>,
    digest: &Sha1Key,
) -> Result<Option<DerivedRow>> {
    let entries = index_entries_from(by_digest, digest)?;
    let refs: Vec<(u8, &[u8])> = entries.iter().map(|(f, k)| (*f, k.as_slice())).collect();
    let mut read_error = None;
    let derived = derive_from_index(&refs, |k| match read_capture_to_derive(store, k) {
        Ok(c) => c,
        Err(e) => {
            read_error = Some(e);
            None
        }
    });
    match read_error {
        Some(e) => Err(e),
        None => Ok(derived),
    }
}

/// Derives the rows of the marked digests; the stats include the rows writers derived
/// as they wrote (see [`crate::store::writer`]) since the last call.
pub(crate) fn materialize_exclusive(store: &Store, ts: u64) -> Result<MaterializeStats> {
    /// Marks read before their rows are derived (in parallel) and written: 1.3 MB of keys.
    const MARKS_PER_ROUND: usize = 1 << 16;
    let columns = DerivedColumns::resolve(store)?;
    let mut stats = (store.rows_at_write())
        .map(|lock| std::mem::take(&mut lock.lock().unwrap_or_else(|e| e.into_inner()).stats))
        .unwrap_or_default();
    let mut marks: Vec<Vec<u8>> = Vec::with_capacity(MARKS_PER_ROUND);
    store.scan_prefix(Space::Dirty, &[], &mut |key, _| {
        marks.push(key.to_vec());
        if marks.len() == MARKS_PER_ROUND {
            derive_marked(store, &columns, &marks, ts, &mut stats)?;
            marks.clear();
        }
        Ok(true)
    })?;
    derive_marked(store, &columns, &marks, ts, &mut stats)?;
    Ok(stats)
}

/// Derives the rows of marked digests (in key order), writes them and removes the marks,
/// in the same batches. The digests are cut into one range per worker thread, each read
/// through its own scanner of the index: most of the time goes to random reads of the
/// captures, which the threads overlap.
fn derive_marked(
    store: &Store,
    columns: &DerivedColumns,
    marks: &[Vec<u8>],
    ts: u64,
    stats: &mut MaterializeStats,
) -> Result<()> {
    use rayon::prelude::*;
    let per_thread = marks.len().div_ceil(rayon::current_num_threads()).max(1);
    let derived: Vec<Vec<Option<DerivedRow>>> = marks
        .par_chunks(per_thread)
        .map(|range| {
            let mut by_digest = store.prefix_scanner(Space::ByDigest);
            range
                .iter()
                .map(|key| match Sha1Key::from_slice(key) {
                    Some(digest) => derive_digest_from(store, &mut by_digest, &digest),
                    None => Ok(None),
                })
                .collect()
        })
        .collect::<Result<_>>()?;
    let mut batch = Batch::default();
    for (key, row) in marks.iter().zip(derived.into_iter().flatten()) {
        if let Some(digest) = Sha1Key::from_slice(key) {
            stats.count(row.as_ref());
            if let Some(row) = &row {
                put_derived_row(store, columns, &mut batch, &digest, row, ts);
            }
        }
        batch.push(Op::Delete {
            space: Space::Dirty,
            key: key.clone(),
        });
        if batch.bytes() >= 4 << 20 {
            store.write(&batch)?;
            batch.clear();
        }
    }
    store.write(&batch)
}

/// Derives the row of one marked digest and removes the mark if it still says
/// `token` (shared backends).
pub(crate) fn derive_and_unmark(
    store: &Store,
    columns: &DerivedColumns,
    digest: &Sha1Key,
    token: &[u8],
    ts: u64,
    stats: &mut MaterializeStats,
) -> Result<()> {
    let derived = derive_digest(store, digest)?;
    stats.count(derived.as_ref());
    if let Some(row) = &derived {
        let mut batch = Batch::default();
        put_derived_row(store, columns, &mut batch, digest, row, ts);
        store.write(&batch)?;
    }
    store
        .backend()
        .check_and_set(Space::Dirty, digest.as_bytes(), Some(token), None)?;
    Ok(())
}

impl Store {
    /// Calls `visit` with every capture in URL-then-time order (the capture key order),
    /// one at a time; `visit` returns false to stop.
    pub fn for_each_capture(&self, mut visit: impl FnMut(Capture) -> Result<bool>) -> Result<()> {
        self.backend().scan_once(
            Space::Capture,
            &[],
            None,
            &mut |_, value| match Capture::decode(value) {
                Ok(capture) => visit(capture),
                Err(_) => Ok(true),
            },
        )
    }

    /// Calls `visit` with the captures whose keys lie in `[start, end)`, in key order
    /// (URL then time); `visit` returns false to stop. Damaged values are skipped.
    pub fn scan_captures(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        mut visit: impl FnMut(Capture) -> Result<bool>,
    ) -> Result<()> {
        self.backend().scan(
            Space::Capture,
            start,
            end,
            &mut |_, value| match Capture::decode(value) {
                Ok(capture) => visit(capture),
                Err(_) => Ok(true),
            },
        )
    }
}

impl Store {
    /// Calls `visit` with every failed fetch, in capture key order; damaged values are
    /// skipped.
    pub fn for_each_failed_fetch(
        &self,
        mut visit: impl FnMut(Capture) -> Result<bool>,
    ) -> Result<()> {
        self.scan_prefix(
            Space::Meta,
            FAILED_FETCH_PREFIX,
            &mut |_, value| match Capture::decode(value) {
                Ok(fetch) => visit(fetch),
                Err(_) => Ok(true),
            },
        )
    }
}

/// Number of captures in URL order (every capture, whatever its status).
pub fn count_captures(store: &Store) -> Result<u64> {
    let mut n = 0;
    store
        .backend()
        .scan(Space::Capture, &[], None, &mut |_, _| {
            n += 1;
            Ok(true)
        })?;
    Ok(n)
}

/// The number of captures in the store, for the progress bar's total and ETA: RocksDB's
/// estimate (free to ask, close enough for an ETA; the bar grows if it is short).
/// `None` (a spinner without ETA) on backends that cannot tell cheaply.
pub fn estimate_count(store: &Store) -> Option<u64> {
    let rocks = store.backend().as_rocks()?;
    rocks
        .db()
        .property_int_value_cf(rocks.space_cf(Space::Capture), "rocksdb.estimate-num-keys")
        .ok()
        .flatten()
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::CaptureKind;
    use crate::store::keys::{by_digest_key, capture_key};

    fn capture(ts: &str, offset: u64, passes: bool) -> Capture {
        Capture {
            surt: "org,example)/a.pdf".into(),
            ts: ts.into(),
            url: "http://example.org/a.pdf".into(),
            source: "x.cdx".into(),
            warc: Some("ITEM/x.warc.gz".into()),
            offset: Some(offset),
            c_size: Some(10),
            status: Some(200),
            mime: Some("application/pdf".into()),
            digest: Some(Sha1Key([1; 20])),
            passes,
            ..Default::default()
        }
    }

    #[test]
    fn derived_row_uses_the_first_passing_capture_and_counts_revisits() {
        let mut revisit = capture("20200101000000", 5, false);
        revisit.kind = CaptureKind::Revisit;
        let filtered_out = capture("20190101000000", 1, false);
        let first = capture("20200101000000", 3, true);
        let later = capture("20210101000000", 2, true);
        // first-capture order: the caller passes captures sorted by key
        let row = derive_row(&[filtered_out, first, revisit, later]).unwrap();
        assert_eq!(
            String::from_utf8(row.dedupe).unwrap(),
            r#"{"c":3,"d":"2020-01-01T00:00:00Z","f":"x.warc.gz","o":3,"u":"http://example.org/a.pdf"}"#
        );
        assert_eq!(
            String::from_utf8(row.cdx).unwrap(),
            r#"{"c_size":10,"dt":"20200101000000","offset":3,"surt":"org,example)/a.pdf","url":"http://example.org/a.pdf","warc":"ITEM/x.warc.gz"}"#
        );
        assert_eq!(row.mime.as_deref(), Some("application/pdf"));
        assert_eq!(row.size, None);
    }

    /// The JSON the rows were written with through serde (fields in alphabetical order):
    /// the hand-written encoders must give the same bytes.
    #[derive(serde::Serialize)]
    struct DedupeRecord<'a> {
        c: u64,
        d: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        f: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        i: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        o: Option<u64>,
        u: &'a str,
    }

    #[derive(serde::Serialize)]
    struct CdxCell<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        c_size: Option<u64>,
        dt: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        surt: &'a str,
        url: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        warc: Option<&'a str>,
    }

    #[test]
    fn derived_json_is_byte_for_byte_what_serde_json_writes() {
        let odd: String = (0u8..0x80).map(char::from).collect::<String>() + "é€😀\u{7f}";
        let texts = [
            "http://example.org/a.pdf",
            "",
            "a\"b\\c",
            "tab\there\nnew\rret\x08\x0c\x00\x1f",
            odd.as_str(),
        ];
        let mut n = 0;
        for text in texts {
            for ts in [
                "20200101000000",
                "2020010100000",
                "2020-01-01",
                "2020010100000x",
                text,
            ] {
                for (warc, offset, c_size, record_id) in [
                    (None, None, None, None),
                    (
                        Some("/abs/dir/x.warc.gz"),
                        Some(0),
                        Some(u64::MAX),
                        Some(text),
                    ),
                    (Some(text), Some(12_345), Some(7), Some("<urn:uuid:1>")),
                ] {
                    let mut c = capture(ts, 0, true);
                    c.url = text.into();
                    c.surt = format!("{text})/s");
                    c.warc = warc.map(str::to_owned);
                    c.offset = offset;
                    c.c_size = c_size;
                    c.record_id = record_id.map(str::to_owned);
                    let view = c.view();
                    let row = derive_from(&view, n, None, None);
                    let dedupe = DedupeRecord {
                        c: n,
                        d: crate::capture::iso_date(&c.ts),
                        f: view.warc.map(file_name),
                        i: view.record_id,
                        o: view.offset,
                        u: view.url,
                    };
                    let cdx = CdxCell {
                        c_size: view.c_size,
                        dt: view.ts,
                        offset: view.offset,
                        surt: view.surt,
                        url: view.url,
                        warc: view
                            .warc
                            .map(|w| if w.starts_with('/') { file_name(w) } else { w }),
                    };
                    assert_eq!(row.dedupe, serde_json::to_vec(&dedupe).unwrap(), "{c:?}");
                    assert_eq!(row.cdx, serde_json::to_vec(&cdx).unwrap(), "{c:?}");
                    n = n.wrapping_mul(7).wrapping_add(1);
                }
            }
        }
    }

    #[test]
    fn json_strings_escape_every_byte_at_every_place_in_a_word() {
        // Each byte to escape (and neighbours that must not be) at every position of
        // strings that end inside, at and past a block of sixteen bytes and a word of eight.
        let specials = [
            b'"', b'\\', b'\n', 0, 0x1f, 0x20, 0x7f, b'/', 0x08, 0x0c, 0x21, 0x5b, 0x5d,
        ];
        // Among ASCII, and among two-byte characters (bytes of 0x80 and above, which are
        // not escaped).
        for len in 0..=41 {
            for pos in 0..len {
                for (special, filler) in specials.iter().flat_map(|&b| [(b, 'a'), (b, 'é')]) {
                    let text: String = (0..len)
                        .map(|i| {
                            if i == pos {
                                char::from(special)
                            } else {
                                filler
                            }
                        })
                        .collect();
                    let mut out = Vec::new();
                    json_str(&mut out, &text);
                    assert_eq!(out, serde_json::to_vec(&text).unwrap(), "{text:?}");
                }
            }
        }
        let mut out = Vec::new();
        let text = "é€😀 \"x\"\u{1}ÿ";
        json_str(&mut out, text);
        assert_eq!(out, serde_json::to_vec(text).unwrap());
    }

    #[test]
    fn no_row_without_a_locating_capture() {
        let mut revisit = capture("20200101000000", 5, true);
        revisit.kind = CaptureKind::Revisit;
        assert_eq!(
            derive_row(&[revisit, capture("20200101000000", 1, false)]),
            None
        );
    }

    #[test]
    fn keys_order_captures_by_time_file_offset() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let d = Sha1Key([1; 20]);
        by_digest_key(&d, &capture("20200101000000", 900, true).view(), &mut a);
        by_digest_key(&d, &capture("20200101000001", 1, true).view(), &mut b);
        assert!(a < b);
        capture_key(&capture("20200101000000", 2, true).view(), &mut a);
        capture_key(&capture("20200101000000", 10, true).view(), &mut b);
        assert!(a < b, "offsets compare numerically");
        assert!(a.starts_with(b"org,example)/a.pdf\x0020200101000000\x00x.warc.gz\x00"));
    }
}
