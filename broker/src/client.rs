//! Blocking clients of the broker's wire (4-byte big-endian length + UTF-8 JSON).
//!
//! - [`Client`]: what an embedder talks through (the C ABI's `aic_client`). Frames go out and
//!   come in as JSON text; [`Client::register`] registers, locally or as a remote principal
//!   with an `access` credential (checking the remote-access-v1 contract and the provenance the
//!   broker answers with, as the Pi adapter's client does); [`access_control`] sends one
//!   `access_control` frame on a connection of its own. Every failure is an [`Error`] with a
//!   stable code: `NOT_CONNECTED`, `INVALID_FRAME`, `REMOTE_ACCESS_INCOMPATIBLE`, the broker's
//!   own refusal codes (`ACCESS_DENIED`, `INVALID_REQUEST`, ...), or `INVALID_ARGUMENT`,
//!   `UNKNOWN_KEY` and `INVALID_JSON` for a request refused before anything is sent. A
//!   connection is thread-safe: one thread may wait for a frame while others send.
//! - [`RawClient`]: the same connection for tests and tools that want to see the wire as it is
//!   (frames as [`Value`], `io::Result`, a closed connection as no frame).

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use agent_intercom_core::{Error, ErrorCode, protocol};
use serde_json::{Map, Value};

use crate::config::{self, DEFAULT_MAX_FRAME_BYTES};
use crate::{jstext, wire};

/// How long [`Client::register`] waits for `registered`, and how long a send waits for the
/// broker to take a frame, before the connection counts as lost (`NOT_CONNECTED`).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

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

/// The fields of a register request ([`Client::register`]).
pub const REGISTER_FIELDS: [&str; 4] = ["session", "sessionId", "scopeId", "access"];

/// The fields of an access_control request ([`access_control`]): those of every action of the
/// local socket (with `adminToken`) and of the gateway (with `access`).
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
const READ_CHUNK: usize = 64 * 1024;

fn fail(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves its data consistent, so a panic in one poisons nothing.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The largest frame any broker accepts (the top of `max_frame_bytes`' range).
fn max_outgoing_frame() -> u64 {
    config::LIMITS
        .iter()
        .find(|l| l.key == "max_frame_bytes")
        .map_or(DEFAULT_MAX_FRAME_BYTES, |l| l.max)
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
    /// Checks a request. The session's own fields are the broker's to judge; here only the
    /// request's shape: an object of known fields, `session` an object, `sessionId` and
    /// `scopeId` strings, `access` one of its two shapes and never with a `sessionId` (the
    /// broker assigns a remote session's id; `access.sessionId` names it on reconnect).
    pub fn parse(request: &Value) -> Result<RegisterRequest, Error> {
        let map = object(
            request,
            "request",
            "{session, sessionId?, scopeId?, access?}",
        )?;
        known_keys(map, &REGISTER_FIELDS, "request", "register")?;
        let mut frame = Map::new();
        frame.insert("type".into(), "register".into());
        frame.insert("protocol".into(), protocol::PROTOCOL_NAME.into());
        frame.insert("version".into(), protocol::PROTOCOL_VERSION.into());
        match map.get("session") {
            Some(session @ Value::Object(_)) => frame.insert("session".into(), session.clone()),
            _ => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "request.session must be an object {cwd, model, pid, startedAt, \
                     lastActivity, ...}",
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
                        format!("request.{key} must be a string"),
                    ));
                }
            }
        }
        let access = match map.get("access") {
            None => None,
            Some(v) => Some(Access::parse(v, "request.access")?),
        };
        if let Some(access) = &access {
            if map.contains_key("sessionId") {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "request.sessionId cannot go with request.access: the broker assigns a remote \
                     session's id (access.sessionId names it on reconnect)",
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
    /// Checks a request: an object of [`ACCESS_CONTROL_FIELDS`], `action` and `requestId` (a
    /// fresh UUID when absent) non-empty strings, and exactly one of `adminToken` (a string:
    /// the local socket) and `access` (a session credential: the gateway). What an action
    /// takes besides is the broker's to judge.
    pub fn parse(request: &Value) -> Result<AccessControlRequest, Error> {
        let map = object(
            request,
            "request",
            "{action, adminToken | access, requestId?, ...}",
        )?;
        known_keys(map, &ACCESS_CONTROL_FIELDS, "request", "access_control")?;
        let action = text_field(map, "action", "request")?
            .ok_or_else(|| fail(ErrorCode::InvalidArgument, "request.action is required"))?
            .to_string();
        let request_id = match text_field(map, "requestId", "request")? {
            Some(id) => id.to_string(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let mut frame = map.clone();
        match (map.get("adminToken"), map.get("access")) {
            (Some(Value::String(_)), None) => {}
            (Some(_), None) => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "request.adminToken must be a string",
                ));
            }
            (None, Some(access)) => {
                if let Access::Enrollment { .. } = Access::parse(access, "request.access")? {
                    return Err(fail(
                        ErrorCode::InvalidArgument,
                        "request.access must be a session credential {sessionCredential, \
                         sessionId, \
                         generation}: an enrollment token registers, it does not administer",
                    ));
                }
            }
            _ => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "request must carry exactly one of adminToken (the local socket) and access \
                     (the remote gateway)",
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
}

/// The [`Error`] of a broker's `error` frame: its code (one of [`BROKER_ERROR_CODES`]) and its
/// text. Anything else is `INVALID_FRAME`.
pub fn broker_refusal(frame: &Value) -> Error {
    let code = frame.get("code").and_then(Value::as_str);
    let text = frame.get("error").and_then(Value::as_str);
    match (code, text) {
        (Some(code), Some(text)) => match BROKER_ERROR_CODES.iter().find(|c| c.as_str() == code) {
            Some(&known) => fail(known, text),
            None => fail(
                ErrorCode::InvalidFrame,
                format!(
                    "the broker refused with code {code:?}, which protocol v4 does not \
                     define: {text}"
                ),
            ),
        },
        _ => fail(
            ErrorCode::InvalidFrame,
            "the broker sent an error frame without a string code and error",
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
fn is_remote_provenance(access: &Value) -> bool {
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

/// Checks a `registered` frame against the request it answers.
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

/// Waits until `fd` is readable (or hung up) or `wait` passed; true when readable.
fn wait_readable(fd: i32, wait: Duration) -> io::Result<bool> {
    let ms = wait.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    match unsafe { libc::poll(&mut poll, 1, ms) } {
        n if n < 0 => Err(io::Error::last_os_error()),
        0 => Ok(false),
        _ => Ok(true),
    }
}

/// Bytes read but not yet framed.
struct Inbox {
    bytes: Vec<u8>,
}

impl Inbox {
    /// The next whole frame's body, if one is buffered.
    fn take(&mut self) -> Result<Option<Vec<u8>>, Error> {
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

/// A connection to a broker (see the module docs).
pub struct Client {
    stream: UnixStream,
    inbox: Mutex<Inbox>,
    /// Held while a frame is written, so frames of concurrent senders never interleave.
    outbox: Mutex<()>,
    /// Why the connection is unusable, once it is (the stream is shut down then).
    lost: Mutex<Option<String>>,
}

impl Client {
    /// Connects to a broker's socket (the local one, or the remote gateway).
    pub fn connect(socket: &Path) -> Result<Client, Error> {
        if socket.as_os_str().is_empty() {
            return Err(fail(ErrorCode::InvalidArgument, "the socket path is empty"));
        }
        let stream = UnixStream::connect(socket).map_err(|e| {
            let code = if e.kind() == io::ErrorKind::InvalidInput {
                ErrorCode::InvalidArgument // too long for a socket address
            } else {
                ErrorCode::NotConnected
            };
            fail(code, format!("cannot connect to {}: {e}", socket.display()))
        })?;
        Client::from_stream(stream)
    }

    /// A connection over a stream already connected (to a broker, or a socket pair).
    pub fn from_stream(stream: UnixStream) -> Result<Client, Error> {
        stream
            .set_write_timeout(Some(ANSWER_TIMEOUT))
            .map_err(|e| {
                fail(
                    ErrorCode::NotConnected,
                    format!("cannot set up the connection: {e}"),
                )
            })?;
        Ok(Client {
            stream,
            inbox: Mutex::new(Inbox { bytes: Vec::new() }),
            outbox: Mutex::new(()),
            lost: Mutex::new(None),
        })
    }

    /// The underlying stream.
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    fn check_open(&self) -> Result<(), Error> {
        match &*lock(&self.lost) {
            Some(why) => Err(fail(
                ErrorCode::NotConnected,
                format!("the connection is closed: {why}"),
            )),
            None => Ok(()),
        }
    }

    /// Marks the connection unusable (the first reason stays) and shuts it down.
    fn lose(&self, error: Error) -> Error {
        let mut lost = lock(&self.lost);
        if lost.is_none() {
            *lost = Some(error.message().to_string());
            let _ = self.stream.shutdown(std::net::Shutdown::Both);
        }
        error
    }

    /// Closes the connection; later calls fail with `NOT_CONNECTED`.
    pub fn close(&self) {
        self.lose(fail(ErrorCode::NotConnected, "closed by this client"));
    }

    /// Sends bytes as they are, all or nothing usable: a partial write loses the connection.
    pub fn send_bytes(&self, bytes: &[u8]) -> Result<(), Error> {
        let _writing = lock(&self.outbox);
        self.check_open()?;
        let mut sent = 0;
        while sent < bytes.len() {
            let rest = &bytes[sent..];
            // SAFETY: `rest` is valid for reads of its length. MSG_NOSIGNAL: a closed peer is
            // an error here, never a SIGPIPE that kills the embedding process.
            let n = unsafe {
                libc::send(
                    self.stream.as_raw_fd(),
                    rest.as_ptr().cast(),
                    rest.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                let message = match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!(
                        "the broker did not take the frame within {} s",
                        ANSWER_TIMEOUT.as_secs()
                    ),
                    _ => format!("cannot send to the broker: {e}"),
                };
                return Err(self.lose(fail(ErrorCode::NotConnected, message)));
            }
            sent += n as usize;
        }
        Ok(())
    }

    /// Sends one frame.
    pub fn send(&self, frame: &Value) -> Result<(), Error> {
        self.send_bytes(&wire::encode(frame))
    }

    /// Sends one frame given as JSON text, as it is: a JSON object with a string `type`
    /// (`INVALID_JSON`, `INVALID_ARGUMENT` otherwise), no larger than any broker accepts.
    pub fn send_text(&self, text: &str) -> Result<(), Error> {
        let max = max_outgoing_frame();
        if text.len() as u64 > max {
            return Err(fail(
                ErrorCode::InvalidArgument,
                format!(
                    "a frame of {} bytes is larger than any broker accepts ({max})",
                    text.len()
                ),
            ));
        }
        let value = parse_json(text, "frame")?;
        if !value.get("type").is_some_and(Value::is_string) {
            return Err(fail(
                ErrorCode::InvalidArgument,
                "frame must be a JSON object with a string type",
            ));
        }
        let mut frame = Vec::with_capacity(4 + text.len());
        frame.extend_from_slice(&(text.len() as u32).to_be_bytes());
        frame.extend_from_slice(text.as_bytes());
        self.send_bytes(&frame)
    }

    /// The next frame, or `None` when none arrived within `timeout` (zero: only one already
    /// there). A closed connection is `NOT_CONNECTED`; a frame over the frame limit or not JSON
    /// is `INVALID_FRAME` and loses the connection (the stream cannot be resynchronised).
    pub fn recv(&self, timeout: Duration) -> Result<Option<Received>, Error> {
        let mut inbox = lock(&self.inbox);
        self.check_open()?;
        let deadline = Instant::now().checked_add(timeout);
        let mut chunk = vec![0u8; READ_CHUNK];
        loop {
            if let Some(body) = inbox.take().map_err(|e| self.lose(e))? {
                return self.parse(body).map(Some);
            }
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            match wait_readable(self.stream.as_raw_fd(), left) {
                Ok(true) => {}
                Ok(false) if deadline.is_some_and(|d| Instant::now() >= d) => return Ok(None),
                Ok(false) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(self.lose(fail(
                        ErrorCode::NotConnected,
                        format!("cannot wait for the broker: {e}"),
                    )));
                }
            }
            match io::Read::read(&mut &self.stream, &mut chunk) {
                Ok(0) => {
                    self.check_open()?; // closed by this client (close, from another thread)
                    let message = if inbox.bytes.is_empty() {
                        "the broker closed the connection"
                    } else {
                        "the broker closed the connection in the middle of a frame"
                    };
                    return Err(self.lose(fail(ErrorCode::NotConnected, message)));
                }
                Ok(n) => inbox.bytes.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    ) => {}
                Err(e) => {
                    return Err(self.lose(fail(
                        ErrorCode::NotConnected,
                        format!("cannot read from the broker: {e}"),
                    )));
                }
            }
        }
    }

    fn parse(&self, body: Vec<u8>) -> Result<Received, Error> {
        let text = String::from_utf8(body).map_err(|_| {
            self.lose(fail(
                ErrorCode::InvalidFrame,
                "the broker sent a frame that is not UTF-8",
            ))
        })?;
        let value = jstext::parse_frame(text.as_bytes()).map_err(|e| {
            self.lose(fail(
                ErrorCode::InvalidFrame,
                format!("the broker sent a frame that is not JSON: {e}"),
            ))
        })?;
        Ok(Received { text, value })
    }

    /// The next frame, which must come within `timeout`: no frame is `NOT_CONNECTED`.
    fn answer(&self, timeout: Duration, to: &str) -> Result<Received, Error> {
        self.recv(timeout)?.ok_or_else(|| {
            self.lose(fail(
                ErrorCode::NotConnected,
                format!(
                    "the broker did not answer {to} within {} s",
                    timeout.as_secs_f64()
                ),
            ))
        })
    }

    /// Registers (see [`RegisterRequest::parse`] for the request) and returns the `registered`
    /// frame. An error frame is the broker's refusal ([`broker_refusal`]); a `registered` frame
    /// that does not answer the request ([`check_registered`]: for a remote registration the
    /// remote-access-v1 contract and the provenance) loses the connection, which the broker
    /// would otherwise hold registered on the strength of an answer this client refuses.
    pub fn register(&self, request: &Value) -> Result<Received, Error> {
        let request = RegisterRequest::parse(request)?;
        self.send(request.frame())?;
        let answer = self.answer(ANSWER_TIMEOUT, "register")?;
        match answer.value.get("type").and_then(Value::as_str) {
            Some("registered") => {
                check_registered(&answer.value, request.access()).map_err(|e| self.lose(e))?;
                Ok(answer)
            }
            Some("error") => Err(broker_refusal(&answer.value)),
            other => Err(self.lose(fail(
                ErrorCode::InvalidFrame,
                format!(
                    "the broker answered register with {}",
                    other.unwrap_or("a frame without a type")
                ),
            ))),
        }
    }
}

/// Sends one `access_control` frame (see [`AccessControlRequest::parse`]) on a connection of
/// its own to `socket` (the local socket for `adminToken` requests, the remote gateway for
/// `access` ones) and returns the `access_control_result`, which must carry the request's id
/// and action. An error frame is the broker's refusal; no answer within `timeout` is
/// `NOT_CONNECTED`. The connection is closed either way (the broker ends it after its reply).
pub fn access_control(
    socket: &Path,
    request: &Value,
    timeout: Duration,
) -> Result<Received, Error> {
    let request = AccessControlRequest::parse(request)?;
    let client = Client::connect(socket)?;
    client.send(request.frame())?;
    let answer = client.answer(timeout, "access_control")?;
    client.close();
    let value = &answer.value;
    match value.get("type").and_then(Value::as_str) {
        Some("access_control_result")
            if value.get("requestId").and_then(Value::as_str) == Some(request.request_id())
                && value.get("action").and_then(Value::as_str) == Some(request.action.as_str()) =>
        {
            Ok(answer)
        }
        Some("error") => Err(broker_refusal(value)),
        other => Err(fail(
            ErrorCode::InvalidFrame,
            format!(
                "the broker answered access_control with {} that is not this request's result",
                other.unwrap_or("a frame without a type")
            ),
        )),
    }
}

/// A connection to a broker, frames as [`Value`]s: for tests and tools.
pub struct RawClient {
    client: Client,
}

fn io_error(error: Error) -> io::Error {
    let kind = match error.code() {
        ErrorCode::NotConnected => io::ErrorKind::BrokenPipe,
        _ => io::ErrorKind::InvalidData,
    };
    io::Error::new(kind, error.message().to_string())
}

impl RawClient {
    /// Connects to the broker's socket.
    pub fn connect(socket: &Path) -> io::Result<RawClient> {
        let stream = UnixStream::connect(socket)?;
        Ok(RawClient {
            client: Client::from_stream(stream).map_err(io_error)?,
        })
    }

    /// Sends one frame.
    pub fn send(&mut self, frame: &Value) -> io::Result<()> {
        self.client.send(frame).map_err(io_error)
    }

    /// Sends bytes as they are (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.client.send_bytes(bytes).map_err(io_error)
    }

    /// The next frame; `Ok(None)` when the broker closed the connection or nothing arrived
    /// within `timeout`. A frame over the default frame limit or not JSON is an error.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Option<Value>> {
        match self.client.recv(timeout) {
            Ok(frame) => Ok(frame.map(|f| f.value)),
            Err(e) if e.code() == ErrorCode::NotConnected => Ok(None),
            Err(e) => Err(io_error(e)),
        }
    }

    /// The underlying stream.
    pub fn stream(&self) -> &UnixStream {
        self.client.stream()
    }

    /// The connection as a [`Client`].
    pub fn client(&self) -> &Client {
        &self.client
    }
}
