//! Row keys: the raw 20-byte SHA-1 of a file's payload, and its text spellings.
//!
//! Keys are printed as 32-character upper-case RFC 4648 base32 without padding (the
//! CDX and Heritrix convention) and accepted as base32, 40-character hex, or
//! `sha1:BASE32`.

use std::fmt;

use data_encoding::{BASE32_NOPAD, HEXLOWER_PERMISSIVE};

use crate::text::excerpt;

/// A SHA-1 digest used as a row key.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Sha1Key(pub [u8; 20]);

/// Why a key spelling was refused. The refused text is kept as an excerpt (quoted, cut
/// after 64 characters with its length), so that a huge bad key never floods a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("empty key")]
    Empty,
    #[error("key {0} is {1} characters long: expected 32 (base32) or 40 (hex)")]
    BadLength(String, usize),
    #[error("key {0} is not valid base32 (A-Z, 2-7)")]
    BadBase32(String),
    #[error("key {0} is not valid hex")]
    BadHex(String),
}

impl Sha1Key {
    pub const LEN: usize = 20;

    /// Parses any accepted spelling: `sha1:BASE32`, bare base32 (any case), or hex.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let trimmed = text.trim();
        let bare = strip_sha1_prefix(trimmed);
        let shown = || excerpt(trimmed);
        match bare.len() {
            0 => Err(KeyError::Empty),
            32 => Self::from_base32(bare.as_bytes()).ok_or_else(|| KeyError::BadBase32(shown())),
            40 => Self::from_hex(bare.as_bytes()).ok_or_else(|| KeyError::BadHex(shown())),
            n => Err(KeyError::BadLength(shown(), n)),
        }
    }

    /// Decodes exactly 32 base32 characters (upper or lower case).
    pub fn from_base32(text: &[u8]) -> Option<Self> {
        if text.len() != 32 {
            return None;
        }
        let mut upper = [0u8; 32];
        for (dst, src) in upper.iter_mut().zip(text) {
            *dst = src.to_ascii_uppercase();
        }
        let mut out = [0u8; 20];
        BASE32_NOPAD.decode_mut(&upper, &mut out).ok()?;
        Some(Sha1Key(out))
    }

    /// Decodes exactly 40 hex characters (upper or lower case).
    pub fn from_hex(text: &[u8]) -> Option<Self> {
        if text.len() != 40 {
            return None;
        }
        let mut out = [0u8; 20];
        HEXLOWER_PERMISSIVE.decode_mut(text, &mut out).ok()?;
        Some(Sha1Key(out))
    }

    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        <[u8; 20]>::try_from(bytes).ok().map(Sha1Key)
    }

    pub fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }

    pub fn to_base32(&self) -> String {
        BASE32_NOPAD.encode(&self.0)
    }

    /// Writes the base32 spelling into a fixed buffer (no allocation on hot paths).
    pub fn write_base32(&self, out: &mut [u8; 32]) {
        BASE32_NOPAD.encode_mut(&self.0, out);
    }

    pub fn to_hex(&self) -> String {
        data_encoding::HEXLOWER.encode(&self.0)
    }
}

/// Removes a leading `sha1:` (any case), as written by Heritrix and in WARC headers.
pub fn strip_sha1_prefix(text: &str) -> &str {
    match text.get(..5) {
        Some(p) if p.eq_ignore_ascii_case("sha1:") => &text[5..],
        _ => text,
    }
}

impl fmt::Display for Sha1Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 32];
        self.write_base32(&mut buf);
        // base32 output is ASCII by construction
        f.write_str(std::str::from_utf8(&buf).unwrap_or_default())
    }
}

impl fmt::Debug for Sha1Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha1Key({self})")
    }
}

impl std::str::FromStr for Sha1Key {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Sha1Key::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SHA-1 of the empty string, in the three spellings users have.
    const EMPTY_B32: &str = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";
    const EMPTY_HEX: &str = "da39a3ee5e6b4b0d3255bfef95601890afd80709";

    #[test]
    fn parses_all_three_spellings_to_the_same_key() {
        let a = Sha1Key::parse(EMPTY_B32).unwrap();
        let b = Sha1Key::parse(EMPTY_HEX).unwrap();
        let c = Sha1Key::parse(&format!("sha1:{EMPTY_B32}")).unwrap();
        let d = Sha1Key::parse(&EMPTY_B32.to_lowercase()).unwrap();
        let e = Sha1Key::parse(&format!("SHA1:{}", EMPTY_HEX.to_uppercase())).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, d);
        assert_eq!(a, e);
        assert_eq!(a.to_base32(), EMPTY_B32);
        assert_eq!(a.to_hex(), EMPTY_HEX);
        assert_eq!(a.to_string(), EMPTY_B32);
    }

    #[test]
    fn rejects_bad_keys_with_reasons() {
        assert_eq!(Sha1Key::parse(""), Err(KeyError::Empty));
        assert!(matches!(
            Sha1Key::parse("ABC"),
            Err(KeyError::BadLength(_, 3))
        ));
        // '1', '8', '0' are not in the base32 alphabet
        assert!(matches!(
            Sha1Key::parse("1I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
            Err(KeyError::BadBase32(_))
        ));
        assert!(matches!(
            Sha1Key::parse("zz39a3ee5e6b4b0d3255bfef95601890afd80709"),
            Err(KeyError::BadHex(_))
        ));
        let msg = Sha1Key::parse("ABC").unwrap_err().to_string();
        assert!(msg.contains("expected 32"), "{msg}");
    }

    #[test]
    fn a_huge_bad_key_is_not_echoed_in_full() {
        let huge = "Q".repeat(100_000);
        let msg = Sha1Key::parse(&huge).unwrap_err().to_string();
        assert!(msg.len() < 200, "{} bytes: {}", msg.len(), &msg[..200]);
        assert!(msg.contains(&"Q".repeat(64)), "{msg}");
        assert!(msg.contains("(100000 bytes)"), "{msg}");
        assert!(msg.contains("100000 characters long"), "{msg}");
        // Short keys are shown whole.
        let msg = Sha1Key::parse("ABC").unwrap_err().to_string();
        assert!(msg.starts_with("key \"ABC\" is 3"), "{msg}");
    }
}
