//! A compact arena DOM, built by a fast path for the HTML real pages are (`fast`) or by
//! html5ever, with guards that keep parsing linear on hostile input.
//!
//! The two builders give the same tree: the fast path implements the part of the WHATWG
//! algorithm such pages need and hands every other document to html5ever
//! (`tests/html_fast_path.rs` holds it to html5ever's trees). The guards below are
//! html5ever's; the fast path gives up well before any of them would apply.
//!
//! html5ever implements the WHATWG tree-construction algorithm faithfully, including the parts
//! that cost time proportional to the depth of the open-element stack or to the number of
//! attributes on one tag. Pages made to exploit that (100,000 nested `<div>`s, a tag with a
//! million distinct attributes, thousands of unclosed formatting elements) would take minutes or
//! hours. Four guards bound the work:
//!
//! * [`MAX_ATTRIBUTES`]: attributes beyond the 128th on one tag are cut from the text before
//!   tokenizing ([`limit_attributes`]), because the tokenizer's duplicate-attribute check is
//!   quadratic in the attribute count.
//! * [`MAX_OPEN_ELEMENTS`]: a filter between tokenizer and tree builder drops start tags while
//!   the open-element stack plus the list of active formatting elements holds 256 entries
//!   (browsers cap the DOM depth the same way; Blink at 512; real pages stay far below 100).
//!   Void and raw-text elements are always let through, so a `<script>` at the limit still
//!   hides its source.
//! * [`MAX_NODES`]: after two million nodes the rest of the document is not parsed and the
//!   result is marked truncated.
//! * A work budget: each tag costs the number of open and active formatting elements (what
//!   the tree builder's stack scans cost at most), other tokens 1; when the total exceeds
//!   [`WORK_PER_BYTE`] per input byte plus [`WORK_ALLOWANCE`], the rest of the document is
//!   not parsed (truncated). Real pages
//!   use 0.5 per byte on average and 0.9 at most (the 262 HTML pages of the test corpus); a
//!   page of end tags under a deep stack of inline elements uses 64 and took 20 seconds per
//!   10 MB before this guard.

use html5ever::{Attribute, LocalName, QualName, local_name, ns};

mod fast;
mod full;

pub use full::{limit_attributes, parse_with_html5ever};

pub use fast::Unsupported;

/// Attributes kept per element; the rest are cut before tokenizing.
pub const MAX_ATTRIBUTES: usize = 128;
/// Open elements plus active formatting elements above which start tags are dropped.
pub const MAX_OPEN_ELEMENTS: i64 = 256;
/// Nodes (elements, text runs, comments) after which parsing stops.
pub const MAX_NODES: usize = 2_000_000;
/// Parse work allowed per input byte (see the module documentation).
pub const WORK_PER_BYTE: u64 = 8;
/// Parse work allowed on top of [`WORK_PER_BYTE`], so that short documents are never cut.
pub const WORK_ALLOWANCE: u64 = 1_000_000;

pub type NodeId = u32;
const NONE: NodeId = u32::MAX;
pub const DOCUMENT: NodeId = 0;

pub struct Element {
    pub name: QualName,
    /// Only the attributes analysis reads ([`KEPT_ATTRIBUTES`]), at most [`MAX_ATTRIBUTES`].
    pub attrs: Vec<Attribute>,
    /// The element hides its content: a `hidden` attribute, `aria-hidden="true"`, or an
    /// inline style with `display:none` or `visibility:hidden`.
    pub hidden: bool,
    template_contents: NodeId,
    annotation_xml_integration_point: bool,
}

impl Element {
    /// An HTML element as the tree builder's sink makes it, from attributes already reduced
    /// to the kept ones.
    fn html(name: LocalName, attrs: Vec<Attribute>, hidden: bool) -> Element {
        Element::new(QualName::new(None, ns!(html), name), attrs, hidden)
    }

    fn new(name: QualName, attrs: Vec<Attribute>, hidden: bool) -> Element {
        Element {
            name,
            attrs,
            hidden,
            template_contents: NONE,
            annotation_xml_integration_point: false,
        }
    }

    /// The value of an attribute without namespace, by its (lower-case) local name
    /// (`local_name!("href")`: names are interned, so this compares two integers).
    pub fn attr(&self, name: &LocalName) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name.local == *name && a.name.ns == ns!())
            .map(|a| &*a.value)
    }

    /// The element's local name if it is in the HTML namespace.
    pub fn html_name(&self) -> Option<&LocalName> {
        (self.name.ns == ns!(html)).then_some(&self.name.local)
    }
}

pub enum NodeData {
    /// The document, or a template's content fragment.
    Document,
    Element(Element),
    /// Characters, kept in [`Dom::texts`] (one buffer per document instead of a heap string
    /// per text node).
    Text(TextSpan),
    /// Comments, processing instructions: kept as nodes only so the tree builder can move them.
    Other,
}

/// Where a text node's characters are in [`Dom::texts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextSpan {
    start: usize,
    end: usize,
}

impl TextSpan {
    /// A new text node's span: `text` appended to the buffer.
    fn new(texts: &mut String, text: &str) -> TextSpan {
        let start = texts.len();
        texts.push_str(text);
        TextSpan {
            start,
            end: texts.len(),
        }
    }

    /// Appends `text` to this node: in place when the node's characters are the last in the
    /// buffer (nearly always), otherwise moved to the end first.
    fn push(&mut self, texts: &mut String, text: &str) {
        if self.end != texts.len() {
            let start = texts.len();
            texts.extend_from_within(self.start..self.end);
            self.start = start;
        }
        texts.push_str(text);
        self.end = texts.len();
    }
}

pub struct Node {
    pub parent: NodeId,
    pub prev_sibling: NodeId,
    pub next_sibling: NodeId,
    pub first_child: NodeId,
    pub last_child: NodeId,
    pub data: NodeData,
}

impl Node {
    fn new(data: NodeData) -> Node {
        Node {
            parent: NONE,
            prev_sibling: NONE,
            next_sibling: NONE,
            first_child: NONE,
            last_child: NONE,
            data,
        }
    }
}

/// The parsed document. Node 0 is the document; template contents hang off their template
/// element and are not children of it (so a walk over children skips them, as rendering does).
pub struct Dom {
    pub nodes: Vec<Node>,
    /// The characters of the text nodes (see [`TextSpan`]).
    pub texts: String,
    /// Parsing stopped early because of [`MAX_NODES`] or the work budget.
    pub truncated: bool,
    /// Parse work spent (see the module documentation; the fast path counts its own tokens,
    /// and gives up at half the budget).
    pub work: u64,
    /// Start tags dropped because of [`MAX_OPEN_ELEMENTS`].
    pub dropped_start_tags: u64,
    /// Tags whose attributes were cut because of [`MAX_ATTRIBUTES`].
    pub cut_attribute_tags: u64,
}

fn id(x: NodeId) -> Option<usize> {
    (x != NONE).then_some(x as usize)
}

impl Dom {
    /// A text node's characters.
    pub fn text(&self, span: TextSpan) -> &str {
        &self.texts[span.start..span.end]
    }

    pub fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n as usize]
    }

    pub fn element(&self, n: NodeId) -> Option<&Element> {
        match &self.nodes.get(n as usize)?.data {
            NodeData::Element(e) => Some(e),
            _ => None,
        }
    }

    pub fn first_child(&self, n: NodeId) -> Option<NodeId> {
        id(self.nodes[n as usize].first_child).map(|x| x as NodeId)
    }

    pub fn next_sibling(&self, n: NodeId) -> Option<NodeId> {
        id(self.nodes[n as usize].next_sibling).map(|x| x as NodeId)
    }

    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        id(self.nodes[n as usize].parent).map(|x| x as NodeId)
    }
}

fn detach(nodes: &mut [Node], child: NodeId) {
    let c = child as usize;
    let (parent, prev, next) = (
        nodes[c].parent,
        nodes[c].prev_sibling,
        nodes[c].next_sibling,
    );
    if let Some(p) = id(parent) {
        if nodes[p].first_child == child {
            nodes[p].first_child = next;
        }
        if nodes[p].last_child == child {
            nodes[p].last_child = prev;
        }
    }
    if let Some(p) = id(prev) {
        nodes[p].next_sibling = next;
    }
    if let Some(n) = id(next) {
        nodes[n].prev_sibling = prev;
    }
    nodes[c].parent = NONE;
    nodes[c].prev_sibling = NONE;
    nodes[c].next_sibling = NONE;
}

fn append_child(nodes: &mut [Node], parent: NodeId, child: NodeId) {
    detach(nodes, child);
    let last = nodes[parent as usize].last_child;
    nodes[child as usize].parent = parent;
    nodes[child as usize].prev_sibling = last;
    match id(last) {
        Some(l) => nodes[l].next_sibling = child,
        None => nodes[parent as usize].first_child = child,
    }
    nodes[parent as usize].last_child = child;
}

fn insert_before(nodes: &mut [Node], sibling: NodeId, child: NodeId) {
    detach(nodes, child);
    let s = sibling as usize;
    let (parent, prev) = (nodes[s].parent, nodes[s].prev_sibling);
    nodes[child as usize].parent = parent;
    nodes[child as usize].prev_sibling = prev;
    nodes[child as usize].next_sibling = sibling;
    nodes[s].prev_sibling = child;
    match id(prev) {
        Some(p) => nodes[p].next_sibling = child,
        None => {
            if let Some(p) = id(parent) {
                nodes[p].first_child = child;
            }
        }
    }
}

/// The attributes the analysis reads. The sink drops all others (`class`, `id`, event
/// handlers, `data-*`…) as elements are created: the tree builder keeps its own copies of the
/// attributes it needs, and the DOM of a large page shrinks considerably.
pub const KEPT_ATTRIBUTES: [&str; 19] = [
    "href",
    "src",
    "poster",
    "data",
    "rel",
    "type",
    "as",
    "alt",
    "title",
    "aria-label",
    "role",
    "lang",
    "xml:lang",
    "name",
    "property",
    "itemprop",
    "http-equiv",
    "content",
    "charset",
];

fn is_kept(attr: &Attribute) -> bool {
    KEPT_ATTRIBUTES.contains(&&*attr.name.local)
}

/// Whether these attributes hide the element.
fn hides(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| hiding_attribute(&a.name.local, &a.value))
}

/// Whether one attribute hides its element.
fn hiding_attribute(name: &str, value: &str) -> bool {
    match name {
        "hidden" => true,
        "aria-hidden" => value.trim().eq_ignore_ascii_case("true"),
        "style" => style_hides(value),
        _ => false,
    }
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// An inline style that hides the element: a `display:none` or `visibility:hidden`
/// declaration.
pub fn style_hides(style: &str) -> bool {
    if !contains_ignore_case(style, "none") && !contains_ignore_case(style, "hidden") {
        return false;
    }
    let compact: String = style
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    compact.split(';').any(|d| {
        matches!(
            d.trim_end_matches("!important"),
            "display:none" | "visibility:hidden"
        )
    })
}

/// Where two trees differ, or `Ok` when they are the same: the same nodes in the same order,
/// elements with the same name, kept attributes and hidden flag, texts with the same
/// characters. Used to hold the fast path to html5ever's result.
pub fn compare_trees(a: &Dom, b: &Dom) -> Result<(), String> {
    let mut pending = vec![(DOCUMENT, DOCUMENT, 0usize)];
    while let Some((x, y, depth)) = pending.pop() {
        let (nx, ny) = (a.node(x), b.node(y));
        let same = match (&nx.data, &ny.data) {
            (NodeData::Document, NodeData::Document) | (NodeData::Other, NodeData::Other) => true,
            (NodeData::Text(s), NodeData::Text(t)) => a.text(*s) == b.text(*t),
            (NodeData::Element(e), NodeData::Element(f)) => {
                e.name == f.name
                    && e.hidden == f.hidden
                    && e.attrs.len() == f.attrs.len()
                    && e.attrs
                        .iter()
                        .zip(&f.attrs)
                        .all(|(p, q)| p.name == q.name && p.value == q.value)
            }
            _ => false,
        };
        if !same {
            return Err(format!(
                "at depth {depth}: {} against {}",
                describe(a, &nx.data),
                describe(b, &ny.data)
            ));
        }
        let (mut cx, mut cy) = (a.first_child(x), b.first_child(y));
        loop {
            match (cx, cy) {
                (None, None) => break,
                (Some(p), Some(q)) => {
                    pending.push((p, q, depth + 1));
                    cx = a.next_sibling(p);
                    cy = b.next_sibling(q);
                }
                _ => {
                    return Err(format!(
                        "children of {} at depth {depth} differ in number",
                        describe(a, &nx.data)
                    ));
                }
            }
        }
    }
    Ok(())
}

fn describe(dom: &Dom, data: &NodeData) -> String {
    match data {
        NodeData::Document => "the document".into(),
        NodeData::Other => "a comment".into(),
        NodeData::Text(t) => format!(
            "text {:?}",
            dom.text(*t).chars().take(60).collect::<String>()
        ),
        NodeData::Element(e) => {
            let attrs: Vec<String> = e
                .attrs
                .iter()
                .map(|a| format!("{}={:?}", a.name.local, &*a.value))
                .collect();
            format!("<{} {}> hidden={}", e.name.local, attrs.join(" "), e.hidden)
        }
    }
}

/// Start tags that never stay on the stack of open elements for long: void elements close
/// at once, raw-text elements at their own end tag (and dropping `<script>` would turn its
/// source into visible text).
fn always_forwarded(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("frame")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("keygen")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("param")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
            | local_name!("script")
            | local_name!("style")
            | local_name!("xmp")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("textarea")
            | local_name!("title")
            | local_name!("plaintext")
    )
}

/// Parses an HTML document (already decoded) into a [`Dom`]: by the fast path when the
/// document keeps to what it implements, otherwise by html5ever with the guards described in
/// the module documentation. Both give the same tree.
pub fn parse(html: &str) -> Dom {
    fast::parse(html).unwrap_or_else(|_| parse_with_html5ever(html))
}

/// The fast path alone (`fast`): the tree html5ever would build, or the reason it gives
/// the document up. Public for the equivalence test and the benchmark.
pub fn parse_fast(html: &str) -> Result<Dom, Unsupported> {
    fast::parse(html)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn text_of(dom: &Dom) -> String {
        dom.nodes
            .iter()
            .filter_map(|n| match &n.data {
                NodeData::Text(t) => Some(dom.text(*t)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn parses_a_simple_document() {
        let dom = parse("<title>T</title><p>Hello <b>world</b>");
        assert!(!dom.truncated);
        assert_eq!(text_of(&dom), "THello world");
        let names: Vec<&str> = dom
            .nodes
            .iter()
            .filter_map(|n| match &n.data {
                NodeData::Element(e) => Some(&*e.name.local),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["html", "head", "title", "body", "p", "b"]);
    }

    #[test]
    fn attributes_beyond_the_limit_are_cut() {
        let mut html = String::from("<p");
        for i in 0..200 {
            html.push_str(&format!(" a{i}=\"v\""));
        }
        html.push_str(" title='x'>text</p><script>if (a<b c d) {}</script>");
        let (limited, cuts) = limit_attributes(&html);
        assert_eq!(cuts, 1);
        assert!(limited.contains(" a127=\"v\""));
        assert!(!limited.contains("a128"));
        assert!(limited.ends_with(">text</p><script>if (a<b c d) {}</script>"));
        // The title beyond the limit is gone.
        let dom = parse(&html);
        let p = dom.nodes.iter().find_map(|n| match &n.data {
            NodeData::Element(e) if &*e.name.local == "p" => Some(e),
            _ => None,
        });
        assert_eq!(p.map(|e| e.attr(&local_name!("title"))), Some(None));
        assert_eq!(dom.cut_attribute_tags, 1);
    }

    #[test]
    fn hiding_styles() {
        assert!(style_hides("color: red; DISPLAY : none"));
        assert!(style_hides("visibility:hidden !important"));
        assert!(!style_hides("overflow: hidden; border: none"));
    }

    #[test]
    fn only_read_attributes_are_kept() {
        let dom =
            parse("<a href=/x class=big id=a1 onclick=go() data-x=1 style='display:none'>x</a>");
        let a = dom.nodes.iter().find_map(|n| match &n.data {
            NodeData::Element(e) if &*e.name.local == "a" => Some(e),
            _ => None,
        });
        let a = a.expect("an a element");
        assert_eq!(a.attrs.len(), 1);
        assert_eq!(a.attr(&local_name!("href")), Some("/x"));
        assert!(a.hidden);
    }

    #[test]
    fn untouched_text_is_borrowed() {
        let html = "<!-- <a b c> --><script>x<y</script><p class=a>hi";
        assert!(matches!(limit_attributes(html), (Cow::Borrowed(_), 0)));
    }

    #[test]
    fn deep_nesting_is_capped() {
        let html = "<div>".repeat(100_000) + "deep text" + &"</div>".repeat(100_000);
        let dom = parse(&html);
        assert!(dom.dropped_start_tags > 99_000);
        assert_eq!(text_of(&dom), "deep text");
        // Depth of the text node.
        let text = dom
            .nodes
            .iter()
            .position(|n| matches!(n.data, NodeData::Text(_)));
        let mut depth = 0;
        let mut at = text.map(|t| t as NodeId);
        while let Some(n) = at {
            at = dom.parent(n);
            depth += 1;
        }
        assert!(depth <= MAX_OPEN_ELEMENTS as usize + 2, "depth {depth}");
    }
}
