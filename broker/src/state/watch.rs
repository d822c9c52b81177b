//! What `agent-intercom watch` reads ([`crate::watch`]): the snapshot of the sessions, the open
//! asks, the offline queue and the broker, and the traffic counters behind its rates.
//!
//! Scopes stay inside: each session's scope is only a key that picks its group's label.

use std::collections::HashMap;
use std::time::Instant;

use agent_intercom_core::asks::AskState;
use serde_json::{Map, Value, json};

use super::State;
use super::sessions::Entry;
use crate::store::Store;
use crate::watch::{
    MAX_LIST_BYTES, MAX_ROWS, SNAPSHOT_VERSION, TRAFFIC_INTERVAL_MS, TRAFFIC_INTERVALS,
    UNSCOPED_LABEL, clip, scope_label, short_id,
};

const N: u64 = TRAFFIC_INTERVALS as u64;

/// Accepted sends and asks per interval of [`TRAFFIC_INTERVAL_MS`], over the last
/// [`TRAFFIC_INTERVALS`]: a ring of counters that a send moves forward when it lands in a new
/// interval (no timer, no allocation: two array writes on the hot path).
pub(super) struct Traffic {
    started: Instant,
    /// The interval (counted from `started`) the newest slot counts.
    head: u64,
    messages: [u32; TRAFFIC_INTERVALS],
    asks: [u32; TRAFFIC_INTERVALS],
    total_messages: u64,
    total_asks: u64,
}

impl Traffic {
    pub(super) fn new(now: Instant) -> Traffic {
        Traffic {
            started: now,
            head: 0,
            messages: [0; TRAFFIC_INTERVALS],
            asks: [0; TRAFFIC_INTERVALS],
            total_messages: 0,
            total_asks: 0,
        }
    }

    fn interval(&self, now: Instant) -> u64 {
        let ms = now.saturating_duration_since(self.started).as_millis();
        (ms / u128::from(TRAFFIC_INTERVAL_MS)) as u64
    }

    /// Counts one accepted send (an ask when it expects a reply).
    pub(super) fn record(&mut self, now: Instant, ask: bool) {
        let interval = self.interval(now);
        if interval > self.head {
            // Intervals nothing was sent in are zero; at most the whole ring is cleared.
            for step in 1..=(interval - self.head).min(N) {
                let slot = ((self.head + step) % N) as usize;
                self.messages[slot] = 0;
                self.asks[slot] = 0;
            }
            self.head = interval;
        }
        let slot = (self.head % N) as usize;
        self.messages[slot] = self.messages[slot].saturating_add(1);
        self.total_messages += 1;
        if ask {
            self.asks[slot] = self.asks[slot].saturating_add(1);
            self.total_asks += 1;
        }
    }

    /// Counts per interval, oldest first, the last one the interval `now` is in.
    fn series(&self, now: Instant, counts: &[u32; TRAFFIC_INTERVALS]) -> Vec<u32> {
        let current = self.interval(now);
        (0..N)
            .map(|k| match current.checked_sub(N - 1 - k) {
                Some(at) if at <= self.head && self.head - at < N => counts[(at % N) as usize],
                _ => 0,
            })
            .collect()
    }

    fn uptime_ms(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.started).as_millis() as u64
    }
}

/// Rows while they fit: at most [`MAX_ROWS`] and [`MAX_LIST_BYTES`] of JSON.
fn bounded(rows: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut bytes = 0;
    let mut out = Vec::new();
    for row in rows.take(MAX_ROWS) {
        bytes += row.to_string().len();
        if bytes > MAX_LIST_BYTES {
            break;
        }
        out.push(row);
    }
    out
}

/// The groups of a snapshot: a label and a session count each, in the order each group's
/// oldest session registered, and the index of each scope's group. The scope is only a key here.
struct Groups<'a> {
    labels: Vec<(String, usize)>,
    index: HashMap<&'a Option<String>, usize>,
}

impl<'a> Groups<'a> {
    /// `live` in registration order.
    fn of(live: &[(&String, &'a Entry)]) -> Groups<'a> {
        let mut groups = Groups {
            labels: Vec::new(),
            index: HashMap::new(),
        };
        let mut scoped = 0;
        for (_, entry) in live {
            let at = *groups.index.entry(&entry.scope).or_insert_with(|| {
                let label = match entry.scope {
                    None => UNSCOPED_LABEL.to_string(),
                    Some(_) => {
                        scoped += 1;
                        scope_label(scoped)
                    }
                };
                groups.labels.push((label, 0));
                groups.labels.len() - 1
            });
            groups.labels[at].1 += 1;
        }
        groups
    }
}

impl State {
    /// Counts an accepted send for the traffic rates.
    pub(super) fn count_send(&mut self, ask: bool) {
        let now = self.clock.now();
        self.traffic.record(now, ask);
    }

    /// The snapshot `watch` shows (docs/watch.md has every member).
    pub(super) fn watch_snapshot(&self) -> Value {
        let now = self.clock.now();
        let now_ms = self.clock.now_ms();
        let mut live: Vec<(&String, &Entry)> = self.sessions.iter().collect();
        live.sort_by_key(|(_, e)| e.seq);
        let groups = Groups::of(&live);
        live.sort_by_key(|(_, e)| (groups.index[&e.scope], e.seq));
        let queued: HashMap<&str, (usize, usize)> = self
            .queue
            .recipients()
            .map(|(to, n, bytes)| (to, (n, bytes)))
            .collect();
        let sessions = bounded(live.iter().map(|(id, e)| {
            let queued = queued.get(id.as_str()).map_or(0, |q| q.0);
            let label = &groups.labels[groups.index[&e.scope]].0;
            self.session_row(id, e, label, queued, now_ms)
        }));
        let mut offline: Vec<(&str, usize, usize)> = queued
            .iter()
            .filter(|(id, _)| !self.sessions.contains_key(**id))
            .map(|(id, (n, bytes))| (*id, *n, *bytes))
            .collect();
        offline.sort();
        let offline_rows = bounded(offline.iter().map(|(id, n, bytes)| {
            json!({ "id": clip(id), "shortId": short_id(id), "queued": n, "queuedBytes": bytes })
        }));
        let (asks, deferred) = self.ask_rows(now_ms);
        let (queued_messages, queued_bytes) = self.queue.totals();
        json!({
            "version": SNAPSHOT_VERSION,
            "at": now_ms,
            "broker": {
                "pid": std::process::id(),
                "uptimeMs": self.traffic.uptime_ms(now),
                "storeBytes": self.store.as_ref().map_or(0, Store::bytes),
            },
            "counts": {
                "sessions": self.sessions.len(),
                "remoteSessions": self.remote_live,
                "asks": self.edges.len(),
                "deferredAsks": deferred,
                "queuedMessages": queued_messages,
                "queuedBytes": queued_bytes,
                "offlineRecipients": offline.len(),
                "pendingDeliveries": self.pending.len(),
            },
            "groups": groups
                .labels
                .iter()
                .map(|(label, n)| json!({ "label": label, "sessions": n }))
                .collect::<Vec<_>>(),
            "sessions": sessions,
            "asks": asks,
            "offline": offline_rows,
            "traffic": {
                "intervalMs": TRAFFIC_INTERVAL_MS,
                "messages": self.traffic.series(now, &self.traffic.messages),
                "asks": self.traffic.series(now, &self.traffic.asks),
                "totalMessages": self.traffic.total_messages,
                "totalAsks": self.traffic.total_asks,
            },
        })
    }

    /// The open asks, oldest first, and how many are deferred.
    fn ask_rows(&self, now_ms: i64) -> (Vec<Value>, usize) {
        let mut edges: Vec<_> = self.edges.iter().collect();
        edges.sort_by(|a, b| (a.1.created_at, a.0).cmp(&(b.1.created_at, b.0)));
        let deferred = edges
            .iter()
            .filter(|(_, e)| e.state == AskState::Deferred)
            .count();
        let rows = bounded(edges.iter().map(|((from, _), edge)| {
            json!({
                "from": self.party(from),
                "to": self.party(&edge.to),
                "ageMs": (now_ms - edge.created_at).max(0),
                "expiresInMs": (edge.expires_at - now_ms).max(0),
                "deferred": edge.state == AskState::Deferred,
            })
        }));
        (rows, deferred)
    }

    fn session_row(&self, id: &str, e: &Entry, group: &str, queued: usize, now_ms: i64) -> Value {
        let idle = e
            .last_activity
            .as_f64()
            .map_or(0, |at| (now_ms as f64 - at).max(0.0) as i64);
        let mut row = Map::new();
        row.insert("id".into(), json!(clip(id)));
        row.insert("shortId".into(), json!(short_id(id)));
        row.insert("name".into(), json!(e.name.as_deref().map(clip)));
        row.insert("group".into(), json!(group));
        row.insert("model".into(), json!(clip(&e.model)));
        row.insert("cwd".into(), json!(clip(&e.cwd)));
        row.insert("status".into(), json!(e.status.as_deref().map(clip)));
        row.insert("idleMs".into(), json!(idle));
        let origin = if e.remote.is_some() {
            "remote"
        } else {
            "local"
        };
        row.insert("origin".into(), json!(origin));
        let host = e.remote.as_ref().map(|r| clip(&r.host));
        row.insert("remoteHostId".into(), json!(host));
        row.insert("pid".into(), Value::Number(e.pid_json.clone()));
        row.insert("queued".into(), json!(queued));
        let asking = self.edges_from.get(id).copied().unwrap_or(0);
        row.insert("asking".into(), json!(asking));
        Value::Object(row)
    }

    /// One end of an ask: its id, and its name while it is connected.
    fn party(&self, id: &str) -> Value {
        let entry = self.sessions.get(id);
        json!({
            "id": clip(id),
            "shortId": short_id(id),
            "name": entry.and_then(|e| e.name.as_deref()).map(clip),
            "connected": entry.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn traffic_counts_per_interval_and_forgets_what_left_the_window() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut traffic = Traffic::new(t0);
        traffic.record(at(0), false);
        traffic.record(at(10), true);
        traffic.record(at(TRAFFIC_INTERVAL_MS + 1), false);
        let now = at(TRAFFIC_INTERVAL_MS + 2);
        let messages = traffic.series(now, &traffic.messages);
        let asks = traffic.series(now, &traffic.asks);
        assert_eq!(messages.len(), TRAFFIC_INTERVALS);
        assert_eq!(&messages[TRAFFIC_INTERVALS - 2..], &[2, 1]);
        assert_eq!(&asks[TRAFFIC_INTERVALS - 2..], &[1, 0]);
        assert_eq!(messages.iter().sum::<u32>(), 3);
        // Three intervals later with nothing sent, the counts have moved left.
        let later = at(4 * TRAFFIC_INTERVAL_MS);
        let moved = traffic.series(later, &traffic.messages);
        assert_eq!(&moved[TRAFFIC_INTERVALS - 5..], &[2, 1, 0, 0, 0]);
        // A whole window later they are gone, from the series and from the ring.
        let gone = at((N + 2) * TRAFFIC_INTERVAL_MS);
        assert!(
            traffic
                .series(gone, &traffic.messages)
                .iter()
                .all(|&n| n == 0)
        );
        traffic.record(gone, false);
        let fresh = traffic.series(gone, &traffic.messages);
        assert_eq!(fresh.iter().sum::<u32>(), 1);
        assert_eq!(fresh[TRAFFIC_INTERVALS - 1], 1);
        assert_eq!((traffic.total_messages, traffic.total_asks), (4, 1));
    }

    #[test]
    fn bounded_stops_at_the_row_and_byte_limits() {
        assert_eq!(bounded((0..MAX_ROWS + 5).map(|n| json!(n))).len(), MAX_ROWS);
        let big = "x".repeat(MAX_LIST_BYTES / 3);
        assert_eq!(bounded((0..5).map(|_| json!(big))).len(), 2);
    }
}
