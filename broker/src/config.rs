//! Broker configuration: where it lives and every limit. Defaults are the existing adapters'
//! limits; each can be raised.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything a broker needs to know. Build with [`BrokerConfig::for_agent_dir`] or
/// [`BrokerConfig::from_env`], then adjust fields.
#[derive(Clone, Debug)]
pub struct BrokerConfig {
    /// The intercom directory (mode 0700): socket, ownership files, the store.
    pub intercom_dir: PathBuf,
    /// The listening socket (default `<intercom_dir>/broker.sock`).
    pub socket_path: PathBuf,
    /// Exit this long after the last session leaves; `None` never exits on idle.
    pub idle_exit: Option<Duration>,
    /// Registered sessions at most.
    pub max_sessions: usize,
    /// Connections that have not registered yet, at most (the oldest is evicted).
    pub max_unregistered: usize,
    /// Time a connection has to send `register` (or `health`).
    pub registration_timeout: Duration,
    /// Token bucket capacity per connection.
    pub rate_capacity: f64,
    /// Tokens refilled per second.
    pub rate_refill_per_second: f64,
    /// A frame costs ceil(bytes / this) tokens.
    pub rate_bytes_per_token: usize,
    /// Largest frame payload accepted.
    pub max_frame_bytes: usize,
    /// Once a frame started, the rest must arrive within this time.
    pub frame_timeout: Duration,
    /// Time a receiver has to acknowledge a message.
    pub delivery_ack_timeout: Duration,
    /// How long a delivery result is kept for duplicate suppression.
    pub recent_delivery_ttl: Duration,
    /// Delivery results kept in memory at most; older ones are looked up in the store, so
    /// memory stays bounded at any message rate.
    pub max_recent_in_memory: usize,
    /// Deliveries awaiting acknowledgement, in total.
    pub max_pending_deliveries: usize,
    /// Deliveries awaiting acknowledgement, per sender.
    pub max_pending_deliveries_per_session: usize,
    /// Unresolved asks per sender.
    pub max_pending_asks_per_session: usize,
    /// An ask expires this long after it was sent.
    pub ask_timeout: Duration,
    /// Presence is rebroadcast unchanged at most this often.
    pub presence_heartbeat: Duration,
    /// Largest message text, in bytes.
    pub max_text_bytes: usize,
    /// Attachments per message, at most.
    pub max_attachments: usize,
    /// Largest attachment content, in bytes.
    pub max_attachment_bytes: usize,
    /// Longest message id, request id or delivery id (UTF-16 units, as JavaScript counts).
    pub max_message_id_len: usize,
    /// Longest `send.to`.
    pub max_target_len: usize,
    /// Bytes queued for a connection that does not read, at most; past it the connection is
    /// closed as a slow consumer.
    pub max_outbound_bytes: usize,
    /// What goes to stderr.
    pub log_level: LogLevel,
    /// Shut down cleanly on SIGTERM and SIGINT (the CLI sets this; embedders usually do not).
    pub handle_signals: bool,
}

/// The agent directory: `$PI_CODING_AGENT_DIR` (relative paths resolved against the current
/// directory) or `~/.pi/agent`.
pub fn agent_dir_from_env() -> PathBuf {
    match std::env::var_os("PI_CODING_AGENT_DIR").map(|v| v.to_string_lossy().trim().to_string()) {
        Some(dir) if !dir.is_empty() => {
            let path = PathBuf::from(dir);
            if path.is_absolute() {
                path
            } else {
                std::env::current_dir().unwrap_or_default().join(path)
            }
        }
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".pi/agent"),
    }
}

impl BrokerConfig {
    /// Defaults for an agent directory: `<agent_dir>/intercom/broker.sock`.
    pub fn for_agent_dir(agent_dir: &Path) -> BrokerConfig {
        let intercom_dir = agent_dir.join("intercom");
        BrokerConfig {
            socket_path: intercom_dir.join("broker.sock"),
            intercom_dir,
            idle_exit: Some(Duration::from_secs(5)),
            max_sessions: 128,
            max_unregistered: 32,
            registration_timeout: Duration::from_millis(1000),
            rate_capacity: 240.0,
            rate_refill_per_second: 120.0,
            rate_bytes_per_token: 8 * 1024,
            max_frame_bytes: 1024 * 1024,
            frame_timeout: Duration::from_secs(10),
            delivery_ack_timeout: Duration::from_secs(8),
            recent_delivery_ttl: Duration::from_secs(10 * 60),
            max_recent_in_memory: 50_000,
            max_pending_deliveries: 1024,
            max_pending_deliveries_per_session: 64,
            max_pending_asks_per_session: 64,
            ask_timeout: Duration::from_secs(10 * 60),
            presence_heartbeat: Duration::from_secs(1),
            max_text_bytes: 256 * 1024,
            max_attachments: 16,
            max_attachment_bytes: 512 * 1024,
            max_message_id_len: 256,
            max_target_len: 512,
            max_outbound_bytes: 16 * 1024 * 1024,
            log_level: LogLevel::Warn,
            handle_signals: false,
        }
    }

    /// Defaults for the agent directory the environment names.
    pub fn from_env() -> BrokerConfig {
        BrokerConfig::for_agent_dir(&agent_dir_from_env())
    }

    /// Sets one field by name (`max_sessions=10000`, `idle_exit_secs=0`, `ask_timeout_ms=600000`,
    /// `log_level=info` ...): how the CLI's `--set` and the Node options reach every limit.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let int = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{key} takes a whole number, not {value:?}"))
        };
        let ms = || int().map(Duration::from_millis);
        match key {
            "idle_exit_secs" => {
                self.idle_exit = Some(int()?).filter(|s| *s > 0).map(Duration::from_secs)
            }
            "idle_exit_ms" => {
                self.idle_exit = Some(int()?).filter(|s| *s > 0).map(Duration::from_millis)
            }
            "max_sessions" => self.max_sessions = int()? as usize,
            "max_unregistered" => self.max_unregistered = int()? as usize,
            "registration_timeout_ms" => self.registration_timeout = ms()?,
            "rate_capacity" => self.rate_capacity = int()? as f64,
            "rate_refill_per_second" => self.rate_refill_per_second = int()? as f64,
            "rate_bytes_per_token" => self.rate_bytes_per_token = int()?.max(1) as usize,
            "max_frame_bytes" => self.max_frame_bytes = int()? as usize,
            "frame_timeout_ms" => self.frame_timeout = ms()?,
            "delivery_ack_timeout_ms" => self.delivery_ack_timeout = ms()?,
            "recent_delivery_ttl_ms" => self.recent_delivery_ttl = ms()?,
            "max_recent_in_memory" => self.max_recent_in_memory = int()? as usize,
            "max_pending_deliveries" => self.max_pending_deliveries = int()? as usize,
            "max_pending_deliveries_per_session" => {
                self.max_pending_deliveries_per_session = int()? as usize
            }
            "max_pending_asks_per_session" => self.max_pending_asks_per_session = int()? as usize,
            "ask_timeout_ms" => self.ask_timeout = ms()?,
            "presence_heartbeat_ms" => self.presence_heartbeat = ms()?,
            "max_text_bytes" => self.max_text_bytes = int()? as usize,
            "max_attachments" => self.max_attachments = int()? as usize,
            "max_attachment_bytes" => self.max_attachment_bytes = int()? as usize,
            "max_message_id_len" => self.max_message_id_len = int()? as usize,
            "max_target_len" => self.max_target_len = int()? as usize,
            "max_outbound_bytes" => self.max_outbound_bytes = int()? as usize,
            "log_level" => {
                self.log_level = LogLevel::parse(value).ok_or_else(|| {
                    format!("log_level is off, error, warn, info or debug, not {value:?}")
                })?
            }
            _ => return Err(format!("unknown setting {key:?}")),
        }
        Ok(())
    }

    /// `broker.pid` in the intercom directory.
    pub fn pid_path(&self) -> PathBuf {
        self.intercom_dir.join("broker.pid")
    }

    /// `broker.owner`: created exclusively, holding the owning pid.
    pub fn owner_path(&self) -> PathBuf {
        self.intercom_dir.join("broker.owner")
    }

    /// `broker.spawn.lock`: pid and timestamp of whoever is starting a broker.
    pub fn spawn_lock_path(&self) -> PathBuf {
        self.intercom_dir.join("broker.spawn.lock")
    }

    /// The SQLite store of ask edges and delivery results.
    pub fn store_path(&self) -> PathBuf {
        self.intercom_dir.join("broker-state.sqlite")
    }
}

/// How much the broker tells stderr. It never logs message bodies or scope ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Nothing.
    Off = 0,
    /// Failures of the broker itself.
    Error = 1,
    /// Refused connections and degraded durability.
    Warn = 2,
    /// Start, stop, registrations.
    Info = 3,
    /// Every frame type.
    Debug = 4,
}

impl LogLevel {
    /// Parses off/error/warn/info/debug.
    pub fn parse(text: &str) -> Option<LogLevel> {
        Some(match text {
            "off" => LogLevel::Off,
            "error" => LogLevel::Error,
            "warn" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            _ => return None,
        })
    }
}
