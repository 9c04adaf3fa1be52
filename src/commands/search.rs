//! `sediment search QUERY`: full-text search over a summary database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use chrono::DateTime;

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::key::Sha1Key;
use crate::project::summary::keys::ContentKey;
use crate::search::facets::FacetValue;
use crate::search::{Hit, Query, Stop, open, search_page, search_page_with_overview};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment search --db summary.db 'web archive' site:example.com
  sediment search --db summary.db --json --limit 50 crawler
  sediment search --db summary.db --offset 10 --facets 'web archive'   # page 2, with facets")]
pub struct Args {
    /// Words and "quoted phrases" (all must occur), -word / -"phrase" to exclude, and
    /// filters site:HOST[:PORT], lang:CODE, mime:TYPE, year:YYYY. Exclusions need no `--`
    /// (`sediment search zlib -gzip -"a phrase"`); this command's options may come before
    /// or after the query. At most 32 words (a repeated word counts once, a phrase
    /// counts its words), 16 filter values and 4096 bytes of search expression; control
    /// characters are refused.
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    pub query: Vec<String>,
    /// The summary database written by `sediment project summary`.
    #[arg(long, default_value = "summary.db")]
    pub db: PathBuf,
    /// At most this many results.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// One JSON object per result.
    #[arg(long)]
    pub json: bool,
    /// Skip this many results (the next page starts at offset + limit).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Also count the matches and show their facets (site, type, year; the first 10,000
    /// matches are counted): after the results, or with --json as a last line
    /// {"total":…,"total_exact":…,"offset":…,"facets":{"site":[{"value":…,"count":…}],…}}.
    #[arg(long)]
    pub facets: bool,
}

/// A `--json` line: the hit and where to find its capture and payload in the store.
#[derive(Serialize)]
struct JsonHit<'h> {
    #[serde(flatten)]
    hit: &'h Hit,
    /// The latest capture of this version, as a 14-digit CDX/wayback timestamp.
    timestamp: String,
    /// Base32 SHA-1 of a payload of this version (`sediment cat`, `serve`'s `/payload/KEY`):
    /// a file's own payload; for an HTML page, one whose text is this version's text (a
    /// page captured under several payloads that differ only in markup has several).
    payload: Option<String>,
}

fn wayback_timestamp(unix: i64) -> String {
    DateTime::from_timestamp(unix, 0)
        .map(|t| t.format("%Y%m%d%H%M%S").to_string())
        .unwrap_or_default()
}

/// The payload key of a generation, from the summary database: a file generation's key
/// holds its payload's SHA-1, an HTML one's the digest of its text pile, whose payloads
/// `summary_payload` lists.
fn payload_key(conn: &Connection, generation_uuid: &str) -> Result<Option<String>> {
    let Ok(uuid) = uuid::Uuid::parse_str(generation_uuid) else {
        return Ok(None);
    };
    let found: Option<(Vec<u8>, Option<i64>)> = conn
        .query_row(
            "SELECT content_key, text_pile_id FROM entity_generation
             WHERE entity_generation_uuid = ?1",
            [uuid.as_bytes().as_slice()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((content_key, pile)) = found else {
        return Ok(None);
    };
    let sha1: Option<Vec<u8>> = match ContentKey::from_bytes(&content_key) {
        Some(ContentKey::File(sha1)) => Some(sha1.to_vec()),
        Some(ContentKey::Pile(_)) => conn
            .query_row(
                "SELECT payload_sha1 FROM summary_payload WHERE text_pile_id = ?1
                 ORDER BY payload_sha1 LIMIT 1",
                [pile],
                |r| r.get(0),
            )
            .optional()?,
        _ => None,
    };
    Ok(sha1
        .and_then(|bytes| <[u8; 20]>::try_from(bytes.as_slice()).ok())
        .map(|bytes| Sha1Key(bytes).to_base32()))
}

fn date(unix: i64) -> String {
    DateTime::from_timestamp(unix, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| unix.to_string())
}

/// Titles and snippets may span lines in the page; results are one line each.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The query's words back as one query string. The shell took the quotes off
/// `-"a phrase"`: an exclusion holding white space and no quote was a phrase.
fn query_text(words: &[String]) -> String {
    let words: Vec<String> = words
        .iter()
        .map(|word| match word.strip_prefix('-') {
            Some(phrase) if phrase.contains(char::is_whitespace) && !phrase.contains('"') => {
                format!("-\"{phrase}\"")
            }
            _ => word.clone(),
        })
        .collect();
    words.join(" ")
}

/// The query takes hyphenated words (`zlib -gzip`), so clap hands it every word after its
/// first, options included: this command's own options written after the query are taken
/// back here, and the global ones, which search does not use, dropped.
fn options_after_query(args: &mut Args) -> Result<()> {
    let words = std::mem::take(&mut args.query);
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let (name, attached) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_string(), Some(value.to_string()))
            }
            _ => (word.clone(), None),
        };
        let takes_value = matches!(name.as_str(), "--db" | "--limit" | "--offset" | "--store");
        if !takes_value && !matches!(name.as_str(), "--json" | "--facets" | "--wait") {
            args.query.push(word);
            continue;
        }
        let value = if takes_value {
            match attached.or_else(|| words.next()) {
                Some(value) => Some(value),
                None => crate::usage_error!("{name} needs a value"),
            }
        } else if attached.is_some() {
            crate::usage_error!("{name} takes no value");
        } else {
            None
        };
        match (name.as_str(), value) {
            ("--db", Some(value)) => args.db = PathBuf::from(value),
            ("--limit", Some(value)) => match value.parse() {
                Ok(limit) => args.limit = limit,
                Err(_) => crate::usage_error!("--limit needs a whole number, not {value:?}"),
            },
            ("--offset", Some(value)) => match value.parse() {
                Ok(offset) => args.offset = offset,
                Err(_) => crate::usage_error!("--offset needs a whole number, not {value:?}"),
            },
            ("--json", _) => args.json = true,
            ("--facets", _) => args.facets = true,
            _ => {}
        }
    }
    if args.query.is_empty() {
        crate::usage_error!("the query is missing (words to search for)");
    }
    Ok(())
}

pub fn run(mut args: Args) -> Result<ExitCode> {
    options_after_query(&mut args)?;
    let query = super::usage(Query::parse(&query_text(&args.query)))?;
    if !args.db.exists() {
        anyhow::bail!(
            "there is no summary database {}: make one from a store with \
             `sediment --store STORE project summary -o {}` (add --warc-dir DIR when the \
             WARCs have moved since they were imported), or name yours with --db",
            args.db.display(),
            args.db.display()
        );
    }
    let mut conn = open(&args.db)?;
    let stop = Stop::default();
    let (hits, counted) = if args.facets {
        let (hits, overview) =
            search_page_with_overview(&mut conn, None, &query, args.offset, args.limit, &stop)?;
        (hits, Some(overview))
    } else {
        (
            search_page(&mut conn, None, &query, args.offset, args.limit, &stop)?,
            None,
        )
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        for hit in &hits {
            let line = JsonHit {
                hit,
                timestamp: wayback_timestamp(hit.last_seen),
                payload: payload_key(&conn, &hit.entity_generation_uuid)?,
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        }
        if let Some(counted) = &counted {
            serde_json::to_writer(
                &mut out,
                &serde_json::json!({
                    "total": counted.total,
                    "total_exact": counted.total_exact,
                    "offset": args.offset,
                    "facets": counted.facets,
                }),
            )?;
            out.write_all(b"\n")?;
        }
    } else {
        for (i, hit) in hits.iter().enumerate() {
            writeln!(out, "{}. {}", args.offset + i + 1, one_line(&hit.title))?;
            writeln!(out, "   {}", hit.url)?;
            match hit.copies {
                0 => {}
                1 => writeln!(out, "   1 more copy: {}", hit.copy_urls.join(" "))?,
                n => {
                    let more = if n as usize > hit.copy_urls.len() {
                        " …"
                    } else {
                        ""
                    };
                    writeln!(out, "   {n} more copies: {}{more}", hit.copy_urls.join(" "))?
                }
            }
            if !hit.snippet.is_empty() {
                writeln!(out, "   {}", one_line(&hit.snippet))?;
            }
            let seen = if hit.first_seen == hit.last_seen {
                date(hit.first_seen)
            } else {
                format!("{} – {}", date(hit.first_seen), date(hit.last_seen))
            };
            let captures = if hit.captures == 1 {
                "capture"
            } else {
                "captures"
            };
            writeln!(out, "   captured {seen} ({} {captures})", hit.captures)?;
        }
        if hits.is_empty() {
            crate::diag!("no results");
        }
        if let Some(counted) = &counted {
            let more = if counted.total_exact {
                ""
            } else {
                "more than "
            };
            writeln!(
                out,
                "{more}{} results; these are {}–{}",
                counted.total,
                (args.offset + 1).min(args.offset + hits.len()),
                args.offset + hits.len()
            )?;
            let facets = &counted.facets;
            for (name, values) in [
                ("site", &facets.site),
                ("mime", &facets.mime),
                ("year", &facets.year),
            ] {
                let listed: Vec<String> = values
                    .iter()
                    .map(|FacetValue { value, count }| format!("{name}:{value} ({count})"))
                    .collect();
                if !listed.is_empty() {
                    writeln!(out, "  {}", listed.join("  "))?;
                }
            }
        }
    }
    out.flush()?;
    super::done()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::search::{MAX_EXPRESSION_BYTES, MAX_FILTERS, MAX_WORDS};

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: super::Args,
    }

    #[test]
    fn the_help_states_the_query_limits() {
        let help = Cli::command().render_long_help().to_string();
        for limit in [
            format!("{MAX_WORDS} words"),
            format!("{MAX_FILTERS} filter values"),
            format!("{MAX_EXPRESSION_BYTES} bytes"),
        ] {
            assert!(help.contains(&limit), "{limit} in: {help}");
        }
    }
}
