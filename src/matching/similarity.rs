//! How alike an extracted title and a catalog title are, and how much that proves.
//!
//! GROBID titles differ from catalog titles in typical ways, each measured here:
//! * case, accents and punctuation: folded away by the title key (`exact`);
//! * OCR and hyphenation errors ("Signii cance", "Collec-tion"): edit distance between
//!   the keys (`edit`);
//! * junk around the title (a running head, "NBER WORKING PAPER SERIES", a translated
//!   second title): the catalog title found inside the extracted one (`inside`);
//! * a title cut short by a line break: the extracted title found inside the catalog
//!   title (`truncated`);
//! * lines read in the wrong order: shared words, whatever their order (`dice`,
//!   `catalog_coverage`, `extracted_coverage`).
//!
//! [`TitleLevel`] turns the measures into evidence: a `Strong` title match identifies a
//! record on its own, a `Medium` one only together with an agreeing author. Where the
//! levels start is [`TitleThresholds`], tuned on one half of the ground truth.

use crate::catalog::normalize::tokens;

/// Keys longer than this many characters are cut before edit distances are computed,
/// which bounds the work per comparison (a "title" can be a whole paragraph).
const MAX_COMPARED_CHARS: usize = 1000;

/// A title prepared for comparisons: folded tokens and the key as characters.
#[derive(Debug, Clone, Default)]
pub struct TitleText {
    pub tokens: Vec<String>,
    pub key: Vec<char>,
}

impl TitleText {
    pub fn new(title: &str) -> TitleText {
        let tokens = tokens(title);
        let key: Vec<char> = tokens
            .iter()
            .flat_map(|t| t.chars())
            .take(MAX_COMPARED_CHARS)
            .collect();
        TitleText { tokens, key }
    }

    pub fn is_empty(&self) -> bool {
        self.key.is_empty()
    }
}

/// How much a title comparison proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TitleLevel {
    /// Not enough to match on.
    Weak,
    /// A match when an author agrees too.
    Medium,
    /// A match on its own (unless authors and year both disagree).
    Strong,
}

impl TitleLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            TitleLevel::Weak => "weak",
            TitleLevel::Medium => "medium",
            TitleLevel::Strong => "strong",
        }
    }
}

/// The measures of one comparison (all in 0..=1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TitleComparison {
    /// Equal title keys.
    pub exact: bool,
    /// 1 − edit distance / length of the longer key.
    pub edit: f64,
    /// The catalog key found inside a longer extracted key: 1 − (edits needed) / (catalog
    /// key length); 0 when the extracted key is not longer.
    pub inside: f64,
    /// The extracted key found inside a longer catalog key, weighted by how much of the
    /// catalog title it covers; 0 when the catalog key is not longer.
    pub truncated: f64,
    /// 2·shared words / (words of both).
    pub dice: f64,
    /// Shared words / catalog title words.
    pub catalog_coverage: f64,
    /// Shared words / extracted title words.
    pub extracted_coverage: f64,
    /// The overall similarity used for ranking: the best of the character measures.
    pub similarity: f64,
    pub level: TitleLevel,
}

/// Titles shorter than this (key characters) are too generic to be trusted alone even
/// when equal ("Editorial", "Introduction", "Notas bibliográficas").
const MIN_STRONG_KEY_CHARS: usize = 20;
/// A catalog title found inside a longer extracted one is strong evidence from this
/// length on…
const MIN_STRONG_INSIDE_CHARS: usize = 25;
/// …and medium evidence from this length on.
const MIN_MEDIUM_INSIDE_CHARS: usize = 12;
/// An extracted title found inside a catalog title (cut short by a line break) is strong
/// evidence from this length on (and when it covers about two thirds of it).
const MIN_STRONG_TRUNCATED_CHARS: usize = 40;
/// Character measures of keys shorter than this are not computed for partial matches.
const MIN_PARTIAL_CHARS: usize = 20;

/// The thresholds of the measures at which a comparison becomes `Strong` or `Medium`
/// evidence (the length minima above stay fixed).
///
/// The defaults were chosen by `scripts/tune-match.sh` (2026-11-28) on the tuning half of
/// the fixed split of the sandcrawler ground truth (`scripts/match_eval.py`); the
/// reporting half's truth was not read. Every point of a grid of seven of these
/// thresholds (288 points, `scripts/match_tune.py`) was run through `sediment match` with
/// DOIs, without DOIs, and without DOIs against half of the catalog; the rule: the highest
/// recall without DOIs among the points with precision ≥ 0.99 in all three cases, ties
/// to the fewest wrong matches, then to the stricter point. All 288 points gave the same
/// matches (precision 1.000, recall 0.911 without DOIs), so the rule took the strictest:
/// `strong_edit` 0.95 and `medium_edit` 0.9 (0.9 and 0.8 before), the others as they
/// were. Why, and the figures of the reporting half: BENCHMARKS.md, "Catalog matching
/// accuracy".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TitleThresholds {
    /// Strong: edit similarity of keys of at least `MIN_STRONG_KEY_CHARS`.
    pub strong_edit: f64,
    /// Strong: the catalog title found inside the extracted one.
    pub strong_inside: f64,
    /// Strong: shared words, whatever their order.
    pub strong_dice: f64,
    /// Strong: the extracted title found inside the catalog one (cut short).
    pub strong_truncated: f64,
    /// Medium: edit similarity.
    pub medium_edit: f64,
    /// Medium: the catalog title found inside the extracted one.
    pub medium_inside: f64,
    /// Medium: share of the catalog title's words found in the extracted title…
    pub medium_catalog_coverage: f64,
    /// …together with this share of the extracted title's words in the catalog title.
    pub medium_extracted_coverage: f64,
    /// Medium: the extracted title found inside the catalog one.
    pub medium_truncated: f64,
}

impl Default for TitleThresholds {
    fn default() -> Self {
        TitleThresholds {
            strong_edit: 0.95,
            strong_inside: 0.95,
            strong_dice: 0.9,
            strong_truncated: 0.9,
            medium_edit: 0.9,
            medium_inside: 0.85,
            medium_catalog_coverage: 0.8,
            medium_extracted_coverage: 0.4,
            medium_truncated: 0.6,
        }
    }
}

impl TitleThresholds {
    /// The names accepted by [`TitleThresholds::with_overrides`], with their fields.
    fn fields(&mut self) -> [(&'static str, &mut f64); 9] {
        [
            ("strong_edit", &mut self.strong_edit),
            ("strong_inside", &mut self.strong_inside),
            ("strong_dice", &mut self.strong_dice),
            ("strong_truncated", &mut self.strong_truncated),
            ("medium_edit", &mut self.medium_edit),
            ("medium_inside", &mut self.medium_inside),
            ("medium_catalog_coverage", &mut self.medium_catalog_coverage),
            (
                "medium_extracted_coverage",
                &mut self.medium_extracted_coverage,
            ),
            ("medium_truncated", &mut self.medium_truncated),
        ]
    }

    /// These thresholds with some replaced: `NAME=VALUE,NAME=VALUE…` (values in 0..=1).
    /// For tuning only: `sediment match --title-thresholds` (hidden) passes it.
    pub fn with_overrides(mut self, overrides: &str) -> Result<TitleThresholds, String> {
        for item in overrides
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
        {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!("{item:?}: expected NAME=VALUE"));
            };
            let value: f64 = match value.trim().parse() {
                Ok(v) if (0.0..=1.0).contains(&v) => v,
                _ => return Err(format!("{item:?}: the value is not a number in 0..=1")),
            };
            let mut fields = self.fields();
            let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
            let names = names.join(", ");
            match fields.iter_mut().find(|(n, _)| *n == name.trim()) {
                Some((_, field)) => **field = value,
                None => return Err(format!("{item:?}: unknown threshold (known: {names})")),
            }
        }
        Ok(self)
    }
}

/// Compares an extracted title (GROBID's) with a catalog title.
pub fn compare_titles(
    extracted: &TitleText,
    catalog: &TitleText,
    t: &TitleThresholds,
) -> TitleComparison {
    let (g, c) = (&extracted.key, &catalog.key);
    let (lg, lc) = (g.len(), c.len());
    let shortest = lg.min(lc);
    let exact = lg > 0 && g == c;
    let edit = if exact {
        1.0
    } else if shortest == 0 || shortest * 2 < lg.max(lc) {
        // The ratio cannot reach one half: not worth the quadratic work.
        0.0
    } else {
        1.0 - levenshtein(g, c) as f64 / lg.max(lc) as f64
    };
    let inside = if lc > 0 && lg > lc {
        1.0 - best_substring_distance(c, g) as f64 / lc as f64
    } else {
        0.0
    };
    let truncated = if lg > 0 && lc > lg {
        let found = 1.0 - best_substring_distance(g, c) as f64 / lg as f64;
        found * 0.95 * (lg as f64 / lc as f64 + 0.3).min(1.0)
    } else {
        0.0
    };
    let shared = shared_tokens(&extracted.tokens, &catalog.tokens) as f64;
    let (ng, nc) = (extracted.tokens.len(), catalog.tokens.len());
    let dice = if ng + nc > 0 {
        2.0 * shared / (ng + nc) as f64
    } else {
        0.0
    };
    let catalog_coverage = if nc > 0 { shared / nc as f64 } else { 0.0 };
    let extracted_coverage = if ng > 0 { shared / ng as f64 } else { 0.0 };

    let mut similarity = edit;
    if lc >= MIN_PARTIAL_CHARS {
        similarity = similarity.max(inside * 0.95);
    }
    if lg >= MIN_PARTIAL_CHARS {
        similarity = similarity.max(truncated);
    }

    // Equal keys have an edit similarity of 1.
    let strong = (edit >= t.strong_edit && shortest >= MIN_STRONG_KEY_CHARS)
        || (inside >= t.strong_inside && lc >= MIN_STRONG_INSIDE_CHARS && 3 * lc >= lg)
        || (dice >= t.strong_dice && nc >= 4)
        || (truncated >= t.strong_truncated && lg >= MIN_STRONG_TRUNCATED_CHARS);
    let medium = exact
        || edit >= t.medium_edit
        || (inside >= t.medium_inside && lc >= MIN_MEDIUM_INSIDE_CHARS)
        || (catalog_coverage >= t.medium_catalog_coverage
            && nc >= 3
            && extracted_coverage >= t.medium_extracted_coverage)
        || (lg >= MIN_PARTIAL_CHARS && truncated >= t.medium_truncated);
    let level = if strong {
        TitleLevel::Strong
    } else if medium {
        TitleLevel::Medium
    } else {
        TitleLevel::Weak
    };
    TitleComparison {
        exact,
        edit,
        inside,
        truncated,
        dice,
        catalog_coverage,
        extracted_coverage,
        similarity,
        level,
    }
}

/// Number of tokens the two lists share, counted with multiplicity.
fn shared_tokens(a: &[String], b: &[String]) -> usize {
    let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut b: Vec<&str> = b.iter().map(String::as_str).collect();
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// Edit distance (insertions, deletions, substitutions) between two character strings.
pub fn levenshtein(a: &[char], b: &[char]) -> usize {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut row: Vec<usize> = (0..=short.len()).collect();
    for (i, &x) in long.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in short.iter().enumerate() {
            let substitution = diagonal + usize::from(x != y);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[short.len()]
}

/// The fewest edits that turn `needle` into some substring of `haystack` (the needle
/// must be used whole, the haystack's ends are free).
pub fn best_substring_distance(needle: &[char], haystack: &[char]) -> usize {
    // row[j]: edits to match the needle's prefix ending at haystack position j.
    let mut row = vec![0usize; haystack.len() + 1];
    for (i, &x) in needle.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in haystack.iter().enumerate() {
            let substitution = diagonal + usize::from(x != y);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row.into_iter().min().unwrap_or(needle.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn compare(g: &str, c: &str) -> TitleComparison {
        compare_titles(
            &TitleText::new(g),
            &TitleText::new(c),
            &TitleThresholds::default(),
        )
    }

    #[test]
    fn edit_distances() {
        assert_eq!(levenshtein(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(levenshtein(&chars(""), &chars("abc")), 3);
        assert_eq!(levenshtein(&chars("abc"), &chars("abc")), 0);
        assert_eq!(best_substring_distance(&chars("abc"), &chars("xxabcxx")), 0);
        assert_eq!(best_substring_distance(&chars("abd"), &chars("xxabcxx")), 1);
        assert_eq!(best_substring_distance(&chars("abc"), &chars("")), 3);
    }

    #[test]
    fn thresholds_overridden_by_name() {
        let t = TitleThresholds::default()
            .with_overrides("strong_edit=0.85, medium_truncated=0.7,")
            .unwrap();
        assert_eq!(t.strong_edit, 0.85);
        assert_eq!(t.medium_truncated, 0.7);
        assert_eq!(
            TitleThresholds {
                strong_edit: 0.95,
                medium_truncated: 0.6,
                ..t
            },
            TitleThresholds::default()
        );
        assert_eq!(
            TitleThresholds::default().with_overrides(""),
            Ok(TitleThresholds::default())
        );
        let e = TitleThresholds::default()
            .with_overrides("edit=0.8")
            .unwrap_err();
        assert!(
            e.contains("unknown threshold") && e.contains("strong_edit"),
            "{e}"
        );
        let e = TitleThresholds::default()
            .with_overrides("strong_dice=1.5")
            .unwrap_err();
        assert!(e.contains("0..=1"), "{e}");
        let e = TitleThresholds::default()
            .with_overrides("strong_dice")
            .unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        // The thresholds decide the level, not the similarity: an OCR-damaged title is
        // strong by default (edit and truncated measures both above 0.9), only medium
        // when strong needs 0.99 of both.
        let (g, c) = (
            TitleText::new("Incidence and Clinical Signii cance of Inducible Atrial Tachycardia"),
            TitleText::new("Incidence and Clinical Significance of Inducible Atrial Tachycardia"),
        );
        let by_default = compare_titles(&g, &c, &TitleThresholds::default());
        assert_eq!(by_default.level, TitleLevel::Strong, "{by_default:?}");
        let stricter = TitleThresholds::default()
            .with_overrides("strong_edit=0.99,strong_truncated=0.99")
            .unwrap();
        let c2 = compare_titles(&g, &c, &stricter);
        assert_eq!(c2.level, TitleLevel::Medium, "{c2:?}");
        assert_eq!(c2.similarity, by_default.similarity);
    }

    #[test]
    fn levels_of_typical_differences() {
        // Case and punctuation only.
        let c = compare(
            "HARDWARE AND ALGORITHMS FOR ULTRASONIC DEPTH IMAGING",
            "Hardware and algorithms for ultrasonic depth imaging",
        );
        assert!(c.exact);
        assert_eq!(c.level, TitleLevel::Strong);
        // OCR error.
        let c = compare(
            "Incidence and Clinical Signii cance of Inducible Atrial Tachycardia",
            "Incidence and Clinical Significance of Inducible Atrial Tachycardia",
        );
        assert_eq!(c.level, TitleLevel::Strong, "{c:?}");
        // Junk before the title.
        let c = compare(
            "HEALTH POLICY ANALYSIS Implementing Pharmacoeconomic Guidelines in Latin America: Lessons Learned",
            "Implementing Pharmacoeconomic Guidelines in Latin America: Lessons Learned",
        );
        assert_eq!(c.level, TitleLevel::Strong, "{c:?}");
        assert!(c.inside > 0.99);
        // Words in another order.
        let c = compare(
            "LARGE SCALE SIMULATIONS OF MELTING IN TWO FOR A METASTABLE HEXATIC PHASE DIMENSIONAL LENNARD-JONES SYSTEMS: EVIDENCE",
            "Large-Scale Simulations of Melting in Two-Dimensional Lennard-Jones Systems: Evidence for a Metastable Hexatic Phase",
        );
        assert_eq!(c.level, TitleLevel::Strong, "{c:?}");
        // A title cut short.
        let c = compare(
            "Distribuição espacial da flora terrestre fanerogâmica do Parque Nacional",
            "Distribuição espacial da flora terrestre fanerogâmica do Parque Nacional Marinho de Abrolhos, BA",
        );
        assert_eq!(c.level, TitleLevel::Strong, "{c:?}");
        let c = compare(
            "BAROCKE THEMATIK",
            "Barocke Thematik in der Lyrik des Andreas Gryphius",
        );
        assert_eq!(c.level, TitleLevel::Weak, "{c:?}");
        // A short generic title is never strong, even when equal.
        let c = compare("Editorial", "EDITORIAL");
        assert!(c.exact);
        assert_eq!(c.level, TitleLevel::Medium);
        // Different papers.
        let c = compare(
            "Neural correlates of feeling sympathy",
            "Neural Circuit Assembly: Economically Wired by a Single Cadherin",
        );
        assert_eq!(c.level, TitleLevel::Weak, "{c:?}");
        let c = compare("", "Anything at all");
        assert_eq!(c.level, TitleLevel::Weak);
    }
}
