//! CDX dialects: which column holds which field.
//!
//! Column letters follow the legend of IA's CDX format (`N` massaged/SURT URL key, `A`
//! canonized URL, `a` original URL, `b` date, `m` MIME type, `s` response code, `k`
//! checksum, `r` redirect, `M` meta tags, `S` compressed record size, `V` compressed file
//! offset, `g` file name) plus wget's `u` (WARC record id). Other letters of the legend
//! (`e` IP, `c` old checksum, `v`, `D`, `d`, `n`, …) are accepted and ignored.

use std::fmt;

use super::{Reject, RejectReason};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// `N`: massaged URL key, normally the SURT.
    SurtKey,
    /// `A`: canonized URL key (not SURT).
    CanonicalKey,
    /// `b`: capture date.
    Timestamp,
    /// `a`: original URL.
    Url,
    /// `m`: MIME type.
    Mime,
    /// `s`: HTTP response code.
    Status,
    /// `k`: payload digest.
    Digest,
    /// `r`: redirect target.
    Redirect,
    /// `M`: meta flags.
    MetaFlags,
    /// `S`: compressed record size.
    CompressedSize,
    /// `V`: compressed file offset.
    Offset,
    /// `g`: file name.
    Filename,
    /// `u`: WARC record id (wget).
    RecordId,
    /// A letter this crate does not use; the column is skipped.
    Ignored(u8),
}

impl Field {
    pub fn from_letter(letter: u8) -> Field {
        match letter {
            b'N' => Field::SurtKey,
            b'A' => Field::CanonicalKey,
            b'b' => Field::Timestamp,
            b'a' => Field::Url,
            b'm' => Field::Mime,
            b's' => Field::Status,
            b'k' => Field::Digest,
            b'r' => Field::Redirect,
            b'M' => Field::MetaFlags,
            b'S' => Field::CompressedSize,
            b'V' => Field::Offset,
            b'g' => Field::Filename,
            b'u' => Field::RecordId,
            other => Field::Ignored(other),
        }
    }

    pub fn letter(self) -> char {
        let b = match self {
            Field::SurtKey => b'N',
            Field::CanonicalKey => b'A',
            Field::Timestamp => b'b',
            Field::Url => b'a',
            Field::Mime => b'm',
            Field::Status => b's',
            Field::Digest => b'k',
            Field::Redirect => b'r',
            Field::MetaFlags => b'M',
            Field::CompressedSize => b'S',
            Field::Offset => b'V',
            Field::Filename => b'g',
            Field::RecordId => b'u',
            Field::Ignored(b) => b,
        };
        char::from(b)
    }
}

/// Most columns a layout may have (the largest IA legend has 16).
pub const MAX_COLUMNS: usize = 32;

/// Space-separated columns, in order. A letter appearing twice (wget writes `a` twice) is
/// read from its first column.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ColumnLayout {
    fields: [Field; MAX_COLUMNS],
    len: usize,
    /// True when the layout was read from a header line, false when inferred from the
    /// column count of a headerless file.
    pub from_header: bool,
}

impl ColumnLayout {
    /// `N b a m s k r M S V g`: the 11-column format of IA, pywb and cdxj-indexer `-11`.
    pub const CDX11: &'static [u8] = b"NbamskrMSVg";
    /// `N b a m s k r M V g`: the classic 10-column format.
    pub const CDX10: &'static [u8] = b"NbamskrMVg";
    /// `N b a m s k r V g`: the 9-column format (cdxj-indexer's CDX09).
    pub const CDX09: &'static [u8] = b"NbamskrVg";

    /// A layout from column letters (e.g. `b"NbamskrMSVg"`): `None` when there are none or
    /// more than `MAX_COLUMNS`.
    pub fn from_letters(letters: &[u8], from_header: bool) -> Option<ColumnLayout> {
        (!letters.is_empty() && letters.len() <= MAX_COLUMNS)
            .then(|| Self::build(letters, from_header))
    }

    /// Builds a layout from at most [`MAX_COLUMNS`] letters (extra ones are not read).
    fn build(letters: &[u8], from_header: bool) -> ColumnLayout {
        let letters = &letters[..letters.len().min(MAX_COLUMNS)];
        let mut fields = [Field::Ignored(b'-'); MAX_COLUMNS];
        let mut seen = [false; 256];
        for (i, &l) in letters.iter().enumerate() {
            // Later repeats of a letter are not read again.
            fields[i] = if seen[usize::from(l)] {
                Field::Ignored(l)
            } else {
                Field::from_letter(l)
            };
            seen[usize::from(l)] = true;
        }
        ColumnLayout {
            fields,
            len: letters.len(),
            from_header,
        }
    }

    /// The layout a headerless file with this many columns has, if any.
    pub fn for_column_count(n: usize) -> Option<ColumnLayout> {
        let letters = match n {
            11 => Self::CDX11,
            10 => Self::CDX10,
            9 => Self::CDX09,
            _ => return None,
        };
        Some(Self::build(letters, false))
    }

    pub fn fields(&self) -> &[Field] {
        &self.fields[..self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn has(&self, field: Field) -> bool {
        self.fields().contains(&field)
    }

    /// The column letters, e.g. `NbamskrMSVg`.
    pub fn letters(&self) -> String {
        self.fields().iter().map(|f| f.letter()).collect()
    }
}

impl fmt::Debug for ColumnLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ColumnLayout({}{})",
            self.letters(),
            if self.from_header { ", header" } else { "" }
        )
    }
}

/// The format of a CDX file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Space-separated columns.
    Columns(ColumnLayout),
    /// `key timestamp {json}`.
    Cdxj,
}

impl Dialect {
    /// The 11-column IA dialect `N b a m s k r M S V g`.
    pub fn cdx11() -> Dialect {
        Dialect::Columns(ColumnLayout::build(ColumnLayout::CDX11, false))
    }

    /// A column dialect from header letters (e.g. `b"abamskrMVgu"`).
    pub fn from_letters(letters: &[u8]) -> Option<Dialect> {
        ColumnLayout::from_letters(letters, true).map(Dialect::Columns)
    }

    /// A short description for reports: `CDX NbamskrMSVg` or `CDXJ`.
    pub fn describe(&self) -> String {
        match self {
            Dialect::Columns(layout) => format!("CDX {}", layout.letters()),
            Dialect::Cdxj => "CDXJ".to_string(),
        }
    }
}

/// Whether a (trimmed-at-the-end) line is a ` CDX …` header.
pub(crate) fn is_header_line(line: &[u8]) -> bool {
    let start = line.iter().position(|&b| b != b' ' && b != b'\t');
    let Some(start) = start else {
        return false;
    };
    let rest = &line[start..];
    rest.starts_with(b"CDX") && matches!(rest.get(3), None | Some(b' ' | b'\t'))
}

/// Reads the column letters of a header line (` CDX N b a m s k r M S V g`).
pub(crate) fn parse_header(line: &[u8]) -> Result<ColumnLayout, Reject> {
    let mut tokens = line
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|t| !t.is_empty());
    tokens.next(); // "CDX"
    let mut letters = Vec::with_capacity(16);
    for token in tokens {
        match token {
            [letter] if letter.is_ascii_graphic() => letters.push(*letter),
            _ => {
                return Err(Reject::new(
                    RejectReason::BadHeader,
                    format!(
                        "CDX header field {} is not a single letter",
                        crate::text::excerpt(&String::from_utf8_lossy(token))
                    ),
                ));
            }
        }
    }
    if letters.is_empty() {
        return Err(Reject::new(
            RejectReason::BadHeader,
            "CDX header names no columns",
        ));
    }
    ColumnLayout::from_letters(&letters, true).ok_or_else(|| {
        Reject::new(
            RejectReason::BadHeader,
            format!(
                "CDX header has {} columns: at most {MAX_COLUMNS} are supported",
                letters.len()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_the_columns() {
        let l = parse_header(b" CDX N b a m s k r M S V g").unwrap();
        assert_eq!(l.letters(), "NbamskrMSVg");
        assert!(l.from_header);
        let wget = parse_header(b" CDX a b a m s k r M V g u").unwrap();
        assert_eq!(wget.fields()[0], Field::Url);
        assert_eq!(wget.fields()[2], Field::Ignored(b'a'));
        assert!(!wget.has(Field::SurtKey) && !wget.has(Field::CompressedSize));
        assert!(wget.has(Field::RecordId));
        assert!(is_header_line(b" CDX N b a"));
        assert!(is_header_line(b"CDX N b a"));
        assert!(!is_header_line(b"CDXJ x"));
        assert!(!is_header_line(b"com,example)/ 2014"));
        let bad = parse_header(b" CDX N b urlkey").unwrap_err();
        assert_eq!(bad.reason, RejectReason::BadHeader);
        assert!(bad.detail.contains("urlkey"));
        assert_eq!(
            parse_header(b" CDX").unwrap_err().reason,
            RejectReason::BadHeader
        );
    }

    #[test]
    fn headerless_layouts_by_column_count() {
        assert_eq!(
            ColumnLayout::for_column_count(11).unwrap().letters(),
            "NbamskrMSVg"
        );
        assert_eq!(
            ColumnLayout::for_column_count(10).unwrap().letters(),
            "NbamskrMVg"
        );
        assert_eq!(
            ColumnLayout::for_column_count(9).unwrap().letters(),
            "NbamskrVg"
        );
        assert!(ColumnLayout::for_column_count(8).is_none());
        assert!(ColumnLayout::for_column_count(12).is_none());
    }
}
