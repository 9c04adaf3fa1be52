//! Per-page limits of the projections that read pages back from their WARCs (crawl and
//! summary): how much of one decoded body is read, how much of one page's text is stored.
//! A hostile page (a gzip bomb: kilobytes that decode to gigabytes) then adds a bounded
//! amount to the database, and every cut is counted under the same names in both.

use crate::html::TextPile;
use crate::project::source::Body;
use crate::text::cut_at_char;

/// Default cap of a decoded body (after Content-Encoding): 16 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 << 20;
/// Default cap of the text stored per page: 1 MiB. A page of hostile compressed content
/// thus adds at most about 1 MiB of text (and what indexes it) to the database.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 1 << 20;

/// Bodies longer than `--max-body-bytes` once decoded.
pub const BODIES_TRUNCATED: &str = "html_bodies_truncated";
/// Bodies their Content-Encoding expanded more than [`super::source::MAX_EXPANSION`] times.
pub const BODIES_CUT_EXPANSION: &str = "html_bodies_cut_expansion";

/// The per-page limits, as options of the commands.
#[derive(clap::Args, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageLimits {
    /// Bytes of one decoded body read at most; longer bodies are cut (counted as
    /// html_bodies_truncated). A Content-Encoding may also expand a body at most 100 times
    /// (beyond 1 MiB): bodies cut for that are counted as html_bodies_cut_expansion.
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Bytes of one page's text stored at most; longer texts are cut at a character
    /// boundary (counted as file_texts_cut_at_max_text_bytes by project crawl,
    /// text_piles_cut_at_max_text_bytes by project summary).
    #[arg(long, default_value_t = DEFAULT_MAX_TEXT_BYTES)]
    pub max_text_bytes: usize,
}

impl Default for PageLimits {
    fn default() -> Self {
        PageLimits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
        }
    }
}

/// How a body was cut when it was read: the counters to add one to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodyCuts {
    pub truncated: bool,
    pub expansion_cut: bool,
}

impl BodyCuts {
    pub fn of(body: &Body) -> BodyCuts {
        BodyCuts {
            truncated: body.truncated,
            expansion_cut: body.expansion_cut,
        }
    }

    /// The names of the counters this body adds one to.
    pub fn counters(self) -> impl Iterator<Item = &'static str> {
        [
            (self.truncated, BODIES_TRUNCATED),
            (self.expansion_cut, BODIES_CUT_EXPANSION),
        ]
        .into_iter()
        .filter_map(|(cut, name)| cut.then_some(name))
    }
}

/// Cuts a text pile so that its six fields hold at most `max` bytes together (the first
/// fields, in digest order, keep their text first), and gives it the digest of what is
/// left. True when something was cut.
pub fn cut_pile(pile: &mut TextPile, max: usize) -> bool {
    let total: usize = pile.fields().iter().map(|f| f.len()).sum();
    if total <= max {
        return false;
    }
    let mut room = max;
    for field in [
        &mut pile.text,
        &mut pile.secondary_text,
        &mut pile.big_headlines,
        &mut pile.small_headlines,
        &mut pile.code_text,
        &mut pile.quote_text,
    ] {
        let keep = cut_at_char(field, room).len();
        field.truncate(keep);
        room -= keep;
    }
    // Digested again as the analysis digests a pile.
    pile.compute_digest();
    true
}

#[cfg(test)]
mod tests {
    use blake2::{Blake2b512, Digest};

    use super::*;

    #[test]
    fn a_pile_is_cut_to_the_limit_and_digested_again() {
        let url = url::Url::parse("http://example.com/").unwrap();
        let html = "<html><title>Title</title><body><h1>Big héadline</h1><p>Some text \
                    that goes on and on</p><pre>code here</pre></body></html>";
        let pile = crate::html::analyze(html.as_bytes(), Some("text/html"), &url).pile;
        let total: usize = pile.fields().iter().map(|f| f.len()).sum();
        let mut same = pile.clone();
        assert!(!cut_pile(&mut same, total));
        assert_eq!(same, pile);
        for max in [0, 1, 5, 12, total - 1] {
            let mut cut = pile.clone();
            assert!(cut_pile(&mut cut, max));
            let kept: usize = cut.fields().iter().map(|f| f.len()).sum();
            assert!(kept <= max && kept + 4 > max.min(total), "{max}: {kept}");
            let mut hasher = Blake2b512::new();
            hasher.update(cut.joined().as_bytes());
            assert_eq!(cut.digest[..], hasher.finalize()[..], "{max}");
        }
    }
}
