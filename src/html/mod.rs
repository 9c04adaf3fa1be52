//! HTML analysis for the crawl and summary projections: one call, [`analyze`], decodes a
//! payload, parses it with html5ever (the WHATWG HTML5 algorithm) and returns everything the
//! projections store — the decoded text, the text pile, the links and the document
//! description.
//!
//! # Text pile
//! Every piece of visible text lands in exactly one of six fields:
//! * `big_headlines`: text inside `h1`–`h3`; `small_headlines`: inside `h4`–`h6`;
//! * `code_text`: inside `pre` (not inside a headline); `code`, `samp` and `kbd` outside
//!   `pre` are inline code, whose words stay in the field of the sentence around them (a
//!   snippet would have holes where they were);
//! * `quote_text`: inside `blockquote`, `q` (not inside a headline or code);
//! * `text`: the rest of the text inside the *main region*;
//! * `secondary_text`: the rest.
//!
//! The main region is the first `<main>` (or `role="main"`) that is not hidden. Without one,
//! it is the first `<article>` (or `role="article"`) that is neither hidden nor inside `nav`,
//! `footer`, `header` or `aside`. Inside the region, `aside` content goes to
//! `secondary_text`, `header` content stays in `text` (an article's header holds its title
//! and byline).
//!
//! When a page has neither, the whole page is the main region, except `header` and `aside`
//! content (and `role="banner"`, `role="complementary"`), which goes to `secondary_text`:
//! the body of a page without landmarks is its content, and leaving `text` empty would hide
//! it from title-and-text ranking.
//!
//! Permalink glyphs (`¶`, `§`, `#`, `🔗`) are dropped from the fields when they are the text
//! of a link inside a headline, or of a permalink anchor anywhere (`class="headerlink"`, as
//! Sphinx writes after definitions, or a `title` starting with "Permalink"); they stay link
//! text.
//!
//! Dropped from all six fields: `head`, `nav`, `footer` (and `role="navigation"`,
//! `role="contentinfo"`), `script`, `style`, `template`, `noscript`, `svg`, `canvas`,
//! `iframe`, `object`, `embed`, `video`, `audio` (fallback content), `select`, `datalist`,
//! `textarea`, and hidden elements: the `hidden` attribute, `aria-hidden="true"`, an inline
//! style with `display:none` or `visibility:hidden`. Text in `nav` and `footer` still counts
//! as link text.
//!
//! Whitespace is collapsed to one space (Unicode white space, so also U+00A0). Block-level
//! elements and `br`, and line breaks inside `pre`, start a new line; table cells, and any element that changes the field
//! text goes to, separate words with a space. Fields hold no empty lines and no leading or
//! trailing white space.
//!
//! The digest is BLAKE2b-512 over the six fields joined by `"\n\n\n"` in the order text,
//! secondary_text, big_headlines, small_headlines, code_text, quote_text. (A field never
//! contains two consecutive newlines, so the joined form is unambiguous.)
//!
//! # Links
//! Collected from `a[href]`, `area[href]`, `link[href]`, `img[src]`, `iframe[src]`,
//! `frame[src]`, `audio[src]`, `video[src]`, `video[poster]`, `source[src]`, `embed[src]`,
//! `object[data]` and `script[src]`, in document order, resolved against `<base href>` (the
//! first one, itself resolved against the document URL). Not reported: empty values, values
//! that do not parse as URLs, and the schemes `javascript:`, `data:`, `about:`, `blob:`,
//! `vbscript:`. Links inside hidden elements, `head`, `nav` and `footer` are reported (with
//! their location flags); elements inside `svg`, inside `template` contents and inside
//! `noscript` (which is parsed as text, as by a browser that runs scripts) are not looked at.
//! At most [`MAX_LINKS`] links are collected.
//!
//! Link text: for `a`, its text content including nav/footer text and the `alt` of images
//! inside, else its `aria-label`, else its `title`; for `img` and `area`, `alt`; for the
//! others, `title`. Normalized like the pile, at most [`MAX_LINK_TEXT`] bytes.
//!
//! Location flags come from the element's ancestors (not the element itself) below `body`;
//! landmark roles count like their elements (`banner` → header, `contentinfo` → footer,
//! `complementary` → aside, `navigation` → nav, `main`, `article`, `form`). `in_code` means
//! inside `code`, `pre`, `samp` or `kbd`; `in_list` inside `ul`, `ol`, `dl` or `menu`.
//!
//! # Limits
//! Hostile documents are parsed in linear time: see [`dom`] for the parser guards (at most
//! 128 attributes per tag, 256 open elements, two million nodes, and a work budget of 8
//! units per input byte). What they cut is reported in [`Document::limits`]. Analysis walks
//! the tree without recursion.

mod dates;
mod decode;
pub mod dom;
mod extract;
mod links;
mod pile;
mod survey;
mod walk;

pub use dates::{date_in_url_path, parse_datetime};
pub use decode::{EncodingSource, PRESCAN_BYTES, charset_parameter, decode, detect};
pub use links::{DestinationType, LinkLocality, Rel, by_extension, by_mime_type, locality};
use url::Url;

/// Links collected per document at most.
pub const MAX_LINKS: usize = 100_000;
/// Bytes of link text kept per link at most.
pub const MAX_LINK_TEXT: usize = 1000;

/// Everything the projections need from one HTML payload.
#[derive(Clone, Debug)]
pub struct Document {
    /// The name of the encoding used (WHATWG name, e.g. "windows-1252").
    pub encoding: &'static str,
    pub encoding_source: EncodingSource,
    /// Some bytes were invalid in the encoding and became U+FFFD.
    pub had_decoding_errors: bool,
    /// The whole document decoded to UTF-8, byte-order mark removed.
    pub text_utf8: String,
    /// The URL relative links were resolved against: `<base href>` or the document URL.
    pub base_url: Url,
    pub pile: TextPile,
    /// The start of the pile's text in document order (headlines, text, code and quotes as
    /// they occur; no title, nav or footer), at most 4 KiB.
    pub leading_text: String,
    pub links: Vec<Link>,
    pub description: DocumentDescription,
    pub limits: Limits,
}

/// The six text fields and their digest; see the module documentation for the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextPile {
    pub text: String,
    pub secondary_text: String,
    pub big_headlines: String,
    pub small_headlines: String,
    pub code_text: String,
    pub quote_text: String,
    /// BLAKE2b-512 of [`TextPile::joined`].
    pub digest: [u8; 64],
}

impl TextPile {
    /// A pile of the six fields, in digest order, with its digest.
    pub fn from_fields(fields: [String; 6]) -> TextPile {
        let [
            text,
            secondary_text,
            big_headlines,
            small_headlines,
            code_text,
            quote_text,
        ] = fields;
        let mut pile = TextPile {
            text,
            secondary_text,
            big_headlines,
            small_headlines,
            code_text,
            quote_text,
            digest: [0; 64],
        };
        pile.compute_digest();
        pile
    }

    /// The fields in digest order.
    pub fn fields(&self) -> [&str; 6] {
        [
            &self.text,
            &self.secondary_text,
            &self.big_headlines,
            &self.small_headlines,
            &self.code_text,
            &self.quote_text,
        ]
    }

    /// The fields joined by `"\n\n\n"`, the digest's input.
    pub fn joined(&self) -> String {
        self.fields().join("\n\n\n")
    }

    pub fn is_empty(&self) -> bool {
        self.fields().iter().all(|f| f.is_empty())
    }

    /// Sets `digest` from the fields (BLAKE2b-512 of [`TextPile::joined`], fed field by
    /// field without building the joined string): after the fields were made or cut.
    pub(crate) fn compute_digest(&mut self) {
        use blake2::{Blake2b512, Digest};
        let mut hasher = Blake2b512::new();
        for (i, field) in self.fields().iter().enumerate() {
            if i > 0 {
                hasher.update(b"\n\n\n");
            }
            hasher.update(field.as_bytes());
        }
        self.digest.copy_from_slice(&hasher.finalize());
    }
}

/// One link of the document.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Lower-case element name: "a", "link", "img", …
    pub tag: &'static str,
    /// The attribute the URL came from: "href", "src", "poster" or "data".
    pub attribute: &'static str,
    /// The resolved URL without its fragment.
    pub url: Url,
    /// The fragment, without `#` (`Some("")` for a trailing `#`).
    pub fragment: Option<String>,
    pub text: String,
    pub rel: Rel,
    pub location: LinkLocation,
    /// The element has an `h1`–`h6` inside.
    pub contains_headline: bool,
    pub destination_type: DestinationType,
    pub locality: LinkLocality,
}

/// Which elements (or landmark roles) enclose a link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkLocation {
    pub in_header: bool,
    pub in_footer: bool,
    pub in_aside: bool,
    pub in_nav: bool,
    pub in_form: bool,
    pub in_main: bool,
    pub in_article: bool,
    pub in_section: bool,
    pub in_table: bool,
    pub in_figure: bool,
    pub in_address: bool,
    pub in_code: bool,
    pub in_headline: bool,
    pub in_list: bool,
    pub in_paragraph: bool,
}

/// What a document says about itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocumentDescription {
    /// The first `<title>`, or the first `h1` when that is longer (in characters).
    pub title: Option<String>,
    /// The text of the first visible `h1`.
    pub primary_headline: Option<String>,
    /// `og:description`, else `<meta name=description>`, else `dc.description` /
    /// `dcterms.description`.
    pub description: Option<String>,
    /// `<html lang>` (else `<meta http-equiv=content-language>`, first entry), lower case,
    /// `_` written as `-`.
    pub primary_language: Option<String>,
    /// Unix seconds: `article:published_time`, `dcterms.created`, `dc.created`,
    /// `dc.date.created`, `dcterms.issued`, `dc.date.issued`, `dcterms.date`, `dc.date`,
    /// else a date in the URL path ([`date_in_url_path`]).
    pub created: Option<i64>,
    /// Unix seconds: `article:modified_time`, `og:updated_time`, `dcterms.modified`,
    /// `dc.modified`, `dc.date.modified`.
    pub updated: Option<i64>,
    pub directives: Directives,
    /// Positive for index pages (lists of links to other pages), negative for pages with
    /// running text: `L − W / 50`, where `L` is the number of distinct link targets of `a`
    /// and `area` links in the main region (outside nav, footer, aside and, when the page has
    /// no main region element, header) that point to another document and sit in a list, a
    /// table or a headline, or wrap a headline; and `W` is the number of words of `text`
    /// outside links.
    pub indexiness: f64,
}

/// What a document asks of crawlers and search engines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directives {
    /// The first `<link rel=canonical href>`, resolved against the base URL.
    pub canonical: Option<Url>,
    /// `<meta name=robots>` (all of them; `none` means both flags).
    pub robots: Robots,
    /// `<meta http-equiv=refresh>`.
    pub refresh: Option<Refresh>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Robots {
    pub noindex: bool,
    pub nofollow: bool,
}

/// A `<meta http-equiv=refresh content="5; url=…">`.
#[derive(Clone, Debug, PartialEq)]
pub struct Refresh {
    pub delay_seconds: u32,
    /// The target resolved against the base URL; None for a plain reload.
    pub url: Option<Url>,
}

/// What the guards cut from this document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Parsing stopped at the node limit; the rest of the document is missing.
    pub truncated: bool,
    /// More than [`MAX_LINKS`] links; the rest were not collected.
    pub links_truncated: bool,
    /// Start tags dropped at the open-element limit.
    pub dropped_start_tags: u64,
    /// Tags that lost attributes beyond the per-tag limit.
    pub cut_attribute_tags: u64,
}

/// What a crawler needs from one HTML payload: less than a [`Document`], and cheaper to
/// have (no text pile, no link details).
#[derive(Clone, Debug)]
pub struct Outline {
    /// The whole document decoded to UTF-8, byte-order mark removed.
    pub text_utf8: String,
    /// The distinct URLs of [`Document::links`], in the order they first appear.
    pub links: Vec<Url>,
    pub directives: Directives,
    pub limits: Limits,
}

/// Decodes one HTML payload and finds where it links to and its directives: the same as
/// [`analyze`] gives in [`Document::links`] (their distinct URLs) and
/// [`DocumentDescription::directives`].
pub fn outline(body: &[u8], content_type: Option<&str>, base_url: &Url) -> Outline {
    let decoded = decode::decode(body, content_type);
    let dom = dom::parse(&decoded.text);
    let outlined = extract::outline(&dom, base_url);
    Outline {
        text_utf8: decoded.text,
        links: outlined.links,
        directives: outlined.directives,
        limits: Limits {
            truncated: dom.truncated,
            links_truncated: outlined.links_truncated,
            dropped_start_tags: dom.dropped_start_tags,
            cut_attribute_tags: dom.cut_attribute_tags,
        },
    }
}

/// Decodes and analyses one HTML payload.
///
/// `content_type` is the HTTP Content-Type value (its `charset` is used), `base_url` the
/// URL the document was fetched from (links are resolved against it, or against
/// `<base href>`, and compared with it for locality). Never fails: any byte string yields a
/// document, possibly empty.
pub fn analyze(body: &[u8], content_type: Option<&str>, base_url: &Url) -> Document {
    let decoded = decode::decode(body, content_type);
    let dom = dom::parse(&decoded.text);
    let extracted = extract::extract(&dom, base_url);
    Document {
        encoding: decoded.encoding.name(),
        encoding_source: decoded.source,
        had_decoding_errors: decoded.had_errors,
        text_utf8: decoded.text,
        base_url: extracted.base_url,
        pile: extracted.pile,
        leading_text: extracted.leading_text,
        links: extracted.links,
        description: extracted.description,
        limits: Limits {
            truncated: dom.truncated,
            links_truncated: extracted.links_truncated,
            dropped_start_tags: dom.dropped_start_tags,
            cut_attribute_tags: dom.cut_attribute_tags,
        },
    }
}
