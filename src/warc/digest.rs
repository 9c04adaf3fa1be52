//! Decoding `WARC-Payload-Digest` values and comparing them with a computed SHA-1.
//!
//! Spellings seen in real files: `sha1:` + base32 (upper or lower case), `sha1:` + 40 hex
//! digits, `sha1:` + base64 (standard or URL-safe alphabet, padded or not), and the same
//! without the `sha1:` label.

use data_encoding::{
    BASE32, BASE64, BASE64_NOPAD, BASE64URL, BASE64URL_NOPAD, HEXLOWER_PERMISSIVE,
};

/// Outcome of comparing the computed payload SHA-1 with `WARC-Payload-Digest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestCheck {
    /// The header names the SHA-1 of the stored payload bytes.
    Match,
    /// The header names the SHA-1 of the de-chunked payload (the stored bytes are
    /// chunk-encoded and the crawler hashed the decoded body).
    MatchDechunked,
    /// The header names another SHA-1.
    Mismatch {
        expected: [u8; 20],
        actual: [u8; 20],
    },
    /// No `WARC-Payload-Digest` header.
    Absent,
    /// The digest uses another algorithm (e.g. `sha256`); not a mismatch.
    Unsupported(String),
    /// The value cannot be decoded as a SHA-1 in any known spelling.
    Malformed(String),
    /// Not checked: revisit records (the digest names the original capture's payload) and
    /// segmented records (the digest covers the reassembled payload).
    NotApplicable,
}

impl DigestCheck {
    /// A short stable name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            DigestCheck::Match => "match",
            DigestCheck::MatchDechunked => "match-dechunked",
            DigestCheck::Mismatch { .. } => "mismatch",
            DigestCheck::Absent => "absent",
            DigestCheck::Unsupported(_) => "unsupported",
            DigestCheck::Malformed(_) => "malformed",
            DigestCheck::NotApplicable => "not-applicable",
        }
    }
}

/// A decoded digest header value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParsedDigest {
    Sha1([u8; 20]),
    /// Another algorithm, by its lower-case label.
    Other(String),
    /// Labelled SHA-1 (or unlabelled) but not decodable.
    Malformed,
}

/// Decode a digest value such as `sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK`.
pub fn parse_digest(value: &str) -> ParsedDigest {
    let value = value.trim();
    let (label, encoded) = match value.split_once(':') {
        Some((label, rest)) => (label.trim().to_ascii_lowercase(), rest.trim()),
        None => (String::from("sha1"), value),
    };
    if label != "sha1" && label != "sha-1" {
        return ParsedDigest::Other(label);
    }
    match decode_sha1(encoded) {
        Some(sha1) => ParsedDigest::Sha1(sha1),
        None => ParsedDigest::Malformed,
    }
}

/// Decode 20 bytes from base32, hex or base64 text (the length tells which).
pub fn decode_sha1(encoded: &str) -> Option<[u8; 20]> {
    let bytes = encoded.as_bytes();
    let decoded = match bytes.len() {
        32 => BASE32.decode(encoded.to_ascii_uppercase().as_bytes()).ok(),
        40 => HEXLOWER_PERMISSIVE.decode(bytes).ok(),
        28 => BASE64
            .decode(bytes)
            .ok()
            .or_else(|| BASE64URL.decode(bytes).ok()),
        27 => BASE64_NOPAD
            .decode(bytes)
            .ok()
            .or_else(|| BASE64URL_NOPAD.decode(bytes).ok()),
        _ => None,
    }?;
    decoded.try_into().ok()
}

/// Upper-case base32 of a SHA-1, the spelling CDX files and Heritrix use.
pub fn sha1_base32(sha1: &[u8; 20]) -> String {
    BASE32.encode(sha1)
}

/// Compare a header value with the SHA-1 of the stored payload and, when the payload was
/// chunk-encoded and could be decoded, the SHA-1 of the de-chunked payload.
pub fn check_digest(
    header: Option<&str>,
    stored: &[u8; 20],
    dechunked: Option<&[u8; 20]>,
) -> DigestCheck {
    let Some(value) = header else {
        return DigestCheck::Absent;
    };
    match parse_digest(value) {
        ParsedDigest::Sha1(expected) if &expected == stored => DigestCheck::Match,
        ParsedDigest::Sha1(expected) if Some(&expected) == dechunked => DigestCheck::MatchDechunked,
        ParsedDigest::Sha1(expected) => DigestCheck::Mismatch {
            expected,
            actual: *stored,
        },
        ParsedDigest::Other(label) => DigestCheck::Unsupported(label),
        ParsedDigest::Malformed => DigestCheck::Malformed(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SHA-1 of the empty string, da39a3ee5e6b4b0d3255bfef95601890afd80709.
    const EMPTY: [u8; 20] = [
        0xda, 0x39, 0xa3, 0xee, 0x5e, 0x6b, 0x4b, 0x0d, 0x32, 0x55, 0xbf, 0xef, 0x95, 0x60, 0x18,
        0x90, 0xaf, 0xd8, 0x07, 0x09,
    ];

    #[test]
    fn spellings_of_one_digest() {
        for spelling in [
            "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
            "sha1:3i42h3s6nnfq2msvx7xzkyayscx5qbyj",
            "SHA1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
            "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
            "sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709",
            "sha1:DA39A3EE5E6B4B0D3255BFEF95601890AFD80709",
            "sha1:2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
            "sha1:2jmj7l5rSw0yVb_vlWAYkK_YBwk=",
            "sha1:2jmj7l5rSw0yVb/vlWAYkK/YBwk",
        ] {
            assert_eq!(
                parse_digest(spelling),
                ParsedDigest::Sha1(EMPTY),
                "{spelling}"
            );
        }
    }

    #[test]
    fn other_algorithms_and_garbage() {
        assert_eq!(
            parse_digest("sha256:abc"),
            ParsedDigest::Other("sha256".into())
        );
        // "1" is not in the base32 alphabet (seen in warcio's example-digest.warc).
        assert_eq!(
            parse_digest("sha1:1112H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
            ParsedDigest::Malformed
        );
        assert_eq!(parse_digest("sha1:"), ParsedDigest::Malformed);
    }

    #[test]
    fn check_outcomes() {
        let other = [1u8; 20];
        let v = Some("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(check_digest(v, &EMPTY, None), DigestCheck::Match);
        assert_eq!(
            check_digest(v, &other, Some(&EMPTY)),
            DigestCheck::MatchDechunked
        );
        assert_eq!(
            check_digest(v, &other, None),
            DigestCheck::Mismatch {
                expected: EMPTY,
                actual: other
            }
        );
        assert_eq!(check_digest(None, &other, None), DigestCheck::Absent);
        assert_eq!(
            check_digest(Some("md5:xyz"), &other, None),
            DigestCheck::Unsupported("md5".into())
        );
        assert_eq!(sha1_base32(&EMPTY), "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }
}
