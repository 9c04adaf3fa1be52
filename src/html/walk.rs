//! The walk over the parsed document: a visitor in document order without recursion, and
//! what each element means to it (its [`Class`]: visible or not, landmark, pile field,
//! separator, location bits of the links inside).

use html5ever::local_name;

use super::LinkLocation;
use super::dom::{Dom, Element, NodeId};
use super::pile::{Field, Sep};

/// Visits nodes in document order without recursion. `enter` returns whether to descend;
/// `leave` is called for every entered node once its subtree is done.
pub(super) trait Visitor {
    fn enter(&mut self, node: NodeId) -> bool;
    fn leave(&mut self, node: NodeId);
}

pub(super) fn walk(dom: &Dom, root: NodeId, visitor: &mut impl Visitor) {
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
pub(super) const HEADER: u16 = 1 << 0;
pub(super) const FOOTER: u16 = 1 << 1;
pub(super) const ASIDE: u16 = 1 << 2;
pub(super) const NAV: u16 = 1 << 3;
pub(super) const FORM: u16 = 1 << 4;
pub(super) const MAIN: u16 = 1 << 5;
pub(super) const ARTICLE: u16 = 1 << 6;
pub(super) const SECTION: u16 = 1 << 7;
pub(super) const TABLE: u16 = 1 << 8;
pub(super) const FIGURE: u16 = 1 << 9;
pub(super) const ADDRESS: u16 = 1 << 10;
pub(super) const CODE: u16 = 1 << 11;
pub(super) const HEADLINE: u16 = 1 << 12;
pub(super) const LIST: u16 = 1 << 13;
pub(super) const PARAGRAPH: u16 = 1 << 14;

pub(super) fn location_of(bits: u16) -> LinkLocation {
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

/// The static properties of one element.
pub(super) struct Class {
    /// Not rendered (or not text): no text from inside it anywhere.
    pub(super) invisible: bool,
    /// nav, footer: no pile text, but link text.
    pub(super) boilerplate: bool,
    pub(super) header: bool,
    pub(super) aside: bool,
    pub(super) main: bool,
    pub(super) article: bool,
    pub(super) bits: u16,
    pub(super) field: Option<Field>,
    pub(super) pre: bool,
    /// `code`, `samp`, `kbd`: code text only inside `pre`; elsewhere their words stay in
    /// the sentence around them.
    pub(super) inline_code: bool,
    pub(super) sep: Sep,
    /// `svg`: neither text nor links inside.
    pub(super) skip_subtree: bool,
}

pub(super) fn classify(e: &Element) -> Class {
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
        inline_code: false,
        sep: Sep::None,
        skip_subtree: false,
    };
    if e.name.local == local_name!("svg") {
        c.invisible = true;
        c.skip_subtree = true;
        return c;
    }
    if e.hidden {
        c.invisible = true;
    }
    if let Some(role) = e.attr(&local_name!("role")) {
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
    match *name {
        local_name!("head")
        | local_name!("script")
        | local_name!("style")
        | local_name!("template")
        | local_name!("noscript")
        | local_name!("canvas")
        | local_name!("iframe")
        | local_name!("object")
        | local_name!("embed")
        | local_name!("video")
        | local_name!("audio")
        | local_name!("select")
        | local_name!("datalist")
        | local_name!("textarea")
        | local_name!("title")
        | local_name!("noframes")
        | local_name!("noembed") => c.invisible = true,
        local_name!("nav") => {
            c.bits |= NAV;
            c.boilerplate = true;
        }
        local_name!("footer") => {
            c.bits |= FOOTER;
            c.boilerplate = true;
        }
        local_name!("header") => {
            c.bits |= HEADER;
            c.header = true;
        }
        local_name!("aside") => {
            c.bits |= ASIDE;
            c.aside = true;
        }
        local_name!("main") => {
            c.bits |= MAIN;
            c.main = true;
        }
        local_name!("article") => {
            c.bits |= ARTICLE;
            c.article = true;
        }
        local_name!("section") => c.bits |= SECTION,
        local_name!("form") => c.bits |= FORM,
        local_name!("table") => c.bits |= TABLE,
        local_name!("figure") => c.bits |= FIGURE,
        local_name!("address") => c.bits |= ADDRESS,
        local_name!("pre") => {
            c.bits |= CODE;
            c.field = Some(Field::Code);
            c.pre = true;
        }
        local_name!("code") | local_name!("samp") | local_name!("kbd") => {
            c.bits |= CODE;
            c.field = Some(Field::Code);
            c.inline_code = true;
        }
        local_name!("h1") | local_name!("h2") | local_name!("h3") => {
            c.bits |= HEADLINE;
            c.field = Some(Field::BigHeadlines);
        }
        local_name!("h4") | local_name!("h5") | local_name!("h6") => {
            c.bits |= HEADLINE;
            c.field = Some(Field::SmallHeadlines);
        }
        local_name!("ul") | local_name!("ol") | local_name!("dl") | local_name!("menu") => {
            c.bits |= LIST
        }
        local_name!("p") => c.bits |= PARAGRAPH,
        local_name!("blockquote") | local_name!("q") => c.field = Some(Field::Quote),
        _ => {}
    }
    c.sep = match *name {
        local_name!("td") | local_name!("th") => Sep::Space,
        local_name!("address")
        | local_name!("article")
        | local_name!("aside")
        | local_name!("blockquote")
        | local_name!("body")
        | local_name!("br")
        | local_name!("caption")
        | local_name!("center")
        | local_name!("dd")
        | local_name!("details")
        | local_name!("dialog")
        | local_name!("dir")
        | local_name!("div")
        | local_name!("dl")
        | local_name!("dt")
        | local_name!("fieldset")
        | local_name!("figcaption")
        | local_name!("figure")
        | local_name!("footer")
        | local_name!("form")
        | local_name!("h1")
        | local_name!("h2")
        | local_name!("h3")
        | local_name!("h4")
        | local_name!("h5")
        | local_name!("h6")
        | local_name!("header")
        | local_name!("hgroup")
        | local_name!("hr")
        | local_name!("html")
        | local_name!("legend")
        | local_name!("li")
        | local_name!("main")
        | local_name!("menu")
        | local_name!("nav")
        | local_name!("ol")
        | local_name!("optgroup")
        | local_name!("option")
        | local_name!("p")
        | local_name!("pre")
        | local_name!("section")
        | local_name!("summary")
        | local_name!("table")
        | local_name!("tbody")
        | local_name!("tfoot")
        | local_name!("thead")
        | local_name!("tr")
        | local_name!("ul") => Sep::Newline,
        _ => Sep::None,
    };
    c
}
