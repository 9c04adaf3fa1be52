//! `sediment lookup-jdbm DIR WORD`: the pages of a JDBM projection that contain a word.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::project::jdbm::lookup;
use crate::project::tokenize::Tokenizer;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sediment lookup-jdbm jdbm/ archive")]
pub struct Args {
    /// A directory written by `sediment project jdbm`.
    pub dir: PathBuf,
    /// The word (case and accents as typed are folded as the index folds them).
    pub word: String,
}

/// Prints `URL TAB frequency` lines, most frequent first; reads only WordtoWordID,
/// WordIDtoPageID and PageIDtoURL, each by binary search.
pub fn run(args: Args) -> Result<ExitCode> {
    let tokens = Tokenizer::WORDS.tokens(&args.word);
    let [word] = tokens.as_slice() else {
        crate::usage_error!(
            "{:?} is not one word to the index (its words: {tokens:?})",
            args.word
        );
    };
    let hits = lookup(&args.dir, word)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for hit in &hits {
        writeln!(out, "{}\t{}", hit.url, hit.frequency)?;
    }
    out.flush()?;
    if hits.is_empty() {
        crate::diag!("sediment: no page contains {word:?}");
        return Ok(ExitCode::from(1));
    }
    super::done()
}
