//! The wire: 4-byte big-endian length + UTF-8 JSON, and the exact validation of every client
//! frame, as the existing adapters speak protocol v4.

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
}

/// The `endpoint` a compatible broker advertises in `health_ok` (this one serves local clients
/// only).
pub const LOCAL_ENDPOINT: &str = "local";

/// The remote-access contract current Node clients require in `health_ok`: the policy kernel's
/// semantics version and hash, as the core computes them from its golden vectors.
pub fn remote_access_contract() -> Value {
    use agent_intercom_core::policy;
    serde_json::json!({
        "feature": "remote-access-v1",
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
    /// Requested session id.
    pub session_id: Option<String>,
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
}

/// A client frame after validation.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientFrame {
    /// `health`.
    Health {
        /// Echoed.
        request_id: String,
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
}

fn obj<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, Rejection> {
    value
        .as_object()
        .ok_or_else(|| Rejection::invalid(format!("{what} must be an object")))
}

fn only_keys(map: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), Rejection> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(Rejection::invalid(format!(
            "{what} has an unsupported field {key:?}"
        ))),
        None => Ok(()),
    }
}

fn string<'a>(map: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a str, Rejection> {
    map.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Rejection::invalid(format!("{what}.{key} must be a string")))
}

fn opt_string<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<&'a str>, Rejection> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Rejection::invalid(format!("{what}.{key} must be a string"))),
    }
}

fn bounded<'a>(value: &'a str, min: usize, max: usize, what: &str) -> Result<&'a str, Rejection> {
    let len = js_len(value);
    if len < min || len > max {
        Err(Rejection::invalid(format!(
            "{what} must be {min} to {max} characters"
        )))
    } else {
        Ok(value)
    }
}

fn number(map: &Map<String, Value>, key: &str) -> Result<serde_json::Number, Rejection> {
    match map.get(key) {
        Some(Value::Number(n)) => Ok(n.clone()),
        _ => Err(Rejection::invalid(format!(
            "session.{key} must be a finite number"
        ))),
    }
}

fn parse_session(value: &Value) -> Result<SessionRecord, Rejection> {
    let map = obj(value, "session")?;
    only_keys(
        map,
        &[
            "cwd",
            "model",
            "pid",
            "startedAt",
            "lastActivity",
            "name",
            "status",
            "runtimeInstanceId",
            "boss",
        ],
        "session",
    )?;
    let record = SessionRecord {
        cwd: bounded(string(map, "cwd", "session")?, 1, 4096, "session.cwd")?.to_string(),
        model: bounded(string(map, "model", "session")?, 1, 512, "session.model")?.to_string(),
        pid: number(map, "pid")?,
        started_at: number(map, "startedAt")?,
        last_activity: number(map, "lastActivity")?,
        name: opt_string(map, "name", "session")?
            .map(|s| bounded(s, 0, 256, "session.name"))
            .transpose()?
            .map(str::to_string),
        status: opt_string(map, "status", "session")?
            .map(|s| bounded(s, 0, 512, "session.status"))
            .transpose()?
            .map(str::to_string),
        runtime_instance_id: opt_string(map, "runtimeInstanceId", "session")?
            .map(|s| bounded(s, 1, 256, "session.runtimeInstanceId"))
            .transpose()?
            .map(str::to_string),
    };
    if map.contains_key("boss") {
        return Err(Rejection {
            code: error_code::BOSS_FEATURE_UNAVAILABLE,
            message: "Boss participant registration is not supported by this broker".into(),
        });
    }
    Ok(record)
}

fn parse_register(map: &Map<String, Value>) -> Result<Register, Rejection> {
    only_keys(
        map,
        &[
            "type",
            "protocol",
            "version",
            "session",
            "sessionId",
            "stateId",
            "access",
            "scopeId",
        ],
        "register",
    )?;
    let protocol = map.get("protocol").and_then(Value::as_str);
    let version = map.get("version").and_then(Value::as_u64);
    if protocol != Some(agent_intercom_core::protocol::PROTOCOL_NAME)
        || version != Some(u64::from(agent_intercom_core::protocol::PROTOCOL_VERSION))
        || map
            .get("version")
            .and_then(Value::as_f64)
            .is_some_and(|v| v.fract() != 0.0)
    {
        return Err(Rejection {
            code: error_code::PROTOCOL_MISMATCH,
            message: format!(
                "Unsupported intercom protocol; expected {} v{}",
                agent_intercom_core::protocol::PROTOCOL_NAME,
                agent_intercom_core::protocol::PROTOCOL_VERSION
            ),
        });
    }
    // The scope is validated before anything else of the session, and its value is never echoed.
    let scope_input = match map.get("scopeId") {
        None => agent_intercom_core::scope::ScopeInput::Absent,
        Some(Value::String(s)) => agent_intercom_core::scope::ScopeInput::Text(s),
        Some(_) => agent_intercom_core::scope::ScopeInput::NotText,
    };
    let scope = agent_intercom_core::scope::parse_scope_input(scope_input, "scopeId")
        .map_err(|_| Rejection::invalid("Registration metadata is invalid"))?
        .map(|s| s.as_str().to_string());
    let session = parse_session(
        map.get("session")
            .ok_or_else(|| Rejection::invalid("register.session is required"))?,
    )?;
    let session_id = match map.get("sessionId") {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() => {
            Some(bounded(s, 1, 512, "sessionId")?.to_string())
        }
        Some(_) => {
            return Err(Rejection::invalid(
                "register.sessionId must be a non-empty string",
            ));
        }
    };
    if let Some(state_id) = map.get("stateId")
        && !state_id.is_string()
    {
        return Err(Rejection::invalid("register.stateId must be a string"));
    }
    Ok(Register {
        session_id,
        scope,
        session,
    })
}

fn valid_control(control: &Value) -> Result<(), (&'static str, &'static str)> {
    let map = control
        .as_object()
        .ok_or((failure_code::INVALID_MESSAGE, "Invalid message format"))?;
    let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
    if kind.starts_with("boss.") {
        return Err((
            failure_code::CONTROL_DISPATCH_UNAVAILABLE,
            "Boss typed control is unavailable: this broker has no Controller delivery authority",
        ));
    }
    let kind_ok = !kind.is_empty()
        && js_len(kind) <= 128
        && kind
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && kind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:/-".contains(&b));
    let version_ok = map
        .get("version")
        .and_then(Value::as_i64)
        .is_some_and(|v| (1..=9_007_199_254_740_991).contains(&v));
    let data_ok = map.get("data").is_none_or(|d| {
        serde_json::to_vec(d)
            .map(|b| b.len() <= 16 * 1024)
            .unwrap_or(false)
    });
    if kind_ok && version_ok && data_ok {
        Ok(())
    } else {
        Err((failure_code::INVALID_MESSAGE, "Invalid message format"))
    }
}

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
        reason: "Invalid message format".into(),
    };
    let to = match map.get("to").and_then(Value::as_str) {
        Some(to) if !to.is_empty() && js_len(to) <= config.max_target_len => to,
        _ => return invalid(message_id),
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
    if let Some(control) = content.get("control") {
        if reply_to.is_some() || expects_reply {
            return invalid(message_id);
        }
        if let Err((code, reason)) = valid_control(control) {
            return ClientFrame::InvalidSend {
                message_id,
                code,
                reason: reason.into(),
            };
        }
    }
    ClientFrame::Send(Box::new(Send {
        to: to.to_string(),
        id: message_id,
        reply_to,
        expects_reply,
        message: message.clone(),
    }))
}

/// Validates a client frame. `Err` is a protocol violation: the broker answers with an `error`
/// frame carrying the rejection and closes the connection.
pub fn parse_client_frame(value: &Value, config: &BrokerConfig) -> Result<ClientFrame, Rejection> {
    let map = obj(value, "frame")?;
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| Rejection::invalid("Invalid client message"))?;
    let id_field = |key: &str| -> Result<String, Rejection> {
        match map.get(key) {
            Some(Value::String(s)) if js_len(s) <= config.max_message_id_len => Ok(s.clone()),
            _ => Err(Rejection::invalid(format!("Invalid {kind} message: {key}"))),
        }
    };
    Ok(match kind {
        "health" => ClientFrame::Health {
            request_id: id_field("requestId")?,
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
        other => {
            return Err(Rejection::invalid(format!(
                "Unknown client message type: {}",
                other.chars().take(64).collect::<String>()
            )));
        }
    })
}
