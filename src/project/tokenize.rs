//! The tokenizer every word index shares: SQLite FTS5's `unicode61` rules, optionally with
//! its `porter` stemmer on top, so that the words of the locust and JDBM projections and
//! the tokens of the summary database are the tokens SQLite's full-text index holds.
//!
//! # unicode61
//! * ASCII letters and digits are token characters, `A`–`Z` fold to lower case; every
//!   other ASCII character separates tokens.
//! * Above ASCII, the token characters are those of the Unicode categories L*, N* and Co
//!   as SQLite knows them, plus the combining marks it treats as parts of words; each
//!   folds to one code point (its lower case, and with `remove_diacritics` its base
//!   letter) or, when diacritics are removed, combining marks are dropped.
//! * The character tables (`src/project/tokenize_tables.rs`) were observed from
//!   SQLite itself (`examples/gen_tokenize_tables.rs`), and the tests here compare whole
//!   texts with SQLite's own tokens read back through `fts5vocab`.
//! * The combining marks U+0300–U+0331 that SQLite treats specially continue a token but
//!   never start one (after a separator they are separators); they are the only
//!   characters that fold to nothing (when diacritics are removed), so no token is empty.
//!
//! # porter
//! Martin Porter's algorithm in the variant of his reference C implementation (step 2
//! has `bli`→`ble` and `logi`→`log`), applied as SQLite applies it: to tokens of 3 to 64
//! bytes, bytes other than ASCII vowels counting as consonants. Longer and shorter tokens
//! pass through unchanged.
//!
//! # Which form each index stores
//! * The summary database's FTS table: `porter unicode61` ([`Tokenizer::PORTER_UNICODE61`]).
//! * The locust/ASPseek and JDBM word indexes: [`Tokenizer::WORDS`], i.e. `unicode61
//!   remove_diacritics 0` without stemming. Both engines store whole words, not stems:
//!   ASPseek lower-cases them through its charset tables (stemming, if any, happens at
//!   query time); the JDBM indexer splits the page text at white space and keeps each
//!   piece as written. Stems would not match their query code, and stripping accents would
//!   merge words their users tell apart ("résumé" vs. "resume"); folding case and cutting
//!   punctuation off (which the JDBM indexer did not do: "Lake," and "lake" were two
//!   words there) gives both the same, cleaner dictionary.

use super::tokenize_tables::{CONTINUE_ONLY_RANGES, FOLDS_0, FOLDS_1, FOLDS_2, TOKEN_RANGES};

/// The `remove_diacritics` option of `unicode61`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoveDiacritics {
    /// `remove_diacritics 0`: keep them.
    Keep,
    /// `remove_diacritics 1` (SQLite's default): remove them from Latin letters, except
    /// from letters with several diacritics (SQLite's historical behaviour).
    Latin,
    /// `remove_diacritics 2`: remove them from all Latin letters (SQLite's third
    /// setting, held to SQLite by the tests; the projections use `Latin`).
    #[cfg_attr(not(test), expect(dead_code, reason = "only the tests configure it"))]
    All,
}

impl RemoveDiacritics {
    #[cfg(test)]
    fn option(self) -> u8 {
        match self {
            RemoveDiacritics::Keep => 0,
            RemoveDiacritics::Latin => 1,
            RemoveDiacritics::All => 2,
        }
    }

    fn folds(self) -> &'static [(u32, u32)] {
        match self {
            RemoveDiacritics::Keep => &FOLDS_0,
            RemoveDiacritics::Latin => &FOLDS_1,
            RemoveDiacritics::All => &FOLDS_2,
        }
    }
}

/// A tokenizer configuration; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tokenizer {
    pub remove_diacritics: RemoveDiacritics,
    /// Stem each token with the Porter stemmer, as SQLite's `porter` wrapper does.
    pub porter: bool,
}

/// Tokens longer than this many bytes are not stemmed (SQLite's limit).
pub const PORTER_MAX_BYTES: usize = 64;

impl Tokenizer {
    /// `unicode61` with SQLite's defaults.
    #[cfg(test)]
    pub const UNICODE61: Tokenizer = Tokenizer {
        remove_diacritics: RemoveDiacritics::Latin,
        porter: false,
    };
    /// `porter unicode61`, the summary database's full-text tokenizer.
    pub const PORTER_UNICODE61: Tokenizer = Tokenizer {
        remove_diacritics: RemoveDiacritics::Latin,
        porter: true,
    };
    /// The words of the word indexes: lower case, diacritics kept, not stemmed.
    pub const WORDS: Tokenizer = Tokenizer {
        remove_diacritics: RemoveDiacritics::Keep,
        porter: false,
    };

    /// The FTS5 `tokenize` option that makes SQLite tokenize the same way.
    #[cfg(test)]
    pub fn fts5_option(&self) -> String {
        format!(
            "{}unicode61 remove_diacritics {}",
            if self.porter { "porter " } else { "" },
            self.remove_diacritics.option()
        )
    }

    /// Calls `emit` with each token of `text`, in order. `scratch` holds the current token
    /// (pass the same buffers for every text to avoid allocating).
    pub fn for_each_token(&self, text: &str, scratch: &mut Scratch, mut emit: impl FnMut(&str)) {
        let folds = self.remove_diacritics.folds();
        let token = &mut scratch.token;
        token.clear();
        let mut in_token = false;
        for c in text.chars() {
            let cp = c as u32;
            let folded = if cp < 0x80 {
                match c {
                    'a'..='z' | '0'..='9' => Some(Some(c)),
                    'A'..='Z' => Some(Some(c.to_ascii_lowercase())),
                    _ => None,
                }
            } else if in_ranges(&TOKEN_RANGES, cp)
                && (in_token || !in_ranges(&CONTINUE_ONLY_RANGES, cp))
            {
                Some(fold(folds, cp))
            } else {
                None
            };
            match folded {
                Some(f) => {
                    in_token = true;
                    if let Some(f) = f {
                        token.push(f);
                    }
                }
                None => {
                    if in_token {
                        self.finish(token, &mut scratch.stem, &mut emit);
                        in_token = false;
                    }
                }
            }
        }
        if in_token {
            self.finish(token, &mut scratch.stem, &mut emit);
        }
    }

    fn finish(&self, token: &mut String, stem: &mut Vec<u8>, emit: &mut impl FnMut(&str)) {
        if !token.is_empty() {
            if self.porter {
                porter_stem_into(token, stem);
                match std::str::from_utf8(stem) {
                    Ok(s) => emit(s),
                    // Stemming cut a multi-byte character (a doubled final byte before
                    // "ed"/"ing"); SQLite would index the broken bytes, we keep the word.
                    Err(_) => emit(token),
                }
            } else {
                emit(token);
            }
        }
        token.clear();
    }

    /// All tokens of `text` (convenient, allocating).
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut scratch = Scratch::default();
        let mut out = Vec::new();
        self.for_each_token(text, &mut scratch, |t| out.push(t.to_string()));
        out
    }
}

/// Reusable buffers of [`Tokenizer::for_each_token`].
#[derive(Default, Debug)]
pub struct Scratch {
    token: String,
    stem: Vec<u8>,
}

/// Is `cp` in one of the sorted inclusive `ranges`?
fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    match ranges.binary_search_by(|&(first, _)| first.cmp(&cp)) {
        Ok(_) => true,
        Err(0) => false,
        Err(i) => cp <= ranges[i - 1].1,
    }
}

/// The folded form of a non-ASCII token character; `None` when it is dropped.
fn fold(folds: &[(u32, u32)], cp: u32) -> Option<char> {
    match folds.binary_search_by(|&(from, _)| from.cmp(&cp)) {
        Ok(i) => char::from_u32(folds[i].1).filter(|_| folds[i].1 != 0),
        Err(_) => char::from_u32(cp),
    }
}

/// Writes the stem of `token` into `out` (bytes; see [`porter_stem`]).
pub fn porter_stem_into(token: &str, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(token.as_bytes());
    if out.len() < 3 || out.len() > PORTER_MAX_BYTES {
        return;
    }
    let mut w = Word { b: out };
    w.step1ab();
    w.step1c();
    w.step2();
    w.step3();
    w.step4();
    w.step5();
}

/// The word being stemmed; its end is the end of the vector.
struct Word<'a> {
    b: &'a mut Vec<u8>,
}

impl Word<'_> {
    /// Is the byte at `i` a consonant? `y` is one at the start and after a vowel.
    fn consonant(&self, i: usize) -> bool {
        match self.b[i] {
            b'a' | b'e' | b'i' | b'o' | b'u' => false,
            b'y' => i == 0 || !self.consonant(i - 1),
            _ => true,
        }
    }

    /// Porter's m: the number of vowel-consonant sequences in the first `len` bytes.
    fn measure(&self, len: usize) -> usize {
        let mut i = 0;
        while i < len && self.consonant(i) {
            i += 1;
        }
        let mut m = 0;
        loop {
            while i < len && !self.consonant(i) {
                i += 1;
            }
            if i >= len {
                return m;
            }
            while i < len && self.consonant(i) {
                i += 1;
            }
            m += 1;
        }
    }

    /// Does the stem of `len` bytes contain a vowel?
    fn has_vowel(&self, len: usize) -> bool {
        (0..len).any(|i| !self.consonant(i))
    }

    /// Does the stem of `len` bytes end in a double consonant? Here `y` always counts
    /// as a consonant (so "-yy" is one), as in SQLite.
    fn double_consonant(&self, len: usize) -> bool {
        len >= 2
            && self.b[len - 1] == self.b[len - 2]
            && !matches!(self.b[len - 1], b'a' | b'e' | b'i' | b'o' | b'u')
    }

    /// Porter's *o: the stem of `len` bytes ends consonant-vowel-consonant, the last not
    /// w, x or y.
    fn cvc(&self, len: usize) -> bool {
        len >= 3
            && self.consonant(len - 3)
            && !self.consonant(len - 2)
            && self.consonant(len - 1)
            && !matches!(self.b[len - 1], b'w' | b'x' | b'y')
    }

    fn ends(&self, suffix: &str) -> bool {
        // The stem before the suffix must not be empty.
        self.b.len() > suffix.len() && self.b.ends_with(suffix.as_bytes())
    }

    /// The length of the stem when `suffix` is removed.
    fn stem_len(&self, suffix: &str) -> usize {
        self.b.len() - suffix.len()
    }

    fn replace(&mut self, suffix_len: usize, with: &str) {
        let stem = self.b.len() - suffix_len;
        self.b.truncate(stem);
        self.b.extend_from_slice(with.as_bytes());
    }

    /// Replaces the first suffix of `rules` the word ends with by its replacement when the
    /// stem's measure exceeds `min_measure`; later rules are not tried after a match.
    fn rule_list(&mut self, rules: &[(&str, &str)], min_measure: usize) {
        for (suffix, with) in rules {
            if self.ends(suffix) {
                if self.measure(self.stem_len(suffix)) > min_measure {
                    self.replace(suffix.len(), with);
                }
                return;
            }
        }
    }

    fn step1ab(&mut self) {
        // 1a: plurals.
        if self.ends("sses") || self.ends("ies") {
            let n = self.b.len();
            self.b.truncate(n - 2);
        } else if self.b.ends_with(b"s") && !self.b.ends_with(b"ss") {
            self.b.pop();
        }
        // 1b: -eed, -ed, -ing.
        if self.ends("eed") {
            if self.measure(self.stem_len("eed")) > 0 {
                self.b.pop();
            }
            return;
        }
        let suffix = if self.ends("ed") {
            "ed"
        } else if self.ends("ing") {
            "ing"
        } else {
            return;
        };
        if !self.has_vowel(self.stem_len(suffix)) {
            return;
        }
        let n = self.stem_len(suffix);
        self.b.truncate(n);
        if self.b.ends_with(b"at") || self.b.ends_with(b"bl") || self.b.ends_with(b"iz") {
            self.b.push(b'e');
        } else if self.double_consonant(n) && !matches!(self.b[n - 1], b'l' | b's' | b'z') {
            self.b.pop();
        } else if self.measure(n) == 1 && self.cvc(n) {
            self.b.push(b'e');
        }
    }

    fn step1c(&mut self) {
        let n = self.b.len();
        if self.ends("y") && self.has_vowel(n - 1) {
            self.b[n - 1] = b'i';
        }
    }

    fn step2(&mut self) {
        let n = self.b.len();
        if n < 2 {
            return;
        }
        let rules: &[(&str, &str)] = match self.b[n - 2] {
            b'a' => &[("ational", "ate"), ("tional", "tion")],
            b'c' => &[("enci", "ence"), ("anci", "ance")],
            b'e' => &[("izer", "ize")],
            b'g' => &[("logi", "log")],
            b'l' => &[
                ("bli", "ble"),
                ("alli", "al"),
                ("entli", "ent"),
                ("eli", "e"),
                ("ousli", "ous"),
            ],
            b'o' => &[("ization", "ize"), ("ation", "ate"), ("ator", "ate")],
            b's' => &[
                ("alism", "al"),
                ("iveness", "ive"),
                ("fulness", "ful"),
                ("ousness", "ous"),
            ],
            b't' => &[("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")],
            _ => return,
        };
        self.rule_list(rules, 0);
    }

    fn step3(&mut self) {
        let Some(&last) = self.b.last() else { return };
        let rules: &[(&str, &str)] = match last {
            b'e' => &[("icate", "ic"), ("ative", ""), ("alize", "al")],
            b'i' => &[("iciti", "ic")],
            b'l' => &[("ical", "ic"), ("ful", "")],
            b's' => &[("ness", "")],
            _ => return,
        };
        self.rule_list(rules, 0);
    }

    fn step4(&mut self) {
        let n = self.b.len();
        if n < 2 {
            return;
        }
        let suffixes: &[&str] = match self.b[n - 2] {
            b'a' => &["al"],
            b'c' => &["ance", "ence"],
            b'e' => &["er"],
            b'i' => &["ic"],
            b'l' => &["able", "ible"],
            b'n' => &["ant", "ement", "ment", "ent"],
            b'o' => {
                // -ion only after s or t.
                if self.ends("ion") {
                    let stem = self.stem_len("ion");
                    if matches!(self.b[stem - 1], b's' | b't') && self.measure(stem) > 1 {
                        self.b.truncate(stem);
                    }
                    return;
                }
                &["ou"]
            }
            b's' => &["ism"],
            b't' => &["ate", "iti"],
            b'u' => &["ous"],
            b'v' => &["ive"],
            b'z' => &["ize"],
            _ => return,
        };
        for suffix in suffixes {
            if self.ends(suffix) {
                let stem = self.stem_len(suffix);
                if self.measure(stem) > 1 {
                    self.b.truncate(stem);
                }
                return;
            }
        }
    }

    fn step5(&mut self) {
        // 5a: a final -e.
        let n = self.b.len();
        if self.b.ends_with(b"e") {
            let m = self.measure(n - 1);
            if m > 1 || (m == 1 && !self.cvc(n - 1)) {
                self.b.pop();
            }
        }
        // 5b: -ll to -l.
        let n = self.b.len();
        if self.b.ends_with(b"ll") && self.measure(n) > 1 {
            self.b.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// SQLite's tokens of each text (in order), through an FTS5 table and `fts5vocab`.
    fn sqlite_tokens(tokenizer: &Tokenizer, texts: &[&str]) -> Vec<Vec<String>> {
        let conn = Connection::open_in_memory().expect("SQLite");
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{}');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
            tokenizer.fts5_option()
        ))
        .expect("create");
        for (i, text) in texts.iter().enumerate() {
            conn.execute("INSERT INTO t (rowid, x) VALUES (?1, ?2)", (i as i64, text))
                .expect("insert");
        }
        let mut out = vec![Vec::new(); texts.len()];
        let mut stmt = conn
            .prepare("SELECT doc, term FROM v ORDER BY doc, offset")
            .expect("select");
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .expect("query");
        for row in rows {
            let (doc, term) = row.expect("row");
            out[doc as usize].push(term);
        }
        out
    }

    const ALL: [Tokenizer; 6] = [
        Tokenizer::UNICODE61,
        Tokenizer::PORTER_UNICODE61,
        Tokenizer::WORDS,
        Tokenizer {
            remove_diacritics: RemoveDiacritics::All,
            porter: false,
        },
        Tokenizer {
            remove_diacritics: RemoveDiacritics::All,
            porter: true,
        },
        Tokenizer {
            remove_diacritics: RemoveDiacritics::Keep,
            porter: true,
        },
    ];

    fn assert_same_as_sqlite(texts: &[&str]) {
        for tokenizer in ALL {
            let expected = sqlite_tokens(&tokenizer, texts);
            for (text, want) in texts.iter().zip(expected) {
                let got = tokenizer.tokens(text);
                assert_eq!(got, want, "{tokenizer:?} on {text:?}");
            }
        }
    }

    const TRICKY: &[&str] = &[
        "Hello, World! HELLO world",
        "Größe STRASSE straße Ærøskøbing ÅNGSTRÖM",
        "résumé Résumé RESUME naïve café Crème brûlée",
        "e\u{301}te\u{301} (combining acute) x\u{300}\u{301}y \u{301} alone",
        "ǅemal Ǆ ǆ ȴ Ḝḝ ḯ ǖ ǘ ṏ ố ẫ ự (several diacritics)",
        "don't can't O'Reilly l'été rock'n'roll it’s",
        "3.14159 2021-03-14 1,000,000 v1.2.3 0x1F IPv6 ::1 x86_64 snake_case",
        "中文分词 日本語のテキスト 한국어 텍스트 ไทย",
        "emoji 😀 🎉 mixed😀word 👍🏽 ❤️ flags 🇩🇪",
        "Ελληνικά ΣΊΣΥΦΟΣ Русский ТЕКСТ Ёлка עברית العربية",
        "ＦＵＬＬＷＩＤＴＨ ｆｕｌｌ ①②③ ⅫⅣ ² ½ ℃ ™ ﬁ ﬀ",
        "tab\tnew\nline\r\nnbsp\u{a0}zwsp\u{200b}zwj\u{200d}soft\u{ad}hyphen",
        "private \u{e000}\u{f8ff} use, math 𝐀𝐁𝐂 𝔘𝔫𝔦, tags \u{e0041}",
        "İstanbul ıi ß ẞ Σσς ǰ ŉ",
        "caresses ponies ties caress cats feed agreed plastered bled motoring sing \
         conflated troubled sized hopping tanned falling hissing fizzed failing filing \
         happy sky relational conditional rational valenci hesitanci digitizer \
         conformabli radicalli differentli vileli analogousli vietnamization predication \
         operator feudalism decisiveness hopefulness callousness formaliti sensitiviti \
         sensibiliti triplicate formative formalize electriciti electrical hopeful goodness \
         revival allowance inference airliner gyroscopic adjustable defensible irritant \
         replacement adjustment dependent adoption homologou communism activate angulariti \
         homologous effective bowdlerize probate rate cease controll roll generalizations \
         oscillators ies eed ing sses abed bring y yy yes syzygy archaeology analogies",
    ];

    #[test]
    fn tricky_texts_tokenize_as_sqlite_does() {
        assert_same_as_sqlite(TRICKY);
    }

    #[test]
    fn ascii_characters_tokenize_as_sqlite_does() {
        let all: String = (1u8..0x80).map(|b| format!("a{}a ", b as char)).collect();
        assert_same_as_sqlite(&[&all]);
    }

    #[test]
    fn fixture_pages_tokenize_as_sqlite_does() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/site");
        let mut texts = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("read dir") {
                    stack.push(entry.expect("entry").path());
                }
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                texts.push(text);
            } else {
                // windows-1252 page: decode as Latin-1 (close enough for a tokenizer test).
                let bytes = std::fs::read(&path).expect("read");
                texts.push(bytes.iter().map(|&b| b as char).collect());
            }
        }
        assert!(texts.len() > 20, "fixture site pages: {}", texts.len());
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_same_as_sqlite(&refs);
    }

    /// Every non-ASCII code point, in one text per block of 4096, inside a token and at
    /// the start of one.
    #[test]
    fn every_code_point_tokenizes_as_sqlite_does() {
        let mut texts = Vec::new();
        let mut cp = 0x80u32;
        while cp <= 0x10FFFF {
            let end = (cp + 4096).min(0x110000);
            let text: String = (cp..end)
                .filter_map(char::from_u32)
                .flat_map(|c| ['q', c, 'z', ' ', c, 'x', ' '])
                .collect();
            texts.push(text);
            cp = end;
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for tokenizer in [
            Tokenizer::UNICODE61,
            Tokenizer::WORDS,
            Tokenizer {
                remove_diacritics: RemoveDiacritics::All,
                porter: false,
            },
        ] {
            let expected = sqlite_tokens(&tokenizer, &refs);
            for (text, want) in refs.iter().zip(expected) {
                assert_eq!(tokenizer.tokens(text), want, "{tokenizer:?}");
            }
        }
    }

    /// Stems of the English words of the shared corpus (real text) and of generated
    /// suffix combinations, compared with SQLite's porter tokenizer.
    #[test]
    fn porter_stems_as_sqlite_does() {
        let mut words: Vec<String> = Vec::new();
        let stems = [
            "relat", "condit", "valen", "hesit", "digit", "conform", "radic", "differ", "vil",
            "analog", "vietnam", "predic", "oper", "feud", "decis", "hope", "call", "form",
            "sensit", "sensib", "tripl", "electr", "good", "reviv", "allow", "infer", "airlin",
            "gyroscop", "adjust", "defens", "irrit", "replac", "depend", "adopt", "homolog",
            "commun", "activ", "angular", "effect", "bowdler", "prob", "ceas", "control", "gener",
            "oscill", "b", "ab", "sky", "by", "toy", "fly", "tr", "ya", "oy", "xyz",
        ];
        let suffixes = [
            "", "s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "ings", "ation", "ational",
            "ations", "ness", "fulness", "ful", "ly", "lies", "ily", "ization", "izations", "izer",
            "ise", "ize", "ive", "iveness", "ivity", "iviti", "al", "ally", "alism", "ality",
            "ance", "ence", "ement", "ment", "ent", "ant", "ion", "tion", "sion", "ou", "ism",
            "ate", "iti", "ous", "ousli", "ously", "able", "ible", "ability", "er", "ic", "ical",
            "icate", "iciti", "ative", "alize", "bli", "bly", "logi", "logy", "e", "le", "ll", "y",
            "yy", "eli", "entli", "anci", "enci", "ator", "at", "bl", "iz",
        ];
        for stem in stems {
            for s1 in suffixes {
                words.push(format!("{stem}{s1}"));
                for s2 in ["s", "ed", "ing", "ly"] {
                    words.push(format!("{stem}{s1}{s2}"));
                }
            }
        }
        // Without the corpus this is recorded as a skip, and the made-up words still run.
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<_> = crate::prerequisites::corpus("").into_iter().collect();
        let mut budget: usize = 40 << 20;
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                if let Ok(entries) = std::fs::read_dir(&path) {
                    for entry in entries.flatten() {
                        stack.push(entry.path());
                    }
                }
                continue;
            }
            let name = path.to_string_lossy().to_string();
            if !(name.ends_with(".md")
                || name.ends_with(".txt")
                || name.ends_with(".xml")
                || name.ends_with(".html")
                || name.ends_with(".json"))
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if text.len() > budget {
                continue;
            }
            budget -= text.len();
            for token in Tokenizer::UNICODE61.tokens(&text) {
                if seen.insert(token.clone()) {
                    words.push(token);
                }
            }
        }
        let text = words.join(" ");
        let expected = sqlite_tokens(&Tokenizer::PORTER_UNICODE61, &[&text]);
        let got = Tokenizer::PORTER_UNICODE61.tokens(&text);
        assert_eq!(got.len(), expected[0].len());
        let words_lower = Tokenizer::UNICODE61.tokens(&text);
        let mismatches: Vec<String> = words_lower
            .iter()
            .zip(got.iter().zip(&expected[0]))
            .filter(|(_, (g, e))| g != e)
            .take(20)
            .map(|(w, (g, e))| format!("{w}: ours {g}, SQLite {e}"))
            .collect();
        assert!(
            mismatches.is_empty(),
            "{} words, mismatches: {mismatches:#?}",
            words.len()
        );
    }

    #[test]
    fn words_form_keeps_diacritics_and_does_not_stem() {
        assert_eq!(
            Tokenizer::WORDS.tokens("Résumés of the NAÏVE Café-owners"),
            ["résumés", "of", "the", "naïve", "café", "owners"]
        );
        assert_eq!(
            Tokenizer::PORTER_UNICODE61.tokens("Résumés of the NAÏVE Café-owners"),
            ["resum", "of", "the", "naiv", "cafe", "owner"]
        );
    }
}
