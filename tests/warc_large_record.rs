//! A 300 MB record streamed from a generator (not a file), plain and gzip: the reader
//! hashes it correctly and its memory stays bounded (it never buffers the payload).
//! In its own test binary so that the process's peak memory is this test's alone.

use std::io::Read;

use flate2::Compression as Level;
use flate2::read::GzEncoder;
use sediment::warc::{DigestCheck, WarcReader, sha1_base32};
use sha1::{Digest, Sha1};

const PAYLOAD: u64 = 300 << 20;

/// Bytes of a WARC holding one response with a `PAYLOAD`-byte body, then a small record.
struct Generator {
    header: Vec<u8>,
    header_pos: usize,
    body_left: u64,
    compressible: bool,
    tail: Vec<u8>,
    tail_pos: usize,
}

/// Word `k` of the body: splitmix64 (bytes that do not compress) or a digit in text.
fn body_word(k: u64, compressible: bool) -> u64 {
    if compressible {
        return 0x3030_3030_3030_3030 + (k % 10);
    }
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The SHA-1 of the body the generator will produce (computed separately, up front).
fn body_sha1(compressible: bool) -> [u8; 20] {
    let mut g = Generator::new(compressible, "sha1:AAAA");
    let mut sha1 = Sha1::new();
    let mut buf = vec![0u8; 1 << 20];
    while g.body_left > 0 {
        let n = g.body(&mut buf);
        sha1.update(&buf[..n]);
    }
    sha1.finalize().into()
}

impl Generator {
    fn new(compressible: bool, digest: &str) -> Self {
        let http = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n";
        let block = http.len() as u64 + PAYLOAD;
        let header = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:big>\r\n\
             WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/big.pdf\r\n\
             WARC-Payload-Digest: {digest}\r\nContent-Type: application/http; msgtype=response\r\n\
             Content-Length: {block}\r\n\r\n"
        );
        let mut header = header.into_bytes();
        header.extend_from_slice(http);
        let tail =
            b"\r\n\r\nWARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:small>\r\n\
                     WARC-Date: 2024-01-01T00:00:00Z\r\nContent-Length: 2\r\n\r\nok\r\n\r\n"
                .to_vec();
        Generator {
            header,
            header_pos: 0,
            body_left: PAYLOAD,
            compressible,
            tail,
            tail_pos: 0,
        }
    }

    /// The next body bytes; each byte depends only on its position.
    fn body(&mut self, buf: &mut [u8]) -> usize {
        let n = (buf.len() as u64).min(self.body_left) as usize;
        let start = PAYLOAD - self.body_left;
        let mut word = body_word(start / 8, self.compressible).to_le_bytes();
        for (i, byte) in buf[..n].iter_mut().enumerate() {
            let p = start + i as u64;
            if p.is_multiple_of(8) {
                word = body_word(p / 8, self.compressible).to_le_bytes();
            }
            *byte = word[(p % 8) as usize];
        }
        self.body_left -= n as u64;
        n
    }
}

impl Read for Generator {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.header_pos < self.header.len() {
            let n = buf.len().min(self.header.len() - self.header_pos);
            buf[..n].copy_from_slice(&self.header[self.header_pos..self.header_pos + n]);
            self.header_pos += n;
            return Ok(n);
        }
        if self.body_left > 0 {
            return Ok(self.body(buf));
        }
        let n = buf.len().min(self.tail.len() - self.tail_pos);
        buf[..n].copy_from_slice(&self.tail[self.tail_pos..self.tail_pos + n]);
        self.tail_pos += n;
        Ok(n)
    }
}

/// Peak resident memory of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn check(reader: impl Read, expected: [u8; 20]) {
    let mut reader = WarcReader::new(reader).unwrap();
    let mut sink_bytes = 0u64;
    let mut sink = |bytes: &[u8]| sink_bytes += bytes.len() as u64;
    let big = reader.next_record(Some(&mut sink)).unwrap().unwrap();
    let payload = big.payload.as_ref().unwrap();
    assert_eq!(payload.length, PAYLOAD);
    assert_eq!(sink_bytes, PAYLOAD);
    assert_eq!(payload.sha1, expected);
    assert_eq!(payload.prefix.len(), 1024);
    assert_eq!(big.digest_check, DigestCheck::Match);
    assert_eq!(big.http_status(), Some(200));
    let small = reader.next_record(None).unwrap().unwrap();
    assert_eq!(small.payload.unwrap().prefix, b"ok");
    assert!(reader.next_record(None).is_none());
}

#[test]
fn huge_record_streams_in_bounded_memory() {
    let before = peak_rss();
    let random = body_sha1(false);
    let digest = format!("sha1:{}", sha1_base32(&random));
    check(Generator::new(false, &digest), random);

    let text = body_sha1(true);
    let digest = format!("sha1:{}", sha1_base32(&text));
    check(
        GzEncoder::new(Generator::new(true, &digest), Level::fast()),
        text,
    );

    let grown = peak_rss().saturating_sub(before);
    eprintln!(
        "peak memory grew by {} KiB while streaming 2 x 300 MB",
        grown / 1024
    );
    // Linux is the platform: a peak that cannot be read is a failure, not a pass.
    assert!(
        before > 0,
        "no VmHWM in /proc/self/status, memory not measured"
    );
    assert!(grown < 64 << 20, "peak memory grew by {grown} bytes");
}
