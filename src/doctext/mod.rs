//! Text of the full-text types other than HTML (`schemas/fulltext-types.json`), as text
//! piles for the summary database: PDF (GROBID's TEI when it has run, else a PDF text
//! library in a child process, see [`pdf`]), plain text, Markdown, XML (JATS, TEI, any
//! other: the text of the elements), and the office formats that are zips of XML (docx,
//! xlsx, odt, ods, epub).
//!
//! Every extractor is bounded: the body is already cut at `--max-body-bytes`, the text
//! stops growing past the page's text limit, zip members are inflated to a bounded size,
//! and XML is read as a stream (no tree, so no recursion however deep the nesting).

mod office;
pub mod pdf;
mod xml;

use std::fmt;

use crate::html::TextPile;

/// How the text of a type is had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Html,
    Pdf,
    Plain,
    Markdown,
    Xml,
    Office(office::Format),
}

/// The kind of text a MIME type (a capture's Content-Type or stored type) gives; `None`
/// for types whose text cannot be had (images, archives, Word 97, PostScript, DVI, RTF).
pub fn kind_of(mime: Option<&str>) -> Option<Kind> {
    let mime = crate::mime::normalize(mime?)?;
    Some(match &*mime {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/pdf" => Kind::Pdf,
        "text/plain" | "text/x-tex" => Kind::Plain,
        "text/markdown" | "text/x-markdown" => Kind::Markdown,
        "text/xml" | "application/xml" | "application/jats+xml" | "application/tei+xml" => {
            Kind::Xml
        }
        other => Kind::Office(office::Format::of_mime(other)?),
    })
}

/// Where a text pile's text came from: `summary_payload.text_source`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    Html,
    GrobidTei,
    PdfTextLibrary,
    Plain,
    Markdown,
    Xml,
    Office,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Html => "html",
            Source::GrobidTei => "grobid_tei",
            Source::PdfTextLibrary => "pdf_text_library",
            Source::Plain => "plain",
            Source::Markdown => "markdown",
            Source::Xml => "xml",
            Source::Office => "office",
        }
    }
}

/// Why no (or not all) text could be had from a document: counted and reported as a
/// problem of the payload, whose other text (if any) is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The counter, e.g. `pdf_text_failed`.
    pub reason: &'static str,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.message)
    }
}

/// The text of one document.
#[derive(Clone, Debug)]
pub struct DocText {
    pub pile: TextPile,
    pub title: Option<String>,
    pub description: Option<String>,
    pub source: Source,
    pub problem: Option<Problem>,
}

/// The six pile fields, in digest order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Text = 0,
    Secondary = 1,
    BigHeadlines = 2,
    SmallHeadlines = 3,
    Code = 4,
    Quote = 5,
}

/// Fills the six fields with white space collapsed (a run with a line break becomes one
/// line break, any other run one space), up to a byte limit over all fields.
pub(crate) struct Piler {
    fields: [String; 6],
    /// 0: nothing pending, 1: a space, 2: a line break.
    pending: [u8; 6],
    total: usize,
    limit: usize,
}

impl Piler {
    pub(crate) fn new(limit: usize) -> Piler {
        Piler {
            fields: Default::default(),
            pending: [0; 6],
            total: 0,
            limit,
        }
    }

    /// Room is left: the text has not reached the limit.
    pub(crate) fn has_room(&self) -> bool {
        self.total < self.limit
    }

    pub(crate) fn separate(&mut self, field: Field, line: bool) {
        let p = &mut self.pending[field as usize];
        *p = (*p).max(if line { 2 } else { 1 });
    }

    pub(crate) fn push(&mut self, field: Field, text: &str) {
        let i = field as usize;
        for c in text.chars() {
            if self.total >= self.limit {
                return;
            }
            if c.is_whitespace() {
                self.separate(field, c == '\n');
                continue;
            }
            // Control characters (a PDF's form feeds aside, which are white space) say
            // nothing and would only break the JSON and terminals the text is shown in.
            if c.is_control() {
                continue;
            }
            let out = &mut self.fields[i];
            if !out.is_empty() {
                match self.pending[i] {
                    2 => out.push('\n'),
                    1 => out.push(' '),
                    _ => {}
                }
                self.total += usize::from(self.pending[i] > 0);
            }
            self.pending[i] = 0;
            out.push(c);
            self.total += c.len_utf8();
        }
    }

    pub(crate) fn finish(self) -> TextPile {
        TextPile::from_fields(self.fields)
    }
}

/// At most this many characters of a title or description (a PDF's Info title or a
/// GROBID abstract can be any length).
const MAX_TITLE_CHARS: usize = 500;

pub(crate) fn short(text: &str) -> Option<String> {
    let mut piler = Piler::new(usize::MAX);
    piler.push(Field::Text, text);
    let pile = piler.finish();
    let mut out: String = pile.text.chars().take(MAX_TITLE_CHARS).collect();
    out = out.replace('\n', " ");
    (!out.is_empty()).then_some(out)
}

/// The text of a document of kind `kind` (not HTML, which has its own analysis, nor
/// PDF, see [`pdf`]), at most about `limit` bytes of it.
pub fn extract(kind: Kind, body: &[u8], content_type: Option<&str>, limit: usize) -> DocText {
    match kind {
        Kind::Plain | Kind::Markdown => {
            let decoded = crate::html::decode(body, content_type);
            let mut piler = Piler::new(limit);
            let (title, source) = if kind == Kind::Markdown {
                (markdown(&decoded.text, &mut piler), Source::Markdown)
            } else {
                piler.push(Field::Text, &decoded.text);
                (None, Source::Plain)
            };
            DocText {
                pile: piler.finish(),
                title,
                description: None,
                source,
                problem: None,
            }
        }
        Kind::Xml => {
            let mut piler = Piler::new(limit);
            let read = xml::text(body, &mut piler);
            DocText {
                pile: piler.finish(),
                title: read.title,
                description: None,
                source: Source::Xml,
                problem: read.error.map(|message| Problem {
                    reason: "xml_text_malformed",
                    message,
                }),
            }
        }
        Kind::Office(format) => office::text(format, body, limit),
        Kind::Html | Kind::Pdf => DocText {
            pile: Piler::new(0).finish(),
            title: None,
            description: None,
            source: Source::Plain,
            problem: Some(Problem {
                reason: "text_kind_unsupported",
                message: format!("{kind:?} is not read by doctext::extract"),
            }),
        },
    }
}

/// Markdown by its lines: ATX headings (`#` … `######`) are headlines (the first
/// level-1 heading the title), fenced code blocks code, `>` lines quotes, the rest text.
/// Inline markup stays: the search tokenizer drops its punctuation.
fn markdown(text: &str, piler: &mut Piler) -> Option<String> {
    let mut title = None;
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        if !piler.has_room() {
            break;
        }
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
                piler.separate(Field::Code, true);
            } else {
                piler.push(Field::Code, line);
                piler.separate(Field::Code, true);
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(|c: char| c.is_whitespace()) {
            let heading = trimmed[hashes..].trim().trim_end_matches('#').trim();
            let field = if hashes <= 2 {
                Field::BigHeadlines
            } else {
                Field::SmallHeadlines
            };
            if hashes == 1 && title.is_none() {
                title = short(heading);
            }
            piler.push(field, heading);
            piler.separate(field, true);
            piler.separate(Field::Text, true);
            continue;
        }
        if let Some(quote) = trimmed.strip_prefix('>') {
            piler.push(Field::Quote, quote);
            piler.separate(Field::Quote, true);
            continue;
        }
        piler.push(Field::Text, line);
        piler.separate(Field::Text, true);
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_type() {
        assert_eq!(kind_of(Some("application/pdf")), Some(Kind::Pdf));
        assert_eq!(kind_of(Some("application/x-pdf")), Some(Kind::Pdf));
        assert_eq!(
            kind_of(Some("Text/Plain; charset=utf-8")),
            Some(Kind::Plain)
        );
        assert_eq!(kind_of(Some("application/xml")), Some(Kind::Xml));
        assert_eq!(kind_of(Some("text/html")), Some(Kind::Html));
        assert_eq!(kind_of(Some("text/markdown")), Some(Kind::Markdown));
        assert_eq!(kind_of(Some("image/png")), None);
        assert_eq!(kind_of(Some("application/msword")), None);
        assert_eq!(kind_of(None), None);
        assert!(matches!(
            kind_of(Some(
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            )),
            Some(Kind::Office(_))
        ));
    }

    #[test]
    fn plain_text_is_collapsed_and_capped() {
        let d = extract(
            Kind::Plain,
            b"Hello \t world\r\n\n  second\x0cline \x01x",
            None,
            1000,
        );
        assert_eq!(d.pile.text, "Hello world\nsecond line x");
        let d = extract(Kind::Plain, "ab cdé fg".as_bytes(), None, 6);
        assert_eq!(d.pile.text, "ab cdé");
        let d = extract(
            Kind::Plain,
            b"caf\xe9",
            Some("text/plain; charset=latin1"),
            99,
        );
        assert_eq!(d.pile.text, "café");
    }

    #[test]
    fn markdown_fields() {
        let md = "# Sediment\n\nSome *text* here.\n\n## Install\n\n```sh\ncargo install sediment\n```\n\n> quoted words\n### Small\n";
        let d = extract(Kind::Markdown, md.as_bytes(), None, 10_000);
        assert_eq!(d.title.as_deref(), Some("Sediment"));
        assert_eq!(d.pile.big_headlines, "Sediment\nInstall");
        assert_eq!(d.pile.small_headlines, "Small");
        assert_eq!(d.pile.code_text, "cargo install sediment");
        assert_eq!(d.pile.quote_text, "quoted words");
        assert_eq!(d.pile.text, "Some *text* here.");
        assert_eq!(d.source, Source::Markdown);
    }
}
