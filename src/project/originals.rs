//! The originals of revisits: a revisit carries no size (and, from CDX, no type) of its
//! own, so the projections take them from the file row of the payload it points at, or,
//! where the payload has no file row, from the payload's other captures.
//!
//! Looked up one digest at a time, that is a random read into the store per revisit,
//! and at archive scale those reads miss every cache: the time per capture grows with the
//! archive. So before a projection walks the captures, [`Originals::join`] reads the
//! by-digest index once in key order, with the file rows of the digests that have
//! revisits alongside (also in key order), and sorts what each revisit needs by capture
//! key with the external sort. The walk, which goes in capture-key order too, then takes
//! the originals of each batch's revisits from the front of that sorted stream. A revisit
//! the stream does not hold is looked up as before, so the stream only saves reads.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::capture::{Capture, CaptureKind};
use crate::extsort::{Sorted, Sorter};
use crate::key::Sha1Key;
use crate::store::Space;
use crate::store::Store;
use crate::store::captures::read_capture;
use crate::store::cells::Projection;
use crate::store::keys::{IndexEntry, capture_key};

/// What the store knows of a payload that a revisit points at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Original {
    pub size: Option<u64>,
    pub mime: Option<String>,
}

/// The originals of the revisits a projection meets, kept in a bounded map by digest.
pub struct Originals {
    rows: HashMap<Sha1Key, Original>,
    /// Payloads remembered at most (the map starts over past it).
    limit: usize,
    /// The originals of every revisit of the store in capture-key order, when joined.
    joined: Option<Joined>,
    /// Digests whose originals were read one by one (not in the joined stream).
    pub looked_up: u64,
    key: Vec<u8>,
}

impl Default for Originals {
    fn default() -> Self {
        Originals::with_limit(super::budget::MemoryBudget::default().digest_entries())
    }
}

impl Originals {
    /// Originals looked up a batch at a time (random reads; for small stores and tests).
    pub fn with_limit(limit: usize) -> Originals {
        Originals {
            rows: HashMap::new(),
            limit: limit.max(1),
            joined: None,
            looked_up: 0,
            key: Vec::new(),
        }
    }

    /// Originals joined with the revisits in one ordered pass over the store (see the
    /// module documentation); the sort spills runs of `run_bytes` under `spill_dir`.
    pub fn join(
        store: &Store,
        limit: usize,
        spill_dir: &Path,
        run_bytes: usize,
    ) -> Result<Originals> {
        let mut originals = Originals::with_limit(limit);
        originals.joined = Some(Joined::build(store, spill_dir, run_bytes)?);
        Ok(originals)
    }

    /// Revisits whose originals the joined stream held (0 when not joined).
    #[cfg(test)]
    pub fn joined_revisits(&self) -> u64 {
        self.joined.as_ref().map_or(0, |j| j.revisits)
    }

    pub fn get(&self, digest: &Sha1Key) -> Option<&Original> {
        self.rows.get(digest)
    }

    /// The normalized MIME type of a capture: its own, or for a revisit that names none,
    /// its original's (call [`Originals::prefetch`] for its batch first).
    pub fn mime_of(&self, capture: &Capture) -> Option<String> {
        capture
            .mime
            .clone()
            .or_else(|| match (capture.kind, &capture.digest) {
                (CaptureKind::Revisit, Some(d)) => self.rows.get(d).and_then(|o| o.mime.clone()),
                _ => None,
            })
    }

    /// Makes the originals of the revisits among `captures` known: from the joined
    /// stream, else by reading their file rows (one pass over the digests in key order).
    pub fn prefetch<'c>(
        &mut self,
        store: &Store,
        captures: impl IntoIterator<Item = &'c Capture>,
    ) -> Result<()> {
        let mut wanted: Vec<&Capture> = captures
            .into_iter()
            .filter(|c| c.kind == CaptureKind::Revisit)
            .filter(|c| c.digest.is_some_and(|d| !self.rows.contains_key(&d)))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        if self.rows.len() + wanted.len() > self.limit {
            self.rows.clear();
        }
        let mut digests = Vec::new();
        if let Some(joined) = &mut self.joined {
            let mut keyed: Vec<(Vec<u8>, Sha1Key)> = wanted
                .drain(..)
                .filter_map(|c| {
                    capture_key(&c.view(), &mut self.key);
                    c.digest.map(|d| (self.key.clone(), d))
                })
                .collect();
            keyed.sort_unstable();
            for (key, digest) in keyed {
                match joined.seek(&key)? {
                    Some(original) => {
                        self.rows.insert(digest, original);
                    }
                    None => digests.push(digest),
                }
            }
        } else {
            digests.extend(wanted.iter().filter_map(|c| c.digest));
        }
        digests.sort_unstable();
        digests.dedup();
        digests.retain(|d| !self.rows.contains_key(d));
        self.looked_up += digests.len() as u64;
        for (digest, original) in look_up(store, &digests)? {
            self.rows.insert(digest, original);
        }
        Ok(())
    }
}

/// The originals of `digests` (sorted), read from their file rows in one ordered pass and,
/// where a digest has no file row, from its captures.
fn look_up(store: &Store, digests: &[Sha1Key]) -> Result<Vec<(Sha1Key, Original)>> {
    if digests.is_empty() {
        return Ok(Vec::new());
    }
    let rows = FileRows::resolve(store)?;
    let mut found = rows.read(store, digests)?;
    for (digest, (original, derived)) in digests.iter().zip(found.iter_mut()) {
        if !*derived {
            fill_from_captures(store, digest, original)?;
        }
    }
    Ok(digests
        .iter()
        .copied()
        .zip(found.into_iter().map(|(o, _)| o))
        .collect())
}

/// The file-row columns an original is read from.
struct FileRows {
    projection: Projection,
    size: crate::schema::ColumnId,
    mime: crate::schema::ColumnId,
    cdx: crate::schema::ColumnId,
}

impl FileRows {
    fn resolve(store: &Store) -> Result<FileRows> {
        let schema = store.schema();
        let column = |name: &str| {
            schema
                .column_id(name)
                .with_context(|| format!("the schema lacks {name}"))
        };
        let (size, mime) = (column("file:size")?, column("file:mime")?);
        // Written with every derived file row: its presence says the row holds what the
        // payload's captures know.
        let cdx = column("file:cdx")?;
        let mut families = vec![size.family, mime.family, cdx.family];
        families.dedup();
        Ok(FileRows {
            projection: Projection {
                families,
                columns: Some(vec![size, mime, cdx]),
                versions: 1,
            },
            size,
            mime,
            cdx,
        })
    }

    /// The original of each of `digests` (sorted) as its file row has it, and whether the
    /// row was derived from the captures (then the captures can tell nothing more: the
    /// derivation took the size and type from any capture that had one).
    fn read(&self, store: &Store, digests: &[Sha1Key]) -> Result<Vec<(Original, bool)>> {
        let mut found: HashMap<Sha1Key, (Original, bool)> = HashMap::new();
        store.read_rows(digests, &self.projection, |row| {
            let original = Original {
                size: row
                    .latest(self.size)
                    .and_then(|v| <[u8; 8]>::try_from(v).ok())
                    .map(u64::from_be_bytes),
                mime: row
                    .latest(self.mime)
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .map(str::to_string),
            };
            found.insert(row.key, (original, row.latest(self.cdx).is_some()));
            Ok(true)
        })?;
        Ok(digests
            .iter()
            .map(|d| found.remove(d).unwrap_or_default())
            .collect())
    }
}

/// The size and type of a payload without a derived file row: those of the first of its
/// captures (revisits aside) that have one. The index entries say which captures have a
/// size or a type, so at most one capture is read for each.
fn fill_from_captures(store: &Store, digest: &Sha1Key, original: &mut Original) -> Result<()> {
    let (mut size_seen, mut mime_seen) = (original.size.is_some(), original.mime.is_some());
    if size_seen && mime_seen {
        return Ok(());
    }
    let mut candidates: Vec<Vec<u8>> = Vec::new();
    store.scan_prefix(
        Space::ByDigest,
        digest.as_bytes(),
        &mut |entry_key, value| {
            if let Some((flags, key)) = IndexEntry::decode(entry_key, value)
                && !is_revisit(flags)
            {
                let gives_size = !size_seen && flags & IndexEntry::HAS_SIZE != 0;
                let gives_mime = !mime_seen && flags & IndexEntry::HAS_MIME != 0;
                if gives_size || gives_mime {
                    candidates.push(key.to_vec());
                }
                size_seen |= gives_size;
                mime_seen |= gives_mime;
            }
            Ok(!(size_seen && mime_seen))
        },
    )?;
    for key in candidates {
        if let Some(capture) = read_capture(store, &key)?
            && capture.kind != CaptureKind::Revisit
        {
            original.size = original.size.or(capture.size);
            if original.mime.is_none() {
                original.mime = capture.mime;
            }
        }
    }
    Ok(())
}

/// A revisit's entry in the by-digest index: it counts towards the payload's captures but
/// cannot locate the file (see [`IndexEntry::flags_of`]).
fn is_revisit(flags: u8) -> bool {
    flags & IndexEntry::COUNTS != 0 && flags & IndexEntry::LOCATES == 0
}

/// Digests resolved together: one ordered read of their file rows.
const RESOLVE_DIGESTS: usize = 4096;

/// The originals of every revisit, sorted by capture key, and the read position in them.
struct Joined {
    sorted: Sorted,
    /// The record at the read position: escaped capture key, then the original.
    current: Option<Vec<u8>>,
    /// How many revisits the pass sorted (the tests check the join saw them all).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    revisits: u64,
    _scratch: tempfile::TempDir,
}

/// The revisits of one digest met so far in the index.
#[derive(Default)]
struct Group {
    digest: Option<Sha1Key>,
    /// Escaped capture keys of the revisits, each after its length (u32).
    revisits: Vec<u8>,
    /// Some capture that is not a revisit has a size or a type.
    candidates: bool,
    /// The encoded original, once read: a payload with more revisits than are held for
    /// the rows read in one pass has its original read alone, and its further revisits
    /// go straight to the sort.
    resolved: Option<Vec<u8>>,
}

impl Joined {
    fn build(store: &Store, spill_dir: &Path, run_bytes: usize) -> Result<Joined> {
        let scratch = tempfile::Builder::new()
            .prefix(".sediment-originals-")
            .tempdir_in(spill_dir)
            .with_context(|| {
                format!(
                    "cannot make a scratch directory in {} for the originals of revisits",
                    spill_dir.display()
                )
            })?;
        let mut builder = Builder {
            rows: FileRows::resolve(store)?,
            sorter: Sorter::new(scratch.path(), run_bytes),
            pending: Vec::new(),
            pending_bytes: 0,
            flush_bytes: (run_bytes / 4).max(64 << 10),
            record: Vec::new(),
        };
        let mut group = Group::default();
        let mut failure = None;
        store
            .backend()
            .scan_once(Space::ByDigest, &[], None, &mut |key, value| {
                let (Some(digest), Some(flags)) = (
                    key.get(..20).and_then(Sha1Key::from_slice),
                    IndexEntry::decode_flags(value),
                ) else {
                    return Ok(true);
                };
                let mut step = || -> Result<()> {
                    if group.digest != Some(digest) {
                        let next = Group {
                            digest: Some(digest),
                            ..Group::default()
                        };
                        builder.add(store, std::mem::replace(&mut group, next))?;
                    }
                    if is_revisit(flags) {
                        if let Some((_, capture)) = IndexEntry::decode(key, value) {
                            builder.add_revisit(store, &mut group, &capture)?;
                        }
                    } else if flags & (IndexEntry::HAS_SIZE | IndexEntry::HAS_MIME) != 0 {
                        group.candidates = true;
                    }
                    Ok(())
                };
                match step() {
                    Ok(()) => Ok(true),
                    Err(e) => {
                        failure = Some(e);
                        Ok(false)
                    }
                }
            })?;
        if let Some(e) = failure {
            return Err(e);
        }
        builder.add(store, group)?;
        builder.resolve(store)?;
        let revisits = builder.sorter.len;
        let mut joined = Joined {
            sorted: builder.sorter.finish()?,
            current: None,
            revisits,
            _scratch: scratch,
        };
        joined.advance()?;
        Ok(joined)
    }

    fn advance(&mut self) -> Result<()> {
        self.current = self.sorted.next()?.map(<[u8]>::to_vec);
        Ok(())
    }

    /// The original of the revisit with capture key `key`, if the stream holds it. Keys
    /// must be asked in ascending order: records before `key` are passed over for good.
    fn seek(&mut self, key: &[u8]) -> Result<Option<Original>> {
        let mut wanted = Vec::with_capacity(key.len() + 2);
        escape_key(key, &mut wanted);
        while let Some(record) = &self.current {
            // Escaped keys are prefix-free, so comparing the record's first bytes compares
            // its key.
            let stored = &record[..wanted.len().min(record.len())];
            match stored.cmp(&wanted[..]) {
                std::cmp::Ordering::Less => self.advance()?,
                std::cmp::Ordering::Equal => return Ok(decode_original(&record[wanted.len()..])),
                std::cmp::Ordering::Greater => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// Reads the originals of the digests with revisits as the index scan meets them, and
/// sorts the revisits with them.
struct Builder {
    rows: FileRows,
    sorter: Sorter,
    pending: Vec<Group>,
    pending_bytes: usize,
    /// Revisit keys held at most while their digests wait for their rows.
    flush_bytes: usize,
    record: Vec<u8>,
}

impl Builder {
    fn add_revisit(&mut self, store: &Store, group: &mut Group, key: &[u8]) -> Result<()> {
        if let Some(value) = &group.resolved {
            self.record.clear();
            escape_key(key, &mut self.record);
            self.record.extend_from_slice(value);
            return self.sorter.push(&self.record);
        }
        self.pending_bytes += key.len() + 6;
        escape(key, &mut group.revisits);
        if group.revisits.len() >= self.flush_bytes {
            // Conservatively: the captures not met yet may have a size or a type.
            group.candidates = true;
            let value = self.original_of(store, group)?;
            self.pending_bytes -= group.revisits.len();
            self.sort_revisits(&group.revisits, &value)?;
            group.revisits = Vec::new();
            group.resolved = Some(value);
        }
        Ok(())
    }

    /// A digest's index entries are all met: its revisits wait for a pass over file rows.
    fn add(&mut self, store: &Store, group: Group) -> Result<()> {
        if group.revisits.is_empty() {
            return Ok(());
        }
        self.pending.push(group);
        if self.pending.len() >= RESOLVE_DIGESTS || self.pending_bytes >= self.flush_bytes {
            self.resolve(store)?;
        }
        Ok(())
    }

    fn original_of(&self, store: &Store, group: &Group) -> Result<Vec<u8>> {
        let digest = group.digest.unwrap_or_default();
        let row = self.rows.read(store, &[digest])?.remove(0);
        encoded_original(store, group, row)
    }

    /// Reads the originals of the pending digests (in key order) and sorts their revisits.
    fn resolve(&mut self, store: &Store) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        let digests: Vec<Sha1Key> = pending.iter().filter_map(|g| g.digest).collect();
        let found = self.rows.read(store, &digests)?;
        for (group, row) in pending.iter().zip(found) {
            let value = encoded_original(store, group, row)?;
            self.sort_revisits(&group.revisits, &value)?;
        }
        Ok(())
    }

    fn sort_revisits(&mut self, revisits: &[u8], value: &[u8]) -> Result<()> {
        let mut rest = revisits;
        while let Some((len, tail)) = rest.split_first_chunk::<4>() {
            let len = u32::from_le_bytes(*len) as usize;
            let (key, tail) = tail.split_at(len.min(tail.len()));
            self.record.clear();
            self.record.extend_from_slice(key);
            self.record.extend_from_slice(value);
            self.sorter.push(&self.record)?;
            rest = tail;
        }
        Ok(())
    }
}

/// A group's original, completed from its captures where its file row (`row`: the
/// original, and whether the row was derived) cannot be, encoded for the sort.
fn encoded_original(store: &Store, group: &Group, row: (Original, bool)) -> Result<Vec<u8>> {
    let (mut original, derived) = row;
    if !derived
        && group.candidates
        && let Some(digest) = &group.digest
    {
        fill_from_captures(store, digest, &mut original)?;
    }
    let mut value = Vec::new();
    encode_original(&original, &mut value);
    Ok(value)
}

/// Appends `key` escaped so that escaped keys sort as the keys do and none is a prefix of
/// another: 0x00 becomes 0x00 0xFF, and 0x00 0x00 ends the key. Capture keys hold 0x00
/// (it separates the URL from the time), so a record could not be split otherwise.
fn escape_key(key: &[u8], out: &mut Vec<u8>) {
    for &b in key {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// [`escape_key`] into a group's list, after its length.
fn escape(key: &[u8], out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    escape_key(key, out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

fn encode_original(original: &Original, out: &mut Vec<u8>) {
    let flags = u8::from(original.size.is_some()) | (u8::from(original.mime.is_some()) << 1);
    out.push(flags);
    out.extend_from_slice(&original.size.unwrap_or(0).to_be_bytes());
    if let Some(mime) = &original.mime {
        out.extend_from_slice(mime.as_bytes());
    }
}

fn decode_original(bytes: &[u8]) -> Option<Original> {
    let (&flags, rest) = bytes.split_first()?;
    let size = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
    let mime = std::str::from_utf8(rest.get(8..)?).ok()?;
    Some(Original {
        size: (flags & 1 != 0).then_some(size),
        mime: (flags & 2 != 0).then(|| mime.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::CaptureKind::{Response, Revisit};
    use crate::store::writer::Writer;
    use std::collections::HashSet;

    /// Digests of the originals met.
    fn known(originals: &Originals) -> HashSet<Sha1Key> {
        originals.rows.keys().copied().collect()
    }

    fn capture(
        ts: &str,
        mime: Option<&str>,
        size: Option<u64>,
        kind: CaptureKind,
        digest: u8,
    ) -> Capture {
        Capture {
            surt: format!("org,example)/{ts}"),
            ts: ts.into(),
            url: format!("http://example.org/{ts}"),
            source: "x.cdx".into(),
            mime: mime.map(str::to_string),
            size,
            kind,
            digest: Some(Sha1Key([digest; 20])),
            status: Some(200),
            ..Default::default()
        }
    }

    /// What reading every capture of the payload gives (the rule the flags let us cut
    /// short): the first size and the first type among its captures that are not revisits.
    fn from_every_capture(store: &Store, digest: &Sha1Key) -> Original {
        let mut original = Original::default();
        for c in crate::store::captures::captures_of_digest(store, digest).unwrap() {
            if c.kind != Revisit {
                original.size = original.size.or(c.size);
                if original.mime.is_none() {
                    original.mime = c.mime;
                }
            }
        }
        original
    }

    fn store_of(captures: &[Capture]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s")).unwrap();
        let mut writer = Writer::new(&store, 1);
        for c in captures {
            writer.add_capture(&c.view());
        }
        writer.finish().unwrap();
        (dir, store)
    }

    #[test]
    fn originals_without_a_file_row_read_only_the_captures_they_need() {
        let cases: Vec<Vec<Capture>> = vec![
            // A revisit with a type first, a response without one, then one with both.
            vec![
                capture("20200101000000", Some("text/plain"), Some(5), Revisit, 7),
                capture("20200102000000", None, None, Response, 7),
                capture("20200103000000", Some("text/html"), Some(100), Response, 7),
                capture("20200104000000", Some("image/png"), Some(7), Response, 7),
            ],
            // Types but no size anywhere (a store built from CDX).
            vec![
                capture("20200101000000", Some("text/html"), None, Response, 7),
                capture("20200102000000", Some("text/css"), None, Response, 7),
            ],
            // The size comes later than the type.
            vec![
                capture("20200101000000", Some("text/html"), None, Response, 7),
                capture("20200102000000", None, Some(42), Response, 7),
            ],
            // Only revisits.
            vec![capture(
                "20200101000000",
                Some("text/html"),
                Some(1),
                Revisit,
                7,
            )],
        ];
        for captures in cases {
            let (_dir, store) = store_of(&captures);
            let digest = Sha1Key([7; 20]);
            let mut found = Original::default();
            fill_from_captures(&store, &digest, &mut found).unwrap();
            assert_eq!(found, from_every_capture(&store, &digest), "{captures:?}");
        }
    }

    #[test]
    fn the_joined_stream_gives_what_lookups_give() {
        // Payloads with and without file rows, revisits before and after their originals,
        // a revisit whose payload nobody else has, keys holding the bytes the escape uses.
        let mut captures = vec![
            capture("20200101000000", Some("text/html"), Some(10), Response, 1),
            capture("20200102000000", None, None, Revisit, 1),
            capture("20200103000000", None, None, Revisit, 2),
            capture("20200104000000", Some("image/png"), None, Response, 2),
            capture("20200105000000", None, None, Revisit, 3),
            capture("20200106000000", None, Some(5), Response, 4),
            capture("20200107000000", None, None, Revisit, 4),
        ];
        let mut odd = capture("20200108000000", None, None, Revisit, 1);
        odd.surt = "org,example)/a\u{ff}b".into();
        captures.push(odd);
        for i in 0..40u8 {
            captures.push(capture(
                &format!("2021010100{i:04}"),
                None,
                None,
                Revisit,
                10 + i % 3,
            ));
            if i % 5 == 0 {
                captures.push(capture(
                    &format!("2021010200{i:04}"),
                    Some("text/plain"),
                    Some(u64::from(i)),
                    Response,
                    10 + i % 3,
                ));
            }
        }
        let (dir, store) = store_of(&captures);
        let mut walked = Vec::new();
        store
            .for_each_capture(|c| {
                walked.push(c);
                Ok(true)
            })
            .unwrap();
        // Small runs: the sort spills and merges.
        let mut joined = Originals::join(&store, 1 << 20, dir.path(), 64).unwrap();
        assert_eq!(
            joined.joined_revisits() as usize,
            walked.iter().filter(|c| c.kind == Revisit).count()
        );
        let mut looked_up = Originals::with_limit(1 << 20);
        for batch in walked.chunks(3) {
            joined.prefetch(&store, batch).unwrap();
            looked_up.prefetch(&store, batch).unwrap();
        }
        assert_eq!(known(&joined), known(&looked_up));
        for digest in known(&looked_up) {
            assert_eq!(joined.get(&digest), looked_up.get(&digest), "{digest:?}");
        }
        // The stream served every revisit: none was looked up.
        assert_eq!(joined.looked_up, 0);
        assert!(looked_up.looked_up > 0);
    }

    #[test]
    fn escaped_keys_sort_as_the_keys() {
        let keys: Vec<&[u8]> = vec![b"a", b"a\0", b"a\0\0", b"a\x01", b"ab", b"\0", b""];
        let mut sorted = keys.clone();
        sorted.sort();
        let mut escaped: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| {
                let mut out = Vec::new();
                escape_key(k, &mut out);
                out
            })
            .collect();
        escaped.sort();
        let mut expected: Vec<Vec<u8>> = Vec::new();
        for k in &sorted {
            let mut out = Vec::new();
            escape_key(k, &mut out);
            expected.push(out);
        }
        assert_eq!(escaped, expected);
    }
}
