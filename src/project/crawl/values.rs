//! Conversions of capture fields into the crawl database's value conventions: unix
//! seconds, 16-byte UUIDs, resolved URLs.

use chrono::NaiveDateTime;
use sha1::{Digest, Sha1};
use url::Url;

/// `yyyyMMddHHmmss` (UTC) → unix seconds.
pub fn ts14_to_unix(ts: &str) -> Option<i64> {
    if ts.len() != 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    NaiveDateTime::parse_from_str(ts, "%Y%m%d%H%M%S")
        .ok()
        .map(|t| t.and_utc().timestamp())
}

/// An HTTP date (`Last-Modified`) → unix seconds. Accepts the IMF-fixdate of RFC 9110 and
/// the two obsolete forms it names (RFC 850 and asctime); anything else is `None`.
pub fn http_date_to_unix(value: &str) -> Option<i64> {
    let value = value.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc2822(value) {
        return Some(t.timestamp());
    }
    // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"; asctime: "Sun Nov  6 08:49:37 1994".
    let without_zone = value.strip_suffix("GMT").unwrap_or(value).trim();
    for format in ["%A, %d-%b-%y %H:%M:%S", "%a %b %e %H:%M:%S %Y"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(without_zone, format) {
            return Some(t.and_utc().timestamp());
        }
    }
    None
}

/// A name-based UUID (version 5, SHA-1) as the 16 bytes the database stores.
pub fn uuid_v5(namespace: &[u8; 16], name: &[u8]) -> [u8; 16] {
    let mut hasher = Sha1::new();
    hasher.update(namespace);
    hasher.update(name);
    let hash = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    bytes
}

/// The RFC 4122 URL namespace.
const NAMESPACE_URL: [u8; 16] = [
    0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
];

/// The namespace of the UUIDs sediment derives for crawl databases: the v5 UUID of a fixed
/// URN in the URL namespace, so the same capture gets the same UUID in every projection.
pub fn sediment_namespace() -> [u8; 16] {
    uuid_v5(&NAMESPACE_URL, b"urn:sediment:project-crawl")
}

/// The target of a redirect: a Location header value or a CDX redirect field (which some
/// writers, wget among them, percent-encode: `http%3A//host%3A80/path`), resolved against
/// the URL of the capture.
pub fn redirect_target(raw: &str, base: &Url) -> Option<Url> {
    let raw = raw.trim();
    if raw.is_empty() || raw == "-" {
        return None;
    }
    let lower = raw.get(..12).unwrap_or(raw).to_ascii_lowercase();
    if lower.starts_with("http%3a//") || lower.starts_with("https%3a//") {
        return base.join(&percent_decode(raw)).ok();
    }
    base.join(raw).ok()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `rel=canonical` target of an HTTP `Link` header (`<url>; rel="canonical"`, several
/// comma-separated links allowed), resolved against the URL of the capture.
pub fn canonical_from_link_header(value: &str, base: &Url) -> Option<Url> {
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>')?;
        let target = &after[..close];
        let params_and_more = &after[close + 1..];
        // The link's parameters run up to the next link (a comma before the next '<').
        let end = params_and_more.find('<').unwrap_or(params_and_more.len());
        let params = &params_and_more[..end];
        let is_canonical = params.split(';').any(|p| {
            let Some((name, v)) = p.split_once('=') else {
                return false;
            };
            name.trim().eq_ignore_ascii_case("rel")
                && v.trim()
                    .trim_end_matches(',')
                    .trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("canonical"))
        });
        if is_canonical {
            return base.join(target.trim()).ok();
        }
        rest = &params_and_more[end..];
    }
    None
}

/// HTML as a crawler indexes it.
pub fn is_html_mime(mime: Option<&str>) -> bool {
    matches!(mime, Some("text/html") | Some("application/xhtml+xml"))
}

/// Schemes a crawler can fetch: crawl candidates are limited to them.
pub fn is_crawlable(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(ts14_to_unix("19700101000000"), Some(0));
        assert_eq!(ts14_to_unix("20080430204939"), Some(1_209_588_579));
        assert_eq!(ts14_to_unix("2008043020493"), None);
        assert_eq!(ts14_to_unix("20081330204939"), None);
        let t = 784_111_777;
        assert_eq!(http_date_to_unix("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(http_date_to_unix("Sunday, 06-Nov-94 08:49:37 GMT"), Some(t));
        assert_eq!(http_date_to_unix("Sun Nov  6 08:49:37 1994"), Some(t));
        assert_eq!(http_date_to_unix("yesterday"), None);
    }

    #[test]
    fn uuid_v5_matches_the_rfc_construction() {
        // Python: uuid.uuid5(uuid.NAMESPACE_URL, "http://example.org/")
        let u = uuid_v5(&NAMESPACE_URL, b"http://example.org/");
        assert_eq!(
            uuid::Uuid::from_bytes(u).to_string(),
            "715d503b-5f95-5532-9100-00663eb45ade"
        );
        assert_eq!(u[6] >> 4, 5, "version 5");
        assert_eq!(u[8] >> 6, 2, "RFC 4122 variant");
        assert_ne!(sediment_namespace(), NAMESPACE_URL);
    }

    #[test]
    fn redirect_targets() {
        let base = Url::parse("http://127.0.0.1:47213/moved").unwrap();
        assert_eq!(
            redirect_target("/docs/guide.html", &base).unwrap().as_str(),
            "http://127.0.0.1:47213/docs/guide.html"
        );
        assert_eq!(
            redirect_target("http%3A//127.0.0.1%3A47213/about.html", &base)
                .unwrap()
                .as_str(),
            "http://127.0.0.1:47213/about.html"
        );
        assert_eq!(
            redirect_target("https://Example.org/a#frag", &base)
                .unwrap()
                .as_str(),
            "https://example.org/a#frag"
        );
        assert_eq!(redirect_target("-", &base), None);
        assert_eq!(redirect_target("  ", &base), None);
    }

    #[test]
    fn link_header_canonical() {
        let base = Url::parse("http://example.org/a/b.html").unwrap();
        let get = |v: &str| canonical_from_link_header(v, &base).map(|u| u.to_string());
        assert_eq!(
            get(r#"</a/c.html>; rel="canonical""#).as_deref(),
            Some("http://example.org/a/c.html")
        );
        assert_eq!(
            get(r#"<https://cdn.example/x.css>; rel=preload; as=style, <c.html>; rel=canonical"#)
                .as_deref(),
            Some("http://example.org/a/c.html")
        );
        assert_eq!(
            get(r#"<https://example.org/p>; rel="alternate canonical""#).as_deref(),
            Some("https://example.org/p")
        );
        assert_eq!(get(r#"<https://example.org/p>; rel="alternate""#), None);
        assert_eq!(get("garbage <unclosed"), None);
        assert_eq!(get(""), None);
    }
}
