//! The bridge of `serve --broker` between the store's gateway tasks and the broker: it sends
//! each task's ask, follows what the broker says of it, completes the task with the reply, and
//! cancels the ask of a task the client cancelled. Everything it acts on is durable (the asks in
//! the store, the replies in the link's inbox, the broker's own record of tracked sends), so a
//! pass after any restart picks up where the last one stopped; frames only make it faster.
//!
//! | the broker says (or the bridge learns) | the ask | the task |
//! | --- | --- | --- |
//! | `delivery_queued` (target away, `queue: true`) | queued | submitted |
//! | `delivered` (the target acknowledged it) | delivered | working |
//! | a reply (`replyTo` the ask) | closed | completed, with the reply's text and attachments |
//! | `delivery_failed` before delivery | closed | rejected, with the code and reason |
//! | `ask_cancelled` to the gateway (the target left for good) | closed | failed, with the reason |
//! | the ask no longer open at the broker, no reply (it expired) | closed | failed |
//! | the client cancelled the task | `cancel_ask` sent, closed | canceled |

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_intercom_core::scratchpad::TaskState;
use agent_intercom_mcp::Link;
use agent_intercom_mcp::inbox::Stored;
use agent_intercom_mcp::link::{Delivery, Settled, now_ms};
use agent_intercom_scratchpad::{ASK_ID_PREFIX, AskState, GatewayAsk, GatewayReply};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use crate::worker::StoreHandle;

/// How long a send waits for the broker to settle it before the bridge moves on (the outcome
/// then comes as a frame, or from `delivery_status` at the next probe).
const SETTLE_WAIT: Duration = Duration::from_secs(10);
/// How long a request to the broker (`cancel_ask`, `defer_ask`, `delivery_status`) waits.
const REQUEST_WAIT: Duration = Duration::from_secs(10);
/// Inbox messages read per pass.
const PAGE: usize = 256;
/// The broker's refusal of a second open ask to the same session.
const ASK_ALREADY_PENDING: &str = "ASK_ALREADY_PENDING";

/// The bridge: cheap to clone (sends run on tasks of their own).
#[derive(Clone)]
pub struct Bridge {
    /// The broker link (the gateway's session).
    pub link: Link,
    /// The store thread.
    pub store: StoreHandle,
    /// The gateway's name: the assignee who moves its tasks.
    pub name: String,
    /// Woken by the request handlers (a task created or cancelled).
    pub wake: Arc<Notify>,
    /// How often the asks are checked at the broker.
    pub probe_interval: Duration,
    /// Asks being sent now (not sent again meanwhile).
    pub sending: Arc<Mutex<HashSet<String>>>,
    /// Asks the broker refused with `ASK_ALREADY_PENDING` (their target, named otherwise, has
    /// an open ask): not sent again until an ask closes or the next probe.
    pub held: Arc<Mutex<HashSet<String>>>,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A line on stderr through the broker crate's log: never a wait or a panic.
fn log(args: std::fmt::Arguments<'_>) {
    agent_intercom_broker::log::line(format_args!("agent-intercom serve: {args}"));
}

impl Bridge {
    /// Runs until `shutdown` turns true.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let mut frames = self.link.frames();
        let mut arrivals = self.link.arrivals();
        let mut connection = self.link.connection();
        let mut probe = tokio::time::interval(self.probe_interval);
        probe.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut probing = false;
        // Whether a pass is due: not after a frame that concerns no ask (presence, joins and
        // leaves: most of what a broker with many sessions sends).
        let mut due = true;
        loop {
            if *shutdown.borrow_and_update() {
                return;
            }
            if due || probing {
                self.pass(probing).await;
            }
            probing = false;
            due = true;
            tokio::select! {
                changed = shutdown.changed() => if changed.is_err() { return },
                () = self.wake.notified() => {}
                changed = arrivals.changed() => if changed.is_err() { return },
                changed = connection.changed() => if changed.is_err() { return },
                _ = probe.tick() => probing = true,
                frame = frames.recv() => match frame {
                    Ok(frame) => due = self.on_frame(&frame).await,
                    // Fell behind: the pass and the next probe learn the state again.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => probing = true,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }

    async fn call<R, F>(&self, f: F) -> Option<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut agent_intercom_scratchpad::Store) -> Result<R, agent_intercom_core::Error>
            + Send
            + 'static,
    {
        match self.store.call(f).await {
            Ok(r) => Some(r),
            Err(e) => {
                log(format_args!(
                    "the store failed: {} [{}]",
                    e.message(),
                    e.code()
                ));
                None
            }
        }
    }

    /// One pass: the replies in the inbox, then every open ask (sent when pending, cancelled
    /// when its task was; with `probe`, checked at the broker).
    async fn pass(&self, probe: bool) {
        if probe {
            locked(&self.held).clear();
        }
        self.replies().await;
        let Some(asks) = self.call(|s| s.a2a_asks_open()).await else {
            return;
        };
        // The broker holds one open ask per asker and asked session (`ASK_ALREADY_PENDING`):
        // a target's next ask waits, in order, until its open one closes.
        let held = locked(&self.held).clone();
        let mut busy: HashSet<String> = {
            let sending = locked(&self.sending);
            asks.iter()
                .filter(|a| !a.task_done())
                .filter(|a| a.state != AskState::Pending || sending.contains(&a.ask_id))
                .map(|a| a.target.clone())
                .collect()
        };
        for ask in asks {
            if ask.task_done() {
                // One being sent is cancelled once the broker has settled it.
                if !locked(&self.sending).contains(&ask.ask_id) {
                    self.close_done(&ask).await;
                }
                continue;
            }
            match ask.state {
                AskState::Pending
                    if !held.contains(&ask.ask_id) && busy.insert(ask.target.clone()) =>
                {
                    self.send(ask)
                }
                AskState::Queued if probe => self.check_queued(&ask).await,
                AskState::Delivered if probe => self.check_open(&ask).await,
                _ => {}
            }
        }
    }

    /// The replies in the inbox complete their tasks; every message read is marked read (and
    /// the broker told, for the sender's receipts).
    async fn replies(&self) {
        let unread = match self.link.inbox(|i| i.unread_page(PAGE)) {
            Ok(unread) => unread,
            Err(e) => return log(format_args!("cannot read the inbox: {e}")),
        };
        for stored in unread {
            let reply_to = stored.message["replyTo"].as_str().unwrap_or_default();
            if reply_to.starts_with(ASK_ID_PREFIX) && !self.answer(reply_to, &stored).await {
                continue; // the store failed: tried again at the next pass
            }
            if !reply_to.starts_with(ASK_ID_PREFIX) {
                log(format_args!(
                    "a message from {} that answers no A2A task is set aside (the gateway only \
                     takes replies to its asks)",
                    stored.sender_id()
                ));
            }
            if let Err(e) = self.link.inbox(|i| i.mark_read(&[stored.seq], now_ms())) {
                log(format_args!("cannot mark a message read: {e}"));
            }
            if let Some(delivery) = &stored.delivery_id
                && self.link.has_extensions()
            {
                let frame = json!({"type": "message_read", "deliveryId": delivery});
                let _ = self.link.send_frame(frame).await;
            }
        }
    }

    /// Completes the task of `ask_id` with the reply `stored`; false when the store failed.
    async fn answer(&self, ask_id: &str, stored: &Stored) -> bool {
        let (artifacts, from) = reply_artifacts(stored);
        let (ask_id, by) = (ask_id.to_string(), self.name.clone());
        let reason = format!("answered by {from}");
        let finished = self
            .call(move |s| {
                let reply = GatewayReply {
                    by: &by,
                    to: TaskState::Completed,
                    reason: &reason,
                    artifacts: &artifacts,
                };
                match s.a2a_ask_finish(&ask_id, &reply) {
                    Err(e) if e.code() == agent_intercom_core::ErrorCode::ContentTooLarge => {
                        let reason = format!("the reply cannot be kept: {}", e.message());
                        let failed = GatewayReply {
                            to: TaskState::Failed,
                            reason: &reason,
                            artifacts: &[],
                            ..reply
                        };
                        s.a2a_ask_finish(&ask_id, &failed)
                    }
                    other => other,
                }
            })
            .await;
        locked(&self.held).clear();
        finished.is_some()
    }

    /// Ends the task of an ask that did not get through (`rejected` before delivery, `failed`
    /// after) with `reason`, and forgets its send.
    async fn give_up(&self, ask_id: &str, reason: String) {
        let (id, by) = (ask_id.to_string(), self.name.clone());
        self.call(move |s| {
            s.a2a_ask_finish(
                &id,
                &GatewayReply {
                    by: &by,
                    to: TaskState::Rejected,
                    reason: &reason,
                    artifacts: &[],
                },
            )
        })
        .await;
        let _ = self.link.inbox(|i| i.settle(ask_id));
        locked(&self.held).clear();
    }

    async fn delivered(&self, ask_id: &str) {
        let (id, by) = (ask_id.to_string(), self.name.clone());
        self.call(move |s| s.a2a_ask_delivered(&id, &by, "delivered to the session asked"))
            .await;
    }

    async fn queued(&self, ask_id: &str) {
        let id = ask_id.to_string();
        self.call(move |s| s.a2a_ask_queued(&id)).await;
    }

    /// Sends a pending ask on a task of its own (unless it is being sent), with `queue` when
    /// the broker speaks the offline queue; its settlement moves the task.
    fn send(&self, ask: GatewayAsk) {
        {
            let mut sending = locked(&self.sending);
            if !self.link.is_connected() || !sending.insert(ask.ask_id.clone()) {
                return;
            }
        }
        let bridge = self.clone();
        tokio::spawn(async move {
            let settled = bridge.send_now(&ask).await;
            locked(&bridge.sending).remove(&ask.ask_id);
            match settled {
                Some(Settled::Delivered) => bridge.delivered(&ask.ask_id).await,
                Some(Settled::Queued) => bridge.queued(&ask.ask_id).await,
                // Another ask to the same session is open (the target named otherwise, or a
                // race): this one waits for the next pass.
                Some(Settled::Failed(code, _)) if code == ASK_ALREADY_PENDING => {
                    locked(&bridge.held).insert(ask.ask_id.clone());
                }
                Some(Settled::Failed(code, reason)) => {
                    let why = not_delivered(&ask.target, &code, &reason);
                    bridge.give_up(&ask.ask_id, why).await;
                }
                None => {}
            }
            // Whatever waited for this send (the next ask to its target, a cancel of its
            // task) is for the pass that follows, once the store has the settlement (a pass
            // before it would see the ask pending and send it again).
            bridge.wake.notify_one();
        });
    }

    async fn send_now(&self, ask: &GatewayAsk) -> Option<Settled> {
        let content: Value = match serde_json::from_str(&ask.content) {
            Ok(content) => content,
            Err(_) => {
                let why = "the stored ask is not JSON".to_string();
                return Some(Settled::Failed("STORE_CORRUPT".into(), why));
            }
        };
        let message = json!({
            "id": ask.ask_id, "timestamp": now_ms(), "expectsReply": true, "content": content,
        });
        let delivery = Delivery {
            queue: self.link.has_extensions(),
            receipts: false,
        };
        match self
            .link
            .send(&ask.target, message, delivery, SETTLE_WAIT, None)
            .await
        {
            Ok(settled) => Some(settled),
            // Kept in the link's outbox and sent again after the next registration; the
            // outcome comes as a frame or from delivery_status.
            Err(e) if e.code() == agent_intercom_core::ErrorCode::NotConnected => None,
            // Never sent: larger than a broker takes, or not a frame it would accept.
            Err(e) => Some(Settled::Failed(
                e.code().as_str().into(),
                e.message().into(),
            )),
        }
    }

    /// A queued ask: asks the broker how it stands (it may have been delivered, or expired,
    /// while the gateway was away).
    async fn check_queued(&self, ask: &GatewayAsk) {
        let Some(state) = self.delivery_state(&ask.ask_id).await else {
            return;
        };
        match state.as_str() {
            "delivered" | "read" => self.delivered(&ask.ask_id).await,
            "failed" => {
                let why = format!("the ask to {} was not delivered", ask.target);
                self.give_up(&ask.ask_id, why).await;
            }
            "expired" => {
                let why = format!(
                    "the ask waited for {} in the broker's offline queue until it expired \
                     (QUEUE_EXPIRED)",
                    ask.target
                );
                self.give_up(&ask.ask_id, why).await;
            }
            _ => {}
        }
    }

    async fn delivery_state(&self, ask_id: &str) -> Option<String> {
        if !self.link.has_extensions() {
            return None;
        }
        let frame = json!({"type": "delivery_status", "messageId": ask_id});
        let answer = self.link.request(frame, REQUEST_WAIT).await.ok()?;
        answer["state"].as_str().map(str::to_string)
    }

    /// A delivered ask: is it still open at the broker? `defer_ask` answers `applied: false`
    /// when it is not; a reply would be in the inbox by then (it comes first on the same
    /// connection), so no reply means the ask expired or was closed without one.
    async fn check_open(&self, ask: &GatewayAsk) {
        let frame = json!({"type": "defer_ask", "messageId": ask.ask_id});
        let Ok(answer) = self.link.request(frame, REQUEST_WAIT).await else {
            return;
        };
        if answer["applied"] != Value::Bool(false) {
            return;
        }
        self.replies().await;
        let id = ask.ask_id.clone();
        let still = self.call(move |s| s.a2a_ask(&id)).await.flatten();
        if still.is_some_and(|a| a.state != AskState::Closed) {
            let why = format!(
                "the ask to {} is no longer open at the broker and no reply came: it expired \
                 (the broker's ask_timeout_ms) or was closed",
                ask.target
            );
            self.give_up(&ask.ask_id, why).await;
        }
    }

    /// An ask whose task ended otherwise: a cancelled task's ask is cancelled at the broker
    /// (its target is told `ask_cancelled`), then closed.
    async fn close_done(&self, ask: &GatewayAsk) {
        if ask.task_state == TaskState::Canceled.as_str() {
            if !self.link.is_connected() {
                return; // at the next pass after the registration
            }
            let frame = json!({"type": "cancel_ask", "messageId": ask.ask_id});
            if self.link.request(frame, REQUEST_WAIT).await.is_err() {
                return;
            }
            let _ = self.link.inbox(|i| i.settle(&ask.ask_id));
        }
        let id = ask.ask_id.clone();
        self.call(move |s| s.a2a_ask_close(&id)).await;
        locked(&self.held).clear();
    }

    /// What the broker says of an ask, at once (the pass confirms it later anyway); whether
    /// the frame concerned one. A settlement may also reach the ask's send task: both apply
    /// it, and the store takes it once (a frame that came after the send's own settlement,
    /// `delivered` after `delivery_queued`, must not wait for a probe).
    async fn on_frame(&self, frame: &Value) -> bool {
        let id = frame["messageId"].as_str().unwrap_or_default();
        if !id.starts_with(ASK_ID_PREFIX) {
            return false;
        }
        let text = |key: &str| frame[key].as_str().unwrap_or_default().to_string();
        match frame["type"].as_str().unwrap_or_default() {
            "delivered" => self.delivered(id).await,
            "delivery_queued" => self.queued(id).await,
            "delivery_failed" if text("code") == ASK_ALREADY_PENDING => {
                locked(&self.held).insert(id.to_string());
            }
            "delivery_failed" => {
                let found = self.call({
                    let id = id.to_string();
                    move |s| s.a2a_ask(&id)
                });
                let target = found.await.flatten().map(|a| a.target).unwrap_or_default();
                let why = not_delivered(&target, &text("code"), &text("reason"));
                self.give_up(id, why).await;
            }
            // To the asker only when its target unregistered for good.
            "ask_cancelled" => {
                let why = format!(
                    "the ask was cancelled by the broker: {} (session {})",
                    text("reason"),
                    text("fromSessionId")
                );
                self.give_up(id, why).await;
            }
            _ => {}
        }
        true
    }
}

/// Why an ask to `target` did not get through, as the task's history says it.
fn not_delivered(target: &str, code: &str, reason: &str) -> String {
    format!("the ask to {target} was not delivered: {reason} ({code})")
}

/// The artifacts of a reply: its text (`reply`, unless empty) and each attachment under its
/// name; and who replied (its name, else its id).
fn reply_artifacts(stored: &Stored) -> (Vec<(String, String)>, String) {
    let content = &stored.message["content"];
    let mut artifacts = Vec::new();
    let text = content["text"].as_str().unwrap_or_default();
    if !text.is_empty() {
        artifacts.push(("reply".to_string(), text.to_string()));
    }
    for a in content["attachments"].as_array().into_iter().flatten() {
        let name = a["name"].as_str().unwrap_or("attachment").to_string();
        artifacts.push((name, a["content"].as_str().unwrap_or_default().to_string()));
    }
    let from = stored.from["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .or_else(|| stored.from["id"].as_str())
        .unwrap_or("the session asked")
        .to_string();
    (artifacts, from)
}
