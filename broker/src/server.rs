//! Listening, connections, and the broker's life: start (ownership, stale socket, permissions),
//! run, and a clean exit that removes only the broker's own files.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::{Notify, mpsc};

use crate::access::{AuditLog, Registry};
use crate::config::{BrokerConfig, LogLevel, Transport};
use crate::lifecycle::{self, FileKind, Ownership, OwnershipError};
use crate::state::{ConnId, Event, Origin, Out, State, StopReason};
use crate::store::{Store, StoreError};
use crate::wire::error_code;

/// Why a broker could not start.
#[derive(Debug)]
pub enum StartError {
    /// Another live broker (a thread of this process or another process) owns this intercom
    /// directory; its pid when known.
    AlreadyRunning(Option<i32>),
    /// The store could not be opened.
    Store(StoreError),
    /// Creating the directory, the socket or a file failed.
    Io(io::Error),
    /// The remote-access registry or the admin credential could not be read or created (the
    /// files are left as they are).
    Access(crate::access::AccessError),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::AlreadyRunning(Some(pid)) => {
                write!(f, "an intercom broker is already running (pid {pid})")
            }
            StartError::AlreadyRunning(None) => {
                write!(f, "an intercom broker is already running")
            }
            StartError::Store(e) => write!(f, "{e}"),
            StartError::Io(e) => write!(f, "cannot start the broker: {e}"),
            StartError::Access(e) => write!(f, "cannot start the broker: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

/// A running broker. Dropping the handle shuts the broker down and waits for it.
pub struct BrokerHandle {
    events: mpsc::UnboundedSender<Event>,
    thread: Option<std::thread::JoinHandle<StopReason>>,
    socket_path: PathBuf,
    gateway_path: PathBuf,
}

impl BrokerHandle {
    /// The socket clients connect to.
    pub fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    /// The remote-access gateway socket (remote principals register there).
    pub fn gateway_path(&self) -> &Path {
        &self.gateway_path
    }

    /// Asks the broker to stop (returns at once).
    pub fn shutdown(&self) {
        let _ = self.events.send(Event::Shutdown);
    }

    /// Waits until the broker has stopped (idle exit, a signal, or [`BrokerHandle::shutdown`])
    /// and its files are removed.
    pub fn wait(mut self) -> StopReason {
        self.thread
            .take()
            .map(|t| t.join().unwrap_or(StopReason::Failed))
            .unwrap_or(StopReason::Shutdown)
    }

    /// True once the broker has stopped.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops the broker and waits for it.
    pub fn close(self) -> StopReason {
        self.shutdown();
        self.wait()
    }
}

impl Drop for BrokerHandle {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.events.send(Event::Shutdown);
            let _ = thread.join();
        }
    }
}

/// The runtime files of a broker, with the kind each must be when it exists. A symbolic link
/// (dangling or not) or a file of another kind at any of them refuses the start.
fn runtime_files(config: &BrokerConfig) -> Vec<(PathBuf, FileKind)> {
    let store = config.store_path();
    let mut files = vec![
        (config.owner_path(), FileKind::Regular),
        (config.pid_path(), FileKind::Regular),
        (config.spawn_lock_path(), FileKind::Regular),
        (config.socket_path.clone(), FileKind::Socket),
        (config.gateway_path.clone(), FileKind::Socket),
        (config.port_path(), FileKind::Regular),
        (config.access_path(), FileKind::Regular),
        (config.admin_path(), FileKind::Regular),
        (config.audit_path(), FileKind::Regular),
    ];
    files.extend(crate::store::store_files(&store).map(|file| (file, FileKind::Regular)));
    files
}

/// Starts a broker for `config` on its own thread. Fails with
/// [`StartError::AlreadyRunning`] when a live broker owns the directory, and with
/// [`StartError::Io`] when the intercom directory is not a real directory of this user or a
/// runtime file is a symbolic link.
pub fn start(config: BrokerConfig) -> Result<BrokerHandle, StartError> {
    lifecycle::ensure_private_dir(&config.intercom_dir).map_err(at(&config.intercom_dir))?;
    for socket in [&config.socket_path, &config.gateway_path] {
        if let Some(parent) = socket.parent()
            && parent != config.intercom_dir
        {
            std::fs::create_dir_all(parent).map_err(at(parent))?;
        }
    }
    for (path, kind) in runtime_files(&config) {
        lifecycle::check_runtime_file(&path, kind).map_err(at(&path))?;
    }
    let pid = std::process::id() as i32;
    let ownership = lifecycle::acquire_ownership(&config.owner_path(), pid, &config.socket_path)
        .map_err(|e| match e {
            OwnershipError::Owned(owner) => StartError::AlreadyRunning(owner),
            OwnershipError::Io(e) => StartError::Io(e),
        })?;
    let prepared = (|| {
        let store = Store::open(&config.store_path()).map_err(StartError::Store)?;
        // The access registry is read before anything listens: a registry that cannot be read
        // refuses the start (it is never replaced), and the admin token exists once clients
        // can connect.
        let mut registry = Registry::open(&config.intercom_dir).map_err(StartError::Access)?;
        registry
            .ensure_admin_credential()
            .map_err(StartError::Access)?;
        let audit = AuditLog::open(&config.intercom_dir);
        let listeners = match config.transport {
            Transport::Unix => Listeners::Unix {
                local: listen(&config.socket_path)?,
                gateway: listen(&config.gateway_path)?,
            },
            Transport::Tcp => listen_tcp(&config)?,
        };
        lifecycle::write_private(&config.pid_path(), &pid.to_string())
            .map_err(at(&config.pid_path()))?;
        Ok((store, registry, audit, listeners))
    })();
    let (store, registry, audit, listeners) = match prepared {
        Ok(ok) => ok,
        Err(e) => {
            ownership.release();
            return Err(e);
        }
    };
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let socket_path = config.socket_path.clone();
    let gateway_path = config.gateway_path.clone();
    let loop_events = events_tx.clone();
    let thread = std::thread::Builder::new()
        .name("agent-intercom-broker".into())
        .spawn(move || {
            let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // One thread: the state task and every connection share it, so handing a frame
                // from a reader to the state task to a writer never crosses threads.
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start its runtime: {e}"))?;
                let mut state = State::new(config.clone(), Some(store));
                state.serve_remote(registry, audit);
                if let Listeners::Tcp { state_id, .. } = &listeners {
                    state.require_state_id(state_id.clone());
                }
                let reason =
                    runtime.block_on(run(&config, state, listeners, loop_events, events_rx));
                runtime.shutdown_timeout(Duration::from_millis(200));
                Ok::<_, String>(reason)
            }));
            // Whatever happened above, the broker's own files go.
            cleanup(&config, ownership, pid);
            let reason = match served {
                Ok(Ok(reason)) => reason,
                Ok(Err(why)) => {
                    crate::log::line(format_args!("agent-intercom broker [Error] {why}"));
                    StopReason::Failed
                }
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    crate::log::line(format_args!(
                        "agent-intercom broker [Error] failed (a bug, please report it): {why}"
                    ));
                    StopReason::Failed
                }
            };
            if config.log_level >= LogLevel::Info {
                crate::log::line(format_args!(
                    "agent-intercom broker [Info] stopped ({reason:?})"
                ));
            }
            // Its last lines out before whoever waits for it goes on (or the process ends): a
            // short wait, as a host that closes an embedded broker waits here (the CLI waits
            // longer before it exits).
            crate::log::flush(Duration::from_millis(100));
            reason
        })
        .map_err(StartError::Io)?;
    Ok(BrokerHandle {
        events: events_tx,
        thread: Some(thread),
        socket_path,
        gateway_path,
    })
}

/// What the broker listens on, bound before its thread starts.
enum Listeners {
    /// The local socket and the remote-access gateway.
    Unix {
        local: std::os::unix::net::UnixListener,
        gateway: std::os::unix::net::UnixListener,
    },
    /// A loopback TCP port, and the `stateId` clients must present (from `broker.port.json`).
    Tcp {
        listener: std::net::TcpListener,
        state_id: String,
    },
}

/// Binds 127.0.0.1 on an ephemeral port and writes `broker.port.json` (0600) with the port and
/// a fresh `stateId`, as the Pi broker does for its TCP transport.
fn listen_tcp(config: &BrokerConfig) -> Result<Listeners, StartError> {
    let listener =
        std::net::TcpListener::bind((crate::config::TCP_HOST, 0)).map_err(StartError::Io)?;
    listener.set_nonblocking(true).map_err(StartError::Io)?;
    let port = listener.local_addr().map_err(StartError::Io)?.port();
    let state_id = uuid::Uuid::new_v4().to_string();
    let endpoint = serde_json::json!({
        "transport": "tcp",
        "host": crate::config::TCP_HOST,
        "port": port,
        "stateId": state_id,
    });
    lifecycle::write_private(&config.port_path(), &format!("{endpoint}\n"))
        .map_err(at(&config.port_path()))?;
    Ok(Listeners::Tcp { listener, state_id })
}

/// Binds a socket of the broker's (0600, non-blocking), replacing a stale socket file: the
/// caller owns the directory, and anything but a socket there was refused before.
fn listen(path: &Path) -> Result<std::os::unix::net::UnixListener, StartError> {
    lifecycle::check_runtime_file(path, FileKind::Socket).map_err(at(path))?;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(at(path)(e)),
        _ => {}
    }
    let listener = std::os::unix::net::UnixListener::bind(path).map_err(at(path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(at(path))?;
    listener.set_nonblocking(true).map_err(StartError::Io)?;
    Ok(listener)
}

/// [`StartError::Io`] naming `path`, unless the error already does.
fn at(path: &Path) -> impl FnOnce(io::Error) -> StartError + '_ {
    move |e| {
        let shown = path.display().to_string();
        if e.to_string().contains(&shown) {
            StartError::Io(e)
        } else {
            StartError::Io(io::Error::new(e.kind(), format!("{shown}: {e}")))
        }
    }
}

fn cleanup(config: &BrokerConfig, ownership: Ownership, pid: i32) {
    if ownership.holds() {
        let _ = std::fs::remove_file(&config.socket_path);
        let _ = std::fs::remove_file(&config.gateway_path);
        if config.transport == Transport::Tcp {
            let _ = std::fs::remove_file(config.port_path());
        }
        if std::fs::read_to_string(config.pid_path()).is_ok_and(|p| p.trim() == pid.to_string()) {
            let _ = std::fs::remove_file(config.pid_path());
        }
    }
    ownership.release();
}

async fn run(
    config: &BrokerConfig,
    mut state: State,
    listeners: Listeners,
    events_tx: mpsc::UnboundedSender<Event>,
    mut events_rx: mpsc::UnboundedReceiver<Event>,
) -> StopReason {
    let listening = match Listening::from_std(listeners) {
        Ok(l) => l,
        Err(e) => {
            crate::log::line(format_args!("agent-intercom broker: cannot listen: {e}"));
            return StopReason::Shutdown;
        }
    };
    if config.log_level >= LogLevel::Info {
        let on = match config.transport {
            Transport::Unix => format!(
                "{} and the remote gateway {}",
                config.socket_path.display(),
                config.gateway_path.display()
            ),
            Transport::Tcp => format!("TCP (see {})", config.port_path().display()),
        };
        crate::log::line(format_args!(
            "agent-intercom broker [Info] listening on {on} (pid {})",
            std::process::id()
        ));
    }
    // Fault injection for the tests of a failing broker thread (debug builds only).
    if cfg!(debug_assertions)
        && std::env::var_os("AGENT_INTERCOM_FAULT").is_some_and(|f| f == "broker-panic")
    {
        panic!("AGENT_INTERCOM_FAULT=broker-panic");
    }
    let accept_config = Arc::new(config.clone());
    let accept_events = events_tx.clone();
    let acceptor = tokio::spawn(async move {
        let mut next: ConnId = 1;
        loop {
            let (events, config) = (accept_events.clone(), accept_config.clone());
            let accepted = match &listening {
                Listening::Unix { local, gateway } => tokio::select! {
                    r = local.accept() => r.map(|(s, _)| {
                        tokio::spawn(connection(s, next, Origin::Local, events, config));
                    }),
                    r = gateway.accept() => r.map(|(s, _)| {
                        tokio::spawn(connection(s, next, Origin::Remote, events, config));
                    }),
                },
                Listening::Tcp(listener) => listener.accept().await.map(|(s, _)| {
                    let _ = s.set_nodelay(true);
                    tokio::spawn(connection(s, next, Origin::Local, events, config));
                }),
            };
            match accepted {
                Ok(()) => next += 1,
                Err(e) => {
                    crate::log::line(format_args!("agent-intercom broker: accept failed: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    });
    let mut terminate = config
        .handle_signals
        .then(|| tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok())
        .flatten();
    let mut interrupt = config
        .handle_signals
        .then(|| tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok())
        .flatten();
    loop {
        let deadline = state.next_deadline();
        tokio::select! {
            event = events_rx.recv() => match event {
                Some(event) => {
                    state.handle(event);
                    // Take what else is already queued into the same batch (one commit).
                    for _ in 0..512 {
                        match events_rx.try_recv() {
                            Ok(event) => state.handle(event),
                            Err(_) => break,
                        }
                    }
                }
                None => break,
            },
            _ = async { tokio::time::sleep_until(deadline.expect("guarded").into()).await },
                if deadline.is_some() =>
            {
                state.fire_due_timers();
            }
            _ = async { terminate.as_mut().expect("guarded").recv().await },
                if terminate.is_some() => state.handle(Event::Shutdown),
            _ = async { interrupt.as_mut().expect("guarded").recv().await },
                if interrupt.is_some() => state.handle(Event::Shutdown),
        }
        state.flush();
        if state.stopped().is_some() {
            break;
        }
    }
    acceptor.abort();
    // Let writers flush their last frames (error frames, closes) briefly.
    let grace = tokio::time::sleep(Duration::from_millis(100));
    tokio::pin!(grace);
    loop {
        tokio::select! {
            _ = &mut grace => break,
            event = events_rx.recv() => if event.is_none() { break },
        }
    }
    state.stopped().unwrap_or(StopReason::Shutdown)
}

/// The listeners inside the runtime.
enum Listening {
    Unix {
        local: tokio::net::UnixListener,
        gateway: tokio::net::UnixListener,
    },
    Tcp(tokio::net::TcpListener),
}

impl Listening {
    fn from_std(listeners: Listeners) -> io::Result<Listening> {
        Ok(match listeners {
            Listeners::Unix { local, gateway } => Listening::Unix {
                local: tokio::net::UnixListener::from_std(local)?,
                gateway: tokio::net::UnixListener::from_std(gateway)?,
            },
            Listeners::Tcp { listener, .. } => {
                Listening::Tcp(tokio::net::TcpListener::from_std(listener)?)
            }
        })
    }
}

/// A connection's stream, split into owned halves (no lock between reader and writer).
trait Stream: Send + 'static {
    type Read: tokio::io::AsyncRead + Unpin + Send + 'static;
    type Write: tokio::io::AsyncWrite + Unpin + Send + 'static;
    fn halves(self) -> (Self::Read, Self::Write);
}

impl Stream for UnixStream {
    type Read = tokio::net::unix::OwnedReadHalf;
    type Write = tokio::net::unix::OwnedWriteHalf;
    fn halves(self) -> (Self::Read, Self::Write) {
        self.into_split()
    }
}

impl Stream for tokio::net::TcpStream {
    type Read = tokio::net::tcp::OwnedReadHalf;
    type Write = tokio::net::tcp::OwnedWriteHalf;
    fn halves(self) -> (Self::Read, Self::Write) {
        self.into_split()
    }
}

async fn connection<S: Stream>(
    stream: S,
    conn: ConnId,
    origin: Origin,
    events: mpsc::UnboundedSender<Event>,
    config: Arc<BrokerConfig>,
) {
    let (reader, writer) = stream.halves();
    let mut reader = tokio::io::BufReader::with_capacity(2 * 1024, reader);
    let (tx, rx) = mpsc::unbounded_channel();
    let stop = Arc::new(Notify::new());
    let queued = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let kill = Arc::new(Notify::new());
    let accepted = Event::Accepted {
        conn,
        origin,
        tx: tx.clone(),
        queued: queued.clone(),
        kill: kill.clone(),
    };
    if events.send(accepted).is_err() {
        return;
    }
    let writer_task = tokio::spawn(write_loop(writer, rx, stop.clone(), queued.clone()));
    let mut bucket = TokenBucket::new(&config, origin);
    // True when this side ends the connection: the client may still be sending, and closing a
    // socket with unread input makes the peer lose the error frame (a reset), so read it away.
    let linger = loop {
        let refusal = match read_frame(&mut reader, &stop, &kill, &config).await {
            Read::Frame(payload) => match crate::fast::parse_ack(&payload, &config) {
                // Acknowledgements are never rate limited (see `admit`).
                Some(delivery_id) => {
                    if events
                        .send(Event::Acknowledged { conn, delivery_id })
                        .is_err()
                    {
                        break false;
                    }
                    continue;
                }
                None => match admit(&payload, &mut bucket, &config) {
                    Ok(value) => {
                        if events.send(Event::Frame { conn, value }).is_err() {
                            break false;
                        }
                        continue;
                    }
                    Err(refusal) => refusal,
                },
            },
            Read::Refused(refusal) => refusal,
            Read::Ended => break false,
            Read::Stopped => break true,
            Read::Killed => {
                // A slow consumer: its writer may be blocked on a full socket; end both now.
                writer_task.abort();
                break false;
            }
        };
        let _ = events.send(Event::Reject {
            conn,
            code: refusal.code,
            message: refusal.message,
        });
        break true;
    };
    let _ = events.send(Event::Closed { conn });
    if linger {
        drain(&mut reader).await;
    }
}

/// What reading a connection's next frame came to.
enum Read {
    /// A whole frame's payload.
    Frame(Vec<u8>),
    /// A frame the broker will not read: too long, or not all there in time.
    Refused(Refusal),
    /// The client closed the connection, or reading failed.
    Ended,
    /// The writer is done: the broker closed the connection.
    Stopped,
    /// The broker cut the connection off (a slow consumer).
    Killed,
}

/// The error frame a connection ends with.
struct Refusal {
    code: &'static str,
    message: String,
}

impl Refusal {
    fn invalid(message: String) -> Refusal {
        Refusal {
            code: error_code::INVALID_REQUEST,
            message,
        }
    }
}

/// Reads the next frame: a 4-byte big-endian length, then the payload. The first byte may take
/// any time; the rest of a started frame must arrive within `frame_timeout`, so that a half-sent
/// frame cannot hold a connection open for ever.
async fn read_frame<R: tokio::io::AsyncRead + Unpin>(
    reader: &mut R,
    stop: &Notify,
    kill: &Notify,
    config: &BrokerConfig,
) -> Read {
    let mut header = [0u8; 4];
    let first = tokio::select! {
        r = reader.read(&mut header[..1]) => r,
        _ = stop.notified() => return Read::Stopped,
        _ = kill.notified() => return Read::Killed,
    };
    if matches!(first, Ok(0) | Err(_)) {
        return Read::Ended;
    }
    let rest = tokio::select! {
        r = tokio::time::timeout(config.frame_timeout, async {
            reader.read_exact(&mut header[1..]).await?;
            let len = u32::from_be_bytes(header) as usize;
            if len > config.max_frame_bytes {
                return Ok(Err(len));
            }
            let mut payload = vec![0u8; len];
            reader.read_exact(&mut payload).await?;
            Ok::<_, io::Error>(Ok(payload))
        }) => r,
        _ = stop.notified() => return Read::Stopped,
    };
    match rest {
        Err(_) => Read::Refused(Refusal::invalid(
            "Incomplete frame: the rest did not arrive in time".into(),
        )),
        Ok(Err(_)) => Read::Ended,
        Ok(Ok(Err(len))) => Read::Refused(Refusal::invalid(format!(
            "Intercom frame length {len} exceeds maximum {} bytes",
            config.max_frame_bytes
        ))),
        Ok(Ok(Ok(payload))) => Read::Frame(payload),
    }
}

/// The frame `payload` holds, if it parses and the bucket has tokens for it. Acknowledgements
/// are never rate limited: a fast receiver must not be cut off.
fn admit(
    payload: &[u8],
    bucket: &mut TokenBucket,
    config: &BrokerConfig,
) -> Result<Value, Refusal> {
    let value = crate::jstext::parse_frame(payload).map_err(|e| {
        let what = if std::str::from_utf8(payload).is_err() {
            "not valid UTF-8".to_string()
        } else {
            format!("not valid JSON ({e})")
        };
        Refusal::invalid(format!("Failed to parse intercom message: {what}"))
    })?;
    if value.get("type").and_then(Value::as_str) != Some("message_received")
        && !bucket.take(payload.len().div_ceil(config.rate_bytes_per_token).max(1) as f64)
    {
        return Err(Refusal {
            code: error_code::RATE_LIMITED,
            message: "Intercom broker rate limit exceeded".into(),
        });
    }
    Ok(value)
}

/// A connection's rate limit: a bucket of `capacity` tokens, refilled at `refill` a second. Remote
/// principals get the smaller bucket the Pi broker gives them.
struct TokenBucket {
    tokens: f64,
    capacity: f64,
    refill: f64,
    refilled: tokio::time::Instant,
}

impl TokenBucket {
    fn new(config: &BrokerConfig, origin: Origin) -> TokenBucket {
        let (capacity, refill) = match origin {
            Origin::Local => (config.rate_capacity, config.rate_refill_per_second),
            Origin::Remote => (
                config.remote_rate_capacity,
                config.remote_rate_refill_per_second,
            ),
        };
        TokenBucket {
            tokens: capacity,
            capacity,
            refill,
            refilled: tokio::time::Instant::now(),
        }
    }

    /// Refills for the time since the last call, then takes `cost` tokens; false (and nothing
    /// taken) when fewer are left.
    fn take(&mut self, cost: f64) -> bool {
        let now = tokio::time::Instant::now();
        let refilled = now.duration_since(self.refilled).as_secs_f64() * self.refill;
        self.tokens = (self.tokens + refilled).min(self.capacity);
        self.refilled = now;
        if self.tokens < cost {
            return false;
        }
        self.tokens -= cost;
        true
    }
}

/// Reads away what the client still sends, for up to a second.
async fn drain<R: tokio::io::AsyncRead + Unpin>(reader: &mut R) {
    // On the heap: an array here would make every connection's future 4 KiB larger.
    let mut scratch = vec![0u8; 4096];
    let deadline = tokio::time::sleep(Duration::from_secs(1));
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            r = reader.read(&mut scratch) => if matches!(r, Ok(0) | Err(_)) { break },
            _ = &mut deadline => break,
        }
    }
}

async fn write_loop<W: tokio::io::AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Out>,
    stop: Arc<Notify>,
    queued: Arc<std::sync::atomic::AtomicUsize>,
) {
    let mut buf: Vec<u8> = Vec::new();
    'outer: while let Some(first) = rx.recv().await {
        let mut close = false;
        let mut next = Some(first);
        while let Some(out) = next {
            match out {
                Out::Frame(bytes) => buf.extend_from_slice(&bytes),
                Out::Close => {
                    close = true;
                    break;
                }
            }
            next = if buf.len() < 1 << 20 {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        if !buf.is_empty() {
            if writer.write_all(&buf).await.is_err() {
                break 'outer;
            }
            queued.fetch_sub(buf.len(), std::sync::atomic::Ordering::Relaxed);
            buf.clear();
            if buf.capacity() > 16 * 1024 {
                // Give back what a burst took: thousands of idle connections must stay small.
                buf = Vec::new();
            }
        }
        if close {
            break;
        }
    }
    let _ = writer.shutdown().await;
    stop.notify_one();
}
