//! Byte-level helpers shared by the header, HTTP and record parsers (a leaf module, so
//! those three depend on it and not on each other).

use std::borrow::Cow;

pub(crate) fn strip_cr(line: &[u8]) -> &[u8] {
    let keep = line.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
    &line[..keep]
}

pub(crate) fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

pub(crate) fn lossy(bytes: &[u8]) -> String {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(s) => s.to_string(),
        Cow::Owned(s) => s,
    }
}
