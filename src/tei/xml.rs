//! A small element tree built from quick-xml events, with the few queries the TEI
//! converter needs (ElementTree-like paths, text gathering).
//!
//! Why a tree and not a streaming pass: the conversion asks overlapping questions
//! ("first `date[@type=published]` anywhere in the header", "all authors below this
//! biblStruct", "all text below body") that are simple on a tree and fiddly on a
//! stream. GROBID output is at most a few MB, so the tree is cheap.
//!
//! The tree lives in one arena (`Vec<Element>`) and every walk is iterative, so neither
//! building, querying nor dropping a deeply nested hostile document can overflow the
//! stack.

use std::ops::ControlFlow;

use quick_xml::errors::{Error as XmlError, IllFormedError};
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

use super::error::{TeiError, TeiErrorKind};

/// The TEI namespace GROBID writes.
pub(crate) const TEI_NS: &str = "http://www.tei-c.org/ns/1.0";

/// Index of an element in [`Document::elements`].
pub(crate) type ElementId = usize;

pub(crate) struct Element {
    /// Local name (prefix removed).
    pub name: Box<str>,
    /// In the TEI namespace, or in no namespace at all (tools that strip namespaces);
    /// only such elements match queries, as in an ElementTree `{tei-ns}name` lookup.
    pub in_tei: bool,
    /// Attributes by qualified name as written (`type`, `xml:id`), values unescaped.
    pub attributes: Vec<(Box<str>, Box<str>)>,
    pub children: Vec<Node>,
    /// Byte offset of the start tag (`<`) in the input.
    pub offset: u64,
}

pub(crate) enum Node {
    Element(ElementId),
    /// Character data between two tags (entity references resolved, adjacent pieces and
    /// CDATA merged, comments dropped — as a DOM/ElementTree builder does).
    Text(String),
}

pub(crate) enum Visit<'a> {
    Element(ElementId),
    Text(&'a str),
}

pub(crate) struct Document {
    pub elements: Vec<Element>,
    pub root: ElementId,
}

/// Parses `xml` (UTF-8, optional BOM) into a tree. Every failure carries the byte offset
/// in `xml` and a reason.
pub(crate) fn parse(xml: &[u8]) -> Result<Document, TeiError> {
    if xml.starts_with(&[0xFF, 0xFE]) || xml.starts_with(&[0xFE, 0xFF]) {
        return Err(TeiError::new(
            TeiErrorKind::NotUtf8,
            0,
            "input is UTF-16 (byte order mark); GROBID TEI is expected in UTF-8",
        ));
    }
    let bom = if xml.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let text = std::str::from_utf8(&xml[bom..]).map_err(|e| {
        TeiError::new(
            TeiErrorKind::NotUtf8,
            (bom + e.valid_up_to()) as u64,
            "invalid UTF-8 byte sequence",
        )
    })?;
    let base = bom as u64;
    let Some(first) = text.find(|c: char| !c.is_whitespace()) else {
        return Err(TeiError::new(
            TeiErrorKind::Empty,
            0,
            "input is empty or only whitespace",
        ));
    };
    if !text[first..].starts_with('<') {
        return Err(TeiError::new(
            TeiErrorKind::NotXml,
            base + first as u64,
            format!(
                "input starts with text, not markup: {:?}",
                snippet(&text[first..], 120)
            ),
        ));
    }
    Builder::new(text, base).run()
}

/// At most `max` characters of `s`, whitespace collapsed, for error messages.
fn snippet(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, word) in s.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() >= max {
            let cut: String = out.chars().take(max).collect();
            return cut + "…";
        }
    }
    out
}

struct Builder<'a> {
    reader: NsReader<&'a [u8]>,
    base: u64,
    len: u64,
    elements: Vec<Element>,
    stack: Vec<ElementId>,
    root: Option<ElementId>,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str, base: u64) -> Self {
        let mut reader = NsReader::from_str(text);
        // Defaults already check end-tag names; say so explicitly since we rely on it.
        reader.config_mut().check_end_names = true;
        Builder {
            reader,
            base,
            len: text.len() as u64,
            elements: Vec::new(),
            stack: Vec::new(),
            root: None,
        }
    }

    fn error(&self, kind: TeiErrorKind, position: u64, reason: impl Into<String>) -> TeiError {
        TeiError::new(kind, self.base + position, reason)
    }

    fn run(mut self) -> Result<Document, TeiError> {
        loop {
            let before = self.reader.buffer_position();
            let (in_tei, event) = match self.reader.read_resolved_event() {
                Ok((ns, event)) => {
                    let in_tei = match ns {
                        ResolveResult::Bound(ns) => ns.0 == TEI_NS,
                        ResolveResult::Unbound => true,
                        ResolveResult::Unknown(_) => false,
                    };
                    (in_tei, event)
                }
                Err(e) => return Err(self.xml_error(&e, before)),
            };
            match event {
                Event::Start(start) => {
                    let id = self.open(&start, in_tei, before)?;
                    self.stack.push(id);
                }
                Event::Empty(start) => {
                    self.open(&start, in_tei, before)?;
                }
                Event::End(_) => {
                    // quick-xml has already checked that the name matches.
                    self.stack.pop();
                }
                Event::Text(t) => {
                    let content = t.xml10_content();
                    self.add_text(&content, before)?;
                }
                Event::CData(c) => {
                    let content = c.xml10_content();
                    self.add_text(&content, before)?;
                }
                Event::GeneralRef(r) => {
                    let resolved = match r.resolve_char_ref() {
                        Ok(Some(ch)) => ch,
                        Ok(None) => match predefined_entity(&r) {
                            Some(ch) => ch,
                            None => {
                                return Err(self.error(
                                    TeiErrorKind::Malformed,
                                    before,
                                    format!("unknown entity reference &{};", &*r),
                                ));
                            }
                        },
                        Err(e) => {
                            return Err(self.error(
                                TeiErrorKind::Malformed,
                                before,
                                format!("bad character reference &{};: {e}", &*r),
                            ));
                        }
                    };
                    let mut buf = [0u8; 4];
                    self.add_text(resolved.encode_utf8(&mut buf), before)?;
                }
                Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_) => {}
                Event::Eof => break,
            }
        }
        if let Some(&open) = self.stack.last() {
            let element = &self.elements[open];
            return Err(self.error(
                TeiErrorKind::Truncated,
                self.len,
                format!(
                    "input ends inside <{}> opened at byte {} ({} element(s) left open)",
                    element.name,
                    element.offset,
                    self.stack.len()
                ),
            ));
        }
        match self.root {
            Some(root) => Ok(Document {
                elements: self.elements,
                root,
            }),
            None => Err(self.error(TeiErrorKind::NotXml, 0, "no root element")),
        }
    }

    fn xml_error(&self, e: &XmlError, event_start: u64) -> TeiError {
        let position = match e {
            // Namespace errors (too deep, bad prefix) do not set quick-xml's error
            // position; the tag starts where the event started.
            XmlError::Namespace(_) => event_start,
            _ => self.reader.error_position(),
        };
        let kind = match e {
            // quick-xml reports these when the input ends inside a piece of markup.
            XmlError::Syntax(_) | XmlError::IllFormed(IllFormedError::UnclosedReference) => {
                TeiErrorKind::Truncated
            }
            _ => TeiErrorKind::Malformed,
        };
        self.error(kind, position, e.to_string())
    }

    /// Creates the element for a start (or empty) tag and links it to its parent.
    fn open(&mut self, start: &BytesStart, in_tei: bool, at: u64) -> Result<ElementId, TeiError> {
        let offset = self.base + at;
        let mut attributes = Vec::new();
        for attr in start.attributes() {
            let attr = attr.map_err(|e| {
                self.error(
                    TeiErrorKind::Malformed,
                    at,
                    format!("bad attribute in <{}>: {e}", start.name().as_ref()),
                )
            })?;
            let value = attr
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| {
                    self.error(
                        TeiErrorKind::Malformed,
                        at,
                        format!(
                            "bad value of attribute {} in <{}>: {e}",
                            attr.key.as_ref(),
                            start.name().as_ref()
                        ),
                    )
                })?;
            attributes.push((Box::from(attr.key.as_ref()), Box::from(value.as_ref())));
        }
        let id = self.elements.len();
        self.elements.push(Element {
            name: Box::from(start.local_name().as_ref()),
            in_tei,
            attributes,
            children: Vec::new(),
            offset,
        });
        match self.stack.last() {
            Some(&parent) => self.elements[parent].children.push(Node::Element(id)),
            None => {
                if let Some(root) = self.root {
                    return Err(self.error(
                        TeiErrorKind::Malformed,
                        at,
                        format!(
                            "second root element <{}> after <{}>",
                            start.name().as_ref(),
                            self.elements[root].name
                        ),
                    ));
                }
                self.root = Some(id);
            }
        }
        Ok(id)
    }

    fn add_text(&mut self, content: &str, at: u64) -> Result<(), TeiError> {
        if content.is_empty() {
            return Ok(());
        }
        let Some(&parent) = self.stack.last() else {
            if content.chars().all(char::is_whitespace) {
                return Ok(());
            }
            let what = if self.root.is_some() {
                "after the root element"
            } else {
                "before the root element"
            };
            return Err(self.error(
                TeiErrorKind::Malformed,
                at,
                format!("text {what}: {:?}", snippet(content, 80)),
            ));
        };
        let children = &mut self.elements[parent].children;
        if let Some(Node::Text(previous)) = children.last_mut() {
            previous.push_str(content);
        } else {
            children.push(Node::Text(content.to_string()));
        }
        Ok(())
    }
}

fn predefined_entity(name: &str) -> Option<char> {
    match name {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "apos" => Some('\''),
        "quot" => Some('"'),
        _ => None,
    }
}

impl Document {
    pub fn element(&self, id: ElementId) -> &Element {
        &self.elements[id]
    }

    /// True when `id` is a TEI element called `name`.
    pub fn is(&self, id: ElementId, name: &str) -> bool {
        let e = &self.elements[id];
        e.in_tei && &*e.name == name
    }

    pub fn attr(&self, id: ElementId, name: &str) -> Option<&str> {
        self.elements[id]
            .attributes
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| &**v)
    }

    /// Element children of `id`, in order.
    pub fn child_elements(&self, id: ElementId) -> impl Iterator<Item = ElementId> + '_ {
        self.elements[id].children.iter().filter_map(|n| match n {
            Node::Element(c) => Some(*c),
            Node::Text(_) => None,
        })
    }

    /// Element children of `id` that are TEI elements called `name`.
    pub fn children_named<'s>(
        &'s self,
        id: ElementId,
        name: &'s str,
    ) -> impl Iterator<Item = ElementId> + 's {
        self.child_elements(id).filter(move |&c| self.is(c, name))
    }

    pub fn child(&self, id: ElementId, name: &str) -> Option<ElementId> {
        self.children_named(id, name).next()
    }

    /// Visits everything below `id` (not `id` itself) in document order; stops early
    /// when `f` breaks.
    pub fn walk<'s, B>(
        &'s self,
        id: ElementId,
        mut f: impl FnMut(Visit<'s>) -> ControlFlow<B>,
    ) -> Option<B> {
        let mut stack: Vec<(ElementId, usize)> = vec![(id, 0)];
        while let Some(top) = stack.last_mut() {
            let (current, index) = *top;
            let Some(node) = self.elements[current].children.get(index) else {
                stack.pop();
                continue;
            };
            top.1 += 1;
            let flow = match node {
                Node::Element(child) => {
                    stack.push((*child, 0));
                    f(Visit::Element(*child))
                }
                Node::Text(text) => f(Visit::Text(text)),
            };
            if let ControlFlow::Break(b) = flow {
                return Some(b);
            }
        }
        None
    }

    /// All TEI elements called `name` below `id`, in document order.
    pub fn descendants_named(&self, id: ElementId, name: &str) -> Vec<ElementId> {
        let mut found = Vec::new();
        self.walk::<()>(id, |v| {
            if let Visit::Element(e) = v
                && self.is(e, name)
            {
                found.push(e);
            }
            ControlFlow::Continue(())
        });
        found
    }

    /// Every element matching the ElementTree path `.//a/b/…` below `id` (first step
    /// anywhere below, further steps as children), whose last element satisfies `keep`.
    pub fn find_all(
        &self,
        id: ElementId,
        path: &[&str],
        keep: impl Fn(ElementId) -> bool,
    ) -> Vec<ElementId> {
        let Some((first, rest)) = path.split_first() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for start in self.descendants_named(id, first) {
            let mut level = vec![start];
            for step in rest {
                level = level
                    .iter()
                    .flat_map(|&e| self.children_named(e, step))
                    .collect();
            }
            found.extend(level.into_iter().filter(|&e| keep(e)));
        }
        found
    }

    /// First element matching `.//a/b/…` (see [`Document::find_all`]), in the same
    /// order, stopping at the first hit.
    pub fn find(
        &self,
        id: ElementId,
        path: &[&str],
        keep: impl Fn(ElementId) -> bool,
    ) -> Option<ElementId> {
        let (first, rest) = path.split_first()?;
        self.walk(id, |v| match v {
            Visit::Element(e) if self.is(e, first) => match self.first_below(e, rest, &keep) {
                Some(hit) => ControlFlow::Break(hit),
                None => ControlFlow::Continue(()),
            },
            _ => ControlFlow::Continue(()),
        })
    }

    /// First element reached from `e` by the child steps `rest` that satisfies `keep`
    /// (recursion depth = path length, a handful).
    fn first_below(
        &self,
        e: ElementId,
        rest: &[&str],
        keep: &impl Fn(ElementId) -> bool,
    ) -> Option<ElementId> {
        match rest.split_first() {
            None => keep(e).then_some(e),
            Some((step, more)) => self
                .children_named(e, step)
                .find_map(|c| self.first_below(c, more, keep)),
        }
    }

    /// The text nodes below `id`, in document order.
    pub fn text_nodes(&self, id: ElementId) -> Vec<&str> {
        let mut texts = Vec::new();
        self.walk::<()>(id, |v| {
            if let Visit::Text(t) = v {
                texts.push(t);
            }
            ControlFlow::Continue(())
        });
        texts
    }

    /// All text below `id` concatenated as is.
    pub fn text(&self, id: ElementId) -> String {
        self.text_nodes(id).concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(xml: &str) -> TeiError {
        match parse(xml.as_bytes()) {
            Ok(_) => panic!("expected an error for {xml:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn text_is_merged_across_references_cdata_and_comments() {
        let doc = parse(b"<a>x &amp; y<!-- c --> z<![CDATA[<w>]]>&#x41;<b>q</b>r</a>").unwrap();
        let root = doc.root;
        let texts = doc.text_nodes(root);
        assert_eq!(texts, vec!["x & y z<w>A", "q", "r"]);
    }

    #[test]
    fn namespaces_decide_what_matches() {
        let doc = parse(
            br#"<TEI xmlns="http://www.tei-c.org/ns/1.0" xmlns:m="urn:other"><title>a</title><m:title>b</m:title><x xmlns="urn:other"><title>c</title></x></TEI>"#,
        )
        .unwrap();
        let titles = doc.descendants_named(doc.root, "title");
        assert_eq!(titles.len(), 1);
        assert_eq!(doc.text(titles[0]), "a");
        // Text of foreign elements still counts as text of their ancestors.
        assert_eq!(doc.text(doc.root), "abc");
    }

    #[test]
    fn attributes_are_unescaped() {
        let doc = parse(br#"<a t="x &amp; &#65;" xml:id="b0"/>"#).unwrap();
        assert_eq!(doc.attr(doc.root, "t"), Some("x & A"));
        assert_eq!(doc.attr(doc.root, "xml:id"), Some("b0"));
    }

    #[test]
    fn find_follows_elementtree_paths() {
        let doc = parse(b"<r><x><a><b>1</b></a></x><a><c/><b>2</b></a></r>").unwrap();
        let all = doc.find_all(doc.root, &["a", "b"], |_| true);
        assert_eq!(
            all.iter().map(|&e| doc.text(e)).collect::<Vec<_>>(),
            ["1", "2"]
        );
        let first = doc.find(doc.root, &["a", "b"], |_| true).unwrap();
        assert_eq!(doc.text(first), "1");
        let second = doc.find(doc.root, &["a", "b"], |e| doc.text(e) == "2");
        assert_eq!(second, Some(all[1]));
        assert_eq!(doc.find(doc.root, &["a", "c", "d"], |_| true), None);
        assert_eq!(doc.find(doc.root, &[], |_| true), None);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let nested = |depth: usize| {
            let mut xml = String::new();
            for _ in 0..depth {
                xml.push_str("<a>");
            }
            xml.push('x');
            for _ in 0..depth {
                xml.push_str("</a>");
            }
            xml
        };
        let xml = nested(60_000);
        let doc = parse(xml.as_bytes()).unwrap();
        assert_eq!(doc.text(doc.root), "x");
        assert_eq!(doc.descendants_named(doc.root, "a").len(), 59_999);
        // Truncated variant.
        let e = err(&xml[..xml.len() - 4]);
        assert_eq!(e.kind, TeiErrorKind::Truncated);
        // quick-xml's namespace resolver stops at 65535 levels: an error, not a crash.
        let e = err(&nested(70_000));
        assert_eq!(e.kind, TeiErrorKind::Malformed);
        assert!(e.position > 0, "{e}");
    }

    #[test]
    fn errors_carry_position_and_reason() {
        let e = err("");
        assert_eq!((e.kind, e.position), (TeiErrorKind::Empty, 0));

        let e = err("  [NO_BLOCKS] PDF parsing resulted in empty content");
        assert_eq!((e.kind, e.position), (TeiErrorKind::NotXml, 2));
        assert!(e.reason.contains("NO_BLOCKS"), "{e}");

        let e = err("<a><b></a>");
        assert_eq!(e.kind, TeiErrorKind::Malformed);
        assert_eq!(e.position, 6, "{e}");

        let e = err("<a><b>text");
        assert_eq!(e.kind, TeiErrorKind::Truncated);
        assert_eq!(e.position, 10);
        assert!(e.reason.contains("<b> opened at byte 3"), "{e}");

        let e = err("<a><b attr=\"x");
        assert_eq!(e.kind, TeiErrorKind::Truncated);
        assert_eq!(e.position, 3, "{e}");

        let e = err("<a>&nbsp;</a>");
        assert_eq!((e.kind, e.position), (TeiErrorKind::Malformed, 3));

        let e = err("<a/><b/>");
        assert_eq!((e.kind, e.position), (TeiErrorKind::Malformed, 4));

        let e = err("<a/>junk");
        assert_eq!((e.kind, e.position), (TeiErrorKind::Malformed, 4));

        let e = parse(b"<a>\xC3\x28</a>").err().unwrap();
        assert_eq!((e.kind, e.position), (TeiErrorKind::NotUtf8, 3));

        let e = parse(b"\xEF\xBB\xBF<a>\xFF</a>").err().unwrap();
        assert_eq!((e.kind, e.position), (TeiErrorKind::NotUtf8, 6));

        let e = parse(b"\xEF\xBB\xBF<a></b>").err().unwrap();
        assert_eq!(e.kind, TeiErrorKind::Malformed);
        assert_eq!(e.position, 6, "{e}");
    }
}
