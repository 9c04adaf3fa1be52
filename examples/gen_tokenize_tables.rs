//! Generates `src/project/tokenize_tables.rs`, the character tables of the word tokenizer,
//! by asking SQLite's own FTS5 `unicode61` tokenizer (the bundled SQLite of rusqlite) about
//! every code point above ASCII, once for each `remove_diacritics` setting (0, 1, 2).
//!
//! Each code point C is probed as the document "aCa": one token "aXa" means C is a token
//! character that folds to X (X empty: it is dropped, as combining marks are when
//! diacritics are removed); two tokens "a" and "a" mean C separates tokens. The tables are
//! therefore observations of SQLite's behaviour, not a copy of its sources, and the
//! equality tests in `tokenize.rs` compare the tokenizer with SQLite again.
//!
//! Run: cargo run --release --example gen_tokenize_tables > src/project/tokenize_tables.rs
//! then `cargo fmt`.

use std::collections::BTreeMap;

use rusqlite::Connection;

/// What one mode of the tokenizer does with one code point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Probe {
    Separator,
    /// A token character folding to the given code point, or to nothing (None).
    Token(Option<u32>),
}

fn probe_mode(remove_diacritics: u8) -> Vec<(u32, Probe)> {
    let conn = Connection::open_in_memory().expect("open SQLite");
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE probe USING fts5(t, tokenize = 'unicode61 remove_diacritics {remove_diacritics}');
         CREATE VIRTUAL TABLE probe_vocab USING fts5vocab(probe, 'instance');"
    ))
    .expect("create FTS5 table");
    let tx = conn.unchecked_transaction().expect("begin");
    {
        let mut insert = tx
            .prepare("INSERT INTO probe (rowid, t) VALUES (?1, ?2)")
            .expect("prepare");
        for cp in 0x80u32..=0x10FFFF {
            if let Some(c) = char::from_u32(cp) {
                let text = format!("a{c}a");
                insert.execute((cp as i64, text)).expect("insert");
            }
        }
    }
    tx.commit().expect("commit");
    let mut tokens: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut select = conn
        .prepare("SELECT doc, term FROM probe_vocab ORDER BY doc, offset")
        .expect("prepare vocab");
    let rows = select
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .expect("query vocab");
    for row in rows {
        let (doc, term) = row.expect("row");
        tokens.entry(doc as u32).or_default().push(term);
    }
    let mut out = Vec::new();
    for cp in 0x80u32..=0x10FFFF {
        if char::from_u32(cp).is_none() {
            continue;
        }
        let probe = match tokens.get(&cp).map(Vec::as_slice) {
            Some([a, b]) if a == "a" && b == "a" => Probe::Separator,
            Some([one]) => {
                let inner = one
                    .strip_prefix('a')
                    .and_then(|s| s.strip_suffix('a'))
                    .unwrap_or_else(|| panic!("U+{cp:04X}: unexpected token {one:?}"));
                let mut chars = inner.chars();
                match (chars.next(), chars.next()) {
                    (None, _) => Probe::Token(None),
                    (Some(f), None) => Probe::Token(Some(f as u32)),
                    _ => panic!("U+{cp:04X}: folds to several characters {inner:?}"),
                }
            }
            other => panic!("U+{cp:04X}: unexpected tokens {other:?}"),
        };
        out.push((cp, probe));
    }
    out
}

/// Ranges `(first, last)` of the code points that are token characters.
fn token_ranges(probes: &[(u32, Probe)]) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &(cp, probe) in probes {
        if probe == Probe::Separator {
            continue;
        }
        match ranges.last_mut() {
            Some((_, last)) if *last + 1 == cp => *last = cp,
            _ => ranges.push((cp, cp)),
        }
    }
    // Surrogates are no chars: a range may run across them.
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (first, last) in ranges {
        match merged.last_mut() {
            Some((_, prev_last)) if *prev_last == 0xD7FF && first == 0xE000 => *prev_last = last,
            _ => merged.push((first, last)),
        }
    }
    merged
}

/// `(code point, folded)` for token characters that do not fold to themselves; 0 = dropped.
fn folds(probes: &[(u32, Probe)]) -> Vec<(u32, u32)> {
    probes
        .iter()
        .filter_map(|&(cp, probe)| match probe {
            Probe::Token(Some(f)) if f != cp => Some((cp, f)),
            Probe::Token(None) => Some((cp, 0)),
            _ => None,
        })
        .collect()
}

fn print_pairs(name: &str, doc: &str, pairs: &[(u32, u32)]) {
    println!("/// {doc}");
    println!(
        "pub(super) static {name}: [(u32, u32); {}] = [",
        pairs.len()
    );
    for (a, b) in pairs {
        println!("    (0x{a:X}, 0x{b:X}),");
    }
    println!("];");
    println!();
}

/// Code points that can start a token: with remove_diacritics=0 (where no token character
/// is dropped), the document "C" alone yields a token exactly when C starts one. The
/// others among the token characters (combining marks) only continue a token.
fn token_starts() -> Vec<u32> {
    let conn = Connection::open_in_memory().expect("open SQLite");
    conn.execute_batch(
        "CREATE VIRTUAL TABLE probe USING fts5(t, tokenize = 'unicode61 remove_diacritics 0');
         CREATE VIRTUAL TABLE probe_vocab USING fts5vocab(probe, 'instance');",
    )
    .expect("create FTS5 table");
    let tx = conn.unchecked_transaction().expect("begin");
    {
        let mut insert = tx
            .prepare("INSERT INTO probe (rowid, t) VALUES (?1, ?2)")
            .expect("prepare");
        for cp in 0x80u32..=0x10FFFF {
            if let Some(c) = char::from_u32(cp) {
                insert.execute((cp as i64, c.to_string())).expect("insert");
            }
        }
    }
    tx.commit().expect("commit");
    let mut select = conn
        .prepare("SELECT DISTINCT doc FROM probe_vocab ORDER BY doc")
        .expect("prepare vocab");
    select
        .query_map([], |r| r.get::<_, i64>(0))
        .expect("query vocab")
        .map(|d| d.expect("row") as u32)
        .collect()
}

fn main() {
    let version: String = Connection::open_in_memory()
        .and_then(|c| c.query_row("SELECT sqlite_version()", [], |r| r.get(0)))
        .expect("SQLite version");
    let modes: Vec<Vec<(u32, Probe)>> = (0..=2).map(probe_mode).collect();
    println!("//! Character tables of the `unicode61` tokenizer, observed from SQLite {version}");
    println!("//! (FTS5) by `examples/gen_tokenize_tables.rs`. Do not edit: re-generate.");
    println!();
    // Which characters are token characters does not depend on the setting (checked).
    let ranges = token_ranges(&modes[0]);
    for probes in &modes[1..] {
        assert_eq!(
            token_ranges(probes),
            ranges,
            "token characters differ by mode"
        );
    }
    print_pairs(
        "TOKEN_RANGES",
        "Non-ASCII token characters (any remove_diacritics setting): inclusive ranges.",
        &ranges,
    );
    let starts: std::collections::HashSet<u32> = token_starts().into_iter().collect();
    let continuing: Vec<(u32, Probe)> = modes[0]
        .iter()
        .map(|&(cp, probe)| match probe {
            Probe::Token(_) if !starts.contains(&cp) => (cp, probe),
            _ => (cp, Probe::Separator),
        })
        .collect();
    print_pairs(
        "CONTINUE_ONLY_RANGES",
        "Token characters that cannot start a token, only continue one: inclusive ranges.",
        &token_ranges(&continuing),
    );
    for (mode, probes) in modes.iter().enumerate() {
        print_pairs(
            &format!("FOLDS_{mode}"),
            &format!(
                "Non-ASCII token characters that fold to another code point with remove_diacritics={mode} (0: dropped)."
            ),
            &folds(probes),
        );
    }
}
