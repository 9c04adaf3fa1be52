//! The fast builder's tree operations: inserting nodes, the stack of open elements and its
//! scopes, the list of active formatting elements. Each follows the html5ever function of the
//! same purpose, for the cases the fast path accepts.

use html5ever::{Attribute, LocalName, QualName, local_name, namespace_prefix, ns};

use super::tokenizer::{RawKind, Unsupported};
use super::{
    Builder, Formatting, Mode, Open, Scope, TagInfo, cursory_implied_end, special, table_outer,
};
use crate::html::dom::{
    DOCUMENT, Element, NONE, Node, NodeData, NodeId, TextSpan, append_child, insert_before,
};

enum Place {
    LastChild(NodeId),
    Before(NodeId),
}

impl Builder {
    fn new_node(&mut self, data: NodeData) -> NodeId {
        self.nodes.push(Node::new(data));
        (self.nodes.len() - 1) as NodeId
    }

    pub(super) fn current(&self) -> NodeId {
        self.open.last().map_or(DOCUMENT, |o| o.node)
    }

    pub(super) fn current_is(&self, name: &LocalName) -> bool {
        self.open.last().is_some_and(|o| o.is(name))
    }

    /// Whether the current node is an HTML element of `set`.
    pub(super) fn current_in(&self, set: fn(&LocalName) -> bool) -> bool {
        self.open.last().is_some_and(|o| o.html_in(set))
    }

    /// Creates an element and appends it to the current node, without pushing it.
    fn append_element(&mut self, name: LocalName, attrs: Vec<Attribute>, hidden: bool) -> NodeId {
        let node = self.new_node(NodeData::Element(html_element(name, attrs, hidden)));
        self.place(node);
        node
    }

    /// Where the next node goes: the current node's last child, or, while content is
    /// foster-parented out of a table, just before the table.
    fn insertion_place(&self) -> Place {
        if !(self.foster_parenting && self.current_in(table_outer)) {
            return Place::LastChild(self.current());
        }
        let Some(at) = self.open.iter().rposition(|o| o.is(&local_name!("table"))) else {
            return Place::LastChild(self.open.first().map_or(DOCUMENT, |o| o.node));
        };
        let table = self.open[at].node;
        if self.nodes[table as usize].parent != NONE {
            Place::Before(table)
        } else {
            Place::LastChild(self.open[at - 1].node)
        }
    }

    fn place(&mut self, node: NodeId) {
        match self.insertion_place() {
            Place::LastChild(parent) => append_child(&mut self.nodes, parent, node),
            Place::Before(sibling) => insert_before(&mut self.nodes, sibling, node),
        }
    }

    fn insert_named(&mut self, name: LocalName, attrs: Vec<Attribute>, hidden: bool) -> NodeId {
        let node = self.append_element(name.clone(), attrs, hidden);
        self.open.push(Open {
            node,
            name,
            svg: false,
        });
        node
    }

    /// Inserts an SVG element (pushed unless the tag closed itself).
    pub(super) fn insert_svg(&mut self, name: LocalName, tag: &TagInfo) {
        let attrs = foreign_attributes(&tag.attrs);
        let element = Element::new(
            QualName::new(None, ns!(svg), name.clone()),
            attrs,
            tag.hidden,
        );
        let node = self.new_node(NodeData::Element(element));
        self.place(node);
        if !tag.self_closing {
            self.open.push(Open {
                node,
                name,
                svg: true,
            });
        }
    }

    /// Inserts an element for the current tag and pushes it.
    pub(super) fn insert(&mut self, tag: &TagInfo) -> NodeId {
        self.insert_named(tag.name.clone(), tag.attrs.clone(), tag.hidden)
    }

    pub(super) fn insert_phantom(&mut self, name: LocalName) -> NodeId {
        self.insert_named(name, Vec::new(), false)
    }

    pub(super) fn insert_and_pop(&mut self, tag: &TagInfo) -> NodeId {
        self.append_element(tag.name.clone(), tag.attrs.clone(), tag.hidden)
    }

    pub(super) fn create_root(&mut self, attrs: Vec<Attribute>, hidden: bool) {
        let node = self.new_node(NodeData::Element(html_element(
            local_name!("html"),
            attrs,
            hidden,
        )));
        append_child(&mut self.nodes, DOCUMENT, node);
        self.open.push(Open {
            node,
            name: local_name!("html"),
            svg: false,
        });
    }

    pub(super) fn append_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        // A text node next to where the text goes takes it.
        let neighbour = match self.insertion_place() {
            Place::LastChild(parent) => self.nodes[parent as usize].last_child,
            Place::Before(sibling) => self.nodes[sibling as usize].prev_sibling,
        };
        if let Some(Node {
            data: NodeData::Text(t),
            ..
        }) = self.nodes.get_mut(neighbour as usize)
        {
            t.push(&mut self.texts, text);
            return;
        }
        let span = TextSpan::new(&mut self.texts, text);
        let node = self.new_node(NodeData::Text(span));
        self.place(node);
    }

    pub(super) fn comment_here(&mut self) {
        let node = self.new_node(NodeData::Other);
        self.place(node);
    }

    pub(super) fn comment_in(&mut self, parent: NodeId) {
        let node = self.new_node(NodeData::Other);
        append_child(&mut self.nodes, parent, node);
    }

    /// Inserts the current tag as a raw-text element (`title`, `script`, `style`…) and has
    /// the tokenizer read its content as such.
    pub(super) fn parse_raw(&mut self, tag: &TagInfo, kind: RawKind) {
        self.insert(tag);
        self.original_mode = self.mode;
        self.mode = Mode::Text;
        self.raw_request = Some(kind);
    }

    /// Whether an HTML element matching `target` is in `scope`.
    pub(super) fn in_scope(&self, target: impl Fn(&LocalName) -> bool, scope: Scope) -> bool {
        for open in self.open.iter().rev() {
            if !open.svg && target(&open.name) {
                return true;
            }
            if scope.bounded_by(open) {
                return false;
            }
        }
        false
    }

    pub(super) fn in_scope_named(&self, name: &LocalName, scope: Scope) -> bool {
        self.in_scope(|n| n == name, scope)
    }

    /// Pops elements until one matching `target` has been popped.
    pub(super) fn pop_until(&mut self, target: impl Fn(&LocalName) -> bool) {
        while let Some(open) = self.open.pop() {
            if !open.svg && target(&open.name) {
                break;
            }
        }
    }

    pub(super) fn pop_until_named(&mut self, name: &LocalName) {
        self.pop_until(|n| n == name);
    }

    /// Pops elements until the current one matches `set`.
    pub(super) fn pop_until_current(&mut self, set: fn(&LocalName) -> bool) {
        while self.open.last().is_some_and(|o| !o.html_in(set)) {
            self.open.pop();
        }
    }

    /// Generates implied end tags, except for `except`.
    pub(super) fn generate_implied_end(&mut self, except: Option<&LocalName>) {
        while let Some(open) = self.open.last() {
            if !open.html_in(cursory_implied_end) || except.is_some_and(|e| open.is(e)) {
                return;
            }
            self.open.pop();
        }
    }

    pub(super) fn close_p(&mut self) {
        self.generate_implied_end(Some(&local_name!("p")));
        self.pop_until_named(&local_name!("p"));
    }

    pub(super) fn close_p_in_button_scope(&mut self) {
        if self.in_scope_named(&local_name!("p"), Scope::Button) {
            self.close_p();
        }
    }

    fn is_open(&self, node: NodeId) -> bool {
        self.open.iter().rev().any(|o| o.node == node)
    }

    fn is_marker_or_open(&self, entry: &Formatting) -> bool {
        match entry {
            Formatting::Marker => true,
            Formatting::Element { node, .. } => self.is_open(*node),
        }
    }

    /// Reconstructs the active formatting elements: reopens, as new elements, those closed
    /// by an end tag of an enclosing element (`<b>x</p>y` gives `y` a `<b>` of its own).
    pub(super) fn reconstruct(&mut self) {
        let Some(last) = self.formatting.last() else {
            return;
        };
        if self.is_marker_or_open(last) {
            return;
        }
        let mut index = self.formatting.len() - 1;
        while index > 0 {
            index -= 1;
            if self.is_marker_or_open(&self.formatting[index]) {
                index += 1;
                break;
            }
        }
        for at in index..self.formatting.len() {
            let Formatting::Element { node, name } = &self.formatting[at] else {
                continue;
            };
            // The new element is a copy of the entry's.
            let (attrs, hidden) = match &self.nodes[*node as usize].data {
                NodeData::Element(e) => (e.attrs.clone(), e.hidden),
                _ => (Vec::new(), false),
            };
            let node = self.insert_named(name.clone(), attrs, hidden);
            if let Formatting::Element { node: entry, .. } = &mut self.formatting[at] {
                *entry = node;
            }
        }
    }

    pub(super) fn clear_formatting_to_marker(&mut self) {
        while let Some(entry) = self.formatting.pop() {
            if matches!(entry, Formatting::Marker) {
                break;
            }
        }
    }

    /// Entries after the last marker, newest first, with their indexes.
    fn formatting_to_marker(&self) -> impl Iterator<Item = (usize, &Formatting)> {
        self.formatting
            .iter()
            .enumerate()
            .rev()
            .take_while(|(_, f)| !matches!(f, Formatting::Marker))
    }

    fn formatting_named(&self, name: &LocalName) -> Option<(usize, NodeId)> {
        self.formatting_to_marker().find_map(|(i, f)| match f {
            Formatting::Element { node, name: n, .. } if n == name => Some((i, *node)),
            _ => None,
        })
    }

    /// Inserts a formatting element (`b`, `a`, `code`…) and adds it to the list.
    pub(super) fn insert_formatting(&mut self, tag: &TagInfo) -> Result<(), Unsupported> {
        self.reconstruct();
        // Three equal entries would make the oldest drop out, and "equal" compares all the
        // attributes, of which this path keeps only some.
        let same = self
            .formatting_to_marker()
            .filter(|(_, f)| matches!(f, Formatting::Element { name, .. } if *name == tag.name))
            .count();
        if same >= 3 {
            return Err(Unsupported("three equal formatting elements"));
        }
        let node = self.insert(tag);
        self.formatting.push(Formatting::Element {
            node,
            name: tag.name.clone(),
        });
        Ok(())
    }

    /// An `<a>` while another is active closes the other first (html5ever's
    /// `handle_misnested_a_tags`).
    pub(super) fn close_open_a(&mut self) -> Result<(), Unsupported> {
        let Some((_, node)) = self.formatting_named(&local_name!("a")) else {
            return Ok(());
        };
        self.adoption_agency(&local_name!("a"))?;
        if let Some(entry) = self
            .formatting
            .iter()
            .position(|f| matches!(f, Formatting::Element { node: n, .. } if *n == node))
        {
            self.formatting.remove(entry);
        }
        if let Some(at) = self.open.iter().rposition(|o| o.node == node) {
            self.open.remove(at);
        }
        Ok(())
    }

    /// Adds the tag's attributes an element lacks (a second `<html>` or `<body>` tag).
    pub(super) fn add_attributes_if_missing(&mut self, node: NodeId, tag: &TagInfo) {
        if let NodeData::Element(element) = &mut self.nodes[node as usize].data {
            element.hidden |= tag.hidden;
            for attr in &tag.attrs {
                if attr.name.local.starts_with("xlink:") {
                    continue;
                }
                if !element.attrs.iter().any(|a| a.name == attr.name) {
                    element.attrs.push(attr.clone());
                }
            }
        }
    }

    /// The adoption agency algorithm, for the end tag of formatting element `name`, when no
    /// reparenting is needed.
    pub(super) fn adoption_agency(&mut self, name: &LocalName) -> Result<(), Unsupported> {
        if self.current_is(name) {
            let current = self.current();
            let listed = self
                .formatting
                .iter()
                .any(|f| matches!(f, Formatting::Element { node, .. } if *node == current));
            if !listed {
                self.open.pop();
                return Ok(());
            }
        }
        let Some((entry, node)) = self.formatting_named(name) else {
            self.end_tag_in_body(name);
            return Ok(());
        };
        let Some(at) = self.open.iter().rposition(|o| o.node == node) else {
            self.formatting.remove(entry);
            return Ok(());
        };
        if !self.node_in_default_scope(node) {
            return Ok(());
        }
        if self.open[at..].iter().any(|o| o.html_in(special)) {
            return Err(Unsupported("misnested formatting element"));
        }
        self.open.truncate(at);
        self.formatting.remove(entry);
        Ok(())
    }

    fn node_in_default_scope(&self, node: NodeId) -> bool {
        for open in self.open.iter().rev() {
            if open.node == node {
                return true;
            }
            if Scope::Default.bounded_by(open) {
                return false;
            }
        }
        false
    }

    /// "Any other end tag" in body.
    pub(super) fn end_tag_in_body(&mut self, name: &LocalName) {
        for at in (0..self.open.len()).rev() {
            if self.open[at].is(name) {
                self.open.truncate(at);
                return;
            }
            if self.open[at].html_in(special) {
                return;
            }
        }
    }

    /// Resets the insertion mode from the stack of open elements.
    pub(super) fn reset_mode(&self) -> Result<Mode, Unsupported> {
        for (i, open) in self.open.iter().enumerate().rev() {
            let last = i == 0;
            let Some(name) = open.html_name() else {
                continue;
            };
            match *name {
                local_name!("td") | local_name!("th") if !last => return Ok(Mode::InCell),
                local_name!("tr") => return Ok(Mode::InRow),
                local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => {
                    return Ok(Mode::InTableBody);
                }
                local_name!("caption") => return Ok(Mode::InCaption),
                local_name!("colgroup") => return Ok(Mode::InColumnGroup),
                local_name!("table") => return Ok(Mode::InTable),
                local_name!("template") | local_name!("frameset") => {
                    return Err(Unsupported("template or frameset"));
                }
                local_name!("head") if !last => return Ok(Mode::InHead),
                local_name!("body") => return Ok(Mode::InBody),
                local_name!("html") => {
                    return Ok(if self.head.is_none() {
                        Mode::BeforeHead
                    } else {
                        Mode::AfterHead
                    });
                }
                _ => {}
            }
        }
        Ok(Mode::InBody)
    }
}

/// An HTML element. Names such as `xlink:href` are read for SVG only: HTML elements do not
/// keep them.
fn html_element(name: LocalName, mut attrs: Vec<Attribute>, hidden: bool) -> Element {
    attrs.retain(|a| !a.name.local.starts_with("xlink:"));
    Element::html(name, attrs, hidden)
}

/// The attributes of a foreign element, with the names html5ever adjusts: `xml:lang` and the
/// `xlink:` ones get their namespace (the SVG camel-case names are never kept).
fn foreign_attributes(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .map(|a| {
            let name = match &*a.name.local {
                "xml:lang" => QualName::new(
                    Some(namespace_prefix!("xml")),
                    ns!(xml),
                    local_name!("lang"),
                ),
                "xlink:href" => xlink(local_name!("href")),
                "xlink:title" => xlink(local_name!("title")),
                "xlink:role" => xlink(local_name!("role")),
                "xlink:type" => xlink(local_name!("type")),
                _ => a.name.clone(),
            };
            Attribute {
                name,
                value: a.value.clone(),
            }
        })
        .collect()
}

fn xlink(local: LocalName) -> QualName {
    QualName::new(Some(namespace_prefix!("xlink")), ns!(xlink), local)
}
