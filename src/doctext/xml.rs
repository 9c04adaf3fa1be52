//! The text of an XML document (JATS, TEI, DocBook, the XML inside office files, XHTML):
//! character data by element roles, without the tags. Read as a stream of events: nesting
//! costs one byte of stack per open element up to [`MAX_DEPTH`], none beyond.

use quick_xml::events::Event;
use quick_xml::reader::Reader;

use super::{Field, Piler, short};

/// Open elements whose roles are kept; deeper ones take their parent's.
const MAX_DEPTH: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Inline: no separator (a Word run splits words anywhere).
    Inline,
    /// A word boundary (table cells, keywords, a tab).
    Word,
    /// A line boundary (paragraphs, sections, list items).
    Block,
    /// A title: the document's first is its title.
    Title,
    Heading,
    Code,
    Quote,
    /// Nothing inside is text (scripts, styles, Word field codes, embedded binaries).
    Skip,
}

fn role(local: &str) -> Role {
    match local {
        "title" | "article-title" | "book-title" => Role::Title,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "head" | "h" | "subtitle" | "heading" => {
            Role::Heading
        }
        "code" | "pre" | "preformat" | "programlisting" | "screen" | "computeroutput"
        | "userinput" | "code-block" => Role::Code,
        "quote" | "disp-quote" | "blockquote" | "q" | "epigraph" => Role::Quote,
        "script" | "style" | "instrText" | "binary" | "bin-data" | "math" | "svg" => Role::Skip,
        "p" | "div" | "sec" | "section" | "para" | "simpara" | "li" | "item" | "list-item"
        | "tr" | "row" | "br" | "cr" | "body" | "abstract" | "caption" | "note" | "fn" | "ref"
        | "mixed-citation" | "element-citation" | "bibl" | "biblStruct" | "lg" | "l" | "table"
        | "figure" | "fig" | "entry" | "si" | "dd" | "dt" | "address" | "blockquote-p" | "list"
        | "ul" | "ol" | "dl" => Role::Block,
        "td" | "th" | "table-cell" | "c" | "kwd" | "contrib" | "aff" | "surname"
        | "given-names" | "name" | "persName" | "tab" | "label" | "term" | "s" | "v" => Role::Word,
        _ => Role::Inline,
    }
}

/// What reading gave besides the text.
pub(super) struct Read {
    pub title: Option<String>,
    /// The XML was malformed here (the text before it is kept).
    pub error: Option<String>,
}

/// The field text under an element of this role goes to.
fn field_of(role: Role, in_title: bool) -> Field {
    match role {
        Role::Title if in_title => Field::BigHeadlines,
        Role::Title | Role::Heading => Field::SmallHeadlines,
        Role::Code => Field::Code,
        Role::Quote => Field::Quote,
        _ => Field::Text,
    }
}

/// The state of the innermost open element that decides where text goes.
#[derive(Clone, Copy)]
struct Context {
    /// The element's own role (what separates its text from what follows).
    own: Role,
    /// The role its text has (a link inside a title is title).
    role: Role,
    /// Inside the document's title.
    title: bool,
}

pub(super) fn text(body: &[u8], piler: &mut Piler) -> Read {
    let mut reader = Reader::from_reader(body);
    reader.config_mut().check_end_names = false;
    let mut stack: Vec<Context> = Vec::new();
    let mut depth = 0usize;
    let mut title: Option<String> = None;
    let mut title_text = String::new();
    let mut in_title = false;
    let mut error = None;
    let mut buf = Vec::new();
    let base = Context {
        own: Role::Block,
        role: Role::Block,
        title: false,
    };
    loop {
        if !piler.has_room() {
            break;
        }
        buf.clear();
        let at = reader.buffer_position();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                error = Some(format!("at byte {at}: {e}"));
                break;
            }
        };
        let current = stack.last().copied().unwrap_or(base);
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                let empty = matches!(event, Event::Empty(_));
                let r = role(start.local_name().as_ref());
                let inherited = if current.role == Role::Skip {
                    Role::Skip
                } else {
                    match r {
                        Role::Inline | Role::Word | Role::Block => match current.role {
                            Role::Title | Role::Heading | Role::Code | Role::Quote => current.role,
                            _ => r,
                        },
                        _ => r,
                    }
                };
                let field = field_of(inherited, current.title);
                match r {
                    Role::Word => piler.separate(field, false),
                    Role::Inline | Role::Skip => {}
                    _ => piler.separate(field, true),
                }
                if !empty {
                    let starts_title = r == Role::Title && title.is_none() && !in_title;
                    if starts_title {
                        in_title = true;
                        title_text.clear();
                    }
                    depth += 1;
                    if depth <= MAX_DEPTH {
                        stack.push(Context {
                            own: r,
                            role: inherited,
                            title: current.title || starts_title,
                        });
                    }
                }
            }
            Event::End(_) => {
                if depth <= MAX_DEPTH
                    && let Some(closed) = stack.pop()
                {
                    let field = field_of(closed.role, closed.title);
                    match closed.own {
                        Role::Inline | Role::Skip => {}
                        Role::Word => piler.separate(field, false),
                        _ => {
                            piler.separate(field, true);
                            piler.separate(Field::Text, true);
                        }
                    }
                    if closed.title && !stack.last().is_some_and(|c| c.title) && in_title {
                        in_title = false;
                        title = short(&title_text);
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) => {
                if current.role != Role::Skip {
                    let content = t.xml10_content();
                    let field = field_of(current.role, current.title);
                    piler.push(field, &content);
                    if in_title {
                        title_text.push_str(&content);
                    }
                }
            }
            Event::CData(c) => {
                if current.role != Role::Skip {
                    let content = c.xml10_content();
                    piler.push(field_of(current.role, current.title), &content);
                }
            }
            Event::GeneralRef(r) => {
                if current.role == Role::Skip {
                    continue;
                }
                let ch = match r.resolve_char_ref() {
                    Ok(Some(ch)) => Some(ch),
                    _ => match r.as_ref() {
                        "amp" => Some('&'),
                        "lt" => Some('<'),
                        "gt" => Some('>'),
                        "quot" => Some('"'),
                        "apos" => Some('\''),
                        "nbsp" => Some(' '),
                        // An entity of a DTD that is not read: a word boundary.
                        _ => None,
                    },
                };
                let field = field_of(current.role, current.title);
                match ch {
                    Some(ch) => {
                        let mut b = [0u8; 4];
                        piler.push(field, ch.encode_utf8(&mut b));
                        if in_title {
                            title_text.push(ch);
                        }
                    }
                    None => piler.separate(field, false),
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_) => {}
        }
    }
    if in_title && title.is_none() {
        title = short(&title_text);
    }
    Read { title, error }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(xml: &str) -> (crate::html::TextPile, Read) {
        let mut piler = Piler::new(1 << 20);
        let r = text(xml.as_bytes(), &mut piler);
        (piler.finish(), r)
    }

    #[test]
    fn jats_article() {
        let (pile, r) = read(
            r#"<?xml version="1.0"?><!DOCTYPE article><article><front><article-meta>
            <title-group><article-title>Deep <italic>sea</italic> cores</article-title></title-group>
            <kwd-group><kwd>mud</kwd><kwd>silt</kwd></kwd-group>
            <abstract><p>We drilled &amp; found&#x20;layers.</p></abstract></article-meta></front>
            <body><sec><title>Methods</title><p>Core <monospace>x</monospace>s were cut.</p>
            <code>let a = 1;</code><disp-quote><p>Mud is old.</p></disp-quote></sec></body></article>"#,
        );
        assert_eq!(r.title.as_deref(), Some("Deep sea cores"));
        assert!(r.error.is_none());
        assert_eq!(pile.big_headlines, "Deep sea cores");
        assert_eq!(pile.small_headlines, "Methods");
        assert_eq!(pile.code_text, "let a = 1;");
        assert_eq!(pile.quote_text, "Mud is old.");
        assert_eq!(
            pile.text,
            "mud silt\nWe drilled & found layers.\nCore xs were cut."
        );
    }

    #[test]
    fn deep_nesting_and_broken_xml_keep_what_was_read() {
        let deep = format!(
            "<a>{}word{}</a>",
            "<b>".repeat(100_000),
            "</b>".repeat(100_000)
        );
        let (pile, r) = read(&deep);
        assert_eq!(pile.text, "word");
        assert!(r.error.is_none());
        let (pile, r) = read("<doc><p>kept</p><p>then <!-- never closed");
        assert!(pile.text.starts_with("kept"), "{pile:?}");
        assert!(r.error.is_some());
    }

    #[test]
    fn skipped_elements_and_word_runs() {
        let (pile, _) = read(
            r#"<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>Hel</w:t></w:r><w:r><w:t>lo</w:t></w:r><w:r><w:tab/><w:t>world</w:t></w:r><w:r><w:instrText>PAGE</w:instrText></w:r></w:p><w:p><w:r><w:t>next</w:t></w:r></w:p></w:body></w:document>"#,
        );
        assert_eq!(pile.text, "Hello world\nnext");
    }
}
