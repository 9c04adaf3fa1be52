//! SVG inside HTML (icons, mostly), by html5ever's rules for foreign content: elements in the
//! SVG namespace with their names' case restored, text and comments kept, an end tag closing
//! the element of its name. An HTML element that would break out of the SVG makes the fast
//! path give up.

use html5ever::{LocalName, local_name};

use super::tokenizer::Unsupported;
use super::{Builder, Flow, TagInfo, Tok, is_heading, svg_integration_point};

impl Builder {
    /// Whether `token` is processed by the rules for foreign content.
    pub(super) fn is_foreign(&self, token: Tok) -> bool {
        let Some(current) = self.open.last() else {
            return false;
        };
        if !current.svg || matches!(token, Tok::Eof) {
            return false;
        }
        !(svg_integration_point(&current.name) && matches!(token, Tok::Chars(_) | Tok::Start))
    }

    pub(super) fn step_foreign<'t>(
        &mut self,
        token: Tok<'t>,
        tag: &TagInfo,
    ) -> Result<Flow<'t>, Unsupported> {
        match token {
            Tok::Chars(text) => self.append_text(text),
            Tok::Comment => self.comment_here(),
            Tok::Start if tag.name == local_name!("font") => {
                return Err(Unsupported("<font> inside SVG"));
            }
            Tok::Start if breaks_out(&tag.name) => return self.break_out(token, tag),
            Tok::Start => self.insert_svg(svg_element_name(&tag.name), tag),
            Tok::End if matches!(tag.name, local_name!("br") | local_name!("p")) => {
                return self.break_out(token, tag);
            }
            Tok::End => {
                let mut at = self.open.len() - 1;
                let mut first = true;
                while at > 0 {
                    let open = &self.open[at];
                    if !first && !open.svg {
                        return self.step(self.mode, token, tag);
                    }
                    if open.name.eq_ignore_ascii_case(&tag.name) {
                        self.open.truncate(at);
                        break;
                    }
                    first = false;
                    at -= 1;
                }
            }
            Tok::Eof => {}
        }
        Ok(Flow::Done)
    }
}

impl Builder {
    /// An HTML tag inside SVG closes the SVG elements up to an HTML element or integration
    /// point, and is then processed as HTML.
    fn break_out<'t>(&mut self, token: Tok<'t>, tag: &TagInfo) -> Result<Flow<'t>, Unsupported> {
        while self
            .open
            .last()
            .is_some_and(|o| o.svg && !svg_integration_point(&o.name))
        {
            self.open.pop();
        }
        self.step(self.mode, token, tag)
    }
}

/// Start tags that end foreign content (`font` too, when it has `color`, `face` or `size`,
/// attributes this path does not read: it gives up on any `font`).
fn breaks_out(name: &LocalName) -> bool {
    is_heading(name)
        || matches!(
            *name,
            local_name!("b")
                | local_name!("big")
                | local_name!("blockquote")
                | local_name!("body")
                | local_name!("br")
                | local_name!("center")
                | local_name!("code")
                | local_name!("dd")
                | local_name!("div")
                | local_name!("dl")
                | local_name!("dt")
                | local_name!("em")
                | local_name!("embed")
                | local_name!("head")
                | local_name!("hr")
                | local_name!("i")
                | local_name!("img")
                | local_name!("li")
                | local_name!("listing")
                | local_name!("menu")
                | local_name!("meta")
                | local_name!("nobr")
                | local_name!("ol")
                | local_name!("p")
                | local_name!("pre")
                | local_name!("ruby")
                | local_name!("s")
                | local_name!("small")
                | local_name!("span")
                | local_name!("strong")
                | local_name!("strike")
                | local_name!("sub")
                | local_name!("sup")
                | local_name!("table")
                | local_name!("tt")
                | local_name!("u")
                | local_name!("ul")
                | local_name!("var")
                | local_name!("font")
        )
}

/// SVG element names whose case the tokenizer's lowering lost.
fn svg_element_name(name: &LocalName) -> LocalName {
    match *name {
        local_name!("altglyph") => local_name!("altGlyph"),
        local_name!("altglyphdef") => local_name!("altGlyphDef"),
        local_name!("altglyphitem") => local_name!("altGlyphItem"),
        local_name!("animatecolor") => local_name!("animateColor"),
        local_name!("animatemotion") => local_name!("animateMotion"),
        local_name!("animatetransform") => local_name!("animateTransform"),
        local_name!("clippath") => local_name!("clipPath"),
        local_name!("feblend") => local_name!("feBlend"),
        local_name!("fecolormatrix") => local_name!("feColorMatrix"),
        local_name!("fecomponenttransfer") => local_name!("feComponentTransfer"),
        local_name!("fecomposite") => local_name!("feComposite"),
        local_name!("feconvolvematrix") => local_name!("feConvolveMatrix"),
        local_name!("fediffuselighting") => local_name!("feDiffuseLighting"),
        local_name!("fedisplacementmap") => local_name!("feDisplacementMap"),
        local_name!("fedistantlight") => local_name!("feDistantLight"),
        local_name!("fedropshadow") => local_name!("feDropShadow"),
        local_name!("feflood") => local_name!("feFlood"),
        local_name!("fefunca") => local_name!("feFuncA"),
        local_name!("fefuncb") => local_name!("feFuncB"),
        local_name!("fefuncg") => local_name!("feFuncG"),
        local_name!("fefuncr") => local_name!("feFuncR"),
        local_name!("fegaussianblur") => local_name!("feGaussianBlur"),
        local_name!("feimage") => local_name!("feImage"),
        local_name!("femerge") => local_name!("feMerge"),
        local_name!("femergenode") => local_name!("feMergeNode"),
        local_name!("femorphology") => local_name!("feMorphology"),
        local_name!("feoffset") => local_name!("feOffset"),
        local_name!("fepointlight") => local_name!("fePointLight"),
        local_name!("fespecularlighting") => local_name!("feSpecularLighting"),
        local_name!("fespotlight") => local_name!("feSpotLight"),
        local_name!("fetile") => local_name!("feTile"),
        local_name!("feturbulence") => local_name!("feTurbulence"),
        local_name!("foreignobject") => local_name!("foreignObject"),
        local_name!("glyphref") => local_name!("glyphRef"),
        local_name!("lineargradient") => local_name!("linearGradient"),
        local_name!("radialgradient") => local_name!("radialGradient"),
        local_name!("textpath") => local_name!("textPath"),
        _ => name.clone(),
    }
}
