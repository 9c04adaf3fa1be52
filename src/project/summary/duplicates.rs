//! Exact duplicates: generations of different URLs that share a (non-empty) text pile.
//!
//! A generation is live from its `first_seen` until its `confirmed_end` (open generations
//! stay live). At every moment, among the live generations of one pile, the one whose URL
//! sorts first (bytewise, ties by generation id) is the original and every other live one
//! of another URL is a duplicate of it. [`duplicate_spans`] turns that into spans: one
//! `duplicate_summary` row per (subject, original) and stretch of time, its end `None`
//! while it lasts. A generation is `marked_duplicate` while it has an open span.

use std::collections::{BTreeMap, BTreeSet};

/// A generation of one text pile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub generation_id: i64,
    pub url: String,
    pub start: i64,
    /// `confirmed_end`; `None` while the generation is open.
    pub end: Option<i64>,
}

/// One duplicate_summary row.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DuplicateSpan {
    pub subject: i64,
    pub original: i64,
    pub start: i64,
    pub end: Option<i64>,
}

/// The duplicate spans of one pile's generations (any order). Runs in
/// O((n + s) log n) for n members and s emitted spans.
pub fn duplicate_spans(members: &[Member]) -> Vec<DuplicateSpan> {
    // Events per time: who leaves, who arrives. A zero-length generation (closed in the
    // second it appeared) is never live.
    let mut events: BTreeMap<i64, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (i, m) in members.iter().enumerate() {
        if m.end.is_some_and(|end| end <= m.start) {
            continue;
        }
        events.entry(m.start).or_default().1.push(i);
        if let Some(end) = m.end {
            events.entry(end).or_default().0.push(i);
        }
    }
    let order = |i: usize| (members[i].url.as_str(), members[i].generation_id, i);
    let mut live: BTreeSet<(&str, i64, usize)> = BTreeSet::new();
    // subject member index -> (original member index, start)
    let mut open: BTreeMap<usize, (usize, i64)> = BTreeMap::new();
    let mut spans = Vec::new();
    let close = |open: &mut BTreeMap<usize, (usize, i64)>,
                 spans: &mut Vec<DuplicateSpan>,
                 subject: usize,
                 at: i64| {
        if let Some((original, start)) = open.remove(&subject) {
            spans.push(DuplicateSpan {
                subject: members[subject].generation_id,
                original: members[original].generation_id,
                start,
                end: Some(at),
            });
        }
    };
    for (&time, (leaving, arriving)) in &events {
        let before = live.first().map(|&(_, _, i)| i);
        for &i in leaving {
            live.remove(&order(i));
            close(&mut open, &mut spans, i, time);
        }
        for &i in arriving {
            live.insert(order(i));
        }
        let Some(&(original_url, _, original)) = live.first() else {
            continue;
        };
        let is_subject = |i: usize| i != original && members[i].url != original_url;
        if before != Some(original) {
            // A new original: every running span ends, every other live member starts one.
            let running: Vec<usize> = open.keys().copied().collect();
            for subject in running {
                close(&mut open, &mut spans, subject, time);
            }
            for &(_, _, i) in &live {
                if is_subject(i) {
                    open.insert(i, (original, time));
                }
            }
        } else {
            for &i in arriving {
                if is_subject(i) {
                    open.insert(i, (original, time));
                }
            }
        }
    }
    for (subject, (original, start)) in open {
        spans.push(DuplicateSpan {
            subject: members[subject].generation_id,
            original: members[original].generation_id,
            start,
            end: None,
        });
    }
    spans.sort();
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: i64, url: &str, start: i64, end: Option<i64>) -> Member {
        Member {
            generation_id: id,
            url: url.into(),
            start,
            end,
        }
    }

    fn span(subject: i64, original: i64, start: i64, end: Option<i64>) -> DuplicateSpan {
        DuplicateSpan {
            subject,
            original,
            start,
            end,
        }
    }

    #[test]
    fn the_first_url_is_the_original() {
        let spans = duplicate_spans(&[m(2, "http://x/b", 10, None), m(1, "http://x/a", 10, None)]);
        assert_eq!(spans, vec![span(2, 1, 10, None)]);
    }

    #[test]
    fn spans_start_when_both_live_and_end_when_either_closes() {
        let spans = duplicate_spans(&[m(1, "a", 10, Some(50)), m(2, "b", 20, None)]);
        assert_eq!(spans, vec![span(2, 1, 20, Some(50))]);
        let spans = duplicate_spans(&[m(1, "a", 10, None), m(2, "b", 20, Some(30))]);
        assert_eq!(spans, vec![span(2, 1, 20, Some(30))]);
        // not live at the same time: no duplicate
        assert!(duplicate_spans(&[m(1, "a", 10, Some(20)), m(2, "b", 20, None)]).is_empty());
    }

    #[test]
    fn a_later_first_url_takes_over_as_original() {
        let spans = duplicate_spans(&[
            m(1, "b", 10, None),
            m(2, "c", 10, None),
            m(3, "a", 30, None),
        ]);
        assert_eq!(
            spans,
            vec![
                span(1, 3, 30, None),
                span(2, 1, 10, Some(30)),
                span(2, 3, 30, None),
            ]
        );
    }

    #[test]
    fn when_the_original_ends_the_next_url_takes_over() {
        let spans = duplicate_spans(&[
            m(1, "a", 10, Some(40)),
            m(2, "b", 10, None),
            m(3, "c", 10, None),
        ]);
        assert_eq!(
            spans,
            vec![
                span(2, 1, 10, Some(40)),
                span(3, 1, 10, Some(40)),
                span(3, 2, 40, None),
            ]
        );
    }

    #[test]
    fn generations_of_one_url_are_not_duplicates_of_each_other() {
        // the same URL with the same pile twice (A, B, A): never live together anyway
        let spans = duplicate_spans(&[m(1, "a", 10, Some(20)), m(2, "a", 30, None)]);
        assert!(spans.is_empty());
        assert!(duplicate_spans(&[m(1, "a", 10, Some(10)), m(2, "b", 10, None)]).is_empty());
    }

    #[test]
    fn input_order_does_not_matter() {
        let mut members = vec![
            m(1, "a", 10, Some(40)),
            m(2, "b", 15, None),
            m(3, "c", 5, None),
            m(4, "a", 60, None),
        ];
        let expected = duplicate_spans(&members);
        members.reverse();
        assert_eq!(duplicate_spans(&members), expected);
        assert_eq!(
            expected,
            vec![
                span(2, 1, 15, Some(40)),
                span(2, 4, 60, None),
                span(3, 1, 10, Some(40)),
                span(3, 2, 40, Some(60)),
                span(3, 4, 60, None),
            ]
        );
    }
}
