//! The broker's state machine. One task owns all state and handles events in order, which makes
//! every ordering guarantee (replacement, acknowledgement, ask threading) a matter of sequence.
//! Protocol rules come from `agent_intercom_core`; this module adds connections, state and time.
//!
//! This file holds the state, the event and frame dispatch, timers and the batch flush;
//! `sessions` registration, presence and lifecycle broadcasts; `delivery` sends, acknowledgements
//! and duplicate suppression; `asks` the open asks; `queue` the opt-in extensions (the offline
//! queue, read receipts, `delivery_status`); `remote` remote access (the gateway's
//! registrations, `access_control`, the policy kernel over the live sessions, expiry); `watch`
//! the administrator's snapshot and the traffic counters; `clock` where time comes from.

use agent_intercom_core::asks::CancelReason;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_intercom_core::routing::{self, FrameDisposition};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::config::{BrokerConfig, LogLevel};

/// The state's maps, keyed by session, delivery and message ids and read on every frame: hashed
/// with foldhash (seeded at random per process, as std's SipHash is, so keys a client chooses
/// cannot be aimed at one bucket) rather than SipHash, which was a twentieth of the broker's
/// profile.
pub(super) type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Past this `max_recent_in_memory`, the results' map is not reserved whole at start.
const RECENT_ROOM_CAP: usize = 1 << 17;
use crate::store::Store;
use crate::wire::{self, ClientFrame, Rejection, error_code, failure_code};

mod asks;
mod clock;
mod delivery;
mod queue;
mod records;
mod remote;
mod sessions;
mod watch;

use asks::Edge;
pub use clock::{Clock, SystemClock};
use delivery::Recent;
use records::Pending;
use remote::Access;
use sessions::Entry;

/// Which socket a connection came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The local socket (`broker.sock`).
    Local,
    /// The remote-access gateway (`remote-gateway.sock`).
    Remote,
}

impl Origin {
    /// `health_ok.endpoint`.
    pub const fn endpoint(self) -> &'static str {
        match self {
            Origin::Local => wire::LOCAL_ENDPOINT,
            Origin::Remote => "remote",
        }
    }
}

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
        /// The socket it came through.
        origin: Origin,
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
    /// A plain `message_received` frame, read by [`crate::fast::parse_ack`].
    Acknowledged {
        /// From which connection.
        conn: ConnId,
        /// The delivery acknowledged.
        delivery_id: String,
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

impl StopReason {
    /// Every reason.
    pub const ALL: [StopReason; 3] = [StopReason::Shutdown, StopReason::Idle, StopReason::Failed];

    /// What an embedding reports when asked to stop a broker it already stopped (Node's second
    /// `Broker.close()`); not a reason the broker itself gives.
    pub const ALREADY_STOPPED: &'static str = "AlreadyStopped";

    /// The reason's name, as embeddings report it (Node's `Broker.close()` returns it).
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::Idle => "Idle",
            StopReason::Shutdown => "Shutdown",
            StopReason::Failed => "Failed",
        }
    }
}

struct Conn {
    origin: Origin,
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

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Registration(ConnId, u64),
    DeliveryTimeout(String),
    AskExpiry(String, String, i64),
    QueueExpiry(String),
    Idle(u64),
    Prune,
    AccessSweep(u64),
}

/// The broker state.
pub struct State {
    config: BrokerConfig,
    clock: Box<dyn Clock>,
    store: Option<Store>,
    conns: Map<ConnId, Conn>,
    unregistered: VecDeque<(ConnId, u64)>,
    sessions: Map<String, Entry>,
    by_scope: Map<Option<String>, BTreeMap<u64, String>>,
    pending: Map<String, Pending>,
    pending_by_key: Map<(String, String), String>,
    pending_from: Map<String, usize>,
    /// Pending deliveries handed out from the offline queue.
    pending_from_queue: usize,
    /// The offline queue.
    queue: queue::Queue,
    /// Delivery results kept in memory (a bounded cache: all of them are in the store).
    recent: Map<(String, String), Recent>,
    /// Insertion order of `recent`, for evicting the oldest past the bound.
    recent_order: VecDeque<(u64, (String, String))>,
    /// The last place given in `recent_order`.
    recent_seq: u64,
    /// Set once a result left memory: from then on a miss is looked up in the store.
    recent_evicted: bool,
    edges: Map<(String, String), Edge>,
    edge_by_pair: Map<(String, String), String>,
    edges_from: Map<String, usize>,
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
    /// The remote-access registry and audit log (None: remote access is not served).
    access: Option<Access>,
    /// Live sessions that are remote principals (0: every decision is local-public).
    remote_live: usize,
    /// The pending expiry sweep: its deadline and sequence.
    sweep: Option<(Instant, u64)>,
    /// On TCP: the `stateId` of `broker.port.json`, which `health` and `register` must carry.
    state_id: Option<String>,
    /// Accepted sends and asks per interval, and the start time (`watch`).
    traffic: watch::Traffic,
}

fn frame(value: &Value) -> Arc<Vec<u8>> {
    Arc::new(wire::encode(value))
}

/// A frame from JSON text built by hand on hot paths (the parts are already valid JSON).
fn text_frame(text: &str) -> Arc<Vec<u8>> {
    Arc::new(wire::text_frame(text))
}

/// A JSON string literal.
fn js(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

impl State {
    /// A state over an open store (None keeps everything in memory), loading persisted asks (as
    /// deferred) and delivery results.
    pub fn new(config: BrokerConfig, store: Option<Store>) -> State {
        State::with_clock(config, store, Box::new(SystemClock))
    }

    /// [`State::new`] with time from `clock`.
    pub fn with_clock(config: BrokerConfig, store: Option<Store>, clock: Box<dyn Clock>) -> State {
        let traffic = watch::Traffic::new(clock.now());
        // Room for twice the bound at once: at the bound every result remembered evicts the
        // oldest, and a hash table about three quarters full leaves a tombstone for most
        // removals, until it has to grow (copying every entry, on the broker's one thread:
        // measured, a 12 ms stall for 50,000 results). Twice the room keeps it under two fifths
        // full, where removals free their slots. Its memory is what that growth would have
        // taken anyway (about 19 MB at the default bound, in use once the bound is reached).
        let recent_room = 2 * config.max_recent_in_memory.min(RECENT_ROOM_CAP);
        let mut state = State {
            config,
            clock,
            store,
            conns: Map::default(),
            unregistered: VecDeque::new(),
            sessions: Map::default(),
            by_scope: Map::default(),
            pending: Map::default(),
            pending_by_key: Map::default(),
            pending_from: Map::default(),
            pending_from_queue: 0,
            queue: queue::Queue::default(),
            recent: Map::with_capacity_and_hasher(recent_room, Default::default()),
            recent_order: VecDeque::new(),
            recent_seq: 0,
            recent_evicted: false,
            edges: Map::default(),
            edge_by_pair: Map::default(),
            edges_from: Map::default(),
            timers: BTreeMap::new(),
            timer_seq: 0,
            outbox: std::cell::RefCell::new(Vec::new()),
            departed: Vec::new(),
            next_seq: 1,
            idle_seq: 0,
            stop: None,
            access: None,
            remote_live: 0,
            sweep: None,
            state_id: None,
            traffic,
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
            crate::log::line(format_args!(
                "agent-intercom broker [{level:?}] {}",
                message()
            ));
        }
    }

    fn load(&mut self) {
        let now = self.clock.now_ms();
        let Some(store) = &self.store else { return };
        let loaded = (|| {
            let edges = store.load_edges(now)?;
            let deliveries = store.load_deliveries(now)?;
            let queued = store.load_queued()?;
            store.settle_stale_statuses()?;
            Ok::<_, crate::store::StoreError>((edges, deliveries, queued))
        })();
        let (edges, deliveries, queued) = match loaded {
            Ok(loaded) => loaded,
            Err(e) => {
                self.log(LogLevel::Error, || {
                    format!("cannot load persisted state: {e}")
                });
                return;
            }
        };
        let queued_count = queued.len();
        self.restore_edges(edges);
        self.restore_results(deliveries);
        self.restore_queue(queued);
        self.log(LogLevel::Info, || {
            format!(
                "loaded {} ask edges, {} delivery results and {queued_count} queued messages",
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

    /// Requires `health` and `register` to carry this `stateId` (the TCP transport: a frame
    /// without it is dropped unanswered and its connection closed).
    pub fn require_state_id(&mut self, state_id: String) {
        self.state_id = Some(state_id);
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
        let key = (self.clock.now() + after, self.timer_seq);
        self.timers.insert(key, timer);
        key
    }

    fn schedule_at_ms(&mut self, at_ms: i64, timer: Timer) {
        let delay = (at_ms - self.clock.now_ms()).max(0) as u64;
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
            json!({
                "type": "delivery_failed",
                "messageId": message_id,
                "accepted": accepted,
                "code": code,
                "reason": reason,
            }),
        );
    }

    /// Handles one event.
    pub fn handle(&mut self, event: Event) {
        match event {
            Event::Accepted {
                conn,
                origin,
                tx,
                queued,
                kill,
            } => self.accepted(conn, origin, tx, queued, kill),
            Event::Frame { conn, value } => self.frame(conn, value),
            Event::Acknowledged { conn, delivery_id } => self.acknowledged(conn, delivery_id),
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
        let now = self.clock.now();
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
                    self.remove_edge(&key, Some(CancelReason::Expired.as_str()));
                }
            }
            Timer::QueueExpiry(delivery_id) => self.expire_queued(&delivery_id),
            Timer::Idle(seq) => {
                if seq == self.idle_seq && self.sessions.is_empty() {
                    self.log(LogLevel::Info, || {
                        "no sessions for the idle period; exiting".into()
                    });
                    self.shutdown(StopReason::Idle);
                }
            }
            Timer::Prune => {
                let now = self.clock.now_ms();
                self.recent.retain(|_, r| r.expires_at > now);
                self.persist(|s| s.prune_deliveries(now));
                let retention = self.config.offline_retention.as_millis() as i64;
                self.persist(|s| s.prune_offline(now, now - retention));
                // Connected sessions stay known however long they stay (a kill -9 of the
                // broker does not let them go unseen).
                for (id, e) in &self.sessions {
                    self.touch_session(id, e.remote.is_some());
                }
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
            Timer::AccessSweep(seq) => {
                if self.sweep.is_some_and(|(_, s)| s == seq) {
                    self.sweep = None;
                    self.expire_principals();
                }
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
        origin: Origin,
        tx: mpsc::UnboundedSender<Out>,
        queued: Arc<AtomicUsize>,
        kill: Arc<tokio::sync::Notify>,
    ) {
        self.conns.insert(
            conn,
            Conn {
                origin,
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
            self.audit_remote_disconnect(&id, "SOCKET_CLOSED");
            self.session_gone(&id, conn, None);
        }
    }

    fn frame(&mut self, conn: ConnId, mut value: Value) {
        let Some((origin, bound)) = self.sender(conn) else {
            return;
        };
        // The Pi broker's order: the frame's type; health and access_control answered first;
        // anything but a register before registering refused; a remote session's principal
        // re-checked; and only then the frame read in full.
        let kind = match wire::frame_kind(&value) {
            Ok(kind) => kind,
            Err(Rejection { code, message }) => return self.refuse(conn, code, &message),
        };
        if !self.screen(conn, kind, &value, bound.as_deref()) {
            return;
        }
        // A send's message moves into the parsed frame (dispatch reads `value` only for the
        // kinds that keep theirs: access_control and register).
        match wire::parse_client_frame_owned(&mut value, &self.config) {
            Ok(parsed) => self.dispatch(conn, origin, bound, parsed, &value),
            Err(Rejection { code, message }) => self.refuse(conn, code, &message),
        }
    }

    /// Who sent a frame on `conn`: the socket it came through and the session it is bound to.
    /// None when the connection is gone, or when it is a superseded connection of its session:
    /// then the frame is dropped, nothing emitted, and the connection closed.
    fn sender(&self, conn: ConnId) -> Option<(Origin, Option<String>)> {
        let c = self.conns.get(&conn)?;
        if let Some((id, generation)) = &c.binding {
            let current = self.sessions.get(id).map(|e| e.generation);
            if routing::frame_disposition(*generation, current) == FrameDisposition::Discard {
                self.close(conn);
                return None;
            }
        }
        Some((c.origin, c.binding.as_ref().map(|(id, _)| id.clone())))
    }

    /// The checks before a frame of `kind` is read in full; false when it was refused (or the
    /// connection closed). Health and access_control frames may come before registering.
    fn screen(&self, conn: ConnId, kind: &str, value: &Value, bound: Option<&str>) -> bool {
        if matches!(kind, "health" | "register")
            && let Some(expected) = &self.state_id
            && value.get("stateId").and_then(Value::as_str) != Some(expected.as_str())
        {
            // Not a client of this broker's endpoint file: nothing is said to it.
            self.log(LogLevel::Warn, || {
                format!("connection {conn} dropped: no valid stateId")
            });
            self.close(conn);
            return false;
        }
        if matches!(kind, "health" | "access_control") {
            return true;
        }
        if bound.is_none() && kind != "register" {
            let kind: String = kind.chars().take(64).collect();
            let message = format!("Received {kind} before register");
            self.refuse(conn, error_code::INVALID_REQUEST, &message);
            return false;
        }
        // Every frame of a remote session re-checks its principal: revoked, expired or fenced by
        // a newer generation, the session is over.
        if let Some(id) = bound
            && !self.is_current_principal(id)
        {
            let message = "Remote session authorization is no longer valid";
            self.refuse(conn, error_code::ACCESS_DENIED, message);
            return false;
        }
        true
    }

    /// A frame past its checks, to the handler of its kind (`bound`: the connection's session).
    fn dispatch(
        &mut self,
        conn: ConnId,
        origin: Origin,
        bound: Option<String>,
        parsed: ClientFrame,
        value: &Value,
    ) {
        match (parsed, bound) {
            (
                ClientFrame::Health {
                    request_id,
                    extensions,
                },
                _,
            ) => self.health_ok(conn, origin, &request_id, extensions),
            (ClientFrame::AccessControl, None) => self.access_control(conn, origin, value),
            (ClientFrame::AccessControl, Some(_)) => self.refuse(
                conn,
                error_code::ACCESS_DENIED,
                "Remote access control requires a short-lived control connection",
            ),
            (ClientFrame::Register(register), None) => match origin {
                Origin::Local => self.register(conn, *register),
                Origin::Remote => self.register_remote(conn, *register, value.get("access")),
            },
            (ClientFrame::Register(_), Some(_)) => self.refuse(
                conn,
                error_code::INVALID_REQUEST,
                "Received duplicate register message",
            ),
            // Refused by `screen` (only a register comes before registering); kept total.
            (_, None) => self.refuse(
                conn,
                error_code::INVALID_REQUEST,
                "Received a frame before register",
            ),
            (ClientFrame::Unregister { preserve_asks }, Some(id)) => {
                self.unregister(conn, &id, preserve_asks)
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
            ) => self.reject(conn, &id, &delivery_id, &reason),
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
            (ClientFrame::MessageRead { delivery_id }, Some(id)) => {
                self.message_read(conn, &id, &delivery_id)
            }
            (
                ClientFrame::DeliveryStatus {
                    request_id,
                    message_id,
                },
                Some(id),
            ) => self.delivery_status(conn, &id, &request_id, &message_id),
        }
    }

    /// `health_ok`: what this broker speaks, and where (the socket `origin`).
    fn health_ok(&self, conn: ConnId, origin: Origin, request_id: &str, extensions: bool) {
        let mut answer = json!({
            "type": "health_ok",
            "requestId": request_id,
            "protocol": agent_intercom_core::protocol::PROTOCOL_NAME,
            "version": agent_intercom_core::protocol::PROTOCOL_VERSION,
            "endpoint": origin.endpoint(),
            "remoteAccess": wire::remote_access_contract(),
        });
        // Only for a client that asked: the adapters' health answer stays byte for byte.
        if extensions {
            answer["extensions"] = json!(wire::EXTENSIONS);
        }
        self.send_value(conn, answer);
    }

    /// The session `id` ends (its asks cancelled unless `preserve_asks`); the connection stays,
    /// waiting to register again.
    fn unregister(&mut self, conn: ConnId, id: &str, preserve_asks: bool) {
        self.audit_remote_disconnect(id, "UNREGISTERED");
        let cancel = (!preserve_asks).then_some(CancelReason::SessionDisconnected.as_str());
        self.session_gone(id, conn, cancel);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.binding = None;
        }
        self.arm_registration(conn);
    }
}

#[cfg(test)]
mod tests;
