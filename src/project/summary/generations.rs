//! Entity generations of one URL: planning them from the captures, and reconciling the plan
//! with the generations an earlier run stored.
//!
//! The rules (ARCHITECTURE.md, "Projections"), walking the captures in time order:
//! * a capture with the key of the current generation extends it (`last_seen`);
//! * a capture with another key closes the current generation at the capture's time
//!   (`confirmed_end` = the new generation's `first_seen`) and opens a new one;
//! * a 304 Not Modified extends the current generation whatever it is;
//! * a closed generation is never reopened: A → B → A gives three generations, and a
//!   closed generation's times never change because of later captures.

use super::keys::ContentKey;

/// One capture as the planner sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// Unix seconds.
    pub time: i64,
    /// `None` for "unchanged" (304): extends the current generation.
    pub key: Option<ContentKey>,
}

/// A generation as the captures say it should be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedGeneration {
    pub key: ContentKey,
    pub first_seen: i64,
    pub last_seen: i64,
    pub confirmed_end: Option<i64>,
    /// Indexes of its observations, in time order; the first one made it.
    pub captures: Vec<usize>,
}

/// Plans the generations of one URL. `observations` must be in capture order (time order,
/// ties in store order).
pub fn plan(observations: &[Observation]) -> Vec<PlannedGeneration> {
    let mut generations: Vec<PlannedGeneration> = Vec::new();
    for (index, observation) in observations.iter().enumerate() {
        if let Some(current) = generations.last_mut() {
            let same = match &observation.key {
                None => true,
                Some(key) => *key == current.key,
            };
            if same {
                current.last_seen = current.last_seen.max(observation.time);
                current.captures.push(index);
                continue;
            }
            current.confirmed_end = Some(observation.time.max(current.last_seen));
        }
        generations.push(PlannedGeneration {
            key: observation.key.clone().unwrap_or(ContentKey::Status(304)),
            first_seen: observation.time,
            last_seen: observation.time,
            confirmed_end: None,
            captures: vec![index],
        });
    }
    generations
}

/// A generation stored by an earlier run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGeneration {
    pub id: i64,
    pub key: ContentKey,
    pub first_seen: i64,
    pub last_seen: i64,
    pub confirmed_end: Option<i64>,
}

/// How a plan maps onto stored generations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reconciliation {
    /// For each planned generation, the index of the stored generation that becomes it
    /// (kept, times updated), or `None` for a new generation.
    pub kept: Vec<Option<usize>>,
    /// Stored generations no planned generation continues (to delete).
    pub dropped: Vec<usize>,
}

/// Matches stored generations to planned ones. A stored generation continues the planned
/// generation with the same key whose span contains its first capture; captures are only
/// ever added, so a stored generation is either continued, extended to earlier captures,
/// or split by a capture with other content that arrived late (then its first part
/// continues it and the rest are new).
pub fn reconcile(stored: &[StoredGeneration], planned: &[PlannedGeneration]) -> Reconciliation {
    let mut used = vec![false; stored.len()];
    let mut kept = Vec::with_capacity(planned.len());
    for p in planned {
        let found = stored.iter().enumerate().position(|(i, s)| {
            !used[i]
                && s.key == p.key
                && p.first_seen <= s.first_seen
                && s.first_seen <= p.last_seen
        });
        if let Some(i) = found {
            used[i] = true;
        }
        kept.push(found);
    }
    let dropped = (0..stored.len()).filter(|&i| !used[i]).collect();
    Reconciliation { kept, dropped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(time: i64, key: u16) -> Observation {
        Observation {
            time,
            key: Some(ContentKey::Status(key)),
        }
    }

    fn spans(plan: &[PlannedGeneration]) -> Vec<(u16, i64, i64, Option<i64>)> {
        plan.iter()
            .map(|g| {
                let ContentKey::Status(k) = g.key else {
                    panic!()
                };
                (k, g.first_seen, g.last_seen, g.confirmed_end)
            })
            .collect()
    }

    #[test]
    fn unchanged_content_is_one_generation() {
        let p = plan(&[obs(10, 1), obs(20, 1), obs(30, 1)]);
        assert_eq!(spans(&p), vec![(1, 10, 30, None)]);
        assert_eq!(p[0].captures, vec![0, 1, 2]);
    }

    #[test]
    fn a_change_closes_at_the_next_first_seen() {
        let p = plan(&[obs(10, 1), obs(20, 1), obs(30, 2), obs(40, 2)]);
        assert_eq!(spans(&p), vec![(1, 10, 20, Some(30)), (2, 30, 40, None)]);
    }

    #[test]
    fn reverting_opens_a_new_generation_and_keeps_old_end_times() {
        // The reference implementation re-attaches the third capture to the first
        // generation and overwrites its end; both are wrong.
        let p = plan(&[obs(10, 1), obs(20, 2), obs(30, 1), obs(40, 1)]);
        assert_eq!(
            spans(&p),
            vec![
                (1, 10, 10, Some(20)),
                (2, 20, 20, Some(30)),
                (1, 30, 40, None)
            ]
        );
    }

    #[test]
    fn not_modified_extends_whatever_is_current() {
        let p = plan(&[
            obs(10, 1),
            Observation {
                time: 20,
                key: None,
            },
            obs(30, 2),
        ]);
        assert_eq!(spans(&p), vec![(1, 10, 20, Some(30)), (2, 30, 30, None)]);
        let p = plan(&[Observation { time: 5, key: None }, obs(6, 1)]);
        assert_eq!(spans(&p), vec![(304, 5, 5, Some(6)), (1, 6, 6, None)]);
    }

    #[test]
    fn same_second_changes_close_without_going_backwards() {
        let p = plan(&[obs(10, 1), obs(10, 2)]);
        assert_eq!(spans(&p), vec![(1, 10, 10, Some(10)), (2, 10, 10, None)]);
    }

    fn stored(p: &[PlannedGeneration]) -> Vec<StoredGeneration> {
        p.iter()
            .enumerate()
            .map(|(i, g)| StoredGeneration {
                id: i as i64 + 100,
                key: g.key.clone(),
                first_seen: g.first_seen,
                last_seen: g.last_seen,
                confirmed_end: g.confirmed_end,
            })
            .collect()
    }

    #[test]
    fn later_captures_extend_and_close_stored_generations() {
        let before = plan(&[obs(10, 1), obs(20, 2)]);
        let after = plan(&[obs(10, 1), obs(20, 2), obs(30, 2), obs(40, 3)]);
        let r = reconcile(&stored(&before), &after);
        assert_eq!(r.kept, vec![Some(0), Some(1), None]);
        assert!(r.dropped.is_empty());
    }

    #[test]
    fn an_earlier_capture_extends_backwards_and_a_late_one_splits() {
        let before = plan(&[obs(10, 1), obs(30, 1)]);
        // an earlier capture with the same content: the generation starts earlier
        let after = plan(&[obs(5, 1), obs(10, 1), obs(30, 1)]);
        assert_eq!(reconcile(&stored(&before), &after).kept, vec![Some(0)]);
        // a capture with other content between: split, the first part keeps the row
        let after = plan(&[obs(10, 1), obs(20, 2), obs(30, 1)]);
        let r = reconcile(&stored(&before), &after);
        assert_eq!(r.kept, vec![Some(0), None, None]);
        // an earlier capture with other content: new generation before, row kept
        let after = plan(&[obs(5, 2), obs(10, 1), obs(30, 1)]);
        assert_eq!(
            reconcile(&stored(&before), &after).kept,
            vec![None, Some(0)]
        );
    }

    #[test]
    fn stored_generations_nothing_continues_are_dropped() {
        let before = plan(&[obs(10, 1)]);
        let mut s = stored(&before);
        s[0].key = ContentKey::Status(9);
        let r = reconcile(&s, &plan(&[obs(10, 1)]));
        assert_eq!(r.kept, vec![None]);
        assert_eq!(r.dropped, vec![0]);
    }
}
