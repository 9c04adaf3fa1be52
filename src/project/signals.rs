//! What an HTML page says about itself that decides its place in a search engine: its
//! canonical URL, whether it may be indexed, and whether it redirects by
//! `<meta http-equiv=refresh>`. The crawl and the summary database both read it from here,
//! so they agree on which pages are indexable (exit code 20) and on every redirect.
//!
//! * Canonical: the first usable one of `<link rel=canonical>` and the HTTP
//!   `Link: <…>; rel="canonical"` header. Usable means an http(s) URL with a host: a
//!   canonical link a crawler cannot fetch (Sphinx writes `file:///usr/share/doc/…` into
//!   locally built documentation) says nothing about the page's web address, so it is
//!   ignored as if absent.
//! * A page whose usable canonical URL (without fragment) is another URL is "not canonical"
//!   (exit 180) and is kept out of the search index, like a `noindex` page (exit 171).
//! * A `<meta http-equiv=refresh>` with delay 0 and an http(s) target other than the page
//!   itself is a redirect, recorded with information_source 3 (file_body), not permanent.

use url::Url;

use super::base::without_fragment;
use super::crawl::values::canonical_from_link_header;
use crate::html::Directives;

/// The signals of one analysed page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageSignals {
    /// The usable canonical URL, without fragment.
    pub canonical: Option<Url>,
    /// `<meta name=robots>` says noindex (or none).
    pub noindex: bool,
    /// The meta-refresh redirect target (fragment kept: it is recorded separately).
    pub refresh: Option<Url>,
}

/// A canonical URL a crawler could fetch.
pub fn usable_canonical(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https") && url.host_str().is_some_and(|h| !h.is_empty())
}

impl PageSignals {
    /// The signals of a page fetched from `url`; `link_header` is the response's `Link`
    /// header values joined by ", ".
    pub fn of(directives: &Directives, link_header: Option<&str>, url: &Url) -> Self {
        let from_html = directives
            .canonical
            .as_ref()
            .filter(|u| usable_canonical(u))
            .map(without_fragment);
        let canonical = from_html.or_else(|| {
            link_header
                .and_then(|l| canonical_from_link_header(l, url))
                .filter(usable_canonical)
                .map(|u| without_fragment(&u))
        });
        let here = without_fragment(url);
        let refresh = directives
            .refresh
            .as_ref()
            .filter(|r| r.delay_seconds == 0)
            .and_then(|r| r.url.clone())
            .filter(|t| matches!(t.scheme(), "http" | "https"))
            .filter(|t| without_fragment(t) != here);
        PageSignals {
            canonical,
            noindex: directives.robots.noindex,
            refresh,
        }
    }

    /// The canonical URL is another URL than `url` (fragments ignored).
    pub fn canonical_elsewhere(&self, url: &Url) -> bool {
        self.canonical
            .as_ref()
            .is_some_and(|c| *c != without_fragment(url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::Refresh;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn canonical_links_a_crawler_cannot_fetch_are_ignored() {
        let page = url("http://example.org/a.html");
        let mut d = Directives {
            canonical: Some(url("file:///usr/share/doc/python3/html/a.html")),
            ..Default::default()
        };
        let s = PageSignals::of(&d, None, &page);
        assert_eq!(s.canonical, None);
        assert!(!s.canonical_elsewhere(&page));
        // an unusable <link> does not hide a usable Link header
        let s = PageSignals::of(&d, Some("</b.html>; rel=\"canonical\""), &page);
        assert_eq!(
            s.canonical.as_ref().map(Url::as_str),
            Some("http://example.org/b.html")
        );
        assert!(s.canonical_elsewhere(&page));
        d.canonical = Some(url("https://example.org/a.html#top"));
        let s = PageSignals::of(&d, None, &page);
        assert!(s.canonical_elsewhere(&page), "other scheme");
        d.canonical = Some(url("http://example.org/a.html#top"));
        assert!(!PageSignals::of(&d, None, &page).canonical_elsewhere(&page));
    }

    #[test]
    fn only_immediate_refreshes_to_other_pages_redirect() {
        let page = url("http://example.org/a.html");
        let refresh = |delay: u32, target: Option<&str>| Directives {
            refresh: Some(Refresh {
                delay_seconds: delay,
                url: target.map(url),
            }),
            ..Default::default()
        };
        let target = |d: &Directives| {
            PageSignals::of(d, None, &page)
                .refresh
                .map(|u| u.to_string())
        };
        assert_eq!(
            target(&refresh(0, Some("http://example.org/b.html#x"))).as_deref(),
            Some("http://example.org/b.html#x")
        );
        assert_eq!(target(&refresh(5, Some("http://example.org/b.html"))), None);
        assert_eq!(target(&refresh(0, None)), None);
        assert_eq!(
            target(&refresh(0, Some("http://example.org/a.html#y"))),
            None
        );
        assert_eq!(target(&refresh(0, Some("ftp://example.org/b"))), None);
    }
}
