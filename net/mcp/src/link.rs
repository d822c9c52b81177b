//! The broker link of one MCP session. It registers at start with the session's identity and
//! scope, keeps one connection (connecting again with the same identity and scope after the
//! broker restarts), commits every delivered message to the inbox **before** it tells the broker
//! the message arrived, sends the outbox again after each registration, and hands the broker's
//! answers to whoever waits for them.
//!
//! One thread reads the broker (the blocking [`Client`], the same client the C ABI uses); the
//! tools send from the async side (the client is thread-safe) and wait on channels.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use agent_intercom_broker::BrokerConfig;
use agent_intercom_broker::client::Client;
use agent_intercom_broker::client::rules::RegisterRequest;
use agent_intercom_broker::config::DEFAULT_MAX_FRAME_BYTES;
use agent_intercom_broker::wire::ClientFrame;
use agent_intercom_core::{Error, ErrorCode};
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot, watch};

use crate::inbox::{ASK_CANCELLED, Inbox, Receipt, Stored};

/// Who this session is: sent in every registration, unchanged across reconnects.
#[derive(Clone, Debug)]
pub struct Identity {
    /// The full session id.
    pub session_id: String,
    /// The name other sessions address it by.
    pub name: String,
    /// The working directory.
    pub cwd: String,
    /// The model (or harness) it reports.
    pub model: String,
    /// `AGENT_INTERCOM_SCOPE_ID` as read once at start (`None`: unscoped).
    pub scope: Option<String>,
    /// This process.
    pub pid: u32,
    /// When this process started, ms since the epoch.
    pub started_at: i64,
}

/// How the link reaches a broker.
#[derive(Clone, Debug)]
pub struct Reach {
    /// The broker's socket.
    pub socket: PathBuf,
    /// How to start one when none answers: a program run as `PROGRAM broker [--agent-dir DIR]`
    /// in its own process group (it outlives this server); `None`: never start one.
    pub start: Option<(PathBuf, Option<PathBuf>)>,
}

/// How a send ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Settled {
    /// The receiver acknowledged it.
    Delivered,
    /// The broker queued it for its recipient, which is away (the offline queue, opt-in): the
    /// broker holds it durably from now on.
    Queued,
    /// The broker refused it: its code and reason.
    Failed(String, String),
}

/// The opt-in delivery options of a send (docs/hub.md); only for a broker that speaks them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Wait in the broker's offline queue when the recipient (a full id) is away.
    pub queue: bool,
    /// Have the broker say when the recipient's model was shown it.
    pub receipts: bool,
}

/// What a waiter gets.
enum Answer {
    Settled(Settled),
    Frame(Value),
}

/// Shared between the reader thread and the tools.
struct Shared {
    identity: Identity,
    reach: Reach,
    inbox: Mutex<Inbox>,
    client: Mutex<Option<Arc<Client>>>,
    connected: watch::Sender<bool>,
    /// The newest stored seq, for whoever waits for arrivals.
    arrivals: watch::Sender<i64>,
    /// Sends waiting to be settled (by message id) and requests waiting for their answer (by
    /// request id).
    waiters: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    /// Asks of this session waiting for their reply (by the ask's message id).
    replies: Mutex<HashMap<String, oneshot::Sender<Stored>>>,
    /// The status summary the others were last shown: sent again with every registration.
    summary: Mutex<Option<String>>,
    /// Whether the broker speaks the opt-in extensions (docs/hub.md): asked before each
    /// registration, so an extension frame never reaches a broker without them.
    extensions: AtomicBool,
    /// Every frame but deliveries, for whoever follows the broker's answers beyond a send's
    /// settlement (the A2A gateway: `delivered` of a queued ask, `ask_cancelled` of its own).
    frames: broadcast::Sender<Value>,
    stop: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The link; cloning it shares it.
#[derive(Clone)]
pub struct Link {
    shared: Arc<Shared>,
}

/// How long a send replayed after a reconnect, and refused because its recipient has not
/// registered again yet, is kept and sent again whenever a session joins (ms).
const KEEP_FOR_RECIPIENT_MS: i64 = 10 * 60 * 1000;

/// A clear refusal when there is no connection.
fn not_connected() -> Error {
    Error::new(
        ErrorCode::NotConnected,
        "not connected to the broker (it is being reached again)",
    )
}

impl Link {
    /// Starts the link: the reader thread connects and registers at once, and again whenever
    /// the connection is lost, until [`Link::stop`].
    pub fn start(identity: Identity, reach: Reach, inbox: Inbox) -> Result<Link, Error> {
        let last = inbox.last_seq()?;
        let (connected, _) = watch::channel(false);
        let (arrivals, _) = watch::channel(last);
        let shared = Arc::new(Shared {
            identity,
            reach,
            inbox: Mutex::new(inbox),
            client: Mutex::new(None),
            connected,
            arrivals,
            waiters: Mutex::new(HashMap::new()),
            replies: Mutex::new(HashMap::new()),
            summary: Mutex::new(None),
            extensions: AtomicBool::new(false),
            frames: broadcast::channel(FRAMES_BUFFER).0,
            stop: AtomicBool::new(false),
        });
        let reader = shared.clone();
        std::thread::Builder::new()
            .name("agent-intercom-mcp-link".into())
            .spawn(move || run(&reader))
            .map_err(|e| Error::new(ErrorCode::Internal, format!("cannot start the link: {e}")))?;
        Ok(Link { shared })
    }

    /// The session's identity.
    pub fn identity(&self) -> &Identity {
        &self.shared.identity
    }

    /// Runs `f` on the inbox.
    pub fn inbox<T>(&self, f: impl FnOnce(&mut Inbox) -> T) -> T {
        f(&mut lock(&self.shared.inbox))
    }

    /// Whether the broker speaks the offline queue, read receipts and delivery status.
    pub fn has_extensions(&self) -> bool {
        self.shared.extensions.load(Ordering::SeqCst)
    }

    /// True while registered.
    pub fn is_connected(&self) -> bool {
        *self.shared.connected.borrow()
    }

    /// Waits until registered, at most `wait`; true when it is.
    pub async fn connected_within(&self, wait: Duration) -> bool {
        let mut rx = self.shared.connected.subscribe();
        tokio::time::timeout(wait, rx.wait_for(|c| *c))
            .await
            .is_ok()
    }

    /// Every frame the broker sends from now on but deliveries (those are in the inbox), after
    /// the link has handled it. A receiver that falls behind loses the oldest (it learns the
    /// state again from the broker: `delivery_status`, `defer_ask`).
    pub fn frames(&self) -> broadcast::Receiver<Value> {
        self.shared.frames.subscribe()
    }

    /// A receiver of whether the link is registered (true) or reaching the broker again.
    pub fn connection(&self) -> watch::Receiver<bool> {
        self.shared.connected.subscribe()
    }

    /// A receiver of the newest stored seq, to wait for arrivals.
    pub fn arrivals(&self) -> watch::Receiver<i64> {
        self.shared.arrivals.subscribe()
    }

    /// Stops the reader (it leaves the broker with its next read).
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(client) = lock(&self.shared.client).take() {
            let _ = client.send(&json!({"type": "unregister", "preserveAsks": true}));
            client.close();
        }
    }

    fn client(&self) -> Result<Arc<Client>, Error> {
        lock(&self.shared.client).clone().ok_or_else(not_connected)
    }

    /// Sends a frame as it is (no answer awaited).
    pub async fn send_frame(&self, frame: Value) -> Result<(), Error> {
        acceptable(&frame)?;
        let client = self.client()?;
        tokio::task::spawn_blocking(move || client.send(&frame))
            .await
            .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?
    }

    /// Shows `summary` to the others (a `presence` frame), and again after every registration.
    pub async fn set_summary(&self, summary: &str) -> Result<(), Error> {
        // Kept only if a registration can carry it too.
        register_frame(self.identity(), Some(summary)).and_then(|frame| acceptable(&frame))?;
        self.send_frame(json!({"type": "presence", "status": summary}))
            .await?;
        *lock(&self.shared.summary) = Some(summary.to_string());
        Ok(())
    }

    /// Sends `message` to `to` and waits (at most `wait`) until the broker settles it. The send
    /// is kept in the outbox until then: when the connection is lost first, the answer is
    /// `NOT_CONNECTED` and the send goes again after the next registration (the broker's
    /// duplicate suppression makes that safe). A reply waiter is installed before sending when
    /// `reply` is given, so a fast reply is never missed.
    pub async fn send(
        &self,
        to: &str,
        message: Value,
        options: Delivery,
        wait: Duration,
        reply: Option<oneshot::Sender<Stored>>,
    ) -> Result<Settled, Error> {
        let id = message["id"].as_str().unwrap_or_default().to_string();
        let mut frame = json!({"type": "send", "to": to, "message": message});
        if options.queue {
            frame["queue"] = true.into();
        }
        if options.receipts {
            frame["receipts"] = true.into();
        }
        sendable(&frame)?;
        self.inbox(|inbox| inbox.queue(&id, &frame, now_ms()))?;
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.waiters).insert(id.clone(), tx);
        if let Some(reply) = reply {
            lock(&self.shared.replies).insert(id.clone(), reply);
        }
        if let Err(e) = self.send_frame(frame).await {
            lock(&self.shared.waiters).remove(&id);
            return Err(kept(e));
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(Answer::Settled(settled))) => Ok(settled),
            Ok(_) => Err(kept(not_connected())),
            Err(_) => {
                lock(&self.shared.waiters).remove(&id);
                Err(kept(Error::new(
                    ErrorCode::NotConnected,
                    format!("the broker did not settle it within {} s", wait.as_secs()),
                )))
            }
        }
    }

    /// Forgets the reply waiter of the ask `id` (it was answered another way, timed out or was
    /// cancelled).
    pub fn forget_reply(&self, id: &str) {
        lock(&self.shared.replies).remove(id);
    }

    /// Sends a request frame with a fresh `requestId` and waits (at most `wait`) for the frame
    /// that answers it.
    pub async fn request(&self, mut frame: Value, wait: Duration) -> Result<Value, Error> {
        let request_id = uuid::Uuid::new_v4().to_string();
        frame["requestId"] = request_id.clone().into();
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.waiters).insert(request_id.clone(), tx);
        if let Err(e) = self.send_frame(frame).await {
            lock(&self.shared.waiters).remove(&request_id);
            return Err(e);
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(Answer::Frame(frame))) => Ok(frame),
            Ok(_) => Err(not_connected()),
            Err(_) => {
                lock(&self.shared.waiters).remove(&request_id);
                Err(Error::new(
                    ErrorCode::NotConnected,
                    format!("the broker did not answer within {} s", wait.as_secs()),
                ))
            }
        }
    }
}

/// Refuses a frame larger than a broker takes by default (and than any of our clients reads),
/// or one it would take for a protocol violation: sent, the broker would close the connection,
/// and kept in the outbox, it would close every connection after it again.
fn sendable(frame: &Value) -> Result<(), Error> {
    fits(frame)?;
    acceptable(frame)
}

/// Refuses a frame the broker would answer with an `error` and the end of the connection (a
/// summary over 512 UTF-16 units, a name over 256, ...): its own reading of client frames.
fn acceptable(frame: &Value) -> Result<(), Error> {
    static LIMITS: LazyLock<BrokerConfig> =
        LazyLock::new(|| BrokerConfig::for_agent_dir(std::path::Path::new("/")));
    let parsed = agent_intercom_broker::wire::check_client_frame(frame, &LIMITS);
    // A register frame's session id is checked last, so its refusal is carried inside.
    let parsed = match parsed {
        Ok(ClientFrame::Register(register)) => register.session_id.map(|_| ()),
        other => other.map(|_| ()),
    };
    parsed.map_err(|refusal| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "the broker would refuse it ({}) and end the connection: {}",
                refusal.code, refusal.message
            ),
        )
    })
}

/// The register request of `identity`, with `summary` as its status.
fn register_request(identity: &Identity, summary: Option<&str>) -> Value {
    let now = now_ms();
    let mut request = json!({
        "sessionId": identity.session_id,
        "session": {
            "cwd": identity.cwd, "model": identity.model, "pid": identity.pid,
            "startedAt": identity.started_at, "lastActivity": now, "name": identity.name,
        },
    });
    if let Some(scope) = &identity.scope {
        request["scopeId"] = scope.clone().into();
    }
    if let Some(summary) = summary {
        request["session"]["status"] = summary.into();
    }
    request
}

/// The register frame the client would send for `identity`.
fn register_frame(identity: &Identity, summary: Option<&str>) -> Result<Value, Error> {
    let request = register_request(identity, summary);
    Ok(RegisterRequest::parse(&request, "request")?.frame().clone())
}

/// Refuses an identity every broker would refuse to register (a name over 256 UTF-16 units, a
/// blank model, ...), before serving: the link would otherwise try again forever.
pub fn check_identity(identity: &Identity) -> Result<(), Error> {
    register_frame(identity, None)
        .and_then(|frame| acceptable(&frame))
        .map_err(|e| {
            Error::new(
                e.code(),
                format!(
                    "this session cannot register (the name is at most 256 characters, the \
                     model 1 to 512, the session id at most 512): {}",
                    e.message()
                ),
            )
        })
}

/// The size half of [`sendable`].
fn fits(frame: &Value) -> Result<(), Error> {
    let size = serde_json::to_vec(frame).map_or(u64::MAX, |b| b.len() as u64);
    if size > DEFAULT_MAX_FRAME_BYTES {
        return Err(Error::new(
            ErrorCode::ContentTooLarge,
            format!(
                "the message makes a frame of {size} bytes, more than the \
                 {DEFAULT_MAX_FRAME_BYTES} a broker takes; it was not sent"
            ),
        ));
    }
    Ok(())
}

/// A send that is not settled yet: it stays in the outbox and goes again after a reconnect.
fn kept(e: Error) -> Error {
    Error::new(
        e.code(),
        format!(
            "{}; the message is kept and sent again once the broker is reached",
            e.message()
        ),
    )
}

/// The reader thread: connect and register, read until the connection is lost, again.
fn run(shared: &Shared) {
    let mut backoff = Duration::from_millis(50);
    // Why the last attempt failed: told once, not at every attempt (a host that does not read
    // stderr would otherwise fill the pipe in a long outage and block this thread).
    let mut told = String::new();
    while !shared.stop.load(Ordering::SeqCst) {
        match connect(shared) {
            Ok(client) => {
                backoff = Duration::from_millis(50);
                if !told.is_empty() {
                    log!("registered again");
                    told.clear();
                }
                *lock(&shared.client) = Some(client.clone());
                shared.connected.send_replace(true);
                replay(shared, &client);
                read(shared, &client);
                lock(&shared.client).take();
                shared.connected.send_replace(false);
                // Sends in flight are settled after the next registration (replayed).
                lock(&shared.waiters).clear();
            }
            Err(e) => {
                let why = format!("{} ({})", e.message(), e.code());
                if !shared.stop.load(Ordering::SeqCst) && why != told {
                    log!("{why}; trying again until it registers");
                    told = why;
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// Connects (starting a broker when none answers) and registers.
fn connect(shared: &Shared) -> Result<Arc<Client>, Error> {
    let reach = &shared.reach;
    let health = |t| agent_intercom_broker::health(&reach.socket, t);
    if health(Duration::from_millis(500)) != agent_intercom_broker::Health::Compatible
        && let Some((program, agent_dir)) = &reach.start
    {
        start_broker(program, agent_dir.as_deref())?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while health(Duration::from_millis(200)) != agent_intercom_broker::Health::Compatible {
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
    let extensions = agent_intercom_broker::client::extensions(&reach.socket, PROBE);
    let hub = ["offline-queue", "read-receipts", "delivery-status"]
        .iter()
        .all(|e| extensions.iter().any(|x| x == e));
    shared.extensions.store(hub, Ordering::SeqCst);
    let client = Client::connect(&reach.socket)?;
    let summary = lock(&shared.summary).clone();
    client.register(&register_request(&shared.identity, summary.as_deref()))?;
    Ok(Arc::new(client))
}

/// Starts `program broker` in its own process group, its output discarded (stdout is this
/// server's protocol). Two servers starting one at once is fine: the broker's own ownership
/// lock lets one win, and the other exits.
fn start_broker(
    program: &std::path::Path,
    agent_dir: Option<&std::path::Path>,
) -> Result<(), Error> {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(program);
    command.arg("broker");
    if let Some(dir) = agent_dir {
        command.arg("--agent-dir").arg(dir);
    }
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            Error::new(
                ErrorCode::BrokerIo,
                format!("cannot start a broker with {}: {e}", program.display()),
            )
        })?;
    // Reaped when it exits, so a broker that lost the race leaves no zombie.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// Sends every unsettled send again, oldest first.
fn replay(shared: &Shared, client: &Client) {
    let frames = match lock(&shared.inbox).unsettled() {
        Ok(frames) => frames,
        Err(e) => {
            log!("cannot read the outbox: {e}");
            return;
        }
    };
    for frame in frames {
        if let Err(e) = sendable(&frame) {
            // Kept by a version that did not check: it would cost every connection.
            log!("an unsendable message leaves the outbox: {e}");
            let id = frame["message"]["id"].as_str().unwrap_or_default();
            settle(
                shared,
                id,
                Settled::Failed(e.code().as_str().into(), e.message().into()),
            );
            continue;
        }
        if client.send(&frame).is_err() {
            return;
        }
    }
}

/// Reads frames until the connection is lost or the link stops ([`Link::stop`] closes the
/// connection, which ends a read at once: the timeout only bounds an idle wake-up).
fn read(shared: &Shared, client: &Client) {
    while !shared.stop.load(Ordering::SeqCst) {
        match client.recv(Duration::from_secs(30)) {
            Ok(Some(received)) => frame(shared, client, received.value),
            Ok(None) => {}
            Err(_) => return,
        }
    }
}

/// Frames a follower of [`Link::frames`] may be behind.
const FRAMES_BUFFER: usize = 1024;

/// How long the extensions probe waits for the broker's answer.
const PROBE: Duration = Duration::from_secs(2);

fn settle(shared: &Shared, message_id: &str, settled: Settled) {
    if let Err(e) = lock(&shared.inbox).settle(message_id) {
        log!("{e}");
    }
    if let Settled::Failed(..) = settled {
        lock(&shared.replies).remove(message_id);
    }
    if let Some(waiter) = lock(&shared.waiters).remove(message_id) {
        let _ = waiter.send(Answer::Settled(settled));
    }
}

/// Whether the refused send `id` is a replay (no tool waits for it: that one was told it is
/// kept) whose recipient may just not have registered again after a broker restart: it stays in
/// the outbox, for [`KEEP_FOR_RECIPIENT_MS`] after it was queued.
fn waits_for_recipient(shared: &Shared, id: &str) -> bool {
    if lock(&shared.waiters).contains_key(id) {
        return false;
    }
    let queued = lock(&shared.inbox).queued_at(id).ok().flatten();
    let Some(queued) = queued else { return false };
    if now_ms() - queued > KEEP_FOR_RECIPIENT_MS {
        log!("message {id} found no recipient in 10 min; dropped");
        return false;
    }
    log!(
        "message {id} waits for its recipient to register (SESSION_NOT_FOUND); it goes again \
         when a session joins"
    );
    true
}

/// One frame from the broker; then, but for a delivery, told to [`Link::frames`].
fn frame(shared: &Shared, client: &Client, frame: Value) {
    if frame["type"] == "message" {
        deliver(shared, client, &frame);
        return;
    }
    handle(shared, client, &frame);
    if shared.frames.receiver_count() > 0 {
        let _ = shared.frames.send(frame);
    }
}

fn handle(shared: &Shared, client: &Client, frame: &Value) {
    let text = |key: &str| frame[key].as_str().unwrap_or_default().to_string();
    match frame["type"].as_str().unwrap_or_default() {
        "delivered" => settle(shared, &text("messageId"), Settled::Delivered),
        "delivery_queued" => settle(shared, &text("messageId"), Settled::Queued),
        "delivery_failed" => {
            let id = text("messageId");
            if text("code") == "SESSION_NOT_FOUND" && waits_for_recipient(shared, &id) {
                return;
            }
            settle(shared, &id, Settled::Failed(text("code"), text("reason")));
        }
        // Perhaps the recipient of a kept replay: send what is unsettled again (the broker's
        // duplicate suppression answers what it already has).
        "session_joined" => replay(shared, client),
        "ask_cancelled" => {
            let reason = text("reason");
            let changed = lock(&shared.inbox).settle_ask(
                &text("fromSessionId"),
                &text("messageId"),
                ASK_CANCELLED,
                Some(&reason),
            );
            if let Err(e) = changed {
                log!("{e}");
            }
        }
        // Answers to a request carry its id.
        _ if frame.get("requestId").is_some() => {
            if let Some(waiter) = lock(&shared.waiters).remove(&text("requestId")) {
                let _ = waiter.send(Answer::Frame(frame.clone()));
            }
        }
        // delivery_accepted, presence, joins and leaves, ask_deferred: nothing to keep.
        _ => {}
    }
}

/// A delivered message: committed to the inbox, then acknowledged, then announced. A message
/// that cannot be committed is not acknowledged: the broker tells its sender it was not
/// delivered (`DELIVERY_TIMEOUT`).
fn deliver(shared: &Shared, client: &Client, frame: &Value) {
    let Some(delivery_id) = frame["deliveryId"].as_str() else {
        return;
    };
    let receipt =
        lock(&shared.inbox).receive(&frame["from"], &frame["message"], delivery_id, now_ms());
    let seq = match receipt {
        Ok(Receipt::Stored(seq)) => Some(seq),
        Ok(Receipt::Duplicate) => None,
        Err(e) => {
            // Not acknowledged: the broker tells the sender it was not delivered.
            log!("a message could not be kept, so it is not taken: {e}");
            return;
        }
    };
    if client
        .send(&json!({"type": "message_received", "deliveryId": delivery_id}))
        .is_err()
    {
        return;
    }
    let Some(seq) = seq else { return };
    shared.arrivals.send_replace(seq);
    if let Some(reply_to) = frame["message"]["replyTo"].as_str()
        && let Some(waiter) = lock(&shared.replies).remove(reply_to)
        && let Ok(Some(stored)) = lock(&shared.inbox).get(seq)
    {
        let _ = waiter.send(stored);
    }
}
