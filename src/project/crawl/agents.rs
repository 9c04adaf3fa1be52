//! Agents: one per crawl run (see [`crate::project::identity`] for what makes WARC files one
//! run), created when its first capture is projected and updated with every batch with the
//! time span and the User-Agent of its captures.

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use crate::capture::Capture;
use crate::project::identity::AgentResolver;
use crate::store::Store;

/// What is known of an agent in this run.
struct AgentState {
    id: i64,
    first: i64,
    last: i64,
    user_agents: HashMap<String, u64>,
    declared_user_agent: Option<String>,
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
    resolver: AgentResolver,
    /// By agent UUID.
    states: HashMap<[u8; 16], AgentState>,
}

impl Agents {
    /// The agent of a capture, inserted if the database does not know it yet.
    pub fn agent_for(
        &mut self,
        conn: &Connection,
        store: &Store,
        capture: &Capture,
        time: i64,
    ) -> Result<AgentRef> {
        let agent = self.resolver.agent_of(store, capture)?;
        if let Some(state) = self.states.get_mut(&agent.uuid) {
            state.first = state.first.min(time);
            state.last = state.last.max(time);
            if let Some(ua) = &capture.ua {
                *state.user_agents.entry(ua.clone()).or_default() += 1;
            }
            return Ok(AgentRef {
                id: state.id,
                robots_approved: agent.robots_approved,
            });
        }
        let existing: Option<i64> = conn
            .prepare_cached("SELECT agent_id FROM agent WHERE agent_uuid = ?1")?
            .query_row([&agent.uuid[..]], |r| r.get(0))
            .optional()?;
        let id = match existing {
            Some(id) => id,
            None => {
                conn.prepare_cached(
                    "INSERT INTO agent (time_started_unix_utc, time_finished_unix_utc,
                     agent_uuid, name, http_user_agent) VALUES (?1, ?1, ?2, ?3, NULL)",
                )?
                .execute(params![time, &agent.uuid[..], agent.name])?;
                conn.last_insert_rowid()
            }
        };
        let mut user_agents = HashMap::new();
        if let Some(ua) = &capture.ua {
            user_agents.insert(ua.clone(), 1);
        }
        self.states.insert(
            agent.uuid,
            AgentState {
                id,
                first: time,
                last: time,
                user_agents,
                declared_user_agent: agent.declared_user_agent.clone(),
            },
        );
        Ok(AgentRef {
            id,
            robots_approved: agent.robots_approved,
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
                .or_else(|| state.declared_user_agent.clone());
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
}
