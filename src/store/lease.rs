//! Deriving rows on a shared backend, where several processes import into one table:
//! one deriver at a time, under a lease kept in the metadata space.
//!
//! A lease names its owner, when it expires, and the last cell timestamp a derivation
//! used; the next owner stamps its rows later than that, so whatever order derivations
//! finish in, the newest version of a row is the one derived from the most captures.
//! Leases are taken and renewed with conditional writes (Bigtable's CheckAndMutateRow),
//! so two processes never both believe they hold one; a lease whose owner died expires.

use std::time::Duration;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::Store;
use super::backend::Space;
use super::captures::{DerivedColumns, MaterializeStats, derive_and_unmark};
use super::clock::now_millis;
use super::keys::writer_token;
use crate::key::Sha1Key;

const LEASE_KEY: &[u8] = b"lease/derive";
/// How long a lease lasts without renewal.
const LEASE_MS: u64 = 30_000;
/// Renewed after this many digests (or when half of it is gone).
const RENEW_EVERY: u64 = 200;
/// Marks handled per scan of the work list, so the scan does not outlive the lease.
const MARKS_PER_ROUND: usize = 10_000;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Lease {
    owner: String,
    expires_ms: u64,
    last_ts: u64,
}

impl Lease {
    fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The lease held by this process.
struct Held {
    lease: Lease,
    bytes: Vec<u8>,
}

fn acquire(store: &Store, owner: &str) -> Result<Held> {
    let mut waiting_since: Option<std::time::Instant> = None;
    loop {
        let current = store.backend().get(Space::Meta, LEASE_KEY)?;
        let parsed: Option<Lease> = current
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok());
        let now = now_millis();
        let free = parsed
            .as_ref()
            .is_none_or(|l| l.expires_ms <= now || l.owner == owner);
        if free {
            let last_ts = parsed.as_ref().map_or(0, |l| l.last_ts);
            let lease = Lease {
                owner: owner.to_string(),
                expires_ms: now + LEASE_MS,
                last_ts: last_ts.max(now.saturating_sub(1)) + 1,
            };
            let bytes = lease.bytes();
            if store.backend().check_and_set(
                Space::Meta,
                LEASE_KEY,
                current.as_deref(),
                Some(&bytes),
            )? {
                if let Some(since) = waiting_since {
                    crate::diag!(
                        "sediment: took the lease after waiting {:.1} s; deriving rows",
                        since.elapsed().as_secs_f64()
                    );
                }
                return Ok(Held { lease, bytes });
            }
            continue;
        }
        if waiting_since.is_none() {
            if let Some(l) = &parsed {
                crate::diag!("{}", wait_message(&store.describe(), l, now));
            }
            waiting_since = Some(std::time::Instant::now());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What a writer says once when another holds the lease: who, until when, how long.
fn wait_message(store: &str, lease: &Lease, now_ms: u64) -> String {
    let left = lease.expires_ms.saturating_sub(now_ms);
    let until =
        chrono::DateTime::from_timestamp_millis(lease.expires_ms.min(i64::MAX as u64) as i64)
            .map_or_else(String::new, |t| {
                format!(" at {}", t.format("%Y-%m-%d %H:%M:%S UTC"))
            });
    format!(
        "sediment: waiting for the lease on deriving rows of {store}, held by {}: it expires \
         in {:.1} s{until} (up to {} s if its holder is alive and renews it; if the holder \
         was killed, this writer takes the lease over when it expires)",
        lease.owner,
        left as f64 / 1000.0,
        LEASE_MS / 1000,
    )
}

fn renew(store: &Store, held: &mut Held) -> Result<()> {
    let mut lease = held.lease.clone();
    lease.expires_ms = now_millis() + LEASE_MS;
    let bytes = lease.bytes();
    if !store
        .backend()
        .check_and_set(Space::Meta, LEASE_KEY, Some(&held.bytes), Some(&bytes))?
    {
        bail!(
            "lost the lease for deriving rows of {} (another process took it after it \
             expired); run the command again to finish",
            store.describe()
        );
    }
    *held = Held { lease, bytes };
    Ok(())
}

fn release(store: &Store, held: &Held) -> Result<()> {
    // Keep the last timestamp for the next owner: an expired lease is free to take.
    let mut lease = held.lease.clone();
    lease.expires_ms = 0;
    store.backend().check_and_set(
        Space::Meta,
        LEASE_KEY,
        Some(&held.bytes),
        Some(&lease.bytes()),
    )?;
    Ok(())
}

/// Derives rows until no mark this writer made is left (see
/// [`super::materialize::materialize_dirty`]).
pub fn materialize_shared(store: &Store, ts: u64) -> Result<MaterializeStats> {
    let token = writer_token(ts);
    let owner = String::from_utf8_lossy(&token).into_owned();
    let columns = DerivedColumns::resolve(store)?;
    let mut stats = MaterializeStats::default();
    loop {
        let mut held = acquire(store, &owner)?;
        let mut marks: Vec<(Sha1Key, Vec<u8>)> = Vec::new();
        store.scan_prefix(Space::Dirty, &[], &mut |key, value| {
            if let Some(digest) = Sha1Key::from_slice(key) {
                marks.push((digest, value.to_vec()));
            }
            Ok(marks.len() < MARKS_PER_ROUND)
        })?;
        let row_ts = held.lease.last_ts;
        for (i, (digest, mark)) in marks.iter().enumerate() {
            if i as u64 % RENEW_EVERY == RENEW_EVERY - 1
                || held.lease.expires_ms < now_millis() + LEASE_MS / 2
            {
                renew(store, &mut held)?;
            }
            derive_and_unmark(store, &columns, digest, mark, row_ts, &mut stats)?;
        }
        release(store, &held)?;
        let mut mine_left = false;
        store.scan_prefix(Space::Dirty, &[], &mut |_, value| {
            mine_left = value
                .strip_prefix(token.as_slice())
                .is_some_and(|rest| rest.starts_with(b"#"));
            Ok(!mine_left)
        })?;
        if !mine_left {
            return Ok(stats);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_says_who_holds_the_lease_and_for_how_long() {
        let lease = Lease {
            owner: "host-1234-1700000000000".to_string(),
            expires_ms: 1_700_000_030_000,
            last_ts: 1,
        };
        let message = wait_message("bigtable://p/i/t", &lease, 1_700_000_001_500);
        assert!(
            message.contains("held by host-1234-1700000000000"),
            "{message}"
        );
        assert!(message.contains("expires in 28.5 s"), "{message}");
        assert!(message.contains("at 2023-11-14 22:13:50 UTC"), "{message}");
        assert!(message.contains("bigtable://p/i/t"), "{message}");
    }
}
