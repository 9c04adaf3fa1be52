//! CDX lines: dialect detection over the first lines, then every line through one parser
//! (so a header line changes how later lines are read, as in a real file).
#![no_main]
use libfuzzer_sys::fuzz_target;
use sediment::cdx::{CdxParser, detect_dialect};

fuzz_target!(|data: &[u8]| {
    let mut parser = match detect_dialect(data) {
        Some(dialect) => CdxParser::with_dialect(dialect),
        None => CdxParser::new(),
    };
    for line in data.split(|&b| b == b'\n') {
        let _ = parser.parse_line(line);
    }
});
