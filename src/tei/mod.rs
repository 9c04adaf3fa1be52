//! GROBID TEI XML → JSON (`grobid0:tei_json`, `grobid0:metadata`) and the quality
//! rating (`grobid0:quality`). Library only: no I/O here.
//!
//! * [`tei_to_json`] converts a `processFulltextDocument` reply.
//! * [`metadata`] is that JSON without `body` and `annex` (the `grobid0:metadata` column).
//! * [`citations_from_tei`] reads the citations of a `processCitationList` reply (a
//!   `listBibl` without a document) or of a full document.
//! * `quality` rates a converted document `good` / `marginal` / `bad`
//!   (rule in `schemas/grobid-quality.md`).
//!
//! The JSON shapes are documented in `schemas/grobid-tei.md`.

mod convert;
mod error;
mod quality;
mod xml;

use serde_json::Value;

pub use error::{TeiError, TeiErrorKind};
pub use quality::{Quality, QualitySignals, quality, quality_signals};

/// Which JSON layout [`tei_to_json`] produces.
///
/// The default is [`TeiShape::Current`]: it carries more of what GROBID extracts
/// (affiliations, `language_code`, citation pages, DOI/arXiv/PMID, the raw reference
/// string) and leaves out absent values instead of storing nulls, which keeps the
/// stored cells smaller and their meaning unambiguous. [`TeiShape::Legacy2018`] exists
/// to produce exactly what 2018-era pipelines stored, for comparison with old dumps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TeiShape {
    /// The 2018 layout (`sandcrawler/small.json`, `example_grobid_metadata.json`): every
    /// top-level, journal and citation key present, null when unknown (a missing
    /// publication date is `false`, as stored then); no `language_code`, no citation
    /// pages or identifiers.
    Legacy2018,
    /// The later layout (`sandcrawler/python-2021/small.json`): null and empty keys
    /// dropped, author affiliation objects, `language_code`, citation `pages`, `doi`,
    /// `arxiv_id`, `pmid`, `pmcid`, `unstructured`.
    #[default]
    Current,
}

impl TeiShape {
    pub fn as_str(self) -> &'static str {
        match self {
            TeiShape::Legacy2018 => "legacy2018",
            TeiShape::Current => "current",
        }
    }

    /// Parses `legacy2018` / `current` (as a command-line flag would give them).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "legacy2018" | "legacy" | "2018" => Some(TeiShape::Legacy2018),
            "current" => Some(TeiShape::Current),
            _ => None,
        }
    }
}

/// Options of the conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TeiOptions {
    pub shape: TeiShape,
}

impl TeiOptions {
    pub fn with_shape(shape: TeiShape) -> Self {
        TeiOptions { shape }
    }
}

/// Converts a GROBID TEI document (UTF-8 bytes) to JSON.
///
/// Errors (not UTF-8, not XML — e.g. a GROBID error message —, malformed, truncated,
/// or XML that is not a `<TEI>` with a `<teiHeader>`) carry the byte position and a
/// reason; no input makes this panic.
pub fn tei_to_json(xml: &[u8], options: TeiOptions) -> Result<Value, TeiError> {
    let doc = xml::parse(xml)?;
    convert::document_to_json(&doc, options)
}

/// `grobid0:metadata`: the converted JSON without the full-text keys `body` and
/// `annex`. Values that are not objects are returned unchanged.
pub fn metadata(json: &Value) -> Value {
    let mut out = json.clone();
    if let Value::Object(map) = &mut out {
        map.remove("body");
        map.remove("annex");
    }
    out
}

/// The citations of a GROBID reply, in the current shape: a `processCitationList`
/// reply (`<TEI>` whose body is empty and whose `<back>` holds a `<listBibl>`), a bare
/// `<listBibl>` or `<biblStruct>`, or a full document. Each citation carries `index`
/// (position in the reply) and, where GROBID gave them, `id`, `title`, `authors`,
/// `journal`, `date`, `volume`, `issue`, `pages`, `doi`, `url`, `unstructured` (the
/// raw reference string, with `includeRawCitations`)…
pub fn citations_from_tei(xml: &[u8]) -> Result<Vec<Value>, TeiError> {
    citations_from_tei_with(xml, TeiOptions::default())
}

/// [`citations_from_tei`] in a chosen shape.
pub fn citations_from_tei_with(xml: &[u8], options: TeiOptions) -> Result<Vec<Value>, TeiError> {
    let doc = xml::parse(xml)?;
    convert::document_citations(&doc, options)
}
