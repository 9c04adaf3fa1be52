//! The search query language and its translation to an FTS5 MATCH expression.
//!
//! * `word` and `"a quoted phrase"`: all must occur (AND); `word*` matches words starting
//!   with `word`;
//! * `-word`, `-"a phrase"`: must not occur;
//! * `site:example.org` (the host or a subdomain of it), `lang:de` (`de`, `de-AT`, …),
//!   `mime:application/pdf` or `mime:pdf` (type or subtype), `year:2024` (the version was
//!   live that year: captured in it, or before and after it): filters; several values of
//!   one filter are alternatives.
//!
//! Words are matched as the index tokenizes them (lower case, porter stems), so `Running`
//! finds `runs`. Everything the user types is quoted before it reaches FTS5, so operators
//! (`AND`, `OR`, `NEAR`, `:`, `^`) are plain words and no input is a syntax error.
//!
//! A query's work is bounded before it runs: a repeated term counts once (FTS5's cost
//! grows with the square of repeated AND terms), and a query may hold at most
//! [`MAX_WORDS`] words, [`MAX_FILTERS`] filter values and an expression of
//! [`MAX_EXPRESSION_BYTES`]; beyond that, and for control characters (which no indexed
//! word holds, and which SQLite rejects), it is the user's error, not the database's.

/// One thing to look for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// A single word; `prefix` for `word*`.
    Word { text: String, prefix: bool },
    /// Words that must occur in this order.
    Phrase(String),
}

/// A parsed query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub include: Vec<Term>,
    pub exclude: Vec<Term>,
    pub sites: Vec<String>,
    pub languages: Vec<String>,
    pub mime_types: Vec<String>,
    /// `year:` values.
    pub years: Vec<i32>,
}

/// Why a query cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("empty query: give words, \"phrases\" or a filter (site:, lang:, mime:, year:)")]
    Empty,
    #[error("`{0}:` needs a value, e.g. {0}:{1}")]
    EmptyFilter(&'static str, &'static str),
    #[error(
        "the query has {0} words (repeated ones counted once, words in phrases each); \
         at most {MAX_WORDS} are searched for"
    )]
    TooManyWords(usize),
    #[error(
        "the query has {0} site:, lang:, mime: and year: values; at most {MAX_FILTERS} are allowed"
    )]
    TooManyFilters(usize),
    #[error(
        "the query is too long: {0} bytes of search expression, at most {MAX_EXPRESSION_BYTES}"
    )]
    TooLong(usize),
    #[error("the query holds a control character ({0:?} at character {1}); remove it")]
    ControlCharacter(char, usize),
    #[error("`year:` takes a year of four digits, e.g. year:2024, not {0:?}")]
    BadYear(String),
}

/// Most words one query searches for, included and excluded together (a phrase counts
/// its words; a repeated term counts once).
pub const MAX_WORDS: usize = 32;
/// Most `site:`, `lang:`, `mime:` and `year:` values in one query.
pub const MAX_FILTERS: usize = 16;
/// Longest FTS5 expression one query may make.
pub const MAX_EXPRESSION_BYTES: usize = 4096;

/// Columns searched for the user's terms: all but the literal `any` column.
const TEXT_COLUMNS: &str = "- {any}";

impl Query {
    pub fn parse(input: &str) -> Result<Query, QueryError> {
        let mut query = Query::default();
        let chars: Vec<char> = input.chars().collect();
        if let Some(at) = chars
            .iter()
            .position(|c| c.is_control() && !c.is_whitespace())
        {
            return Err(QueryError::ControlCharacter(chars[at], at + 1));
        }
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_whitespace() {
                i += 1;
                continue;
            }
            let negated = chars[i] == '-' && i + 1 < chars.len() && !chars[i + 1].is_whitespace();
            if negated {
                i += 1;
            }
            let term = if chars[i] == '"' {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && chars[end] != '"' {
                    end += 1;
                }
                let text: String = chars[start..end].iter().collect();
                i = end + 1;
                Some(Term::Phrase(text))
            } else {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if !negated && let Some((name, value)) = word.split_once(':') {
                    if name.eq_ignore_ascii_case("year") {
                        let value = value.trim_matches('"').trim();
                        if value.is_empty() {
                            return Err(QueryError::EmptyFilter("year", "2024"));
                        }
                        let year = value
                            .parse::<i32>()
                            .ok()
                            .filter(|y| value.len() == 4 && (1000..=9999).contains(y))
                            .ok_or_else(|| QueryError::BadYear(value.to_string()))?;
                        if !query.years.contains(&year) {
                            query.years.push(year);
                        }
                        continue;
                    }
                    let list = match name.to_ascii_lowercase().as_str() {
                        "site" => Some((&mut query.sites, "site", "example.org")),
                        "lang" => Some((&mut query.languages, "lang", "en")),
                        "mime" => Some((&mut query.mime_types, "mime", "application/pdf")),
                        _ => None,
                    };
                    if let Some((list, name, example)) = list {
                        let value = value.trim_matches('"').trim().to_ascii_lowercase();
                        if value.is_empty() {
                            return Err(QueryError::EmptyFilter(name, example));
                        }
                        if !list.contains(&value) {
                            list.push(value);
                        }
                        continue;
                    }
                }
                let (text, prefix) = match word.strip_suffix('*') {
                    Some(stem) => (stem.to_string(), true),
                    None => (word, false),
                };
                Some(Term::Word { text, prefix })
            };
            // Terms without a letter or digit match nothing the tokenizer keeps.
            if let Some(term) = term.filter(|t| t.text().chars().any(char::is_alphanumeric)) {
                let list = if negated {
                    &mut query.exclude
                } else {
                    &mut query.include
                };
                // The index lower-cases, so `The` repeats `the`.
                if !list.iter().any(|t| t.same_as(&term)) {
                    list.push(term);
                }
            }
        }
        let words: usize = query
            .include
            .iter()
            .chain(&query.exclude)
            .map(Term::words)
            .sum();
        if words > MAX_WORDS {
            return Err(QueryError::TooManyWords(words));
        }
        let filters =
            query.sites.len() + query.languages.len() + query.mime_types.len() + query.years.len();
        if filters > MAX_FILTERS {
            return Err(QueryError::TooManyFilters(filters));
        }
        let bytes = query.fts_expression().len();
        if bytes > MAX_EXPRESSION_BYTES {
            return Err(QueryError::TooLong(bytes));
        }
        if query.include.is_empty()
            && query.exclude.is_empty()
            && query.sites.is_empty()
            && query.languages.is_empty()
            && query.mime_types.is_empty()
            && query.years.is_empty()
        {
            return Err(QueryError::Empty);
        }
        Ok(query)
    }

    /// The FTS5 MATCH expression: included terms ANDed over the text columns, then
    /// `NOT` each excluded term; with nothing to include, the literal `any` column
    /// (which holds "any" in every row) stands in, so exclusions and filters alone work.
    /// Terms that cannot match that column's word are searched without naming the
    /// columns ([`Term::may_match_any_column`]).
    pub fn fts_expression(&self) -> String {
        let positive = if self.include.iter().any(Term::may_match_any_column) {
            self.fts_included_in(TEXT_COLUMNS)
        } else {
            self.fts_included()
        };
        let positive = positive.unwrap_or_else(|| "any : \"any\"".to_string());
        let mut expression = format!("({positive})");
        for term in &self.exclude {
            if term.may_match_any_column() {
                expression.push_str(&format!(" NOT ({TEXT_COLUMNS} : ({}))", term.fts()));
            } else {
                expression.push_str(&format!(" NOT ({})", term.fts()));
            }
        }
        expression
    }

    /// The included terms ANDed, in every column.
    fn fts_included(&self) -> Option<String> {
        if self.include.is_empty() {
            return None;
        }
        let terms: Vec<String> = self.include.iter().map(Term::fts_whole_or_parts).collect();
        Some(terms.join(" AND "))
    }

    /// How the included terms map to the phrases of [`Query::fts_expression`], which
    /// FTS5 numbers in the order they are written: for each term, its alternatives, each
    /// the phrases that must all occur (a word such as `os.path.join`: the whole phrase,
    /// or its three parts). The ranking reads from it which columns hold every term.
    pub(crate) fn included_phrases(&self) -> Vec<Vec<Vec<usize>>> {
        let mut next = 0;
        let mut take = |n: usize| {
            let phrases: Vec<usize> = (next..next + n).collect();
            next += n;
            phrases
        };
        (self.include.iter())
            .map(|term| match term.parts() {
                Some(parts) => vec![take(1), take(parts.len())],
                None => vec![take(1)],
            })
            .collect()
    }

    /// The included terms, searched only in `columns` (an FTS5 column filter such as
    /// `{title}`): ranking asks which matches hold every term there. `None` without
    /// included terms.
    pub fn fts_included_in(&self, columns: &str) -> Option<String> {
        if self.include.is_empty() {
            return None;
        }
        let terms: Vec<String> = self.include.iter().map(Term::fts_whole_or_parts).collect();
        Some(format!("{columns} : ({})", terms.join(" AND ")))
    }
}

impl Term {
    pub fn text(&self) -> &str {
        match self {
            Term::Word { text, .. } | Term::Phrase(text) => text,
        }
    }

    /// Whether the term might match the literal `any` column, whose one word is "any"
    /// ("ani" once the index's Porter stemmer has it): a word beginning with "an" might
    /// stem to it (stemming only changes endings), a prefix query for "a" or "an" reaches
    /// it, and non-ASCII text might fold to it (the tokenizer removes diacritics). Other
    /// terms are searched without the column filter that leaves `any` out: the same
    /// matches and the same scores (bm25 weighs `any` 0), while with the filter FTS5
    /// copies and filters every match's positions by column (a sixth of a search's CPU
    /// at 100,000 pages, issue 37).
    pub fn may_match_any_column(&self) -> bool {
        let prefix = matches!(self, Term::Word { prefix: true, .. });
        !self.text().is_ascii()
            || self
                .tokens()
                .iter()
                .any(|t| t.starts_with("an") || (prefix && "an".starts_with(t.as_str())))
    }

    /// How many words the index's tokenizer makes of it (runs of letters and digits).
    pub fn words(&self) -> usize {
        let mut words = 0;
        let mut in_word = false;
        for c in self.text().chars() {
            let alphanumeric = c.is_alphanumeric();
            if alphanumeric && !in_word {
                words += 1;
            }
            in_word = alphanumeric;
        }
        words
    }

    /// Two terms with the same key match the same: the index keeps runs of letters and
    /// digits, lower-cased (`The,` is `the`; a one-word phrase is the word).
    fn same_as(&self, other: &Term) -> bool {
        let prefix = |t: &Term| matches!(t, Term::Word { prefix: true, .. });
        prefix(self) == prefix(other) && self.tokens() == other.tokens()
    }

    fn tokens(&self) -> Vec<String> {
        self.text()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_lowercase)
            .collect()
    }

    /// An included word of several tokens, an identifier such as `os.path.join`,
    /// `gen_server:call` or `std::vec::Vec`: its tokens in this order, or all of them
    /// anywhere (the page of `lists:keyfind` writes `keyfind` under the title `lists`).
    /// A page with the whole identifier matches both and ranks higher.
    fn fts_whole_or_parts(&self) -> String {
        match self.parts() {
            Some(tokens) => {
                let parts: Vec<String> = tokens.iter().map(|t| format!("\"{t}\"")).collect();
                format!("({} OR ({}))", self.fts(), parts.join(" AND "))
            }
            None => self.fts(),
        }
    }

    /// The tokens of a word that is searched whole or by its parts
    /// ([`Term::fts_whole_or_parts`]).
    fn parts(&self) -> Option<Vec<String>> {
        let tokens = self.tokens();
        (matches!(self, Term::Word { prefix: false, .. }) && tokens.len() > 1).then_some(tokens)
    }

    /// The term as an FTS5 string (double quotes doubled inside).
    fn fts(&self) -> String {
        let quoted = format!("\"{}\"", self.text().replace('"', "\"\""));
        match self {
            Term::Word { prefix: true, .. } => format!("{quoted} *"),
            _ => quoted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(t: &str) -> Term {
        Term::Word {
            text: t.into(),
            prefix: false,
        }
    }

    #[test]
    fn terms_that_might_match_the_any_column_keep_the_column_filter() {
        for (input, expression) in [
            ("lake", r#"("lake")"#),
            ("any", r#"(- {any} : ("any"))"#),
            ("lake Analysis", r#"(- {any} : ("lake" AND "Analysis"))"#),
            ("a*", r#"(- {any} : ("a" *))"#),
            ("an*", r#"(- {any} : ("an" *))"#),
            ("ab*", r#"("ab" *)"#),
            ("ány", r#"(- {any} : ("ány"))"#),
            ("\"the animal\"", r#"(- {any} : ("the animal"))"#),
            ("lake -anything", r#"("lake") NOT (- {any} : ("anything"))"#),
            ("lake -mud", r#"("lake") NOT ("mud")"#),
        ] {
            assert_eq!(
                Query::parse(input).unwrap().fts_expression(),
                expression,
                "{input}"
            );
        }
    }

    #[test]
    fn words_phrases_exclusions_and_filters() {
        let q = Query::parse(
            r#" Lake  "flood layer" -"core sample" -mud site:Example.org lang:de mime:pdf sedi* "#,
        )
        .unwrap();
        assert_eq!(
            q.include,
            vec![
                word("Lake"),
                Term::Phrase("flood layer".into()),
                Term::Word {
                    text: "sedi".into(),
                    prefix: true
                }
            ]
        );
        assert_eq!(
            q.exclude,
            vec![Term::Phrase("core sample".into()), word("mud")]
        );
        assert_eq!(q.sites, vec!["example.org"]);
        assert_eq!(q.languages, vec!["de"]);
        assert_eq!(q.mime_types, vec!["pdf"]);
        assert_eq!(
            q.fts_expression(),
            r#"("Lake" AND "flood layer" AND "sedi" *) NOT ("core sample") NOT ("mud")"#
        );
    }

    #[test]
    fn year_filters() {
        let q = Query::parse("flood year:2021 YEAR:2019 year:2021").unwrap();
        assert_eq!(q.years, vec![2021, 2019]);
        assert_eq!(q.include, vec![word("flood")]);
        assert_eq!(Query::parse("year:2024").unwrap().years, vec![2024]);
        for bad in ["year:21", "year:twenty", "year:20211", "year:-202"] {
            assert!(
                matches!(Query::parse(bad), Err(QueryError::BadYear(_))),
                "{bad}"
            );
        }
        assert_eq!(
            Query::parse("year:"),
            Err(QueryError::EmptyFilter("year", "2024"))
        );
        // A negated year is a word, as other negated filters are.
        assert_eq!(
            Query::parse("-year:2021").unwrap().exclude,
            vec![word("year:2021")]
        );
    }

    #[test]
    fn operators_and_quotes_are_plain_text() {
        let q = Query::parse(r#"a AND b OR NEAR(c) title:x 1"2"#).unwrap();
        assert_eq!(
            q.include,
            vec![
                word("a"),
                word("AND"),
                word("b"),
                word("OR"),
                word("NEAR(c)"),
                word("title:x"),
                word("1\"2")
            ]
        );
        assert!(q.fts_expression().contains(r#""1""2""#));
    }

    #[test]
    fn identifiers_are_found_whole_or_by_their_parts() {
        let q = Query::parse("os.path.join -gen_server:call \"a.b\" std::vec*").unwrap();
        assert_eq!(
            q.fts_expression(),
            r#"(("os.path.join" OR ("os" AND "path" AND "join")) AND "a.b" AND "std::vec" *) NOT ("gen_server:call")"#
        );
        assert_eq!(
            q.fts_included_in("{title}").unwrap(),
            r#"{title} : (("os.path.join" OR ("os" AND "path" AND "join")) AND "a.b" AND "std::vec" *)"#
        );
        assert_eq!(Query::parse("-x").unwrap().fts_included_in("{title}"), None);
    }

    #[test]
    fn exclusions_alone_use_the_any_column() {
        let q = Query::parse(r#"-"thin section""#).unwrap();
        assert_eq!(q.fts_expression(), r#"(any : "any") NOT ("thin section")"#);
        let q = Query::parse("site:example.org").unwrap();
        assert_eq!(q.fts_expression(), r#"(any : "any")"#);
    }

    #[test]
    fn unclosed_quotes_lone_dashes_and_punctuation() {
        let q = Query::parse(r#"- "open phrase"#).unwrap();
        assert_eq!(q.include, vec![Term::Phrase("open phrase".into())]);
        assert_eq!(Query::parse(" ... -- \"\" "), Err(QueryError::Empty));
        assert_eq!(Query::parse(""), Err(QueryError::Empty));
        assert_eq!(
            Query::parse("site:"),
            Err(QueryError::EmptyFilter("site", "example.org"))
        );
        // a negated filter is a negated word
        let q = Query::parse("-site:x").unwrap();
        assert_eq!(q.exclude, vec![word("site:x")]);
    }

    #[test]
    fn work_is_bounded_before_the_query_runs() {
        // Repeats count once, whatever their case.
        let q = Query::parse(&"the The THE the, (the) \"the\" ".repeat(200)).unwrap();
        assert_eq!(q.include, vec![word("the")]);
        let q = Query::parse("-mud -mud site:a.org site:A.org mud").unwrap();
        assert_eq!((q.exclude.len(), q.sites.len()), (1, 1));
        // Distinct words, negated or in phrases, count each.
        let many: Vec<String> = (0..=MAX_WORDS).map(|i| format!("-w{i}")).collect();
        assert_eq!(
            Query::parse(&many.join(" ")),
            Err(QueryError::TooManyWords(MAX_WORDS + 1))
        );
        let phrase = format!("\"{}\"", "the ".repeat(MAX_WORDS + 1));
        assert!(matches!(
            Query::parse(&phrase),
            Err(QueryError::TooManyWords(_))
        ));
        assert!(matches!(
            Query::parse(&"a-".repeat(MAX_WORDS + 1)),
            Err(QueryError::TooManyWords(_))
        ));
        let sites: Vec<String> = (0..=MAX_FILTERS)
            .map(|i| format!("site:s{i}.org"))
            .collect();
        assert!(matches!(
            Query::parse(&sites.join(" ")),
            Err(QueryError::TooManyFilters(_))
        ));
        assert!(matches!(
            Query::parse(&"x".repeat(MAX_EXPRESSION_BYTES)),
            Err(QueryError::TooLong(_))
        ));
        assert_eq!(
            Query::parse("web\0archive"),
            Err(QueryError::ControlCharacter('\0', 4))
        );
        // Tabs and line breaks are spaces.
        assert_eq!(Query::parse("a\tb\nc").unwrap().include.len(), 3);
    }
}
