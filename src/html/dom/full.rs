//! html5ever's builder: its tree sink writes the arena [`Dom`], and a guard between its
//! tokenizer and tree builder keeps the work linear (the guards of the parent module's
//! documentation). Every page the fast path gives up on is parsed here.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::sync::LazyLock;

use html5ever::interface::{ElemName, ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{TreeBuilder, TreeBuilderOpts};
use html5ever::{Attribute, LocalName, Namespace, QualName, TokenizerResult, ns};

use super::{
    DOCUMENT, Dom, Element, MAX_ATTRIBUTES, MAX_NODES, MAX_OPEN_ELEMENTS, NONE, Node, NodeData,
    NodeId, TextSpan, WORK_ALLOWANCE, WORK_PER_BYTE, always_forwarded, append_child, detach, hides,
    id, insert_before, is_kept,
};

/// Input is handed to the tokenizer in slices of this size so the node budget can stop
/// parsing early.
const FEED_CHUNK: usize = 64 * 1024;

/// The tree builder's sink: the arena plus the counters the guards read.
struct Sink {
    nodes: RefCell<Vec<Node>>,
    texts: RefCell<String>,
}

/// Name returned for a non-element handle; the tree builder promises never to ask, but a
/// wrong answer is better than a panic.
static NO_NAME: LazyLock<QualName> =
    LazyLock::new(|| QualName::new(None, ns!(), LocalName::from("")));

#[derive(Debug)]
struct NameRef<'a>(Ref<'a, QualName>);

impl ElemName for NameRef<'_> {
    fn ns(&self) -> &Namespace {
        &self.0.ns
    }
    fn local_name(&self) -> &LocalName {
        &self.0.local
    }
}

impl Sink {
    fn new() -> Sink {
        Sink {
            nodes: RefCell::new(vec![Node::new(NodeData::Document)]),
            texts: RefCell::new(String::new()),
        }
    }

    fn new_node(&self, data: NodeData) -> NodeId {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(Node::new(data));
        (nodes.len() - 1) as NodeId
    }

    fn node_count(&self) -> usize {
        self.nodes.borrow().len()
    }

    fn valid(&self, n: NodeId) -> bool {
        (n as usize) < self.nodes.borrow().len()
    }
}

impl TreeSink for Sink {
    type Handle = NodeId;
    type Output = Sink;
    type ElemName<'a> = NameRef<'a>;

    fn finish(self) -> Sink {
        self
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> NodeId {
        DOCUMENT
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> NameRef<'a> {
        NameRef(Ref::map(self.nodes.borrow(), |nodes| {
            match nodes.get(*target as usize).map(|n| &n.data) {
                Some(NodeData::Element(e)) => &e.name,
                _ => &NO_NAME,
            }
        }))
    }

    fn create_element(
        &self,
        name: QualName,
        mut attrs: Vec<Attribute>,
        flags: ElementFlags,
    ) -> NodeId {
        let hidden = hides(&attrs);
        attrs.retain(is_kept);
        attrs.truncate(MAX_ATTRIBUTES);
        let template_contents = if flags.template {
            self.new_node(NodeData::Document)
        } else {
            NONE
        };
        self.new_node(NodeData::Element(Element {
            name,
            attrs,
            hidden,
            template_contents,
            annotation_xml_integration_point: flags.mathml_annotation_xml_integration_point,
        }))
    }

    fn create_comment(&self, _text: StrTendril) -> NodeId {
        self.new_node(NodeData::Other)
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> NodeId {
        self.new_node(NodeData::Other)
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        if !self.valid(*parent) {
            return;
        }
        match child {
            NodeOrText::AppendNode(c) => {
                if self.valid(c) {
                    append_child(&mut self.nodes.borrow_mut(), *parent, c);
                }
            }
            NodeOrText::AppendText(text) => {
                let mut nodes = self.nodes.borrow_mut();
                let mut texts = self.texts.borrow_mut();
                let last = nodes[*parent as usize].last_child;
                if let Some(c) = merge_or_new_text(&mut nodes, &mut texts, last, &text) {
                    append_child(&mut nodes, *parent, c);
                }
            }
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &NodeId,
        prev_element: &NodeId,
        child: NodeOrText<NodeId>,
    ) {
        let has_parent =
            self.valid(*element) && self.nodes.borrow()[*element as usize].parent != NONE;
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(
        &self,
        _name: StrTendril,
        _public_id: StrTendril,
        _system_id: StrTendril,
    ) {
    }

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        match self.nodes.borrow().get(*target as usize).map(|n| &n.data) {
            Some(NodeData::Element(e)) if e.template_contents != NONE => e.template_contents,
            _ => *target,
        }
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        if !self.valid(*sibling) {
            return;
        }
        let mut nodes = self.nodes.borrow_mut();
        let child = match new_node {
            NodeOrText::AppendNode(c) if (c as usize) < nodes.len() => c,
            NodeOrText::AppendNode(_) => return,
            NodeOrText::AppendText(text) => {
                let mut texts = self.texts.borrow_mut();
                let prev = nodes[*sibling as usize].prev_sibling;
                match merge_or_new_text(&mut nodes, &mut texts, prev, &text) {
                    Some(c) => c,
                    None => return,
                }
            }
        };
        insert_before(&mut nodes, *sibling, child);
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        let mut nodes = self.nodes.borrow_mut();
        if let Some(NodeData::Element(e)) = nodes.get_mut(*target as usize).map(|n| &mut n.data) {
            e.hidden |= hides(&attrs);
            for attr in attrs.into_iter().filter(is_kept) {
                if e.attrs.len() >= MAX_ATTRIBUTES {
                    break;
                }
                if !e.attrs.iter().any(|a| a.name == attr.name) {
                    e.attrs.push(attr);
                }
            }
        }
    }

    fn remove_from_parent(&self, target: &NodeId) {
        if self.valid(*target) {
            detach(&mut self.nodes.borrow_mut(), *target);
        }
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        if !self.valid(*node) || !self.valid(*new_parent) {
            return;
        }
        let mut nodes = self.nodes.borrow_mut();
        while let Some(c) = id(nodes[*node as usize].first_child) {
            append_child(&mut nodes, *new_parent, c as NodeId);
        }
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &NodeId) -> bool {
        matches!(
            self.nodes.borrow().get(*handle as usize).map(|n| &n.data),
            Some(NodeData::Element(e)) if e.annotation_xml_integration_point
        )
    }
}

/// Counts the handles the tree builder holds: open elements, active formatting elements, and
/// a few singletons (document, head, form).
struct HandleCounter(Cell<i64>);

impl html5ever::interface::Tracer for HandleCounter {
    type Handle = NodeId;
    fn trace_handle(&self, _node: &NodeId) {
        self.0.set(self.0.get() + 1);
    }
}

/// Sits between tokenizer and tree builder and enforces [`MAX_OPEN_ELEMENTS`],
/// [`MAX_NODES`] and the work budget.
///
/// Before each tag it counts the handles the tree builder holds (open elements, active
/// formatting elements, a few singletons). That costs the same order as the stack scans the
/// tree builder itself does per tag, and is exact: html5ever pops most elements without
/// telling the sink, so counting creations and pops would not be. The count is reused for a
/// run of dropped start tags, which change nothing.
struct Guard {
    builder: TreeBuilder<NodeId, Sink>,
    /// The handle count, while still valid.
    held: Cell<Option<i64>>,
    dropped_start_tags: Cell<u64>,
    work: Cell<u64>,
    work_budget: u64,
    over_budget: Cell<bool>,
}

impl Guard {
    fn handles_held(&self) -> i64 {
        if let Some(count) = self.held.get() {
            return count;
        }
        let counter = HandleCounter(Cell::new(0));
        self.builder.trace_handles(&counter);
        self.held.set(Some(counter.0.get()));
        counter.0.get()
    }

    /// Adds work; false once the budget is spent.
    fn spend(&self, cost: u64) -> bool {
        self.work.set(self.work.get() + cost);
        if self.work.get() > self.work_budget {
            self.over_budget.set(true);
        }
        !self.over_budget.get()
    }
}

impl TokenSink for Guard {
    type Handle = NodeId;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<NodeId> {
        if self.over_budget.get() {
            return TokenSinkResult::Continue;
        }
        if self.builder.sink.node_count() >= MAX_NODES {
            self.over_budget.set(true);
            return TokenSinkResult::Continue;
        }
        let cost = match &token {
            Token::TagToken(tag) => {
                let held = self.handles_held();
                if tag.kind == TagKind::StartTag
                    && !always_forwarded(&tag.name)
                    && held >= MAX_OPEN_ELEMENTS
                {
                    self.dropped_start_tags
                        .set(self.dropped_start_tags.get() + 1);
                    self.spend(1);
                    return TokenSinkResult::Continue;
                }
                held.max(1) as u64
            }
            _ => 1,
        };
        if !self.spend(cost) {
            return TokenSinkResult::Continue;
        }
        self.held.set(None);
        self.builder.process_token(token, line_number)
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// html5ever's path alone, with the guards described in the module documentation.
pub fn parse_with_html5ever(html: &str) -> Dom {
    let (limited, cut_attribute_tags) = limit_attributes(html);
    let guard = Guard {
        builder: TreeBuilder::new(Sink::new(), TreeBuilderOpts::default()),
        held: Cell::new(None),
        dropped_start_tags: Cell::new(0),
        work: Cell::new(0),
        work_budget: WORK_ALLOWANCE + WORK_PER_BYTE * limited.len() as u64,
        over_budget: Cell::new(false),
    };
    let tokenizer = Tokenizer::new(guard, TokenizerOpts::default());
    let input = BufferQueue::default();
    let mut rest: &str = &limited;
    while !rest.is_empty() && !tokenizer.sink.over_budget.get() {
        let mut end = rest.len().min(FEED_CHUNK);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        input.push_back(StrTendril::from_slice(&rest[..end]));
        rest = &rest[end..];
        while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    }
    tokenizer.end();
    let guard = tokenizer.sink;
    let truncated = guard.over_budget.get();
    let dropped_start_tags = guard.dropped_start_tags.get();
    let work = guard.work.get();
    let sink = guard.builder.sink;
    Dom {
        nodes: sink.nodes.into_inner(),
        texts: sink.texts.into_inner(),
        truncated,
        work,
        dropped_start_tags,
        cut_attribute_tags,
    }
}

/// Removes the attributes beyond [`MAX_ATTRIBUTES`] from every tag, returning the text
/// (borrowed when nothing was cut) and the number of tags changed.
///
/// This is a light tag scanner, not a tokenizer: it skips comments, and the content of
/// `script`, `style` and the other raw-text elements (outside `<svg>`/`<math>`, where they are
/// ordinary elements), and otherwise reads tags and attributes the way the HTML tokenizer
/// does. Where it misreads a document, only tag-like text with more than 128 attribute-like
/// words is affected, which does not occur in real pages.
pub fn limit_attributes(html: &str) -> (Cow<'_, str>, u64) {
    let b = html.as_bytes();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut pos = 0;
    let mut foreign_depth: usize = 0;
    while let Some(off) = memchr::memchr(b'<', &b[pos..]) {
        let lt = pos + off;
        let next = b.get(lt + 1).copied().unwrap_or(0);
        if b[lt + 1..].starts_with(b"!--") {
            pos = match memchr::memmem::find(&b[lt + 4..], b"-->") {
                Some(e) => lt + 4 + e + 3,
                None => b.len(),
            };
            continue;
        }
        if next == b'!' || next == b'?' {
            pos = match memchr::memchr(b'>', &b[lt + 1..]) {
                Some(e) => lt + 1 + e + 1,
                None => b.len(),
            };
            continue;
        }
        let (is_end, name_start) = if next == b'/' {
            (true, lt + 2)
        } else {
            (false, lt + 1)
        };
        if !b.get(name_start).is_some_and(|c| c.is_ascii_alphabetic()) {
            pos = lt + 1;
            continue;
        }
        let mut i = name_start;
        while i < b.len() && !is_tag_space(b[i]) && b[i] != b'/' && b[i] != b'>' {
            i += 1;
        }
        let name = &b[name_start..i];
        let (tag_end, cut_from) = scan_attributes(b, i);
        if let Some(from) = cut_from {
            cuts.push((from, tag_end.min(b.len())));
        }
        pos = (tag_end + 1).min(b.len());
        let is_foreign = name.eq_ignore_ascii_case(b"svg") || name.eq_ignore_ascii_case(b"math");
        if is_foreign {
            if is_end {
                foreign_depth = foreign_depth.saturating_sub(1);
            } else if b.get(tag_end.wrapping_sub(1)) != Some(&b'/') {
                foreign_depth += 1;
            }
        }
        if !is_end && foreign_depth == 0 {
            if name.eq_ignore_ascii_case(b"plaintext") {
                break;
            }
            if RAW_TEXT.iter().any(|r| name.eq_ignore_ascii_case(r)) {
                pos = find_end_tag(b, pos, name);
            }
        }
    }
    if cuts.is_empty() {
        return (Cow::Borrowed(html), 0);
    }
    let mut out = String::with_capacity(html.len());
    let mut from = 0;
    for &(start, end) in &cuts {
        out.push_str(&html[from..start]);
        from = end;
    }
    out.push_str(&html[from..]);
    (Cow::Owned(out), cuts.len() as u64)
}

const RAW_TEXT: [&[u8]; 9] = [
    b"script",
    b"style",
    b"xmp",
    b"iframe",
    b"noembed",
    b"noframes",
    b"noscript",
    b"textarea",
    b"title",
];

/// Text next to `neighbor` (the node before where it goes): appended to it when it is a
/// text node (html5ever hands text over in pieces), else a new text node, whose id is
/// returned to be linked in.
fn merge_or_new_text(
    nodes: &mut Vec<Node>,
    texts: &mut String,
    neighbor: NodeId,
    text: &str,
) -> Option<NodeId> {
    if let Some(n) = id(neighbor)
        && let NodeData::Text(t) = &mut nodes[n].data
    {
        t.push(texts, text);
        return None;
    }
    nodes.push(Node::new(NodeData::Text(TextSpan::new(texts, text))));
    Some((nodes.len() - 1) as NodeId)
}

fn is_tag_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Reads the attributes of a tag whose name ends before `i`. Returns the position of the
/// closing `>` (or the end of input) and, when the tag has too many attributes, the position
/// where the first surplus attribute starts. Cut positions are always at ASCII bytes, so they
/// are character boundaries.
fn scan_attributes(b: &[u8], mut i: usize) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut cut_from = None;
    loop {
        while i < b.len() && (is_tag_space(b[i]) || b[i] == b'/') {
            i += 1;
        }
        if i >= b.len() || b[i] == b'>' {
            return (i, cut_from);
        }
        count += 1;
        if count > MAX_ATTRIBUTES && cut_from.is_none() {
            cut_from = Some(i);
        }
        // The name: a leading '=' belongs to it, as in the tokenizer.
        i += 1;
        while i < b.len() && !is_tag_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        while i < b.len() && is_tag_space(b[i]) {
            i += 1;
        }
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && is_tag_space(b[i]) {
                i += 1;
            }
            match b.get(i) {
                Some(&q @ (b'"' | b'\'')) => {
                    i = match memchr::memchr(q, &b[i + 1..]) {
                        Some(e) => i + 1 + e + 1,
                        None => b.len(),
                    };
                }
                _ => {
                    while i < b.len() && !is_tag_space(b[i]) && b[i] != b'>' {
                        i += 1;
                    }
                }
            }
        }
    }
}

/// Position of the `<` of the first `</name` (any case) at or after `from`, or the end.
fn find_end_tag(b: &[u8], mut from: usize, name: &[u8]) -> usize {
    while let Some(off) = memchr::memmem::find(&b[from..], b"</") {
        let at = from + off;
        let candidate = &b[at + 2..];
        if candidate.len() >= name.len() && candidate[..name.len()].eq_ignore_ascii_case(name) {
            return at;
        }
        from = at + 2;
    }
    b.len()
}
