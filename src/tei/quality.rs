//! `grobid0:quality`: how much of a document GROBID recovered. The rule is documented
//! for users in `schemas/grobid-quality.md`; keep the two in step.

use serde_json::Value;

/// Quality of one GROBID extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quality {
    /// Nothing identifies the document and no content was extracted.
    Bad,
    /// Partly usable: header or content, not both.
    Marginal,
    /// Title, authors, full text and references all extracted.
    Good,
}

impl Quality {
    pub fn as_str(self) -> &'static str {
        match self {
            Quality::Good => "good",
            Quality::Marginal => "marginal",
            Quality::Bad => "bad",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "good" => Some(Quality::Good),
            "marginal" => Some(Quality::Marginal),
            "bad" => Some(Quality::Bad),
            _ => None,
        }
    }
}

impl std::fmt::Display for Quality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A usable title has at least this many letters or digits…
pub const TITLE_MIN_ALNUM: usize = 2;
/// …and at most this many characters (longer ones are paragraphs GROBID mistook for a
/// title).
pub const TITLE_MAX_CHARS: usize = 500;
/// Body length (characters) from which the full text counts as extracted.
pub const BODY_GOOD_CHARS: usize = 2000;
/// Body length (characters) below which there is no full text to speak of.
pub const BODY_NONE_CHARS: usize = 500;

/// The measurements the rating is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QualitySignals {
    /// A title with ≥ 2 letters/digits and ≤ 500 characters.
    pub usable_title: bool,
    /// Number of authors (entries of `authors`; both shapes list only named authors).
    pub authors: usize,
    /// A non-empty `doi`.
    pub has_doi: bool,
    /// Characters (Unicode scalar values) of `body`.
    pub body_chars: usize,
    /// Number of entries of `citations`.
    pub citations: usize,
}

/// Measures a converted document (the `tei_json` of either shape; `metadata` has no
/// body and would rate lower).
pub fn quality_signals(json: &Value) -> QualitySignals {
    let string = |key: &str| json.get(key).and_then(Value::as_str).unwrap_or("");
    let count = |key: &str| json.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let title = string("title").trim();
    QualitySignals {
        usable_title: title.chars().filter(|c| c.is_alphanumeric()).count() >= TITLE_MIN_ALNUM
            && title.chars().count() <= TITLE_MAX_CHARS,
        authors: count("authors"),
        has_doi: !string("doi").trim().is_empty(),
        body_chars: string("body").chars().count(),
        citations: count("citations"),
    }
}

/// Rates a converted document:
/// * `good`: usable title, ≥ 1 author, body ≥ 2000 characters and ≥ 1 citation;
/// * `bad`: no identifying header (usable title plus an author or a DOI), body < 500
///   characters and no citation;
/// * `marginal`: everything else.
pub fn quality(json: &Value) -> Quality {
    let s = quality_signals(json);
    let identified = s.usable_title && (s.authors >= 1 || s.has_doi);
    if s.usable_title && s.authors >= 1 && s.body_chars >= BODY_GOOD_CHARS && s.citations >= 1 {
        Quality::Good
    } else if !identified && s.body_chars < BODY_NONE_CHARS && s.citations == 0 {
        Quality::Bad
    } else {
        Quality::Marginal
    }
}
