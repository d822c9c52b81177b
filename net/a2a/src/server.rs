//! Starting and stopping the service: options checked before anything is bound (loopback unless
//! explicitly allowed with a bearer token), the store opened, the socket bound, and a graceful
//! stop on SIGTERM or SIGINT (or on a test's request).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_intercom_core::envelope::MemoryKeyring;
use agent_intercom_core::httpsig::EXTENSION_URI;
use agent_intercom_scratchpad::{Clock, Config, Store, SystemClock};
use tokio::sync::watch;

use crate::app::{AppState, Keys, Limits, Signing};
use crate::auth::Token;
use crate::bridge::Bridge;
use crate::card::{CardOptions, agent_card};
use crate::gateway::{BrokerOptions, Route};
use crate::http::router;
use crate::keys::KeyDir;
use crate::listener::{Conn, Guarded, Linger, Timeouts};
use crate::ops::Service;
use crate::stream::Streams;
use crate::worker::Worker;

/// The local agent A2A tasks are assigned to when none is named.
pub const DEFAULT_ASSIGNEE: &str = "a2a";
/// How long a blocking send waits by default (below the 5 s default timeout of the Python
/// SDK's HTTP client, so that its blocking sends get an answer rather than a timeout).
pub const DEFAULT_BLOCKING_TIMEOUT: Duration = Duration::from_secs(4);
/// Longest blocking wait that may be configured.
pub const MAX_BLOCKING_TIMEOUT: Duration = Duration::from_secs(600);

/// The options of `agent-intercom serve`.
#[derive(Clone)]
pub struct ServeConfig {
    /// Where to listen (port 0: any free port).
    pub listen: SocketAddr,
    /// The scratchpad store.
    pub db: PathBuf,
    /// Store limits.
    pub store: Config,
    /// The keys directory (enrolled peer keys, for handoffs and signed requests; `None`: no
    /// key is enrolled, every signature is refused with `UNKNOWN_SIGNING_KEY`).
    pub keys: Option<PathBuf>,
    /// The bearer token file (0600).
    pub token_file: Option<PathBuf>,
    /// Whether binding beyond loopback is allowed (it also needs a token).
    pub allow_non_loopback: bool,
    /// Whether every JSON-RPC request must be signed (RFC 9421).
    pub require_signatures: bool,
    /// The URL clients reach the service at (the Agent Card's URLs).
    pub public_url: Option<String>,
    /// The local agent new tasks are assigned to.
    pub assignee: String,
    /// The project root of new tasks.
    pub project_root: Option<String>,
    /// How long a blocking send waits for a terminal or interrupted state.
    pub blocking_timeout: Duration,
    /// Request limits.
    pub limits: Limits,
    /// Where time comes from: the store's clock, and the time signatures are checked at (the
    /// system clock; tests give a manual one).
    pub clock: Arc<dyn Clock>,
    /// `--broker`: the service is a broker session and messages become asks (gateway.rs).
    pub broker: Option<BrokerOptions>,
}

impl std::fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeConfig")
            .field("listen", &self.listen)
            .field("db", &self.db)
            .field("store", &self.store)
            .field("keys", &self.keys)
            .field("token_file", &self.token_file)
            .field("allow_non_loopback", &self.allow_non_loopback)
            .field("require_signatures", &self.require_signatures)
            .field("public_url", &self.public_url)
            .field("assignee", &self.assignee)
            .field("project_root", &self.project_root)
            .field("blocking_timeout", &self.blocking_timeout)
            .field("limits", &self.limits)
            .field("broker", &self.broker)
            .finish_non_exhaustive()
    }
}

impl ServeConfig {
    /// Loopback, any free port, the store at `db`, every other option at its default.
    pub fn new(db: PathBuf) -> ServeConfig {
        ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            db,
            store: Config::default(),
            keys: None,
            token_file: None,
            allow_non_loopback: false,
            require_signatures: false,
            public_url: None,
            assignee: DEFAULT_ASSIGNEE.to_string(),
            project_root: None,
            blocking_timeout: DEFAULT_BLOCKING_TIMEOUT,
            limits: Limits::default(),
            clock: Arc::new(SystemClock),
            broker: None,
        }
    }
}

/// Why the service did not start.
#[derive(Debug)]
pub enum StartError {
    /// The options are wrong (usage).
    Config(String),
    /// The store could not be opened.
    Store(agent_intercom_core::Error),
    /// The address could not be bound, or the runtime not started.
    Io(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Config(m) | StartError::Io(m) => f.write_str(m),
            StartError::Store(e) => write!(f, "{} [{}]", e.message(), e.code()),
        }
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Checks a public URL: `http://` or `https://`, a host, no query, fragment or credentials;
/// returned without a trailing slash.
pub fn check_public_url(url: &str) -> Result<String, String> {
    let bad = |why: &str| format!("--public-url {url:?} {why}");
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| bad("must start with http:// or https://"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() {
        return Err(bad("names no host"));
    }
    if authority.contains('@') {
        return Err(bad("must not hold credentials"));
    }
    if url.contains('?') || url.contains('#') {
        return Err(bad("must not hold a query or a fragment"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("must not hold spaces or control characters"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// What [`prepare`] checked and opened: ready to serve on the bound socket.
struct Prepared {
    listener: std::net::TcpListener,
    local: SocketAddr,
    token: Option<Token>,
    base_url: String,
    worker: Worker,
    peer_keys: Keys,
    link: Option<agent_intercom_mcp::Link>,
}

/// Checks the options, opens the store and binds the socket, in this order, so that nothing is
/// bound with options that would be refused.
fn prepare(config: &ServeConfig) -> Result<Prepared, StartError> {
    let loopback = is_loopback(config.listen.ip());
    if !loopback && !config.allow_non_loopback {
        return Err(StartError::Config(format!(
            "refusing to listen on {}: it is not a loopback address; pass \
             --allow-non-loopback and --token-file FILE (a 0600 file holding a bearer token) to \
             accept connections from other machines",
            config.listen
        )));
    }
    if !loopback && config.token_file.is_none() {
        return Err(StartError::Config(format!(
            "refusing to listen on {} without a bearer token: --allow-non-loopback needs \
             --token-file FILE (a 0600 file holding the token; never on the command line)",
            config.listen
        )));
    }
    if config.listen.ip().is_unspecified() && config.public_url.is_none() {
        return Err(StartError::Config(format!(
            "listening on {} needs --public-url URL: the Agent Card must tell clients where to \
             connect",
            config.listen
        )));
    }
    if config.blocking_timeout > MAX_BLOCKING_TIMEOUT {
        return Err(StartError::Config(format!(
            "the blocking timeout must be at most {} s",
            MAX_BLOCKING_TIMEOUT.as_secs()
        )));
    }
    if config.blocking_timeout + Duration::from_secs(1) > config.limits.request_timeout {
        return Err(StartError::Config(format!(
            "the request timeout ({} s) must exceed the blocking timeout ({} s) by at least 1 s",
            config.limits.request_timeout.as_secs(),
            config.blocking_timeout.as_secs()
        )));
    }
    if config.limits.head_timeout.is_zero() {
        return Err(StartError::Config(
            "the request head timeout must be above zero".into(),
        ));
    }
    if config.limits.max_streams >= config.limits.max_connections {
        return Err(StartError::Config(format!(
            "the most streams ({}) must be below the most connections ({}): a stream holds its \
             connection",
            config.limits.max_streams, config.limits.max_connections
        )));
    }
    if config.limits.stream_keep_alive.is_zero() {
        return Err(StartError::Config(
            "the stream keep-alive interval must be above zero".into(),
        ));
    }
    if config.assignee.is_empty() {
        return Err(StartError::Config(
            "the assignee must be a non-empty name".into(),
        ));
    }
    if let Some(broker) = &config.broker {
        broker.check().map_err(StartError::Config)?;
    }
    let public_url = match &config.public_url {
        Some(url) => Some(check_public_url(url).map_err(StartError::Config)?),
        None => None,
    };
    let token = match &config.token_file {
        Some(path) => Some(Token::from_file(path).map_err(StartError::Config)?),
        None => None,
    };
    let peer_keys: Keys = match &config.keys {
        Some(dir) => Arc::new(KeyDir::open(dir).map_err(StartError::Store)?),
        None => Arc::new(MemoryKeyring::new()),
    };
    let store = Store::open(&config.db, config.store.clone(), config.clock.clone())
        .map_err(StartError::Store)?;
    let worker = Worker::start(store).map_err(StartError::Store)?;
    let listener = std::net::TcpListener::bind(config.listen)
        .map_err(|e| StartError::Io(format!("cannot listen on {}: {e}", config.listen)))?;
    let local = listener
        .local_addr()
        .map_err(|e| StartError::Io(format!("cannot read the bound address: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| StartError::Io(format!("cannot configure the socket: {e}")))?;
    let base_url = public_url.unwrap_or_else(|| format!("http://{local}"));
    // Last: the link registers at once, on a thread of its own.
    let link = match &config.broker {
        Some(broker) => Some(start_link(broker)?),
        None => None,
    };
    Ok(Prepared {
        listener,
        local,
        token,
        base_url,
        worker,
        peer_keys,
        link,
    })
}

/// Opens the gateway's inbox and starts its broker link (it registers on a thread of its own,
/// and again after every loss).
fn start_link(broker: &BrokerOptions) -> Result<agent_intercom_mcp::Link, StartError> {
    use agent_intercom_mcp::{Identity, Inbox, Reach, link};
    agent_intercom_mcp::set_log_name("agent-intercom serve");
    let identity = Identity {
        session_id: broker.session_id.clone(),
        name: broker.name.clone(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "/".into()),
        model: "a2a-gateway".into(),
        scope: broker.scope.clone(),
        pid: std::process::id(),
        started_at: link::now_ms(),
    };
    link::check_identity(&identity).map_err(|e| StartError::Config(e.message().to_string()))?;
    if let Some(dir) = broker.inbox.parent() {
        agent_intercom_mcp::private_dir(dir).map_err(StartError::Store)?;
    }
    let inbox = Inbox::open(
        &broker.inbox,
        agent_intercom_mcp::DEFAULT_MAX_INBOX_MESSAGES,
    )
    .map_err(StartError::Store)?;
    let reach = Reach {
        socket: broker.socket.clone(),
        start: broker.start.clone(),
    };
    agent_intercom_mcp::Link::start(identity, reach, inbox).map_err(StartError::Store)
}

/// The request handlers' route to the gateway, and the bridge running on a task of its own
/// until `shutdown`.
fn start_bridge(
    broker: &BrokerOptions,
    link: &agent_intercom_mcp::Link,
    worker: &Worker,
    shutdown: watch::Receiver<bool>,
) -> (Route, tokio::task::JoinHandle<()>) {
    let route = Route {
        name: broker.name.clone(),
        default_target: broker.default_target.clone(),
        targets: broker.targets.clone(),
        wake: Arc::new(tokio::sync::Notify::new()),
    };
    let bridge = Bridge {
        link: link.clone(),
        store: worker.handle(),
        name: broker.name.clone(),
        wake: route.wake.clone(),
        probe_interval: broker.probe_interval,
        sending: Arc::default(),
        held: Arc::default(),
    };
    (route, tokio::spawn(bridge.run(shutdown)))
}

/// Serves until `stop` resolves, then stops gracefully: no new connections, blocking sends
/// answer at once, streams end, requests in flight finish.
async fn serve(
    config: ServeConfig,
    prepared: Prepared,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let Prepared {
        listener,
        token,
        base_url,
        worker,
        peer_keys,
        link,
        ..
    } = prepared;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (route, bridge_task) = match (&config.broker, &link) {
        (Some(broker), Some(link)) => {
            let (route, task) = start_bridge(broker, link, &worker, shutdown_rx.clone());
            (Some(route), Some(task))
        }
        _ => (None, None),
    };
    let card = agent_card(&CardOptions {
        base_url: base_url.clone(),
        require_signatures: config.require_signatures,
        bearer: token.is_some(),
    });
    let state = AppState {
        service: Service {
            store: worker.handle(),
            assignee: config.assignee.clone(),
            project_root: config.project_root.clone(),
            blocking_timeout: config.blocking_timeout,
            shutdown: shutdown_rx,
            streams: Streams::new(
                config.limits.max_streams,
                config.limits.max_streams_per_client,
            ),
            gateway: route,
        },
        card: Arc::new(card),
        token,
        limits: config.limits.clone(),
        required_extension: config.require_signatures.then(|| EXTENSION_URI.to_string()),
        signing: config.require_signatures.then(|| Signing {
            base_url,
            keys: peer_keys.clone(),
            clock: config.clock.clone(),
        }),
        keys: peer_keys,
        clock: config.clock.clone(),
    };
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| StartError::Io(format!("cannot use the socket: {e}")))?;
    let timeouts = Timeouts {
        // Longer than any request may take, so only a connection that stalls is cut.
        idle: config.limits.request_timeout + Duration::from_secs(30),
        head: config.limits.head_timeout,
    };
    let linger = Linger {
        time: config.limits.linger_time,
        bytes: config.limits.linger_bytes,
    };
    let guarded = Guarded::new(listener, config.limits.max_connections, timeouts, linger);
    // Each request knows its connection, so that a refusal can have it closed gently.
    let app = router(state).into_make_service_with_connect_info::<Conn>();
    let shutdown = async move {
        stop.await;
        let _ = shutdown_tx.send(true);
    };
    let served = axum::serve(guarded, app)
        .with_graceful_shutdown(shutdown)
        .await;
    if let Some(link) = link {
        // Unregisters keeping its asks: they stay answerable while the gateway is away. Its
        // requests in flight end at once, so the bridge, told to stop, lets go of the store.
        link.stop();
    }
    if let Some(task) = bridge_task {
        let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
    }
    drop(worker);
    served.map_err(|e| StartError::Io(format!("the service failed: {e}")))
}

fn runtime() -> Result<tokio::runtime::Runtime, StartError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("a2a-serve")
        .enable_all()
        .build()
        .map_err(|e| StartError::Io(format!("cannot start the runtime: {e}")))
}

/// Runs the service in this thread until SIGTERM or SIGINT. `on_bound` is told the bound address
/// once the socket listens (the CLI prints it).
pub fn run(config: ServeConfig, on_bound: impl FnOnce(SocketAddr)) -> Result<(), StartError> {
    let prepared = prepare(&config)?;
    let runtime = runtime()?;
    // The handlers are installed before the address is announced: a signal sent as soon as the
    // address is known stops the service gracefully instead of killing it.
    let stop = {
        let _entered = runtime.enter();
        stop_signals()?
    };
    on_bound(prepared.local);
    runtime.block_on(async move { serve(config, prepared, stop).await })
}

/// SIGTERM or SIGINT, whichever comes first; installed when called (inside a runtime).
#[cfg(unix)]
fn stop_signals() -> Result<impl std::future::Future<Output = ()>, StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let install = |kind| {
        signal(kind).map_err(|e| StartError::Io(format!("cannot install a signal handler: {e}")))
    };
    let mut term = install(SignalKind::terminate())?;
    let mut int = install(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn stop_signals() -> Result<impl std::future::Future<Output = ()>, StartError> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// A service running on a thread of its own (for tests and embedding): stopped gracefully by
/// [`Running::stop`] or when dropped.
pub struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), StartError>>>,
}

impl Running {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the service and waits until it has stopped (the store is closed then).
    pub fn stop(mut self) -> Result<(), StartError> {
        self.stop_now()
    }

    fn stop_now(&mut self) -> Result<(), StartError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(StartError::Io("the service thread panicked".into()))),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop_now();
    }
}

/// Starts the service on a thread of its own; returns once it listens.
pub fn spawn(config: ServeConfig) -> Result<Running, StartError> {
    let prepared = prepare(&config)?;
    let addr = prepared.local;
    let runtime = runtime()?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("a2a-serve-main".into())
        .spawn(move || {
            runtime.block_on(serve(config, prepared, async {
                let _ = stop_rx.await;
            }))
        })
        .map_err(|e| StartError::Io(format!("cannot start the service thread: {e}")))?;
    Ok(Running {
        addr,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}
