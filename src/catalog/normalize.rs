//! Text normalization for bibliographic matching: titles to tokens and keys, names to
//! surnames, DOIs to their canonical spelling.
//!
//! Titles are folded so that spellings of the same title compare equal: markup tags
//! (`<i>`, JATS and MathML in Crossref titles) are dropped, the text is decomposed
//! (NFKD), diacritics are removed, a few letters without a decomposition are spelled
//! out (ß → ss, æ → ae, ø → o, ł → l, …), everything is lower-cased, and every run of
//! characters that are not letters or digits separates tokens. The title key is the
//! tokens glued together: "The Geography of Life!" and "the geography of life" both give
//! `thegeographyoflife`.

use icu_normalizer::DecomposingNormalizerBorrowed;

/// Title keys longer than this many bytes are cut (at a character boundary) before they
/// are stored or looked up: the index stays small and two titles that agree on their
/// first 200 letters are the same title for any practical purpose.
pub const TITLE_KEY_MAX_BYTES: usize = 200;

/// Words too common to select candidates by (English function words). They still count
/// in every similarity measure.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "de", "del", "der", "des", "di", "die", "do",
    "du", "e", "el", "en", "et", "for", "from", "in", "into", "is", "it", "la", "le", "les", "of",
    "on", "or", "the", "to", "und", "with",
];

pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.binary_search(&token).is_ok()
}

/// Combining marks left by the decomposition of accented letters (Latin, Greek,
/// Cyrillic). Marks of scripts where they carry meaning (Indic vowel signs) are
/// alphabetic and kept.
fn is_diacritic(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Letters that NFKD leaves alone but readers treat as their ASCII spelling.
fn spelled_out(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        'ø' => "o",
        'ł' => "l",
        'đ' | 'ð' => "d",
        'þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// Removes markup tags (`<i>`, `</jats:title>`, `<mml:math …>`) from a title: a `<`
/// followed by a letter, `/` or `!` up to the next `>`. A lone `<` (as in "x < y") is
/// kept as text.
fn strip_tags(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('<') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let opens_tag = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!');
        match (opens_tag, after.find('>')) {
            (true, Some(end)) => {
                // A tag separates words ("<title>A</title>B" reads "A B").
                out.push(' ');
                rest = &after[end + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Splits a text into folded tokens (see the module documentation), appending them to
/// `out`.
pub fn fold_tokens_into(text: &str, out: &mut Vec<String>) {
    let stripped = strip_tags(text);
    let decomposed = DecomposingNormalizerBorrowed::new_nfkd().normalize(&stripped);
    let mut current = String::new();
    let finish = |current: &mut String, out: &mut Vec<String>| {
        if !current.is_empty() {
            out.push(std::mem::take(current));
        }
    };
    for c in decomposed.chars() {
        if is_diacritic(c) {
            continue;
        }
        for lower in c.to_lowercase() {
            if let Some(spelled) = spelled_out(lower) {
                current.push_str(spelled);
            } else if lower.is_alphanumeric() {
                current.push(lower);
            } else {
                finish(&mut current, out);
            }
        }
    }
    finish(&mut current, out);
}

/// The folded tokens of a text.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    fold_tokens_into(text, &mut out);
    out
}

/// The title key: the folded tokens joined without separators, cut to
/// [`TITLE_KEY_MAX_BYTES`]. Empty when the title has no letter or digit.
#[cfg(test)]
pub fn title_key(title: &str) -> String {
    key_of_tokens(&tokens(title))
}

/// [`title_key`] from tokens already computed.
pub fn key_of_tokens(tokens: &[String]) -> String {
    let mut key = String::new();
    for token in tokens {
        key.push_str(token);
    }
    truncate_at_char(&mut key, TITLE_KEY_MAX_BYTES);
    key
}

fn truncate_at_char(text: &mut String, max_bytes: usize) {
    if text.len() <= max_bytes {
        return;
    }
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
}

/// The surname of a personal name as written: "Rhiana S. Menen" → `menen`,
/// "Menen, Rhiana S." → `menen`, folded like titles. Particles stay separate tokens, so
/// "Ludwig van Beethoven" gives `beethoven`. `None` when the name has no letters.
pub fn surname_of_name(name: &str) -> Option<String> {
    let name = name.trim();
    // "Family, Given" (a comma before any other word break of the given name).
    if let Some((family, _given)) = name.split_once(',') {
        let family_tokens = tokens(family);
        if let Some(last) = family_tokens.last()
            && last.chars().count() > 1
        {
            return Some(last.clone());
        }
    }
    let all = tokens(name);
    // Skip trailing initials and generational suffixes: "Smith J", "King Jr".
    all.iter()
        .rev()
        .find(|t| t.chars().count() > 1 && !matches!(t.as_str(), "jr" | "sr" | "ii" | "iii"))
        .or_else(|| all.last())
        .cloned()
}

/// A surname given as its own field, folded like titles.
pub fn fold_surname(surname: &str) -> Option<String> {
    let toks = tokens(surname);
    toks.last().cloned()
}

/// The canonical spelling of a DOI: the `10.NNNN/suffix` part of a DOI, `doi:` or
/// resolver URL, trimmed and lower-cased. `None` when there is no `10.` prefix with a
/// registrant code and a suffix.
pub fn normalize_doi(raw: &str) -> Option<String> {
    let lower = raw.trim().to_lowercase();
    let start = lower.find("10.")?;
    let doi = lower[start..].trim_end_matches(['.', ',', ';']).trim();
    let (prefix, suffix) = doi.split_once('/')?;
    let registrant = &prefix[3..];
    if registrant.is_empty()
        || !registrant.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || suffix.trim().is_empty()
        || doi.contains(char::is_whitespace)
        || doi.contains('\0')
    {
        return None;
    }
    Some(doi.to_string())
}

/// A four-digit year from a date string or number ("2003-02-11", "2003", 2003).
pub fn year_of(value: &serde_json::Value) -> Option<i32> {
    let year = match value {
        serde_json::Value::Number(n) => n.as_i64().and_then(|y| i32::try_from(y).ok()),
        serde_json::Value::String(s) => {
            let digits: String = s.trim().chars().take_while(char::is_ascii_digit).collect();
            (digits.len() == 4).then(|| digits.parse().ok()).flatten()
        }
        _ => None,
    }?;
    (1000..=2999).contains(&year).then_some(year)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
        assert!(is_stop_word("the") && !is_stop_word("theory"));
    }

    #[test]
    fn titles_fold_to_the_same_key() {
        assert_eq!(
            title_key("The Geography of Life!"),
            title_key("the geography  of life")
        );
        assert_eq!(
            tokens("Saúde bucal: uma avaliação"),
            ["saude", "bucal", "uma", "avaliacao"]
        );
        assert_eq!(tokens("Straße Ærø Łódź"), ["strasse", "aero", "lodz"]);
        assert_eq!(
            title_key("<title>Heterodyne instrumentation at the CSO</title>"),
            "heterodyneinstrumentationatthecso"
        );
        assert_eq!(tokens("x < y and <i>z</i>"), ["x", "y", "and", "z"]);
        assert_eq!(
            tokens("Size–sound symbolism"),
            ["size", "sound", "symbolism"]
        );
        assert_eq!(title_key("  ...  "), "");
        // Scripts without Latin letters keep their letters.
        assert_eq!(tokens("Теория чисел"), ["теория", "чисел"]);
    }

    #[test]
    fn long_keys_are_cut_at_a_character_boundary() {
        let title = "é".repeat(300);
        let key = title_key(&title);
        assert!(key.len() <= TITLE_KEY_MAX_BYTES);
        assert_eq!(key, "e".repeat(TITLE_KEY_MAX_BYTES));
        let cyrillic = "ж".repeat(300);
        assert_eq!(title_key(&cyrillic).len(), TITLE_KEY_MAX_BYTES);
    }

    #[test]
    fn surnames() {
        assert_eq!(surname_of_name("Rhiana S. Menen").as_deref(), Some("menen"));
        assert_eq!(
            surname_of_name("Menen, Rhiana S.").as_deref(),
            Some("menen")
        );
        assert_eq!(surname_of_name("Smith J").as_deref(), Some("smith"));
        assert_eq!(
            surname_of_name("Martin Luther King Jr.").as_deref(),
            Some("king")
        );
        assert_eq!(
            surname_of_name("José Vicente Sorlí").as_deref(),
            Some("sorli")
        );
        assert_eq!(surname_of_name("M").as_deref(), Some("m"));
        assert_eq!(surname_of_name(" &NA"), Some("na".into()));
        assert_eq!(surname_of_name(""), None);
    }

    #[test]
    fn dois() {
        assert_eq!(
            normalize_doi("https://doi.org/10.1016/J.CES.2013.02.020").as_deref(),
            Some("10.1016/j.ces.2013.02.020")
        );
        assert_eq!(
            normalize_doi("doi:10.1007/978-3-030-64953-1_4.").as_deref(),
            Some("10.1007/978-3-030-64953-1_4")
        );
        assert_eq!(normalize_doi("10.1234"), None);
        assert_eq!(normalize_doi("no doi here"), None);
        assert_eq!(normalize_doi("10.abc/x"), None);
    }

    #[test]
    fn years() {
        use serde_json::json;
        assert_eq!(year_of(&json!("2003-02-11")), Some(2003));
        assert_eq!(year_of(&json!(2012)), Some(2012));
        assert_eq!(year_of(&json!("03")), None);
        assert_eq!(year_of(&json!(null)), None);
    }
}
