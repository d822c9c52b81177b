//! The broker client's rules, as pure functions of requests, frames and bytes: what a request
//! may hold and which frame it becomes, how the byte stream splits into frames, and what each
//! answer of the broker means. Both clients of the project decide through this module alone:
//! [`super::Client`] (and so the C ABI) and the Node package's `connect()`, whose addon
//! (`bindings-node/src`) calls these functions while `lib/broker.js` keeps only the sockets,
//! timers and events. Nothing here does I/O, so C and Node answer every frame alike.
//!
//! - Requests: [`Access::parse`], [`RegisterRequest::parse`] and [`AccessControlRequest::parse`]
//!   check a request before anything is sent (`INVALID_ARGUMENT`, `UNKNOWN_KEY`), naming each
//!   field by the path the caller gives (`request` in C, `options` in Node).
//! - Frames in: [`FrameBuffer`] splits the stream, [`read_frame`] reads one frame; a frame over
//!   the frame limit, not UTF-8 or not JSON is `INVALID_FRAME`.
//! - Answers: [`register_answer`] ([`check_registered`], [`broker_refusal`]),
//!   [`access_control_answer`] and [`health_answer`].
//! - The opt-in extensions (docs/hub.md): [`SendOptions::parse`] (`queue`, `receipts`),
//!   [`message_read_request`], [`delivery_status_request`] and [`delivery_status_answer`].

use agent_intercom_core::{Error, ErrorCode, protocol};
use serde_json::{Map, Value};

use crate::config::DEFAULT_MAX_FRAME_BYTES;
use crate::{jstext, wire};

/// The codes of the broker's `error` frames, each the [`ErrorCode`] of the same name
/// (`RATE_LIMITED` is the core's own). An error frame with any other code is `INVALID_FRAME`.
pub const BROKER_ERROR_CODES: [ErrorCode; 8] = [
    ErrorCode::ProtocolMismatch,
    ErrorCode::InvalidRequest,
    ErrorCode::SessionIdInUse,
    ErrorCode::AccessDenied,
    ErrorCode::BossFeatureUnavailable,
    ErrorCode::RemoteAccessIncompatible,
    ErrorCode::RateLimited,
    ErrorCode::TooManySessions,
];

/// The fields of a register request ([`RegisterRequest::parse`]).
pub const REGISTER_FIELDS: [&str; 4] = ["session", "sessionId", "scopeId", "access"];

/// The fields of an access_control request ([`AccessControlRequest::parse`]): those of every
/// action of the local socket (with `adminToken`) and of the gateway (with `access`).
pub const ACCESS_CONTROL_FIELDS: [&str; 7] = [
    "requestId",
    "action",
    "adminToken",
    "access",
    "enrollment",
    "principalId",
    "newParentSessionId",
];

const ACCESS_FIELDS: [&str; 4] = [
    "enrollmentToken",
    "sessionCredential",
    "sessionId",
    "generation",
];
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

fn fail(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

fn object<'a>(value: &'a Value, what: &str, shape: &str) -> Result<&'a Map<String, Value>, Error> {
    value.as_object().ok_or_else(|| {
        fail(
            ErrorCode::InvalidArgument,
            format!("{what} must be an object {shape}"),
        )
    })
}

fn known_keys(
    map: &Map<String, Value>,
    keys: &[&str],
    what: &str,
    taker: &str,
) -> Result<(), Error> {
    match map.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(key) => Err(fail(
            ErrorCode::UnknownKey,
            format!(
                "{what}.{key}: {taker} takes no such field (fields: {})",
                keys.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// A non-empty string without NUL, or absent.
fn text_field<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<&'a str>, Error> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && !s.contains('\0') => Ok(Some(s)),
        Some(_) => Err(fail(
            ErrorCode::InvalidArgument,
            format!("{what}.{key} must be a non-empty string"),
        )),
    }
}

/// A registration credential: the `access` of a register frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// `{enrollmentToken}`: consumed once; the broker assigns the session id.
    Enrollment {
        /// The one-time token.
        token: String,
    },
    /// `{sessionCredential, sessionId, generation}`: a reconnect of an enrolled principal.
    Session {
        /// The credential the broker issued at enrollment.
        credential: String,
        /// The principal's id.
        session_id: String,
        /// The principal's generation.
        generation: u64,
    },
}

impl Access {
    /// Reads an `access` value, `what` naming it in messages: exactly one of the two shapes,
    /// strings non-empty, the generation a whole number from 1 to 2^53 - 1.
    pub fn parse(value: &Value, what: &str) -> Result<Access, Error> {
        const SHAPES: &str = "{enrollmentToken} or {sessionCredential, sessionId, generation}";
        let map = object(value, what, SHAPES)?;
        known_keys(map, &ACCESS_FIELDS, what, "access")?;
        let token = text_field(map, "enrollmentToken", what)?;
        let credential = text_field(map, "sessionCredential", what)?;
        let session_id = text_field(map, "sessionId", what)?;
        let generation = match map.get("generation") {
            None => None,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=MAX_SAFE_INTEGER).contains(&n) => Some(n),
                _ => {
                    return Err(fail(
                        ErrorCode::InvalidArgument,
                        format!(
                            "{what}.generation must be a whole number from 1 to {MAX_SAFE_INTEGER}"
                        ),
                    ));
                }
            },
        };
        match (token, credential, session_id, generation) {
            (Some(token), None, None, None) => Ok(Access::Enrollment {
                token: token.into(),
            }),
            (None, Some(credential), Some(session_id), Some(generation)) => Ok(Access::Session {
                credential: credential.into(),
                session_id: session_id.into(),
                generation,
            }),
            _ => Err(fail(
                ErrorCode::InvalidArgument,
                format!("{what} must be exactly one of {SHAPES}"),
            )),
        }
    }

    /// The `access` value of a frame.
    pub fn to_value(&self) -> Value {
        match self {
            Access::Enrollment { token } => serde_json::json!({ "enrollmentToken": token }),
            Access::Session {
                credential,
                session_id,
                generation,
            } => serde_json::json!({
                "sessionCredential": credential,
                "sessionId": session_id,
                "generation": generation,
            }),
        }
    }
}

/// Parses the JSON text of a request or frame as `JSON.parse` would (lone surrogates included):
/// `INVALID_JSON` naming `what` otherwise.
pub fn parse_json(text: &str, what: &str) -> Result<Value, Error> {
    jstext::parse_frame(text.as_bytes()).map_err(|e| {
        fail(
            ErrorCode::InvalidJson,
            format!("{what} is not valid JSON: {e}"),
        )
    })
}

/// A checked register request: `{session, sessionId?, scopeId?, access?}`.
#[derive(Clone, Debug)]
pub struct RegisterRequest {
    frame: Value,
    access: Option<Access>,
}

impl RegisterRequest {
    /// Checks a request, `what` naming it in messages. The session's own fields are the
    /// broker's to judge; here only the request's shape: an object of known fields, `session`
    /// an object, `sessionId` and `scopeId` strings, `access` one of its two shapes and never
    /// with a `sessionId` (the broker assigns a remote session's id; `access.sessionId` names
    /// it on reconnect).
    pub fn parse(request: &Value, what: &str) -> Result<RegisterRequest, Error> {
        let map = object(request, what, "{session, sessionId?, scopeId?, access?}")?;
        known_keys(map, &REGISTER_FIELDS, what, "register")?;
        let mut frame = Map::new();
        frame.insert("type".into(), "register".into());
        frame.insert("protocol".into(), protocol::PROTOCOL_NAME.into());
        frame.insert("version".into(), protocol::PROTOCOL_VERSION.into());
        match map.get("session") {
            Some(session @ Value::Object(_)) => frame.insert("session".into(), session.clone()),
            _ => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    format!(
                        "{what}.session must be an object {{cwd, model, pid, startedAt, \
                         lastActivity, ...}}"
                    ),
                ));
            }
        };
        for key in ["sessionId", "scopeId"] {
            match map.get(key) {
                None => {}
                Some(v @ Value::String(_)) => {
                    frame.insert(key.into(), v.clone());
                }
                Some(_) => {
                    return Err(fail(
                        ErrorCode::InvalidArgument,
                        format!("{what}.{key} must be a string"),
                    ));
                }
            }
        }
        let access = match map.get("access") {
            None => None,
            Some(v) => Some(Access::parse(v, &format!("{what}.access"))?),
        };
        if let Some(access) = &access {
            if map.contains_key("sessionId") {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    format!(
                        "{what}.sessionId cannot go with {what}.access: the broker assigns a \
                         remote session's id (access.sessionId names it on reconnect)"
                    ),
                ));
            }
            frame.insert("access".into(), access.to_value());
        }
        Ok(RegisterRequest {
            frame: Value::Object(frame),
            access,
        })
    }

    /// The register frame.
    pub fn frame(&self) -> &Value {
        &self.frame
    }

    /// The credential, when this is a remote registration.
    pub fn access(&self) -> Option<&Access> {
        self.access.as_ref()
    }
}

/// A checked access_control request, the frame without its `type`.
#[derive(Clone, Debug)]
pub struct AccessControlRequest {
    frame: Value,
    request_id: String,
    action: String,
}

impl AccessControlRequest {
    /// Checks a request, `what` naming it in messages: an object of [`ACCESS_CONTROL_FIELDS`],
    /// `action` and `requestId` (a fresh UUID when absent) non-empty strings, and exactly one of
    /// `adminToken` (a string: the local socket) and `access` (a session credential: the
    /// gateway). What an action takes besides is the broker's to judge.
    pub fn parse(request: &Value, what: &str) -> Result<AccessControlRequest, Error> {
        let map = object(
            request,
            what,
            "{action, adminToken | access, requestId?, ...}",
        )?;
        known_keys(map, &ACCESS_CONTROL_FIELDS, what, "access_control")?;
        let action = text_field(map, "action", what)?
            .ok_or_else(|| {
                fail(
                    ErrorCode::InvalidArgument,
                    format!("{what}.action is required"),
                )
            })?
            .to_string();
        let request_id = match text_field(map, "requestId", what)? {
            Some(id) => id.to_string(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let mut frame = map.clone();
        match (map.get("adminToken"), map.get("access")) {
            (Some(Value::String(_)), None) => {}
            (Some(_), None) => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    format!("{what}.adminToken must be a string"),
                ));
            }
            (None, Some(access)) => {
                let path = format!("{what}.access");
                if let Access::Enrollment { .. } = Access::parse(access, &path)? {
                    return Err(fail(
                        ErrorCode::InvalidArgument,
                        format!(
                            "{path} must be a session credential {{sessionCredential, sessionId, \
                             generation}}: an enrollment token registers, it does not administer"
                        ),
                    ));
                }
            }
            _ => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    format!(
                        "{what} must carry exactly one of adminToken (the local socket) and \
                         access (the remote gateway)"
                    ),
                ));
            }
        }
        frame.insert("type".into(), "access_control".into());
        frame.insert("requestId".into(), request_id.clone().into());
        Ok(AccessControlRequest {
            frame: Value::Object(frame),
            request_id,
            action,
        })
    }

    /// The access_control frame.
    pub fn frame(&self) -> &Value {
        &self.frame
    }

    /// The request id the answer must carry.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The action the answer must name.
    pub fn action(&self) -> &str {
        &self.action
    }
}

/// A frame from the broker: its JSON text as it came, and the parsed value (lone UTF-16
/// surrogates held as [`crate::jstext`] describes).
#[derive(Clone, Debug)]
pub struct Received {
    /// The frame's JSON text, byte for byte.
    pub text: String,
    /// The parsed frame.
    pub value: Value,
}

/// Bytes from the broker not yet split into frames (4-byte big-endian length + body).
#[derive(Debug, Default)]
pub struct FrameBuffer {
    bytes: Vec<u8>,
}

impl FrameBuffer {
    /// Appends bytes as they came.
    pub fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// True when no byte is buffered (the stream stands between two frames).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next whole frame's body, if one is buffered. A length over the frame limit is
    /// `INVALID_FRAME`: the stream cannot be resynchronised after it.
    pub fn next_body(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let Some(header) = self.bytes.first_chunk::<4>() else {
            return Ok(None);
        };
        let len = u32::from_be_bytes(*header) as u64;
        if len > DEFAULT_MAX_FRAME_BYTES {
            return Err(fail(
                ErrorCode::InvalidFrame,
                format!(
                    "the broker sent a frame of {len} bytes, more than the \
                     {DEFAULT_MAX_FRAME_BYTES} a frame may hold"
                ),
            ));
        }
        let end = 4 + len as usize;
        if self.bytes.len() < end {
            return Ok(None);
        }
        let body = self.bytes[4..end].to_vec();
        self.bytes.drain(..end);
        Ok(Some(body))
    }
}

/// Reads one frame's body: UTF-8 JSON as `JSON.parse` reads it (lone surrogates included), else
/// `INVALID_FRAME`.
pub fn read_frame(body: Vec<u8>) -> Result<Received, Error> {
    let text = String::from_utf8(body).map_err(|_| {
        fail(
            ErrorCode::InvalidFrame,
            "the broker sent a frame that is not UTF-8",
        )
    })?;
    let value = jstext::parse_frame(text.as_bytes()).map_err(|e| {
        fail(
            ErrorCode::InvalidFrame,
            format!("the broker sent a frame that is not JSON: {e}"),
        )
    })?;
    Ok(Received { text, value })
}

/// The [`Error`] of a broker's `error` frame: its code (one of [`BROKER_ERROR_CODES`]) and its
/// text. Anything else is `INVALID_FRAME`: a code that is not a string, a code protocol v4 does
/// not define (the message names it, with the text when there is one), a known code without a
/// string text.
pub fn broker_refusal(frame: &Value) -> Error {
    let Some(code) = frame.get("code").and_then(Value::as_str) else {
        return fail(
            ErrorCode::InvalidFrame,
            "the broker sent an error frame without a string code",
        );
    };
    let text = frame.get("error").and_then(Value::as_str);
    match (BROKER_ERROR_CODES.iter().find(|c| c.as_str() == code), text) {
        (Some(&known), Some(text)) => fail(known, text),
        (Some(_), None) => fail(
            ErrorCode::InvalidFrame,
            format!("the broker refused with code {code:?} but without a string error"),
        ),
        (None, text) => fail(
            ErrorCode::InvalidFrame,
            format!(
                "the broker refused with code {code:?}, which protocol v4 does not define{}",
                text.map(|t| format!(": {t}")).unwrap_or_default()
            ),
        ),
    }
}

fn is_safe_integer(v: &Value) -> bool {
    v.as_i64()
        .is_some_and(|n| n.unsigned_abs() <= MAX_SAFE_INTEGER)
}

/// Whether `access` is the provenance a remote `registered` frame carries: `origin` "remote",
/// the host, parent and root ids, a generation from 1, `canDelegate`, the depth and limits as
/// whole numbers, and `sessionCredential` a string when present.
pub fn is_remote_provenance(access: &Value) -> bool {
    let field = |key: &str| access.get(key);
    let string = |key: &str| field(key).is_some_and(Value::is_string);
    access.get("origin").and_then(Value::as_str) == Some("remote")
        && string("remoteHostId")
        && string("parentSessionId")
        && string("rootSessionId")
        && field("generation").is_some_and(|g| is_safe_integer(g) && g.as_i64() > Some(0))
        && field("canDelegate").is_some_and(Value::is_boolean)
        && ["depth", "maxDepth", "maxChildren"]
            .iter()
            .all(|key| field(key).is_some_and(is_safe_integer))
        && field("sessionCredential").is_none_or(Value::is_string)
}

/// Checks a `registered` frame against the request it answers: a session id and protocol v4
/// (`INVALID_FRAME`), and for a remote registration the remote-access-v1 contract of this
/// library, the broker-owned provenance, a session credential after an enrollment and the
/// credential's principal and generation on a reconnect (`REMOTE_ACCESS_INCOMPATIBLE`).
pub fn check_registered(frame: &Value, access: Option<&Access>) -> Result<(), Error> {
    let session_id = frame.get("sessionId").and_then(Value::as_str);
    if session_id.is_none_or(str::is_empty)
        || frame.get("protocol").and_then(Value::as_str) != Some(protocol::PROTOCOL_NAME)
        || frame.get("version").and_then(Value::as_u64)
            != Some(u64::from(protocol::PROTOCOL_VERSION))
    {
        return Err(fail(
            ErrorCode::InvalidFrame,
            format!(
                "the broker's registered frame lacks a sessionId or is not {} v{}'s",
                protocol::PROTOCOL_NAME,
                protocol::PROTOCOL_VERSION
            ),
        ));
    }
    let Some(access) = access else { return Ok(()) };
    let incompatible = |what: &str| fail(ErrorCode::RemoteAccessIncompatible, what);
    if frame.get("remoteAccess") != Some(&wire::remote_access_contract()) {
        return Err(incompatible(
            "the broker's remote-access contract is absent or differs from this library's \
             (remote-access-v1 with its policy semantics version and hash)",
        ));
    }
    let provenance = frame
        .get("access")
        .filter(|a| is_remote_provenance(a))
        .ok_or_else(|| {
            incompatible(
                "the broker's remote registration omitted the broker-owned provenance (access)",
            )
        })?;
    match access {
        Access::Enrollment { .. } => {
            if provenance
                .get("sessionCredential")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(incompatible(
                    "the broker's answer to an enrollment omitted the session credential",
                ));
            }
        }
        Access::Session {
            session_id: id,
            generation,
            ..
        } => {
            if session_id != Some(id.as_str())
                || provenance.get("generation").and_then(Value::as_u64) != Some(*generation)
            {
                return Err(incompatible(
                    "the broker registered another session id or generation than the \
                     credential names",
                ));
            }
        }
    }
    Ok(())
}

/// What a usable answer to a request means.
#[derive(Debug)]
pub enum Answer {
    /// The request succeeded.
    Accepted,
    /// The broker refused it with an `error` frame ([`broker_refusal`]). The connection is the
    /// broker's to end.
    Refused(Error),
}

fn frame_type(frame: &Value) -> Option<&str> {
    frame.get("type").and_then(Value::as_str)
}

/// What the broker's answer to `register` (with `access` for a remote registration) means: a
/// `registered` frame that passes [`check_registered`] is accepted, an `error` frame is the
/// broker's refusal. Anything else is an `Err` (`INVALID_FRAME`, `REMOTE_ACCESS_INCOMPATIBLE`):
/// the client then closes the connection, which the broker would otherwise hold registered on
/// the strength of an answer the client refuses.
pub fn register_answer(frame: &Value, access: Option<&Access>) -> Result<Answer, Error> {
    match frame_type(frame) {
        Some("registered") => check_registered(frame, access).map(|()| Answer::Accepted),
        Some("error") => Ok(Answer::Refused(broker_refusal(frame))),
        other => Err(fail(
            ErrorCode::InvalidFrame,
            format!(
                "the broker answered register with {}",
                other.unwrap_or("a frame without a type")
            ),
        )),
    }
}

/// Checks the broker's answer to an access_control request: the `access_control_result` of
/// that request id and action, else the broker's refusal ([`broker_refusal`]) for an `error`
/// frame and `INVALID_FRAME` for anything else.
pub fn access_control_answer(frame: &Value, request_id: &str, action: &str) -> Result<(), Error> {
    match frame_type(frame) {
        Some("access_control_result")
            if frame.get("requestId").and_then(Value::as_str) == Some(request_id)
                && frame.get("action").and_then(Value::as_str) == Some(action) =>
        {
            Ok(())
        }
        Some("error") => Err(broker_refusal(frame)),
        other => Err(fail(
            ErrorCode::InvalidFrame,
            format!(
                "the broker answered access_control with {} that is not this request's result",
                other.unwrap_or("a frame without a type")
            ),
        )),
    }
}

/// What a `health` probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// A protocol-v4 broker with the remote-access contract current clients require.
    Compatible,
    /// Something answered `health_ok`, but not as current clients require.
    Incompatible,
    /// Nothing (usable) listens.
    Unreachable,
}

impl Health {
    /// Every finding, in declaration order.
    pub const ALL: [Health; 3] = [
        Health::Compatible,
        Health::Incompatible,
        Health::Unreachable,
    ];

    /// Its name: `compatible`, `incompatible` or `unreachable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Compatible => "compatible",
            Health::Incompatible => "incompatible",
            Health::Unreachable => "unreachable",
        }
    }
}

/// The `health` frame of a probe with this request id.
pub fn health_request(request_id: &str) -> Value {
    serde_json::json!({ "type": "health", "requestId": request_id })
}

/// The `health` request that also asks which opt-in extensions the broker speaks.
pub fn extensions_request(request_id: &str) -> Value {
    serde_json::json!({ "type": "health", "requestId": request_id, "extensions": true })
}

/// The extensions a compatible `health_ok` of `request_id` lists (none for a broker without
/// them, which answers without the member, and for any other answer).
pub fn extensions_answer(frame: Option<&Value>, request_id: &str) -> Vec<String> {
    if health_answer(frame, request_id) != Health::Compatible {
        return Vec::new();
    }
    frame
        .and_then(|v| v["extensions"].as_array())
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What the answer to a `health` probe with `request_id` means (`None`: no readable answer came):
/// a `health_ok` of that request is compatible when it is protocol v4's local endpoint with
/// exactly this library's remote-access contract; anything else is unreachable.
pub fn health_answer(frame: Option<&Value>, request_id: &str) -> Health {
    let Some(v) = frame else {
        return Health::Unreachable;
    };
    if frame_type(v) != Some("health_ok")
        || v.get("requestId").and_then(Value::as_str) != Some(request_id)
    {
        return Health::Unreachable;
    }
    let compatible = v.get("protocol").and_then(Value::as_str) == Some(protocol::PROTOCOL_NAME)
        && v.get("version").and_then(Value::as_u64) == Some(u64::from(protocol::PROTOCOL_VERSION))
        && v.get("endpoint").and_then(Value::as_str) == Some(wire::LOCAL_ENDPOINT)
        && v.get("remoteAccess") == Some(&wire::remote_access_contract());
    if compatible {
        Health::Compatible
    } else {
        Health::Incompatible
    }
}

/// The extensions a send may ask for ([`SendOptions::parse`]; docs/hub.md).
pub const SEND_OPTIONS: [&str; 2] = ["queue", "receipts"];

/// What a send opts into: both off is a send of protocol v4, exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// `queue`: to a known session that is not connected, by its full id, the broker queues
    /// the message (`delivery_queued`) until it registers again.
    pub queue: bool,
    /// `receipts`: the sender is told `message_read` when the recipient has read it.
    pub receipts: bool,
}

impl SendOptions {
    /// `{queue?, receipts?}`, each a boolean (`what` names the object in messages): another
    /// key is `UNKNOWN_KEY`, another value `INVALID_ARGUMENT`.
    pub fn parse(value: &Value, what: &str) -> Result<SendOptions, Error> {
        let map = object(value, what, "{ queue?, receipts? }")?;
        known_keys(map, &SEND_OPTIONS, what, "a send")?;
        let flag = |key: &str| match map.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(fail(
                ErrorCode::InvalidArgument,
                format!("{what}.{key} must be a boolean"),
            )),
        };
        Ok(SendOptions {
            queue: flag("queue")?,
            receipts: flag("receipts")?,
        })
    }

    /// The members a send frame gets, in this order: only those that are on, so a send that
    /// asks for nothing is the frame protocol v4 has.
    pub fn members(&self) -> Map<String, Value> {
        let mut members = Map::new();
        for (key, on) in [("queue", self.queue), ("receipts", self.receipts)] {
            if on {
                members.insert(key.into(), Value::Bool(true));
            }
        }
        members
    }
}

/// An id a request carries: a non-empty string without NUL.
fn id_arg(id: &str, what: &str) -> Result<(), Error> {
    if id.is_empty() || id.contains('\0') {
        return Err(fail(
            ErrorCode::InvalidArgument,
            format!("{what} must be a non-empty string"),
        ));
    }
    Ok(())
}

/// The `message_read` frame: the recipient showed the delivery `delivery_id` to its model.
pub fn message_read_request(delivery_id: &str, what: &str) -> Result<Value, Error> {
    id_arg(delivery_id, what)?;
    Ok(serde_json::json!({ "type": "message_read", "deliveryId": delivery_id }))
}

/// The `delivery_status` frame asking for one of the session's own messages.
pub fn delivery_status_request(
    request_id: &str,
    message_id: &str,
    what: &str,
) -> Result<Value, Error> {
    id_arg(message_id, what)?;
    Ok(serde_json::json!({
        "type": "delivery_status",
        "requestId": request_id,
        "messageId": message_id,
    }))
}

/// The state the broker's answer to a `delivery_status` request reports (one of
/// [`wire::delivery_state::ALL`]): the answer must be that request's, for that message, with a
/// state this library knows, else `INVALID_FRAME`.
pub fn delivery_status_answer(
    frame: &Value,
    request_id: &str,
    message_id: &str,
) -> Result<&'static str, Error> {
    let state = frame.get("state").and_then(Value::as_str);
    let known = wire::delivery_state::ALL
        .into_iter()
        .find(|s| Some(*s) == state);
    match known {
        Some(state)
            if frame_type(frame) == Some("delivery_status")
                && frame.get("requestId").and_then(Value::as_str) == Some(request_id)
                && frame.get("messageId").and_then(Value::as_str) == Some(message_id) =>
        {
            Ok(state)
        }
        _ => Err(fail(
            ErrorCode::InvalidFrame,
            format!("the broker answered delivery_status with {frame}, not this request's state"),
        )),
    }
}

#[cfg(test)]
mod tests;
