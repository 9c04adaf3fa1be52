//! The WARC reader over arbitrary bytes: every record is read to its end with a payload
//! sink attached (as import-warc reads), errors are values, and the reader always ends.
//! The input is read twice, with gzip members inflated in one call where they can be
//! (libdeflate) and all streamed (zlib-rs): both must give the same records, errors,
//! offsets and payload bytes. Not the same lengths: a record that ends inside a gzip
//! member (members that do not line up with records) gets as its length the compressed
//! bytes read when it ended, which depends on how the member is read (and, streaming, on
//! the buffer sizes); the tests compare lengths on the corpus and fixtures, where members
//! line up.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::warc::{ReaderOptions, WarcReader};

/// `text` with the value of every `, length: N` left out.
fn without_lengths(text: String) -> String {
    const FIELD: &str = ", length: ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(FIELD) {
        out.push_str(&rest[..at + FIELD.len()]);
        rest = rest[at + FIELD.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Everything the reader gives, as text, and the payload bytes the sink received.
fn read(data: &[u8], whole_members: bool) -> (Vec<String>, Vec<u8>) {
    // The smallest buffers the reader accepts: fuzz inputs are short, small buffers put
    // more record boundaries across refills, and zeroing 2 MiB per run would dominate.
    let options = ReaderOptions {
        read_buffer: 0,
        inflate_buffer: 0,
        whole_members,
        ..ReaderOptions::default()
    };
    let mut payload = Vec::new();
    let mut items = Vec::new();
    let mut reader = match WarcReader::with_options(data, options) {
        Ok(reader) => reader,
        Err(error) => return (vec![error.to_string()], payload),
    };
    let mut sink = |chunk: &[u8]| payload.extend_from_slice(chunk);
    // Each call consumes input or ends the reader; the bound only guards the harness.
    for _ in 0..=data.len() + 1 {
        match reader.next_record(Some(&mut sink)) {
            None => break,
            Some(Ok(record)) => {
                let _ = record.http.as_ref().map(|head| head.status());
                items.push(without_lengths(format!("{record:?}")));
            }
            Some(Err(error)) => items.push(without_lengths(format!("{error:?} {error}"))),
        }
    }
    assert!(reader.position() <= data.len() as u64);
    (items, payload)
}

fuzz_target!(|data: &[u8]| {
    let whole = read(data, true);
    let streamed = read(data, false);
    assert!(whole == streamed, "whole-member and streaming reads differ");
});
