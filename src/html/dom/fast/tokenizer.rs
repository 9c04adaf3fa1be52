//! The fast path's tokenizer: the WHATWG tokenizer's states for the markup real pages use,
//! working on bytes with `memchr`, keeping only the attributes the analysis reads.
//!
//! It never guesses. Whatever it does not reproduce exactly as html5ever would (a NUL byte,
//! end of input inside a tag or comment, more attributes than
//! [`MAX_FAST_ATTRIBUTES`]) makes it return [`Unsupported`], and the document is parsed again
//! by html5ever.

use std::sync::LazyLock;

use html5ever::tendril::StrTendril;
use html5ever::{Attribute, LocalName, QualName, local_name, ns};

use super::super::{KEPT_ATTRIBUTES, MAX_ATTRIBUTES, hiding_attribute};

/// The fast path gives the document to html5ever; the reason is for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported(pub &'static str);

/// Attributes on one tag above which the fast path gives up, well under
/// [`MAX_ATTRIBUTES`] so that the full path's attribute cutting (whose scanner is
/// lighter than a tokenizer) never applies to a document the fast path accepted.
const MAX_FAST_ATTRIBUTES: usize = 64;
const _: () = assert!(MAX_FAST_ATTRIBUTES < MAX_ATTRIBUTES);

/// How the text after a start tag is read (chosen by the tree builder, as in the standard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RawKind {
    /// `title`, `textarea`: character references decoded.
    Rcdata,
    /// `style`, `xmp`, `iframe`, `noembed`, `noframes`, `noscript`.
    Rawtext,
    /// `script`.
    ScriptData,
}

/// Where a text token's characters are: a slice of the input, or the decoding buffer.
#[derive(Debug, Clone, Copy)]
pub(super) enum Text {
    Source(usize, usize),
    Buffer,
}

pub(super) enum Token {
    Text(Text),
    /// The tag is in [`Tokenizer::tag`].
    Tag,
    Comment,
    Doctype {
        no_quirks: bool,
    },
    Eof,
}

/// The current tag: its name and the attributes the analysis keeps.
pub(super) struct Tag {
    pub(super) end: bool,
    pub(super) name: LocalName,
    /// Kept attributes ([`KEPT_ATTRIBUTES`]), first occurrence of each, in source order.
    pub(super) attrs: Vec<Attribute>,
    /// An attribute hides the element (see `hiding_attribute`).
    pub(super) hidden: bool,
    pub(super) self_closing: bool,
}

/// The attributes read: the kept ones, the `xlink:` ones an SVG element keeps under a kept
/// name (`xlink:href` is kept as `href` in the XLink namespace), then the three that can hide
/// an element.
const XLINK_ATTRIBUTES: [&str; 4] = ["xlink:href", "xlink:title", "xlink:role", "xlink:type"];
const HIDING_ATTRIBUTES: [&str; 3] = ["hidden", "aria-hidden", "style"];
const STORED_ATTRIBUTES: usize = KEPT_ATTRIBUTES.len() + XLINK_ATTRIBUTES.len();
const READ_ATTRIBUTES: usize = STORED_ATTRIBUTES + HIDING_ATTRIBUTES.len();

fn read_attribute_names() -> [&'static str; READ_ATTRIBUTES] {
    let mut names = [""; READ_ATTRIBUTES];
    names[..KEPT_ATTRIBUTES.len()].copy_from_slice(&KEPT_ATTRIBUTES);
    names[KEPT_ATTRIBUTES.len()..STORED_ATTRIBUTES].copy_from_slice(&XLINK_ATTRIBUTES);
    names[STORED_ATTRIBUTES..].copy_from_slice(&HIDING_ATTRIBUTES);
    names
}

static READ_NAMES: LazyLock<[&'static str; READ_ATTRIBUTES]> = LazyLock::new(read_attribute_names);
static READ_QUALNAMES: LazyLock<Vec<QualName>> = LazyLock::new(|| {
    READ_NAMES
        .iter()
        .map(|n| QualName::new(None, ns!(), LocalName::from(*n)))
        .collect()
});

fn read_attribute(name: &[u8]) -> Option<usize> {
    READ_NAMES
        .iter()
        .position(|n| n.len() == name.len() && n.as_bytes().eq_ignore_ascii_case(name))
}

pub(super) struct Tokenizer<'a> {
    src: &'a str,
    /// The document as one shared tendril: attribute values are views of it.
    document: StrTendril,
    pos: usize,
    /// Decoded text of the last `Text::Buffer` token.
    buffer: String,
    pub(super) tag: Tag,
    raw: Option<RawKind>,
    value: String,
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b' ' | b'\r')
}

impl<'a> Tokenizer<'a> {
    pub(super) fn new(src: &'a str) -> Result<Tokenizer<'a>, Unsupported> {
        if memchr::memchr(0, src.as_bytes()).is_some() {
            return Err(Unsupported("NUL character"));
        }
        if u32::try_from(src.len()).is_err() {
            return Err(Unsupported("a document of 4 GiB or more"));
        }
        let pos = if src.starts_with('\u{feff}') { 3 } else { 0 };
        // html5ever drops a U+FEFF wherever its input queue starts, which is also after each
        // 64 KiB slice and after a `<meta charset>` (where it pauses for the encoding).
        if memchr::memmem::find(&src.as_bytes()[pos..], "\u{feff}".as_bytes()).is_some() {
            return Err(Unsupported("U+FEFF inside the document"));
        }
        Ok(Tokenizer {
            src,
            document: StrTendril::from_slice(src),
            pos,
            buffer: String::new(),
            tag: Tag {
                end: false,
                name: LocalName::from(""),
                attrs: Vec::new(),
                hidden: false,
                self_closing: false,
            },
            raw: None,
            value: String::new(),
        })
    }

    /// Whether the input at byte `at` starts with `prefix`.
    pub(super) fn source_starts_with(&self, at: usize, prefix: &str) -> bool {
        self.src.as_bytes()[at.min(self.src.len())..].starts_with(prefix.as_bytes())
    }

    /// Where the next token starts in the input.
    pub(super) fn position(&self) -> usize {
        self.pos
    }

    pub(super) fn text(&self, text: Text) -> &str {
        match text {
            Text::Source(from, to) => &self.src[from..to],
            Text::Buffer => &self.buffer,
        }
    }

    /// The text after the current start tag is raw text of this kind, up to its end tag.
    pub(super) fn enter_raw(&mut self, kind: RawKind) {
        self.raw = Some(kind);
    }

    pub(super) fn next_token(&mut self) -> Result<Token, Unsupported> {
        loop {
            if let Some(kind) = self.raw.take() {
                if let Some(token) = self.raw_text(kind)? {
                    return Ok(token);
                }
                continue;
            }
            let b = self.src.as_bytes();
            if self.pos >= b.len() {
                return Ok(Token::Eof);
            }
            if b[self.pos] != b'<' || !starts_markup(b, self.pos) {
                return Ok(self.data());
            }
            let next = b[self.pos + 1];
            if next == b'!' {
                return self.markup_declaration();
            }
            if next == b'?' {
                self.pos += 1;
                return self.bogus_comment();
            }
            if next == b'/' {
                match b.get(self.pos + 2) {
                    Some(c) if c.is_ascii_alphabetic() => {
                        self.pos += 2;
                        return self.tag(true);
                    }
                    Some(b'>') => {
                        self.pos += 3;
                        continue;
                    }
                    _ => {
                        self.pos += 2;
                        return self.bogus_comment();
                    }
                }
            }
            self.pos += 1;
            return self.tag(false);
        }
    }

    /// Character data up to the next markup.
    fn data(&mut self) -> Token {
        let b = self.src.as_bytes();
        let start = self.pos;
        let mut copied = start;
        let mut decoded = false;
        let mut at = start;
        while let Some(i) = memchr::memchr3(b'<', b'&', b'\r', &b[at..]) {
            at += i;
            match b[at] {
                b'<' if starts_markup(b, at) => break,
                b'<' => at += 1,
                b'\r' => {
                    self.start_decoding(&mut decoded, start, copied, at);
                    self.buffer.push('\n');
                    at += if b.get(at + 1) == Some(&b'\n') { 2 } else { 1 };
                    copied = at;
                }
                _ => match char_ref(self.src, at, false) {
                    Some((chars, end)) => {
                        self.start_decoding(&mut decoded, start, copied, at);
                        self.buffer.extend(chars.iter().flatten());
                        at = end;
                        copied = at;
                    }
                    None => at += 1,
                },
            }
        }
        let end = if at < b.len() && b[at] == b'<' {
            at
        } else {
            b.len()
        };
        self.pos = end;
        if decoded {
            self.buffer.push_str(&self.src[copied..end]);
            Token::Text(Text::Buffer)
        } else {
            Token::Text(Text::Source(start, end))
        }
    }

    fn start_decoding(&mut self, decoded: &mut bool, start: usize, copied: usize, at: usize) {
        if !*decoded {
            *decoded = true;
            self.buffer.clear();
            self.buffer.push_str(&self.src[start..copied]);
        }
        self.buffer.push_str(&self.src[copied..at]);
    }

    fn markup_declaration(&mut self) -> Result<Token, Unsupported> {
        let b = self.src.as_bytes();
        let at = self.pos + 2;
        if b[at..].starts_with(b"--") {
            return self.comment(at + 2);
        }
        if b.len() >= at + 7 && b[at..at + 7].eq_ignore_ascii_case(b"doctype") {
            let Some(end) = memchr::memchr(b'>', &b[at..]) else {
                return Err(Unsupported("end of input in a DOCTYPE"));
            };
            let body = self.src[at + 7..at + end]
                .trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
            let name_len = body
                .bytes()
                .position(|c| is_space(c) || c == b'>')
                .unwrap_or(body.len());
            let no_quirks = body[..name_len].eq_ignore_ascii_case("html")
                && body[name_len..].bytes().all(is_space);
            self.pos = at + end + 1;
            return Ok(Token::Doctype { no_quirks });
        }
        if b[at..].starts_with(b"[CDATA[") {
            // A CDATA section in SVG, a bogus comment in HTML.
            return Err(Unsupported("<![CDATA["));
        }
        self.pos += 1;
        self.bogus_comment()
    }

    /// A comment whose text starts at `from` (after `<!--`).
    fn comment(&mut self, from: usize) -> Result<Token, Unsupported> {
        let b = self.src.as_bytes();
        if b[from..].starts_with(b">") {
            self.pos = from + 1;
            return Ok(Token::Comment);
        }
        if b[from..].starts_with(b"->") {
            self.pos = from + 2;
            return Ok(Token::Comment);
        }
        let mut at = from;
        while let Some(i) = memchr::memmem::find(&b[at..], b"--") {
            let dashes = at + i;
            let mut after = dashes + 2;
            while b.get(after) == Some(&b'-') {
                after += 1;
            }
            match b.get(after) {
                Some(b'>') => {
                    self.pos = after + 1;
                    return Ok(Token::Comment);
                }
                Some(b'!') if b.get(after + 1) == Some(&b'>') => {
                    self.pos = after + 2;
                    return Ok(Token::Comment);
                }
                _ => at = after,
            }
        }
        Err(Unsupported("end of input in a comment"))
    }

    /// From `self.pos` (the character after `<`, `</` or `<!`) to the next `>`.
    fn bogus_comment(&mut self) -> Result<Token, Unsupported> {
        match memchr::memchr(b'>', &self.src.as_bytes()[self.pos..]) {
            Some(i) => {
                self.pos += i + 1;
                Ok(Token::Comment)
            }
            None => Err(Unsupported("end of input in a bogus comment")),
        }
    }

    /// A start or end tag whose name starts at `self.pos`.
    fn tag(&mut self, end: bool) -> Result<Token, Unsupported> {
        let b = self.src.as_bytes();
        let start = self.pos;
        let Some(len) = b[start..]
            .iter()
            .position(|&c| is_space(c) || c == b'/' || c == b'>')
        else {
            return Err(Unsupported("end of input in a tag"));
        };
        self.tag.name = tag_name(&self.src[start..start + len]);
        self.tag.end = end;
        self.tag.attrs.clear();
        self.tag.hidden = false;
        self.tag.self_closing = false;
        self.pos = start + len;
        self.attributes(!end)?;
        Ok(Token::Tag)
    }

    /// The attributes of the current tag, through its `>`.
    fn attributes(&mut self, keep: bool) -> Result<(), Unsupported> {
        let b = self.src.as_bytes();
        let mut count = 0;
        let mut seen: u32 = 0;
        loop {
            while self.pos < b.len() && is_space(b[self.pos]) {
                self.pos += 1;
            }
            match b.get(self.pos) {
                None => return Err(Unsupported("end of input in a tag")),
                Some(b'>') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'/') => {
                    self.pos += 1;
                    if b.get(self.pos) == Some(&b'>') {
                        self.tag.self_closing = true;
                        self.pos += 1;
                        return Ok(());
                    }
                    continue;
                }
                Some(_) => {}
            }
            count += 1;
            if count > MAX_FAST_ATTRIBUTES {
                return Err(Unsupported("many attributes"));
            }
            // The name: its first character may be `=`.
            let name_start = self.pos;
            self.pos += 1;
            while self.pos < b.len() && !is_space(b[self.pos]) && !b"/>=".contains(&b[self.pos]) {
                self.pos += 1;
            }
            let name = name_start..self.pos;
            while self.pos < b.len() && is_space(b[self.pos]) {
                self.pos += 1;
            }
            let value = if b.get(self.pos) == Some(&b'=') {
                self.pos += 1;
                while self.pos < b.len() && is_space(b[self.pos]) {
                    self.pos += 1;
                }
                match b.get(self.pos) {
                    None => return Err(Unsupported("end of input in a tag")),
                    Some(&quote @ (b'"' | b'\'')) => {
                        let from = self.pos + 1;
                        let Some(len) = memchr::memchr(quote, &b[from..]) else {
                            return Err(Unsupported("end of input in an attribute value"));
                        };
                        self.pos = from + len + 1;
                        from..from + len
                    }
                    Some(b'>') => self.pos..self.pos,
                    Some(_) => {
                        let from = self.pos;
                        while self.pos < b.len() && !is_space(b[self.pos]) && b[self.pos] != b'>' {
                            self.pos += 1;
                        }
                        if self.pos == b.len() {
                            return Err(Unsupported("end of input in a tag"));
                        }
                        from..self.pos
                    }
                }
            } else {
                self.pos..self.pos
            };
            if !keep {
                continue;
            }
            let Some(index) = read_attribute(&b[name]) else {
                continue;
            };
            if seen & (1 << index) != 0 {
                continue;
            }
            seen |= 1 << index;
            let raw = &b[value.clone()];
            let value = if memchr::memchr2(b'&', b'\r', raw).is_none() {
                // As written: a view of the document, which costs no allocation.
                let text = self
                    .document
                    .subtendril(value.start as u32, raw.len() as u32);
                self.tag.hidden |= hiding_attribute(READ_NAMES[index], &text);
                text
            } else {
                self.decode_attribute_value(value.start, value.end);
                self.tag.hidden |= hiding_attribute(READ_NAMES[index], &self.value);
                StrTendril::from_slice(&self.value)
            };
            if index < STORED_ATTRIBUTES {
                self.tag.attrs.push(Attribute {
                    name: READ_QUALNAMES[index].clone(),
                    value,
                });
            }
        }
    }

    /// Decodes an attribute value into `self.value`.
    fn decode_attribute_value(&mut self, from: usize, to: usize) {
        self.value.clear();
        decode_into(&mut self.value, self.src, from..to, References::InAttribute);
    }

    /// The text of a raw-text element, up to (not including) its end tag; `None` when empty.
    fn raw_text(&mut self, kind: RawKind) -> Result<Option<Token>, Unsupported> {
        let b = self.src.as_bytes();
        let name = self.tag.name.as_bytes();
        let start = self.pos;
        let mut at = start;
        // Without its end tag, the element's text runs to the end of the input.
        let end = if kind == RawKind::ScriptData {
            script_end(b, start).unwrap_or(b.len())
        } else {
            loop {
                let Some(i) = memchr::memmem::find(&b[at..], b"</") else {
                    break b.len();
                };
                let lt = at + i;
                if ends_tag_named(b, lt + 2, name) {
                    break lt;
                }
                at = lt + 2;
            }
        };
        self.pos = end;
        if start == end {
            return Ok(None);
        }
        let needs_decoding = match kind {
            RawKind::Rcdata => memchr::memchr2(b'&', b'\r', &b[start..end]).is_some(),
            _ => memchr::memchr(b'\r', &b[start..end]).is_some(),
        };
        if !needs_decoding {
            return Ok(Some(Token::Text(Text::Source(start, end))));
        }
        self.buffer.clear();
        let references = match kind {
            RawKind::Rcdata => References::InText,
            _ => References::None,
        };
        decode_into(&mut self.buffer, self.src, start..end, references);
        Ok(Some(Token::Text(Text::Buffer)))
    }
}

/// Which character references [`decode_into`] decodes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum References {
    None,
    InText,
    InAttribute,
}

/// Appends `src[range]` to `out` with line breaks normalised (CR LF and CR become LF) and
/// character references decoded as `references` says. A reference is read up to the range's
/// end only (an attribute value's end, a raw-text element's end tag).
fn decode_into(out: &mut String, src: &str, range: std::ops::Range<usize>, references: References) {
    let (from, to) = (range.start, range.end);
    let b = src.as_bytes();
    let mut copied = from;
    let mut at = from;
    while let Some(i) = memchr::memchr2(b'&', b'\r', &b[at..to]) {
        at += i;
        if b[at] == b'\r' {
            out.push_str(&src[copied..at]);
            out.push('\n');
            at += if at + 1 < to && b[at + 1] == b'\n' {
                2
            } else {
                1
            };
            copied = at;
        } else if references != References::None
            && let Some((chars, next)) =
                char_ref(&src[..to], at, references == References::InAttribute)
        {
            out.push_str(&src[copied..at]);
            out.extend(chars.iter().flatten());
            at = next;
            copied = at;
        } else {
            at += 1;
        }
    }
    out.push_str(&src[copied..to]);
}

/// The character reference at `at` (an `&`), as html5ever reads it: the characters and
/// where the input continues, or `None` when the `&` is literal. `src` ends where the
/// tokenizer stops looking (an attribute value's end).
fn char_ref(src: &str, at: usize, in_attribute: bool) -> Option<([Option<char>; 2], usize)> {
    let b = src.as_bytes();
    match b.get(at + 1)? {
        b'#' => numeric_char_ref(b, at + 2).map(|(c, end)| ([Some(c), None], end)),
        c if c.is_ascii_alphanumeric() => named_char_ref(src, at + 1, in_attribute),
        _ => None,
    }
}

fn named_char_ref(
    src: &str,
    from: usize,
    in_attribute: bool,
) -> Option<([Option<char>; 2], usize)> {
    let b = src.as_bytes();
    let run = b[from..]
        .iter()
        .take(64)
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    let entities = &html5ever::data::NAMED_ENTITIES;
    // A name followed by `;` in the table is the longest match there can be.
    if b.get(from + run) == Some(&b';')
        && let Some(&(c1, c2)) = entities.get(&src[from..from + run + 1])
        && c1 != 0
    {
        return Some((chars(c1, c2), from + run + 1));
    }
    // Otherwise the longest prefix that is a whole name (the legacy names without `;`).
    let mut matched = None;
    for len in 1..=run {
        match entities.get(&src[from..from + len]) {
            None => break,
            Some(&(0, _)) => {}
            Some(&(c1, c2)) => matched = Some((len, c1, c2)),
        }
    }
    let (len, c1, c2) = matched?;
    let next = b.get(from + len).copied();
    if in_attribute && next.is_some_and(|c| c == b'=' || c.is_ascii_alphanumeric()) {
        return None;
    }
    Some((chars(c1, c2), from + len))
}

/// The interned, lower-cased tag name. The names most pages are made of are matched
/// directly (interning costs a hash and a table lookup).
fn tag_name(written: &str) -> LocalName {
    match written {
        "a" => local_name!("a"),
        "p" => local_name!("p"),
        "div" => local_name!("div"),
        "span" => local_name!("span"),
        "li" => local_name!("li"),
        "ul" => local_name!("ul"),
        "td" => local_name!("td"),
        "tr" => local_name!("tr"),
        "th" => local_name!("th"),
        "br" => local_name!("br"),
        "img" => local_name!("img"),
        "code" => local_name!("code"),
        "pre" => local_name!("pre"),
        "em" => local_name!("em"),
        "b" => local_name!("b"),
        "i" => local_name!("i"),
        "tt" => local_name!("tt"),
        "dt" => local_name!("dt"),
        "dd" => local_name!("dd"),
        "dl" => local_name!("dl"),
        "strong" => local_name!("strong"),
        "table" => local_name!("table"),
        "tbody" => local_name!("tbody"),
        "link" => local_name!("link"),
        "meta" => local_name!("meta"),
        "script" => local_name!("script"),
        "path" => local_name!("path"),
        "h1" => local_name!("h1"),
        "h2" => local_name!("h2"),
        "h3" => local_name!("h3"),
        _ if written.bytes().any(|c| c.is_ascii_uppercase()) => {
            LocalName::from(written.to_ascii_lowercase())
        }
        _ => LocalName::from(written),
    }
}

/// Whether the bytes at `at` are `name` (any case) followed by what ends a tag name.
fn ends_tag_named(b: &[u8], at: usize, name: &[u8]) -> bool {
    let after = at + name.len();
    b.len() > after
        && b[at..after].eq_ignore_ascii_case(name)
        && (is_space(b[after]) || b[after] == b'/' || b[after] == b'>')
}

/// The position of the `<` of the end tag that closes a script whose text starts at
/// `start`, following the tokenizer's script-data states: inside `<!--`, a `<script>` starts
/// a "double escaped" stretch in which `</script>` does not end the script, only the
/// double escape. `None` at end of input.
fn script_end(b: &[u8], start: usize) -> Option<usize> {
    #[derive(PartialEq)]
    enum State {
        Data,
        Escaped,
        DoubleEscaped,
    }
    let mut state = State::Data;
    // Dashes just read inside an escaped stretch (two or more before `>` end it).
    let mut dashes = 0;
    let mut at = start;
    loop {
        if state == State::Data {
            at += memchr::memchr(b'<', &b[at..])?;
        }
        let c = *b.get(at)?;
        match c {
            b'-' => {
                dashes += 1;
                at += 1;
                continue;
            }
            b'>' if dashes >= 2 => state = State::Data,
            b'<' => {
                let next = b.get(at + 1).copied();
                if state == State::Data {
                    if next == Some(b'/') && ends_tag_named(b, at + 2, b"script") {
                        return Some(at);
                    }
                    if b[at + 1..].starts_with(b"!--") {
                        state = State::Escaped;
                        dashes = 2;
                        at += 4;
                        continue;
                    }
                } else if next == Some(b'/') {
                    if ends_tag_named(b, at + 2, b"script") {
                        if state == State::Escaped {
                            return Some(at);
                        }
                        state = State::Escaped;
                        at += 2 + 6 + 1;
                        dashes = 0;
                        continue;
                    }
                } else if state == State::Escaped && ends_tag_named(b, at + 1, b"script") {
                    state = State::DoubleEscaped;
                    at += 1 + 6 + 1;
                    dashes = 0;
                    continue;
                }
            }
            _ => {}
        }
        dashes = 0;
        at += 1;
    }
}

/// Whether the `<` at `at` starts markup (a tag, an end tag, a comment or declaration);
/// otherwise it is text.
fn starts_markup(b: &[u8], at: usize) -> bool {
    match b.get(at + 1) {
        Some(c) => c.is_ascii_alphabetic() || matches!(c, b'!' | b'/' | b'?'),
        None => false,
    }
}

fn chars(c1: u32, c2: u32) -> [Option<char>; 2] {
    [
        char::from_u32(c1),
        (c2 != 0).then(|| char::from_u32(c2)).flatten(),
    ]
}

/// `&#…` from the digits at `from`: the character and where the input continues, or `None`
/// when there are no digits (the `&` is then literal).
fn numeric_char_ref(b: &[u8], from: usize) -> Option<(char, usize)> {
    let (base, digits_from) = match b.get(from) {
        Some(b'x' | b'X') => (16, from + 1),
        _ => (10, from),
    };
    let mut at = digits_from;
    let mut value: u32 = 0;
    let mut too_big = false;
    while let Some(d) = b.get(at).and_then(|&c| (c as char).to_digit(base)) {
        value = value.wrapping_mul(base);
        if value > 0x10FFFF {
            too_big = true;
        }
        value = value.wrapping_add(d);
        at += 1;
    }
    if at == digits_from {
        return None;
    }
    if b.get(at) == Some(&b';') {
        at += 1;
    }
    let c = match value {
        _ if too_big || value > 0x10FFFF => '\u{fffd}',
        0x00 | 0xD800..=0xDFFF => '\u{fffd}',
        0x80..=0x9F => html5ever::data::C1_REPLACEMENTS[(value - 0x80) as usize]
            .unwrap_or_else(|| char::from_u32(value).unwrap_or('\u{fffd}')),
        _ => char::from_u32(value).unwrap_or('\u{fffd}'),
    };
    Some((c, at))
}
