//! Errors of the TEI reader: every one says where (byte offset in the input) and why.

use std::fmt;

/// What kind of problem stopped the conversion; lets a caller decide how to record it
/// (e.g. `grobid0:status` "fail" with the reason) without parsing the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TeiErrorKind {
    /// The input is empty or only whitespace.
    Empty,
    /// The input is not UTF-8 (GROBID always writes UTF-8).
    NotUtf8,
    /// The input does not start with markup: typically a plain-text error message from
    /// GROBID (`[NO_BLOCKS] …`) or a JSON body.
    NotXml,
    /// XML syntax or well-formedness error (mismatched tags, bad attribute, unknown
    /// entity, several root elements, text outside the root).
    Malformed,
    /// The document ends before it is complete (open elements, unterminated markup).
    Truncated,
    /// Well-formed XML, but not a TEI document of the expected kind.
    NotTei,
}

impl TeiErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TeiErrorKind::Empty => "empty input",
            TeiErrorKind::NotUtf8 => "not UTF-8",
            TeiErrorKind::NotXml => "not XML",
            TeiErrorKind::Malformed => "malformed XML",
            TeiErrorKind::Truncated => "truncated XML",
            TeiErrorKind::NotTei => "not TEI",
        }
    }
}

impl fmt::Display for TeiErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A TEI document could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {position}: {reason}")]
pub struct TeiError {
    pub kind: TeiErrorKind,
    /// Byte offset in the input given to the converter (0-based).
    pub position: u64,
    /// What is wrong, for a human.
    pub reason: String,
}

impl TeiError {
    pub(crate) fn new(kind: TeiErrorKind, position: u64, reason: impl Into<String>) -> Self {
        TeiError {
            kind,
            position,
            reason: reason.into(),
        }
    }
}
