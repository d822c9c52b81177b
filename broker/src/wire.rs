//! The wire: 4-byte big-endian length + UTF-8 JSON, and the exact validation of every client
//! frame, as the existing adapters speak protocol v4.

use agent_intercom_core::boss::feature::semantics;
use serde_json::{Map, Value};

use crate::config::BrokerConfig;

/// Codes of `{type:"error"}` frames.
pub mod error_code {
    /// Another protocol or version asked to register.
    pub const PROTOCOL_MISMATCH: &str = "PROTOCOL_MISMATCH";
    /// A malformed or out-of-order frame.
    pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
    /// The session id is live in another runtime.
    pub const SESSION_ID_IN_USE: &str = "SESSION_ID_IN_USE";
    /// Remote-access administration and remote registration are not served locally.
    pub const ACCESS_DENIED: &str = "ACCESS_DENIED";
    /// Boss participant registration is not supported.
    pub const BOSS_FEATURE_UNAVAILABLE: &str = "BOSS_FEATURE_UNAVAILABLE";
    /// The connection exceeded its token bucket.
    pub const RATE_LIMITED: &str = "RATE_LIMITED";
    /// The session cap is reached.
    pub const TOO_MANY_SESSIONS: &str = "TOO_MANY_SESSIONS";
}

/// Codes of `delivery_failed` frames.
pub mod failure_code {
    #![allow(missing_docs)]
    // The ask-threading refusals live in core, with the rules that decide them.
    pub use agent_intercom_core::asks::{
        ASK_ALREADY_PENDING, INVALID_REPLY_TARGET, MUTUAL_ASK, TOO_MANY_PENDING_ASKS,
    };
    pub const INVALID_MESSAGE: &str = "INVALID_MESSAGE";
    pub const CONTROL_DISPATCH_UNAVAILABLE: &str = "CONTROL_DISPATCH_UNAVAILABLE";
    pub const SESSION_NOT_FOUND: &str = "SESSION_NOT_FOUND";
    pub const AMBIGUOUS_TARGET: &str = "AMBIGUOUS_TARGET";
    pub const SENDER_NOT_FOUND: &str = "SENDER_NOT_FOUND";
    pub const DUPLICATE_MESSAGE_ID: &str = "DUPLICATE_MESSAGE_ID";
    pub const CONFLICTING_MESSAGE_ID: &str = "CONFLICTING_MESSAGE_ID";
    pub const TOO_MANY_PENDING_DELIVERIES: &str = "TOO_MANY_PENDING_DELIVERIES";
    pub const RECIPIENT_DISCONNECTED: &str = "RECIPIENT_DISCONNECTED";
    pub const SENDER_DISCONNECTED: &str = "SENDER_DISCONNECTED";
    pub const DELIVERY_TIMEOUT: &str = "DELIVERY_TIMEOUT";
    /// Extension (opt-in, `send.queue`): the recipient's offline queue is full.
    pub const QUEUE_FULL: &str = "QUEUE_FULL";
    /// Extension (opt-in, `send.queue`): the message waited `offline_ttl_ms` in the queue.
    pub const QUEUE_EXPIRED: &str = "QUEUE_EXPIRED";
    /// Extension (opt-in, `send.queue`): the asker cancelled (`cancel_ask`) a queued ask before
    /// it was handed to its recipient; it is never delivered.
    pub const ASK_CANCELLED: &str = "ASK_CANCELLED";
}

/// The states `delivery_status` reports (an extension: only a client that sends the frame sees
/// them). `unknown`: the broker holds nothing about that message id of the asking session
/// (never sent, refused before it was accepted, forgotten, or another session's).
pub mod delivery_state {
    /// Accepted and handed to the connected recipient; not acknowledged yet.
    pub const ACCEPTED: &str = "accepted";
    /// In the offline queue (handed out and not acknowledged counts as queued too).
    pub const QUEUED: &str = "queued";
    /// The recipient acknowledged it (`message_received`).
    pub const DELIVERED: &str = "delivered";
    /// The recipient said it was shown to its model (`message_read`).
    pub const READ: &str = "read";
    /// Accepted, then failed (the `delivery_failed` its sender was told).
    pub const FAILED: &str = "failed";
    /// Waited in the offline queue past `offline_ttl_ms` (`QUEUE_EXPIRED`).
    pub const EXPIRED: &str = "expired";
    /// Nothing known.
    pub const UNKNOWN: &str = "unknown";
    /// Every state, in the order of a message's life.
    pub const ALL: [&str; 7] = [ACCEPTED, QUEUED, DELIVERED, READ, FAILED, EXPIRED, UNKNOWN];
}

/// The `endpoint` a compatible broker advertises in `health_ok` (this one serves local clients
/// only).
pub const LOCAL_ENDPOINT: &str = "local";

/// The remote-access feature this broker's contract names (in `health_ok` and in the line the
/// CLI prints once the broker listens).
pub const REMOTE_ACCESS_FEATURE: &str = "remote-access-v1";

/// The remote-access contract current Node clients require in `health_ok`: the policy kernel's
/// semantics version and hash, as the core computes them from its golden vectors.
pub fn remote_access_contract() -> Value {
    use agent_intercom_core::policy;
    serde_json::json!({
        "feature": REMOTE_ACCESS_FEATURE,
        "policySemanticsVersion": policy::POLICY_SEMANTICS_VERSION,
        "policySemanticsHash": policy::vectors::semantics_hash(),
    })
}

/// Encodes one frame: length prefix + compact JSON.
pub fn encode(value: &Value) -> Vec<u8> {
    // Serialized straight behind a header slot: one buffer, no copy, unless a held lone
    // surrogate must be written back out (rare), which text_frame does.
    let mut frame = vec![0u8; 4];
    serde_json::to_writer(&mut frame, value).expect("a serde_json::Value always serializes");
    if crate::jstext::holds_mark(&frame[4..]) {
        let text = std::str::from_utf8(&frame[4..]).expect("serde_json writes UTF-8");
        return text_frame(text);
    }
    let len = (frame.len() - 4) as u32;
    frame[..4].copy_from_slice(&len.to_be_bytes());
    frame
}

/// Compact JSON of `value` with every object's keys in sorted (byte) order, whatever order they
/// were written in: for digests that must not depend on key order. Exactly what serde_json wrote
/// for a `Value` when its maps were sorted, so a digest stored earlier still matches.
pub fn write_sorted(out: &mut impl std::io::Write, value: &Value) -> std::io::Result<()> {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.write_all(b"{")?;
            for (i, (key, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_sorted(out, member)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_sorted(out, item)?;
            }
            out.write_all(b"]")
        }
        scalar => Ok(serde_json::to_writer(&mut *out, scalar)?),
    }
}

/// One frame of JSON text produced from held values (see [`crate::jstext`]): length prefix and
/// the text with any held lone surrogate written back out.
pub fn text_frame(text: &str) -> Vec<u8> {
    let body = crate::jstext::release(text);
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body.as_bytes());
    frame
}

/// Length in UTF-16 code units: JavaScript's `string.length`, which the adapters' limits use.
/// Held lone surrogates count as the one unit they are in JavaScript ([`crate::jstext`]).
pub fn js_len(s: &str) -> usize {
    crate::jstext::js_len(s)
}

/// A rejected frame: the error frame's code and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// `error` frame code.
    pub code: &'static str,
    /// Human-readable reason (never a scope value).
    pub message: String,
}

impl Rejection {
    /// An INVALID_REQUEST rejection.
    pub fn invalid(message: impl Into<String>) -> Rejection {
        Rejection {
            code: error_code::INVALID_REQUEST,
            message: message.into(),
        }
    }
}

/// The session record a `register` carries.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRecord {
    /// Working directory.
    pub cwd: String,
    /// Model name.
    pub model: String,
    /// Process id (a JSON number as sent).
    pub pid: serde_json::Number,
    /// Start time (a JSON number as sent).
    pub started_at: serde_json::Number,
    /// Last activity (a JSON number as sent).
    pub last_activity: serde_json::Number,
    /// Display name.
    pub name: Option<String>,
    /// Status line.
    pub status: Option<String>,
    /// Identity shared by reconnects of one live runtime.
    pub runtime_instance_id: Option<String>,
}

/// A validated `register` frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Register {
    /// Requested session id, or why it is refused: the Pi broker checks it last, after the
    /// duplicate-register check, and only for a local registration (a remote principal's id is
    /// the broker's).
    pub session_id: Result<Option<String>, Rejection>,
    /// Scope id, validated (None = unscoped).
    pub scope: Option<String>,
    /// The session record.
    pub session: SessionRecord,
}

/// A validated message attachment list and content: kept as the JSON the sender sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Send {
    /// The selector.
    pub to: String,
    /// Message id.
    pub id: String,
    /// `replyTo`.
    pub reply_to: Option<String>,
    /// `expectsReply`.
    pub expects_reply: bool,
    /// The message object, forwarded verbatim.
    pub message: Value,
    /// Extension `send.queue`: to a known offline session (by full id), queue it.
    pub queue: bool,
    /// Extension `send.receipts`: tell the sender when the recipient has read it.
    pub receipts: bool,
}

/// A client frame after validation.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientFrame {
    /// `health`.
    Health {
        /// Echoed.
        request_id: String,
        /// `extensions: true` (opt-in): the answer lists [`EXTENSIONS`].
        extensions: bool,
    },
    /// `register`.
    Register(Box<Register>),
    /// `unregister`.
    Unregister {
        /// Keep ask edges (deferred) instead of cancelling them.
        preserve_asks: bool,
    },
    /// `list`.
    List {
        /// Echoed.
        request_id: String,
    },
    /// `send`, valid.
    Send(Box<Send>),
    /// `send` whose message is invalid: answered with `delivery_failed` (the connection stays).
    InvalidSend {
        /// The message id when one could be read, else "unknown".
        message_id: String,
        /// The failure code.
        code: &'static str,
        /// Why.
        reason: String,
    },
    /// `message_received`.
    MessageReceived {
        /// The delivery acknowledged.
        delivery_id: String,
    },
    /// `message_rejected`.
    MessageRejected {
        /// The delivery rejected.
        delivery_id: String,
        /// Why.
        reason: String,
    },
    /// `defer_ask` or `cancel_ask`.
    AskControl {
        /// true for cancel.
        cancel: bool,
        /// Echoed.
        request_id: String,
        /// The ask's message id.
        message_id: String,
    },
    /// `presence`.
    Presence {
        /// New name.
        name: Option<String>,
        /// New status.
        status: Option<String>,
        /// New model.
        model: Option<String>,
    },
    /// `access_control` (refused: remote access is not served by this broker).
    AccessControl,
    /// Extension `message_read`: the recipient showed a delivered message to its model.
    MessageRead {
        /// The delivery read.
        delivery_id: String,
    },
    /// Extension `delivery_status`: the state of one of the sender's messages.
    DeliveryStatus {
        /// Echoed.
        request_id: String,
        /// The message asked about.
        message_id: String,
    },
}

/// The text of every refusal of a malformed `register` (its keys, its session record, its
/// `session.boss`), as the Pi adapter's broker words it.
pub const INVALID_REGISTER: &str = "Invalid register message";

/// Why a valid Boss participant registration is denied: this broker advertises no Boss feature
/// (the Pi adapter's broker's dormant advertisement, `{baseProtocolVersion: 4, features: []}`).
pub const BOSS_FEATURE_NOT_ADVERTISED: &str = "BOSS_FEATURE_NOT_ADVERTISED";

/// The `delivery_failed` reason of a valid, correlated Boss control envelope, as the Pi
/// adapter's integration tests compare it.
pub const BOSS_CONTROL_UNAVAILABLE_REASON: &str = "Boss typed control is unavailable until the \
     durable Controller delivery authority is installed";

/// The `delivery_failed` reason of a valid, correlated Boss control envelope in
/// `message.control` (where the Claude adapter puts it), as the Claude adapter's broker words it.
pub const BOSS_CONTROL_DISPATCH_UNAVAILABLE_REASON: &str = "Typed Boss control dispatch is \
     unavailable without authoritative correlation and durable dispatch";

/// The `delivery_failed` reason of a message that is not a valid protocol-v4 message.
pub const INVALID_MESSAGE_REASON: &str = "Invalid message format";

/// A value as the core's contract readers see it: plain JSON, with the lone surrogates the
/// frame held given back (see [`crate::jstext`]). `None` only for a value the core's reader
/// refuses to hold (nesting beyond its depth, which serde_json's own limit keeps out).
fn contract_value(value: &Value) -> Option<agent_intercom_core::contract::Js> {
    let text = value.to_string();
    agent_intercom_core::contract::Js::parse_json(&crate::jstext::release(&text)).ok()
}

/// A string of `min..=max` UTF-16 units.
fn text_of(value: Option<&Value>, min: usize, max: usize) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|s| (min..=max).contains(&js_len(s)))
}

/// An optional string of at most `max` units (`min` at least): `Some(None)` when absent, `None`
/// when invalid.
fn opt_text_of(value: Option<&Value>, min: usize, max: usize) -> Option<Option<&str>> {
    match value {
        None => Some(None),
        v => text_of(v, min, max).map(Some),
    }
}

fn number(map: &Map<String, Value>, key: &str) -> Option<serde_json::Number> {
    match map.get(key) {
        Some(Value::Number(n)) => Some(n.clone()),
        _ => None,
    }
}

const SESSION_REQUIRED: [&str; 5] = ["cwd", "model", "pid", "startedAt", "lastActivity"];
const SESSION_OPTIONAL: [&str; 4] = ["name", "status", "runtimeInstanceId", "boss"];

/// The session record, checked as the Pi adapter's `parseSessionRegistration` checks it: exact
/// keys, the limits, and a `boss` (when present) that is a valid Boss participant request
/// ([`semantics::check_participant_registration`]). `None` when anything is wrong; the record and
/// whether it asked for Boss otherwise.
fn parse_session(value: &Value) -> Option<(SessionRecord, bool)> {
    let map = value.as_object()?;
    let keys_ok = SESSION_REQUIRED.iter().all(|k| map.contains_key(*k))
        && map.keys().all(|k| {
            SESSION_REQUIRED.contains(&k.as_str()) || SESSION_OPTIONAL.contains(&k.as_str())
        });
    if !keys_ok {
        return None;
    }
    let record = SessionRecord {
        cwd: text_of(map.get("cwd"), 1, 4096)?.to_string(),
        model: text_of(map.get("model"), 1, 512)?.to_string(),
        pid: number(map, "pid")?,
        started_at: number(map, "startedAt")?,
        last_activity: number(map, "lastActivity")?,
        name: opt_text_of(map.get("name"), 0, 256)?.map(str::to_string),
        status: opt_text_of(map.get("status"), 0, 512)?.map(str::to_string),
        runtime_instance_id: opt_text_of(map.get("runtimeInstanceId"), 1, 256)?.map(str::to_string),
    };
    let boss = match map.get("boss") {
        None => false,
        Some(boss) => {
            let request = contract_value(boss)?;
            semantics::check_participant_registration(&request).ok()?;
            true
        }
    };
    Some((record, boss))
}

const REGISTER_REQUIRED: [&str; 4] = ["type", "protocol", "version", "session"];
const REGISTER_OPTIONAL: [&str; 4] = ["sessionId", "stateId", "access", "scopeId"];

/// `register`, in the Pi adapter's broker's order: the envelope's keys; the protocol; the scope
/// (its value never echoed); the session record with its Boss request; the Boss negotiation,
/// which this broker always denies; the session id. `stateId` authenticates TCP endpoints only
/// and `access` remote ones: on this local socket both are accepted and ignored.
fn parse_register(map: &Map<String, Value>) -> Result<Register, Rejection> {
    let keys_ok = REGISTER_REQUIRED.iter().all(|k| map.contains_key(*k))
        && map.keys().all(|k| {
            REGISTER_REQUIRED.contains(&k.as_str()) || REGISTER_OPTIONAL.contains(&k.as_str())
        });
    if !keys_ok {
        return Err(Rejection::invalid(INVALID_REGISTER));
    }
    // `version !== 4` in JavaScript: any JSON number equal to 4 (`4.0` too).
    let protocol_ok = map.get("protocol").and_then(Value::as_str)
        == Some(agent_intercom_core::protocol::PROTOCOL_NAME)
        && map.get("version").and_then(Value::as_f64)
            == Some(f64::from(agent_intercom_core::protocol::PROTOCOL_VERSION));
    if !protocol_ok {
        return Err(Rejection {
            code: error_code::PROTOCOL_MISMATCH,
            message: format!(
                "Unsupported intercom protocol; expected {} v{}",
                agent_intercom_core::protocol::PROTOCOL_NAME,
                agent_intercom_core::protocol::PROTOCOL_VERSION
            ),
        });
    }
    let scope_input = match map.get("scopeId") {
        None => agent_intercom_core::scope::ScopeInput::Absent,
        Some(Value::String(s)) => agent_intercom_core::scope::ScopeInput::Text(s),
        Some(_) => agent_intercom_core::scope::ScopeInput::NotText,
    };
    let scope = agent_intercom_core::scope::parse_scope_input(scope_input, "scopeId")
        .map_err(|_| Rejection::invalid("Registration metadata is invalid"))?
        .map(|s| s.as_str().to_string());
    let (session, boss) =
        parse_session(&map["session"]).ok_or_else(|| Rejection::invalid(INVALID_REGISTER))?;
    if boss {
        return Err(Rejection {
            code: error_code::BOSS_FEATURE_UNAVAILABLE,
            message: format!("Boss registration denied: {BOSS_FEATURE_NOT_ADVERTISED}"),
        });
    }
    let session_id = match map.get("sessionId") {
        None => Ok(None),
        Some(Value::String(s))
            if !agent_intercom_core::team::js_trim(s).is_empty() && js_len(s) <= 512 =>
        {
            Ok(Some(s.clone()))
        }
        Some(_) => Err(Rejection::invalid("Invalid register sessionId")),
    };
    Ok(Register {
        session_id,
        scope,
        session,
    })
}

/// What a message's `content.control` is: absent, an ordinary control envelope, a valid Boss
/// control envelope (with its own message id), or invalid.
enum Control {
    None,
    Ordinary,
    Boss(String),
    Invalid,
}

/// `content.control` as the Pi adapter's broker reads it: a `type` starting with `boss.` must
/// be a valid Boss control envelope (the core's parser); any other a valid ordinary envelope
/// (type pattern, safe-integer version >= 1, data of at most 16 KiB of JSON).
fn classify_control(control: Option<&Value>) -> Control {
    let Some(control) = control else {
        return Control::None;
    };
    let Some(map) = control.as_object() else {
        return Control::Invalid;
    };
    let kind = map.get("type").and_then(Value::as_str);
    if kind.is_some_and(|k| k.starts_with("boss.")) {
        let Some(envelope) = contract_value(control) else {
            return Control::Invalid;
        };
        return match agent_intercom_core::boss::wire::check_control_envelope(&envelope) {
            Ok(message_id) => Control::Boss(message_id.to_string()),
            Err(_) => Control::Invalid,
        };
    }
    let kind_ok = kind.is_some_and(|kind| {
        !kind.is_empty()
            && js_len(kind) <= 128
            && kind
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && kind
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:/-".contains(&b))
    });
    // Number.isSafeInteger(version) && version >= 1: any JSON number of that value (`1.0` too).
    let version_ok = map
        .get("version")
        .and_then(Value::as_f64)
        .is_some_and(|v| v.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(&v));
    let data_ok = map.get("data").is_none_or(|d| {
        serde_json::to_vec(d)
            .map(|b| b.len() <= 16 * 1024)
            .unwrap_or(false)
    });
    if kind_ok && version_ok && data_ok {
        Control::Ordinary
    } else {
        Control::Invalid
    }
}

/// The message is left `null` in the frame: the caller copies or moves it in ([`parse_frame`]'s
/// two callers).
fn parse_send(map: &Map<String, Value>, config: &BrokerConfig) -> ClientFrame {
    let message = map.get("message").unwrap_or(&Value::Null);
    let message_id = message
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty() && js_len(id) <= config.max_message_id_len)
        .unwrap_or("unknown")
        .to_string();
    let invalid = |message_id: String| ClientFrame::InvalidSend {
        message_id,
        code: failure_code::INVALID_MESSAGE,
        reason: INVALID_MESSAGE_REASON.into(),
    };
    let to = match map.get("to").and_then(Value::as_str) {
        Some(to) if !to.is_empty() && js_len(to) <= config.max_target_len => to,
        _ => return invalid(message_id),
    };
    // The opt-in extensions: booleans when present (absent is false).
    let flag = |key: &str| match map.get(key) {
        None => Some(false),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => None,
    };
    let (Some(queue), Some(receipts)) = (flag("queue"), flag("receipts")) else {
        return invalid(message_id);
    };
    let Some(m) = message.as_object() else {
        return invalid(message_id);
    };
    let id_ok = m
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| !id.is_empty() && js_len(id) <= config.max_message_id_len);
    let timestamp_ok = m.get("timestamp").is_some_and(Value::is_number);
    let reply_to = match m.get("replyTo") {
        None => None,
        Some(Value::String(r)) if !r.is_empty() && js_len(r) <= config.max_message_id_len => {
            Some(r.clone())
        }
        Some(_) => return invalid(message_id),
    };
    let expects_reply = match m.get("expectsReply") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return invalid(message_id),
    };
    let Some(content) = m.get("content").and_then(Value::as_object) else {
        return invalid(message_id);
    };
    let text_ok = content
        .get("text")
        .and_then(Value::as_str)
        .is_some_and(|t| crate::jstext::utf8_len(t) <= config.max_text_bytes);
    let attachments_ok = match content.get("attachments") {
        None => true,
        Some(Value::Array(items)) => {
            items.len() <= config.max_attachments
                && items.iter().all(|a| {
                    let Some(a) = a.as_object() else { return false };
                    matches!(
                        a.get("type").and_then(Value::as_str),
                        Some("file" | "snippet" | "context")
                    ) && a
                        .get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| js_len(n) <= 256)
                        && a.get("content").and_then(Value::as_str).is_some_and(|c| {
                            crate::jstext::utf8_len(c) <= config.max_attachment_bytes
                        })
                        && a.get("language").is_none_or(Value::is_string)
                })
        }
        Some(_) => false,
    };
    if !(id_ok && timestamp_ok && text_ok && attachments_ok) {
        return invalid(message_id);
    }
    // A control envelope never threads; a Boss one must name this message; a valid, correlated
    // Boss one is refused after every other check of the message (Pi's order).
    let control = content.get("control");
    if control.is_some() && (reply_to.is_some() || expects_reply) {
        return invalid(message_id);
    }
    match classify_control(control) {
        Control::None | Control::Ordinary => {}
        Control::Invalid => return invalid(message_id),
        Control::Boss(envelope_id) if envelope_id != message_id => return invalid(message_id),
        Control::Boss(_) => {
            return ClientFrame::InvalidSend {
                message_id,
                code: failure_code::CONTROL_DISPATCH_UNAVAILABLE,
                reason: BOSS_CONTROL_UNAVAILABLE_REASON.into(),
            };
        }
    }
    // `message.control` is where the Claude adapter puts a typed Boss control. Its broker refuses
    // a valid one (a Boss envelope naming this message, no threading, empty text, no
    // attachments) with CONTROL_DISPATCH_UNAVAILABLE and anything else there as invalid; its
    // client drops its own connection on receiving any `message.control` unless it registered as
    // a Boss participant, which no session of this broker can. So neither is forwarded.
    if let Some(control) = m.get("control") {
        // Claude's rule: no `replyTo` or `expectsReply` at all (`expectsReply: false` too).
        let plain = !m.contains_key("replyTo")
            && !m.contains_key("expectsReply")
            && content.get("text").and_then(Value::as_str) == Some("")
            && !content.contains_key("attachments");
        return match classify_control(Some(control)) {
            Control::Boss(id) if id == message_id && plain => ClientFrame::InvalidSend {
                message_id,
                code: failure_code::CONTROL_DISPATCH_UNAVAILABLE,
                reason: BOSS_CONTROL_DISPATCH_UNAVAILABLE_REASON.into(),
            },
            _ => invalid(message_id),
        };
    }
    ClientFrame::Send(Box::new(Send {
        to: to.to_string(),
        id: message_id,
        reply_to,
        expects_reply,
        message: Value::Null,
        queue,
        receipts,
    }))
}

/// The opt-in extensions this broker speaks (docs/hub.md), listed in `health_ok` when the
/// `health` request asks with `extensions: true`: a client finds out on a connection of its own,
/// so a broker without them (which ignores the member) costs it nothing.
pub const EXTENSIONS: [&str; 3] = ["offline-queue", "read-receipts", "delivery-status"];

/// A client frame's `type`, the first thing read of it: `Invalid client message` unless the frame
/// is an object with a string `type`. (The Pi broker then refuses every kind but `health`,
/// `access_control` and `register` on an unregistered connection, `Received <type> before
/// register`, before it reads the kind's own fields.)
pub fn frame_kind(value: &Value) -> Result<&str, Rejection> {
    frame_parts(value).map(|(_, kind)| kind)
}

fn frame_parts(value: &Value) -> Result<(&Map<String, Value>, &str), Rejection> {
    let map = value.as_object();
    map.zip(map.and_then(|m| m.get("type")).and_then(Value::as_str))
        .ok_or_else(|| Rejection::invalid("Invalid client message"))
}

/// [`parse_client_frame`]'s verdict alone, for a caller that only checks a frame (a client
/// before it sends one): a `send`'s message is not copied (it stays `null` in the answer).
pub fn check_client_frame(value: &Value, config: &BrokerConfig) -> Result<ClientFrame, Rejection> {
    parse_frame(value, config)
}

/// Validates a client frame. `Err` is a protocol violation: the broker answers with an `error`
/// frame carrying the rejection and closes the connection.
pub fn parse_client_frame(value: &Value, config: &BrokerConfig) -> Result<ClientFrame, Rejection> {
    let mut frame = parse_frame(value, config)?;
    if let ClientFrame::Send(send) = &mut frame
        && let Some(message) = value.get("message")
    {
        send.message = message.clone();
    }
    Ok(frame)
}

/// [`parse_client_frame`] of a frame the caller owns: a `send`'s message is moved out of `value`
/// into the frame, not copied (what is left of `value` is the rest of the frame).
pub fn parse_client_frame_owned(
    value: &mut Value,
    config: &BrokerConfig,
) -> Result<ClientFrame, Rejection> {
    let mut frame = parse_frame(value, config)?;
    if let ClientFrame::Send(send) = &mut frame
        && let Some(message) = value.get_mut("message")
    {
        send.message = message.take();
    }
    Ok(frame)
}

fn parse_frame(value: &Value, config: &BrokerConfig) -> Result<ClientFrame, Rejection> {
    let (map, kind) = frame_parts(value)?;
    // Pi words a malformed frame of a kind as `Invalid <kind> message`, whichever field is wrong.
    let id_field = |key: &str| -> Result<String, Rejection> {
        match map.get(key) {
            Some(Value::String(s)) if js_len(s) <= config.max_message_id_len => Ok(s.clone()),
            _ => Err(Rejection::invalid(format!("Invalid {kind} message"))),
        }
    };
    Ok(match kind {
        "health" => ClientFrame::Health {
            request_id: id_field("requestId")?,
            extensions: map.get("extensions") == Some(&Value::Bool(true)),
        },
        "register" => ClientFrame::Register(Box::new(parse_register(map)?)),
        "unregister" => match map.get("preserveAsks") {
            None => ClientFrame::Unregister {
                preserve_asks: false,
            },
            Some(Value::Bool(b)) => ClientFrame::Unregister { preserve_asks: *b },
            Some(_) => return Err(Rejection::invalid("Invalid unregister preserveAsks value")),
        },
        "list" => ClientFrame::List {
            request_id: id_field("requestId")?,
        },
        "send" => parse_send(map, config),
        "message_received" => ClientFrame::MessageReceived {
            delivery_id: id_field("deliveryId")?,
        },
        "message_rejected" => {
            let reason = map
                .get("reason")
                .and_then(Value::as_str)
                .filter(|r| js_len(r) <= 1024);
            match (map.get("code").and_then(Value::as_str), reason) {
                (Some(failure_code::CONFLICTING_MESSAGE_ID), Some(reason)) => {
                    ClientFrame::MessageRejected {
                        delivery_id: id_field("deliveryId")?,
                        reason: reason.to_string(),
                    }
                }
                _ => return Err(Rejection::invalid("Invalid message_rejected message")),
            }
        }
        "defer_ask" | "cancel_ask" => ClientFrame::AskControl {
            cancel: kind == "cancel_ask",
            request_id: id_field("requestId")?,
            message_id: id_field("messageId")?,
        },
        "presence" => {
            let field = |key: &str, max: usize| -> Result<Option<String>, Rejection> {
                match map.get(key) {
                    None => Ok(None),
                    Some(Value::String(s)) if js_len(s) <= max => Ok(Some(s.clone())),
                    Some(_) => Err(Rejection::invalid(format!("Invalid presence {key}"))),
                }
            };
            ClientFrame::Presence {
                name: field("name", 256)?,
                status: field("status", 512)?,
                model: field("model", 512)?,
            }
        }
        "access_control" => ClientFrame::AccessControl,
        "message_read" => ClientFrame::MessageRead {
            delivery_id: id_field("deliveryId")?,
        },
        "delivery_status" => ClientFrame::DeliveryStatus {
            request_id: id_field("requestId")?,
            message_id: id_field("messageId")?,
        },
        other => {
            return Err(Rejection::invalid(format!(
                "Unknown client message type: {}",
                other.chars().take(64).collect::<String>()
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    fn sorted(value: &Value) -> String {
        let mut out = Vec::new();
        super::write_sorted(&mut out, value).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The same value with every map rebuilt in sorted key order: what serde_json wrote before
    /// its maps kept insertion order.
    fn resorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), resorted(&map[k])))
                        .collect::<Map<String, Value>>(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(resorted).collect()),
            other => other.clone(),
        }
    }

    #[test]
    fn write_sorted_orders_every_object_and_nothing_else() {
        let value = json!({
            "z": [{ "b": 1, "a": "\u{1F600}\"\n" }, 2.5, null],
            "A": { "é": true, "e": false, "": -0.0 },
            "m": "x",
        });
        let text = sorted(&value);
        assert_eq!(
            text,
            r#"{"A":{"":-0.0,"e":false,"é":true},"m":"x","z":[{"a":"😀\"\n","b":1},2.5,null]}"#
        );
        assert_eq!(text, resorted(&value).to_string());
        // Insertion order is what a plain serialization keeps.
        assert!(value.to_string().starts_with(r#"{"z":"#));
    }
}
