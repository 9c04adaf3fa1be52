//! The walk over the parsed document that produces the text pile, links and description.
//! The rules are documented on the `html` module; this file implements them in two passes:
//! a survey (`survey.rs`: metadata, `<base href>`, the main region) and the walk proper,
//! over the visitor and element classes of `walk.rs`, filling the fields of `pile.rs`.

use std::collections::HashSet;

use html5ever::local_name;
use url::Url;

use super::dom::{DOCUMENT, Dom, Element, NodeData, NodeId};
use super::links::{self, LinkLocality, LinkSource, Rel, Targets};
use super::pile::{Field, FieldText, Sep, normalized, pile_of};
use super::survey::{Survey, describe, directives};
use super::walk::{HEADLINE, Visitor, classify, location_of, walk};
use super::{Directives, DocumentDescription, Link, MAX_LINK_TEXT, MAX_LINKS, TextPile};

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
    let document_url = without_fragment(document_url);
    let mut survey = Survey::new(dom);
    walk(dom, DOCUMENT, &mut survey);
    let base_url = base_url_of(&survey, &document_url);

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

/// The links and directives of a document, from one pass.
pub struct Outlined {
    pub links: Vec<Url>,
    pub directives: Directives,
    pub links_truncated: bool,
}

/// The distinct URLs of [`extract`]'s links, in the order they first appear, found by the
/// survey alone: the values of the same attributes, resolved against the same base URL,
/// under the same limit.
pub fn outline(dom: &Dom, document_url: &Url) -> Outlined {
    let document_url = without_fragment(document_url);
    let mut survey = Survey::with_link_values(dom);
    walk(dom, DOCUMENT, &mut survey);
    let base_url = base_url_of(&survey, &document_url);
    let mut targets = Targets::new(&base_url);
    let mut links = Vec::new();
    let mut distinct = HashSet::new();
    let mut reported = 0;
    let mut links_truncated = false;
    let values = survey.link_values.as_deref().unwrap_or_default();
    for value in values.iter().filter_map(|v| links::link_value(v)) {
        if reported >= MAX_LINKS {
            links_truncated = true;
            break;
        }
        let (url, first) = targets.resolve(value);
        let Some(url) = url else {
            continue;
        };
        reported += 1;
        if first && distinct.insert(url.clone()) {
            links.push(url.clone());
        }
    }
    Outlined {
        links,
        directives: directives(&survey, &base_url),
        links_truncated,
    }
}

fn without_fragment(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    url
}

/// `<base href>` resolved against the document URL, else the document URL.
fn base_url_of(survey: &Survey, document_url: &Url) -> Url {
    survey
        .base_href
        .and_then(|href| document_url.join(href.trim()).ok())
        .unwrap_or_else(|| document_url.clone())
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
    /// Inside a permalink anchor (Sphinx's `<a class="headerlink">`).
    permalink: bool,
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
    targets: Targets<'d>,
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
            targets: Targets::new(base_url),
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
                permalink: false,
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
        if (frame.permalink || (frame.anchors > 0 && frame.bits & HEADLINE != 0))
            && is_permalink_glyph(text)
        {
            // A permalink (Sphinx and MkDocs write `<a class="headerlink" href="#id">¶</a>`
            // after headlines and definitions): link text, but not text of the page.
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
        e: &'d Element,
        tag: &'static str,
        attribute: &'static str,
        parent: &Frame,
    ) -> Option<usize> {
        let value = links::link_value(e.attr(&links::attribute_name(attribute))?)?;
        if self.links.len() >= MAX_LINKS {
            self.links_truncated = true;
            return None;
        }
        let url = self.targets.resolve(value).0?.clone();
        let fragment = Targets::fragment(&url, value);
        let rel = match tag {
            "a" | "area" | "link" => e
                .attr(&local_name!("rel"))
                .map(Rel::parse)
                .unwrap_or_default(),
            _ => Rel::default(),
        };
        let parent_tag = self
            .dom
            .parent(node)
            .and_then(|p| self.dom.element(p))
            .and_then(Element::html_name)
            .map(|n| &**n);
        let destination_type = links::destination_type(
            &LinkSource {
                tag,
                attribute,
                parent_tag,
                rel: &rel,
                type_attr: e.attr(&local_name!("type")),
                as_attr: e.attr(&local_name!("as")),
            },
            &url,
        );
        let locality = links::locality(&url, self.document_url);
        let text = match tag {
            "a" => String::new(), // filled in when the element ends
            "img" | "area" => normalized(e.attr(&local_name!("alt")).unwrap_or(""), MAX_LINK_TEXT),
            _ => normalized(e.attr(&local_name!("title")).unwrap_or(""), MAX_LINK_TEXT),
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

    /// Adds the links of `e`; returns the index of an `a` element's link, whose text is
    /// the element's content.
    fn element_links(&mut self, node: NodeId, e: &'d Element, parent: &Frame) -> Option<usize> {
        let mut anchor = None;
        for &(tag, attribute) in links::link_attributes(e.html_name()?) {
            let index = self.add_link(node, e, tag, attribute, parent);
            if tag == "a" {
                anchor = index;
            }
        }
        anchor
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
        let dom = self.dom;
        let e = match &dom.node(node).data {
            NodeData::Element(e) => e,
            NodeData::Text(t) => {
                self.text(self.dom.text(*t));
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
        if e.html_name() == Some(&local_name!("a")) && is_permalink_anchor(e) {
            frame.permalink = true;
        }
        if let Some(field) = class.field
            && (!class.inline_code || frame.pre)
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
            if e.html_name() == Some(&local_name!("h1"))
                && self.first_h1.is_none()
                && self.h1_node.is_none()
                && !frame.invisible
            {
                self.h1_node = Some(node);
                frame.capturing_h1 = true;
            }
        }

        if e.html_name() == Some(&local_name!("img")) && frame.anchors > 0 && !frame.invisible {
            let alt = e.attr(&local_name!("alt")).unwrap_or("");
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
                    e.attr(&local_name!("aria-label"))
                        .or_else(|| e.attr(&local_name!("title")))
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
/// Sphinx's `class="headerlink"`, or a `title` that says it is a permalink.
fn is_permalink_anchor(e: &Element) -> bool {
    e.attr(&local_name!("class"))
        .is_some_and(|class| class.split_ascii_whitespace().any(|c| c == "headerlink"))
        || e.attr(&local_name!("title")).is_some_and(|title| {
            title
                .get(..9)
                .is_some_and(|start| start.eq_ignore_ascii_case("permalink"))
        })
}

fn is_permalink_glyph(text: &str) -> bool {
    matches!(
        text.trim_matches(|c: char| c.is_whitespace() || c == '\u{200b}'),
        "¶" | "§" | "#" | "🔗"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From Python 3.11's library/os.path.html: a definition with Sphinx's permalink, and
    /// a sentence with inline code.
    #[test]
    fn inline_code_stays_in_its_sentence_and_definition_permalinks_go() {
        let html = r##"<html><head><title>os.path</title></head><body><main>
            <dl class="py function"><dt class="sig sig-object py" id="os.path.join">
            <span class="sig-prename descclassname"><span class="pre">os.path.</span></span><span class="sig-name descname"><span class="pre">join</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">path</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#os.path.join" title="Permalink to this definition">¶</a></dt>
            <dd><p>On Windows, the drive is not reset when a rooted path segment (e.g.,
            <code class="docutils literal notranslate"><span class="pre">r'\foo'</span></code>) is encountered.</p>
            <pre>os.path.join("a", "b")</pre>
            <p>Press <kbd>Ctrl</kbd>+<kbd>C</kbd>; see <a href="#x" title="Permalink">¶</a> and ¶ 3.</p></dd></dl>
            </main></body></html>"##;
        let dom = crate::html::dom::parse(html);
        let url = Url::parse("http://example.org/os.path.html").unwrap();
        let e = extract(&dom, &url);
        assert_eq!(
            e.pile.text,
            "os.path.join(path)\nOn Windows, the drive is not reset when a rooted path segment \
             (e.g., r'\\foo') is encountered.\nPress Ctrl+C; see and ¶ 3."
        );
        assert_eq!(e.pile.code_text, "os.path.join(\"a\", \"b\")");
        let permalink = e
            .links
            .iter()
            .find(|l| l.fragment.as_deref() == Some("os.path.join"));
        assert_eq!(permalink.map(|l| l.text.as_str()), Some("¶"), "link text");
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
}
