//! Parsing a wayback capture query (the CDX server API of pywb and IA's
//! wayback-cdx-server) into key ranges and the steps applied to the captures found.
//!
//! Semantics follow those servers where they agree, and say which one where they do not:
//! - ranges: pywb's `calc_search_range` (exact, prefix, host, domain), with the `*`
//!   shortcuts `example.com/*` (prefix) and `*.example.com` (domain);
//! - `from`/`to`: 1 to 14 digits padded character by character with `10000101000000`
//!   and `29991231235959` (warcio's `pad_timestamp`, as pywb clamps), inclusive;
//! - `filter`: IA's `[!]field:regex` (the regex must match the whole value) and
//!   `[!]~field:substring`; pywb's `=field:value` (exact) is accepted too;
//! - `limit`: negative means the last N (IA); `collapse=field[:N]` (IA);
//!   `closest=TS` sorts by distance in time (pywb: `sort=closest` is implied);
//!   `sort=reverse`; `fl` selects fields (`fields` is pywb's name for it);
//! - paging (IA): `page`/`pageSize`/`showNumPages`, a page past the last answered with
//!   an empty body; `showResumeKey`/`resumeKey` continue a query where its limit cut it.

use std::fmt;

use regex::{Regex, RegexBuilder};

use super::record::Field;

/// Why a query was refused; the message is for the person who wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError(pub String);

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for QueryError {}

fn error<T>(message: impl Into<String>) -> Result<T, QueryError> {
    Err(QueryError(message.into()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    Exact,
    Prefix,
    Host,
    Domain,
}

impl MatchType {
    pub fn parse(text: &str) -> Result<MatchType, QueryError> {
        Ok(match text {
            "exact" => MatchType::Exact,
            "prefix" => MatchType::Prefix,
            "host" => MatchType::Host,
            "domain" => MatchType::Domain,
            other => {
                return error(format!(
                    "matchType {other:?} is not one of exact, prefix, host, domain"
                ));
            }
        })
    }
}

/// Capture keys `start <= key < end` (keys are `SURT ‖ 0 ‖ timestamp ‖ 0 ‖ …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
}

/// pywb's `inc_last_char`: the smallest string above every string starting with `key`.
pub fn after_prefix(key: &[u8]) -> Vec<u8> {
    crate::store::backend::prefix_end(key).unwrap_or_else(|| vec![0xFF; key.len() + 1])
}

/// The URL and match type a query means, once the `*` shortcuts are read. A `*` that
/// contradicts an explicit match type is an error rather than a URL that never matches.
pub fn resolve_wildcards(
    url: &str,
    explicit: Option<MatchType>,
) -> Result<(String, MatchType), QueryError> {
    let url = url.trim();
    if url.is_empty() {
        return error("a url is required (e.g. url=example.com/ or url=example.com/*)");
    }
    let leading = url.strip_prefix("*.");
    let trailing = url.strip_suffix('*');
    let (bare, implied) = match (leading, trailing) {
        (Some(rest), _) => (rest.trim_end_matches('*'), Some(MatchType::Domain)),
        (None, Some(rest)) => (rest, Some(MatchType::Prefix)),
        (None, None) => (url, None),
    };
    let match_type = match (explicit, implied) {
        (None, None) => MatchType::Exact,
        (None, Some(implied)) => implied,
        (Some(explicit), None) => explicit,
        (Some(MatchType::Exact), Some(_)) => {
            return error(format!(
                "url {url:?} has a wildcard but matchType is exact: drop the * for an exact \
                 match, or drop matchType to match {}",
                if leading.is_some() {
                    "the domain"
                } else {
                    "the prefix"
                }
            ));
        }
        (Some(explicit), Some(_)) => explicit,
    };
    if bare.is_empty() {
        return error(format!("url {url:?} names no host or path"));
    }
    Ok((bare.to_string(), match_type))
}

/// The capture key range of a URL and match type (pywb's `calc_search_range` mapped onto
/// our keys, where `0x00` follows the SURT as a space does in a CDX line).
pub fn key_range(url: &str, match_type: MatchType) -> KeyRange {
    let surt = crate::surt::surt(url);
    let host = match surt.find(")/") {
        Some(i) => &surt[..i],
        None => surt.as_str(),
    };
    let (start, end) = match match_type {
        MatchType::Exact => {
            let mut start = surt.clone().into_bytes();
            start.push(0);
            let mut end = surt.clone().into_bytes();
            end.push(1);
            (start, end)
        }
        MatchType::Prefix => {
            let mut start = surt.clone();
            if url.ends_with('/') && !start.ends_with('/') {
                start.push('/');
            }
            if url.ends_with('?') && !start.ends_with('?') {
                start.push('?');
            }
            let end = after_prefix(start.as_bytes());
            (start.into_bytes(), end)
        }
        MatchType::Host => (
            format!("{host})/").into_bytes(),
            format!("{host}*").into_bytes(),
        ),
        MatchType::Domain => {
            let start = if host.contains(',') {
                format!("{host})/")
            } else {
                format!("{host},")
            };
            (start.into_bytes(), format!("{host}-").into_bytes())
        }
    };
    KeyRange { start, end }
}

const PAD_FROM: &str = "10000101000000";
const PAD_TO: &str = "29991231235959";

fn check_timestamp(name: &str, value: &str) -> Result<(), QueryError> {
    if value.is_empty() || value.len() > 14 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return error(format!(
            "{name}={value:?} is not a timestamp: give 1 to 14 digits, yyyyMMddhhmmss"
        ));
    }
    Ok(())
}

/// `2014` → `20140101000000`: the lower bound of a partial timestamp.
pub fn pad_from(value: &str) -> Result<String, QueryError> {
    check_timestamp("from", value)?;
    Ok(format!("{value}{}", &PAD_FROM[value.len()..]))
}

/// `2014` → `20141231235959`: the upper bound of a partial timestamp.
pub fn pad_to(value: &str) -> Result<String, QueryError> {
    check_timestamp("to", value)?;
    Ok(format!("{value}{}", &PAD_TO[value.len()..]))
}

/// Seconds since the epoch of a 1–14 digit timestamp, each part clamped to its range
/// and missing parts taken at their top, as warcio's `timestamp_to_sec` does for pywb's
/// closest sort. Also used for the capture timestamps themselves.
pub fn timestamp_seconds(ts: &str) -> i64 {
    use chrono::{NaiveDate, NaiveDateTime};
    let padded = if ts.len() < 6 {
        format!("{ts}{}", &"299912"[ts.len()..])
    } else {
        ts.to_string()
    };
    let part = |start: usize, end: usize, min: u32, max: u32| -> u32 {
        match padded.get(start..end).map(str::parse::<u32>) {
            Some(Ok(v)) => v.clamp(min, max),
            _ => max,
        }
    };
    let year = part(0, 4, 1900, 2999) as i32;
    let month = part(4, 6, 1, 12);
    let days_in_month = NaiveDate::from_ymd_opt(year, month, 1)
        .and_then(|d| d.checked_add_months(chrono::Months::new(1)))
        .and_then(|d| d.pred_opt())
        .map_or(28, |d| chrono::Datelike::day(&d));
    let day = part(6, 8, 1, days_in_month);
    let time = (part(8, 10, 0, 23), part(10, 12, 0, 59), part(12, 14, 0, 59));
    NaiveDate::from_ymd_opt(year, month, day)
        .and_then(|d| d.and_hms_opt(time.0, time.1, time.2))
        .map_or(0, |t: NaiveDateTime| t.and_utc().timestamp())
}

/// How many captures a query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    First(u64),
    Last(u64),
}

impl Limit {
    pub fn count(self) -> u64 {
        match self {
            Limit::First(n) | Limit::Last(n) => n,
        }
    }
}

#[derive(Debug, Clone)]
enum Test {
    Regex(Regex),
    Contains(String),
    Equals(String),
}

/// One `filter=` parameter.
#[derive(Debug, Clone)]
pub struct Filter {
    pub field: Field,
    pub negate: bool,
    test: Test,
}

/// Compiled patterns past this size are refused (a query must not make the server
/// build a huge automaton).
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const MAX_FILTERS: usize = 32;

impl Filter {
    pub fn parse(text: &str) -> Result<Filter, QueryError> {
        let (negate, rest) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (kind, rest) = match rest.as_bytes().first() {
            Some(b'~') => ('~', &rest[1..]),
            Some(b'=') => ('=', &rest[1..]),
            _ => (' ', rest),
        };
        let Some((name, expression)) = rest.split_once(':') else {
            return error(format!(
                "filter {text:?} is not [!]field:regex or [!]~field:substring"
            ));
        };
        let Some(field) = Field::parse(name) else {
            return error(format!(
                "filter {text:?} names no known field {name:?} (fields: {})",
                Field::NAMES
            ));
        };
        let test = match kind {
            '~' => Test::Contains(expression.to_string()),
            '=' => Test::Equals(expression.to_string()),
            _ => Test::Regex(
                RegexBuilder::new(&format!("^(?:{expression})$"))
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| QueryError(format!("filter {text:?}: bad regex: {e}")))?,
            ),
        };
        Ok(Filter {
            field,
            negate,
            test,
        })
    }

    /// Whether a capture whose field holds `value` passes (absent values test as `-`).
    pub fn accepts(&self, value: &str) -> bool {
        let matched = match &self.test {
            Test::Regex(re) => re.is_match(value),
            Test::Contains(s) => value.contains(s.as_str()),
            Test::Equals(s) => value == s,
        };
        matched != self.negate
    }
}

/// One `collapse=field[:N]`: of adjacent captures whose field (or its first N
/// characters) is equal, only the first is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collapse {
    pub field: Field,
    pub chars: Option<usize>,
}

impl Collapse {
    pub fn parse(text: &str) -> Result<Collapse, QueryError> {
        let (name, chars) = match text.split_once(':') {
            Some((name, n)) => match n.parse::<usize>() {
                Ok(n) if n > 0 => (name, Some(n)),
                _ => return error(format!("collapse {text:?}: N in field:N must be 1 or more")),
            },
            None => (text, None),
        };
        let Some(field) = Field::parse(name) else {
            return error(format!(
                "collapse {text:?} names no known field (fields: {})",
                Field::NAMES
            ));
        };
        Ok(Collapse { field, chars })
    }

    /// The part of a value that is compared.
    pub fn key<'a>(&self, value: &'a str) -> &'a str {
        match self.chars {
            Some(n) => match value.char_indices().nth(n) {
                Some((i, _)) => &value[..i],
                None => value,
            },
            None => value,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// Key order: URL, then time.
    Forward,
    Reverse,
    /// Nearest in time to `seconds` first; equally near keep key order.
    Closest {
        seconds: i64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// 11-column CDX lines (`output=cdx`, `text`, or none).
    Cdx,
    /// IA's JSON: an array of arrays, the first one naming the fields.
    Json,
    Cdxj,
    /// Every stored detail of each capture, one JSON object per line
    /// (`sediment captures`' own format).
    CaptureJson,
}

impl Output {
    pub fn parse(text: &str) -> Result<Output, QueryError> {
        Ok(match text {
            "" | "cdx" | "text" | "plain" => Output::Cdx,
            "json" => Output::Json,
            "cdxj" => Output::Cdxj,
            "jsonl" => Output::CaptureJson,
            other => return error(format!("output {other:?} is not one of cdx, json, cdxj")),
        })
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Output::Cdx => "text/plain; charset=utf-8",
            Output::Json => "application/json",
            Output::Cdxj => "text/x-cdxj; charset=utf-8",
            Output::CaptureJson => "application/x-ndjson",
        }
    }
}

/// Bulk paging (IA's pagination API): pages are runs of `page_size` captures of the key
/// range, taken before filters, so a page may come back with fewer lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// `showNumPages=true`: only count.
    Count {
        page_size: u64,
    },
    Page {
        page: u64,
        page_size: u64,
    },
}

/// What a server allows one query to ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryLimits {
    /// Most captures one response holds (also the default limit).
    pub max_limit: u64,
    /// Most captures held in memory at once (negative limits, closest sort).
    pub max_window: u64,
    pub default_page_size: u64,
}

impl Default for QueryLimits {
    fn default() -> Self {
        QueryLimits {
            max_limit: 100_000,
            max_window: 10_000,
            default_page_size: 5_000,
        }
    }
}

/// A parsed query.
#[derive(Debug, Clone)]
pub struct CaptureQuery {
    pub match_type: MatchType,
    pub range: KeyRange,
    /// Padded, inclusive bounds.
    pub from: Option<String>,
    pub to: Option<String>,
    pub limit: Limit,
    pub filters: Vec<Filter>,
    pub fields: Vec<Field>,
    pub collapse: Vec<Collapse>,
    pub order: Order,
    pub output: Output,
    pub paging: Option<Paging>,
    /// `resumeKey`: the capture key the previous answer ended on; this one starts after it.
    pub resume_after: Option<Vec<u8>>,
    /// `showResumeKey=true`: an answer cut short by its limit ends with the key to resume.
    pub show_resume_key: bool,
    /// Captures written whole (`output=jsonl`) name their files, never their paths: an
    /// HTTP client must not learn where the server keeps its WARCs. Local commands show
    /// the paths, which they can use.
    pub names_only: bool,
}

fn parse_bool(name: &str, value: &str) -> Result<bool, QueryError> {
    match value {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        other => error(format!("{name}={other:?} is not true or false")),
    }
}

fn parse_count(name: &str, value: &str) -> Result<u64, QueryError> {
    value
        .parse::<u64>()
        .map_err(|_| QueryError(format!("{name}={value:?} is not a whole number")))
}

impl CaptureQuery {
    /// Parses query parameters (repeated names allowed: `filter`, `collapse`). Unknown
    /// parameters are ignored, as both reference servers do.
    pub fn from_params<'a>(
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
        limits: &QueryLimits,
    ) -> Result<CaptureQuery, QueryError> {
        let mut url = None;
        let mut match_type = None;
        let (mut from, mut to, mut limit, mut closest, mut sort) = (None, None, None, None, None);
        let (mut filters, mut collapse, mut fields) = (Vec::new(), Vec::new(), Vec::new());
        let mut output = Output::Cdx;
        let (mut show_pages, mut page, mut page_size) = (false, None, None);
        let (mut resume_after, mut show_resume_key) = (None, false);
        for (name, value) in params {
            match name {
                "url" => url = Some(value),
                "matchType" => match_type = Some(MatchType::parse(value)?),
                "from" => from = Some(pad_from(value)?),
                "to" => to = Some(pad_to(value)?),
                "limit" => limit = Some(value),
                "filter" => {
                    if filters.len() == MAX_FILTERS {
                        return error(format!("at most {MAX_FILTERS} filters per query"));
                    }
                    filters.push(Filter::parse(value)?);
                }
                "collapse" => collapse.push(Collapse::parse(value)?),
                "fl" | "fields" => {
                    for name in value.split(',').filter(|n| !n.is_empty()) {
                        fields.push(Field::parse(name).ok_or_else(|| {
                            QueryError(format!(
                                "fl names no known field {name:?} (fields: {})",
                                Field::NAMES
                            ))
                        })?);
                    }
                }
                // pywb's remote index client sends `closest=` (empty) with `sort=closest`
                // when it has no time: that is a query in key order.
                "closest" if value.is_empty() => {}
                "closest" => {
                    check_timestamp("closest", value)?;
                    closest = Some(timestamp_seconds(value));
                }
                "sort" => sort = Some(value),
                "output" => output = Output::parse(value)?,
                "showNumPages" => show_pages = parse_bool(name, value)?,
                "page" => page = Some(parse_count(name, value)?),
                "pageSize" => page_size = Some(parse_count(name, value)?),
                "showResumeKey" => show_resume_key = parse_bool(name, value)?,
                "resumeKey" if value.is_empty() => {}
                "resumeKey" => resume_after = Some(parse_resume_key(value)?),
                _ => {}
            }
        }
        let Some(url) = url else {
            return error("a url parameter is required (e.g. url=example.com/)");
        };
        let (url, match_type) = resolve_wildcards(url, match_type)?;
        let windowed_order = closest.is_some();
        let limit = match limit {
            // Without a limit the closest sort keeps its largest window.
            None if windowed_order => Limit::First(limits.max_window.min(limits.max_limit)),
            None => Limit::First(limits.max_limit),
            Some(text) => match text.parse::<i64>() {
                Ok(0) | Err(_) => {
                    return error(format!(
                        "limit={text:?} is not a non-zero whole number (negative: the last N)"
                    ));
                }
                // A negative limit too large is reported by the window check below.
                Ok(n) if n > 0 && n.unsigned_abs() > limits.max_limit => {
                    return error(format!(
                        "limit={n} is above this server's maximum of {}",
                        limits.max_limit
                    ));
                }
                Ok(n) if n > 0 => Limit::First(n as u64),
                Ok(n) => Limit::Last(n.unsigned_abs()),
            },
        };
        let order = match (sort, closest) {
            (Some("closest") | None | Some(""), Some(seconds)) => Order::Closest { seconds },
            (Some("reverse"), _) => Order::Reverse,
            // pywb ignores sort=closest without a time; so do we.
            (None | Some("") | Some("closest"), None) => Order::Forward,
            (Some(other), _) => return error(format!("sort={other:?} is not closest or reverse")),
        };
        let windowed = matches!(order, Order::Closest { .. }) || matches!(limit, Limit::Last(_));
        let window = limits.max_window.min(limits.max_limit);
        if windowed && limit.count() > window {
            let (why, give) = if matches!(limit, Limit::Last(_)) {
                (
                    "the last N captures",
                    format!("a limit of at least -{window} (got -{})", limit.count()),
                )
            } else {
                (
                    "captures sorted by closeness",
                    format!("a limit of at most {window} (got {})", limit.count()),
                )
            };
            return error(format!("{why} are gathered in memory: give {give}"));
        }
        if matches!(order, Order::Closest { .. }) && matches!(limit, Limit::Last(_)) {
            return error("a negative limit cannot be combined with closest");
        }
        let page_size = page_size.unwrap_or(limits.default_page_size);
        if page_size == 0 || page_size > limits.max_limit {
            return error(format!(
                "pageSize must be between 1 and {}",
                limits.max_limit
            ));
        }
        let paging = match (show_pages, page) {
            (true, _) => Some(Paging::Count { page_size }),
            (false, Some(page)) => Some(Paging::Page { page, page_size }),
            (false, None) => None,
        };
        let range = key_range(&url, match_type);
        if fields.is_empty() {
            fields = Field::ALL.to_vec();
        }
        Ok(CaptureQuery {
            match_type,
            range,
            from,
            to,
            limit,
            filters,
            fields,
            collapse,
            order,
            output,
            paging,
            resume_after,
            show_resume_key,
            names_only: false,
        })
    }

    /// A query over a given key range instead of a URL's (a SURT prefix, the captures of
    /// one digest): the same options, `url` and `matchType` ignored.
    pub fn over_range<'a>(
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
        limits: &QueryLimits,
        range: KeyRange,
    ) -> Result<CaptureQuery, QueryError> {
        let params = params
            .into_iter()
            .filter(|(name, _)| *name != "url" && *name != "matchType")
            .chain([("url", "-"), ("matchType", "prefix")]);
        let mut query = CaptureQuery::from_params(params, limits)?;
        if query.resume_after.is_some() || query.show_resume_key {
            // The captures of such a range are not in key order: a key cannot say where
            // the next answer starts.
            return error("resumeKey and showResumeKey are for URL queries (/cdx)");
        }
        query.range = range;
        Ok(query)
    }

    /// The key range to scan: for an exact URL, `from`/`to` narrow it to the time span.
    pub fn scan_range(&self) -> KeyRange {
        let mut range = self.range.clone();
        if self.match_type == MatchType::Exact {
            let surt_len = range.start.len();
            if let Some(from) = &self.from {
                range.start.truncate(surt_len);
                range.start.extend_from_slice(from.as_bytes());
            }
            if let Some(to) = &self.to {
                // Keys continue `‖ 0 ‖ …` after the 14 digits: `to ‖ 1` is above them all.
                range.end = range.start[..surt_len].to_vec();
                range.end.extend_from_slice(to.as_bytes());
                range.end.push(1);
            }
        }
        if let Some(after) = &self.resume_after {
            if self.order == Order::Reverse {
                if *after < range.end {
                    range.end = after.clone();
                }
            } else {
                // The smallest key above `after`.
                let mut next = after.clone();
                next.push(0);
                if next > range.start {
                    range.start = next;
                }
            }
        }
        range
    }

    /// Whether a capture's timestamp is inside `from`/`to`.
    pub fn in_time(&self, timestamp: &str) -> bool {
        self.from.as_deref().is_none_or(|from| timestamp >= from)
            && self.to.as_deref().is_none_or(|to| timestamp <= to)
    }
}

/// The `resumeKey` of an answer whose last capture has the store key `key`
/// (`SURT ‖ 0 ‖ timestamp ‖ 0 ‖ tie-breaker`): `SURT timestamp HEX`, where HEX spells the
/// tie-breaker (the WARC name and offset), so captures of one URL and second are neither
/// skipped nor repeated. Form-encoded, as IA writes its keys.
pub fn resume_key(key: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut parts = key.splitn(3, |b| *b == 0);
    let (surt, ts, tail) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let mut text = format!(
        "{} {} ",
        String::from_utf8_lossy(surt),
        String::from_utf8_lossy(ts)
    );
    for byte in tail {
        let _ = write!(text, "{byte:02x}");
    }
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The store key a `resumeKey` names: ours (`SURT timestamp HEX`), or IA's form
/// (`SURT timestamp` or `SURT timestamp!`: after every capture of that second). A key that
/// arrives still form-encoded (a client that encoded the encoded key again) is decoded.
pub fn parse_resume_key(text: &str) -> Result<Vec<u8>, QueryError> {
    fn parse(text: &str) -> Option<Vec<u8>> {
        let mut parts = text.rsplitn(3, ' ');
        let last = parts.next()?;
        let (surt, ts, tail) = match (parts.next(), parts.next()) {
            (Some(ts), Some(surt)) if ts.bytes().all(|b| b.is_ascii_digit()) => {
                (surt, ts, Some(last))
            }
            _ => {
                let (surt, ts) = text.rsplit_once(' ')?;
                (surt, ts.strip_suffix('!').unwrap_or(ts), None)
            }
        };
        if surt.is_empty() || ts.is_empty() || !ts.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut key = Vec::with_capacity(text.len());
        key.extend_from_slice(surt.as_bytes());
        key.push(0);
        key.extend_from_slice(ts.as_bytes());
        key.push(0);
        match tail {
            Some(hex) => {
                if hex.len() % 2 != 0 {
                    return None;
                }
                for pair in hex.as_bytes().chunks(2) {
                    let pair = std::str::from_utf8(pair).ok()?;
                    key.push(u8::from_str_radix(pair, 16).ok()?);
                }
            }
            // Above every key of that second (a WARC name never holds the byte 0xFF).
            None => key.push(0xFF),
        }
        Some(key)
    }
    let key = if text.contains(' ') {
        parse(text)
    } else {
        None
    };
    let key = key.or_else(|| {
        let decoded = url::form_urlencoded::parse(format!("k={text}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())?;
        parse(&decoded)
    });
    key.ok_or_else(|| {
        QueryError(format!(
            "resumeKey={text:?} is not a key this server wrote (SURT timestamp …)"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(url: &str, m: MatchType) -> (String, String) {
        let r = key_range(url, m);
        (
            String::from_utf8(r.start).unwrap(),
            String::from_utf8(r.end).unwrap(),
        )
    }

    fn s(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    /// The ranges of pywb's `calc_search_range` doctests, with 0x00/0x01 where pywb's
    /// lines have a space and `!` after an exact key.
    #[test]
    fn ranges_match_pywb() {
        use MatchType::*;
        let file = "http://example.com/path/file.html";
        assert_eq!(
            range(file, Exact),
            s(
                "com,example)/path/file.html\0",
                "com,example)/path/file.html\x01"
            )
        );
        assert_eq!(
            range(file, Prefix),
            s("com,example)/path/file.html", "com,example)/path/file.htmm")
        );
        assert_eq!(
            range("http://example.com/path/", Prefix),
            s("com,example)/path/", "com,example)/path0")
        );
        assert_eq!(
            range("http://example.com/path?", Prefix),
            s("com,example)/path?", "com,example)/path@")
        );
        assert_eq!(range(file, Host), s("com,example)/", "com,example*"));
        assert_eq!(range(file, Domain), s("com,example)/", "com,example-"));
        assert_eq!(range("com", Domain), s("com,", "com-"));
    }

    #[test]
    fn wildcards() {
        use MatchType::*;
        let r = |u: &str, m| resolve_wildcards(u, m);
        assert_eq!(
            r("example.com/*", None).unwrap(),
            ("example.com/".into(), Prefix)
        );
        assert_eq!(
            r("*.example.com", None).unwrap(),
            ("example.com".into(), Domain)
        );
        assert_eq!(
            r("example.com", None).unwrap(),
            ("example.com".into(), Exact)
        );
        assert_eq!(r("example.com/*", Some(Host)).unwrap().1, Host);
        assert!(
            r("example.com/*", Some(Exact)).is_err(),
            "never silently empty"
        );
        assert!(r("*", None).is_err());
        assert!(r("  ", None).is_err());
    }

    #[test]
    fn timestamps_pad_as_pywb() {
        assert_eq!(pad_from("2014").unwrap(), "20140101000000");
        assert_eq!(pad_to("2014").unwrap(), "20141231235959");
        assert_eq!(pad_to("201402").unwrap(), "20140231235959");
        assert_eq!(pad_from("20141").unwrap(), "20141101000000");
        assert!(pad_from("2014-01").is_err());
        assert!(pad_to("201401010000001").is_err());
        assert_eq!(timestamp_seconds("20141226095010"), 1419587410);
        // warcio's doctests: missing parts at their top, out-of-range parts clamped.
        assert_eq!(
            timestamp_seconds("2014"),
            timestamp_seconds("20141231235959")
        );
        assert_eq!(timestamp_seconds("20"), timestamp_seconds("20991231235959"));
        assert_eq!(
            timestamp_seconds("20131709005601"),
            timestamp_seconds("20131209005601")
        );
        assert_eq!(
            timestamp_seconds("201402"),
            timestamp_seconds("20140228235959")
        );
    }

    #[test]
    fn filters() {
        let f = Filter::parse("status:2..").unwrap();
        assert!(
            f.accepts("200") && !f.accepts("3200"),
            "the regex matches the whole value"
        );
        let f = Filter::parse("!mime:text/.*").unwrap();
        assert!(!f.accepts("text/html") && f.accepts("image/png"));
        let f = Filter::parse("~url:news").unwrap();
        assert!(f.accepts("http://x/news.html"));
        let f = Filter::parse("!~url:news").unwrap();
        assert!(!f.accepts("http://x/news.html"));
        let f = Filter::parse("=mimetype:text/html").unwrap();
        assert!(f.accepts("text/html") && !f.accepts("text/html5"));
        assert!(Filter::parse("nofield:x").is_err());
        assert!(Filter::parse("status").is_err());
        assert!(Filter::parse("status:(").is_err());
        assert!(
            Filter::parse("url:(a{1000}){1000}").is_err(),
            "huge patterns are refused"
        );
    }

    #[test]
    fn collapse() {
        let c = Collapse::parse("timestamp:10").unwrap();
        assert_eq!(c.key("20130226010800"), "2013022601");
        assert_eq!(Collapse::parse("digest").unwrap().key("ABC"), "ABC");
        assert!(Collapse::parse("timestamp:0").is_err());
        assert!(Collapse::parse("nope").is_err());
    }

    fn parse(q: &[(&str, &str)]) -> Result<CaptureQuery, QueryError> {
        CaptureQuery::from_params(q.iter().copied(), &QueryLimits::default())
    }

    #[test]
    fn parameters() {
        let q = parse(&[
            ("url", "example.com/*"),
            ("limit", "-3"),
            ("fl", "timestamp,url"),
        ])
        .unwrap();
        assert_eq!(q.match_type, MatchType::Prefix);
        assert_eq!(q.limit, Limit::Last(3));
        assert_eq!(q.fields, vec![Field::Timestamp, Field::Original]);
        let q = parse(&[("url", "example.com"), ("closest", "2014")]).unwrap();
        assert!(
            matches!(q.order, Order::Closest { .. }),
            "closest implies the sort"
        );
        assert_eq!(
            parse(&[("url", "a.com"), ("sort", "reverse")])
                .unwrap()
                .order,
            Order::Reverse
        );
        for bad in [
            &[("limit", "5")][..],
            &[("url", "a.com"), ("matchType", "everything")],
            &[("url", "a.com"), ("limit", "100000000")],
            &[("url", "a.com"), ("limit", "0")],
            &[("url", "a.com"), ("limit", "ten")],
            &[("url", "a.com"), ("limit", "-20000")],
            &[("url", "a.com"), ("limit", "-9223372036854775808")],
            &[("url", "a.com"), ("sort", "random")],
            &[("url", "a.com"), ("output", "xml")],
            &[("url", "a.com"), ("fl", "size")],
            &[("url", "a.com"), ("from", "yesterday")],
            &[("url", "a.com"), ("pageSize", "0")],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} is refused");
        }
    }

    #[test]
    fn a_large_negative_limit_is_reported_as_such() {
        let e = parse(&[("url", "a.com"), ("limit", "-2000000000")]).unwrap_err();
        assert!(e.0.contains("at least -"), "{e}");
        assert!(!e.0.contains("above"), "{e}");
    }

    #[test]
    fn exact_time_spans_narrow_the_scan() {
        let q = parse(&[("url", "example.com/a"), ("from", "2014"), ("to", "2015")]).unwrap();
        let r = q.scan_range();
        assert_eq!(r.start, b"com,example)/a\x0020140101000000");
        assert_eq!(r.end, b"com,example)/a\x0020151231235959\x01");
        assert!(q.in_time("20150601000000") && !q.in_time("20160101000000"));
    }
}
