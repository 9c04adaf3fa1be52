//! The fast path: the WHATWG tree-construction rules for the documents real pages are,
//! building the same [`Dom`] html5ever's path builds, or giving up.
//!
//! html5ever is exact for every input, but it pays for that on every page: a character queue,
//! a tendril per token, a trait call per tree operation. Most pages need only part of the
//! algorithm: implied `html`/`head`/`body`, `p` and list items closed by what follows,
//! tables (with foster parenting), SVG icons, `select`, formatting elements reconstructed and
//! closed. This builder implements those rules as html5ever does (same insertion modes,
//! scopes, implied end tags, formatting list) and returns [`Unsupported`] as soon as a
//! document needs one it does not have: the adoption agency's reparenting, templates, MathML,
//! `<object>`/`<applet>`/`<marquee>`, `<nobr>`, ruby, framesets, and the tokenizer's rarer
//! cases (a NUL, a U+FEFF past the start, end of input inside a tag or comment). The document
//! is then parsed by html5ever from the start, so giving up costs at most one extra pass.
//! `tests/html_fast_path.rs` and the `html_fast_path` fuzz target compare the two builders'
//! trees.

use html5ever::{Attribute, LocalName, local_name};

mod body;
mod foreign;
mod table;
mod tokenizer;
mod tree;

pub use tokenizer::Unsupported;
use tokenizer::{RawKind, Token, Tokenizer};

use super::{
    DOCUMENT, Dom, MAX_NODES, MAX_OPEN_ELEMENTS, Node, NodeData, NodeId, WORK_ALLOWANCE,
    WORK_PER_BYTE, always_forwarded,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Initial,
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
    Text,
    InTable,
    InTableText,
    InCaption,
    InColumnGroup,
    InTableBody,
    InRow,
    InCell,
    AfterBody,
    AfterAfterBody,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quirks {
    No,
    Yes,
    /// A DOCTYPE other than `<!DOCTYPE html>`: the fast path does not work out which mode it
    /// selects, and gives up where the mode would matter.
    Unknown,
}

/// A token as the tree builder sees it (the tag itself is in the tokenizer).
#[derive(Clone, Copy)]
enum Tok<'t> {
    Chars(&'t str),
    Start,
    End,
    Comment,
    Eof,
}

enum Flow<'t> {
    Done,
    Reprocess(Mode, Tok<'t>),
}

struct Open {
    node: NodeId,
    name: LocalName,
    /// An SVG element (the only foreign content the fast path accepts).
    svg: bool,
}

impl Open {
    fn html_name(&self) -> Option<&LocalName> {
        (!self.svg).then_some(&self.name)
    }

    /// An HTML element of this name.
    fn is(&self, name: &LocalName) -> bool {
        !self.svg && self.name == *name
    }

    /// An HTML element of this set.
    fn html_in(&self, set: fn(&LocalName) -> bool) -> bool {
        !self.svg && set(&self.name)
    }
}

/// The scopes of the standard's "has an element in … scope".
#[derive(Clone, Copy)]
enum Scope {
    Default,
    ListItem,
    Button,
    Table,
}

impl Scope {
    fn bounded_by(self, open: &Open) -> bool {
        if open.svg {
            // SVG's HTML integration points bound the scopes built on the default one.
            return !matches!(self, Scope::Table) && svg_integration_point(&open.name);
        }
        let name = &open.name;
        match self {
            Scope::Default => default_scope(name),
            Scope::ListItem => {
                default_scope(name) || matches!(*name, local_name!("ol") | local_name!("ul"))
            }
            Scope::Button => default_scope(name) || *name == local_name!("button"),
            Scope::Table => table_scope(name),
        }
    }
}

fn svg_integration_point(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("foreignObject") | local_name!("desc") | local_name!("title")
    )
}

/// An entry of the list of active formatting elements. Reconstruction copies the entry's
/// element (its kept attributes and hidden flag are those of the tag that made it).
enum Formatting {
    Marker,
    Element { node: NodeId, name: LocalName },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableText {
    None,
    /// White space inserted in the table.
    Inserted,
    /// Text that is not all white space fostered out of the table (the run's rest follows).
    Fostered,
}

/// The current tag, copied out of the tokenizer so the builder can insert it.
struct TagInfo {
    name: LocalName,
    attrs: Vec<Attribute>,
    hidden: bool,
    self_closing: bool,
}

struct Builder {
    nodes: Vec<Node>,
    texts: String,
    open: Vec<Open>,
    formatting: Vec<Formatting>,
    mode: Mode,
    original_mode: Mode,
    head: Option<NodeId>,
    form: Option<NodeId>,
    quirks: Quirks,
    ignore_lf: bool,
    /// Insertions in a table go before it (html5ever's flag of the same name).
    foster_parenting: bool,
    /// What the current run of table text has done so far.
    table_text: TableText,
    raw_request: Option<RawKind>,
    work: u64,
    work_limit: u64,
}

/// Parses `html` into a [`Dom`] equal to the one html5ever's path builds, or says why not.
pub(super) fn parse(html: &str) -> Result<Dom, Unsupported> {
    let mut tokenizer = Tokenizer::new(html)?;
    let mut builder = Builder {
        nodes: Vec::new(),
        texts: String::new(),
        open: Vec::new(),
        formatting: Vec::new(),
        mode: Mode::Initial,
        original_mode: Mode::Initial,
        head: None,
        form: None,
        quirks: Quirks::No,
        ignore_lf: false,
        foster_parenting: false,
        table_text: TableText::None,
        raw_request: None,
        work: 0,
        // Half the full path's budget: this path counts fewer text tokens than html5ever
        // emits, so it leaves the documents near the limit to the path that enforces it.
        work_limit: (WORK_ALLOWANCE + WORK_PER_BYTE * html.len() as u64) / 2,
    };
    builder.nodes.push(Node::new(NodeData::Document));
    let mut tag = TagInfo {
        name: local_name!(""),
        attrs: Vec::new(),
        hidden: false,
        self_closing: false,
    };
    loop {
        let start = tokenizer.position();
        let token = tokenizer.next_token()?;
        if builder.nodes.len() >= MAX_NODES / 2 {
            return Err(Unsupported("many nodes"));
        }
        let ignore_lf = std::mem::take(&mut builder.ignore_lf);
        let tok = match token {
            // html5ever's flag is also taken by a parse error, which a reference such as
            // `&#10` (no semicolon) reports before its line feed; only a numeric reference
            // can make that line feed.
            Token::Text(_) if ignore_lf && tokenizer.source_starts_with(start, "&#") => {
                return Err(Unsupported(
                    "a numeric reference right after <pre> or <textarea>",
                ));
            }
            Token::Text(text) => {
                let mut text = tokenizer.text(text);
                if ignore_lf && text.starts_with('\n') {
                    text = &text[1..];
                }
                if text.is_empty() {
                    continue;
                }
                builder.spend(1)?;
                builder.process(Tok::Chars(text), &tag)?;
                continue;
            }
            Token::Tag => {
                let t = &mut tokenizer.tag;
                std::mem::swap(&mut tag.name, &mut t.name);
                std::mem::swap(&mut tag.attrs, &mut t.attrs);
                tag.hidden = t.hidden;
                tag.self_closing = t.self_closing;
                let held = builder.handles_held();
                if !t.end && held >= MAX_OPEN_ELEMENTS && !always_forwarded(&tag.name) {
                    return Err(Unsupported("deep nesting"));
                }
                builder.spend(held.max(1) as u64)?;
                if t.end { Tok::End } else { Tok::Start }
            }
            Token::Comment => {
                builder.spend(1)?;
                Tok::Comment
            }
            Token::Doctype { no_quirks } => {
                builder.spend(1)?;
                if builder.mode == Mode::Initial {
                    builder.quirks = if no_quirks {
                        Quirks::No
                    } else {
                        Quirks::Unknown
                    };
                    builder.mode = Mode::BeforeHtml;
                }
                continue;
            }
            Token::Eof => {
                builder.process(Tok::Eof, &tag)?;
                break;
            }
        };
        builder.process(tok, &tag)?;
        // Give the tag's buffers back to the tokenizer for the next tag.
        std::mem::swap(&mut tag.name, &mut tokenizer.tag.name);
        std::mem::swap(&mut tag.attrs, &mut tokenizer.tag.attrs);
        if let Some(kind) = builder.raw_request.take() {
            tokenizer.enter_raw(kind);
        }
    }
    Ok(Dom {
        nodes: builder.nodes,
        texts: builder.texts,
        truncated: false,
        work: builder.work,
        dropped_start_tags: 0,
        cut_attribute_tags: 0,
    })
}

fn split_whitespace(text: &str) -> (&str, &str) {
    let n = text.bytes().take_while(|b| b.is_ascii_whitespace()).count();
    text.split_at(n)
}

fn is_heading(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
    )
}

/// The table elements text and misplaced elements are fostered out of (html5ever's
/// `table_outer` and `foster_target`).
fn table_outer(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("table")
            | local_name!("tbody")
            | local_name!("tfoot")
            | local_name!("thead")
            | local_name!("tr")
    )
}

/// html5ever's `html_default_scope` (no foreign elements are ever open here).
fn default_scope(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("applet")
            | local_name!("caption")
            | local_name!("html")
            | local_name!("table")
            | local_name!("td")
            | local_name!("th")
            | local_name!("marquee")
            | local_name!("object")
            | local_name!("select")
            | local_name!("template")
    )
}

fn table_scope(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("html") | local_name!("table") | local_name!("template")
    )
}

fn table_body_context(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("tbody")
            | local_name!("tfoot")
            | local_name!("thead")
            | local_name!("template")
            | local_name!("html")
    )
}

fn table_row_context(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("tr") | local_name!("template") | local_name!("html")
    )
}

fn cursory_implied_end(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("dd")
            | local_name!("dt")
            | local_name!("li")
            | local_name!("option")
            | local_name!("optgroup")
            | local_name!("p")
            | local_name!("rb")
            | local_name!("rp")
            | local_name!("rt")
            | local_name!("rtc")
    )
}

fn special(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("address")
            | local_name!("applet")
            | local_name!("area")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("br")
            | local_name!("button")
            | local_name!("caption")
            | local_name!("center")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("dd")
            | local_name!("details")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("embed")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("frame")
            | local_name!("frameset")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("head")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("hr")
            | local_name!("html")
            | local_name!("iframe")
            | local_name!("img")
            | local_name!("input")
            | local_name!("isindex")
            | local_name!("li")
            | local_name!("link")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("marquee")
            | local_name!("menu")
            | local_name!("meta")
            | local_name!("nav")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("object")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("param")
            | local_name!("plaintext")
            | local_name!("pre")
            | local_name!("script")
            | local_name!("section")
            | local_name!("select")
            | local_name!("source")
            | local_name!("style")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("template")
            | local_name!("textarea")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("title")
            | local_name!("tr")
            | local_name!("track")
            | local_name!("ul")
            | local_name!("wbr")
            | local_name!("xmp")
    )
}

/// Start tags processed by the "in head" rules wherever they appear before the body ends.
fn in_head_element(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("noframes")
            | local_name!("script")
            | local_name!("style")
            | local_name!("template")
            | local_name!("title")
    )
}

impl Builder {
    /// Inserts the white space that starts `text`; the rest, if any, as a token to process.
    fn insert_leading_space<'t>(&mut self, text: &'t str) -> Option<Tok<'t>> {
        let (space, rest) = split_whitespace(text);
        self.append_text(space);
        (!rest.is_empty()).then_some(Tok::Chars(rest))
    }

    /// Handles the tree builder holds, as the full path's guard counts them.
    fn handles_held(&self) -> i64 {
        let formatting = self
            .formatting
            .iter()
            .filter(|f| matches!(f, Formatting::Element { .. }))
            .count();
        (1 + self.open.len()
            + formatting
            + usize::from(self.head.is_some())
            + usize::from(self.form.is_some())) as i64
    }

    fn spend(&mut self, cost: u64) -> Result<(), Unsupported> {
        self.work += cost;
        if self.work > self.work_limit {
            return Err(Unsupported("work budget"));
        }
        Ok(())
    }

    fn process<'t>(&mut self, token: Tok<'t>, tag: &TagInfo) -> Result<(), Unsupported> {
        let mut mode = self.mode;
        let mut token = token;
        loop {
            let flow = if self.is_foreign(token) {
                self.step_foreign(token, tag)?
            } else {
                self.step(mode, token, tag)?
            };
            match flow {
                Flow::Done => return Ok(()),
                Flow::Reprocess(next, t) => {
                    self.mode = next;
                    mode = next;
                    token = t;
                }
            }
        }
    }

    fn step<'t>(
        &mut self,
        mode: Mode,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        match mode {
            Mode::Initial => match token {
                Tok::Chars(text) => {
                    let (_, rest) = split_whitespace(text);
                    if rest.is_empty() {
                        return Ok(Flow::Done);
                    }
                    self.quirks = Quirks::Yes;
                    Ok(Flow::Reprocess(Mode::BeforeHtml, Tok::Chars(rest)))
                }
                Tok::Comment => {
                    self.comment_in(DOCUMENT);
                    Ok(Flow::Done)
                }
                _ => {
                    self.quirks = Quirks::Yes;
                    Ok(Flow::Reprocess(Mode::BeforeHtml, token))
                }
            },
            Mode::BeforeHtml => match token {
                Tok::Comment => {
                    self.comment_in(DOCUMENT);
                    Ok(Flow::Done)
                }
                Tok::Chars(text) => {
                    let (_, rest) = split_whitespace(text);
                    if rest.is_empty() {
                        return Ok(Flow::Done);
                    }
                    self.create_root(Vec::new(), false);
                    Ok(Flow::Reprocess(Mode::BeforeHead, Tok::Chars(rest)))
                }
                Tok::Start if *name == local_name!("html") => {
                    self.create_root(tag.attrs.clone(), tag.hidden);
                    self.mode = Mode::BeforeHead;
                    Ok(Flow::Done)
                }
                Tok::End
                    if !matches!(
                        *name,
                        local_name!("head")
                            | local_name!("body")
                            | local_name!("html")
                            | local_name!("br")
                    ) =>
                {
                    Ok(Flow::Done)
                }
                _ => {
                    self.create_root(Vec::new(), false);
                    Ok(Flow::Reprocess(Mode::BeforeHead, token))
                }
            },
            Mode::BeforeHead => match token {
                Tok::Chars(text) => {
                    let (_, rest) = split_whitespace(text);
                    if rest.is_empty() {
                        return Ok(Flow::Done);
                    }
                    self.head = Some(self.insert_phantom(local_name!("head")));
                    Ok(Flow::Reprocess(Mode::InHead, Tok::Chars(rest)))
                }
                Tok::Comment => {
                    self.comment_here();
                    Ok(Flow::Done)
                }
                Tok::Start if *name == local_name!("html") => self.step(Mode::InBody, token, tag),
                Tok::Start if *name == local_name!("head") => {
                    self.head = Some(self.insert(tag));
                    self.mode = Mode::InHead;
                    Ok(Flow::Done)
                }
                Tok::End
                    if !matches!(
                        *name,
                        local_name!("head")
                            | local_name!("body")
                            | local_name!("html")
                            | local_name!("br")
                    ) =>
                {
                    Ok(Flow::Done)
                }
                _ => {
                    self.head = Some(self.insert_phantom(local_name!("head")));
                    Ok(Flow::Reprocess(Mode::InHead, token))
                }
            },
            Mode::InHead => self.in_head(token, tag),
            Mode::AfterHead => match token {
                Tok::Chars(text) => {
                    let Some(rest) = self.insert_leading_space(text) else {
                        return Ok(Flow::Done);
                    };
                    self.insert_phantom(local_name!("body"));
                    Ok(Flow::Reprocess(Mode::InBody, rest))
                }
                Tok::Comment => {
                    self.comment_here();
                    Ok(Flow::Done)
                }
                Tok::Start => match *name {
                    local_name!("html") => self.step(Mode::InBody, token, tag),
                    local_name!("body") => {
                        self.insert(tag);
                        self.mode = Mode::InBody;
                        Ok(Flow::Done)
                    }
                    local_name!("frameset") => Err(Unsupported("frameset")),
                    _ if in_head_element(name) => {
                        let head = self.head.ok_or(Unsupported("no head"))?;
                        self.open.push(Open {
                            node: head,
                            name: local_name!("head"),
                            svg: false,
                        });
                        let flow = self.in_head(token, tag)?;
                        if let Some(at) = self.open.iter().rposition(|o| o.node == head) {
                            self.open.remove(at);
                        }
                        Ok(flow)
                    }
                    local_name!("head") => Ok(Flow::Done),
                    _ => {
                        self.insert_phantom(local_name!("body"));
                        Ok(Flow::Reprocess(Mode::InBody, token))
                    }
                },
                Tok::End => match *name {
                    local_name!("template") => Err(Unsupported("template")),
                    local_name!("body") | local_name!("html") | local_name!("br") => {
                        self.insert_phantom(local_name!("body"));
                        Ok(Flow::Reprocess(Mode::InBody, token))
                    }
                    _ => Ok(Flow::Done),
                },
                Tok::Eof => {
                    self.insert_phantom(local_name!("body"));
                    Ok(Flow::Reprocess(Mode::InBody, token))
                }
            },
            Mode::InBody => self.in_body(token, tag),
            Mode::Text => match token {
                Tok::Chars(text) => {
                    self.append_text(text);
                    Ok(Flow::Done)
                }
                Tok::End => {
                    self.open.pop();
                    self.mode = self.original_mode;
                    Ok(Flow::Done)
                }
                Tok::Eof => {
                    self.open.pop();
                    Ok(Flow::Reprocess(self.original_mode, token))
                }
                _ => Err(Unsupported("unexpected token in raw text")),
            },
            Mode::InTable => self.in_table(token, tag),
            // html5ever holds a run of table text (up to the next token that is neither text
            // nor a DOCTYPE) and then inserts all of it in the table if it is white space,
            // else fosters all of it. This path decides on the first piece that is not white
            // space: from there on the run is fostered; white space inserted before it would
            // have been fostered too, so then it gives up.
            Mode::InTableText => match token {
                Tok::Chars(text) => match self.table_text {
                    TableText::Fostered => self.foster(token, tag),
                    _ if text.bytes().all(|b| b.is_ascii_whitespace()) => {
                        self.append_text(text);
                        self.table_text = TableText::Inserted;
                        Ok(Flow::Done)
                    }
                    TableText::Inserted => Err(Unsupported("text in a table after white space")),
                    TableText::None => {
                        self.table_text = TableText::Fostered;
                        self.foster(token, tag)
                    }
                },
                _ => {
                    self.table_text = TableText::None;
                    Ok(Flow::Reprocess(self.original_mode, token))
                }
            },
            Mode::InCaption => self.in_caption(token, tag),
            Mode::InColumnGroup => self.in_column_group(token, tag),
            Mode::InTableBody => self.in_table_body(token, tag),
            Mode::InRow => self.in_row(token, tag),
            Mode::InCell => self.in_cell(token, tag),
            Mode::AfterBody | Mode::AfterAfterBody => match token {
                Tok::Chars(text) => {
                    let (space, rest) = split_whitespace(text);
                    if !space.is_empty() {
                        self.step(Mode::InBody, Tok::Chars(space), tag)?;
                    }
                    if rest.is_empty() {
                        return Ok(Flow::Done);
                    }
                    Ok(Flow::Reprocess(Mode::InBody, Tok::Chars(rest)))
                }
                Tok::Comment => {
                    let target = match mode {
                        Mode::AfterBody => self.open.first().map_or(DOCUMENT, |o| o.node),
                        _ => DOCUMENT,
                    };
                    self.comment_in(target);
                    Ok(Flow::Done)
                }
                Tok::Start if *name == local_name!("html") => Err(Unsupported("second <html>")),
                Tok::End if mode == Mode::AfterBody && *name == local_name!("html") => {
                    self.mode = Mode::AfterAfterBody;
                    Ok(Flow::Done)
                }
                Tok::Eof => Ok(Flow::Done),
                _ => Ok(Flow::Reprocess(Mode::InBody, token)),
            },
        }
    }
}
