//! Deliveries: sending (duplicate suppression, capacity, resolution, ask rules, frames),
//! acknowledgement, failure, and the recent results kept for duplicate suppression.

use std::sync::Arc;
use std::time::Instant;

use agent_intercom_core::routing::{self, ResolveKind};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::asks::EdgeState;
use super::{ConnId, State, Timer, frame, js, text_frame};
use crate::lifecycle::now_ms;
use crate::store::DeliveryRow;
use crate::wire::{self, failure_code};

/// A delivery awaiting the recipient's acknowledgement, keyed by delivery id.
pub(super) struct Pending {
    /// Its delivery-timeout timer.
    pub(super) timer: (Instant, u64),
    pub(super) key: (String, String),
    pub(super) fingerprint: String,
    pub(super) message_id: String,
    pub(super) reply_to: Option<String>,
    pub(super) expects_reply: bool,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) from_conn: ConnId,
    pub(super) to_conn: ConnId,
    pub(super) from_generation: u64,
    pub(super) to_generation: u64,
}

/// A settled delivery's answer, kept for duplicate suppression, keyed by (sender, message id).
pub(super) struct Recent {
    pub(super) fingerprint: String,
    pub(super) to: String,
    /// The answer, encoded once: `delivered` or `delivery_failed`.
    pub(super) response: Arc<Vec<u8>>,
    /// For a `delivered` answer, its delivery id (a replay sends `delivery_accepted` first).
    pub(super) delivered_id: Option<String>,
    pub(super) retryable: bool,
    pub(super) expires_at: i64,
}

impl Recent {
    pub(super) fn new(
        fingerprint: String,
        to: String,
        response: &Value,
        retryable: bool,
        expires_at: i64,
    ) -> Recent {
        let delivered_id = (response["type"] == "delivered")
            .then(|| response["deliveryId"].as_str().unwrap_or("").to_string());
        Recent {
            fingerprint,
            to,
            response: frame(response),
            delivered_id,
            retryable,
            expires_at,
        }
    }
}

/// Feeds serialized JSON straight into the digest.
struct DigestWriter(Sha256);

impl std::io::Write for DigestWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Digest of what makes two sends "the same message": {to, replyTo, expectsReply, content}.
/// serde_json's maps are ordered by key, so equal payloads serialize (and hash) equally.
fn fingerprint(to: &str, message: &Value) -> String {
    let mut digest = DigestWriter(Sha256::new());
    let parts = (
        to,
        message.get("replyTo"),
        message.get("expectsReply"),
        message.get("content"),
    );
    serde_json::to_writer(&mut digest, &parts).expect("hashing cannot fail");
    digest
        .0
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl State {
    pub(super) fn send_message(&mut self, conn: ConnId, actor: &str, send: wire::Send) {
        let key = (actor.to_string(), send.id.clone());
        let fp = fingerprint(&send.to, &send.message);
        let now = now_ms();
        if self.recent_evicted
            && !self.recent.contains_key(&key)
            && let Some(row) = self
                .store
                .as_ref()
                .and_then(|s| s.get_delivery(&key.0, &key.1).ok().flatten())
            && row.expires_at > now
            && let Ok(response) = serde_json::from_str::<Value>(&row.response)
        {
            // Older than the in-memory window: the store still knows the answer.
            let recent = Recent::new(
                row.fingerprint,
                row.to,
                &response,
                row.retryable,
                row.expires_at,
            );
            self.remember_recent(key.clone(), recent);
        }
        if let Some(recent) = self.recent.get(&key) {
            if recent.expires_at <= now {
                self.recent.remove(&key);
            } else if recent.fingerprint != fp {
                return self.fail_send(
                    conn,
                    &send.id,
                    false,
                    failure_code::DUPLICATE_MESSAGE_ID,
                    "Message ID was already used with a different payload",
                );
            } else if recent.retryable || !self.sessions.contains_key(&recent.to) {
                self.recent.remove(&key);
                self.persist(|s| s.delete_delivery(&key.0, &key.1));
            } else {
                // The same message again: answer what was answered.
                if let Some(delivery_id) = &recent.delivered_id {
                    self.send_value(conn, json!({ "type": "delivery_accepted", "messageId": send.id, "deliveryId": delivery_id }));
                }
                return self.send(conn, recent.response.clone());
            }
        }
        if let Some(existing) = self.pending_by_key.get(&key).cloned() {
            let p = &self.pending[&existing];
            if p.fingerprint != fp {
                return self.fail_send(
                    conn,
                    &send.id,
                    false,
                    failure_code::DUPLICATE_MESSAGE_ID,
                    "Message ID is already pending with a different payload",
                );
            }
            let still_valid = self.bindings_unchanged(p);
            if still_valid {
                return self.send_value(conn, json!({ "type": "delivery_accepted", "messageId": send.id, "deliveryId": existing }));
            }
            self.fail_pending(
                &existing,
                failure_code::SESSION_NOT_FOUND,
                "Delivery target changed while pending",
            );
        }
        if self.pending.len() >= self.config.max_pending_deliveries
            || self.pending_from.get(actor).copied().unwrap_or(0)
                >= self.config.max_pending_deliveries_per_session
        {
            return self.fail_send(
                conn,
                &send.id,
                false,
                failure_code::TOO_MANY_PENDING_DELIVERIES,
                "Too many messages are waiting for receiver acknowledgement",
            );
        }
        let Some(me) = self.sessions.get(actor) else {
            return self.fail_send(
                conn,
                &send.id,
                false,
                failure_code::SENDER_NOT_FOUND,
                "Sender session not found",
            );
        };
        let exact: Vec<&str> = self
            .sessions
            .get_key_value(send.to.as_str())
            .map(|(k, _)| k.as_str())
            .into_iter()
            .collect();
        let same_scope = self
            .by_scope
            .get(&me.scope)
            .into_iter()
            .flat_map(|b| b.values())
            .map(|id| {
                let e = &self.sessions[id];
                (id.as_str(), id.as_str(), e.name.as_deref())
            });
        let (kind, targets) = routing::resolve_with(&send.to, exact, same_scope);
        match kind {
            ResolveKind::AmbiguousTarget => {
                return self.fail_send(
                    conn,
                    &send.id,
                    false,
                    failure_code::AMBIGUOUS_TARGET,
                    &format!(
                        "Multiple sessions match \"{}\". Use the session ID instead.",
                        send.to
                    ),
                );
            }
            ResolveKind::SessionNotFound => {
                return self.fail_send(
                    conn,
                    &send.id,
                    false,
                    failure_code::SESSION_NOT_FOUND,
                    "Session not found",
                );
            }
            _ => {}
        }
        let target = targets[0].to_string();
        if me.conn != conn {
            return self.fail_send(
                conn,
                &send.id,
                false,
                failure_code::SENDER_NOT_FOUND,
                "Sender session not found",
            );
        }
        if let Some(reply_to) = &send.reply_to {
            let edge_key = (target.clone(), reply_to.clone());
            match self.edges.get(&edge_key) {
                Some(edge) if edge.to == actor => {}
                _ => {
                    return self.fail_send(
                        conn,
                        &send.id,
                        false,
                        failure_code::INVALID_REPLY_TARGET,
                        "Reply target does not match a pending ask",
                    );
                }
            }
        }
        if send.expects_reply {
            if self
                .edge_by_pair
                .contains_key(&(actor.to_string(), target.clone()))
            {
                return self.fail_send(
                    conn,
                    &send.id,
                    false,
                    failure_code::ASK_ALREADY_PENDING,
                    "Another ask to this session is still unresolved. Wait for its reply or send a non-blocking follow-up.",
                );
            }
            if let Some(reverse_id) = self.edge_by_pair.get(&(target.clone(), actor.to_string())) {
                let reverse = &self.edges[&(target.clone(), reverse_id.clone())];
                let answering = send.reply_to.as_deref() == Some(reverse_id.as_str());
                if reverse.state == EdgeState::Blocking && !answering {
                    return self.fail_send(
                        conn,
                        &send.id,
                        false,
                        failure_code::MUTUAL_ASK,
                        "Mutual ask refused: target session is already waiting for a reply from this session.",
                    );
                }
            }
            if self.edges_from.get(actor).copied().unwrap_or(0)
                >= self.config.max_pending_asks_per_session
            {
                return self.fail_send(
                    conn,
                    &send.id,
                    false,
                    failure_code::TOO_MANY_PENDING_ASKS,
                    "Too many asks are already waiting for replies",
                );
            }
            self.add_edge(actor, &send.id, &target);
        }
        let me = &self.sessions[actor];
        let them = &self.sessions[&target];
        let delivery_id = uuid::Uuid::new_v4().to_string();
        let pending = Pending {
            timer: (Instant::now(), 0), // set once scheduled, below
            key: key.clone(),
            fingerprint: fp,
            message_id: send.id.clone(),
            reply_to: send.reply_to.clone(),
            expects_reply: send.expects_reply,
            from: actor.to_string(),
            to: target.clone(),
            from_conn: conn,
            to_conn: them.conn,
            from_generation: me.generation,
            to_generation: them.generation,
        };
        let to_conn = them.conn;
        let (message_id, delivery) = (js(&send.id), js(&delivery_id));
        let accepted = format!(
            r#"{{"type":"delivery_accepted","messageId":{message_id},"deliveryId":{delivery}}}"#
        );
        let message = format!(
            r#"{{"type":"message","deliveryId":{delivery},"from":{},"message":{}}}"#,
            me.info_text, send.message
        );
        self.send(conn, text_frame(&accepted));
        self.send(to_conn, text_frame(&message));
        *self.pending_from.entry(actor.to_string()).or_default() += 1;
        self.pending_by_key.insert(key, delivery_id.clone());
        let timer = self.schedule(
            self.config.delivery_ack_timeout,
            Timer::DeliveryTimeout(delivery_id.clone()),
        );
        self.pending
            .insert(delivery_id, Pending { timer, ..pending });
    }

    /// Both ends of a pending delivery still hold the bindings it was accepted for.
    fn bindings_unchanged(&self, p: &Pending) -> bool {
        let same = |id: &str, generation: u64| {
            self.sessions
                .get(id)
                .is_some_and(|e| e.generation == generation)
        };
        same(&p.from, p.from_generation) && same(&p.to, p.to_generation)
    }

    fn take_pending(&mut self, delivery_id: &str) -> Option<Pending> {
        let p = self.pending.remove(delivery_id)?;
        self.timers.remove(&p.timer);
        self.pending_by_key.remove(&p.key);
        if let Some(n) = self.pending_from.get_mut(&p.from) {
            *n -= 1;
            if *n == 0 {
                self.pending_from.remove(&p.from);
            }
        }
        Some(p)
    }

    fn remember(&mut self, p: &Pending, response: &Value, retryable: bool) {
        let expires_at = now_ms() + self.config.recent_delivery_ttl.as_millis() as i64;
        let row = DeliveryRow {
            from: p.from.clone(),
            message_id: p.message_id.clone(),
            fingerprint: p.fingerprint.clone(),
            to: p.to.clone(),
            response: response.to_string(),
            retryable,
            expires_at,
        };
        self.persist(|s| s.put_delivery(&row));
        self.recent.insert(
            p.key.clone(),
            Recent::new(
                p.fingerprint.clone(),
                p.to.clone(),
                response,
                retryable,
                expires_at,
            ),
        );
    }

    /// Keeps a delivery result in memory, evicting the oldest past `max_recent_in_memory` (the
    /// store keeps every result for the whole window; see `send_message`).
    fn remember_recent(&mut self, key: (String, String), recent: Recent) {
        if self.recent.insert(key.clone(), recent).is_none() {
            self.recent_order.push_back(key);
        }
        while self.recent.len() > self.config.max_recent_in_memory {
            let Some(oldest) = self.recent_order.pop_front() else {
                break;
            };
            self.recent.remove(&oldest);
            self.recent_evicted = true;
        }
        if self.recent_order.len() > 2 * self.config.max_recent_in_memory.max(1) {
            let recent = &self.recent;
            self.recent_order.retain(|k| recent.contains_key(k));
        }
    }

    pub(super) fn acknowledge(&mut self, conn: ConnId, actor: &str, delivery_id: &str) {
        let Some(p) = self.pending.get(delivery_id) else {
            return;
        };
        if p.to != actor || p.to_conn != conn {
            return;
        }
        let valid = self.bindings_unchanged(p);
        if !valid {
            return self.fail_pending(
                delivery_id,
                failure_code::SESSION_NOT_FOUND,
                "Delivery target changed before acknowledgement",
            );
        }
        let p = self.take_pending(delivery_id).expect("checked");
        if let Some(reply_to) = &p.reply_to {
            // The reply is delivered: the ask it answers is resolved.
            self.remove_edge(&(p.to.clone(), reply_to.clone()), None);
        }
        let response =
            json!({ "type": "delivered", "messageId": p.message_id, "deliveryId": delivery_id });
        self.remember(&p, &response, false);
        if self
            .sessions
            .get(&p.from)
            .is_some_and(|e| e.conn == p.from_conn)
        {
            self.send_value(p.from_conn, response);
        }
    }

    /// The recipient refused a delivery (its message id conflicts with one it already holds).
    pub(super) fn reject(&mut self, conn: ConnId, actor: &str, delivery_id: &str, reason: &str) {
        if self
            .pending
            .get(delivery_id)
            .is_some_and(|p| p.to == actor && p.to_conn == conn)
        {
            self.fail_pending(delivery_id, failure_code::CONFLICTING_MESSAGE_ID, reason);
        }
    }

    pub(super) fn fail_pending(&mut self, delivery_id: &str, code: &str, reason: &str) {
        let Some(p) = self.take_pending(delivery_id) else {
            return;
        };
        if p.expects_reply {
            self.remove_edge(
                &(p.from.clone(), p.message_id.clone()),
                Some("delivery_failed"),
            );
        }
        let response = json!({ "type": "delivery_failed", "messageId": p.message_id, "accepted": true, "code": code, "reason": reason });
        self.remember(&p, &response, true);
        if self
            .sessions
            .get(&p.from)
            .is_some_and(|e| e.conn == p.from_conn)
        {
            self.send_value(p.from_conn, response);
        }
    }

    pub(super) fn fail_pending_of(&mut self, id: &str, conn: ConnId) {
        let doomed: Vec<(String, &'static str, &'static str)> = self
            .pending
            .iter()
            .filter_map(|(did, p)| {
                if p.to == id && p.to_conn == conn {
                    Some((
                        did.clone(),
                        failure_code::RECIPIENT_DISCONNECTED,
                        "Recipient disconnected before acknowledging the message",
                    ))
                } else if p.from == id && p.from_conn == conn {
                    Some((
                        did.clone(),
                        failure_code::SENDER_DISCONNECTED,
                        "Sender disconnected before delivery was acknowledged",
                    ))
                } else {
                    None
                }
            })
            .collect();
        for (did, code, reason) in doomed {
            self.fail_pending(&did, code, reason);
        }
    }

    /// Delivery results loaded from the store at start.
    pub(super) fn restore_results(&mut self, rows: Vec<DeliveryRow>) {
        for row in rows {
            if let Ok(response) = serde_json::from_str::<Value>(&row.response) {
                self.recent.insert(
                    (row.from, row.message_id),
                    Recent::new(
                        row.fingerprint,
                        row.to,
                        &response,
                        row.retryable,
                        row.expires_at,
                    ),
                );
            }
        }
    }
}
