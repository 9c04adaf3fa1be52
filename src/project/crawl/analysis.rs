//! HTML bodies read back from their WARCs and analysed once, kept in a bounded cache.
//!
//! An analysis depends on the payload (its digest) and on the URL links are resolved
//! against, so the cache key is (digest, URL): revisits and unchanged re-crawls of a page,
//! which the capture order puts next to each other, are parsed once. Bodies that cannot be
//! read are remembered by digest, so a missing WARC is looked for once per payload.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use anyhow::Result;
use url::Url;

use super::values::is_crawlable;
use crate::html;
use crate::key::Sha1Key;
use crate::project::limits::BodyCuts;
use crate::project::signals::PageSignals;
use crate::project::source::{BodyReader, Unavailable};
use crate::store::Store;

/// What the crawl database needs from one HTML document.
#[derive(Debug, Clone, PartialEq)]
pub struct PageFacts {
    /// The whole document decoded to UTF-8 (file_text.text).
    pub text: String,
    /// Canonical URL, noindex, meta-refresh redirect (shared with the summary database).
    pub signals: PageSignals,
    /// Distinct crawlable (http, https) link targets, without fragment, in document order.
    pub links: Vec<Url>,
    /// How the body was cut before analysis (size limit, compression bomb).
    pub cuts: BodyCuts,
}

impl PageFacts {
    fn weight(&self) -> usize {
        self.text.len()
            + self
                .links
                .iter()
                .map(|u| u.as_str().len() + 32)
                .sum::<usize>()
            + 256
    }
}

/// Reads and analyses one HTML body. The outer error is a store failure; an unreadable
/// body is the inner `Err`.
pub fn analyze_page(
    store: &Store,
    reader: &BodyReader,
    digest: &Sha1Key,
    url: &Url,
    declared_content_type: Option<&str>,
) -> Result<Result<PageFacts, Unavailable>> {
    let body = match reader.read(store, digest)? {
        Ok(body) => body,
        Err(why) => return Ok(Err(why)),
    };
    let content_type = body.content_type.as_deref().or(declared_content_type);
    let outline = html::outline(&body.bytes, content_type, url);
    let signals = PageSignals::of(&outline.directives, body.link.as_deref(), url);
    let links = outline.links.into_iter().filter(is_crawlable).collect();
    Ok(Ok(PageFacts {
        text: outline.text_utf8,
        signals,
        links,
        cuts: BodyCuts::of(&body),
    }))
}

/// The cache key of an analysis.
pub type PageKey = (Sha1Key, String);

/// Analyses by (digest, URL), evicted oldest first past a byte budget; unreadable payloads
/// by digest.
pub struct PageCache {
    pages: HashMap<PageKey, Arc<PageFacts>>,
    order: VecDeque<(PageKey, usize)>,
    bytes: usize,
    max_bytes: usize,
    unavailable: HashMap<Sha1Key, Unavailable>,
    /// Unreadable payloads remembered at most (the map is cleared past it).
    max_unavailable: usize,
}

impl PageCache {
    pub fn new(max_bytes: usize, max_unavailable: usize) -> PageCache {
        PageCache {
            pages: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            max_bytes,
            unavailable: HashMap::new(),
            max_unavailable: max_unavailable.max(1),
        }
    }

    pub fn get(&self, key: &PageKey) -> Option<Result<Arc<PageFacts>, Unavailable>> {
        if let Some(why) = self.unavailable.get(&key.0) {
            return Some(Err(why.clone()));
        }
        self.pages.get(key).map(|p| Ok(Arc::clone(p)))
    }

    pub fn insert(&mut self, key: PageKey, result: Result<Arc<PageFacts>, Unavailable>) {
        match result {
            Err(why) => {
                if self.unavailable.len() >= self.max_unavailable {
                    self.unavailable.clear();
                }
                self.unavailable.insert(key.0, why);
            }
            Ok(page) => {
                let weight = page.weight();
                if self.pages.insert(key.clone(), page).is_some() {
                    return;
                }
                self.order.push_back((key, weight));
                self.bytes += weight;
                while self.bytes > self.max_bytes && self.order.len() > 1 {
                    if let Some((old, w)) = self.order.pop_front() {
                        self.pages.remove(&old);
                        self.bytes -= w;
                    }
                }
            }
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Arc<PageFacts> {
        Arc::new(PageFacts {
            text: text.to_string(),
            signals: PageSignals::default(),
            links: Vec::new(),
            cuts: BodyCuts::default(),
        })
    }

    #[test]
    fn cache_is_bounded_and_remembers_unreadable_payloads() {
        let mut cache = PageCache::new(1000, 100);
        let key = |n: u8| (Sha1Key([n; 20]), format!("http://example.org/{n}"));
        cache.insert(key(1), Ok(page(&"a".repeat(400))));
        cache.insert(key(2), Ok(page(&"b".repeat(400))));
        assert_eq!(cache.len(), 1, "the oldest page was evicted");
        assert!(cache.get(&key(1)).is_none());
        assert_eq!(cache.get(&key(2)).unwrap().unwrap().text.len(), 400);
        cache.insert(key(3), Err(Unavailable::WarcMissing));
        let other_url = (Sha1Key([3; 20]), "http://example.org/other".to_string());
        assert_eq!(
            cache.get(&other_url).unwrap().unwrap_err(),
            Unavailable::WarcMissing,
            "unreadable whatever the URL"
        );
        // a single page larger than the budget is still kept until the next one
        cache.insert(key(4), Ok(page(&"c".repeat(5000))));
        assert!(cache.get(&key(4)).is_some());
    }
}
