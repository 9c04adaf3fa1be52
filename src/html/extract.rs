//! The walk over the parsed document that produces the text pile, links and description.
//! The rules are documented on the `html` module; this file implements them in two passes:
//! a survey (metadata, `<base href>`, the main region) and the walk proper.

use std::collections::HashSet;

use blake2::{Blake2b512, Digest};
use url::Url;

use super::dates::{date_in_url_path, parse_datetime};
use super::dom::{DOCUMENT, Dom, Element, NodeData, NodeId};
use super::links::{self, LinkLocality, LinkSource, Rel};
use super::{
    DocumentDescription, Link, LinkLocation, MAX_LINK_TEXT, MAX_LINKS, Refresh, Robots, TextPile,
};

pub struct Extracted {
    pub base_url: Url,
    pub pile: TextPile,
    /// The start of the pile's text in document order (all six fields interleaved as they
    /// occur), at most [`LEADING_TEXT_BYTES`] bytes.
    pub leading_text: String,
    pub links: Vec<Link>,
    pub description: DocumentDescription,
    pub links_truncated: bool,
}

pub fn extract(dom: &Dom, document_url: &Url) -> Extracted {
    let mut document_url = document_url.clone();
    document_url.set_fragment(None);

    let mut survey = Survey::new(dom);
    walk(dom, DOCUMENT, &mut survey);
    let base_url = survey
        .base_href
        .and_then(|href| document_url.join(href.trim()).ok())
        .unwrap_or_else(|| document_url.clone());

    let mut walker = Walker::new(dom, &document_url, &base_url, survey.region());
    walk(dom, DOCUMENT, &mut walker);

    let indexiness = walker.indexiness();
    let Walker {
        fields,
        links,
        links_truncated,
        first_h1,
        leading,
        ..
    } = walker;
    let pile = pile_of(fields);
    let description = describe(&survey, &base_url, &document_url, first_h1, indexiness);
    Extracted {
        base_url,
        pile,
        leading_text: leading.out,
        links,
        description,
        links_truncated,
    }
}

/// Visits nodes in document order without recursion. `enter` returns whether to descend;
/// `leave` is called for every entered node once its subtree is done.
trait Visitor {
    fn enter(&mut self, node: NodeId) -> bool;
    fn leave(&mut self, node: NodeId);
}

fn walk(dom: &Dom, root: NodeId, visitor: &mut impl Visitor) {
    let mut current = dom.first_child(root);
    while let Some(node) = current {
        if visitor.enter(node)
            && let Some(child) = dom.first_child(node)
        {
            current = Some(child);
            continue;
        }
        let mut done = node;
        current = loop {
            visitor.leave(done);
            if let Some(sibling) = dom.next_sibling(done) {
                break Some(sibling);
            }
            match dom.parent(done) {
                Some(parent) if parent != root => done = parent,
                _ => break None,
            }
        };
    }
}

// Location bits, in the order of `LinkLocation`'s fields.
const HEADER: u16 = 1 << 0;
const FOOTER: u16 = 1 << 1;
const ASIDE: u16 = 1 << 2;
const NAV: u16 = 1 << 3;
const FORM: u16 = 1 << 4;
const MAIN: u16 = 1 << 5;
const ARTICLE: u16 = 1 << 6;
const SECTION: u16 = 1 << 7;
const TABLE: u16 = 1 << 8;
const FIGURE: u16 = 1 << 9;
const ADDRESS: u16 = 1 << 10;
const CODE: u16 = 1 << 11;
const HEADLINE: u16 = 1 << 12;
const LIST: u16 = 1 << 13;
const PARAGRAPH: u16 = 1 << 14;

fn location_of(bits: u16) -> LinkLocation {
    let has = |bit: u16| bits & bit != 0;
    LinkLocation {
        in_header: has(HEADER),
        in_footer: has(FOOTER),
        in_aside: has(ASIDE),
        in_nav: has(NAV),
        in_form: has(FORM),
        in_main: has(MAIN),
        in_article: has(ARTICLE),
        in_section: has(SECTION),
        in_table: has(TABLE),
        in_figure: has(FIGURE),
        in_address: has(ADDRESS),
        in_code: has(CODE),
        in_headline: has(HEADLINE),
        in_list: has(LIST),
        in_paragraph: has(PARAGRAPH),
    }
}

/// The six pile fields, in digest order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Text = 0,
    Secondary = 1,
    BigHeadlines = 2,
    SmallHeadlines = 3,
    Code = 4,
    Quote = 5,
}

impl Field {
    /// Headlines beat code, code beats quotes.
    fn rank(self) -> u8 {
        match self {
            Field::BigHeadlines | Field::SmallHeadlines => 3,
            Field::Code => 2,
            Field::Quote => 1,
            Field::Text | Field::Secondary => 0,
        }
    }
}

/// What separates the text before an element boundary from the text after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Sep {
    None = 0,
    Space = 1,
    Newline = 2,
}

/// The static properties of one element.
struct Class {
    /// Not rendered (or not text): no text from inside it anywhere.
    invisible: bool,
    /// nav, footer: no pile text, but link text.
    boilerplate: bool,
    header: bool,
    aside: bool,
    main: bool,
    article: bool,
    bits: u16,
    field: Option<Field>,
    pre: bool,
    sep: Sep,
    /// `svg`: neither text nor links inside.
    skip_subtree: bool,
}

fn classify(e: &Element) -> Class {
    let mut c = Class {
        invisible: false,
        boilerplate: false,
        header: false,
        aside: false,
        main: false,
        article: false,
        bits: 0,
        field: None,
        pre: false,
        sep: Sep::None,
        skip_subtree: false,
    };
    if &*e.name.local == "svg" {
        c.invisible = true;
        c.skip_subtree = true;
        return c;
    }
    if e.hidden {
        c.invisible = true;
    }
    if let Some(role) = e.attr("role") {
        for token in role.split_ascii_whitespace() {
            let known = match token.to_ascii_lowercase().as_str() {
                "navigation" => {
                    c.bits |= NAV;
                    c.boilerplate = true;
                    true
                }
                "contentinfo" => {
                    c.bits |= FOOTER;
                    c.boilerplate = true;
                    true
                }
                "banner" => {
                    c.bits |= HEADER;
                    c.header = true;
                    true
                }
                "complementary" => {
                    c.bits |= ASIDE;
                    c.aside = true;
                    true
                }
                "main" => {
                    c.bits |= MAIN;
                    c.main = true;
                    true
                }
                "article" => {
                    c.bits |= ARTICLE;
                    c.article = true;
                    true
                }
                "form" => {
                    c.bits |= FORM;
                    true
                }
                _ => false,
            };
            // The first recognised role token is the element's role.
            if known {
                break;
            }
        }
    }
    let Some(name) = e.html_name() else {
        return c;
    };
    match name {
        "head" | "script" | "style" | "template" | "noscript" | "canvas" | "iframe" | "object"
        | "embed" | "video" | "audio" | "select" | "datalist" | "textarea" | "title"
        | "noframes" | "noembed" => c.invisible = true,
        "nav" => {
            c.bits |= NAV;
            c.boilerplate = true;
        }
        "footer" => {
            c.bits |= FOOTER;
            c.boilerplate = true;
        }
        "header" => {
            c.bits |= HEADER;
            c.header = true;
        }
        "aside" => {
            c.bits |= ASIDE;
            c.aside = true;
        }
        "main" => {
            c.bits |= MAIN;
            c.main = true;
        }
        "article" => {
            c.bits |= ARTICLE;
            c.article = true;
        }
        "section" => c.bits |= SECTION,
        "form" => c.bits |= FORM,
        "table" => c.bits |= TABLE,
        "figure" => c.bits |= FIGURE,
        "address" => c.bits |= ADDRESS,
        "pre" => {
            c.bits |= CODE;
            c.field = Some(Field::Code);
            c.pre = true;
        }
        "code" | "samp" | "kbd" => {
            c.bits |= CODE;
            c.field = Some(Field::Code);
        }
        "h1" | "h2" | "h3" => {
            c.bits |= HEADLINE;
            c.field = Some(Field::BigHeadlines);
        }
        "h4" | "h5" | "h6" => {
            c.bits |= HEADLINE;
            c.field = Some(Field::SmallHeadlines);
        }
        "ul" | "ol" | "dl" | "menu" => c.bits |= LIST,
        "p" => c.bits |= PARAGRAPH,
        "blockquote" | "q" => c.field = Some(Field::Quote),
        _ => {}
    }
    c.sep = match name {
        "td" | "th" => Sep::Space,
        "address" | "article" | "aside" | "blockquote" | "body" | "br" | "caption" | "center"
        | "dd" | "details" | "dialog" | "dir" | "div" | "dl" | "dt" | "fieldset" | "figcaption"
        | "figure" | "footer" | "form" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "header"
        | "hgroup" | "hr" | "html" | "legend" | "li" | "main" | "menu" | "nav" | "ol"
        | "optgroup" | "option" | "p" | "pre" | "section" | "summary" | "table" | "tbody"
        | "tfoot" | "thead" | "tr" | "ul" => Sep::Newline,
        _ => Sep::None,
    };
    c
}

/// Pass 1: metadata elements, `<base href>`, the candidates for the main region.
struct Survey<'d> {
    dom: &'d Dom,
    /// Per open element: (hidden, inside nav/footer/header/aside).
    stack: Vec<(bool, bool)>,
    base_href: Option<&'d str>,
    title: Option<String>,
    /// (lower-case name, property or itemprop; content) of every `<meta>` with content.
    metas: Vec<(String, &'d str)>,
    /// (lower-case http-equiv; content).
    http_equivs: Vec<(String, &'d str)>,
    canonical_href: Option<&'d str>,
    html_lang: Option<&'d str>,
    first_main: Option<NodeId>,
    first_article: Option<NodeId>,
}

impl<'d> Survey<'d> {
    fn new(dom: &'d Dom) -> Self {
        let html_lang = std::iter::successors(dom.first_child(DOCUMENT), |&n| dom.next_sibling(n))
            .find_map(|n| dom.element(n).filter(|e| e.html_name() == Some("html")))
            .and_then(|e| e.attr("lang").or_else(|| e.attr("xml:lang")));
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
        }
    }

    fn region(&self) -> Option<NodeId> {
        self.first_main.or(self.first_article)
    }

    /// The non-empty values of the metas named by `keys`, in the order of `keys`.
    fn meta(&self, keys: &[&str]) -> Vec<&'d str> {
        keys.iter()
            .flat_map(|key| self.metas.iter().filter(move |(k, _)| k == key))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
            .collect()
    }

    fn http_equiv(&self, key: &str) -> Option<&'d str> {
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
        match e.html_name() {
            Some("base") if self.base_href.is_none() => self.base_href = e.attr("href"),
            Some("title") if self.title.is_none() => {
                let mut text = FieldText::new(usize::MAX);
                let mut child = self.dom.first_child(node);
                while let Some(c) = child {
                    if let NodeData::Text(t) = &self.dom.node(c).data {
                        text.push(t, false);
                    }
                    child = self.dom.next_sibling(c);
                }
                self.title = Some(text.out);
            }
            Some("meta") => {
                if let Some(content) = e.attr("content") {
                    for key in ["name", "property", "itemprop"] {
                        if let Some(k) = e.attr(key) {
                            self.metas.push((k.trim().to_ascii_lowercase(), content));
                        }
                    }
                    if let Some(k) = e.attr("http-equiv") {
                        self.http_equivs
                            .push((k.trim().to_ascii_lowercase(), content));
                    }
                }
            }
            Some("link") if self.canonical_href.is_none() => {
                if let Some(href) = e.attr("href").filter(|h| !h.trim().is_empty())
                    && e.attr("rel")
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

/// Collects text with whitespace collapsed, separators between blocks, an optional size cap.
struct FieldText {
    out: String,
    pending: Sep,
    limit: usize,
}

impl FieldText {
    fn new(limit: usize) -> Self {
        FieldText {
            out: String::new(),
            pending: Sep::None,
            limit,
        }
    }

    fn separate(&mut self, sep: Sep) {
        self.pending = self.pending.max(sep);
    }

    /// Appends text; returns the number of words it started. Works a word at a time: white
    /// space runs become a pending separator, words are copied whole.
    fn push(&mut self, text: &str, pre: bool) -> u64 {
        let mut words = 0;
        let mut rest = text;
        loop {
            let word_start = rest
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(rest.len());
            if word_start > 0 {
                let newline = pre && rest[..word_start].contains('\n');
                self.separate(if newline { Sep::Newline } else { Sep::Space });
            }
            rest = &rest[word_start..];
            if rest.is_empty() {
                return words;
            }
            let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let word = &rest[..word_end];
            rest = &rest[word_end..];
            let sep = if self.out.is_empty() {
                Sep::None
            } else {
                self.pending
            };
            let room = self
                .limit
                .saturating_sub(self.out.len() + usize::from(sep != Sep::None));
            let fits = if word.len() <= room {
                word
            } else {
                let mut cut = room;
                while !word.is_char_boundary(cut) {
                    cut -= 1;
                }
                &word[..cut]
            };
            if fits.is_empty() {
                return words;
            }
            match sep {
                Sep::None => {}
                Sep::Space => self.out.push(' '),
                Sep::Newline => self.out.push('\n'),
            }
            if sep != Sep::None || self.out.is_empty() {
                words += 1;
            }
            self.pending = Sep::None;
            self.out.push_str(fits);
            if fits.len() < word.len() {
                return words;
            }
        }
    }
}

/// Per open element during the walk.
#[derive(Clone, Copy)]
struct Frame {
    bits: u16,
    invisible: bool,
    boilerplate: bool,
    in_region: bool,
    secondary: bool,
    field: Option<Field>,
    pre: bool,
    /// Open `a` elements whose text this frame's text adds to.
    anchors: usize,
    capturing_h1: bool,
    // About the element itself, for `leave`:
    sep: Sep,
    opened_anchor: bool,
}

impl Frame {
    fn route(&self) -> Option<Field> {
        if self.invisible || self.boilerplate {
            None
        } else if let Some(field) = self.field {
            Some(field)
        } else if self.in_region && !self.secondary {
            Some(Field::Text)
        } else {
            Some(Field::Secondary)
        }
    }

    /// Where a link counts for indexiness.
    fn content(&self) -> bool {
        self.in_region && !self.secondary && !self.boilerplate && !self.invisible
    }
}

/// Pass 2: text, links, first `h1`.
struct Walker<'d> {
    dom: &'d Dom,
    document_url: &'d Url,
    base_url: &'d Url,
    region: Option<NodeId>,
    stack: Vec<Frame>,
    root: Frame,
    fields: [FieldText; 6],
    words_outside_links: u64,
    links: Vec<Link>,
    links_truncated: bool,
    /// (index in `links` or none when not collected, text so far) per open `a`.
    open_anchors: Vec<(Option<usize>, FieldText)>,
    /// Links in the main region, for indexiness.
    content_links: Vec<usize>,
    h1_node: Option<NodeId>,
    h1_text: FieldText,
    first_h1: Option<String>,
    /// Pile text in document order, for [`Extracted::leading_text`].
    leading: FieldText,
}

/// Bytes of [`Extracted::leading_text`] kept.
pub const LEADING_TEXT_BYTES: usize = 4096;

impl<'d> Walker<'d> {
    fn new(dom: &'d Dom, document_url: &'d Url, base_url: &'d Url, region: Option<NodeId>) -> Self {
        Walker {
            dom,
            document_url,
            base_url,
            region,
            stack: Vec::new(),
            root: Frame {
                bits: 0,
                invisible: false,
                boilerplate: false,
                in_region: region.is_none(),
                secondary: false,
                field: None,
                pre: false,
                anchors: 0,
                capturing_h1: false,
                sep: Sep::None,
                opened_anchor: false,
            },
            fields: std::array::from_fn(|_| FieldText::new(usize::MAX)),
            words_outside_links: 0,
            links: Vec::new(),
            links_truncated: false,
            open_anchors: Vec::new(),
            content_links: Vec::new(),
            h1_node: None,
            h1_text: FieldText::new(usize::MAX),
            first_h1: None,
            leading: FieldText::new(LEADING_TEXT_BYTES),
        }
    }

    fn separate(&mut self, sep: Sep) {
        if sep == Sep::None {
            return;
        }
        for f in &mut self.fields {
            f.separate(sep);
        }
        for (_, t) in &mut self.open_anchors {
            t.separate(sep);
        }
        self.h1_text.separate(sep);
        self.leading.separate(sep);
    }

    fn text(&mut self, text: &str) {
        let frame = *self.stack.last().unwrap_or(&self.root);
        if frame.invisible {
            return;
        }
        if frame.anchors > 0
            && let Some((_, t)) = self.open_anchors.get_mut(frame.anchors - 1)
        {
            t.push(text, frame.pre);
        }
        if frame.anchors > 0 && frame.bits & HEADLINE != 0 && is_permalink_glyph(text) {
            // A headline's permalink (Sphinx and MkDocs write `<a class="headerlink"
            // href="#id">¶</a>`): link text, but not headline text.
            return;
        }
        if frame.capturing_h1 {
            self.h1_text.push(text, frame.pre);
        }
        if let Some(field) = frame.route() {
            self.leading.push(text, frame.pre);
            let words = self.fields[field as usize].push(text, frame.pre);
            if field == Field::Text && frame.anchors == 0 {
                self.words_outside_links += words;
            }
        }
    }

    /// Adds a link from attribute `attribute` of `e`, if it yields a reportable URL.
    fn add_link(
        &mut self,
        node: NodeId,
        e: &Element,
        tag: &'static str,
        attribute: &'static str,
        parent: &Frame,
    ) -> Option<usize> {
        let value = e
            .attr(attribute)?
            .trim_matches(|c: char| c.is_ascii_whitespace());
        if value.is_empty() {
            return None;
        }
        if self.links.len() >= MAX_LINKS {
            self.links_truncated = true;
            return None;
        }
        let mut url = self.base_url.join(value).ok()?;
        if links::is_ignored_scheme(url.scheme()) {
            return None;
        }
        let fragment = url.fragment().map(str::to_owned);
        url.set_fragment(None);
        let rel = match tag {
            "a" | "area" | "link" => e.attr("rel").map(Rel::parse).unwrap_or_default(),
            _ => Rel::default(),
        };
        let parent_tag = self
            .dom
            .parent(node)
            .and_then(|p| self.dom.element(p))
            .and_then(Element::html_name);
        let destination_type = links::destination_type(
            &LinkSource {
                tag,
                attribute,
                parent_tag,
                rel: &rel,
                type_attr: e.attr("type"),
                as_attr: e.attr("as"),
            },
            &url,
        );
        let locality = links::locality(&url, self.document_url);
        let text = match tag {
            "a" => String::new(), // filled in when the element ends
            "img" | "area" => normalized(e.attr("alt").unwrap_or(""), MAX_LINK_TEXT),
            _ => normalized(e.attr("title").unwrap_or(""), MAX_LINK_TEXT),
        };
        self.links.push(Link {
            tag,
            attribute,
            url,
            fragment,
            text,
            rel,
            location: location_of(parent.bits),
            contains_headline: false,
            destination_type,
            locality,
        });
        let index = self.links.len() - 1;
        if matches!(tag, "a" | "area") && parent.content() {
            self.content_links.push(index);
        }
        Some(index)
    }

    fn element_links(&mut self, node: NodeId, e: &Element, parent: &Frame) -> Option<usize> {
        let name = e.html_name()?;
        match name {
            "a" => return self.add_link(node, e, "a", "href", parent),
            "area" => {
                self.add_link(node, e, "area", "href", parent);
            }
            "link" => {
                self.add_link(node, e, "link", "href", parent);
            }
            "img" => {
                self.add_link(node, e, "img", "src", parent);
            }
            "iframe" => {
                self.add_link(node, e, "iframe", "src", parent);
            }
            "frame" => {
                self.add_link(node, e, "frame", "src", parent);
            }
            "audio" => {
                self.add_link(node, e, "audio", "src", parent);
            }
            "video" => {
                self.add_link(node, e, "video", "src", parent);
                self.add_link(node, e, "video", "poster", parent);
            }
            "source" => {
                self.add_link(node, e, "source", "src", parent);
            }
            "embed" => {
                self.add_link(node, e, "embed", "src", parent);
            }
            "object" => {
                self.add_link(node, e, "object", "data", parent);
            }
            "script" => {
                self.add_link(node, e, "script", "src", parent);
            }
            _ => {}
        }
        None
    }

    fn indexiness(&self) -> f64 {
        let targets: HashSet<&str> = self
            .content_links
            .iter()
            .filter_map(|&i| self.links.get(i))
            .filter(|l| l.locality != LinkLocality::SelfDocument)
            .filter(|l| {
                let at = &l.location;
                at.in_list || at.in_table || at.in_headline || l.contains_headline
            })
            .map(|l| l.url.as_str())
            .collect();
        targets.len() as f64 - self.words_outside_links as f64 / 50.0
    }
}

impl<'d> Visitor for Walker<'d> {
    fn enter(&mut self, node: NodeId) -> bool {
        let e = match &self.dom.node(node).data {
            NodeData::Element(e) => e,
            NodeData::Text(t) => {
                self.text(t);
                return false;
            }
            NodeData::Document | NodeData::Other => return false,
        };
        let parent = *self.stack.last().unwrap_or(&self.root);
        let class = classify(e);
        let mut frame = parent;
        frame.sep = class.sep;
        frame.opened_anchor = false;

        if !class.skip_subtree
            && let Some(index) = self.element_links(node, e, &parent)
        {
            self.open_anchors
                .push((Some(index), FieldText::new(MAX_LINK_TEXT)));
            frame.anchors = self.open_anchors.len();
            frame.opened_anchor = true;
        }

        frame.bits |= class.bits;
        frame.invisible |= class.invisible;
        frame.boilerplate |= class.boilerplate;
        frame.pre |= class.pre;
        if Some(node) == self.region {
            frame.in_region = true;
        }
        if class.aside || (class.header && self.region.is_none()) {
            frame.secondary = true;
        }
        if let Some(field) = class.field
            && frame.field.is_none_or(|f| field.rank() > f.rank())
        {
            frame.field = Some(field);
        }

        if class.bits & HEADLINE != 0 {
            for (index, _) in &self.open_anchors[..frame.anchors] {
                if let Some(link) = index.and_then(|i| self.links.get_mut(i)) {
                    link.contains_headline = true;
                }
            }
            if e.html_name() == Some("h1")
                && self.first_h1.is_none()
                && self.h1_node.is_none()
                && !frame.invisible
            {
                self.h1_node = Some(node);
                frame.capturing_h1 = true;
            }
        }

        if e.html_name() == Some("img") && frame.anchors > 0 && !frame.invisible {
            let alt = e.attr("alt").unwrap_or("");
            if let Some((_, t)) = self.open_anchors.get_mut(frame.anchors - 1) {
                t.separate(Sep::Space);
                t.push(alt, false);
                t.separate(Sep::Space);
            }
        }

        if frame.route() != parent.route() {
            frame.sep = frame.sep.max(Sep::Space);
        }
        self.separate(frame.sep);
        self.stack.push(frame);
        !class.skip_subtree
    }

    fn leave(&mut self, node: NodeId) {
        let Some(e) = self.dom.element(node) else {
            return;
        };
        let Some(frame) = self.stack.pop() else {
            return;
        };
        self.separate(frame.sep);
        if frame.opened_anchor
            && let Some((index, text)) = self.open_anchors.pop()
            && let Some(link) = index.and_then(|i| self.links.get_mut(i))
        {
            link.text = if text.out.is_empty() {
                normalized(
                    e.attr("aria-label")
                        .or_else(|| e.attr("title"))
                        .unwrap_or(""),
                    MAX_LINK_TEXT,
                )
            } else {
                text.out
            };
        }
        if self.h1_node == Some(node) {
            let text = std::mem::replace(&mut self.h1_text, FieldText::new(usize::MAX));
            self.first_h1 = Some(text.out);
        }
    }
}

/// The marks documentation generators put in a headline's permalink: ¶ (Sphinx, MkDocs),
/// § , # (Docusaurus, many Markdown renderers), 🔗.
fn is_permalink_glyph(text: &str) -> bool {
    matches!(
        text.trim_matches(|c: char| c.is_whitespace() || c == '\u{200b}'),
        "¶" | "§" | "#" | "🔗"
    )
}

fn normalized(text: &str, limit: usize) -> String {
    let mut t = FieldText::new(limit);
    t.push(text, false);
    t.out
}

fn pile_of(fields: [FieldText; 6]) -> TextPile {
    let [
        text,
        secondary_text,
        big_headlines,
        small_headlines,
        code_text,
        quote_text,
    ] = fields.map(|f| f.out);
    let mut pile = TextPile {
        text,
        secondary_text,
        big_headlines,
        small_headlines,
        code_text,
        quote_text,
        digest: [0; 64],
    };
    let mut hasher = Blake2b512::new();
    for (i, field) in pile.fields().iter().enumerate() {
        if i > 0 {
            hasher.update(b"\n\n\n");
        }
        hasher.update(field.as_bytes());
    }
    pile.digest.copy_from_slice(&hasher.finalize());
    pile
}

const CREATED_KEYS: [&str; 8] = [
    "article:published_time",
    "dcterms.created",
    "dc.created",
    "dc.date.created",
    "dcterms.issued",
    "dc.date.issued",
    "dcterms.date",
    "dc.date",
];
const UPDATED_KEYS: [&str; 5] = [
    "article:modified_time",
    "og:updated_time",
    "dcterms.modified",
    "dc.modified",
    "dc.date.modified",
];

fn describe(
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
    DocumentDescription {
        title: Some(title).filter(|t| !t.is_empty()),
        primary_headline: first_h1.filter(|h| !h.is_empty()),
        description,
        primary_language,
        created,
        updated,
        canonical,
        robots,
        refresh,
        indexiness,
    }
}

/// `content` of `<meta http-equiv=refresh>`: a delay in seconds, then optionally `;` or `,`,
/// `url=` and the target (possibly quoted).
fn parse_refresh(content: &str, base_url: &Url) -> Option<Refresh> {
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
    fn field_text_normalizes() {
        let mut t = FieldText::new(usize::MAX);
        assert_eq!(t.push("  Hello \u{a0}\n world", false), 2);
        t.separate(Sep::Newline);
        assert_eq!(t.push("next", false), 1);
        t.separate(Sep::Space);
        t.separate(Sep::Space);
        assert_eq!(t.push("x", false), 1);
        t.separate(Sep::Newline);
        assert_eq!(t.out, "Hello world\nnext x");
    }

    #[test]
    fn field_text_limit_respects_char_boundaries() {
        let mut t = FieldText::new(5);
        t.push("ab cdé", false);
        assert_eq!(t.out, "ab cd");
        let mut t = FieldText::new(6);
        t.push("ab cdé", false);
        assert_eq!(t.out, "ab cd");
        let mut t = FieldText::new(7);
        t.push("ab cdé", false);
        assert_eq!(t.out, "ab cdé");
    }

    #[test]
    fn permalink_glyphs_are_not_headline_text() {
        let html = r##"<html><head><title>T</title></head><body><main>
            <h1>Lake cores<a class="headerlink" href="#lake-cores" title="Permalink">¶</a></h1>
            <h2>Layers <a href="#layers">#</a></h2>
            <p>Text with a <a href="#s">§</a> sign.</p></main></body></html>"##;
        let dom = crate::html::dom::parse(html);
        let url = Url::parse("http://example.org/doc.html").unwrap();
        let e = extract(&dom, &url);
        assert_eq!(e.pile.big_headlines, "Lake cores\nLayers");
        assert_eq!(
            e.description.primary_headline.as_deref(),
            Some("Lake cores")
        );
        assert_eq!(
            e.pile.text, "Text with a § sign.",
            "outside headlines text stays"
        );
        let permalink = e
            .links
            .iter()
            .find(|l| l.fragment.as_deref() == Some("lake-cores"));
        assert_eq!(
            permalink.map(|l| l.text.as_str()),
            Some("¶"),
            "still link text"
        );
    }

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
