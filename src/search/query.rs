//! The search query language and its translation to an FTS5 MATCH expression.
//!
//! * `word` and `"a quoted phrase"`: all must occur (AND); `word*` matches words starting
//!   with `word`;
//! * `-word`, `-"a phrase"`: must not occur;
//! * `site:example.org` (the host or a subdomain of it), `lang:de` (`de`, `de-AT`, …),
//!   `mime:application/pdf` or `mime:pdf` (type or subtype): filters; several values of one
//!   filter are alternatives.
//!
//! Words are matched as the index tokenizes them (lower case, porter stems), so `Running`
//! finds `runs`. Everything the user types is quoted before it reaches FTS5, so operators
//! (`AND`, `OR`, `NEAR`, `:`, `^`) are plain words and no input is a syntax error.

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
}

/// Why a query cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("empty query: give words, \"phrases\" or a filter (site:, lang:, mime:)")]
    Empty,
    #[error("`{0}:` needs a value, e.g. {0}:{1}")]
    EmptyFilter(&'static str, &'static str),
}

/// Columns searched for the user's terms: all but the literal `any` column.
const TEXT_COLUMNS: &str = "- {any}";

impl Query {
    pub fn parse(input: &str) -> Result<Query, QueryError> {
        let mut query = Query::default();
        let chars: Vec<char> = input.chars().collect();
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
                        list.push(value);
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
                if negated {
                    query.exclude.push(term);
                } else {
                    query.include.push(term);
                }
            }
        }
        if query.include.is_empty()
            && query.exclude.is_empty()
            && query.sites.is_empty()
            && query.languages.is_empty()
            && query.mime_types.is_empty()
        {
            return Err(QueryError::Empty);
        }
        Ok(query)
    }

    /// The FTS5 MATCH expression: included terms ANDed over the text columns, then
    /// `NOT` each excluded term; with nothing to include, the literal `any` column
    /// (which holds "any" in every row) stands in, so exclusions and filters alone work.
    pub fn fts_expression(&self) -> String {
        let positive = if self.include.is_empty() {
            "any : \"any\"".to_string()
        } else {
            let terms: Vec<String> = self.include.iter().map(Term::fts).collect();
            format!("{TEXT_COLUMNS} : ({})", terms.join(" AND "))
        };
        let mut expression = format!("({positive})");
        for term in &self.exclude {
            expression.push_str(&format!(" NOT ({TEXT_COLUMNS} : ({}))", term.fts()));
        }
        expression
    }
}

impl Term {
    pub fn text(&self) -> &str {
        match self {
            Term::Word { text, .. } | Term::Phrase(text) => text,
        }
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
            r#"(- {any} : ("Lake" AND "flood layer" AND "sedi" *)) NOT (- {any} : ("core sample")) NOT (- {any} : ("mud"))"#
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
    fn exclusions_alone_use_the_any_column() {
        let q = Query::parse(r#"-"thin section""#).unwrap();
        assert_eq!(
            q.fts_expression(),
            r#"(any : "any") NOT (- {any} : ("thin section"))"#
        );
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
}
