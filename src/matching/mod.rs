//! The `match0` stage: which catalog record a file's extracted metadata
//! (`grobid0:metadata`) describes.
//!
//! 1. **DOI.** When the metadata carries a DOI that the catalog has, the record is taken
//!    only if the titles agree (or, without a title on one side, an author does):
//!    GROBID often picks up the DOI of a cited or neighbouring paper. Taken:
//!    `exact-doi`; refused, and nothing better found by title: `doi-title-mismatch`.
//! 2. **Title.** Candidates are the records with the same title key plus those sharing
//!    the most of the title's rarer words; each is compared (see [`similarity`]) and
//!    checked against the first author's surname and the year. A candidate is accepted
//!    with a strong title match (unless authors and year both disagree) or a medium
//!    one with an agreeing author (and no disagreeing year): `fuzzy-title`.
//! 3. **Ambiguity.** When another accepted candidate of a different DOI and work scores
//!    within [`MatchOptions::margin`] of the best, nothing is guessed: `ambiguous`.
//! 4. Otherwise `no-match`.
//!
//! `match0:minfo` records the method, the catalog id, the score, the evidence and how
//! many candidates were considered.

pub mod similarity;

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use anyhow::Result;
use serde_json::{Value, json};

use crate::catalog::normalize::{
    fold_surname, is_stop_word, key_of_tokens, normalize_doi, surname_of_name, year_of,
};
use crate::catalog::{Catalog, CatalogRecord};
use similarity::{TitleComparison, TitleLevel, TitleText, TitleThresholds, compare_titles};

/// `match0:mstatus` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchStatus {
    ExactDoi,
    DoiTitleMismatch,
    FuzzyTitle,
    Ambiguous,
    NoMatch,
}

impl MatchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::ExactDoi => "exact-doi",
            MatchStatus::DoiTitleMismatch => "doi-title-mismatch",
            MatchStatus::FuzzyTitle => "fuzzy-title",
            MatchStatus::Ambiguous => "ambiguous",
            MatchStatus::NoMatch => "no-match",
        }
    }

    #[cfg(test)]
    pub fn parse(text: &str) -> Option<MatchStatus> {
        [
            MatchStatus::ExactDoi,
            MatchStatus::DoiTitleMismatch,
            MatchStatus::FuzzyTitle,
            MatchStatus::Ambiguous,
            MatchStatus::NoMatch,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// What the extracted metadata says about the document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchQuery {
    pub title: Option<String>,
    /// Folded author surnames, in order.
    pub surnames: Vec<String>,
    pub year: Option<i32>,
    pub doi: Option<String>,
}

impl MatchQuery {
    /// Reads `grobid0:metadata` (either TEI JSON shape; authors as objects with
    /// `surname`/`name` or as plain name strings, as in bibjson).
    pub fn from_metadata(metadata: &Value) -> MatchQuery {
        let title = metadata
            .get("title")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from);
        let surnames = metadata
            .get("authors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|author| match author {
                Value::String(name) => surname_of_name(name),
                Value::Object(fields) => fields
                    .get("surname")
                    .and_then(Value::as_str)
                    .and_then(fold_surname)
                    .or_else(|| {
                        fields
                            .get("name")
                            .and_then(Value::as_str)
                            .and_then(surname_of_name)
                    }),
                _ => None,
            })
            .collect();
        let year = metadata
            .get("date")
            .and_then(year_of)
            .or_else(|| metadata.get("year").and_then(year_of));
        let doi = metadata
            .get("doi")
            .and_then(Value::as_str)
            .and_then(normalize_doi);
        MatchQuery {
            title,
            surnames,
            year,
            doi,
        }
    }
}

/// The outcome for one row: the three `match0` cells.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchResult {
    pub status: MatchStatus,
    /// The matched record's DOI (lower case), when it has one.
    pub doi: Option<String>,
    /// `match0:minfo`.
    pub info: Value,
}

/// Tuning of the matcher.
#[derive(Debug, Clone)]
pub struct MatchOptions {
    /// Words found in more catalog titles than this do not select candidates.
    pub common_word_limit: usize,
    /// Candidates taken from shared words (besides every record with the same title key).
    pub word_candidates: usize,
    /// At most this many of the rarest words of a title select candidates.
    pub selecting_words: usize,
    /// Records with the same title key considered at most.
    pub same_title_limit: usize,
    /// A rival within this score of the best makes a title match ambiguous.
    pub margin: f64,
    /// Where title comparisons become strong or medium evidence.
    pub title: TitleThresholds,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            common_word_limit: 5000,
            word_candidates: 20,
            selecting_words: 8,
            same_title_limit: 200,
            margin: 0.02,
            title: TitleThresholds::default(),
        }
    }
}

/// Agreement of one kind of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    Agree,
    Disagree,
    Unknown,
}

impl Agreement {
    pub fn as_str(self) -> &'static str {
        match self {
            Agreement::Agree => "agree",
            Agreement::Disagree => "disagree",
            Agreement::Unknown => "unknown",
        }
    }
}

fn record_surnames(record: &CatalogRecord) -> Vec<String> {
    record
        .authors
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            record
                .surnames
                .get(i)
                .filter(|s| !s.is_empty())
                .and_then(|s| fold_surname(s))
                .or_else(|| surname_of_name(name))
        })
        .collect()
}

/// The first author of either side appears among the other side's authors.
pub fn authors_agreement(query: &[String], record: &CatalogRecord) -> Agreement {
    let theirs = record_surnames(record);
    match (query.first(), theirs.first()) {
        (Some(ours_first), Some(theirs_first)) => {
            if theirs.contains(ours_first) || query.contains(theirs_first) {
                Agreement::Agree
            } else {
                Agreement::Disagree
            }
        }
        _ => Agreement::Unknown,
    }
}

/// Years within one of each other agree (online-first and print years differ by one).
pub fn year_agreement(query: Option<i32>, record: Option<i32>) -> Agreement {
    match (query, record) {
        (Some(a), Some(b)) if (a - b).abs() <= 1 => Agreement::Agree,
        (Some(_), Some(_)) => Agreement::Disagree,
        _ => Agreement::Unknown,
    }
}

/// One catalog record compared with the query.
#[derive(Debug, Clone)]
struct Candidate {
    record: CatalogRecord,
    title: Option<TitleComparison>,
    authors: Agreement,
    year: Agreement,
    score: f64,
    accepted: bool,
}

impl Candidate {
    fn new(
        query: &MatchQuery,
        query_title: &TitleText,
        record: CatalogRecord,
        thresholds: &TitleThresholds,
    ) -> Candidate {
        let title = match (&record.title, query_title.is_empty()) {
            (Some(t), false) => Some(compare_titles(query_title, &TitleText::new(t), thresholds)),
            _ => None,
        };
        let authors = authors_agreement(&query.surnames, &record);
        let year = year_agreement(query.year, record.year);
        let level = title.map_or(TitleLevel::Weak, |t| t.level);
        let accepted = match level {
            TitleLevel::Strong => !(authors == Agreement::Disagree && year == Agreement::Disagree),
            TitleLevel::Medium => authors == Agreement::Agree && year != Agreement::Disagree,
            TitleLevel::Weak => false,
        };
        let bonus = |a: Agreement, plus: f64, minus: f64| match a {
            Agreement::Agree => plus,
            Agreement::Disagree => -minus,
            Agreement::Unknown => 0.0,
        };
        let score = title.map_or(0.0, |t| t.similarity)
            + bonus(authors, 0.05, 0.05)
            + bonus(year, 0.02, 0.05);
        Candidate {
            record,
            title,
            authors,
            year,
            score,
            accepted,
        }
    }

    /// Same DOI or same work: versions of one thing, not rivals.
    fn same_thing(&self, other: &Candidate) -> bool {
        let same = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
        same(&self.record.doi, &other.record.doi) || same(&self.record.work, &other.record.work)
    }

    fn describe(&self) -> Value {
        let mut info = json!({
            "catalog_id": self.record.id,
            "score": round3(self.score.clamp(0.0, 1.0)),
            "authors": self.authors.as_str(),
            "year": self.year.as_str(),
        });
        if let Some(t) = &self.title {
            info["title_similarity"] = json!(round3(t.similarity));
            info["evidence"] = json!(if t.exact {
                "exact-title"
            } else {
                t.level.as_str()
            });
        }
        info
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Matches metadata against the catalog of a store. Shareable between threads.
pub struct Matcher<'s> {
    catalog: Catalog<'s>,
    options: MatchOptions,
    /// Words found too common to select candidates by, remembered for the run.
    common_words: Mutex<HashSet<String>>,
}

enum TitleOutcome {
    Accepted(Box<Candidate>, usize),
    Ambiguous(Vec<Candidate>, usize),
    Nothing(Option<Box<Candidate>>, usize),
}

impl<'s> Matcher<'s> {
    pub fn new(catalog: Catalog<'s>, options: MatchOptions) -> Matcher<'s> {
        Matcher {
            catalog,
            options,
            common_words: Mutex::new(HashSet::new()),
        }
    }

    /// Matches one document.
    pub fn match_query(&self, query: &MatchQuery) -> Result<MatchResult> {
        let query_title = query
            .title
            .as_deref()
            .map(TitleText::new)
            .unwrap_or_default();

        // 1. The DOI, checked against the title.
        let mut rejected_doi: Option<Candidate> = None;
        let mut doi_in_catalog = None;
        if let Some(doi) = &query.doi {
            let records = self.catalog.by_doi(doi)?;
            doi_in_catalog = Some(!records.is_empty());
            let count = records.len();
            let mut candidates: Vec<Candidate> = records
                .into_iter()
                .map(|r| Candidate::new(query, &query_title, r, &self.options.title))
                .collect();
            candidates.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
                    .then_with(|| a.record.id.cmp(&b.record.id))
            });
            if let Some(found) = candidates.iter().find(|c| doi_titles_agree(c)) {
                let mut info = found.describe();
                info["method"] = json!("doi");
                info["candidates"] = json!(count);
                return Ok(MatchResult {
                    status: MatchStatus::ExactDoi,
                    doi: found.record.doi.clone(),
                    info,
                });
            }
            rejected_doi = candidates.into_iter().next();
        }

        // 2. The title.
        let outcome = self.match_title(query, &query_title)?;
        let note_doi = |info: &mut Value| {
            if let Some(doi) = &query.doi {
                info["extracted_doi"] = json!(doi);
                info["doi_in_catalog"] = json!(doi_in_catalog.unwrap_or(false));
                if let Some(rejected) = &rejected_doi {
                    info["doi_rejected"] = rejected.describe();
                }
            }
        };
        let result = match outcome {
            TitleOutcome::Accepted(best, considered) => {
                let mut info = best.describe();
                info["method"] = json!("title");
                info["candidates"] = json!(considered);
                note_doi(&mut info);
                MatchResult {
                    status: MatchStatus::FuzzyTitle,
                    doi: best.record.doi.clone(),
                    info,
                }
            }
            TitleOutcome::Ambiguous(tied, considered) => {
                let mut info = json!({
                    "method": "title",
                    "candidates": considered,
                    "tied": tied.iter().map(Candidate::describe).collect::<Vec<_>>(),
                });
                note_doi(&mut info);
                MatchResult {
                    status: MatchStatus::Ambiguous,
                    doi: None,
                    info,
                }
            }
            TitleOutcome::Nothing(best, considered) => {
                let reason = if query.title.is_none() || query_title.is_empty() {
                    "no title"
                } else if considered == 0 {
                    "no candidate"
                } else {
                    "no candidate close enough"
                };
                match rejected_doi {
                    Some(rejected) => {
                        let mut info = rejected.describe();
                        info["method"] = json!("doi");
                        info["candidates"] = json!(considered);
                        info["extracted_doi"] = json!(query.doi);
                        info["reason"] = json!("the titles do not agree");
                        MatchResult {
                            status: MatchStatus::DoiTitleMismatch,
                            doi: None,
                            info,
                        }
                    }
                    None => {
                        let mut info = json!({
                            "method": if query_title.is_empty() { "none" } else { "title" },
                            "candidates": considered,
                            "reason": reason,
                        });
                        if let Some(best) = best {
                            info["best"] = best.describe();
                        }
                        note_doi(&mut info);
                        MatchResult {
                            status: MatchStatus::NoMatch,
                            doi: None,
                            info,
                        }
                    }
                }
            }
        };
        Ok(result)
    }

    fn match_title(&self, query: &MatchQuery, title: &TitleText) -> Result<TitleOutcome> {
        if title.is_empty() {
            return Ok(TitleOutcome::Nothing(None, 0));
        }
        let ids = self.candidate_ids(title)?;
        let mut candidates = Vec::with_capacity(ids.len());
        for id in &ids {
            if let Some(record) = self.catalog.get(id)? {
                candidates.push(Candidate::new(query, title, record, &self.options.title));
            }
        }
        let considered = candidates.len();
        candidates.sort_by(|a, b| {
            b.accepted
                .cmp(&a.accepted)
                .then_with(|| b.score.total_cmp(&a.score))
                .then_with(|| a.record.id.cmp(&b.record.id))
        });
        let mut candidates = candidates.into_iter();
        let Some(best) = candidates.next() else {
            return Ok(TitleOutcome::Nothing(None, 0));
        };
        if !best.accepted {
            return Ok(TitleOutcome::Nothing(Some(Box::new(best)), considered));
        }
        let rivals: Vec<Candidate> = candidates
            .filter(|c| {
                c.accepted && c.score >= best.score - self.options.margin && !c.same_thing(&best)
            })
            .collect();
        if rivals.is_empty() {
            return Ok(TitleOutcome::Accepted(Box::new(best), considered));
        }
        let mut tied = vec![best];
        tied.extend(rivals.into_iter().take(4));
        Ok(TitleOutcome::Ambiguous(tied, considered))
    }

    /// Every record with the same title key, and the records sharing the most of the
    /// title's rarest words.
    fn candidate_ids(&self, title: &TitleText) -> Result<Vec<String>> {
        let key = title_key_of(title);
        let mut ids: Vec<String> = self
            .catalog
            .ids_by_title_key(&key, self.options.same_title_limit)?;
        ids.truncate(self.options.same_title_limit);

        let mut words: Vec<&str> = title
            .tokens
            .iter()
            .map(String::as_str)
            .filter(|t| t.chars().count() >= 2 && !is_stop_word(t))
            .collect();
        words.sort_unstable();
        words.dedup();
        let limit = self.options.common_word_limit;
        let mut postings: Vec<(String, Vec<String>)> = Vec::new();
        for word in words {
            if self.is_common(word) {
                continue;
            }
            let found = self.catalog.ids_by_word(word, limit)?;
            if found.len() > limit {
                self.common_words
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(word.to_string());
            } else if !found.is_empty() {
                postings.push((word.to_string(), found));
            }
        }
        // The rarest words say the most about a title.
        postings.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| a.0.cmp(&b.0)));
        let mut shared: BTreeMap<String, usize> = BTreeMap::new();
        for (_, found) in postings.iter().take(self.options.selecting_words) {
            for id in found {
                *shared.entry(id.clone()).or_default() += 1;
            }
        }
        let mut by_count: Vec<(String, usize)> = shared.into_iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (id, _) in by_count.into_iter().take(self.options.word_candidates) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    fn is_common(&self, word: &str) -> bool {
        self.common_words
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(word)
    }
}

fn title_key_of(title: &TitleText) -> String {
    key_of_tokens(&title.tokens)
}

/// Whether a record found by DOI has a title that agrees with the extracted one. GROBID
/// titles are often noisy, so the bar is lower than for a match by title alone, but a
/// DOI whose record is about something else is refused.
fn doi_titles_agree(candidate: &Candidate) -> bool {
    match &candidate.title {
        Some(t) => {
            t.level >= TitleLevel::Medium
                || t.similarity >= 0.6
                || (candidate.authors == Agreement::Agree && t.similarity >= 0.3)
        }
        // No title on one side: an agreeing author has to do.
        None => candidate.authors == Agreement::Agree,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip() {
        for s in [
            MatchStatus::ExactDoi,
            MatchStatus::DoiTitleMismatch,
            MatchStatus::FuzzyTitle,
            MatchStatus::Ambiguous,
            MatchStatus::NoMatch,
        ] {
            assert_eq!(MatchStatus::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn queries_from_both_metadata_shapes() {
        let current = json!({
            "title": "Split Sex Ratios",
            "authors": [{"name": "Yves Roisin", "given_name": "Yves", "surname": "Roisin"},
                        {"name": "Serge Aron"}],
            "date": "2003-02",
            "doi": "10.1086/345921"
        });
        let q = MatchQuery::from_metadata(&current);
        assert_eq!(q.title.as_deref(), Some("Split Sex Ratios"));
        assert_eq!(q.surnames, ["roisin", "aron"]);
        assert_eq!(q.year, Some(2003));
        assert_eq!(q.doi.as_deref(), Some("10.1086/345921"));
        let legacy = json!({"title": null, "authors": ["A Ferreira"], "date": false, "doi": null});
        let q = MatchQuery::from_metadata(&legacy);
        assert_eq!(q.title, None);
        assert_eq!(q.surnames, ["ferreira"]);
        assert_eq!(q.year, None);
        assert_eq!(q.doi, None);
    }

    #[test]
    fn author_and_year_agreement() {
        let record = CatalogRecord {
            id: "x".into(),
            source: "bibjson".into(),
            doi: None,
            title: None,
            authors: vec!["Ann Smith".into(), "Bo Jones".into()],
            surnames: vec![],
            year: Some(2001),
            journal: None,
            work: None,
        };
        assert_eq!(
            authors_agreement(&["jones".into()], &record),
            Agreement::Agree
        );
        assert_eq!(
            authors_agreement(&["brown".into(), "smith".into()], &record),
            Agreement::Agree
        );
        assert_eq!(
            authors_agreement(&["brown".into()], &record),
            Agreement::Disagree
        );
        assert_eq!(authors_agreement(&[], &record), Agreement::Unknown);
        assert_eq!(year_agreement(Some(2002), Some(2001)), Agreement::Agree);
        assert_eq!(year_agreement(Some(2005), Some(2001)), Agreement::Disagree);
        assert_eq!(year_agreement(None, Some(2001)), Agreement::Unknown);
    }
}
