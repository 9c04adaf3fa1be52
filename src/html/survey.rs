//! Pass 1 over the document: its metadata (`<title>`, `<meta>`, `<base href>`, canonical,
//! language), the candidates for the main region, and the description made from them.

use html5ever::local_name;
use url::Url;

use super::dates::{date_in_url_path, parse_datetime};
use super::dom::{DOCUMENT, Dom, NodeData, NodeId};
use super::links::{Rel, attribute_name, link_attributes};
use super::pile::{FieldText, normalized};
use super::walk::{Visitor, classify};
use super::{Directives, DocumentDescription, Refresh, Robots};

/// Pass 1: metadata elements, `<base href>`, the candidates for the main region.
pub(super) struct Survey<'d> {
    pub(super) dom: &'d Dom,
    /// Per open element: (hidden, inside nav/footer/header/aside).
    pub(super) stack: Vec<(bool, bool)>,
    pub(super) base_href: Option<&'d str>,
    pub(super) title: Option<String>,
    /// (lower-case name, property or itemprop; content) of every `<meta>` with content.
    pub(super) metas: Vec<(String, &'d str)>,
    /// (lower-case http-equiv; content).
    pub(super) http_equivs: Vec<(String, &'d str)>,
    pub(super) canonical_href: Option<&'d str>,
    pub(super) html_lang: Option<&'d str>,
    pub(super) first_main: Option<NodeId>,
    pub(super) first_article: Option<NodeId>,
    /// The values of link attributes in document order, when asked for (an outline is
    /// made in this one pass).
    pub(super) link_values: Option<Vec<&'d str>>,
}

impl<'d> Survey<'d> {
    pub(super) fn new(dom: &'d Dom) -> Self {
        let html_lang = std::iter::successors(dom.first_child(DOCUMENT), |&n| dom.next_sibling(n))
            .find_map(|n| {
                dom.element(n)
                    .filter(|e| e.html_name() == Some(&local_name!("html")))
            })
            .and_then(|e| {
                e.attr(&local_name!("lang"))
                    .or_else(|| e.attr(&local_name!("xml:lang")))
            });
        Survey {
            dom,
            stack: Vec::new(),
            base_href: None,
            title: None,
            metas: Vec::new(),
            http_equivs: Vec::new(),
            canonical_href: None,
            html_lang,
            first_main: None,
            first_article: None,
            link_values: None,
        }
    }

    /// A survey that also collects the values of link attributes.
    pub(super) fn with_link_values(dom: &'d Dom) -> Self {
        Survey {
            link_values: Some(Vec::new()),
            ..Survey::new(dom)
        }
    }

    pub(super) fn region(&self) -> Option<NodeId> {
        self.first_main.or(self.first_article)
    }

    /// The non-empty values of the metas named by `keys`, in the order of `keys`.
    pub(super) fn meta(&self, keys: &[&str]) -> Vec<&'d str> {
        keys.iter()
            .flat_map(|key| self.metas.iter().filter(move |(k, _)| k == key))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
            .collect()
    }

    pub(super) fn http_equiv(&self, key: &str) -> Option<&'d str> {
        self.http_equivs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }
}

impl<'d> Visitor for Survey<'d> {
    fn enter(&mut self, node: NodeId) -> bool {
        let Some(e) = self.dom.element(node) else {
            return false;
        };
        let class = classify(e);
        let (parent_hidden, parent_excluded) = self.stack.last().copied().unwrap_or((false, false));
        let hidden = parent_hidden || class.invisible;
        let excluded = parent_excluded || class.boilerplate || class.header || class.aside;
        if !hidden {
            if class.main && self.first_main.is_none() {
                self.first_main = Some(node);
            }
            if class.article && !parent_excluded && self.first_article.is_none() {
                self.first_article = Some(node);
            }
        }
        if let Some(values) = &mut self.link_values
            && !class.skip_subtree
            && let Some(name) = e.html_name()
        {
            for &(_, attribute) in link_attributes(name) {
                values.extend(e.attr(&attribute_name(attribute)));
            }
        }
        match e.html_name() {
            Some(&local_name!("base")) if self.base_href.is_none() => {
                self.base_href = e.attr(&local_name!("href"))
            }
            Some(&local_name!("title")) if self.title.is_none() => {
                let mut text = FieldText::new(usize::MAX);
                let mut child = self.dom.first_child(node);
                while let Some(c) = child {
                    if let NodeData::Text(t) = &self.dom.node(c).data {
                        text.push(self.dom.text(*t), false);
                    }
                    child = self.dom.next_sibling(c);
                }
                self.title = Some(text.out);
            }
            Some(&local_name!("meta")) => {
                if let Some(content) = e.attr(&local_name!("content")) {
                    for key in [
                        local_name!("name"),
                        local_name!("property"),
                        local_name!("itemprop"),
                    ] {
                        if let Some(k) = e.attr(&key) {
                            self.metas.push((k.trim().to_ascii_lowercase(), content));
                        }
                    }
                    if let Some(k) = e.attr(&local_name!("http-equiv")) {
                        self.http_equivs
                            .push((k.trim().to_ascii_lowercase(), content));
                    }
                }
            }
            Some(&local_name!("link")) if self.canonical_href.is_none() => {
                if let Some(href) = e
                    .attr(&local_name!("href"))
                    .filter(|h| !h.trim().is_empty())
                    && e.attr(&local_name!("rel"))
                        .is_some_and(|r| Rel::parse(r).has("canonical"))
                {
                    self.canonical_href = Some(href);
                }
            }
            _ => {}
        }
        self.stack.push((hidden, excluded));
        !class.skip_subtree
    }

    fn leave(&mut self, node: NodeId) {
        if self.dom.element(node).is_some() {
            self.stack.pop();
        }
    }
}

pub(super) const CREATED_KEYS: [&str; 8] = [
    "article:published_time",
    "dcterms.created",
    "dc.created",
    "dc.date.created",
    "dcterms.issued",
    "dc.date.issued",
    "dcterms.date",
    "dc.date",
];
pub(super) const UPDATED_KEYS: [&str; 5] = [
    "article:modified_time",
    "og:updated_time",
    "dcterms.modified",
    "dc.modified",
    "dc.date.modified",
];

pub(super) fn describe(
    survey: &Survey,
    base_url: &Url,
    document_url: &Url,
    first_h1: Option<String>,
    indexiness: f64,
) -> DocumentDescription {
    let title = survey.title.clone().unwrap_or_default();
    let h1 = first_h1.clone().unwrap_or_default();
    let title = if h1.chars().count() > title.chars().count() {
        h1
    } else {
        title
    };
    let description = survey
        .meta(&[
            "og:description",
            "description",
            "dc.description",
            "dcterms.description",
        ])
        .into_iter()
        .map(|d| normalized(d, usize::MAX))
        .find(|d| !d.is_empty());
    let primary_language = survey
        .html_lang
        .or_else(|| {
            survey
                .http_equiv("content-language")
                .and_then(|v| v.split(',').next())
        })
        .map(|l| l.trim().to_ascii_lowercase().replace('_', "-"))
        .filter(|l| !l.is_empty());
    let created = survey
        .meta(&CREATED_KEYS)
        .into_iter()
        .find_map(parse_datetime)
        .or_else(|| date_in_url_path(document_url.path()));
    let updated = survey
        .meta(&UPDATED_KEYS)
        .into_iter()
        .find_map(parse_datetime);
    DocumentDescription {
        title: Some(title).filter(|t| !t.is_empty()),
        primary_headline: first_h1.filter(|h| !h.is_empty()),
        description,
        primary_language,
        created,
        updated,
        directives: directives(survey, base_url),
        indexiness,
    }
}

/// The canonical URL, robots flags and refresh of the surveyed document.
pub(super) fn directives(survey: &Survey, base_url: &Url) -> Directives {
    let canonical = survey.canonical_href.and_then(|href| {
        let mut url = base_url.join(href.trim()).ok()?;
        url.set_fragment(None);
        Some(url)
    });
    let mut robots = Robots::default();
    for value in survey.meta(&["robots"]) {
        for token in value.split(|c: char| c == ',' || c.is_ascii_whitespace()) {
            match token.to_ascii_lowercase().as_str() {
                "noindex" => robots.noindex = true,
                "nofollow" => robots.nofollow = true,
                "none" => {
                    robots.noindex = true;
                    robots.nofollow = true;
                }
                _ => {}
            }
        }
    }
    let refresh = survey
        .http_equiv("refresh")
        .and_then(|c| parse_refresh(c, base_url));
    Directives {
        canonical,
        robots,
        refresh,
    }
}

/// `content` of `<meta http-equiv=refresh>`: a delay in seconds, then optionally `;` or `,`,
/// `url=` and the target (possibly quoted).
pub(super) fn parse_refresh(content: &str, base_url: &Url) -> Option<Refresh> {
    let s = content.trim_start();
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = s[digits..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if digits == 0 && !s.starts_with('.') {
        return None;
    }
    let delay_seconds = s[..digits].parse().unwrap_or(u32::MAX);
    let rest = rest
        .trim_start()
        .trim_start_matches([';', ','])
        .trim_start();
    let target = match rest.get(..3) {
        Some(p) if p.eq_ignore_ascii_case("url") => {
            let after = rest[3..].trim_start();
            after.strip_prefix('=').map_or(rest, str::trim_start)
        }
        _ => rest,
    };
    let target = match target.chars().next() {
        Some(q @ ('"' | '\'')) => target[1..].split(q).next().unwrap_or(""),
        _ => target,
    }
    .trim();
    let url = (!target.is_empty())
        .then(|| base_url.join(target).ok())
        .flatten()
        .map(|mut u| {
            u.set_fragment(None);
            u
        });
    Some(Refresh { delay_seconds, url })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_values() {
        let base = Url::parse("http://example.com/a/").unwrap();
        let r = |c| parse_refresh(c, &base);
        assert_eq!(
            r("5; URL=http://www.example.com/redirected.html"),
            Some(Refresh {
                delay_seconds: 5,
                url: Some(Url::parse("http://www.example.com/redirected.html").unwrap())
            })
        );
        assert_eq!(
            r("0;url='next.html'"),
            Some(Refresh {
                delay_seconds: 0,
                url: Some(Url::parse("http://example.com/a/next.html").unwrap())
            })
        );
        assert_eq!(
            r("30"),
            Some(Refresh {
                delay_seconds: 30,
                url: None
            })
        );
        assert_eq!(r("soon"), None);
    }
}
