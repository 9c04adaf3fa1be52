//! `sediment search QUERY`: full-text search over a summary database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use chrono::DateTime;

use crate::search::{Query, open, search};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment search --db summary.db 'web archive' site:example.com
  sediment search --db summary.db --json --limit 50 crawler")]
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
    let conn = open(&args.db)?;
    let hits = search(&conn, &query, args.limit)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        for hit in &hits {
            serde_json::to_writer(&mut out, hit)?;
            out.write_all(b"\n")?;
        }
    } else {
        for (i, hit) in hits.iter().enumerate() {
            writeln!(out, "{}. {}", i + 1, one_line(&hit.title))?;
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
