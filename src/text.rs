//! Text helpers (excerpts for messages, cuts at character boundaries): the lowest
//! layer, used by parsers, reports and projections alike.

/// A piece of input text for a message: the whole text when short, else its first
/// characters and its length, so that a huge bad value never floods a terminal or a
/// report. Quoted the way `{:?}` quotes.
pub fn excerpt(text: &str) -> String {
    const SHOWN: usize = 64;
    match text.char_indices().nth(SHOWN) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…({} bytes)", &text[..cut], text.len()),
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn cut_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short() {
        assert_eq!(excerpt("abc"), "\"abc\"");
        let long = "é".repeat(1000);
        let shown = excerpt(&long);
        assert_eq!(shown, format!("{:?}…(2000 bytes)", "é".repeat(64)));
    }
}
