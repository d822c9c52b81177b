//! `agent-intercom serve`: the A2A HTTP endpoint over the scratchpad store (docs/a2a.md).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use agent_intercom_a2a::gateway::{self, BrokerOptions, DEFAULT_NAME};
use agent_intercom_a2a::server::{DEFAULT_ASSIGNEE, DEFAULT_BLOCKING_TIMEOUT};
use agent_intercom_a2a::{ServeConfig, StartError};
use clap::Args;

use crate::fail::{Failure, Outcome, invalid, io};

/// Prints 'agent-intercom serve listening on http://ADDR:PORT'; SIGTERM or SIGINT stop it.
#[derive(Args)]
pub struct ServeArgs {
    /// Where to listen [default: 127.0.0.1:0, any free port]
    #[arg(long, value_name = "ADDR:PORT", value_parser = listen_addr)]
    listen: Option<SocketAddr>,
    /// Store (default as for pad); its directory must exist
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Store limits as a JSON object (as for pad)
    #[arg(long, value_name = "JSON")]
    config: Option<String>,
    /// Keys directory: enrolled peer keys (handoffs, signed requests); default as for keys
    #[arg(long, value_name = "DIR")]
    keys: Option<PathBuf>,
    /// Bearer token every POST must carry (a 0600 file)
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Listen beyond loopback (needs --token-file)
    #[arg(long)]
    allow_non_loopback: bool,
    /// Every JSON-RPC request signed (RFC 9421); the Agent Card says so
    #[arg(long)]
    require_signatures: bool,
    /// Where clients reach this service (the Agent Card's URLs)
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// The local agent A2A tasks are assigned to
    #[arg(long, value_name = "NAME")]
    assignee: Option<String>,
    /// Project root of A2A tasks
    #[arg(long, value_name = "PATH")]
    project_root: Option<String>,
    /// Longest wait of a blocking send, 0 to 600
    #[arg(
        long,
        value_name = "SECS",
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(u64).range(0..=600),
    )]
    blocking_timeout: Option<u64>,
    /// Longest request, 0 to 3600 [default: 30]
    #[arg(
        long,
        value_name = "SECS",
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(u64).range(0..=3600),
    )]
    request_timeout: Option<u64>,
    /// Be a broker session: each message becomes an ask to a live session, whose reply
    /// completes the task (docs/a2a.md)
    #[arg(long)]
    broker: bool,
    /// With --broker: the gateway's session name [default: a2a-gateway]
    #[arg(long = "as", value_name = "NAME", requires = "broker")]
    as_name: Option<String>,
    /// With --broker: the sessions a message may name in metadata["agent-intercom/to"]
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        requires = "broker"
    )]
    targets: Option<Vec<String>>,
    /// With --broker: agent directory (default $PI_CODING_AGENT_DIR, else ~/.pi/agent); it
    /// must exist
    #[arg(long, value_name = "DIR", requires = "broker")]
    agent_dir: Option<PathBuf>,
    /// With --broker: how often asks not heard of are checked at the broker, 1 to 3600
    /// [default: 30]
    #[arg(
        long,
        value_name = "SECS",
        requires = "broker",
        value_parser = clap::value_parser!(u64).range(1..=3600),
    )]
    probe_interval: Option<u64>,
}

/// The help with serve's defaults.
pub fn help(command: clap::Command) -> clap::Command {
    command
        .mut_arg("assignee", |a| {
            a.help(format!(
                "The local agent A2A tasks are assigned to [default: {DEFAULT_ASSIGNEE}]; with \
                 --broker, the session a message goes to when it names none"
            ))
        })
        .mut_arg("blocking_timeout", |a| {
            a.help(format!(
                "Longest wait of a blocking send, 0 to 600 [default: {}]",
                DEFAULT_BLOCKING_TIMEOUT.as_secs()
            ))
        })
}

fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    if let Some(port) = text.strip_prefix("localhost:") {
        let port: u16 = port
            .parse()
            .map_err(|_| "the port must be 0 to 65535".to_string())?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| "must be ADDR:PORT with an IP address, e.g. 127.0.0.1:8080".to_string())
}

/// The `--broker` options: the gateway's identity (its session id stable for the store, name
/// and scope), the broker's socket in the agent directory, and how to start a broker.
fn broker_of(args: &ServeArgs, db: &std::path::Path) -> Result<Option<BrokerOptions>, Failure> {
    if !args.broker {
        return Ok(None);
    }
    let scope = crate::mcp::scope_from_env()?;
    if let Some(dir) = &args.agent_dir {
        crate::paths::existing(dir, "--agent-dir")?;
    }
    let broker = agent_intercom_broker::embed::config(args.agent_dir.as_deref(), None, [])?;
    let name = args
        .as_name
        .clone()
        .unwrap_or_else(|| DEFAULT_NAME.to_string());
    let session_id = gateway::session_id(db, &name, scope.as_deref());
    let program =
        std::env::current_exe().map_err(|e| io(format!("cannot find this program: {e}")))?;
    Ok(Some(BrokerOptions {
        socket: broker.socket_path.clone(),
        start: Some((program, args.agent_dir.clone())),
        inbox: agent_intercom_mcp::inbox_path(&broker.intercom_dir, &session_id),
        session_id,
        name,
        scope,
        default_target: args.assignee.clone(),
        targets: args.targets.clone().unwrap_or_default(),
        probe_interval: args
            .probe_interval
            .map_or(gateway::DEFAULT_PROBE_INTERVAL, Duration::from_secs),
    }))
}

/// The options as a [`ServeConfig`].
fn config_of(args: ServeArgs) -> Result<ServeConfig, Failure> {
    let store = crate::paths::store(args.db.as_deref());
    store.ready()?;
    let broker = broker_of(&args, &store.path)?;
    let mut config = ServeConfig::new(store.path);
    config.broker = broker;
    if let Some(text) = &args.config {
        config.store = agent_intercom_scratchpad::api::parse(Some(text), "--config")
            .and_then(|c| agent_intercom_scratchpad::api::config(&c))?;
    }
    if let Some(addr) = args.listen {
        config.listen = addr;
    }
    config.keys = Some(crate::paths::keys(args.keys.as_deref()).path);
    config.token_file = args.token_file;
    config.public_url = args.public_url;
    if let Some(name) = args.assignee {
        config.assignee = name;
    }
    config.project_root = args.project_root;
    if let Some(secs) = args.blocking_timeout {
        config.blocking_timeout = Duration::from_secs(secs);
    }
    if let Some(secs) = args.request_timeout {
        config.limits.request_timeout = Duration::from_secs(secs);
    }
    config.allow_non_loopback = args.allow_non_loopback;
    config.require_signatures = args.require_signatures;
    Ok(config)
}

/// Runs until SIGTERM or SIGINT: 0 after a graceful stop, 2 for bad options, 1 when the store or
/// the socket failed.
pub fn run(args: ServeArgs) -> Outcome {
    let config = config_of(args)?;
    let outcome = agent_intercom_a2a::run(config, |addr| {
        // One line tests and scripts wait for; flushed, as stdout may be a pipe.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "agent-intercom serve listening on http://{addr}");
        let _ = out.flush();
    });
    match outcome {
        Ok(()) => {
            agent_intercom_broker::log::line(format_args!("agent-intercom serve: stopped"));
            agent_intercom_broker::log::flush(agent_intercom_broker::log::STALL);
            Ok(())
        }
        Err(StartError::Config(message)) => Err(invalid(message)),
        Err(StartError::Store(e)) => Err(e.into()),
        Err(StartError::Io(message)) => Err(io(message)),
    }
}
