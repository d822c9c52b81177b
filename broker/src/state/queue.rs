//! The opt-in extensions of the wire (docs/hub.md): the offline queue (`send.queue`), read
//! receipts (`send.receipts`, `message_read`) and `delivery_status`. A client that never asks
//! for them sees none of their frames, and the broker writes nothing more for its sends.
//!
//! - The sessions known by id (`known_sessions`): a local session's id with the time it was
//!   last connected, kept `offline_retention_ms`. Only the store holds them.
//! - The queue (`offline_queue`, and here `queued` and its indexes): a send with `queue` whose
//!   `to` is the full id of a known local session that is not connected waits for it, in order,
//!   bounded per recipient and in total, for at most `offline_ttl_ms`. When the session
//!   registers again the queue is handed to it before anything newer, through the ordinary
//!   acknowledgement; a message leaves the queue when it is acknowledged, refused, timed out or
//!   expired, and stays when the recipient leaves again before acknowledging it.
//! - Tracked messages (`message_status`): a send with `queue` or `receipts` has a state the
//!   sender may ask for (`delivery_status`), kept `offline_retention_ms`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::records::{Enqueue, Pending, Route, Tracking};
use super::{ConnId, Map, State, Timer, js, text_frame};
use crate::store::{QueuedRow, StatusRow};
use crate::wire::{delivery_state, failure_code};
use agent_intercom_core::asks::CancelReason;

/// A message waiting for its recipient, keyed by its delivery id in `Queue::items`.
pub(super) struct Queued {
    pub(super) seq: i64,
    pub(super) to: String,
    pub(super) from: String,
    pub(super) message_id: String,
    pub(super) fingerprint: String,
    /// The sender's SessionInfo when it sent it (used while the sender is not connected).
    pub(super) from_info: String,
    /// The message as its sender wrote it (JSON text).
    pub(super) message: String,
    pub(super) expects_reply: bool,
    pub(super) reply_to: Option<String>,
    pub(super) receipts: bool,
    pub(super) expires_at: i64,
    /// Handed to the recipient, not acknowledged yet (a pending delivery exists).
    pub(super) in_flight: bool,
}

impl Queued {
    fn bytes(&self) -> usize {
        self.message.len()
    }
}

/// The offline queue in memory: every queued message (the store holds them too).
#[derive(Default)]
pub(super) struct Queue {
    items: Map<String, Queued>,
    /// Per recipient: its messages by queue order.
    of: Map<String, BTreeMap<i64, String>>,
    by_key: Map<(String, String), String>,
    bytes_of: Map<String, usize>,
    total_bytes: usize,
    next_seq: i64,
}

impl Queue {
    fn insert(&mut self, delivery_id: String, item: Queued) {
        self.next_seq = self.next_seq.max(item.seq + 1);
        self.of
            .entry(item.to.clone())
            .or_default()
            .insert(item.seq, delivery_id.clone());
        self.by_key.insert(
            (item.from.clone(), item.message_id.clone()),
            delivery_id.clone(),
        );
        *self.bytes_of.entry(item.to.clone()).or_default() += item.bytes();
        self.total_bytes += item.bytes();
        self.items.insert(delivery_id, item);
    }

    fn remove(&mut self, delivery_id: &str) -> Option<Queued> {
        let item = self.items.remove(delivery_id)?;
        if let Some(of) = self.of.get_mut(&item.to) {
            of.remove(&item.seq);
            if of.is_empty() {
                self.of.remove(&item.to);
            }
        }
        self.by_key
            .remove(&(item.from.clone(), item.message_id.clone()));
        if let Some(n) = self.bytes_of.get_mut(&item.to) {
            *n -= item.bytes();
            if *n == 0 {
                self.bytes_of.remove(&item.to);
            }
        }
        self.total_bytes -= item.bytes();
        Some(item)
    }

    pub(super) fn get(&self, delivery_id: &str) -> Option<&Queued> {
        self.items.get(delivery_id)
    }

    /// Per recipient: how many messages wait for it (in flight included) and their bytes.
    pub(super) fn recipients(&self) -> impl Iterator<Item = (&str, usize, usize)> {
        self.of.iter().map(|(to, items)| {
            let bytes = self.bytes_of.get(to).copied().unwrap_or(0);
            (to.as_str(), items.len(), bytes)
        })
    }

    /// Every queued message, and their bytes.
    pub(super) fn totals(&self) -> (usize, usize) {
        (self.items.len(), self.total_bytes)
    }
}

impl State {
    /// Whether `id` is the id of a local session seen within the retention window.
    fn known_local(&self, id: &str) -> Option<bool> {
        let store = self.store.as_ref()?;
        let (last_seen, remote) = store.known_session(id).ok().flatten()?;
        let fresh =
            last_seen + self.config.offline_retention.as_millis() as i64 > self.clock.now_ms();
        fresh.then_some(!remote)
    }

    /// For a send with `queue`: a selector that is the full id of a known session that is not
    /// connected means that session, never a name or a prefix. Queued when both ends are local
    /// sessions; else `SESSION_NOT_FOUND`. Anything else takes the ordinary path.
    pub(super) fn queue_route(
        &self,
        conn: ConnId,
        actor: &str,
        to: &str,
    ) -> Result<Route, (&'static str, &'static str)> {
        if self.sessions.contains_key(to) {
            return Ok(Route::Live);
        }
        let Some(local) = self.known_local(to) else {
            return Ok(Route::Live);
        };
        let me = self
            .sessions
            .get(actor)
            .filter(|me| me.conn == conn)
            .ok_or((failure_code::SENDER_NOT_FOUND, "Sender session not found"))?;
        if !local || me.remote.is_some() {
            return Err((failure_code::SESSION_NOT_FOUND, "Session not found"));
        }
        Ok(Route::Queue(to.to_string()))
    }

    /// The recipient's queue has room for `bytes` more (and so has the broker's).
    pub(super) fn queue_has_room(&self, to: &str, bytes: usize) -> bool {
        let count = self.queue.of.get(to).map_or(0, BTreeMap::len);
        let held = self.queue.bytes_of.get(to).copied().unwrap_or(0);
        count < self.config.offline_queue_max_messages
            && held + bytes <= self.config.offline_queue_max_bytes
            && self.queue.total_bytes + bytes <= self.config.offline_queue_max_total_bytes
    }

    /// Queues a message and tells its sender `delivery_queued` (on `conn`, or wherever it is
    /// connected when `conn` is None). The checks (bounds, asks) were made by the caller.
    pub(super) fn enqueue(&mut self, conn: Option<ConnId>, item: Enqueue<'_>) {
        let now = self.clock.now_ms();
        let delivery_id = item
            .delivery_id
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let expires_at = now + self.config.offline_ttl.as_millis() as i64;
        let row = QueuedRow {
            seq: self.queue.next_seq,
            delivery_id: delivery_id.clone(),
            to: item.to,
            from: item.key.0.clone(),
            message_id: item.key.1.clone(),
            fingerprint: item.fingerprint,
            from_info: item.from_info,
            message: item.send.message.to_string(),
            expects_reply: item.send.expects_reply,
            reply_to: item.send.reply_to.clone(),
            receipts: item.send.receipts,
            queued_at: now,
            expires_at,
        };
        self.persist(|s| s.put_queued(&row));
        self.put_status(
            &row.from,
            &row.message_id,
            &delivery_id,
            &row.to,
            row.receipts,
            delivery_state::QUEUED,
        );
        if row.expects_reply {
            // The ask waits with its message: answerable once delivered.
            self.extend_edge(
                &item.key,
                expires_at + self.config.ask_timeout.as_millis() as i64,
            );
        }
        self.schedule_at_ms(expires_at, Timer::QueueExpiry(delivery_id.clone()));
        let frame = format!(
            r#"{{"type":"delivery_queued","messageId":{},"deliveryId":{}}}"#,
            js(&row.message_id),
            js(&delivery_id)
        );
        let to_conn = conn.or_else(|| self.sessions.get(&row.from).map(|e| e.conn));
        self.queue.insert(delivery_id, queued_of(row));
        if let Some(to_conn) = to_conn {
            self.send(to_conn, text_frame(&frame));
        }
    }

    /// A repeat of a queued send: `delivery_queued` again, or `DUPLICATE_MESSAGE_ID` for another
    /// payload under the same id. Whether the send was answered.
    pub(super) fn answered_from_queue(
        &mut self,
        conn: ConnId,
        key: &(String, String),
        fp: &str,
    ) -> bool {
        let Some(delivery_id) = self.queue.by_key.get(key) else {
            return false;
        };
        if self.queue.items[delivery_id].fingerprint != fp {
            self.fail_send(
                conn,
                &key.1,
                false,
                failure_code::DUPLICATE_MESSAGE_ID,
                "Message ID is already queued with a different payload",
            );
        } else {
            self.tell_queued(conn, &key.1, delivery_id);
        }
        true
    }

    pub(super) fn tell_queued(&self, conn: ConnId, message_id: &str, delivery_id: &str) {
        let frame = json!({
            "type": "delivery_queued",
            "messageId": message_id,
            "deliveryId": delivery_id,
        });
        self.send_value(conn, frame);
    }

    /// Hands session `id` (just registered on `conn`) every message queued for it that is not
    /// already in flight, in queue order, each as an ordinary pending delivery.
    pub(super) fn hand_over_queue(&mut self, id: &str, conn: ConnId) {
        let Some(entry) = self.sessions.get(id) else {
            return;
        };
        if entry.remote.is_some() {
            return;
        }
        let generation = entry.generation;
        let now = self.clock.now_ms();
        let (waiting, stale): (Vec<String>, Vec<String>) = self
            .queue
            .of
            .get(id)
            .into_iter()
            .flat_map(|of| of.values())
            .filter(|d| !self.queue.items[*d].in_flight)
            .cloned()
            .partition(|d| self.queue.items[d].expires_at > now);
        // Whose time is up (their timers may not have run yet) expire instead.
        for delivery_id in stale {
            self.expire_queued(&delivery_id);
        }
        let ask_ms = self.config.ask_timeout.as_millis() as i64;
        for delivery_id in waiting {
            let q = &self.queue.items[&delivery_id];
            let sender = self.sessions.get(&q.from);
            let info = sender.map_or(q.from_info.as_str(), |e| e.info_text.as_str());
            let message = format!(
                r#"{{"type":"message","deliveryId":{},"from":{info},"message":{}}}"#,
                js(&delivery_id),
                q.message
            );
            self.send(conn, text_frame(&message));
            let pending = Pending {
                timer: (self.clock.now(), 0),
                key: (q.from.clone(), q.message_id.clone()),
                fingerprint: q.fingerprint.clone(),
                message_id: q.message_id.clone(),
                resolves: q.reply_to.clone().map(|r| (id.to_string(), r)),
                expects_reply: q.expects_reply,
                from: q.from.clone(),
                to: id.to_string(),
                from_conn: sender.map_or(0, |e| e.conn),
                to_conn: conn,
                from_generation: sender.map_or(0, |e| e.generation),
                to_generation: generation,
                tracking: Tracking {
                    queue: true,
                    receipts: q.receipts,
                    from_queue: true,
                    requeue: None,
                },
            };
            if pending.expects_reply {
                // Answerable for a whole ask timeout from now, as any ask just delivered.
                self.extend_edge(&pending.key, self.clock.now_ms() + ask_ms);
            }
            if let Some(q) = self.queue.items.get_mut(&delivery_id) {
                q.in_flight = true;
            }
            self.add_pending(delivery_id, pending);
        }
    }

    /// A delivery from the queue ended without an acknowledgement because its recipient left:
    /// the message waits again (expired at once if its time is up).
    pub(super) fn back_to_queue(&mut self, delivery_id: &str) {
        let Some(q) = self.queue.items.get_mut(delivery_id) else {
            return;
        };
        q.in_flight = false;
        let key = (q.from.clone(), q.message_id.clone());
        if q.expects_reply && !self.edges.contains_key(&key) {
            // Its ask ended while it was handed out.
            self.withdraw_queued(&key, CancelReason::Cancelled.as_str());
        } else if q.expires_at <= self.clock.now_ms() {
            self.expire_queued(delivery_id);
        }
    }

    /// Takes a message out of the queue for good (delivered, refused, timed out or expired).
    pub(super) fn dequeue(&mut self, delivery_id: &str) -> Option<Queued> {
        let item = self.queue.remove(delivery_id)?;
        self.persist(|s| s.delete_queued(delivery_id));
        Some(item)
    }

    /// A queued message's time is up: unless it is in flight (then its acknowledgement decides),
    /// it leaves the queue and its sender is told `QUEUE_EXPIRED`; the result is kept for the
    /// retention window, so a sender that was away learns it from `delivery_status` or from a
    /// repeat of the send.
    pub(super) fn expire_queued(&mut self, delivery_id: &str) {
        let due = self
            .queue
            .get(delivery_id)
            .is_some_and(|q| !q.in_flight && q.expires_at <= self.clock.now_ms());
        if !due {
            return;
        }
        let q = self.dequeue(delivery_id).expect("checked");
        let key = (q.from.clone(), q.message_id.clone());
        if q.expects_reply {
            self.remove_edge(&key, Some(CancelReason::DeliveryFailed.as_str()));
        }
        let response = json!({
            "type": "delivery_failed",
            "messageId": q.message_id,
            "accepted": true,
            "code": failure_code::QUEUE_EXPIRED,
            "reason": "The recipient did not come back before the message expired",
        });
        self.remember(&key, &q.fingerprint, &q.to, &response, false, true);
        self.put_status(
            &q.from,
            &q.message_id,
            delivery_id,
            &q.to,
            q.receipts,
            delivery_state::EXPIRED,
        );
        if let Some(e) = self.sessions.get(&q.from) {
            self.send_value(e.conn, response);
        }
    }

    /// An ask that ended (`why`: cancelled by its asker, its asker unregistered, it expired)
    /// while it waited in the queue: unless it is in flight (then its recipient was told
    /// `ask_cancelled`, and it is withdrawn if it comes back: [`State::back_to_queue`]), it
    /// leaves the queue and ends `failed` with `ASK_CANCELLED`, which its sender is told now and
    /// a repeat of the send is answered with. An ended ask is never delivered later.
    pub(super) fn withdraw_queued(&mut self, key: &(String, String), why: &str) {
        let Some(delivery_id) = self.queue.by_key.get(key).cloned() else {
            return;
        };
        if self
            .queue
            .get(&delivery_id)
            .is_none_or(|q| q.in_flight || !q.expects_reply)
        {
            return;
        }
        let q = self.dequeue(&delivery_id).expect("checked");
        let reason = if why == CancelReason::Cancelled.as_str() {
            "The asker cancelled the ask before it was delivered".to_string()
        } else {
            format!("The ask ended ({why}) before it was delivered")
        };
        let response = json!({
            "type": "delivery_failed",
            "messageId": q.message_id,
            "accepted": true,
            "code": failure_code::ASK_CANCELLED,
            "reason": reason,
        });
        self.remember(key, &q.fingerprint, &q.to, &response, false, true);
        self.put_status(
            &q.from,
            &q.message_id,
            &delivery_id,
            &q.to,
            q.receipts,
            delivery_state::FAILED,
        );
        if let Some(e) = self.sessions.get(&q.from) {
            self.send_value(e.conn, response);
        }
    }

    /// Records a tracked message's state for the retention window.
    pub(super) fn put_status(
        &self,
        from: &str,
        message_id: &str,
        delivery_id: &str,
        to: &str,
        receipts: bool,
        state: &str,
    ) {
        let row = StatusRow {
            from: from.into(),
            message_id: message_id.into(),
            delivery_id: delivery_id.into(),
            to: to.into(),
            state: state.into(),
            receipts,
            expires_at: self.clock.now_ms() + self.config.offline_retention.as_millis() as i64,
        };
        self.persist(|s| s.put_status(&row));
    }

    /// `message_read`: the recipient showed a delivered message to its model. Acknowledges it
    /// first if it was still pending; then a tracked message becomes `read`, and its sender,
    /// when it asked for receipts and is connected, is told `message_read` (once).
    pub(super) fn message_read(&mut self, conn: ConnId, actor: &str, delivery_id: &str) {
        if self
            .pending
            .get(delivery_id)
            .is_some_and(|p| p.to == actor && p.to_conn == conn)
        {
            self.acknowledge(conn, actor, delivery_id);
        }
        let Some(mut row) = self
            .store
            .as_ref()
            .and_then(|s| s.status_by_delivery(delivery_id).ok().flatten())
        else {
            return;
        };
        if row.to != actor || row.state != delivery_state::DELIVERED {
            return;
        }
        row.state = delivery_state::READ.into();
        row.expires_at = self.clock.now_ms() + self.config.offline_retention.as_millis() as i64;
        self.persist(|s| s.put_status(&row));
        if row.receipts
            && let Some(e) = self.sessions.get(&row.from)
        {
            self.send_value(
                e.conn,
                json!({
                    "type": "message_read",
                    "messageId": row.message_id,
                    "deliveryId": row.delivery_id,
                }),
            );
        }
    }

    /// `delivery_status`: the state of one of `actor`'s own messages. What is in flight or
    /// queued is known in memory; a tracked message's state is in the store for the retention
    /// window; an untracked one is known while its duplicate-suppression result is kept.
    pub(super) fn delivery_status(
        &mut self,
        conn: ConnId,
        actor: &str,
        request_id: &str,
        message_id: &str,
    ) {
        let key = (actor.to_string(), message_id.to_string());
        let now = self.clock.now_ms();
        let state = if let Some(p) = self.pending_by_key.get(&key).map(|d| &self.pending[d]) {
            if p.tracking.from_queue {
                delivery_state::QUEUED
            } else {
                delivery_state::ACCEPTED
            }
        } else if self.queue.by_key.contains_key(&key) {
            delivery_state::QUEUED
        } else if let Some(row) = self
            .store
            .as_ref()
            .and_then(|s| s.status_of(actor, message_id).ok().flatten())
            .filter(|row| row.expires_at > now)
        {
            delivery_state::ALL
                .into_iter()
                .find(|s| *s == row.state)
                .unwrap_or(delivery_state::UNKNOWN)
        } else {
            self.settled_state(&key)
        };
        self.send_value(
            conn,
            json!({
                "type": "delivery_status",
                "requestId": request_id,
                "messageId": message_id,
                "state": state,
            }),
        );
    }

    /// The state a kept delivery result stands for (`unknown` when none is kept).
    fn settled_state(&mut self, key: &(String, String)) -> &'static str {
        let now = self.clock.now_ms();
        let response = match self.recent.get(key) {
            Some(r) if r.expires_at > now => serde_json::from_slice::<Value>(&r.response[4..]).ok(),
            Some(_) => None,
            None => self
                .store
                .as_ref()
                .and_then(|s| s.get_delivery(&key.0, &key.1).ok().flatten())
                .filter(|row| row.expires_at > now)
                .and_then(|row| serde_json::from_str::<Value>(&row.response).ok()),
        };
        match response {
            Some(r) if r["type"] == "delivered" => delivery_state::DELIVERED,
            Some(r) if r["code"] == failure_code::QUEUE_EXPIRED => delivery_state::EXPIRED,
            Some(_) => delivery_state::FAILED,
            None => delivery_state::UNKNOWN,
        }
    }

    /// Records that session `id` is (or just was) connected, for the queue's known sessions.
    pub(super) fn touch_session(&self, id: &str, remote: bool) {
        let now = self.clock.now_ms();
        self.persist(|s| s.touch_session(id, now, remote));
    }

    /// The queue as the store kept it, at start: expiry timers armed (a message whose time is
    /// up expires at the first timer run).
    pub(super) fn restore_queue(&mut self, rows: Vec<QueuedRow>) {
        let now = self.clock.now_ms();
        let mut ended = Vec::new();
        for row in rows {
            let delivery_id = row.delivery_id.clone();
            let key = (row.from.clone(), row.message_id.clone());
            // (One whose own time is up expires instead, by its timer: `QUEUE_EXPIRED`.)
            if row.expects_reply && row.expires_at > now && !self.edges.contains_key(&key) {
                ended.push(key);
            }
            self.schedule_at_ms(row.expires_at, Timer::QueueExpiry(delivery_id.clone()));
            self.queue.insert(delivery_id, queued_of(row));
        }
        // An ask whose edge is gone (it ended, or expired while no broker ran) is not delivered
        // now: the edges were restored first.
        for key in ended {
            self.withdraw_queued(&key, "expired or cancelled");
        }
    }
}

fn queued_of(row: QueuedRow) -> Queued {
    Queued {
        seq: row.seq,
        to: row.to,
        from: row.from,
        message_id: row.message_id,
        fingerprint: row.fingerprint,
        from_info: row.from_info,
        message: row.message,
        expects_reply: row.expects_reply,
        reply_to: row.reply_to,
        receipts: row.receipts,
        expires_at: row.expires_at,
        in_flight: false,
    }
}
