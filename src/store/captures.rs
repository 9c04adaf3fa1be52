//! The capture key spaces and the derivation of file rows from captures.
//!
//! `capture` keys: `SURT ‖ 0x00 ‖ timestamp(14) ‖ 0x00 ‖ file ‖ 0x00 ‖ position(8)`,
//! the wayback/CDX order. `capture_by_digest` keys: `digest(20) ‖ timestamp(14) ‖ file ‖
//! 0x00 ‖ position(8)`, so the captures of one payload are listed in the order that
//! defines "the first capture": (capture time, WARC or CDX file name, offset).
//!
//! A `capture_by_digest` entry is an index entry ([`IndexEntry`]): a few flags and the
//! key of the capture in URL order, where the capture itself is stored once.
//!
//! File rows are a pure function of the set of captures of a digest, recomputed for
//! the digests a run touched (the `dirty` family). That is what makes ingestion
//! independent of thread count, input order, and interruptions.

use anyhow::Result;
use rocksdb::{ReadOptions, WriteBatch};
use serde::Serialize;

use crate::capture::{Capture, iso_date};
use crate::key::Sha1Key;
use crate::schema::ColumnId;
use crate::store::cells::{ROW_LEN, cell_key, row_upper_bound};
use crate::store::{CF_BY_DIGEST, CF_CAPTURE, CF_DIRTY, Store};

pub fn capture_key(capture: &Capture, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(capture.surt.as_bytes());
    out.push(0);
    out.extend_from_slice(capture.ts.as_bytes());
    out.push(0);
    push_tie_breaker(capture, out);
}

pub fn by_digest_key(digest: &Sha1Key, capture: &Capture, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(digest.as_bytes());
    out.extend_from_slice(capture.ts.as_bytes());
    push_tie_breaker(capture, out);
}

/// The value of a `capture_by_digest` entry: what deriving a file row needs to know
/// without reading the capture, and where the capture is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub flags: u8,
    pub capture_key: Vec<u8>,
}

impl IndexEntry {
    /// The capture counts towards `f:c.c`.
    pub const COUNTS: u8 = 1;
    /// The capture may locate the file (passes the filter, not a revisit).
    pub const LOCATES: u8 = 2;
    pub const HAS_SIZE: u8 = 4;
    pub const HAS_MIME: u8 = 8;
    const MAGIC: u8 = 0xD1;

    pub fn flags_of(capture: &Capture) -> u8 {
        let mut flags = 0;
        if capture.counts() {
            flags |= Self::COUNTS;
        }
        if capture.locates_file() {
            flags |= Self::LOCATES;
        }
        if capture.size.is_some() {
            flags |= Self::HAS_SIZE;
        }
        if capture.mime.is_some() {
            flags |= Self::HAS_MIME;
        }
        flags
    }

    /// Appends the stored form: magic, flags, capture key.
    pub fn encode(flags: u8, capture_key: &[u8], out: &mut Vec<u8>) {
        out.push(Self::MAGIC);
        out.push(flags);
        out.extend_from_slice(capture_key);
    }

    pub fn decode(bytes: &[u8]) -> Option<(u8, &[u8])> {
        match bytes {
            [Self::MAGIC, flags, key @ ..] => Some((*flags, key)),
            _ => None,
        }
    }
}

/// Merge operator of `capture_by_digest`: entries of one capture from several inputs
/// (a CDX line and the WARC record it indexes) combine their flags; the capture key is
/// the same, or the greatest one when SURTs were spelled differently.
pub fn merge_index_entries<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut flags = 0u8;
    let mut key: Option<&[u8]> = None;
    for value in values {
        if let Some((f, k)) = IndexEntry::decode(value) {
            flags |= f;
            if key.is_none_or(|best| k > best) {
                key = Some(k);
            }
        }
    }
    let mut out = Vec::new();
    IndexEntry::encode(flags, key?, &mut out);
    Some(out)
}

fn push_tie_breaker(capture: &Capture, out: &mut Vec<u8>) {
    let (file, position) = capture.tie_breaker();
    out.extend_from_slice(file.as_bytes());
    out.push(0);
    out.extend_from_slice(&position.to_be_bytes());
}

/// `f:c`, fields in alphabetical order so the serialized JSON is canonical.
#[derive(Serialize)]
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

/// `file:cdx`, fields in alphabetical order.
#[derive(Serialize)]
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
pub fn derive_row(captures: &[Capture]) -> Option<DerivedRow> {
    let first = captures.iter().find(|c| c.locates_file())?;
    let count = captures.iter().filter(|c| c.counts()).count() as u64;
    let mime = first
        .mime
        .clone()
        .or_else(|| captures.iter().find_map(|c| c.mime.clone()));
    let size = first.size.or_else(|| captures.iter().find_map(|c| c.size));
    Some(derive_from(first, count, mime, size))
}

/// The file row for a digest whose first capture is `first`, seen `count` times; `mime`
/// and `size` may come from another capture when the first one lacks them.
pub fn derive_from(
    first: &Capture,
    count: u64,
    mime: Option<String>,
    size: Option<u64>,
) -> DerivedRow {
    let dedupe = DedupeRecord {
        c: count,
        d: iso_date(&first.ts),
        f: first.warc_name(),
        i: first.record_id.as_deref(),
        o: first.offset,
        u: &first.url,
    };
    let cdx = CdxCell {
        c_size: first.c_size,
        dt: &first.ts,
        offset: first.offset,
        surt: &first.surt,
        url: &first.url,
        warc: first.warc.as_deref(),
    };
    DerivedRow {
        captures: count,
        dedupe: serde_json::to_vec(&dedupe).unwrap_or_default(),
        cdx: serde_json::to_vec(&cdx).unwrap_or_default(),
        mime,
        size,
    }
}

/// Derives a file row from the index entries of one digest (in first-capture order),
/// reading only the captures it needs through `read`.
pub fn derive_from_index(
    entries: &[(u8, &[u8])],
    mut read: impl FnMut(&[u8]) -> Option<Capture>,
) -> Option<DerivedRow> {
    let count = entries
        .iter()
        .filter(|(f, _)| f & IndexEntry::COUNTS != 0)
        .count() as u64;
    let (_, first_key) = entries.iter().find(|(f, _)| f & IndexEntry::LOCATES != 0)?;
    let first = read(first_key)?;
    let mut other = |flag: u8| {
        entries
            .iter()
            .filter(|(f, k)| f & flag != 0 && k != first_key)
            .find_map(|(_, k)| read(k))
    };
    let mime = match &first.mime {
        Some(m) => Some(m.clone()),
        None => other(IndexEntry::HAS_MIME).and_then(|c| c.mime),
    };
    let size = match first.size {
        Some(s) => Some(s),
        None => other(IndexEntry::HAS_SIZE).and_then(|c| c.size),
    };
    Some(derive_from(&first, count, mime, size))
}

/// Reads one capture by its key in URL order.
pub fn read_capture(store: &Store, capture_key: &[u8]) -> Result<Option<Capture>> {
    Ok(store
        .db()
        .get_pinned_cf(store.cf(CF_CAPTURE), capture_key)?
        .and_then(|v| Capture::decode(&v).ok()))
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
        let schema = store.schema();
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

/// Appends the puts for a derived row to a batch.
pub fn put_derived_row(
    store: &Store,
    columns: &DerivedColumns,
    batch: &mut WriteBatch,
    row: &Sha1Key,
    derived: &DerivedRow,
    ts: u64,
) {
    let mut put = |column: ColumnId, value: &[u8]| {
        let qualifier = &store.schema().column(column).qualifier;
        batch.put_cf(
            store.family_cf(column.family),
            cell_key(row, qualifier, ts),
            value,
        );
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
    let mut opts = ReadOptions::default();
    opts.set_iterate_upper_bound(row_upper_bound(digest.as_bytes()));
    let mut iter = store.db().raw_iterator_cf_opt(store.cf(CF_BY_DIGEST), opts);
    iter.seek(digest.as_bytes());
    let mut out = Vec::new();
    while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
        if !key.starts_with(digest.as_bytes()) {
            break;
        }
        if let Some((flags, capture_key)) = IndexEntry::decode(value) {
            out.push((flags, capture_key.to_vec()));
        }
        iter.next();
    }
    iter.status()?;
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

/// Recomputes the file rows of every dirty digest and clears the marks, in batches.
/// Safe to interrupt: a mark is removed in the same batch that writes its row.
pub fn materialize_dirty(store: &Store, ts: u64) -> Result<MaterializeStats> {
    let columns = DerivedColumns::resolve(store)?;
    let mut stats = MaterializeStats::default();
    let mut dirty = store.db().raw_iterator_cf(store.cf(CF_DIRTY));
    dirty.seek_to_first();
    let mut by_digest = store.db().raw_iterator_cf(store.cf(CF_BY_DIGEST));
    let mut batch = WriteBatch::default();
    let mut entries: Vec<(u8, Vec<u8>)> = Vec::new();
    while let Some(key) = dirty.key() {
        let Some(digest) = Sha1Key::from_slice(key) else {
            batch.delete_cf(store.cf(CF_DIRTY), key);
            dirty.next();
            continue;
        };
        stats.digests += 1;
        entries.clear();
        by_digest.seek(digest.as_bytes());
        while let (Some(k), Some(v)) = (by_digest.key(), by_digest.value()) {
            if k.get(..ROW_LEN) != Some(digest.as_bytes().as_slice()) {
                break;
            }
            if let Some((flags, capture_key)) = IndexEntry::decode(v) {
                entries.push((flags, capture_key.to_vec()));
            }
            by_digest.next();
        }
        by_digest.status()?;
        let refs: Vec<(u8, &[u8])> = entries.iter().map(|(f, k)| (*f, k.as_slice())).collect();
        let mut read_error = None;
        let derived = derive_from_index(&refs, |k| match read_capture(store, k) {
            Ok(c) => c,
            Err(e) => {
                read_error = Some(e);
                None
            }
        });
        if let Some(e) = read_error {
            return Err(e);
        }
        match derived {
            Some(row) => {
                put_derived_row(store, &columns, &mut batch, &digest, &row, ts);
                stats.rows += 1;
                stats.duplicates += row.captures.saturating_sub(1);
            }
            None => stats.without_file += 1,
        }
        batch.delete_cf(store.cf(CF_DIRTY), digest.as_bytes());
        if batch.size_in_bytes() >= 4 << 20 {
            store
                .db()
                .write_opt(std::mem::take(&mut batch), &Store::bulk_write_options())?;
        }
        dirty.next();
    }
    dirty.status()?;
    store.db().write_opt(batch, &Store::bulk_write_options())?;
    Ok(stats)
}

impl Store {
    /// Calls `visit` with every capture in URL-then-time order (the capture key order),
    /// one at a time; `visit` returns false to stop.
    pub fn for_each_capture(&self, mut visit: impl FnMut(Capture) -> Result<bool>) -> Result<()> {
        let mut iter = self.db().raw_iterator_cf(self.cf(CF_CAPTURE));
        iter.seek_to_first();
        while let Some(value) = iter.value() {
            if let Ok(capture) = Capture::decode(value)
                && !visit(capture)?
            {
                break;
            }
            iter.next();
        }
        iter.status()?;
        Ok(())
    }
}

/// Number of captures in URL order (every capture, whatever its status).
pub fn count_captures(store: &Store) -> Result<u64> {
    let mut iter = store.db().raw_iterator_cf(store.cf(CF_CAPTURE));
    iter.seek_to_first();
    let mut n = 0;
    while iter.valid() {
        n += 1;
        iter.next();
    }
    iter.status()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::CaptureKind;

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
        by_digest_key(&d, &capture("20200101000000", 900, true), &mut a);
        by_digest_key(&d, &capture("20200101000001", 1, true), &mut b);
        assert!(a < b);
        capture_key(&capture("20200101000000", 2, true), &mut a);
        capture_key(&capture("20200101000000", 10, true), &mut b);
        assert!(a < b, "offsets compare numerically");
        assert!(a.starts_with(b"org,example)/a.pdf\x0020200101000000\x00x.warc.gz\x00"));
    }
}
