//! The WARC reader over arbitrary bytes: every record is read to its end with a payload
//! sink attached (as import-warc reads), errors are values, and the reader always ends.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::warc::{ReaderOptions, WarcReader};

fuzz_target!(|data: &[u8]| {
    // The smallest buffers the reader accepts: fuzz inputs are short, small buffers put
    // more record boundaries across refills, and zeroing 2 MiB per run would dominate.
    let options = ReaderOptions {
        read_buffer: 0,
        inflate_buffer: 0,
        ..ReaderOptions::default()
    };
    let Ok(mut reader) = WarcReader::with_options(data, options) else {
        return;
    };
    let mut payload_bytes = 0usize;
    let mut sink = |chunk: &[u8]| payload_bytes += chunk.len();
    // Each call consumes input or ends the reader; the bound only guards the harness.
    for _ in 0..=data.len() + 1 {
        match reader.next_record(Some(&mut sink)) {
            None => break,
            Some(Ok(record)) => {
                let _ = record.http.as_ref().map(|head| head.status());
            }
            Some(Err(error)) => {
                let _ = error.to_string();
            }
        }
    }
    assert!(reader.position() <= data.len() as u64);
});
