//! Byte-level helpers shared by the header, HTTP and record parsers (a leaf module, so
//! those three depend on it and not on each other).

use std::borrow::Cow;

use memchr::memchr_iter;

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

/// Look for the end of a header block (an empty line) in `prev` followed by `chunk`.
/// Returns the number of bytes of `chunk` up to and including the end, if found. A line
/// ends with LF after any number of CRs (`\n`, `\r\n`, and `\r\r\n` all occur).
pub(crate) fn find_blank_line(prev: &[u8], chunk: &[u8]) -> Option<usize> {
    let byte_at = |i: isize| -> Option<u8> {
        if i >= 0 {
            chunk.get(i as usize).copied()
        } else {
            let back = i.unsigned_abs();
            prev.len().checked_sub(back).map(|j| prev[j])
        }
    };
    for i in memchr_iter(b'\n', chunk) {
        let mut j = i as isize - 1;
        while byte_at(j) == Some(b'\r') {
            j -= 1;
        }
        if byte_at(j) == Some(b'\n') {
            return Some(i + 1);
        }
    }
    None
}
