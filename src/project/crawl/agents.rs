//! Agents: one per crawl source (a WARC file, described by its warcinfo record, or a CDX
//! file), created when its first capture is projected and updated with every batch with
//! the time span and the User-Agent of its captures.

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use super::values::uuid_v5;
use crate::capture::{Capture, Origin, file_name};
use crate::store::Store;

/// Where a capture came from, as an agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceKey {
    /// "warc" or "cdx".
    pub kind: &'static str,
    /// The file name, without directory.
    pub file: String,
}

impl SourceKey {
    pub fn of(capture: &Capture) -> SourceKey {
        SourceKey {
            kind: match capture.origin {
                Origin::Warc => "warc",
                Origin::Cdx => "cdx",
            },
            file: file_name(&capture.source).to_string(),
        }
    }
}

/// What is known of an agent in this run.
struct AgentState {
    id: i64,
    first: i64,
    last: i64,
    user_agents: HashMap<String, u64>,
    fallback_user_agent: Option<String>,
    robots_approved: bool,
}

/// What a capture needs of its agent.
#[derive(Debug, Clone, Copy)]
pub struct AgentRef {
    pub id: i64,
    /// The value of request.robotstxt_approved for its captures.
    pub robots_approved: bool,
}

#[derive(Default)]
pub struct Agents {
    states: HashMap<SourceKey, AgentState>,
}

impl Agents {
    /// The agent of a capture, inserted if the database does not know it yet.
    pub fn agent_for(
        &mut self,
        conn: &Connection,
        store: &Store,
        namespace: &[u8; 16],
        capture: &Capture,
        time: i64,
    ) -> Result<AgentRef> {
        let key = SourceKey::of(capture);
        if let Some(state) = self.states.get_mut(&key) {
            state.first = state.first.min(time);
            state.last = state.last.max(time);
            if let Some(ua) = &capture.ua {
                *state.user_agents.entry(ua.clone()).or_default() += 1;
            }
            return Ok(AgentRef {
                id: state.id,
                robots_approved: state.robots_approved,
            });
        }
        let info = if key.kind == "warc" {
            store.warcinfo(&key.file)?
        } else {
            None
        };
        let field = |name: &str| {
            info.as_ref().and_then(|i| {
                i.fields
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        let robots_approved = !field("robots").is_some_and(|r| r.eq_ignore_ascii_case("ignore"));
        let name = agent_name(
            &key,
            info.as_ref().and_then(|i| i.software.as_deref()),
            info.as_ref().and_then(|i| i.operator.as_deref()),
        );
        let uuid = uuid_v5(
            namespace,
            format!("agent\0{}\0{}", key.kind, key.file).as_bytes(),
        );
        let existing: Option<i64> = conn
            .prepare_cached("SELECT agent_id FROM agent WHERE agent_uuid = ?1")?
            .query_row([&uuid[..]], |r| r.get(0))
            .optional()?;
        let id = match existing {
            Some(id) => id,
            None => {
                conn.prepare_cached(
                    "INSERT INTO agent (time_started_unix_utc, time_finished_unix_utc,
                     agent_uuid, name, http_user_agent) VALUES (?1, ?1, ?2, ?3, NULL)",
                )?
                .execute(params![time, &uuid[..], name])?;
                conn.last_insert_rowid()
            }
        };
        let mut user_agents = HashMap::new();
        if let Some(ua) = &capture.ua {
            user_agents.insert(ua.clone(), 1);
        }
        self.states.insert(
            key,
            AgentState {
                id,
                first: time,
                last: time,
                user_agents,
                fallback_user_agent: field("http-header-user-agent"),
                robots_approved,
            },
        );
        Ok(AgentRef {
            id,
            robots_approved,
        })
    }

    /// Writes the time spans and User-Agents gathered so far in this run (called in every
    /// batch's transaction, so an interrupted run leaves its agents consistent with the
    /// captures it wrote).
    pub fn flush(&self, conn: &Connection) -> Result<()> {
        for state in self.states.values() {
            // The most frequent User-Agent, ties to the smallest, for a stable answer.
            let user_agent = state
                .user_agents
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(ua, _)| ua.clone())
                .or_else(|| state.fallback_user_agent.clone());
            conn.prepare_cached(
                "UPDATE agent SET
                    time_started_unix_utc = MIN(time_started_unix_utc, ?2),
                    time_finished_unix_utc = MAX(COALESCE(time_finished_unix_utc, ?3), ?3),
                    http_user_agent = COALESCE(http_user_agent, ?4)
                 WHERE agent_id = ?1",
            )?
            .execute(params![state.id, state.first, state.last, user_agent])?;
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

/// `Wget/1.21.3 (linux-gnu); operator: Sediment fixture crawler; warc: crawl1.warc.gz`, or
/// `cdx: crawl.cdx` for a CDX file.
pub fn agent_name(key: &SourceKey, software: Option<&str>, operator: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(s) = software.map(str::trim).filter(|s| !s.is_empty()) {
        parts.push(s.to_string());
    }
    if let Some(o) = operator.map(str::trim).filter(|o| !o.is_empty()) {
        parts.push(format!("operator: {o}"));
    }
    parts.push(format!("{}: {}", key.kind, key.file));
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let warc = SourceKey {
            kind: "warc",
            file: "crawl1.warc.gz".into(),
        };
        assert_eq!(
            agent_name(
                &warc,
                Some("Wget/1.21.3 (linux-gnu)"),
                Some("Sediment fixture crawler")
            ),
            "Wget/1.21.3 (linux-gnu); operator: Sediment fixture crawler; warc: crawl1.warc.gz"
        );
        let cdx = SourceKey {
            kind: "cdx",
            file: "crawl.cdx".into(),
        };
        assert_eq!(agent_name(&cdx, None, Some(" ")), "cdx: crawl.cdx");
        let capture = Capture {
            source: "/data/x/crawl.cdx".into(),
            ..Default::default()
        };
        assert_eq!(SourceKey::of(&capture), cdx);
    }
}
