//! Conversions of capture fields into the crawl database's value conventions: unix
//! seconds, resolved URLs (capture times and UUIDs: `project::identity`).

use chrono::NaiveDateTime;
use url::Url;

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

/// Schemes a crawler can fetch: crawl candidates are limited to them.
pub fn is_crawlable(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let t = 784_111_777;
        assert_eq!(http_date_to_unix("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(http_date_to_unix("Sunday, 06-Nov-94 08:49:37 GMT"), Some(t));
        assert_eq!(http_date_to_unix("Sun Nov  6 08:49:37 1994"), Some(t));
        assert_eq!(http_date_to_unix("yesterday"), None);
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
