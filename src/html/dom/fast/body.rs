//! The "in head" and "in body" insertion modes, as html5ever implements them, for the
//! tokens the fast path accepts.

use html5ever::local_name;

use super::tokenizer::{RawKind, Unsupported};
use super::{
    Builder, Flow, Mode, Quirks, Scope, TagInfo, Tok, in_head_element, is_heading, special,
};

impl Builder {
    pub(super) fn in_head<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        let anything_else = |builder: &mut Builder, token| {
            builder.open.pop();
            Ok(Flow::Reprocess(Mode::AfterHead, token))
        };
        match token {
            Tok::Chars(text) => match self.insert_leading_space(text) {
                Some(rest) => anything_else(self, rest),
                None => Ok(Flow::Done),
            },
            Tok::Comment => {
                self.comment_here();
                Ok(Flow::Done)
            }
            Tok::Start => match *name {
                local_name!("html") => Err(Unsupported("second <html>")),
                local_name!("base")
                | local_name!("basefont")
                | local_name!("bgsound")
                | local_name!("link")
                | local_name!("meta") => {
                    self.insert_and_pop(tag);
                    Ok(Flow::Done)
                }
                local_name!("title") => {
                    self.parse_raw(tag, RawKind::Rcdata);
                    Ok(Flow::Done)
                }
                // Scripting is on, as in html5ever's default options: `noscript` is raw text.
                local_name!("noframes") | local_name!("style") | local_name!("noscript") => {
                    self.parse_raw(tag, RawKind::Rawtext);
                    Ok(Flow::Done)
                }
                local_name!("script") => {
                    self.parse_raw(tag, RawKind::ScriptData);
                    Ok(Flow::Done)
                }
                local_name!("template") => Err(Unsupported("template")),
                local_name!("head") => Ok(Flow::Done),
                _ => anything_else(self, token),
            },
            Tok::End => match *name {
                local_name!("head") => {
                    self.open.pop();
                    self.mode = Mode::AfterHead;
                    Ok(Flow::Done)
                }
                local_name!("body") | local_name!("html") | local_name!("br") => {
                    anything_else(self, token)
                }
                local_name!("template") => Err(Unsupported("template")),
                _ => Ok(Flow::Done),
            },
            Tok::Eof => anything_else(self, token),
        }
    }

    pub(super) fn in_body<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        match token {
            Tok::Chars(text) => {
                self.reconstruct();
                self.append_text(text);
                Ok(Flow::Done)
            }
            Tok::Comment => {
                self.comment_here();
                Ok(Flow::Done)
            }
            Tok::Eof => Ok(Flow::Done),
            Tok::Start => self.start_tag_in_body(tag),
            Tok::End => self.end_tag_in_body_mode(tag),
        }
    }

    fn start_tag_in_body<'t>(&mut self, tag: &TagInfo) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        match *name {
            _ if in_head_element(name) => self.in_head(Tok::Start, tag),
            local_name!("html") => {
                if let Some(html) = self.open.first().map(|o| o.node) {
                    self.add_attributes_if_missing(html, tag);
                }
                Ok(Flow::Done)
            }
            local_name!("body") => {
                if let Some(body) = self.open.get(1).filter(|o| o.is(&local_name!("body"))) {
                    let body = body.node;
                    self.add_attributes_if_missing(body, tag);
                }
                Ok(Flow::Done)
            }
            local_name!("frameset") => Err(Unsupported("frameset")),
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul")
            | local_name!("menu") => {
                self.close_p_in_button_scope();
                self.insert(tag);
                Ok(Flow::Done)
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                self.close_p_in_button_scope();
                if self.current_in(is_heading) {
                    self.open.pop();
                }
                self.insert(tag);
                Ok(Flow::Done)
            }
            local_name!("pre") | local_name!("listing") => {
                self.close_p_in_button_scope();
                self.insert(tag);
                self.ignore_lf = true;
                Ok(Flow::Done)
            }
            local_name!("form") => {
                if self.form.is_none() {
                    self.close_p_in_button_scope();
                    self.form = Some(self.insert(tag));
                }
                Ok(Flow::Done)
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let list = *name == local_name!("li");
                let mut to_close = None;
                for open in self.open.iter().rev() {
                    let Some(open_name) = open.html_name() else {
                        continue;
                    };
                    let closes = if list {
                        *open_name == local_name!("li")
                    } else {
                        matches!(*open_name, local_name!("dd") | local_name!("dt"))
                    };
                    if closes {
                        to_close = Some(open_name.clone());
                        break;
                    }
                    if special(open_name)
                        && !matches!(
                            *open_name,
                            local_name!("address") | local_name!("div") | local_name!("p")
                        )
                    {
                        break;
                    }
                }
                if let Some(close) = to_close {
                    self.generate_implied_end(Some(&close));
                    self.pop_until_named(&close);
                }
                self.close_p_in_button_scope();
                self.insert(tag);
                Ok(Flow::Done)
            }
            local_name!("button") => {
                if self.in_scope_named(&local_name!("button"), Scope::Default) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&local_name!("button"));
                }
                self.reconstruct();
                self.insert(tag);
                Ok(Flow::Done)
            }
            local_name!("a") => {
                self.close_open_a()?;
                self.insert_formatting(tag)?;
                Ok(Flow::Done)
            }
            local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => {
                self.insert_formatting(tag)?;
                Ok(Flow::Done)
            }
            local_name!("table") => {
                let p_open = self.in_scope_named(&local_name!("p"), Scope::Button);
                match self.quirks {
                    Quirks::Unknown if p_open => {
                        return Err(Unsupported("<table> in <p> under an unread DOCTYPE"));
                    }
                    Quirks::Yes => {}
                    _ => self.close_p_in_button_scope(),
                }
                self.insert(tag);
                self.mode = Mode::InTable;
                Ok(Flow::Done)
            }
            local_name!("area")
            | local_name!("br")
            | local_name!("embed")
            | local_name!("img")
            | local_name!("keygen")
            | local_name!("wbr") => {
                self.reconstruct();
                self.insert_and_pop(tag);
                Ok(Flow::Done)
            }
            local_name!("input") => {
                if self.in_scope_named(&local_name!("select"), Scope::Default) {
                    self.pop_until_named(&local_name!("select"));
                }
                self.reconstruct();
                self.insert_and_pop(tag);
                Ok(Flow::Done)
            }
            local_name!("param") | local_name!("source") | local_name!("track") => {
                self.insert_and_pop(tag);
                Ok(Flow::Done)
            }
            local_name!("hr") => {
                self.close_p_in_button_scope();
                if self.in_scope_named(&local_name!("select"), Scope::Default) {
                    self.generate_implied_end(None);
                }
                self.insert_and_pop(tag);
                Ok(Flow::Done)
            }
            local_name!("textarea") => {
                self.ignore_lf = true;
                self.parse_raw(tag, RawKind::Rcdata);
                Ok(Flow::Done)
            }
            local_name!("xmp") => {
                self.close_p_in_button_scope();
                self.reconstruct();
                self.parse_raw(tag, RawKind::Rawtext);
                Ok(Flow::Done)
            }
            local_name!("iframe") | local_name!("noembed") | local_name!("noscript") => {
                self.parse_raw(tag, RawKind::Rawtext);
                Ok(Flow::Done)
            }
            local_name!("caption")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("frame")
            | local_name!("head")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("tr") => Ok(Flow::Done),
            local_name!("select") => {
                if self.in_scope_named(&local_name!("select"), Scope::Default) {
                    self.pop_until_named(&local_name!("select"));
                } else {
                    self.reconstruct();
                    self.insert(tag);
                }
                Ok(Flow::Done)
            }
            local_name!("option") | local_name!("optgroup") => {
                if self.in_scope_named(&local_name!("select"), Scope::Default) {
                    let except =
                        (*name == local_name!("option")).then_some(local_name!("optgroup"));
                    self.generate_implied_end(except.as_ref());
                } else if self.current_is(&local_name!("option")) {
                    self.open.pop();
                }
                self.reconstruct();
                self.insert(tag);
                Ok(Flow::Done)
            }
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                Err(Unsupported("<object>, <applet>, <marquee>"))
            }
            local_name!("rb") | local_name!("rtc") | local_name!("rp") | local_name!("rt") => {
                Err(Unsupported("ruby"))
            }
            local_name!("svg") => {
                self.reconstruct();
                self.insert_svg(local_name!("svg"), tag);
                Ok(Flow::Done)
            }
            local_name!("math") => Err(Unsupported("<math>")),
            local_name!("plaintext") | local_name!("nobr") | local_name!("image") => {
                Err(Unsupported("<plaintext>, <nobr>, <image>"))
            }
            _ => {
                self.reconstruct();
                self.insert(tag);
                Ok(Flow::Done)
            }
        }
    }

    fn end_tag_in_body_mode<'t>(&mut self, tag: &TagInfo) -> Result<Flow<'t>, Unsupported> {
        let name = &tag.name;
        match *name {
            local_name!("template") => Err(Unsupported("template")),
            local_name!("body") => {
                if self.in_scope_named(&local_name!("body"), Scope::Default) {
                    self.mode = Mode::AfterBody;
                }
                Ok(Flow::Done)
            }
            local_name!("html") => {
                if self.in_scope_named(&local_name!("body"), Scope::Default) {
                    return Ok(Flow::Reprocess(Mode::AfterBody, Tok::End));
                }
                Ok(Flow::Done)
            }
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("button")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("pre")
            | local_name!("search")
            | local_name!("section")
            | local_name!("select")
            | local_name!("summary")
            | local_name!("ul")
            | local_name!("applet")
            | local_name!("marquee")
            | local_name!("object") => {
                if self.in_scope_named(name, Scope::Default) {
                    if matches!(
                        *name,
                        local_name!("applet") | local_name!("marquee") | local_name!("object")
                    ) {
                        return Err(Unsupported("element with rules of its own"));
                    }
                    self.generate_implied_end(None);
                    self.pop_until_named(name);
                }
                Ok(Flow::Done)
            }
            local_name!("form") => {
                let Some(form) = self.form.take() else {
                    return Ok(Flow::Done);
                };
                let mut in_scope = false;
                for open in self.open.iter().rev() {
                    if open.node == form {
                        in_scope = true;
                        break;
                    }
                    if Scope::Default.bounded_by(open) {
                        break;
                    }
                }
                if in_scope {
                    self.generate_implied_end(None);
                    if let Some(at) = self.open.iter().rposition(|o| o.node == form) {
                        self.open.remove(at);
                    }
                }
                Ok(Flow::Done)
            }
            local_name!("p") => {
                if !self.in_scope_named(&local_name!("p"), Scope::Button) {
                    self.insert_phantom(local_name!("p"));
                }
                self.close_p();
                Ok(Flow::Done)
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let scope = if *name == local_name!("li") {
                    Scope::ListItem
                } else {
                    Scope::Default
                };
                if self.in_scope_named(name, scope) {
                    self.generate_implied_end(Some(name));
                    self.pop_until_named(name);
                }
                Ok(Flow::Done)
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                if self.in_scope(is_heading, Scope::Default) {
                    self.generate_implied_end(None);
                    self.pop_until(is_heading);
                }
                Ok(Flow::Done)
            }
            local_name!("a")
            | local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("nobr")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => {
                self.adoption_agency(name)?;
                Ok(Flow::Done)
            }
            local_name!("br") => {
                self.reconstruct();
                let br = TagInfo {
                    name: local_name!("br"),
                    attrs: Vec::new(),
                    hidden: false,
                    self_closing: false,
                };
                self.insert_and_pop(&br);
                Ok(Flow::Done)
            }
            _ => {
                self.end_tag_in_body(name);
                Ok(Flow::Done)
            }
        }
    }
}
