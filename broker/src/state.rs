//! The broker's state machine. One task owns all state and handles events in order, which makes
//! every ordering guarantee (replacement, acknowledgement, ask threading) a matter of sequence.
//! Protocol rules come from `agent_intercom_core`; this module adds connections, state and time.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_intercom_core::routing::{self, FrameDisposition, LifecycleKind, ResolveKind, Session};
use agent_intercom_core::scope::ScopeId;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use crate::config::{BrokerConfig, LogLevel};
use crate::lifecycle::now_ms;
use crate::store::{DeliveryRow, EdgeRow, Store};
use crate::wire::{self, ClientFrame, Register, Rejection, error_code, failure_code};

/// A connection's identity, unique for the broker's lifetime.
pub type ConnId = u64;

/// What a connection's writer task is told.
#[derive(Debug)]
pub enum Out {
    /// Bytes of one encoded frame (shared when broadcast).
    Frame(Arc<Vec<u8>>),
    /// Flush, then close the connection.
    Close,
}

/// What the server tells the state task.
#[derive(Debug)]
pub enum Event {
    /// A new connection and its writer.
    Accepted {
        /// Its id.
        conn: ConnId,
        /// Its writer.
        tx: mpsc::UnboundedSender<Out>,
        /// Bytes handed to the writer and not yet written to the socket.
        queued: Arc<AtomicUsize>,
        /// Ends the connection at once, even while its writer is blocked.
        kill: Arc<tokio::sync::Notify>,
    },
    /// A well-formed JSON frame arrived.
    Frame {
        /// From.
        conn: ConnId,
        /// The parsed JSON.
        value: Value,
    },
    /// The connection broke the protocol below the frame level (bad length, invalid UTF-8 or
    /// JSON, rate limit): answer with an error frame, in order, and close it.
    Reject {
        /// Which.
        conn: ConnId,
        /// The error frame's code.
        code: &'static str,
        /// Why.
        message: String,
    },
    /// The connection is gone (always the last event of a connection).
    Closed {
        /// Which.
        conn: ConnId,
    },
    /// Stop: close everything.
    Shutdown,
}

/// Why the state task stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// No session for the idle-exit period.
    Idle,
    /// Asked to.
    Shutdown,
    /// The broker's thread failed (a bug: it panicked, or its runtime could not start). Its
    /// files were removed all the same; the CLI exits non-zero.
    Failed,
}

struct Conn {
    tx: mpsc::UnboundedSender<Out>,
    queued: Arc<AtomicUsize>,
    kill: Arc<tokio::sync::Notify>,
    /// Closed for not reading: nothing more is queued for it.
    closing: bool,
    /// The session this connection registered, and the binding generation it got.
    binding: Option<(String, u64)>,
    /// Bumped whenever the registration timeout is (re)armed.
    unregistered_since: Option<u64>,
}

struct Entry {
    conn: ConnId,
    generation: u64,
    seq: u64,
    scope: Option<String>,
    runtime_instance_id: Option<String>,
    pid: f64,
    started_at: f64,
    name: Option<String>,
    status: Option<String>,
    model: String,
    cwd: String,
    pid_json: serde_json::Number,
    started_json: serde_json::Number,
    last_activity: Value,
    last_presence: Instant,
    /// SessionInfo as JSON text, kept current: it goes into every message, list and event.
    info_text: String,
}

impl Entry {
    fn refresh(&mut self, id: &str) {
        self.info_text = self.info(id).to_string();
    }

    fn info(&self, id: &str) -> Value {
        let mut info = serde_json::Map::new();
        info.insert("id".into(), Value::String(id.into()));
        if let Some(name) = &self.name {
            info.insert("name".into(), Value::String(name.clone()));
        }
        info.insert("cwd".into(), Value::String(self.cwd.clone()));
        info.insert("model".into(), Value::String(self.model.clone()));
        info.insert("pid".into(), Value::Number(self.pid_json.clone()));
        info.insert("startedAt".into(), Value::Number(self.started_json.clone()));
        info.insert("lastActivity".into(), self.last_activity.clone());
        if let Some(status) = &self.status {
            info.insert("status".into(), Value::String(status.clone()));
        }
        info.insert("trustedLocal".into(), Value::Bool(true));
        info.insert("origin".into(), Value::String("local".into()));
        Value::Object(info)
    }

    fn scope_id(&self) -> Option<ScopeId<'_>> {
        self.scope.as_deref().and_then(ScopeId::parse)
    }
}

struct Pending {
    /// Its delivery-timeout timer.
    timer: (Instant, u64),
    key: (String, String),
    fingerprint: String,
    message_id: String,
    reply_to: Option<String>,
    expects_reply: bool,
    from: String,
    to: String,
    from_conn: ConnId,
    to_conn: ConnId,
    from_generation: u64,
    to_generation: u64,
}

struct Recent {
    fingerprint: String,
    to: String,
    /// The answer, encoded once: `delivered` or `delivery_failed`.
    response: Arc<Vec<u8>>,
    /// For a `delivered` answer, its delivery id (a replay sends `delivery_accepted` first).
    delivered_id: Option<String>,
    retryable: bool,
    expires_at: i64,
}

impl Recent {
    fn new(
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum EdgeState {
    Blocking,
    Deferred,
}

impl EdgeState {
    fn as_str(self) -> &'static str {
        match self {
            EdgeState::Blocking => "blocking",
            EdgeState::Deferred => "deferred",
        }
    }
}

struct Edge {
    to: String,
    created_at: i64,
    expires_at: i64,
    state: EdgeState,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Registration(ConnId, u64),
    DeliveryTimeout(String),
    AskExpiry(String, String, i64),
    Idle(u64),
    Prune,
}

/// The broker state.
pub struct State {
    config: BrokerConfig,
    store: Option<Store>,
    conns: HashMap<ConnId, Conn>,
    unregistered: VecDeque<(ConnId, u64)>,
    sessions: HashMap<String, Entry>,
    by_scope: HashMap<Option<String>, BTreeMap<u64, String>>,
    pending: HashMap<String, Pending>,
    pending_by_key: HashMap<(String, String), String>,
    pending_from: HashMap<String, usize>,
    /// Delivery results kept in memory (a bounded cache: all of them are in the store).
    recent: HashMap<(String, String), Recent>,
    /// Insertion order of `recent`, for evicting the oldest past the bound.
    recent_order: VecDeque<(String, String)>,
    /// Set once a result left memory: from then on a miss is looked up in the store.
    recent_evicted: bool,
    edges: HashMap<(String, String), Edge>,
    edge_by_pair: HashMap<(String, String), String>,
    edges_from: HashMap<String, usize>,
    /// Pending timers by (deadline, sequence). Delivery timeouts are removed as soon as their
    /// delivery settles, so memory follows what is pending, not the message rate.
    timers: BTreeMap<(Instant, u64), Timer>,
    timer_seq: u64,
    /// Frames produced by the current batch, released by [`State::flush`].
    outbox: std::cell::RefCell<Vec<(ConnId, Out)>>,
    /// Connections closed during the current batch, kept until its frames are released.
    departed: Vec<(ConnId, Conn)>,
    next_seq: u64,
    idle_seq: u64,
    stop: Option<StopReason>,
}

fn frame(value: &Value) -> Arc<Vec<u8>> {
    Arc::new(wire::encode(value))
}

/// A frame from JSON text built by hand on hot paths (the parts are already valid JSON).
fn text_frame(text: &str) -> Arc<Vec<u8>> {
    let text = crate::jstext::release(text);
    let mut bytes = Vec::with_capacity(text.len() + 4);
    bytes.extend_from_slice(&(text.len() as u32).to_be_bytes());
    bytes.extend_from_slice(text.as_bytes());
    Arc::new(bytes)
}

/// A JSON string literal.
fn js(s: &str) -> String {
    Value::String(s.to_string()).to_string()
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

fn number_f64(n: &serde_json::Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

impl State {
    /// A state over an open store (None keeps everything in memory), loading persisted asks (as
    /// deferred) and delivery results.
    pub fn new(config: BrokerConfig, store: Option<Store>) -> State {
        let mut state = State {
            config,
            store,
            conns: HashMap::new(),
            unregistered: VecDeque::new(),
            sessions: HashMap::new(),
            by_scope: HashMap::new(),
            pending: HashMap::new(),
            pending_by_key: HashMap::new(),
            pending_from: HashMap::new(),
            recent: HashMap::new(),
            recent_order: VecDeque::new(),
            recent_evicted: false,
            edges: HashMap::new(),
            edge_by_pair: HashMap::new(),
            edges_from: HashMap::new(),
            timers: BTreeMap::new(),
            timer_seq: 0,
            outbox: std::cell::RefCell::new(Vec::new()),
            departed: Vec::new(),
            next_seq: 1,
            idle_seq: 0,
            stop: None,
        };
        state.load();
        state.schedule(
            state
                .config
                .recent_delivery_ttl
                .min(Duration::from_secs(60)),
            Timer::Prune,
        );
        state.arm_idle();
        state
    }

    fn log(&self, level: LogLevel, message: impl FnOnce() -> String) {
        if level <= self.config.log_level {
            eprintln!("agent-intercom broker [{level:?}] {}", message());
        }
    }

    fn load(&mut self) {
        let now = now_ms();
        let Some(store) = &self.store else { return };
        let (edges, deliveries) = match (store.load_edges(now), store.load_deliveries(now)) {
            (Ok(e), Ok(d)) => (e, d),
            (Err(e), _) | (_, Err(e)) => {
                self.log(LogLevel::Error, || {
                    format!("cannot load persisted state: {e}")
                });
                return;
            }
        };
        for row in edges {
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
                    state: EdgeState::Deferred,
                },
            );
            if row.state != "deferred" {
                self.persist(|s| s.set_edge_state(&row.from, &row.message_id, "deferred"));
            }
        }
        for row in deliveries {
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
        self.log(LogLevel::Info, || {
            format!(
                "loaded {} ask edges and {} delivery results",
                self.edges.len(),
                self.recent.len()
            )
        });
    }

    fn persist(&self, write: impl FnOnce(&Store) -> Result<(), crate::store::StoreError>) {
        if let Some(store) = &self.store
            && let Err(e) = store.begin()
        {
            self.log(LogLevel::Error, || {
                format!("store transaction failed to start: {e}")
            });
        }
        if let Some(store) = &self.store
            && let Err(e) = write(store)
        {
            self.log(LogLevel::Error, || {
                format!("store write failed (state kept in memory): {e}")
            });
        }
    }

    /// Whether the state task should stop, and why.
    pub fn stopped(&self) -> Option<StopReason> {
        self.stop
    }

    /// The next timer deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.timers.first_key_value().map(|((at, _), _)| *at)
    }

    fn schedule(&mut self, after: Duration, timer: Timer) -> (Instant, u64) {
        self.timer_seq += 1;
        let key = (Instant::now() + after, self.timer_seq);
        self.timers.insert(key, timer);
        key
    }

    fn schedule_at_ms(&mut self, at_ms: i64, timer: Timer) {
        let delay = (at_ms - now_ms()).max(0) as u64;
        let _ = self.schedule(Duration::from_millis(delay), timer);
    }

    fn send(&self, conn: ConnId, bytes: Arc<Vec<u8>>) {
        self.outbox.borrow_mut().push((conn, Out::Frame(bytes)));
    }

    /// Ends a batch of events: commits what the batch stored, then releases the frames it
    /// produced. A frame that reports a durable fact (a delivery result, an ask) therefore
    /// never leaves before the fact is on disk (group commit).
    pub fn flush(&mut self) {
        if let Some(store) = &self.store
            && let Err(e) = store.commit()
        {
            self.log(LogLevel::Error, || {
                format!("store commit failed (state kept in memory): {e}")
            });
        }
        let limit = self.config.max_outbound_bytes;
        let mut slow = Vec::new();
        for (conn, out) in self.outbox.get_mut().drain(..) {
            let Some(c) = self.conns.get_mut(&conn).or_else(|| {
                self.departed
                    .iter_mut()
                    .find(|(id, _)| *id == conn)
                    .map(|(_, c)| c)
            }) else {
                continue;
            };
            if c.closing {
                continue;
            }
            if let Out::Frame(bytes) = &out {
                // A connection that stops reading may not make the broker hold unbounded
                // memory for it: past the limit it is closed as a slow consumer.
                if c.queued.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len() > limit {
                    c.closing = true;
                    c.kill.notify_one();
                    slow.push(conn);
                    continue;
                }
            }
            let _ = c.tx.send(out);
        }
        self.departed.clear();
        for conn in slow {
            self.log(LogLevel::Warn, || {
                format!("connection {conn} closed: it stopped reading ({limit} bytes queued)")
            });
        }
    }

    fn send_value(&self, conn: ConnId, value: Value) {
        self.send(conn, frame(&value));
    }

    fn close(&self, conn: ConnId) {
        self.outbox.borrow_mut().push((conn, Out::Close));
    }

    fn refuse(&self, conn: ConnId, code: &str, message: &str) {
        self.log(LogLevel::Warn, || {
            format!("connection {conn} refused: {code}")
        });
        self.send_value(
            conn,
            json!({ "type": "error", "code": code, "error": message }),
        );
        self.close(conn);
    }

    fn fail_send(&self, conn: ConnId, message_id: &str, accepted: bool, code: &str, reason: &str) {
        self.send_value(
            conn,
            json!({ "type": "delivery_failed", "messageId": message_id, "accepted": accepted, "code": code, "reason": reason }),
        );
    }

    /// Handles one event.
    pub fn handle(&mut self, event: Event) {
        match event {
            Event::Accepted {
                conn,
                tx,
                queued,
                kill,
            } => self.accepted(conn, tx, queued, kill),
            Event::Frame { conn, value } => self.frame(conn, value),
            Event::Reject {
                conn,
                code,
                message,
            } => self.refuse(conn, code, &message),
            Event::Closed { conn } => self.closed(conn),
            Event::Shutdown => self.shutdown(StopReason::Shutdown),
        }
    }

    /// Fires every timer that is due.
    pub fn fire_due_timers(&mut self) {
        let now = Instant::now();
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let timer = entry.remove();
            self.fire(timer);
        }
    }

    fn fire(&mut self, timer: Timer) {
        match timer {
            Timer::Registration(conn, since) => {
                if self
                    .conns
                    .get(&conn)
                    .is_some_and(|c| c.unregistered_since == Some(since))
                {
                    let ms = self.config.registration_timeout.as_millis();
                    self.refuse(
                        conn,
                        error_code::INVALID_REQUEST,
                        &format!("No register frame within {ms} ms"),
                    );
                }
            }
            Timer::DeliveryTimeout(delivery_id) => {
                self.fail_pending(
                    &delivery_id,
                    failure_code::DELIVERY_TIMEOUT,
                    "Recipient did not acknowledge the message in time",
                );
            }
            Timer::AskExpiry(from, message_id, expires_at) => {
                let key = (from, message_id);
                if self
                    .edges
                    .get(&key)
                    .is_some_and(|e| e.expires_at == expires_at)
                {
                    self.remove_edge(&key, Some("expired"));
                }
            }
            Timer::Idle(seq) => {
                if seq == self.idle_seq && self.sessions.is_empty() {
                    self.log(LogLevel::Info, || {
                        "no sessions for the idle period; exiting".into()
                    });
                    self.shutdown(StopReason::Idle);
                }
            }
            Timer::Prune => {
                let now = now_ms();
                self.recent.retain(|_, r| r.expires_at > now);
                self.persist(|s| s.prune_deliveries(now));
                // Hand memory freed after a burst back to the system (glibc keeps it otherwise).
                #[cfg(all(target_os = "linux", target_env = "gnu"))]
                // SAFETY: malloc_trim only releases free heap pages.
                unsafe {
                    libc::malloc_trim(0);
                }
                self.schedule(
                    self.config.recent_delivery_ttl.min(Duration::from_secs(60)),
                    Timer::Prune,
                );
            }
        }
    }

    fn arm_idle(&mut self) {
        if let Some(after) = self.config.idle_exit
            && self.sessions.is_empty()
        {
            self.idle_seq += 1;
            self.schedule(after, Timer::Idle(self.idle_seq));
        }
    }

    fn shutdown(&mut self, reason: StopReason) {
        for conn in self.conns.keys() {
            self.close(*conn);
        }
        self.stop = Some(reason);
    }

    fn accepted(
        &mut self,
        conn: ConnId,
        tx: mpsc::UnboundedSender<Out>,
        queued: Arc<AtomicUsize>,
        kill: Arc<tokio::sync::Notify>,
    ) {
        self.conns.insert(
            conn,
            Conn {
                tx,
                queued,
                kill,
                closing: false,
                binding: None,
                unregistered_since: None,
            },
        );
        self.arm_registration(conn);
    }

    fn arm_registration(&mut self, conn: ConnId) {
        let since = self.next_seq;
        self.next_seq += 1;
        if let Some(c) = self.conns.get_mut(&conn) {
            c.unregistered_since = Some(since);
        }
        self.unregistered.push_back((conn, since));
        self.schedule(
            self.config.registration_timeout,
            Timer::Registration(conn, since),
        );
        // Hold at most max_unregistered connections that have not registered: evict the oldest.
        let mut live = self
            .unregistered
            .iter()
            .filter(|(c, s)| {
                self.conns
                    .get(c)
                    .is_some_and(|x| x.unregistered_since == Some(*s))
            })
            .count();
        while live > self.config.max_unregistered {
            let Some((oldest, since)) = self.unregistered.pop_front() else {
                break;
            };
            if self
                .conns
                .get(&oldest)
                .is_some_and(|x| x.unregistered_since == Some(since))
            {
                if let Some(c) = self.conns.get_mut(&oldest) {
                    c.unregistered_since = None;
                }
                self.refuse(
                    oldest,
                    error_code::INVALID_REQUEST,
                    "Too many connections waiting to register; closing the oldest",
                );
                live -= 1;
            }
        }
        // Forget queue entries of connections that registered or left.
        while let Some((c, s)) = self.unregistered.front() {
            if self
                .conns
                .get(c)
                .is_some_and(|x| x.unregistered_since == Some(*s))
            {
                break;
            }
            self.unregistered.pop_front();
        }
    }

    fn closed(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        let binding = c.binding.clone();
        // Frames already produced for it in this batch (an error frame, say) still go out.
        self.departed.push((conn, c));
        if let Some((id, generation)) = binding
            && self
                .sessions
                .get(&id)
                .is_some_and(|e| e.conn == conn && e.generation == generation)
        {
            self.log(LogLevel::Info, || format!("session {id} disconnected"));
            self.session_gone(&id, conn, None);
        }
    }

    /// A session leaves: left to its audience, pending deliveries failed, asks deferred (or
    /// cancelled with `cancel_reason`).
    fn session_gone(&mut self, id: &str, conn: ConnId, cancel_reason: Option<&str>) {
        self.broadcast_about(
            id,
            frame(&json!({ "type": "session_left", "sessionId": id })),
        );
        self.remove_session(id);
        self.fail_pending_of(id, conn);
        match cancel_reason {
            Some(reason) => self.cancel_edges_of(id, reason),
            None => self.defer_edges_of(id),
        }
        self.arm_idle();
    }

    /// Sends `message` to everyone who hears lifecycle events about `subject_id`.
    fn broadcast_about(&self, subject_id: &str, bytes: Arc<Vec<u8>>) {
        let Some(subject) = self.sessions.get(subject_id) else {
            return;
        };
        let subject_scope = subject.scope_id();
        for id in self
            .by_scope
            .get(&subject.scope)
            .into_iter()
            .flat_map(|b| b.values())
        {
            let entry = &self.sessions[id];
            let candidate = Session {
                id,
                name: entry.name.as_deref(),
                scope: entry.scope_id(),
            };
            if routing::hears(subject_id, subject_scope, &candidate) {
                self.send(entry.conn, bytes.clone());
            }
        }
    }

    fn frame(&mut self, conn: ConnId, value: Value) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        if let Some((id, generation)) = &c.binding {
            let current = self.sessions.get(id).map(|e| e.generation);
            if routing::frame_disposition(*generation, current) == FrameDisposition::Discard {
                // A frame from a superseded connection: dropped, nothing emitted.
                self.close(conn);
                return;
            }
        }
        let bound = c.binding.as_ref().map(|(id, _)| id.clone());
        let parsed = match wire::parse_client_frame(&value, &self.config) {
            Ok(f) => f,
            Err(Rejection { code, message }) => return self.refuse(conn, code, &message),
        };
        if let ClientFrame::Health { request_id } = &parsed {
            return self.send_value(
                conn,
                json!({
                    "type": "health_ok",
                    "requestId": request_id,
                    "protocol": agent_intercom_core::protocol::PROTOCOL_NAME,
                    "version": agent_intercom_core::protocol::PROTOCOL_VERSION,
                    "endpoint": "local",
                    "remoteAccess": wire::remote_access_contract(),
                }),
            );
        }
        if let ClientFrame::AccessControl = parsed {
            return self.refuse(
                conn,
                error_code::ACCESS_DENIED,
                "Remote access administration is not served by this broker",
            );
        }
        match (parsed, bound) {
            (ClientFrame::Register(register), None) => self.register(conn, *register),
            (ClientFrame::Register(_), Some(_)) => self.refuse(
                conn,
                error_code::INVALID_REQUEST,
                "Received duplicate register message",
            ),
            (other, None) => {
                let kind = value
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .chars()
                    .take(64)
                    .collect::<String>();
                let _ = other;
                self.refuse(
                    conn,
                    error_code::INVALID_REQUEST,
                    &format!("Received {kind} before register"),
                );
            }
            (ClientFrame::Unregister { preserve_asks }, Some(id)) => {
                self.session_gone(
                    &id,
                    conn,
                    if preserve_asks {
                        None
                    } else {
                        Some("session_disconnected")
                    },
                );
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.binding = None;
                }
                self.arm_registration(conn);
            }
            (ClientFrame::List { request_id }, Some(id)) => self.list(conn, &id, &request_id),
            (ClientFrame::Send(send), Some(id)) => self.send_message(conn, &id, *send),
            (
                ClientFrame::InvalidSend {
                    message_id,
                    code,
                    reason,
                },
                Some(_),
            ) => self.fail_send(conn, &message_id, false, code, &reason),
            (ClientFrame::MessageReceived { delivery_id }, Some(id)) => {
                self.acknowledge(conn, &id, &delivery_id)
            }
            (
                ClientFrame::MessageRejected {
                    delivery_id,
                    reason,
                },
                Some(id),
            ) => {
                if self
                    .pending
                    .get(&delivery_id)
                    .is_some_and(|p| p.to == id && p.to_conn == conn)
                {
                    self.fail_pending(&delivery_id, failure_code::CONFLICTING_MESSAGE_ID, &reason);
                }
            }
            (
                ClientFrame::AskControl {
                    cancel,
                    request_id,
                    message_id,
                },
                Some(id),
            ) => self.ask_control(conn, &id, cancel, &request_id, &message_id),
            (
                ClientFrame::Presence {
                    name,
                    status,
                    model,
                },
                Some(id),
            ) => self.presence(&id, name, status, model),
            (ClientFrame::Health { .. } | ClientFrame::AccessControl, Some(_)) => {
                unreachable!("answered above")
            }
        }
    }

    fn register(&mut self, conn: ConnId, register: Register) {
        let id = register
            .session_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let record = &register.session;
        let previous = self.sessions.get(&id);
        if previous.is_none() && self.sessions.len() >= self.config.max_sessions {
            return self.refuse(
                conn,
                error_code::TOO_MANY_SESSIONS,
                "Too many registered intercom sessions",
            );
        }
        if let Some(prev) = previous {
            let same_runtime =
                if prev.runtime_instance_id.is_some() || record.runtime_instance_id.is_some() {
                    prev.runtime_instance_id.is_some()
                        && prev.runtime_instance_id == record.runtime_instance_id
                } else {
                    prev.pid == number_f64(&record.pid)
                        && prev.started_at == number_f64(&record.started_at)
                };
            if !same_runtime {
                return self.refuse(
                    conn,
                    error_code::SESSION_ID_IN_USE,
                    &format!("Session ID \"{id}\" is already active in another local runtime; close the existing session or use a different session ID"),
                );
            }
        }
        let generation = self.next_seq;
        self.next_seq += 1;
        let mut entry = Some(Entry {
            conn,
            generation,
            seq: generation,
            scope: register.scope.clone(),
            runtime_instance_id: record.runtime_instance_id.clone(),
            pid: number_f64(&record.pid),
            started_at: number_f64(&record.started_at),
            name: record.name.clone(),
            status: record.status.clone(),
            model: record.model.clone(),
            cwd: record.cwd.clone(),
            pid_json: record.pid.clone(),
            started_json: record.started_at.clone(),
            last_activity: Value::Number(record.last_activity.clone()),
            last_presence: Instant::now(),
            info_text: String::new(),
        });
        if let Some(e) = entry.as_mut() {
            e.refresh(&id);
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.binding = Some((id.clone(), generation));
            c.unregistered_since = None;
        }
        let old = self.sessions.get(&id).map(|p| (p.conn, p.scope.clone()));
        let new_scope = register.scope.clone();
        match old {
            Some((old_conn, old_scope)) => {
                // Replacement: the plan orders old-scope `left` strictly before new-scope `joined`.
                let plan = routing::plan_replacement(
                    &id,
                    old_scope.as_deref().and_then(ScopeId::parse),
                    new_scope.as_deref().and_then(ScopeId::parse),
                );
                for event in plan.events {
                    match event.kind {
                        LifecycleKind::Left => {
                            self.broadcast_about(
                                &id,
                                frame(&json!({ "type": "session_left", "sessionId": id })),
                            );
                            self.fail_pending_of(&id, old_conn);
                            self.defer_edges_of(&id);
                            self.install(&id, entry.take().expect("one left event"));
                            self.registered(conn, &id);
                        }
                        LifecycleKind::Joined => {
                            let joined = format!(
                                r#"{{"type":"session_joined","session":{}}}"#,
                                self.sessions[&id].info_text
                            );
                            self.broadcast_about(&id, text_frame(&joined));
                        }
                    }
                }
                self.close(old_conn);
                self.log(LogLevel::Info, || {
                    format!("session {id} replaced its connection")
                });
            }
            None => {
                self.install(&id, entry.take().expect("installed once"));
                self.registered(conn, &id);
                let joined = format!(
                    r#"{{"type":"session_joined","session":{}}}"#,
                    self.sessions[&id].info_text
                );
                self.broadcast_about(&id, text_frame(&joined));
                self.log(LogLevel::Info, || format!("session {id} registered"));
            }
        }
        self.idle_seq += 1; // cancels a pending idle exit
    }

    /// Removes a session and its place in its scope's index.
    fn remove_session(&mut self, id: &str) {
        if let Some(old) = self.sessions.remove(id)
            && let Some(bucket) = self.by_scope.get_mut(&old.scope)
        {
            bucket.remove(&old.seq);
            if bucket.is_empty() {
                self.by_scope.remove(&old.scope);
            }
        }
    }

    fn install(&mut self, id: &str, entry: Entry) {
        self.remove_session(id);
        self.by_scope
            .entry(entry.scope.clone())
            .or_default()
            .insert(entry.seq, id.to_string());
        self.sessions.insert(id.to_string(), entry);
    }

    fn registered(&self, conn: ConnId, id: &str) {
        self.send_value(
            conn,
            json!({
                "type": "registered",
                "sessionId": id,
                "protocol": agent_intercom_core::protocol::PROTOCOL_NAME,
                "version": agent_intercom_core::protocol::PROTOCOL_VERSION,
            }),
        );
    }

    fn list(&self, conn: ConnId, actor: &str, request_id: &str) {
        let Some(me) = self.sessions.get(actor) else {
            return;
        };
        let actor_scope = me.scope_id();
        let sessions: Vec<&str> = self
            .by_scope
            .get(&me.scope)
            .into_iter()
            .flat_map(|b| b.values())
            .filter(|id| {
                let e = &self.sessions[*id];
                routing::lists(
                    actor,
                    actor_scope,
                    &Session {
                        id,
                        name: e.name.as_deref(),
                        scope: e.scope_id(),
                    },
                )
            })
            .map(|id| self.sessions[id].info_text.as_str())
            .collect::<Vec<_>>();
        let text = format!(
            r#"{{"type":"sessions","requestId":{},"sessions":[{}]}}"#,
            js(request_id),
            sessions.join(",")
        );
        self.send(conn, text_frame(&text));
    }

    fn presence(
        &mut self,
        id: &str,
        name: Option<String>,
        status: Option<String>,
        model: Option<String>,
    ) {
        let heartbeat = self.config.presence_heartbeat;
        let Some(e) = self.sessions.get_mut(id) else {
            return;
        };
        let mut changed = false;
        if let Some(name) = name
            && e.name.as_deref() != Some(name.as_str())
        {
            e.name = Some(name);
            changed = true;
        }
        if let Some(status) = status
            && e.status.as_deref() != Some(status.as_str())
        {
            e.status = Some(status);
            changed = true;
        }
        if let Some(model) = model
            && e.model != model
        {
            e.model = model;
            changed = true;
        }
        e.last_activity = json!(now_ms());
        let now = Instant::now();
        if changed || now.duration_since(e.last_presence) >= heartbeat {
            e.last_presence = now;
        }
        e.refresh(id);
        if e.last_presence == now {
            let update = format!(r#"{{"type":"presence_update","session":{}}}"#, e.info_text);
            self.broadcast_about(id, text_frame(&update));
        }
    }

    fn send_message(&mut self, conn: ConnId, actor: &str, send: wire::Send) {
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

    fn acknowledge(&mut self, conn: ConnId, actor: &str, delivery_id: &str) {
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

    fn fail_pending(&mut self, delivery_id: &str, code: &str, reason: &str) {
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

    fn fail_pending_of(&mut self, id: &str, conn: ConnId) {
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

    fn add_edge(&mut self, from: &str, message_id: &str, to: &str) {
        let created_at = now_ms();
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
                state: EdgeState::Blocking,
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

    /// Removes an edge; with a reason, tells the asked session it was cancelled.
    fn remove_edge(&mut self, key: &(String, String), reason: Option<&str>) {
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
        }
        let _ = edge.created_at;
    }

    fn notify_cancelled(&self, session: &str, message_id: &str, from: &str, reason: &str) {
        if let Some(e) = self.sessions.get(session) {
            self.send_value(e.conn, json!({ "type": "ask_cancelled", "messageId": message_id, "fromSessionId": from, "reason": reason }));
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

    fn defer_edges_of(&mut self, id: &str) {
        let keys: Vec<(String, String)> = self
            .edges
            .iter()
            .filter(|((from, _), e)| (from == id || e.to == id) && e.state == EdgeState::Blocking)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            let edge = self.edges.get_mut(&key).expect("listed");
            edge.state = EdgeState::Deferred;
            let to = edge.to.clone();
            self.persist(|s| s.set_edge_state(&key.0, &key.1, EdgeState::Deferred.as_str()));
            if key.0 == id {
                self.notify_deferred(&to, &key.1, &key.0);
            }
        }
    }

    fn cancel_edges_of(&mut self, id: &str, reason: &str) {
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
        }
    }

    fn ask_control(
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
                self.remove_edge(&key, Some("cancelled"));
            } else {
                let edge = self.edges.get_mut(&key).expect("checked");
                if edge.state == EdgeState::Blocking {
                    edge.state = EdgeState::Deferred;
                    let to = edge.to.clone();
                    self.persist(|s| {
                        s.set_edge_state(&key.0, &key.1, EdgeState::Deferred.as_str())
                    });
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn register(id: &str, runtime: &str, scope: Option<&str>) -> Value {
        let mut f = json!({ "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": id,
            "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1, "runtimeInstanceId": runtime } });
        if let Some(scope) = scope {
            f["scopeId"] = json!(scope);
        }
        f
    }

    fn outputs(rx: &mut mpsc::UnboundedReceiver<Out>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(o) = rx.try_recv() {
            out.push(match o {
                Out::Frame(bytes) => serde_json::from_slice::<Value>(&bytes[4..]).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                Out::Close => "CLOSE".into(),
            });
        }
        out
    }

    /// Frames that were already in flight on a superseded connection when the replacement
    /// happened are discarded: no answer, no broadcast, and the connection is closed.
    #[test]
    fn late_frames_from_a_superseded_connection_are_discarded() {
        let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
        config.idle_exit = None;
        config.log_level = LogLevel::Off;
        let mut state = State::new(config, None);
        let mut rxs = Vec::new();
        for conn in 1..=3 {
            let (tx, rx) = mpsc::unbounded_channel();
            state.handle(Event::Accepted {
                conn,
                tx,
                queued: Default::default(),
                kill: Default::default(),
            });
            rxs.push(rx);
        }
        state.handle(Event::Frame {
            conn: 3,
            value: register("watcher", "w", Some("Scope_AAAAAAAAAA")),
        });
        state.handle(Event::Frame {
            conn: 1,
            value: register("mover", "rt", Some("Scope_AAAAAAAAAA")),
        });
        state.handle(Event::Frame {
            conn: 2,
            value: register("mover", "rt", Some("Scope_BBBBBBBBBB")),
        });
        state.flush();
        for rx in rxs.iter_mut() {
            outputs(rx);
        }
        let late = [
            json!({ "type": "list", "requestId": "late" }),
            json!({ "type": "presence", "status": "late" }),
            json!({ "type": "send", "to": "watcher", "message": { "id": "late", "timestamp": 1, "content": { "text": "x" } } }),
            json!({ "type": "defer_ask", "requestId": "late", "messageId": "none" }),
        ];
        for frame in late {
            state.handle(Event::Frame {
                conn: 1,
                value: frame,
            });
        }
        state.flush();
        assert_eq!(outputs(&mut rxs[0]), vec!["CLOSE"; 4]);
        assert!(
            outputs(&mut rxs[1]).is_empty(),
            "the new binding hears nothing"
        );
        assert!(
            outputs(&mut rxs[2]).is_empty(),
            "the old scope hears nothing more"
        );
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;

    #[test]
    fn a_rejected_connection_gets_its_frames_in_order_even_when_it_closes_in_the_same_batch() {
        let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
        config.idle_exit = None;
        config.log_level = LogLevel::Off;
        let mut state = State::new(config, None);
        let (tx, mut rx) = mpsc::unbounded_channel();
        state.handle(Event::Accepted {
            conn: 1,
            tx,
            queued: Default::default(),
            kill: Default::default(),
        });
        state.handle(Event::Frame {
            conn: 1,
            value: json!({ "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": "a",
                "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1 } }),
        });
        state.flush();
        while rx.try_recv().is_ok() {}
        state.handle(Event::Frame {
            conn: 1,
            value: json!({ "type": "list", "requestId": "r0" }),
        });
        state.handle(Event::Reject {
            conn: 1,
            code: "RATE_LIMITED",
            message: "slow down".into(),
        });
        state.handle(Event::Closed { conn: 1 });
        state.flush();
        let mut kinds = Vec::new();
        while let Ok(out) = rx.try_recv() {
            kinds.push(match out {
                Out::Frame(bytes) => serde_json::from_slice::<Value>(&bytes[4..]).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                Out::Close => "CLOSE".into(),
            });
        }
        assert_eq!(kinds, vec!["sessions", "error", "CLOSE"]);
    }
}
