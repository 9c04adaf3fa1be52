//! 14-digit capture timestamps (`yyyyMMddHHmmss`).

use std::fmt;

/// A capture time as 14 ASCII digits. Shorter CDX timestamps are padded the way wayback
/// and pywb pad a lower bound: the missing part of `10000101000000` is appended, so month
/// and day become `01` and the time `000000`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp14([u8; 14]);

const PAD: &[u8; 14] = b"10000101000000";

impl Timestamp14 {
    /// Parses 4 to 14 digits and checks the calendar fields (month 1–12, day 1–31,
    /// hour 0–23, minute 0–59, second 0–60 to allow a leap second). The error says what is
    /// wrong.
    pub fn parse(digits: &[u8]) -> Result<Self, String> {
        let not_digit = digits
            .iter()
            .fold(0u8, |acc, &c| acc | u8::from(!c.is_ascii_digit()));
        if !(4..=14).contains(&digits.len()) || not_digit != 0 {
            return Err(describe_bad(digits, None));
        }
        // The usual 14 digits are a fixed-size copy; shorter ones are padded.
        let out = match <[u8; 14]>::try_from(digits) {
            Ok(full) => full,
            Err(_) => {
                let mut padded = *PAD;
                padded[..digits.len()].copy_from_slice(digits);
                padded
            }
        };
        let two = |i: usize| (out[i] - b'0') * 10 + (out[i + 1] - b'0');
        let in_range = (1..=12).contains(&two(4))
            && (1..=31).contains(&two(6))
            && two(8) <= 23
            && two(10) <= 59
            && two(12) <= 60;
        if in_range {
            Ok(Timestamp14(out))
        } else {
            Err(describe_bad(digits, Some(&out)))
        }
    }

    pub fn as_bytes(&self) -> &[u8; 14] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII digits are ever stored.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// Writes `yyyy-MM-ddTHH:mm:ssZ` (the `f:c` `d` format) into a fixed buffer.
    pub fn write_iso8601(&self, out: &mut [u8; 20]) {
        let d = &self.0;
        *out = [
            d[0], d[1], d[2], d[3], b'-', d[4], d[5], b'-', d[6], d[7], b'T', d[8], d[9], b':',
            d[10], d[11], b':', d[12], d[13], b'Z',
        ];
    }

    /// `yyyy-MM-ddTHH:mm:ssZ`.
    pub fn to_iso8601(&self) -> String {
        let mut buf = [0u8; 20];
        self.write_iso8601(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// The error text for a bad timestamp (kept out of the parsing path).
#[cold]
fn describe_bad(digits: &[u8], padded: Option<&[u8; 14]>) -> String {
    let shown = crate::text::excerpt(&String::from_utf8_lossy(digits));
    let Some(out) = padded else {
        return if (4..=14).contains(&digits.len()) {
            format!("timestamp {shown} is not all digits")
        } else {
            format!(
                "timestamp {shown} has {} characters: expected 4 to 14 digits",
                digits.len()
            )
        };
    };
    let two = |i: usize| u32::from(out[i] - b'0') * 10 + u32::from(out[i + 1] - b'0');
    let checks = [
        ("month", two(4), 1, 12),
        ("day", two(6), 1, 31),
        ("hour", two(8), 0, 23),
        ("minute", two(10), 0, 59),
        ("second", two(12), 0, 60),
    ];
    for (name, value, min, max) in checks {
        if !(min..=max).contains(&value) {
            return format!("timestamp {shown}: {name} {value:02} out of range {min:02}-{max:02}");
        }
    }
    format!("timestamp {shown} is not valid")
}

impl fmt::Display for Timestamp14 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Timestamp14 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp14({})", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_like_wayback() {
        let p = |s: &str| Timestamp14::parse(s.as_bytes()).map(|t| t.to_string());
        assert_eq!(p("2014").unwrap(), "20140101000000");
        assert_eq!(p("201406").unwrap(), "20140601000000");
        assert_eq!(p("20140603").unwrap(), "20140603000000");
        assert_eq!(p("2014060312").unwrap(), "20140603120000");
        assert_eq!(p("20140").unwrap(), "20140101000000");
        assert_eq!(p("20170706005950").unwrap(), "20170706005950");
        assert_eq!(p("20161231235960").unwrap(), "20161231235960");
    }

    #[test]
    fn rejects_bad_timestamps_with_reasons() {
        let e = |s: &str| Timestamp14::parse(s.as_bytes()).unwrap_err();
        assert!(e("201").contains("expected 4 to 14"));
        assert!(e("201706060059501").contains("15 characters"));
        assert!(e("2017O706").contains("not all digits"));
        assert!(e("20171306").contains("month 13"));
        assert!(e("20170700").contains("day 00"));
        assert!(e("20170701250000").contains("hour 25"));
        assert!(e("").contains("0 characters"));
    }

    #[test]
    fn formats_iso8601() {
        let t = Timestamp14::parse(b"20170706005950").unwrap();
        assert_eq!(t.to_iso8601(), "2017-07-06T00:59:50Z");
    }
}
