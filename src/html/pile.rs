//! The six text-pile fields as they are filled: white space collapsed, separators between
//! blocks, a size cap, and the digest over the finished fields.

use super::TextPile;

/// The six pile fields, in digest order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Text = 0,
    Secondary = 1,
    BigHeadlines = 2,
    SmallHeadlines = 3,
    Code = 4,
    Quote = 5,
}

impl Field {
    /// Headlines beat code, code beats quotes.
    pub(super) fn rank(self) -> u8 {
        match self {
            Field::BigHeadlines | Field::SmallHeadlines => 3,
            Field::Code => 2,
            Field::Quote => 1,
            Field::Text | Field::Secondary => 0,
        }
    }
}

/// What separates the text before an element boundary from the text after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Sep {
    None = 0,
    Space = 1,
    Newline = 2,
}

/// Collects text with whitespace collapsed, separators between blocks, an optional size cap.
pub(super) struct FieldText {
    pub(super) out: String,
    pub(super) pending: Sep,
    pub(super) limit: usize,
}

impl FieldText {
    pub(super) fn new(limit: usize) -> Self {
        FieldText {
            out: String::new(),
            pending: Sep::None,
            limit,
        }
    }

    pub(super) fn separate(&mut self, sep: Sep) {
        self.pending = self.pending.max(sep);
    }

    /// Appends text; returns the number of words it started. White space runs become a
    /// pending separator, words are copied whole (runs of words with single spaces between
    /// them in one piece).
    pub(super) fn push(&mut self, text: &str, pre: bool) -> u64 {
        if self.out.len() >= self.limit {
            // Full: nothing more can be added (the leading text fills after 4 KiB).
            return 0;
        }
        let mut words = 0;
        let mut rest = text;
        loop {
            let word_start = whitespace_len(rest);
            if word_start > 0 {
                let newline = pre && rest.as_bytes()[..word_start].contains(&b'\n');
                self.separate(if newline { Sep::Newline } else { Sep::Space });
            }
            rest = &rest[word_start..];
            if rest.is_empty() {
                return words;
            }
            let word_end = word_len(rest);
            let word = &rest[..word_end];
            rest = &rest[word_end..];
            let sep = if self.out.is_empty() {
                Sep::None
            } else {
                self.pending
            };
            let room = self
                .limit
                .saturating_sub(self.out.len() + usize::from(sep != Sep::None));
            let fits = if word.len() <= room {
                word
            } else {
                let mut cut = room;
                while !word.is_char_boundary(cut) {
                    cut -= 1;
                }
                &word[..cut]
            };
            if fits.is_empty() {
                return words;
            }
            match sep {
                Sep::None => {}
                Sep::Space => self.out.push(' '),
                Sep::Newline => self.out.push('\n'),
            }
            if sep != Sep::None || self.out.is_empty() {
                words += 1;
            }
            self.pending = Sep::None;
            self.out.push_str(fits);
            if fits.len() < word.len() {
                return words;
            }
            // The words that follow, each after a single space, are copied in one piece as
            // far as they fit: what the loop would do a word at a time.
            let b = rest.as_bytes();
            let mut end = 0;
            while end + 1 < b.len() && b[end] == b' ' {
                let next = word_len(&rest[end + 1..]);
                if next == 0 || self.out.len() + end + 1 + next > self.limit {
                    break;
                }
                end += 1 + next;
                words += 1;
            }
            self.out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
}

/// Whether the character starting at byte `i` of `s` is white space (Unicode's, as
/// `char::is_whitespace`), and its length. Works on bytes: every non-ASCII white-space
/// character starts with one of four lead bytes.
#[inline]
fn space_at(s: &str, i: usize) -> (bool, usize) {
    let b = s.as_bytes()[i];
    match b {
        b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' => (true, 1),
        0..=0x7f => (false, 1),
        0xc2 | 0xe1 | 0xe2 | 0xe3 => {
            let c = s[i..].chars().next().unwrap_or(' ');
            (c.is_whitespace(), c.len_utf8())
        }
        _ => (false, 1),
    }
}

/// Length of the white space at the start of `s`.
fn whitespace_len(s: &str) -> usize {
    run_len(s, true)
}

/// Length of the word at the start of `s` (up to white space).
fn word_len(s: &str) -> usize {
    run_len(s, false)
}

/// Length of the run at the start of `s` of white space (`space`) or of anything else.
fn run_len(s: &str, space: bool) -> usize {
    let mut i = 0;
    while i < s.len() {
        match space_at(s, i) {
            (is_space, n) if is_space == space => i += n,
            _ => break,
        }
    }
    i
}

pub(super) fn normalized(text: &str, limit: usize) -> String {
    let mut t = FieldText::new(limit);
    t.push(text, false);
    t.out
}

pub(super) fn pile_of(fields: [FieldText; 6]) -> TextPile {
    TextPile::from_fields(fields.map(|f| f.out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_text_normalizes() {
        let mut t = FieldText::new(usize::MAX);
        assert_eq!(t.push("  Hello \u{a0}\n world", false), 2);
        t.separate(Sep::Newline);
        assert_eq!(t.push("next", false), 1);
        t.separate(Sep::Space);
        t.separate(Sep::Space);
        assert_eq!(t.push("x", false), 1);
        t.separate(Sep::Newline);
        assert_eq!(t.out, "Hello world\nnext x");
    }

    #[test]
    fn field_text_limit_respects_char_boundaries() {
        let mut t = FieldText::new(5);
        t.push("ab cdé", false);
        assert_eq!(t.out, "ab cd");
        let mut t = FieldText::new(6);
        t.push("ab cdé", false);
        assert_eq!(t.out, "ab cd");
        let mut t = FieldText::new(7);
        t.push("ab cdé", false);
        assert_eq!(t.out, "ab cdé");
    }

    #[test]
    fn byte_level_white_space_is_unicode_white_space() {
        // Every character of the first three planes' white-space neighbourhoods, each alone
        // and between words.
        for code in (0..0x3100u32).chain(0xfeff..0xff00) {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let alone = c.to_string();
            let expected = if c.is_whitespace() { alone.len() } else { 0 };
            assert_eq!(whitespace_len(&alone), expected, "U+{code:04X}");
            let word = format!("x{c}y");
            let expected = if c.is_whitespace() { 1 } else { word.len() };
            assert_eq!(word_len(&word), expected, "U+{code:04X}");
        }
    }

    #[test]
    fn runs_of_words_are_cut_where_single_words_would_be() {
        let text = "alpha beta  gamma delta\tepsilon zeta eta theta";
        for limit in 0..text.len() + 2 {
            let mut whole = FieldText::new(limit);
            let words = whole.push(text, false);
            // The same text a word at a time (each push starts with the separator).
            let mut single = FieldText::new(limit);
            let mut single_words = 0;
            for (i, word) in text.split_whitespace().enumerate() {
                let piece = if i == 0 {
                    word.to_string()
                } else {
                    format!(" {word}")
                };
                single_words += single.push(&piece, false);
            }
            assert_eq!(whole.out, single.out, "limit {limit}");
            assert_eq!(words, single_words, "limit {limit}");
        }
    }
}
