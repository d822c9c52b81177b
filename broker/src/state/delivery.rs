//! Deliveries: sending (duplicate suppression, capacity, resolution, ask rules, frames),
//! acknowledgement, failure, and the recent results kept for duplicate suppression.

use agent_intercom_core::asks::CancelReason;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use agent_intercom_core::asks::{self, AskRefusal};
use agent_intercom_core::policy::PolicyAction;
use agent_intercom_core::routing::{self, ResolveKind};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::records::{Enqueue, Pending, Route, Tracking};
use super::{ConnId, State, Timer, frame, js, text_frame};
use crate::store::DeliveryRow;
use crate::wire::{self, delivery_state, failure_code};

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
    /// The result of a send with `queue`: it stands whether or not the recipient is connected.
    pub(super) kept: bool,
    /// Its place in `recent_order` (a key remembered again is there twice: only the entry
    /// with its current place evicts it).
    pub(super) order: u64,
}

impl Recent {
    pub(super) fn new(
        fingerprint: String,
        to: String,
        response: &Value,
        retryable: bool,
        expires_at: i64,
        kept: bool,
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
            kept,
            order: 0,
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

/// Digest of what makes two sends "the same message": `[to, replyTo, expectsReply, content]`
/// as JSON with sorted keys (wire::write_sorted), so equal payloads hash equally whatever their
/// key order, and the digests stored by earlier versions (sorted maps) still match.
fn fingerprint(to: &str, message: &Value) -> String {
    let mut digest = DigestWriter(Sha256::new());
    let mut write = || -> std::io::Result<()> {
        use std::io::Write as _;
        digest.write_all(b"[")?;
        serde_json::to_writer(&mut digest, to)?;
        for part in [
            message.get("replyTo"),
            message.get("expectsReply"),
            message.get("content"),
        ] {
            digest.write_all(b",")?;
            crate::wire::write_sorted(&mut digest, part.unwrap_or(&Value::Null))?;
        }
        digest.write_all(b"]")
    };
    write().expect("hashing cannot fail");
    agent_intercom_core::canonical::to_hex(&digest.0.finalize())
}

/// A send refused before it was accepted: the `delivery_failed` code and reason.
struct Refusal {
    code: &'static str,
    reason: Cow<'static, str>,
}

impl Refusal {
    fn new(code: &'static str, reason: &'static str) -> Refusal {
        Refusal {
            code,
            reason: Cow::Borrowed(reason),
        }
    }
}

impl From<AskRefusal> for Refusal {
    fn from(refusal: AskRefusal) -> Refusal {
        Refusal::new(refusal.code(), refusal.reason())
    }
}

/// What an accepted send does to the open asks (an owned `asks::AskEffect`).
struct Asks {
    opens: bool,
    resolves: Option<(String, String)>,
}

impl State {
    /// A `send`: answered from the first send's result when it repeats one, else checked
    /// (capacity, resolution, the ask rules) and either refused or accepted and delivered.
    pub(super) fn send_message(&mut self, conn: ConnId, actor: &str, send: wire::Send) {
        let key = (actor.to_string(), send.id.clone());
        let fp = fingerprint(&send.to, &send.message);
        let action = if send.reply_to.is_some() {
            PolicyAction::Reply
        } else if send.expects_reply {
            PolicyAction::Ask
        } else {
            PolicyAction::Send
        };
        if self.answered_from_recent(conn, &key, &fp, action, send.queue)
            || self.answered_from_pending(conn, &key, &fp, action)
            || self.answered_from_queue(conn, &key, &fp)
        {
            return;
        }
        let checked = if send.queue {
            self.queue_route(conn, actor, &send.to)
                .map_err(|(code, reason)| Refusal::new(code, reason))
        } else {
            Ok(Route::Live)
        };
        let checked = checked.and_then(|route| {
            let live = matches!(route, Route::Live);
            let target = match route {
                Route::Queue(target) => target,
                Route::Live => {
                    self.check_capacity(actor)?;
                    self.resolve_target(conn, actor, &send.to, action)?
                }
            };
            let asks = self.check_asks(actor, &target, &send)?;
            if !live && !self.queue_has_room(&target, send.message.to_string().len()) {
                return Err(Refusal::new(
                    failure_code::QUEUE_FULL,
                    "The recipient's offline queue is full",
                ));
            }
            Ok((live, target, asks))
        });
        match checked {
            Err(refusal) => self.fail_send(conn, &send.id, false, refusal.code, &refusal.reason),
            Ok((live, target, asks)) => {
                self.count_send(send.expects_reply);
                if asks.opens {
                    self.add_edge(actor, &send.id, &target);
                }
                if live {
                    return self.deliver(conn, key, fp, send, target, asks.resolves);
                }
                let from_info = self.sessions[actor].info_text.clone();
                let item = Enqueue {
                    key,
                    fingerprint: fp,
                    send: &send,
                    to: target,
                    from_info,
                    delivery_id: None,
                };
                self.enqueue(Some(conn), item);
            }
        }
    }

    /// Duplicate suppression against settled results: the same message again is answered as
    /// the first was, the same id with another payload is refused. A result evicted from
    /// memory is looked up in the store. Whether the send was answered.
    fn answered_from_recent(
        &mut self,
        conn: ConnId,
        key: &(String, String),
        fp: &str,
        action: PolicyAction,
        queue: bool,
    ) -> bool {
        let now = self.clock.now_ms();
        if self.recent.get(key).is_some_and(|r| r.expires_at <= now) {
            self.recent.remove(key);
        }
        // The store is asked when memory may have let the result go: after an eviction, and for
        // a send with `queue`, whose result the store keeps for the retention window.
        if (self.recent_evicted || queue)
            && !self.recent.contains_key(key)
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
                row.kept,
            );
            self.remember_recent(key.clone(), recent);
        }
        let Some(recent) = self.recent.get(key) else {
            return false;
        };
        if recent.expires_at <= now {
            self.recent.remove(key);
            false
        } else if recent.fingerprint != fp {
            self.fail_send(
                conn,
                &key.1,
                false,
                failure_code::DUPLICATE_MESSAGE_ID,
                "Message ID was already used with a different payload",
            );
            true
        } else if recent.retryable
            || (!recent.kept
                && (!self.sessions.contains_key(&recent.to)
                    || !self.policy().allows(&key.0, action, &recent.to)))
        {
            self.recent.remove(key);
            self.persist(|s| s.delete_delivery(&key.0, &key.1));
            false
        } else {
            // The same message again: answer what was answered.
            if let Some(delivery_id) = &recent.delivered_id {
                self.send_value(
                    conn,
                    json!({
                        "type": "delivery_accepted",
                        "messageId": key.1,
                        "deliveryId": delivery_id,
                    }),
                );
            }
            self.send(conn, recent.response.clone());
            true
        }
    }

    /// Duplicate suppression against pending deliveries: the same message again is accepted
    /// again under the same delivery id while both ends keep their bindings; otherwise the
    /// stale delivery fails and the send goes on. Whether the send was answered.
    fn answered_from_pending(
        &mut self,
        conn: ConnId,
        key: &(String, String),
        fp: &str,
        action: PolicyAction,
    ) -> bool {
        let Some(existing) = self.pending_by_key.get(key).cloned() else {
            return false;
        };
        let p = &self.pending[&existing];
        if p.fingerprint != fp {
            self.fail_send(
                conn,
                &key.1,
                false,
                failure_code::DUPLICATE_MESSAGE_ID,
                "Message ID is already pending with a different payload",
            );
            return true;
        }
        if p.tracking.from_queue {
            // Handed out from the queue, not acknowledged yet: still queued.
            self.tell_queued(conn, &key.1, &existing);
            return true;
        }
        if self.bindings_unchanged(p) && self.policy().allows(&p.from, action, &p.to) {
            self.send_value(
                conn,
                json!({ "type": "delivery_accepted", "messageId": key.1, "deliveryId": existing }),
            );
            return true;
        }
        self.fail_pending(
            &existing,
            failure_code::SESSION_NOT_FOUND,
            "Delivery target changed while pending",
        );
        false
    }

    /// The broker-wide and per-sender bounds on deliveries awaiting acknowledgement.
    fn check_capacity(&self, actor: &str) -> Result<(), Refusal> {
        // Deliveries from the offline queue count for neither bound: their senders may be away.
        if self.pending.len() - self.pending_from_queue >= self.config.max_pending_deliveries
            || self.pending_from.get(actor).copied().unwrap_or(0)
                >= self.config.max_pending_deliveries_per_session
        {
            return Err(Refusal::new(
                failure_code::TOO_MANY_PENDING_DELIVERIES,
                "Too many messages are waiting for receiver acknowledgement",
            ));
        }
        Ok(())
    }

    /// The session `to` names, for a sender that is registered on this connection, among the
    /// sessions the policy kernel lets it reach with `action`.
    fn resolve_target(
        &self,
        conn: ConnId,
        actor: &str,
        to: &str,
        action: PolicyAction,
    ) -> Result<String, Refusal> {
        let sender_not_found =
            || Refusal::new(failure_code::SENDER_NOT_FOUND, "Sender session not found");
        let me = self.sessions.get(actor).ok_or_else(sender_not_found)?;
        let exact: Vec<&str> = self
            .sessions
            .get_key_value(to)
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
        let (kind, mut targets) = routing::resolve_with(to, exact, same_scope);
        if kind != ResolveKind::SessionNotFound && self.remote_live > 0 {
            // The Pi broker's order: resolve, then keep the targets the actor may reach; none
            // left is "not found" (a hidden session is not revealed), and it is audited.
            let policy = self.policy();
            let candidates = targets.clone();
            targets.retain(|t| policy.allows(actor, action, t));
            if targets.is_empty() {
                self.audit_delivery_denied(actor, &candidates);
                return Err(Refusal::new(
                    failure_code::SESSION_NOT_FOUND,
                    "Session not found",
                ));
            }
        }
        let kind = match (kind, targets.len()) {
            (ResolveKind::AmbiguousTarget, 1) => ResolveKind::GlobalExactId,
            (kind, _) => kind,
        };
        match kind {
            ResolveKind::AmbiguousTarget => {
                return Err(Refusal {
                    code: failure_code::AMBIGUOUS_TARGET,
                    reason: format!(
                        "Multiple sessions match \"{to}\". Use the session ID instead."
                    )
                    .into(),
                });
            }
            ResolveKind::SessionNotFound => {
                return Err(Refusal::new(
                    failure_code::SESSION_NOT_FOUND,
                    "Session not found",
                ));
            }
            _ => {}
        }
        let target = targets[0].to_string();
        if me.conn != conn {
            return Err(sender_not_found());
        }
        Ok(target)
    }

    /// The ask-threading rules (`agent_intercom_core::asks`) over the open asks.
    fn check_asks(&self, actor: &str, target: &str, send: &wire::Send) -> Result<Asks, Refusal> {
        let effect = asks::check_ask(
            self,
            actor,
            target,
            send.reply_to.as_deref(),
            send.expects_reply,
            self.config.max_pending_asks_per_session,
        )?;
        Ok(Asks {
            opens: effect.opens,
            resolves: effect
                .resolves
                .map(|k| (k.asker.to_string(), k.message_id.to_string())),
        })
    }

    /// Accepts a checked send: `delivery_accepted` to the sender, `message` to the recipient,
    /// and a pending delivery with its acknowledgement timer.
    fn deliver(
        &mut self,
        conn: ConnId,
        key: (String, String),
        fp: String,
        send: wire::Send,
        target: String,
        resolves: Option<(String, String)>,
    ) {
        let me = &self.sessions[&key.0];
        let them = &self.sessions[&target];
        let delivery_id = uuid::Uuid::new_v4().to_string();
        let requeue = (send.queue && me.remote.is_none() && them.remote.is_none())
            .then(|| (me.info_text.clone(), send.message.to_string()));
        let tracking = Tracking {
            queue: send.queue,
            receipts: send.receipts,
            from_queue: false,
            requeue,
        };
        if tracking.tracked() {
            let state = delivery_state::ACCEPTED;
            self.put_status(
                &key.0,
                &send.id,
                &delivery_id,
                &target,
                send.receipts,
                state,
            );
        }
        let pending = Pending {
            timer: (self.clock.now(), 0), // set once scheduled, below
            key: key.clone(),
            fingerprint: fp,
            message_id: send.id.clone(),
            resolves,
            expects_reply: send.expects_reply,
            from: key.0.clone(),
            to: target,
            from_conn: conn,
            to_conn: them.conn,
            from_generation: me.generation,
            to_generation: them.generation,
            tracking,
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
        self.add_pending(delivery_id, pending);
    }

    /// Records a delivery handed to its recipient, with its acknowledgement timer.
    pub(super) fn add_pending(&mut self, delivery_id: String, pending: Pending) {
        if pending.tracking.from_queue {
            self.pending_from_queue += 1;
        } else {
            *self.pending_from.entry(pending.from.clone()).or_default() += 1;
        }
        self.pending_by_key
            .insert(pending.key.clone(), delivery_id.clone());
        let timer = self.schedule(
            self.config.delivery_ack_timeout,
            Timer::DeliveryTimeout(delivery_id.clone()),
        );
        self.pending
            .insert(delivery_id, Pending { timer, ..pending });
    }

    /// Both ends of a pending delivery still hold the bindings it was accepted for (for one
    /// from the queue, the recipient only: its sender may come and go).
    fn bindings_unchanged(&self, p: &Pending) -> bool {
        let same = |id: &str, generation: u64| {
            self.sessions
                .get(id)
                .is_some_and(|e| e.generation == generation)
        };
        (p.tracking.from_queue || same(&p.from, p.from_generation)) && same(&p.to, p.to_generation)
    }

    fn take_pending(&mut self, delivery_id: &str) -> Option<Pending> {
        let p = self.pending.remove(delivery_id)?;
        self.timers.remove(&p.timer);
        self.pending_by_key.remove(&p.key);
        if p.tracking.from_queue {
            self.pending_from_queue -= 1;
        } else if let Some(n) = self.pending_from.get_mut(&p.from) {
            *n -= 1;
            if *n == 0 {
                self.pending_from.remove(&p.from);
            }
        }
        Some(p)
    }

    /// Records a settled delivery's answer and tells its sender: if the sender is still on
    /// the connection it sent from, or, for a delivery from the queue, wherever it is connected.
    fn settle(&mut self, delivery_id: &str, p: &Pending, response: Value, retryable: bool) {
        let kept = p.tracking.queue;
        let encoded = self.remember(&p.key, &p.fingerprint, &p.to, &response, retryable, kept);
        if p.tracking.tracked() {
            let state = if response["type"] == "delivered" {
                delivery_state::DELIVERED
            } else {
                delivery_state::FAILED
            };
            let receipts = p.tracking.receipts;
            self.put_status(&p.from, &p.message_id, delivery_id, &p.to, receipts, state);
        }
        let to = match self.sessions.get(&p.from) {
            Some(e) if p.tracking.from_queue || e.conn == p.from_conn => e.conn,
            _ => return,
        };
        self.send(to, encoded);
    }

    /// Keeps a settled delivery's answer for duplicate suppression: in memory and in the store
    /// for `recent_delivery_ttl_ms`; when `kept` (a send with `queue`, whose sender may be away
    /// for long and repeat it when it comes back), in the store for the retention window, where a
    /// repeat of the send finds it once it left memory (see `answered_from_recent`). Returns the
    /// answer's frame, encoded once for the memory and the sender.
    pub(super) fn remember(
        &mut self,
        key: &(String, String),
        fingerprint: &str,
        to: &str,
        response: &Value,
        retryable: bool,
        kept: bool,
    ) -> Arc<Vec<u8>> {
        let now = self.clock.now_ms();
        let expires_at = now + self.config.recent_delivery_ttl.as_millis() as i64;
        let retained = now + self.config.offline_retention.as_millis() as i64;
        let row = DeliveryRow {
            from: key.0.clone(),
            message_id: key.1.clone(),
            fingerprint: fingerprint.to_string(),
            to: to.to_string(),
            response: response.to_string(),
            retryable,
            expires_at: if kept {
                expires_at.max(retained)
            } else {
                expires_at
            },
            kept,
        };
        self.persist(|s| s.put_delivery(&row));
        let recent = Recent::new(
            row.fingerprint,
            row.to,
            response,
            retryable,
            expires_at,
            kept,
        );
        let encoded = recent.response.clone();
        self.remember_recent(key.clone(), recent);
        encoded
    }

    /// Keeps a delivery result in memory, evicting the oldest past `max_recent_in_memory` (the
    /// store keeps every result for the whole window; see `send_message`).
    pub(super) fn remember_recent(&mut self, key: (String, String), mut recent: Recent) {
        self.recent_seq += 1;
        recent.order = self.recent_seq;
        self.recent.insert(key.clone(), recent);
        self.recent_order.push_back((self.recent_seq, key));
        while self.recent.len() > self.config.max_recent_in_memory {
            let Some((order, oldest)) = self.recent_order.pop_front() else {
                break;
            };
            // A stale place (the key was removed, or remembered again since) evicts nothing.
            if self.recent.get(&oldest).is_some_and(|r| r.order == order) {
                self.recent.remove(&oldest);
                self.recent_evicted = true;
            }
        }
        if self.recent_order.len() > 2 * self.config.max_recent_in_memory.max(1) {
            let recent = &self.recent;
            self.recent_order
                .retain(|(order, k)| recent.get(k).is_some_and(|r| r.order == *order));
        }
    }

    /// A `message_received` the server read without a `Value` (`crate::fast`): the checks and
    /// the handler of `State::frame` for that kind (neither reads the frame's other members).
    pub(super) fn acknowledged(&mut self, conn: ConnId, delivery_id: String) {
        let Some((origin, bound)) = self.sender(conn) else {
            return;
        };
        if self.screen(conn, "message_received", &Value::Null, bound.as_deref()) {
            let parsed = wire::ClientFrame::MessageReceived { delivery_id };
            self.dispatch(conn, origin, bound, parsed, &Value::Null);
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
        if p.tracking.from_queue {
            self.dequeue(delivery_id);
        }
        if let Some(ask) = &p.resolves {
            // The reply is delivered: the ask it answers is resolved.
            self.remove_edge(ask, None);
        }
        let response =
            json!({ "type": "delivered", "messageId": p.message_id, "deliveryId": delivery_id });
        self.settle(delivery_id, &p, response, false);
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
        if p.tracking.from_queue {
            self.dequeue(delivery_id);
        }
        if p.expects_reply {
            self.remove_edge(
                &(p.from.clone(), p.message_id.clone()),
                Some(CancelReason::DeliveryFailed.as_str()),
            );
        }
        let response = json!({
            "type": "delivery_failed",
            "messageId": p.message_id,
            "accepted": true,
            "code": code,
            "reason": reason,
        });
        self.settle(delivery_id, &p, response, true);
    }

    /// Session `id` left connection `conn`: the deliveries it had yet to acknowledge and those
    /// it sent that were not acknowledged fail, in the order they were made. A message sent
    /// with `queue` to a local session is queued instead (a delivery from the queue goes back
    /// to it): the recipient will have it when it comes back.
    pub(super) fn fail_pending_of(&mut self, id: &str, conn: ConnId) {
        let mut doomed: Vec<((Instant, u64), String, &'static str, &'static str)> = self
            .pending
            .iter()
            .filter_map(|(did, p)| {
                if p.to == id && p.to_conn == conn {
                    Some((
                        p.timer,
                        did.clone(),
                        failure_code::RECIPIENT_DISCONNECTED,
                        "Recipient disconnected before acknowledging the message",
                    ))
                } else if p.from == id && p.from_conn == conn && !p.tracking.from_queue {
                    Some((
                        p.timer,
                        did.clone(),
                        failure_code::SENDER_DISCONNECTED,
                        "Sender disconnected before delivery was acknowledged",
                    ))
                } else {
                    None
                }
            })
            .collect();
        doomed.sort();
        for (_, did, code, reason) in doomed {
            if code == failure_code::RECIPIENT_DISCONNECTED && self.requeue(&did) {
                continue;
            }
            self.fail_pending(&did, code, reason);
        }
    }

    /// A delivery whose recipient left, put (back) in the queue when its send asked for it
    /// and the queue has room. Whether it was.
    fn requeue(&mut self, delivery_id: &str) -> bool {
        let p = &self.pending[delivery_id];
        if p.tracking.from_queue {
            self.take_pending(delivery_id);
            self.back_to_queue(delivery_id);
            return true;
        }
        let Some((from_info, message)) = &p.tracking.requeue else {
            return false;
        };
        if !self.queue_has_room(&p.to, message.len()) {
            return false;
        }
        let Ok(message) = serde_json::from_str::<Value>(message) else {
            return false;
        };
        let from_info = from_info.clone();
        let p = self.take_pending(delivery_id).expect("listed");
        let send = wire::Send {
            to: p.to.clone(),
            id: p.message_id.clone(),
            reply_to: p.resolves.as_ref().map(|(_, id)| id.clone()),
            expects_reply: p.expects_reply,
            message,
            queue: true,
            receipts: p.tracking.receipts,
        };
        let item = Enqueue {
            key: p.key,
            fingerprint: p.fingerprint,
            send: &send,
            to: p.to,
            from_info,
            delivery_id: Some(delivery_id.to_string()),
        };
        // Its sender is told `delivery_queued` where it is connected now.
        self.enqueue(None, item);
        true
    }

    /// Delivery results loaded from the store at start (the kept results stay there: a repeat
    /// of their send looks them up).
    pub(super) fn restore_results(&mut self, rows: Vec<DeliveryRow>) {
        for row in rows {
            if let Ok(response) = serde_json::from_str::<Value>(&row.response) {
                self.remember_recent(
                    (row.from, row.message_id),
                    Recent::new(
                        row.fingerprint,
                        row.to,
                        &response,
                        row.retryable,
                        row.expires_at,
                        row.kept,
                    ),
                );
            }
        }
    }
}
