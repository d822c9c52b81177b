//! Ask edges: who waits for whose reply. Opened by a send that expects a reply, resolved by
//! the delivered reply, deferred when a party leaves, cancelled or expired.

use agent_intercom_core::asks::CancelReason;
use agent_intercom_core::asks::{AskEdge, AskState, AskView};
use serde_json::json;

use super::{ConnId, State, Timer};
use crate::store::EdgeRow;

/// An unresolved ask, keyed by (asker, message id) in `State::edges`; `to` is the asked session.
pub(super) struct Edge {
    pub(super) to: String,
    pub(super) created_at: i64,
    pub(super) expires_at: i64,
    pub(super) state: AskState,
}

/// The open asks as the core's ask rules see them.
impl AskView for State {
    fn by_message(&self, asker: &str, message_id: &str) -> Option<AskEdge<'_>> {
        let ((asker, message_id), edge) = self
            .edges
            .get_key_value(&(asker.to_string(), message_id.to_string()))?;
        Some(AskEdge {
            asker,
            message_id,
            asked: &edge.to,
            state: edge.state,
        })
    }

    fn between(&self, asker: &str, asked: &str) -> Option<AskEdge<'_>> {
        let ((asker, asked), message_id) = self
            .edge_by_pair
            .get_key_value(&(asker.to_string(), asked.to_string()))?;
        let edge = self.edges.get(&(asker.clone(), message_id.clone()))?;
        Some(AskEdge {
            asker,
            message_id,
            asked,
            state: edge.state,
        })
    }

    fn open_from(&self, asker: &str) -> usize {
        self.edges_from.get(asker).copied().unwrap_or(0)
    }
}

impl State {
    pub(super) fn add_edge(&mut self, from: &str, message_id: &str, to: &str) {
        let created_at = self.clock.now_ms();
        let expires_at = created_at + self.config.ask_timeout.as_millis() as i64;
        let row = EdgeRow {
            from: from.into(),
            message_id: message_id.into(),
            to: to.into(),
            created_at,
            expires_at,
            state: "blocking".into(),
        };
        self.persist(|s| s.put_edge(&row));
        self.edges.insert(
            (from.into(), message_id.into()),
            Edge {
                to: to.into(),
                created_at,
                expires_at,
                state: AskState::Blocking,
            },
        );
        self.edge_by_pair
            .insert((from.into(), to.into()), message_id.into());
        *self.edges_from.entry(from.into()).or_default() += 1;
        self.schedule(
            self.config.ask_timeout,
            Timer::AskExpiry(from.into(), message_id.into(), expires_at),
        );
    }

    /// An ask whose message waits in the offline queue (or was just handed out of it): set
    /// aside (deferred: its asker is not waiting on a connected session) and answerable until
    /// `expires_at`. Nothing when the ask is no longer open.
    pub(super) fn extend_edge(&mut self, key: &(String, String), expires_at: i64) {
        let Some(edge) = self.edges.get_mut(key) else {
            return;
        };
        edge.state = AskState::Deferred;
        edge.expires_at = expires_at;
        let row = EdgeRow {
            from: key.0.clone(),
            message_id: key.1.clone(),
            to: edge.to.clone(),
            created_at: edge.created_at,
            expires_at,
            state: AskState::Deferred.as_str().into(),
        };
        self.persist(|s| s.put_edge(&row));
        // The timer armed before no longer matches the edge's expiry: it does nothing.
        self.schedule_at_ms(
            expires_at,
            Timer::AskExpiry(key.0.clone(), key.1.clone(), expires_at),
        );
    }

    /// Removes an edge; with a reason, tells the asked session it was cancelled, and takes the
    /// ask out of the offline queue if it waits there ([`State::withdraw_queued`]).
    pub(super) fn remove_edge(&mut self, key: &(String, String), reason: Option<&str>) {
        let Some(edge) = self.edges.remove(key) else {
            return;
        };
        self.edge_by_pair.remove(&(key.0.clone(), edge.to.clone()));
        if let Some(n) = self.edges_from.get_mut(&key.0) {
            *n -= 1;
            if *n == 0 {
                self.edges_from.remove(&key.0);
            }
        }
        self.persist(|s| s.delete_edge(&key.0, &key.1));
        if let Some(reason) = reason {
            self.notify_cancelled(&edge.to, &key.1, &key.0, reason);
            // An ask that ends before it was delivered is never delivered later.
            self.withdraw_queued(key, reason);
        }
        let _ = edge.created_at;
    }

    fn notify_cancelled(&self, session: &str, message_id: &str, from: &str, reason: &str) {
        if let Some(e) = self.sessions.get(session) {
            self.send_value(
                e.conn,
                json!({
                    "type": "ask_cancelled",
                    "messageId": message_id,
                    "fromSessionId": from,
                    "reason": reason,
                }),
            );
        }
    }

    fn notify_deferred(&self, to: &str, message_id: &str, from: &str) {
        if let Some(e) = self.sessions.get(to) {
            self.send_value(
                e.conn,
                json!({ "type": "ask_deferred", "messageId": message_id, "fromSessionId": from }),
            );
        }
    }

    pub(super) fn defer_edges_of(&mut self, id: &str) {
        let keys: Vec<(String, String)> = self
            .edges
            .iter()
            .filter(|((from, _), e)| (from == id || e.to == id) && e.state == AskState::Blocking)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            let edge = self.edges.get_mut(&key).expect("listed");
            edge.state = AskState::Deferred;
            let to = edge.to.clone();
            self.persist(|s| s.set_edge_state(&key.0, &key.1, AskState::Deferred.as_str()));
            if key.0 == id {
                self.notify_deferred(&to, &key.1, &key.0);
            }
        }
    }

    pub(super) fn cancel_edges_of(&mut self, id: &str, reason: &str) {
        let keys: Vec<(String, String)> = self
            .edges
            .iter()
            .filter(|((from, _), e)| from == id || e.to == id)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            let to = self.edges[&key].to.clone();
            self.remove_edge(&key, None);
            if key.0 == id {
                self.notify_cancelled(&to, &key.1, &key.0, reason);
            } else {
                self.notify_cancelled(&key.0, &key.1, &to, reason);
            }
            self.withdraw_queued(&key, reason);
        }
    }

    pub(super) fn ask_control(
        &mut self,
        conn: ConnId,
        actor: &str,
        cancel: bool,
        request_id: &str,
        message_id: &str,
    ) {
        let key = (actor.to_string(), message_id.to_string());
        let applied = self.sessions.get(actor).is_some_and(|e| e.conn == conn)
            && self.edges.contains_key(&key);
        if applied {
            if cancel {
                self.remove_edge(&key, Some(CancelReason::Cancelled.as_str()));
            } else {
                let edge = self.edges.get_mut(&key).expect("checked");
                if edge.state == AskState::Blocking {
                    edge.state = AskState::Deferred;
                    let to = edge.to.clone();
                    self.persist(|s| s.set_edge_state(&key.0, &key.1, AskState::Deferred.as_str()));
                    self.notify_deferred(&to, message_id, actor);
                }
            }
        }
        self.send_value(
            conn,
            json!({
                "type": "ask_control_result",
                "requestId": request_id,
                "action": if cancel { "cancel" } else { "defer" },
                "messageId": message_id,
                "applied": applied,
            }),
        );
    }

    /// Ask edges loaded from the store at start.
    pub(super) fn restore_edges(&mut self, rows: Vec<EdgeRow>) {
        for row in rows {
            // Reloaded asks are deferred: their askers are not connected yet.
            let key = (row.from.clone(), row.message_id.clone());
            self.edge_by_pair
                .insert((row.from.clone(), row.to.clone()), row.message_id.clone());
            *self.edges_from.entry(row.from.clone()).or_default() += 1;
            self.schedule_at_ms(
                row.expires_at,
                Timer::AskExpiry(row.from.clone(), row.message_id.clone(), row.expires_at),
            );
            self.edges.insert(
                key,
                Edge {
                    to: row.to,
                    created_at: row.created_at,
                    expires_at: row.expires_at,
                    state: AskState::Deferred,
                },
            );
            if row.state != "deferred" {
                self.persist(|s| s.set_edge_state(&row.from, &row.message_id, "deferred"));
            }
        }
    }
}
