//! Broker configuration: where it lives and every limit. Defaults are the existing adapters'
//! limits; each can be raised.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_intercom_core::{Error, ErrorCode};

/// The unit of a limit: what its number means and the Rust type it becomes.
pub trait Unit {
    /// The field's type.
    type Value: Copy + std::fmt::Debug;
    /// How the docs and error messages name the unit.
    const NAME: &'static str;
    /// The value a validated number stands for.
    fn value(n: u64) -> Self::Value;
}

/// A count or a size in bytes.
pub struct Count;
impl Unit for Count {
    type Value = usize;
    const NAME: &'static str = "count";
    fn value(n: u64) -> usize {
        // Every range below fits in 32 bits, so this never truncates on a 64-bit target.
        usize::try_from(n).unwrap_or(usize::MAX)
    }
}

/// Milliseconds.
pub struct Millis;
impl Unit for Millis {
    type Value = Duration;
    const NAME: &'static str = "milliseconds";
    fn value(n: u64) -> Duration {
        Duration::from_millis(n)
    }
}

/// Tokens of the per-connection rate limiter.
pub struct Tokens;
impl Unit for Tokens {
    type Value = f64;
    const NAME: &'static str = "tokens";
    fn value(n: u64) -> f64 {
        n as f64
    }
}

/// One settable limit: its `key=value` name, unit, default and accepted range (inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The name `--set`, the C settings text and the Node `settings` object use.
    pub key: &'static str,
    /// What the number means.
    pub unit: &'static str,
    /// The default.
    pub default: u64,
    /// The smallest value accepted.
    pub min: u64,
    /// The largest value accepted. Ranges are chosen so that no arithmetic on a limit
    /// (deadlines, byte counts, token sums) can overflow.
    pub max: u64,
    /// What it limits.
    pub doc: &'static str,
}

const DAY_MS: u64 = 24 * 60 * 60 * 1000;
const MIB: u64 = 1024 * 1024;

/// The longest idle-exit delay accepted (`idle_exit_secs`, `idle_exit_ms`): 30 days.
pub const MAX_IDLE_EXIT_MS: u64 = 30 * DAY_MS;

/// The largest frame payload by default (`max_frame_bytes`), as the adapters' brokers accept.
pub const DEFAULT_MAX_FRAME_BYTES: u64 = MIB;

/// The idle-exit delay by default, in milliseconds.
pub const DEFAULT_IDLE_EXIT_MS: u64 = 5_000;

/// How long [`crate::ensure`] waits for another starter's broker by default, in milliseconds
/// (Node's `ensureBroker` without `waitMs`).
pub const DEFAULT_ENSURE_WAIT_MS: u64 = 5_000;

/// The setting of the idle-exit delay in seconds (`--idle-exit`).
pub const IDLE_EXIT_SECS_KEY: &str = "idle_exit_secs";

/// The setting of the idle-exit delay in milliseconds (Node's `idleExitMs`).
pub const IDLE_EXIT_MS_KEY: &str = "idle_exit_ms";

/// The setting of the [`LogLevel`] (`--log-level`, Node's `logLevel`).
pub const LOG_LEVEL_KEY: &str = "log_level";

/// The setting of the [`Transport`] (`transport=tcp`).
pub const TRANSPORT_KEY: &str = "transport";

/// The TCP endpoint file the broker writes in the intercom directory when it listens on TCP:
/// `{"transport":"tcp","host":"127.0.0.1","port":N,"stateId":S}`.
pub const PORT_FILE_NAME: &str = "broker.port.json";

/// The loopback address a TCP broker listens on.
pub const TCP_HOST: &str = "127.0.0.1";

/// The variable naming the agent directory.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// The agent directory when [`AGENT_DIR_ENV`] is unset or blank, relative to the home directory.
pub const DEFAULT_AGENT_DIR: &str = ".pi/agent";

/// The intercom directory's name in the agent directory.
pub const INTERCOM_DIR_NAME: &str = "intercom";

/// The socket's file name in the intercom directory (when not overridden).
pub const SOCKET_FILE_NAME: &str = "broker.sock";

/// The owning broker's pid, written once it listens.
pub const PID_FILE_NAME: &str = "broker.pid";

/// Created exclusively and locked by the owning broker, holding its pid.
pub const OWNER_FILE_NAME: &str = "broker.owner";

/// Pid and timestamp of whoever is starting a broker (the adapters' spawn serialization).
pub const SPAWN_LOCK_FILE_NAME: &str = "broker.spawn.lock";

/// The durable store of ask edges and delivery results.
pub const STORE_FILE_NAME: &str = "broker-state.sqlite";

/// The remote-access gateway socket's file name in the intercom directory: remote principals
/// (through a tunnel or a container mount) register here, never on the local socket.
pub const GATEWAY_FILE_NAME: &str = "remote-gateway.sock";

/// The variable the Pi broker reads for the longest delay between two expiry sweeps of remote
/// principals, in milliseconds (at least 50; unset or not a number: 1000).
pub const EXPIRY_SWEEP_ENV: &str = "PI_INTERCOM_REMOTE_EXPIRY_SWEEP_MS";

/// The variable both adapters' brokers (Pi's and Claude's) read for the ask timeout, in
/// milliseconds: what [`BrokerConfig::read_env`] reads into `ask_timeout_ms`.
pub const ASK_TIMEOUT_ENV: &str = "PI_INTERCOM_ASK_TIMEOUT_MS";

/// The setting of the ask timeout (`ask_timeout_ms`), which [`ASK_TIMEOUT_ENV`] also sets.
pub const ASK_TIMEOUT_KEY: &str = "ask_timeout_ms";

/// The setting of the expiry sweep (`remote_expiry_sweep_ms`), which [`EXPIRY_SWEEP_ENV`] also
/// sets.
pub const EXPIRY_SWEEP_KEY: &str = "remote_expiry_sweep_ms";

/// Each variable [`BrokerConfig::read_env`] reads, with the setting it gives. A setting given
/// explicitly (`--set`, the Node `settings`, the C settings text) wins over its variable, which
/// [`crate::embed::config`] then does not read at all.
pub const ENV_SETTINGS: [(&str, &str); 2] = [
    (EXPIRY_SWEEP_ENV, EXPIRY_SWEEP_KEY),
    (ASK_TIMEOUT_ENV, ASK_TIMEOUT_KEY),
];

macro_rules! limits {
    ($(
        $(#[doc = $doc:literal])+
        $field:ident: $unit:ident = $default:expr, $min:expr, $max:expr, $key:literal;
    )+) => {
        /// Everything a broker needs to know. Build with [`BrokerConfig::for_agent_dir`] or
        /// [`BrokerConfig::from_env`], then adjust fields or [`BrokerConfig::set`] them by name.
        #[derive(Clone, Debug)]
        pub struct BrokerConfig {
            /// The intercom directory (mode 0700): socket, ownership files, the store.
            pub intercom_dir: PathBuf,
            /// The listening socket (default `<intercom_dir>/broker.sock`).
            pub socket_path: PathBuf,
            /// The remote-access gateway socket (default `<intercom_dir>/remote-gateway.sock`).
            pub gateway_path: PathBuf,
            /// Exit this long after the last session leaves; `None` never exits on idle.
            pub idle_exit: Option<Duration>,
            /// What goes to stderr.
            pub log_level: LogLevel,
            /// Shut down cleanly on SIGTERM and SIGINT (the CLI sets this; embedders usually do
            /// not).
            pub handle_signals: bool,
            /// What the broker listens on.
            pub transport: Transport,
            $( $(#[doc = $doc])+ pub $field: <$unit as Unit>::Value, )+
        }

        /// Every limit [`BrokerConfig::set`] takes besides `idle_exit_secs`, `idle_exit_ms` and
        /// `log_level`, with its default and range: the one table the docs, the CLI help and the
        /// bindings read.
        pub const LIMITS: &[Setting] = &[
            $( Setting {
                key: $key,
                unit: <$unit as Unit>::NAME,
                default: $default,
                min: $min,
                max: $max,
                doc: concat!($($doc),+),
            }, )+
        ];

        impl BrokerConfig {
            /// Defaults for an agent directory: `<agent_dir>/intercom/broker.sock`.
            pub fn for_agent_dir(agent_dir: &Path) -> BrokerConfig {
                let intercom_dir = agent_dir.join(INTERCOM_DIR_NAME);
                BrokerConfig {
                    socket_path: intercom_dir.join(SOCKET_FILE_NAME),
                    gateway_path: intercom_dir.join(GATEWAY_FILE_NAME),
                    intercom_dir,
                    idle_exit: Some(Duration::from_millis(DEFAULT_IDLE_EXIT_MS)),
                    log_level: LogLevel::Warn,
                    handle_signals: false,
                    transport: Transport::Unix,
                    $( $field: <$unit as Unit>::value($default), )+
                }
            }

            fn set_limit(&mut self, key: &str, n: u64) {
                match key {
                    $( $key => self.$field = <$unit as Unit>::value(n), )+
                    _ => unreachable!("only keys of LIMITS reach set_limit"),
                }
            }
        }
    };
}

limits! {
    /// Registered sessions at most.
    max_sessions: Count = 128, 1, 1_000_000, "max_sessions";
    /// Connections that have not registered yet, at most (the oldest is evicted).
    max_unregistered: Count = 32, 1, 1_000_000, "max_unregistered";
    /// Time a connection has to send `register` (or `health`).
    registration_timeout: Millis = 1_000, 1, DAY_MS, "registration_timeout_ms";
    /// Token bucket capacity per connection.
    rate_capacity: Tokens = 240, 1, 1_000_000_000, "rate_capacity";
    /// Tokens refilled per second.
    rate_refill_per_second: Tokens = 120, 1, 1_000_000_000, "rate_refill_per_second";
    /// Token bucket capacity per connection to the remote-access gateway.
    remote_rate_capacity: Tokens = 60, 1, 1_000_000_000, "remote_rate_capacity";
    /// Tokens refilled per second on a gateway connection.
    remote_rate_refill_per_second: Tokens = 30, 1, 1_000_000_000,
        "remote_rate_refill_per_second";
    /// The longest delay between two sweeps that revoke expired remote principals (a sweep
    /// also runs when the earliest one expires).
    remote_expiry_sweep: Millis = 1_000, 50, DAY_MS, "remote_expiry_sweep_ms";
    /// A frame costs ceil(bytes / this) tokens.
    rate_bytes_per_token: Count = 8 * 1024, 1, 256 * MIB, "rate_bytes_per_token";
    /// Largest frame payload accepted, in bytes.
    max_frame_bytes: Count = DEFAULT_MAX_FRAME_BYTES, 1024, 256 * MIB, "max_frame_bytes";
    /// Once a frame started, the rest must arrive within this time.
    frame_timeout: Millis = 10_000, 1, DAY_MS, "frame_timeout_ms";
    /// Time a receiver has to acknowledge a message.
    delivery_ack_timeout: Millis = 8_000, 1, DAY_MS, "delivery_ack_timeout_ms";
    /// How long a delivery result is kept for duplicate suppression.
    recent_delivery_ttl: Millis = 10 * 60 * 1000, 1, 30 * DAY_MS, "recent_delivery_ttl_ms";
    /// Delivery results kept in memory at most; older ones are looked up in the store, so memory
    /// stays bounded at any message rate.
    max_recent_in_memory: Count = 50_000, 1, 100_000_000, "max_recent_in_memory";
    /// Deliveries awaiting acknowledgement, in total.
    max_pending_deliveries: Count = 1024, 1, 100_000_000, "max_pending_deliveries";
    /// Deliveries awaiting acknowledgement, per sender.
    max_pending_deliveries_per_session: Count = 64, 1, 100_000_000,
        "max_pending_deliveries_per_session";
    /// Unresolved asks per sender.
    max_pending_asks_per_session: Count = 64, 1, 1_000_000, "max_pending_asks_per_session";
    /// An ask expires this long after it was sent.
    ask_timeout: Millis = 10 * 60 * 1000, 1, 30 * DAY_MS, "ask_timeout_ms";
    /// Presence is rebroadcast unchanged at most this often.
    presence_heartbeat: Millis = 1_000, 1, DAY_MS, "presence_heartbeat_ms";
    /// Largest message text, in bytes.
    max_text_bytes: Count = 256 * 1024, 1, 256 * MIB, "max_text_bytes";
    /// Attachments per message, at most.
    max_attachments: Count = 16, 0, 1_000_000, "max_attachments";
    /// Largest attachment content, in bytes.
    max_attachment_bytes: Count = 512 * 1024, 1, 256 * MIB, "max_attachment_bytes";
    /// Longest message id, request id or delivery id (UTF-16 units, as JavaScript counts).
    max_message_id_len: Count = 256, 1, 65_536, "max_message_id_len";
    /// Longest `send.to`.
    max_target_len: Count = 512, 1, 65_536, "max_target_len";
    /// Bytes queued for a connection that does not read, at most; past it the connection is
    /// closed as a slow consumer.
    max_outbound_bytes: Count = 16 * MIB, 4096, 4096 * MIB, "max_outbound_bytes";
    /// How long a session stays known after it was last connected: a `send` with `queue` to
    /// its full id is queued for it this long, and the states `delivery_status` reports are
    /// kept this long.
    offline_retention: Millis = 7 * DAY_MS, 1, 365 * DAY_MS, "offline_retention_ms";
    /// How long a queued message waits for its recipient; then its sender is told
    /// `QUEUE_EXPIRED`.
    offline_ttl: Millis = DAY_MS, 1, 365 * DAY_MS, "offline_ttl_ms";
    /// Messages queued for one offline session, at most (more are refused: `QUEUE_FULL`).
    offline_queue_max_messages: Count = 256, 1, 1_000_000, "offline_queue_max_messages";
    /// Bytes of the messages queued for one offline session, at most (`QUEUE_FULL`).
    offline_queue_max_bytes: Count = 8 * MIB, 1024, 4096 * MIB, "offline_queue_max_bytes";
    /// Bytes of every queued message together, at most (`QUEUE_FULL`): queued messages are
    /// held in memory as well as in the store.
    offline_queue_max_total_bytes: Count = 64 * MIB, 1024, 4096 * MIB,
        "offline_queue_max_total_bytes";
}

/// The agent directory: `$PI_CODING_AGENT_DIR` (relative paths resolved against the current
/// directory) or `~/.pi/agent`.
pub fn agent_dir_from_env() -> PathBuf {
    match std::env::var_os(AGENT_DIR_ENV).map(|v| v.to_string_lossy().trim().to_string()) {
        Some(dir) if !dir.is_empty() => {
            let path = PathBuf::from(dir);
            if path.is_absolute() {
                path
            } else {
                std::env::current_dir().unwrap_or_default().join(path)
            }
        }
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(DEFAULT_AGENT_DIR),
    }
}

/// Every key [`BrokerConfig::set`] takes: the [`LIMITS`], then the four that are not limits.
pub fn setting_keys() -> impl Iterator<Item = &'static str> {
    LIMITS.iter().map(|l| l.key).chain([
        IDLE_EXIT_SECS_KEY,
        IDLE_EXIT_MS_KEY,
        LOG_LEVEL_KEY,
        TRANSPORT_KEY,
    ])
}

/// The whole number at the start of `text` (after blanks), as JavaScript's `parseInt` reads a
/// positive one; `None` without a digit or when it is 0.
fn leading_ms(text: &str) -> Option<u64> {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n = digits
        .parse::<u64>()
        .unwrap_or(if digits.is_empty() { 0 } else { u64::MAX });
    (n > 0).then_some(n)
}

fn whole(key: &str, value: &str, min: u64, max: u64) -> Result<u64, Error> {
    let out_of_range = || {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{key} takes a whole number from {min} to {max}, not {value:?}"),
        )
    };
    // Digits only: no sign, no exponent, no fraction, no blank; a longer run of digits than
    // u64 holds is out of range, not a different error.
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(out_of_range());
    }
    let n = value.parse::<u64>().map_err(|_| out_of_range())?;
    if n < min || n > max {
        return Err(out_of_range());
    }
    Ok(n)
}

/// The largest safe integer of JavaScript (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `Number(text)` of JavaScript when it is a positive safe integer: blanks around (JavaScript's),
/// a sign, decimals with a fraction or an exponent, `0x`/`0o`/`0b` integers, as long as the value
/// is a whole number from 1 to 2^53 - 1 (`1e3`, `0x3e8` and ` 1000 ` are 1000; `1.5`, `0`, `-5`,
/// `10ms`, `Infinity` and a blank text are `None`).
pub fn js_positive_safe_integer(text: &str) -> Option<u64> {
    let text = agent_intercom_core::team::js_trim(text);
    let radix = match text.get(..2) {
        Some("0x" | "0X") => Some(16),
        Some("0o" | "0O") => Some(8),
        Some("0b" | "0B") => Some(2),
        _ => None,
    };
    let value = if let Some(radix) = radix {
        let digits = &text[2..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        // Past 2^53 it is not safe, whatever its rounding: saturate rather than overflow.
        digits.chars().fold(0f64, |n, c| {
            (n * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0)))
                .min(2.0 * MAX_SAFE_INTEGER)
        })
    } else {
        // StrDecimalLiteral: [+-] (digits [. digits?] | . digits) [(e|E) [+-] digits]. Rust's
        // parser rounds as JavaScript's does, but also takes `inf` and `nan`: check the form
        // first. `Infinity` is never a safe integer.
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
            None => (unsigned, None),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let mantissa_ok =
            digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
        let exponent_ok = exponent.is_none_or(|e| {
            let e = e.strip_prefix(['+', '-']).unwrap_or(e);
            !e.is_empty() && digits(e)
        });
        if !(mantissa_ok && exponent_ok) {
            return None;
        }
        text.parse::<f64>().ok()?
    };
    (value.fract() == 0.0 && (1.0..=MAX_SAFE_INTEGER).contains(&value)).then_some(value as u64)
}

impl BrokerConfig {
    /// Defaults for the agent directory the environment names, with what the environment sets
    /// besides ([`BrokerConfig::read_env`]).
    pub fn from_env() -> Result<BrokerConfig, Error> {
        let mut config = BrokerConfig::for_agent_dir(&agent_dir_from_env());
        config.read_env()?;
        Ok(config)
    }

    /// Applies what the environment sets besides the agent directory ([`ENV_SETTINGS`]), as the
    /// adapters' brokers read it. Embeddings call it before their own settings, which win.
    ///
    /// - [`EXPIRY_SWEEP_ENV`], as the Pi broker reads it: its leading digits, at least 50; no
    ///   digits: the default.
    /// - [`ASK_TIMEOUT_ENV`], as both adapters' brokers read it: unset or blank, the default;
    ///   else JavaScript's `Number` of it must be a positive safe integer
    ///   ([`js_positive_safe_integer`]), or the broker does not start (`INVALID_ARGUMENT` naming
    ///   the variable), as theirs throw at start. Above `ask_timeout_ms`'s maximum (30 days) it
    ///   is that maximum: the Pi broker takes any safe integer.
    pub fn read_env(&mut self) -> Result<(), Error> {
        self.read_env_from(|name| std::env::var_os(name))
    }

    /// [`BrokerConfig::read_env`] from the variables `var` gives (`None`: unset).
    pub fn read_env_from(
        &mut self,
        var: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<(), Error> {
        if let Some(ms) = var(EXPIRY_SWEEP_ENV)
            .and_then(|v| v.into_string().ok())
            .and_then(|v| leading_ms(&v))
        {
            self.remote_expiry_sweep = Duration::from_millis(ms.clamp(50, DAY_MS));
        }
        if let Some(raw) = var(ASK_TIMEOUT_ENV) {
            let text = raw.to_string_lossy();
            if !agent_intercom_core::team::js_trim(&text).is_empty() {
                let ms = raw
                    .to_str()
                    .and_then(js_positive_safe_integer)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorCode::InvalidArgument,
                            format!(
                                "{ASK_TIMEOUT_ENV} must be a positive integer number of \
                                 milliseconds, not {text:?} (unset it for the default, or set \
                                 {ASK_TIMEOUT_KEY}, which wins over it)"
                            ),
                        )
                    })?;
                let max = LIMITS
                    .iter()
                    .find(|l| l.key == ASK_TIMEOUT_KEY)
                    .map_or(u64::MAX, |l| l.max);
                self.ask_timeout = Duration::from_millis(ms.min(max));
            }
        }
        Ok(())
    }

    /// Sets one field by name (`max_sessions=10000`, `idle_exit_secs=0`, `ask_timeout_ms=600000`,
    /// `log_level=info` ...): how the CLI's `--set`, the C settings text and the Node options
    /// reach every limit. An unknown key is `UNKNOWN_KEY`; a value outside the key's range (see
    /// [`LIMITS`]) or not a whole number is `INVALID_ARGUMENT`, naming the key and the range.
    /// Nothing is changed on error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), Error> {
        match key {
            IDLE_EXIT_SECS_KEY => {
                let secs = whole(key, value, 0, MAX_IDLE_EXIT_MS / 1000)?;
                self.idle_exit = Some(secs).filter(|s| *s > 0).map(Duration::from_secs);
            }
            IDLE_EXIT_MS_KEY => {
                let ms = whole(key, value, 0, MAX_IDLE_EXIT_MS)?;
                self.idle_exit = Some(ms).filter(|s| *s > 0).map(Duration::from_millis);
            }
            LOG_LEVEL_KEY => {
                self.log_level = LogLevel::parse(value).ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidArgument,
                        format!("log_level is {}, not {value:?}", LogLevel::names_text()),
                    )
                })?
            }
            TRANSPORT_KEY => {
                self.transport = Transport::parse(value).ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidArgument,
                        format!("transport is unix or tcp, not {value:?}"),
                    )
                })?
            }
            _ => match LIMITS.iter().find(|l| l.key == key) {
                Some(limit) => {
                    let n = whole(key, value, limit.min, limit.max)?;
                    self.set_limit(key, n);
                }
                None => {
                    return Err(Error::new(
                        ErrorCode::UnknownKey,
                        format!(
                            "unknown setting {key:?}; settings: {}",
                            setting_keys().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
            },
        }
        Ok(())
    }

    /// `broker.pid` in the intercom directory.
    pub fn pid_path(&self) -> PathBuf {
        self.intercom_dir.join(PID_FILE_NAME)
    }

    /// `broker.owner`: created exclusively, holding the owning pid.
    pub fn owner_path(&self) -> PathBuf {
        self.intercom_dir.join(OWNER_FILE_NAME)
    }

    /// `broker.spawn.lock`: pid and timestamp of whoever is starting a broker.
    pub fn spawn_lock_path(&self) -> PathBuf {
        self.intercom_dir.join(SPAWN_LOCK_FILE_NAME)
    }

    /// The SQLite store of ask edges and delivery results.
    pub fn store_path(&self) -> PathBuf {
        self.intercom_dir.join(STORE_FILE_NAME)
    }

    /// `broker.port.json`: the TCP endpoint, written when the transport is TCP.
    pub fn port_path(&self) -> PathBuf {
        self.intercom_dir.join(PORT_FILE_NAME)
    }

    /// `broker-access.json`: the remote principals and pending enrollments (hashed secrets).
    pub fn access_path(&self) -> PathBuf {
        self.intercom_dir.join(crate::access::ACCESS_FILE_NAME)
    }

    /// `broker-admin.json`: the local administrator's token, read by access tools.
    pub fn admin_path(&self) -> PathBuf {
        self.intercom_dir.join(crate::access::ADMIN_FILE_NAME)
    }

    /// `broker-audit.jsonl`: every remote-access decision, one JSON line each.
    pub fn audit_path(&self) -> PathBuf {
        self.intercom_dir.join(crate::access::AUDIT_FILE_NAME)
    }
}

/// What the broker listens on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Unix sockets: `broker.sock`, and the remote-access gateway beside it (the default).
    Unix,
    /// TCP on 127.0.0.1, an ephemeral port, as the Pi broker listens on Windows: the endpoint
    /// and a per-start `stateId` are written to `broker.port.json` (0600), and `health` or
    /// `register` without that `stateId` is dropped unanswered. There is no remote gateway, and
    /// sessions are not `trustedLocal`.
    Tcp,
}

impl Transport {
    /// The setting's value: `unix` or `tcp`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Transport::Unix => "unix",
            Transport::Tcp => "tcp",
        }
    }

    /// Parses `unix` or `tcp`.
    pub fn parse(text: &str) -> Option<Transport> {
        [Transport::Unix, Transport::Tcp]
            .into_iter()
            .find(|t| t.as_str() == text)
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
    /// Every level, quietest first.
    pub const ALL: [LogLevel; 5] = [
        LogLevel::Off,
        LogLevel::Error,
        LogLevel::Warn,
        LogLevel::Info,
        LogLevel::Debug,
    ];

    /// The level's name in settings (`log_level=warn`) and options (`logLevel: "warn"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Off => "off",
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        }
    }

    /// Parses off/error/warn/info/debug.
    pub fn parse(text: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == text)
    }

    /// The names for a message: `off, error, warn, info or debug`.
    fn names_text() -> String {
        let names = LogLevel::ALL.map(LogLevel::as_str);
        let (last, rest) = names.split_last().expect("there are levels");
        format!("{} or {last}", rest.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_sets_a_limit() {
        for (_, key) in ENV_SETTINGS {
            assert!(LIMITS.iter().any(|l| l.key == key), "{key}");
        }
    }

    #[test]
    fn javascript_numbers() {
        for (text, n) in [
            ("1", Some(1)),
            ("\u{feff} 2\u{a0}", Some(2)),
            (".5e1", Some(5)),
            ("5.", Some(5)),
            ("5E+2", Some(500)),
            ("50e-1", Some(5)),
            ("0b101", Some(5)),
            ("0O17", Some(15)),
            ("0X1f", Some(31)),
            ("-0x1f", None),
            ("0b", None),
            ("0b2", None),
            (".", None),
            ("e5", None),
            ("5e", None),
            ("inf", None),
            ("NaN", None),
            ("0.5", None),
            ("", None),
        ] {
            assert_eq!(js_positive_safe_integer(text), n, "{text:?}");
        }
    }
}
