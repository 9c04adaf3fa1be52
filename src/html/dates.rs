//! Dates from `<meta>` values and URL paths, as unix seconds.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// Parses the date formats found in `article:published_time`, Dublin Core and similar meta
/// values: RFC 3339 / ISO 8601 with or without seconds, fraction or offset (`T` or a space
/// between date and time; no offset means UTC), a bare date (midnight UTC), and RFC 2822.
pub fn parse_datetime(value: &str) -> Option<i64> {
    let v = value.trim();
    if v.is_empty() || v.len() > 64 {
        return None;
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(v) {
        return Some(t.timestamp());
    }
    let spaced = v.replacen(' ', "T", 1);
    if let Ok(t) = DateTime::parse_from_rfc3339(&spaced) {
        return Some(t.timestamp());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%z"] {
        if let Ok(t) = DateTime::parse_from_str(&spaced, format) {
            return Some(t.timestamp());
        }
    }
    let naive = spaced.trim_end_matches(['Z', 'z']);
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(naive, format) {
            return Some(t.and_utc().timestamp());
        }
    }
    for format in ["%Y-%m-%d", "%Y%m%d", "%Y/%m/%d"] {
        if let Ok(d) = NaiveDate::parse_from_str(v, format) {
            return d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp());
        }
    }
    DateTime::parse_from_rfc2822(v).ok().map(|t| t.timestamp())
}

/// A publication date in a URL path, as midnight UTC: three consecutive segments
/// `/YYYY/MM/DD` (month and day with one or two digits), or a segment that starts with
/// `YYYY-MM-DD` followed by nothing or a non-digit (`/2021-03-14-title`). Years from 1990
/// to 2099 only, and the date must exist; the first match wins.
pub fn date_in_url_path(path: &str) -> Option<i64> {
    let segments: Vec<&str> = path.split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        if let Some(date) = dashed_date(segment) {
            return Some(date);
        }
        if let [y, m, d] = segments.get(i..i + 3).unwrap_or(&[]) {
            // The day segment may carry a suffix only after a dot (`14.html`).
            let d = d.split('.').next().unwrap_or("");
            if let Some(date) = ymd(y, 4, 4)
                .zip(ymd(m, 1, 2))
                .zip(ymd(d, 1, 2))
                .and_then(|((y, m), d)| date_at(y, m, d))
            {
                return Some(date);
            }
        }
    }
    None
}

fn ymd(s: &str, min: usize, max: usize) -> Option<u32> {
    (s.len() >= min && s.len() <= max && s.bytes().all(|c| c.is_ascii_digit()))
        .then(|| s.parse().ok())?
}

fn date_at(year: u32, month: u32, day: u32) -> Option<i64> {
    if !(1990..=2099).contains(&year) {
        return None;
    }
    NaiveDate::from_ymd_opt(year as i32, month, day)?
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc().timestamp())
}

fn dashed_date(segment: &str) -> Option<i64> {
    let b = segment.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' || b.get(10).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let y = ymd(segment.get(0..4)?, 4, 4)?;
    let m = ymd(segment.get(5..7)?, 2, 2)?;
    let d = ymd(segment.get(8..10)?, 2, 2)?;
    date_at(y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_formats() {
        let noon = Some(1_615_723_200); // 2021-03-14T12:00:00Z
        assert_eq!(parse_datetime("2021-03-14T12:00:00Z"), noon);
        assert_eq!(parse_datetime("2021-03-14T13:00:00+01:00"), noon);
        assert_eq!(parse_datetime("2021-03-14T13:00:00.250+0100"), noon);
        assert_eq!(parse_datetime("2021-03-14 12:00:00"), noon);
        assert_eq!(parse_datetime("2021-03-14T12:00"), noon);
        assert_eq!(parse_datetime(" 2021-03-14 "), Some(1_615_680_000));
        assert_eq!(parse_datetime("Sun, 14 Mar 2021 12:00:00 +0000"), noon);
        assert_eq!(parse_datetime("last tuesday"), None);
        assert_eq!(parse_datetime(""), None);
    }

    #[test]
    fn url_dates() {
        let day = Some(1_615_680_000); // 2021-03-14
        assert_eq!(date_in_url_path("/2021/03/14/pi-day/"), day);
        assert_eq!(date_in_url_path("/blog/2021/3/14"), day);
        assert_eq!(date_in_url_path("/2021/03/14.html"), day);
        assert_eq!(date_in_url_path("/news/2021-03-14-pi-day"), day);
        assert_eq!(date_in_url_path("/2021/02/30/"), None);
        assert_eq!(date_in_url_path("/1850/03/14/"), None);
        assert_eq!(date_in_url_path("/2021/03/"), None);
        assert_eq!(date_in_url_path("/20210314/"), None);
        assert_eq!(date_in_url_path("/id/2021-03-145"), None);
    }
}
