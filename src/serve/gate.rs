//! Which connections are let in, and which are closed to make room.
//!
//! A slot is held from `accept` until the connection closes. Slow clients (a byte of
//! header a second, "slowloris") hold slots without costing any work, so a full house
//! must not lock out the clients that send a request at once: when a client is at its own
//! limit, or the server at its total, the longest-open *idle* connection (no request in
//! progress: still sending its headers, or kept alive between requests) is closed to make
//! room, taken from the client holding the most. A new connection is refused (a quick
//! 503) only when every slot it could take is serving a request. So a health check is
//! answered under any number of slow connections, from any address, its own included.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;

/// One open connection.
pub struct Slot {
    id: u64,
    client: IpAddr,
    opened: Instant,
    /// Requests being answered (their bodies still being sent included).
    busy: AtomicUsize,
    /// Told when the connection is closed to make room.
    pub evicted: Notify,
}

impl Slot {
    /// Marks a request in progress until the guard is dropped.
    pub fn busy(self: &Arc<Self>) -> BusyGuard {
        self.busy.fetch_add(1, Ordering::AcqRel);
        BusyGuard(self.clone())
    }

    fn idle(&self) -> bool {
        self.busy.load(Ordering::Acquire) == 0
    }
}

pub struct BusyGuard(Arc<Slot>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

pub struct Gate {
    max_total: usize,
    max_per_client: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    open: HashMap<IpAddr, Vec<Arc<Slot>>>,
    total: usize,
    evicted: u64,
}

/// A slot, given back when dropped.
pub struct Ticket {
    gate: Arc<Gate>,
    pub slot: Arc<Slot>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.gate.release(&self.slot);
    }
}

impl Gate {
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<Gate> {
        Arc::new(Gate {
            max_total: max_total.max(1),
            max_per_client: max_per_client.max(1),
            state: Mutex::new(State::default()),
        })
    }

    /// A slot for a new connection from `client`, closing an idle one if need be; `None`
    /// when every slot it could take is busy.
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Ticket> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let own = state.open.get(&client).map_or(0, Vec::len);
        let victim = if own >= self.max_per_client {
            Some(oldest_idle(state.open.get(&client).into_iter().flatten())?)
        } else if state.total >= self.max_total {
            // From the client holding the most, so one address cannot crowd out others.
            let mut clients: Vec<&Vec<Arc<Slot>>> = state.open.values().collect();
            clients.sort_by_key(|slots| std::cmp::Reverse(slots.len()));
            Some(
                clients
                    .into_iter()
                    .find_map(|slots| oldest_idle(slots.iter()))?,
            )
        } else {
            None
        };
        if let Some(victim) = victim {
            state.remove(&victim);
            state.evicted += 1;
            victim.evicted.notify_one();
        }
        state.next_id += 1;
        let slot = Arc::new(Slot {
            id: state.next_id,
            client,
            opened: Instant::now(),
            busy: AtomicUsize::new(0),
            evicted: Notify::new(),
        });
        state.open.entry(client).or_default().push(slot.clone());
        state.total += 1;
        Some(Ticket {
            gate: self.clone(),
            slot,
        })
    }

    fn release(&self, slot: &Slot) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.remove(slot);
    }

    /// Connections open now, and closed to make room so far.
    pub fn counts(&self) -> (usize, u64) {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (state.total, state.evicted)
    }
}

impl State {
    fn remove(&mut self, slot: &Slot) {
        if let Some(slots) = self.open.get_mut(&slot.client)
            && let Some(at) = slots.iter().position(|s| s.id == slot.id)
        {
            slots.swap_remove(at);
            self.total -= 1;
            if slots.is_empty() {
                self.open.remove(&slot.client);
            }
        }
    }
}

fn oldest_idle<'a>(slots: impl Iterator<Item = &'a Arc<Slot>>) -> Option<Arc<Slot>> {
    slots
        .filter(|s| s.idle())
        .min_by_key(|s| (s.opened, s.id))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn idle_connections_make_room_and_busy_ones_do_not() {
        let gate = Gate::new(4, 2);
        let a1 = gate.admit(ip(1)).unwrap();
        let a2 = gate.admit(ip(1)).unwrap();
        // Client 1 is at its limit: its oldest idle connection goes.
        let a3 = gate.admit(ip(1)).unwrap();
        assert_eq!(gate.counts(), (2, 1));
        drop(a1); // already gone: dropping it frees nothing twice
        assert_eq!(gate.counts(), (2, 1));
        // Both busy: the next one from client 1 is refused.
        let (b2, b3) = (a2.slot.busy(), a3.slot.busy());
        assert!(gate.admit(ip(1)).is_none());
        // Others still get in, up to the total.
        let _c1 = gate.admit(ip(2)).unwrap();
        let _c2 = gate.admit(ip(3)).unwrap();
        assert_eq!(gate.counts(), (4, 1));
        // Full: client 1 holds the most but only busy ones, so an idle one of another goes.
        let _d = gate.admit(ip(4)).unwrap();
        assert_eq!(gate.counts(), (4, 2));
        // Idle again, client 1's connections are the first to go.
        drop((b2, b3));
        let _e = gate.admit(ip(5)).unwrap();
        assert_eq!(gate.counts(), (4, 3));
        assert_eq!(gate.state.lock().unwrap().open[&ip(1)].len(), 1);
        drop((a2, a3));
        assert_eq!(gate.counts().0, 3);
    }
}
