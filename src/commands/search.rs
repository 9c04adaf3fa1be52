//! `sediment search QUERY`: full-text search over a summary database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use chrono::DateTime;

use crate::search::facets::{FacetValue, overview};
use crate::search::{Query, Stop, open, search_page};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment search --db summary.db 'web archive' site:example.com
  sediment search --db summary.db --json --limit 50 crawler
  sediment search --db summary.db --offset 10 --facets 'web archive'   # page 2, with facets")]
pub struct Args {
    /// Words and "quoted phrases" (all must occur), -word / -"phrase" to exclude, and
    /// filters site:HOST, lang:CODE, mime:TYPE. A query that starts with a minus goes
    /// after `--`: `sediment search -- -"phrase" word`. At most 32 words (a repeated word
    /// counts once, a phrase counts its words), 16 filter values and 4096 bytes of search
    /// expression; control characters are refused.
    #[arg(required = true, num_args = 1..)]
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

fn date(unix: i64) -> String {
    DateTime::from_timestamp(unix, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| unix.to_string())
}

/// Titles and snippets may span lines in the page; results are one line each.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn run(args: Args) -> Result<ExitCode> {
    let query = super::usage(Query::parse(&args.query.join(" ")))?;
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
    let hits = search_page(&mut conn, &query, args.offset, args.limit, &stop)?;
    let counted = if args.facets {
        Some(overview(&mut conn, &query, &stop)?)
    } else {
        None
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        for hit in &hits {
            serde_json::to_writer(&mut out, hit)?;
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
