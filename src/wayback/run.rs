//! Running a [`CaptureQuery`] over captures in key order, writing the result as it goes.
//!
//! The steps, in the order pywb's cdx server applies them: paging (on the raw range),
//! time span, filters, collapse, then order and limit. Everything streams: only a
//! negative limit (the last N) and the closest sort hold a window of at most `limit`
//! captures.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, Write};
use std::time::Instant;

use anyhow::Result;

use super::query::{CaptureQuery, Collapse, KeyRange, Limit, Order, Output, Paging};
use super::record::{CdxRecord, Field};
use crate::capture::Capture;

/// Where captures come from: a key range, read forwards or backwards.
pub trait CaptureSource {
    fn scan<'a>(
        &'a self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = Result<Capture>> + 'a>;

    /// Number of captures in the range (for `showNumPages`).
    fn count(&self, range: &KeyRange) -> Result<u64> {
        let mut n = 0;
        for capture in self.scan(range, false) {
            capture?;
            n += 1;
        }
        Ok(n)
    }
}

/// A capture with its CDX fields, computed once for filters, collapse and output.
struct Item {
    capture: Capture,
    record: CdxRecord,
}

/// What a run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunSummary {
    /// Captures read from the store.
    pub scanned: u64,
    /// Captures written.
    pub written: u64,
}

/// Writes items in the query's output format.
struct Writer<'a> {
    out: &'a mut dyn Write,
    output: Output,
    fields: &'a [Field],
    line: Vec<u8>,
    written: u64,
    /// The store key of the last capture written, kept when a resume key may be shown.
    last_key: Option<Vec<u8>>,
    names_only: bool,
}

impl Writer<'_> {
    fn write(&mut self, item: &Item) -> io::Result<()> {
        self.line.clear();
        match self.output {
            Output::Cdx => item.record.write_plain(self.fields, &mut self.line),
            Output::Cdxj => item.record.write_cdxj(self.fields, &mut self.line),
            Output::CaptureJson if self.names_only => {
                self.line
                    .extend_from_slice(&names_only(item.capture.clone()).to_json());
            }
            Output::CaptureJson => self.line.extend_from_slice(&item.capture.to_json()),
            Output::Json => {
                if self.written == 0 {
                    self.line.push(b'[');
                    let header: Vec<String> = self
                        .fields
                        .iter()
                        .map(|f| format!("\"{}\"", f.ia_name()))
                        .collect();
                    self.line.push(b'[');
                    self.line.extend_from_slice(header.join(", ").as_bytes());
                    self.line.push(b']');
                }
                self.line.extend_from_slice(b",\n");
                item.record.write_json_row(self.fields, &mut self.line);
            }
        }
        if self.output != Output::Json {
            self.line.push(b'\n');
        }
        self.written += 1;
        if let Some(key) = &mut self.last_key {
            crate::store::keys::capture_key(&item.capture.view(), key);
        }
        self.out.write_all(&self.line)
    }

    /// Ends the answer; `resume` is the key to continue from, written as IA does: after
    /// an empty line, or as `[], ["KEY"]` at the end of the JSON array.
    fn finish(&mut self, resume: Option<&str>) -> io::Result<()> {
        match (self.output, resume) {
            (Output::Json, _) if self.written == 0 => self.out.write_all(b"[]\n"),
            (Output::Json, Some(key)) => write!(self.out, ",\n[],\n[\"{key}\"]]\n"),
            (Output::Json, None) => self.out.write_all(b"]\n"),
            (_, Some(key)) => write!(self.out, "\n{key}\n"),
            (_, None) => Ok(()),
        }
    }
}

/// A capture with only the file names of `source`, `warc` and `location` (for answers
/// to clients who have no business knowing the server's file system).
pub fn names_only(mut capture: Capture) -> Capture {
    use crate::capture::file_name;
    capture.source = file_name(&capture.source).to_string();
    for path in [&mut capture.warc, &mut capture.location]
        .into_iter()
        .flatten()
    {
        *path = file_name(path).to_string();
    }
    capture
}

/// The collapse key of an item: the compared parts of every collapsed field.
fn collapse_key(collapse: &[Collapse], record: &CdxRecord) -> Vec<String> {
    collapse
        .iter()
        .map(|c| c.key(record.shown(c.field)).to_string())
        .collect()
}

/// Runs `query` over `source`, writing to `out`.
pub fn run(
    query: &CaptureQuery,
    source: &dyn CaptureSource,
    out: &mut dyn Write,
) -> Result<RunSummary> {
    run_until(query, source, out, None)
}

/// Captures read between two looks at the clock.
const DEADLINE_EVERY: u64 = 1024;

/// [`run`], failing once `deadline` has passed (checked while reading, so a query that
/// reads much and writes little, like a closest sort over a large prefix, stops too).
pub fn run_until(
    query: &CaptureQuery,
    source: &dyn CaptureSource,
    out: &mut dyn Write,
    deadline: Option<Instant>,
) -> Result<RunSummary> {
    if let Some(Paging::Count { page_size }) = query.paging {
        let captures = source.count(&query.scan_range())?;
        let pages = captures.div_ceil(page_size).max(1);
        match query.output {
            Output::Json => writeln!(
                out,
                "{{\"blocks\": {captures}, \"pages\": {pages}, \"pageSize\": {page_size}}}"
            )?,
            _ => writeln!(out, "{pages}")?,
        }
        return Ok(RunSummary::default());
    }
    let mut writer = Writer {
        out,
        output: query.output,
        fields: &query.fields,
        line: Vec::with_capacity(512),
        written: 0,
        last_key: query.show_resume_key.then(Vec::new),
        names_only: query.names_only,
    };
    let Some(scanned) = select_and_emit(query, source, deadline, &mut writer)? else {
        return Ok(RunSummary::default());
    };
    // As IA: a key only when the limit cut the answer short (then there may be more).
    let resume = match (query.limit, &query.order, &writer.last_key) {
        (Limit::First(n), Order::Forward | Order::Reverse, Some(key)) if writer.written == n => {
            Some(super::query::resume_key(key))
        }
        _ => None,
    };
    writer.finish(resume.as_deref())?;
    Ok(RunSummary {
        scanned,
        written: writer.written,
    })
}

/// Runs `query` over `source`, giving each capture it selects, in the answer's order,
/// with its CDX fields to `visit` until it returns false. A query for the number of
/// pages (`showNumPages`) selects no captures.
pub fn for_each(
    query: &CaptureQuery,
    source: &dyn CaptureSource,
    visit: &mut dyn FnMut(Capture, CdxRecord) -> Result<bool>,
) -> Result<RunSummary> {
    if let Some(Paging::Count { .. }) = query.paging {
        return Ok(RunSummary::default());
    }
    let mut visitor = Visitor { visit, written: 0 };
    let scanned = select_and_emit(query, source, None, &mut visitor)?.unwrap_or(0);
    Ok(RunSummary {
        scanned,
        written: visitor.written,
    })
}

/// Where selected items go: the formatted answer, or a caller's visitor.
trait Sink {
    /// Takes one item; false stops the run.
    fn take(&mut self, item: Item) -> Result<bool>;
}

impl Sink for Writer<'_> {
    fn take(&mut self, item: Item) -> Result<bool> {
        self.write(&item)?;
        Ok(true)
    }
}

struct Visitor<'v> {
    visit: &'v mut dyn FnMut(Capture, CdxRecord) -> Result<bool>,
    written: u64,
}

impl Sink for Visitor<'_> {
    fn take(&mut self, item: Item) -> Result<bool> {
        self.written += 1;
        (self.visit)(item.capture, item.record)
    }
}

/// Paging, time span and filters over the scanned range, then collapse, order and
/// limit into `sink`. The number of captures scanned; `None` for a page past the last
/// (an answer with nothing at all).
fn select_and_emit(
    query: &CaptureQuery,
    source: &dyn CaptureSource,
    deadline: Option<Instant>,
    sink: &mut dyn Sink,
) -> Result<Option<u64>> {
    let range = query.scan_range();
    let reverse = query.order == Order::Reverse;
    let mut scanned = 0u64;
    let mut raw = source.scan(&range, reverse);
    if let Some(Paging::Page { page, page_size }) = query.paging {
        let skip = page.saturating_mul(page_size);
        let mut paged = raw
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(page_size as usize)
            .peekable();
        // IA numbers pages 0 to pages-1 (at least one page, maybe empty) and answers a
        // page past the last with nothing at all: no JSON brackets either, which is how
        // clients that ask for page after page (cdx-toolkit) learn to stop.
        if page > 0 && paged.peek().is_none() {
            return Ok(None);
        }
        raw = Box::new(paged);
    }
    let counter = &mut scanned;
    let selected = raw.filter_map(|capture| {
        *counter += 1;
        if let Some(deadline) = deadline
            && counter.is_multiple_of(DEADLINE_EVERY)
            && Instant::now() > deadline
        {
            return Some(Err(anyhow::anyhow!(
                "the query ran out of time after reading {counter} captures: narrow it \
                 (matchType, from/to) or page through it (page, pageSize)"
            )));
        }
        let capture = match capture {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        if !query.in_time(&capture.ts) {
            return None;
        }
        let record = CdxRecord::of(&capture);
        query
            .filters
            .iter()
            .all(|f| f.accepts(record.shown(f.field)))
            .then_some(Ok(Item { capture, record }))
    });
    emit(query, selected, reverse, sink)?;
    Ok(Some(scanned))
}

/// Collapse, order and limit over the selected items.
fn emit(
    query: &CaptureQuery,
    selected: impl Iterator<Item = Result<Item>>,
    reverse: bool,
    sink: &mut dyn Sink,
) -> Result<()> {
    let mut collapsed = Collapsed::new(&query.collapse, reverse, selected);
    match (&query.order, query.limit) {
        (Order::Closest { seconds }, limit) => {
            let exact = query.match_type == super::query::MatchType::Exact;
            for item in closest(*seconds, limit.count() as usize, exact, &mut collapsed)? {
                if !sink.take(item)? {
                    break;
                }
            }
        }
        (_, Limit::First(n)) => {
            for item in collapsed.take(n as usize) {
                if !sink.take(item?)? {
                    break;
                }
            }
        }
        (_, Limit::Last(n)) => {
            let mut window = VecDeque::with_capacity(n.min(1024) as usize);
            for item in collapsed {
                if window.len() as u64 == n {
                    window.pop_front();
                }
                window.push_back(item?);
            }
            for item in window {
                if !sink.take(item)? {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// An item in the closest window, ordered by distance, then by arrival.
struct Near {
    distance: i64,
    seq: u64,
    item: Item,
}

impl PartialEq for Near {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.distance, self.seq).cmp(&(other.distance, other.seq))
    }
}

/// The `limit` items nearest in time to `seconds`, nearest first, ties in input order
/// (pywb's `cdx_sort_closest`), kept in a heap of at most `limit`. For an exact URL the
/// input is in time order, so once the window is full and the captures are past
/// `seconds` and farther than its farthest, nothing later can enter.
fn closest(
    seconds: i64,
    limit: usize,
    input_in_time_order: bool,
    items: &mut dyn Iterator<Item = Result<Item>>,
) -> Result<Vec<Item>> {
    let mut window: BinaryHeap<Near> = BinaryHeap::with_capacity(limit.min(1024) + 1);
    for (seq, item) in items.enumerate() {
        let item = item?;
        let at = super::query::timestamp_seconds(&item.record.timestamp);
        let distance = (at - seconds).abs();
        if window.len() == limit && window.peek().is_some_and(|far| distance >= far.distance) {
            if input_in_time_order && at > seconds {
                break;
            }
            continue;
        }
        window.push(Near {
            distance,
            seq: seq as u64,
            item,
        });
        if window.len() > limit {
            window.pop();
        }
    }
    Ok(window
        .into_sorted_vec()
        .into_iter()
        .map(|n| n.item)
        .collect())
}

/// Drops items whose collapse key equals the previous item's, in forward key order.
/// Read backwards (`sort=reverse`), an item is kept when the one after it in the reversed
/// stream (the one before it in key order) has a different key, so the result is the
/// forward result reversed.
struct Collapsed<'a, I> {
    collapse: &'a [Collapse],
    reverse: bool,
    input: I,
    previous: Option<Vec<String>>,
    /// Reverse mode: the item waiting for its successor to decide.
    pending: Option<(Vec<String>, Item)>,
    failed: bool,
}

impl<'a, I: Iterator<Item = Result<Item>>> Collapsed<'a, I> {
    fn new(collapse: &'a [Collapse], reverse: bool, input: I) -> Self {
        Collapsed {
            collapse,
            reverse,
            input,
            previous: None,
            pending: None,
            failed: false,
        }
    }
}

impl<I: Iterator<Item = Result<Item>>> Iterator for Collapsed<'_, I> {
    type Item = Result<Item>;

    fn next(&mut self) -> Option<Result<Item>> {
        if self.failed {
            return None;
        }
        if self.collapse.is_empty() {
            return self.input.next();
        }
        loop {
            let item = match self.input.next() {
                Some(Ok(item)) => item,
                Some(Err(e)) => {
                    self.failed = true;
                    return Some(Err(e));
                }
                None => return self.pending.take().map(|(_, item)| Ok(item)),
            };
            let key = collapse_key(self.collapse, &item.record);
            if self.reverse {
                match self.pending.replace((key.clone(), item)) {
                    Some((pending_key, pending)) if pending_key != key => {
                        return Some(Ok(pending));
                    }
                    _ => continue,
                }
            }
            if self.previous.as_ref() == Some(&key) {
                continue;
            }
            self.previous = Some(key);
            return Some(Ok(item));
        }
    }
}

/// Captures held in memory, sorted by key: for tests and small tools.
pub struct VecSource {
    entries: Vec<(Vec<u8>, Capture)>,
}

impl VecSource {
    #[cfg(test)]
    pub fn new(captures: Vec<Capture>) -> VecSource {
        let mut entries: Vec<(Vec<u8>, Capture)> = captures
            .into_iter()
            .map(|c| {
                let mut key = Vec::new();
                crate::store::keys::capture_key(&c.view(), &mut key);
                (key, c)
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        VecSource { entries }
    }
}

impl VecSource {
    /// Keeps the given order (e.g. first-capture order of a digest's captures); every
    /// capture is inside any range that starts empty.
    pub fn in_order(captures: Vec<Capture>) -> VecSource {
        VecSource {
            entries: captures.into_iter().map(|c| (Vec::new(), c)).collect(),
        }
    }
}

impl CaptureSource for VecSource {
    fn scan<'a>(
        &'a self,
        range: &KeyRange,
        reverse: bool,
    ) -> Box<dyn Iterator<Item = Result<Capture>> + 'a> {
        let (start, end) = (range.start.clone(), range.end.clone());
        let inside = self
            .entries
            .iter()
            .filter(move |(k, _)| *k >= start && *k < end)
            .map(|(_, c)| Ok(c.clone()));
        if reverse {
            Box::new(inside.rev())
        } else {
            Box::new(inside)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wayback::query::QueryLimits;

    fn capture(url: &str, ts: &str, status: u16, digest: char) -> Capture {
        Capture {
            surt: crate::surt::surt(url),
            ts: ts.into(),
            url: url.into(),
            status: Some(status),
            content_type: Some("text/html".into()),
            digest: crate::key::Sha1Key::parse(&digest.to_string().repeat(32)).ok(),
            warc: Some("a.warc.gz".into()),
            offset: Some(ts[8..].parse().unwrap()),
            c_size: Some(10),
            source: "a.warc.gz".into(),
            ..Default::default()
        }
    }

    fn source() -> VecSource {
        VecSource::new(vec![
            capture("http://example.com/", "20200101000000", 200, 'A'),
            capture("http://example.com/", "20200201000000", 200, 'A'),
            capture("http://example.com/", "20200301000000", 404, 'B'),
            capture("http://example.com/", "20210101000000", 200, 'C'),
            capture("http://example.com/a", "20200101000000", 200, 'D'),
            capture("http://example.com/b", "20200101000000", 200, 'D'),
            capture("http://www.sub.example.com/", "20200101000000", 200, 'E'),
            capture("http://example.org/", "20200101000000", 200, 'F'),
        ])
    }

    fn query(params: &[(&str, &str)]) -> Vec<String> {
        let mut params = params.to_vec();
        params.push(("fl", "urlkey,timestamp"));
        let q = CaptureQuery::from_params(params.iter().copied(), &QueryLimits::default()).unwrap();
        let mut out = Vec::new();
        run(&q, &source(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn match_types() {
        assert_eq!(query(&[("url", "example.com")]).len(), 4);
        assert_eq!(query(&[("url", "example.com/*")]).len(), 6);
        assert_eq!(
            query(&[("url", "example.com"), ("matchType", "host")]).len(),
            6
        );
        assert_eq!(query(&[("url", "*.example.com")]).len(), 7);
        assert_eq!(
            query(&[("url", "example.com/a")]),
            ["com,example)/a 20200101000000"]
        );
    }

    #[test]
    fn time_limit_and_order() {
        let url = ("url", "example.com");
        assert_eq!(query(&[url, ("from", "2020"), ("to", "202002")]).len(), 2);
        assert_eq!(
            query(&[url, ("limit", "-1")]),
            ["com,example)/ 20210101000000"]
        );
        assert_eq!(
            query(&[url, ("sort", "reverse"), ("limit", "2")]),
            [
                "com,example)/ 20210101000000",
                "com,example)/ 20200301000000"
            ]
        );
        assert_eq!(
            query(&[url, ("closest", "20200210"), ("limit", "2")]),
            [
                "com,example)/ 20200201000000",
                "com,example)/ 20200301000000"
            ]
        );
    }

    #[test]
    fn filters_and_collapse() {
        let url = ("url", "example.com");
        assert_eq!(query(&[url, ("filter", "!status:200")]).len(), 1);
        assert_eq!(query(&[url, ("filter", "~digest:AAA")]).len(), 2);
        assert_eq!(query(&[url, ("collapse", "digest")]).len(), 3);
        assert_eq!(query(&[url, ("collapse", "timestamp:4")]).len(), 2);
        // Reversed, collapse keeps the same captures as forward (the first of each run).
        assert_eq!(
            query(&[url, ("collapse", "timestamp:4"), ("sort", "reverse")]),
            [
                "com,example)/ 20210101000000",
                "com,example)/ 20200101000000"
            ]
        );
        assert_eq!(
            query(&[("url", "example.com/*"), ("collapse", "urlkey")]).len(),
            3
        );
    }

    #[test]
    fn closest_ties_keep_key_order() {
        let source = VecSource::new(vec![
            capture("http://example.com/", "20200101000000", 200, 'A'),
            capture("http://example.com/", "20200103000000", 200, 'B'),
        ]);
        let q = CaptureQuery::from_params(
            [
                ("url", "example.com"),
                ("closest", "20200102000000"),
                ("fl", "timestamp"),
            ],
            &QueryLimits::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        run(&q, &source, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "20200101000000\n20200103000000\n"
        );
    }

    #[test]
    fn a_deadline_stops_long_reads() {
        let captures = (0..3000)
            .map(|i| {
                capture(
                    &format!("http://example.com/{i}"),
                    "20200101000000",
                    200,
                    'A',
                )
            })
            .collect();
        let q = CaptureQuery::from_params(
            [("url", "example.com/*"), ("filter", "status:404")],
            &QueryLimits::default(),
        )
        .unwrap();
        let error = run_until(
            &q,
            &VecSource::new(captures),
            &mut Vec::new(),
            Some(Instant::now()),
        )
        .unwrap_err();
        assert!(error.to_string().contains("ran out of time"), "{error}");
    }

    #[test]
    fn paging_and_json() {
        let q = |p: &[(&str, &str)]| {
            let q = CaptureQuery::from_params(p.iter().copied(), &QueryLimits::default()).unwrap();
            let mut out = Vec::new();
            run(&q, &source(), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let url = ("url", "*.example.com");
        assert_eq!(
            q(&[url, ("showNumPages", "true"), ("pageSize", "3")]),
            "3\n"
        );
        assert_eq!(
            q(&[url, ("page", "2"), ("pageSize", "3")]).lines().count(),
            1
        );
        let json = q(&[
            url,
            ("output", "json"),
            ("fl", "timestamp,statuscode"),
            ("limit", "2"),
        ]);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value,
            serde_json::json!([
                ["timestamp", "statuscode"],
                ["20200101000000", "200"],
                ["20200201000000", "200"]
            ])
        );
        assert_eq!(q(&[("url", "nothing.example"), ("output", "json")]), "[]\n");
    }

    fn answer(source: &VecSource, params: &[(&str, &str)]) -> String {
        let q = CaptureQuery::from_params(params.iter().copied(), &QueryLimits::default())
            .unwrap_or_else(|e| panic!("{params:?}: {e}"));
        let mut out = Vec::new();
        run(&q, source, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_page_past_the_last_is_an_empty_body() {
        let url = ("url", "*.example.com");
        let size = ("pageSize", "3");
        for output in ["json", "cdx"] {
            let output = ("output", output);
            assert_ne!(answer(&source(), &[url, size, output, ("page", "2")]), "");
            assert_eq!(answer(&source(), &[url, size, output, ("page", "3")]), "");
            assert_eq!(answer(&source(), &[url, size, output, ("page", "99")]), "");
        }
        // There is always a page 0, empty or not, as IA counts at least one page.
        let nothing = ("url", "nothing.example");
        assert_eq!(
            answer(&source(), &[nothing, ("output", "json"), ("page", "0")]),
            "[]\n"
        );
        assert_eq!(answer(&source(), &[nothing, ("page", "1")]), "");
    }

    /// Follows resume keys until an answer comes without one; every line seen.
    fn resumed(source: &VecSource, params: &[(&str, &str)], json: bool) -> Vec<String> {
        let mut seen = Vec::new();
        let mut key: Option<String> = None;
        for _ in 0..100 {
            let mut p = params.to_vec();
            p.push(("showResumeKey", "true"));
            p.push(("fl", "urlkey,timestamp,offset"));
            if json {
                p.push(("output", "json"));
            }
            // Sent as a client would: the written (form-encoded) key, decoded once.
            let decoded: Option<String> = key.as_ref().map(|k| {
                url::form_urlencoded::parse(format!("k={k}").as_bytes())
                    .next()
                    .unwrap()
                    .1
                    .into_owned()
            });
            if let Some(k) = &decoded {
                p.push(("resumeKey", k));
            }
            let text = answer(source, &p);
            key = None;
            if json {
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                let rows = value.as_array().unwrap();
                let mut rows: Vec<_> = rows.iter().skip(1).collect();
                if rows.len() >= 2 && rows[rows.len() - 2].as_array().unwrap().is_empty() {
                    key = Some(rows.pop().unwrap()[0].as_str().unwrap().to_string());
                    rows.pop();
                }
                seen.extend(rows.iter().map(|r| r.to_string()));
            } else {
                let mut lines: Vec<&str> = text.lines().collect();
                if let Some(i) = lines.iter().position(|l| l.is_empty()) {
                    key = Some(lines[i + 1].to_string());
                    lines.truncate(i);
                }
                seen.extend(lines.iter().map(|l| l.to_string()));
            }
            if key.is_none() {
                return seen;
            }
        }
        panic!("resume keys never ended");
    }

    #[test]
    fn resume_keys_continue_where_the_limit_stopped() {
        // One URL and second twice (two records): neither skipped nor repeated.
        let mut twin = capture("http://example.com/", "20200201000000", 200, 'B');
        twin.offset = Some(7);
        let captures = vec![twin];
        let source = VecSource::new(
            captures
                .into_iter()
                .chain(source().entries.into_iter().map(|(_, c)| c))
                .collect(),
        );
        for json in [false, true] {
            for params in [
                &[("url", "*.example.com")][..],
                &[("url", "*.example.com"), ("sort", "reverse")],
                &[("url", "example.com/"), ("from", "202002")],
            ] {
                let whole = resumed(&source, params, json);
                for limit in ["1", "2", "3"] {
                    let mut p = params.to_vec();
                    p.push(("limit", limit));
                    assert_eq!(resumed(&source, &p, json), whole, "{p:?} json={json}");
                }
            }
        }
        assert_eq!(
            resumed(&source, &[("url", "*.example.com")], false).len(),
            8,
            "every capture, the twins too"
        );
        // IA's form of a key (`SURT timestamp`): after every capture of that second.
        let after = answer(
            &source,
            &[
                ("url", "example.com/"),
                ("fl", "timestamp"),
                ("resumeKey", "com,example)/ 20200201000000"),
            ],
        );
        assert_eq!(after, "20200301000000\n20210101000000\n");
        let q = CaptureQuery::from_params(
            [("url", "a.com"), ("resumeKey", "garbage")],
            &QueryLimits::default(),
        );
        assert!(q.is_err());
    }
}
