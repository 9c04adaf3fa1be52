//! The stored form of a capture: a compact binary record.
//!
//! Every capture is written twice (URL order and digest order), so its encoding is on the
//! hot path of every ingest: this one is several times smaller and faster to write and read
//! than JSON. Layout (version 1):
//!
//! ```text
//! [0]     0xC1 (format and version)
//! [1]     flags: bits 0-1 kind (response, resource, revisit), bit 2 origin is WARC,
//!         bit 3 passes the file filter, bits 4-5 digest_ok (absent, true, false), bit 6
//!         fetch_ms present (added later: it comes last, after every other field), bit 7
//!         declared_dechunked (added later: values written before read it as false)
//! [2..4]  presence of the optional fields, u16 little-endian, bit i = field i below
//! then    source, surt, ts, url (always present), then the present optional fields in
//!         order: c_size, content_type, dechunked, digest, etag, last_modified, line, mime,
//!         offset, record_id, redirect, size, status, ua, warc, location (bit 15,
//!         added later: records without it read as before).
//! ```
//! Strings are a LEB128 length and UTF-8 bytes, integers LEB128, digests 20 raw bytes.
//! Decoding never panics: a damaged value is an error.
//!
//! A bulk load holds its batch in memory in a detached form, without the three leading
//! strings ([`CaptureRef::encode_detached`]); [`attach`] makes the stored form of it.

use super::{Capture, CaptureKind, CaptureRef, Origin};
use crate::key::Sha1Key;

const MAGIC: u8 = 0xC1;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored capture is damaged: {0}")]
pub struct DecodeError(&'static str);

fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(s: &str, out: &mut Vec<u8>) {
    put_varint(s.len() as u64, out);
    out.extend_from_slice(s.as_bytes());
}

/// The stored form of a capture whose detached form ([`CaptureRef::encode_detached`]) is
/// `detached`, appended to `out`. A detached form shorter than its head is copied as it
/// is: reading the result fails, as reading it detached does.
pub(crate) fn attach(
    detached: &[u8],
    (source, surt, ts): (&[u8], &[u8], &[u8]),
    out: &mut Vec<u8>,
) {
    let Some((head, tail)) = detached.split_at_checked(HEAD_LEN) else {
        out.extend_from_slice(detached);
        return;
    };
    out.extend_from_slice(head);
    for text in [source, surt, ts] {
        put_varint(text.len() as u64, out);
        out.extend_from_slice(text);
    }
    out.extend_from_slice(tail);
}

/// Format byte, flags and the two bytes of presence bits.
const HEAD_LEN: usize = 4;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The bytes are known to be this process's own encoding of a capture, whose texts
    /// were `&str`s: they are not checked again ([`CaptureRef::read_detached_unchecked`]).
    texts_are_utf8: bool,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.bytes.get(self.pos).ok_or(DecodeError("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError("integer too long"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(DecodeError("length overflow"))?;
        let slice = self
            .bytes
            .get(self.pos..end)
            .ok_or(DecodeError("truncated"))?;
        self.pos = end;
        Ok(slice)
    }

    fn string(&mut self) -> Result<&'a str, DecodeError> {
        let n = usize::try_from(self.varint()?).map_err(|_| DecodeError("length overflow"))?;
        let bytes = self.take(n)?;
        if self.texts_are_utf8 {
            // SAFETY: `texts_are_utf8` is only set by `read_detached_unchecked`, whose
            // caller guarantees that the bytes are what `encode_detached` wrote. That
            // writes each text as its length and the bytes of a `&str`, and this reader
            // takes the fields in the order and with the lengths written, so `bytes` is
            // one whole text.
            return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
        std::str::from_utf8(bytes).map_err(|_| DecodeError("text is not UTF-8"))
    }

    fn digest(&mut self) -> Result<Sha1Key, DecodeError> {
        Sha1Key::from_slice(self.take(20)?).ok_or(DecodeError("truncated digest"))
    }
}

impl Capture {
    /// Appends the stored form of the capture to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.view().encode(out);
    }

    /// The stored form as a new buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.view().to_bytes()
    }

    /// Reads a stored capture.
    pub fn decode(bytes: &[u8]) -> Result<Capture, DecodeError> {
        CaptureRef::read(bytes).map(|c| c.to_capture())
    }
}

impl<'a> CaptureRef<'a> {
    /// The stored form as a new buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.url.len() * 2 + self.source.len());
        self.encode(&mut out);
        out
    }

    /// Appends the stored form of the capture to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_head(out);
        put_str(self.source, out);
        put_str(self.surt, out);
        put_str(self.ts, out);
        self.encode_tail(out);
    }

    /// Appends the stored form without the three strings that lead it (source, SURT and
    /// timestamp): a bulk load holds every capture of a batch in memory, where the SURT
    /// and timestamp are already in the capture's key and the source is the input's, and
    /// puts them back when it writes the capture out ([`attach`]). A third of a batch's
    /// memory, whose every page the kernel must clear when it is first written (issue 39).
    pub(crate) fn encode_detached(&self, out: &mut Vec<u8>) {
        self.encode_head(out);
        self.encode_tail(out);
    }

    /// Format byte, flags and the presence bits.
    fn encode_head(&self, out: &mut Vec<u8>) {
        out.push(MAGIC);
        let kind = match self.kind {
            CaptureKind::Response => 0,
            CaptureKind::Resource => 1,
            CaptureKind::Revisit => 2,
        };
        let digest_ok = match self.digest_ok {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        };
        out.push(
            kind | (u8::from(self.origin == Origin::Warc) << 2)
                | (u8::from(self.passes) << 3)
                | (digest_ok << 4)
                | (u8::from(self.fetch_ms.is_some()) << 6)
                | (u8::from(self.declared_dechunked) << 7),
        );
        let present = [
            self.c_size.is_some(),
            self.content_type.is_some(),
            self.dechunked.is_some(),
            self.digest.is_some(),
            self.etag.is_some(),
            self.last_modified.is_some(),
            self.line.is_some(),
            self.mime.is_some(),
            self.offset.is_some(),
            self.record_id.is_some(),
            self.redirect.is_some(),
            self.size.is_some(),
            self.status.is_some(),
            self.ua.is_some(),
            self.warc.is_some(),
            self.location.is_some(),
        ];
        let bits = present
            .iter()
            .enumerate()
            .fold(0u16, |acc, (i, &p)| acc | (u16::from(p) << i));
        out.extend_from_slice(&bits.to_le_bytes());
    }

    /// The URL and the optional fields.
    fn encode_tail(&self, out: &mut Vec<u8>) {
        put_str(self.url, out);
        if let Some(v) = self.c_size {
            put_varint(v, out);
        }
        if let Some(v) = self.content_type {
            put_str(v, out);
        }
        if let Some(d) = &self.dechunked {
            out.extend_from_slice(d.as_bytes());
        }
        if let Some(d) = &self.digest {
            out.extend_from_slice(d.as_bytes());
        }
        for v in [self.etag, self.last_modified].into_iter().flatten() {
            put_str(v, out);
        }
        if let Some(v) = self.line {
            put_varint(v, out);
        }
        if let Some(v) = self.mime {
            put_str(v, out);
        }
        if let Some(v) = self.offset {
            put_varint(v, out);
        }
        for v in [self.record_id, self.redirect].into_iter().flatten() {
            put_str(v, out);
        }
        if let Some(v) = self.size {
            put_varint(v, out);
        }
        if let Some(v) = self.status {
            put_varint(u64::from(v), out);
        }
        for v in [self.ua, self.warc, self.location].into_iter().flatten() {
            put_str(v, out);
        }
        if let Some(v) = self.fetch_ms {
            put_varint(v, out);
        }
    }

    /// Reads the stored form (see the module's layout).
    pub fn read(bytes: &'a [u8]) -> Result<CaptureRef<'a>, DecodeError> {
        let mut r = Reader {
            bytes,
            pos: 0,
            texts_are_utf8: false,
        };
        let (mut c, head) = Self::read_head(&mut r)?;
        c.source = r.string()?;
        c.surt = r.string()?;
        c.ts = r.string()?;
        c.read_tail(head, r)
    }

    /// Reads a form made by [`CaptureRef::encode_detached`], given the strings it lacks,
    /// without checking that its texts are UTF-8: a bulk load reads each capture of its
    /// batch in place to derive a row, and checking its own encoding of `&str`s again was
    /// 2–3 % of a small-records load (issue 39). Lengths are checked as always: a damaged
    /// form is an error, not a read past its end.
    ///
    /// # Safety
    /// `detached` must be bytes [`CaptureRef::encode_detached`] wrote, unchanged, or a
    /// prefix of them (a text cut short is an error: its length is read before it).
    pub(crate) unsafe fn read_detached_unchecked(
        detached: &'a [u8],
        (source, surt, ts): (&'a str, &'a str, &'a str),
    ) -> Result<CaptureRef<'a>, DecodeError> {
        let mut r = Reader {
            bytes: detached,
            pos: 0,
            texts_are_utf8: true,
        };
        let (mut c, head) = Self::read_head(&mut r)?;
        (c.source, c.surt, c.ts) = (source, surt, ts);
        c.read_tail(head, r)
    }

    /// The format byte, flags and presence bits: a capture with the fields the flags
    /// hold, and (flags, presence bits) for [`CaptureRef::read_tail`].
    fn read_head(r: &mut Reader<'a>) -> Result<(CaptureRef<'a>, (u8, u16)), DecodeError> {
        if r.byte()? != MAGIC {
            return Err(DecodeError("unknown format"));
        }
        let flags = r.byte()?;
        let kind = match flags & 3 {
            0 => CaptureKind::Response,
            1 => CaptureKind::Resource,
            2 => CaptureKind::Revisit,
            _ => return Err(DecodeError("unknown record kind")),
        };
        let digest_ok = match (flags >> 4) & 3 {
            0 => None,
            1 => Some(true),
            2 => Some(false),
            _ => return Err(DecodeError("bad digest flag")),
        };
        let bits = u16::from_le_bytes([r.byte()?, r.byte()?]);
        let capture = CaptureRef {
            kind,
            digest_ok,
            origin: if flags & 4 != 0 {
                Origin::Warc
            } else {
                Origin::Cdx
            },
            passes: flags & 8 != 0,
            declared_dechunked: flags & (1 << 7) != 0,
            ..Default::default()
        };
        Ok((capture, (flags, bits)))
    }

    /// The URL and the optional fields, after the leading strings.
    fn read_tail(
        mut self,
        (flags, bits): (u8, u16),
        mut r: Reader<'a>,
    ) -> Result<CaptureRef<'a>, DecodeError> {
        let has = |i: u16| bits & (1 << i) != 0;
        let c = &mut self;
        c.url = r.string()?;
        if has(0) {
            c.c_size = Some(r.varint()?);
        }
        if has(1) {
            c.content_type = Some(r.string()?);
        }
        if has(2) {
            c.dechunked = Some(r.digest()?);
        }
        if has(3) {
            c.digest = Some(r.digest()?);
        }
        if has(4) {
            c.etag = Some(r.string()?);
        }
        if has(5) {
            c.last_modified = Some(r.string()?);
        }
        if has(6) {
            c.line = Some(r.varint()?);
        }
        if has(7) {
            c.mime = Some(r.string()?);
        }
        if has(8) {
            c.offset = Some(r.varint()?);
        }
        if has(9) {
            c.record_id = Some(r.string()?);
        }
        if has(10) {
            c.redirect = Some(r.string()?);
        }
        if has(11) {
            c.size = Some(r.varint()?);
        }
        if has(12) {
            c.status = Some(u16::try_from(r.varint()?).map_err(|_| DecodeError("bad status"))?);
        }
        if has(13) {
            c.ua = Some(r.string()?);
        }
        if has(14) {
            c.warc = Some(r.string()?);
        }
        if has(15) {
            c.location = Some(r.string()?);
        }
        if flags & (1 << 6) != 0 {
            c.fetch_ms = Some(r.varint()?);
        }
        if r.pos != r.bytes.len() {
            return Err(DecodeError("trailing bytes"));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Capture {
        Capture {
            c_size: Some(361006),
            content_type: Some("text/html; charset=utf-8".into()),
            dechunked: Some(Sha1Key([3; 20])),
            declared_dechunked: true,
            digest: Some(Sha1Key([7; 20])),
            digest_ok: Some(false),
            etag: Some("\"abc\"".into()),
            kind: CaptureKind::Resource,
            last_modified: Some("Thu, 22 Dec 2022 10:35:23 GMT".into()),
            line: Some(12),
            mime: Some("text/html".into()),
            offset: Some(u64::MAX),
            origin: Origin::Warc,
            passes: true,
            record_id: Some("urn:uuid:1".into()),
            redirect: Some("http://x/é".into()),
            size: Some(0),
            source: "a.warc.gz".into(),
            status: Some(404),
            surt: "org,example)/".into(),
            ts: "20200101000000".into(),
            ua: Some("Wget/1.21".into()),
            url: "http://example.org/".into(),
            warc: Some("ITEM/a.warc.gz".into()),
            fetch_ms: Some(47),
            location: Some("/data/ITEM/a.warc.gz".into()),
        }
    }

    /// A capture with only the fields every capture has.
    fn minimal() -> Capture {
        Capture {
            source: "s".into(),
            surt: "x".into(),
            ts: "20200101000000".into(),
            url: "u".into(),
            ..Default::default()
        }
    }

    #[test]
    fn round_trips_with_every_field_and_with_none() {
        let c = full();
        assert_eq!(Capture::decode(&c.to_bytes()).unwrap(), c);
        let minimal = minimal();
        assert_eq!(Capture::decode(&minimal.to_bytes()).unwrap(), minimal);
        assert!(c.to_bytes().len() < c.to_json().len() / 2 + 40);
    }

    #[test]
    fn values_written_before_declared_dechunked_read_as_before() {
        // The stored form before the flag existed: bit 7 of the flags byte was never set.
        let mut before = full();
        before.declared_dechunked = false;
        let old = before.to_bytes();
        assert_eq!(old[1] & 0x80, 0);
        assert_eq!(Capture::decode(&old).unwrap(), before);
        // The flag changes that bit and nothing else.
        let new = full().to_bytes();
        assert_eq!(new.len(), old.len());
        assert_eq!(new[1], old[1] | 0x80);
        assert_eq!(new[2..], old[2..]);
    }

    #[test]
    fn damaged_values_are_errors_not_panics() {
        let bytes = full().to_bytes();
        for cut in 0..bytes.len() {
            assert!(Capture::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Capture::decode(&extra).is_err());
        assert!(Capture::decode(b"{\"json\":1}").is_err());
    }

    #[test]
    fn the_detached_form_attached_is_the_stored_form_and_reads_the_same() {
        let minimal = minimal();
        let mut long = full();
        long.source = "/a/b/".repeat(40) + "crawl.cdx.gz";
        long.surt = "org,example)/".to_string() + &"p/".repeat(100);
        for capture in [full(), minimal, long] {
            let view = capture.view();
            let leading = (view.source, view.surt, view.ts);
            let mut detached = Vec::new();
            view.encode_detached(&mut detached);
            let leading_bytes = (
                leading.0.as_bytes(),
                leading.1.as_bytes(),
                leading.2.as_bytes(),
            );
            let mut attached = Vec::new();
            attach(&detached, leading_bytes, &mut attached);
            assert_eq!(attached, capture.to_bytes());
            // SAFETY: `detached` is encode_detached's bytes, or a prefix of them.
            let read = unsafe { CaptureRef::read_detached_unchecked(&detached, leading) };
            assert_eq!(read.unwrap().to_capture(), capture);
            for cut in 0..detached.len() {
                let cut = &detached[..cut];
                assert!(unsafe { CaptureRef::read_detached_unchecked(cut, leading) }.is_err());
                let mut attached = Vec::new();
                attach(cut, leading_bytes, &mut attached);
                assert!(Capture::decode(&attached).is_err(), "cut at {}", cut.len());
            }
        }
    }
}
