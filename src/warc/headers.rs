//! Header fields (`Name: value` lines) of a WARC record or an HTTP message, kept in their
//! order in one string: two allocations per header block instead of two per field.

use std::fmt;

use memchr::memchr;

use super::bytes::strip_cr;

/// Byte ranges of one field's name and value in `Headers::text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    name: (u32, u32),
    value: (u32, u32),
}

/// Ordered header fields: raw names and values, trimmed, continuation lines joined with a
/// space, bytes that are not UTF-8 replaced by U+FFFD. Names repeat when the input repeats
/// them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers {
    text: String,
    fields: Vec<Field>,
}

impl Headers {
    /// Parse `Name: value` lines up to the first empty line. Returns the headers and the
    /// number of lines without a colon (skipped).
    pub fn parse(block: &[u8]) -> (Headers, u32) {
        // The text is the block itself (checked as UTF-8 once), with joined continuation
        // values appended; fields point into it. Delimiters are ASCII, so every position
        // found below is a character boundary.
        let mut text = match std::str::from_utf8(block) {
            Ok(text) => text.to_owned(),
            Err(_) => String::from_utf8_lossy(block).into_owned(),
        };
        let mut fields: Vec<Field> = Vec::with_capacity(16);
        let mut malformed = 0;
        let original_len = text.len();
        let mut line_start = 0;
        while line_start < original_len {
            let bytes = &text.as_bytes()[..original_len];
            let line_end =
                memchr(b'\n', &bytes[line_start..]).map_or(original_len, |i| line_start + i);
            let line = strip_cr(&bytes[line_start..line_end]);
            let (start, end) = (line_start, line_start + line.len());
            line_start = line_end + 1;
            if line.is_empty() {
                break;
            }
            if (line[0] == b' ' || line[0] == b'\t') && !fields.is_empty() {
                let (a, b) = trimmed(bytes, start, end);
                if a < b
                    && let Some(last) = fields.last_mut()
                {
                    // Join: copy the value and the continuation to the end of the text.
                    let (value_start, value_end) = (last.value.0 as usize, last.value.1 as usize);
                    let mut joined = String::with_capacity(value_end - value_start + 1 + b - a);
                    joined.push_str(text.get(value_start..value_end).unwrap_or(""));
                    joined.push(' ');
                    joined.push_str(text.get(a..b).unwrap_or(""));
                    let at = text.len() as u32;
                    text.push_str(&joined);
                    last.value = (at, text.len() as u32);
                }
                continue;
            }
            match memchr(b':', line) {
                Some(colon) => {
                    let name = trimmed(bytes, start, start + colon);
                    let value = trimmed(bytes, start + colon + 1, end);
                    fields.push(Field {
                        name: (name.0 as u32, name.1 as u32),
                        value: (value.0 as u32, value.1 as u32),
                    });
                }
                None => malformed += 1,
            }
        }
        (Headers { text, fields }, malformed)
    }

    fn slice(&self, (start, end): (u32, u32)) -> &str {
        self.text.get(start as usize..end as usize).unwrap_or("")
    }

    /// Fields in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.fields
            .iter()
            .map(|f| (self.slice(f.name), self.slice(f.value)))
    }

    /// First value of a field, by case-insensitive name.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| self.slice(f.name).eq_ignore_ascii_case(name))
            .map(|f| self.slice(f.value))
    }

    /// All values of a field, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Owned copies of the fields, in order.
    pub fn to_vec(&self) -> Vec<(String, String)> {
        self.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }
}

impl<'a> IntoIterator for &'a Headers {
    type Item = (&'a str, &'a str);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a str)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// `start..end` without ASCII whitespace at either end.
fn trimmed(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && bytes[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_order() {
        let block =
            b"A: 1\r\nB:  two  \r\n  more\r\n\tand more\r\nno colon\r\na: \xff\r\n\r\nC: after";
        let (headers, malformed) = Headers::parse(block);
        assert_eq!(malformed, 1);
        assert_eq!(
            headers.to_vec(),
            vec![
                ("A".to_string(), "1".to_string()),
                ("B".to_string(), "two more and more".to_string()),
                ("a".to_string(), "\u{fffd}".to_string()),
            ]
        );
        assert_eq!(headers.get("b"), Some("two more and more"));
        assert_eq!(
            headers.get_all("A").collect::<Vec<_>>(),
            vec!["1", "\u{fffd}"]
        );
        assert_eq!(headers.len(), 3);
        assert_eq!((&headers).into_iter().count(), 3);
    }
}
