//! The broker client: `connect()` gives a `Client` over the blocking Rust client
//! (`agent_intercom_broker::client::Client`, the C ABI's), whose requests and answers are checked
//! by `client::rules`, the rules the C and Node clients share. One reader thread per connection
//! hands each frame to whoever waits for it (a registration, a request id, a message id, an ask's
//! reply) or queues it: messages for `recv()`/`messages()`, everything else as events. Waiting
//! releases the GIL and checks for signals every tenth of a second, so Ctrl-C interrupts it.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use agent_intercom_broker::client::rules::{self, Access, Answer, RegisterRequest, SendOptions};
use agent_intercom_broker::client::{ANSWER_TIMEOUT, Client as WireClient};
use agent_intercom_core::ErrorCode;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value, json};

use crate::broker::socket_of;
use crate::contract::{ms_arg, str_arg};
use crate::convert::{to_json, to_py};
use crate::message::{Message, MessageIter};
use crate::session::{
    Shared, State, deadline_of, lock, no_other_keys, now_ms, outgoing, uuid, wire_error,
};
use crate::{PyRes, fail, py_error};

/// A connection to the broker (see the module docs). Use it as a context manager, or `close()`.
#[pyclass(module = "agent_intercom")]
pub struct Client {
    shared: Arc<Shared>,
    scope: Option<String>,
    started_at: u64,
    /// The session id of the last registration (a lock: calls may come from many threads).
    session_id: Mutex<Option<String>>,
    #[pyo3(get)]
    socket_path: String,
}

impl Client {
    fn send_message(
        &self,
        py: Python<'_>,
        to: &Bound<'_, PyAny>,
        message: &Bound<'_, PyAny>,
        extra: Map<String, Value>,
        options: Option<&Bound<'_, PyDict>>,
        reply_slot: bool,
    ) -> PyRes<String> {
        let to = str_arg(to, "to")?;
        let options = match options {
            Some(o) => to_json(o.as_any(), "options").map_err(py_error)?,
            None => Value::Object(Map::new()),
        };
        let members = SendOptions::parse(&options, "options")
            .map_err(py_error)?
            .members();
        let m = outgoing(message, extra)?;
        let id = match m.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "message.id must be a non-empty str",
                ));
            }
        };
        let mut frame = Map::new();
        frame.insert("type".into(), "send".into());
        frame.insert("to".into(), to.into());
        frame.extend(members);
        frame.insert("message".into(), Value::Object(m));
        {
            let mut s = lock(&self.shared);
            if s.deliveries.contains_key(&id) {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "a send of this message id is already waiting",
                ));
            }
            s.deliveries.insert(id.clone(), None);
            if reply_slot {
                s.asks.insert(id.clone(), None);
            }
        }
        if let Err(e) = self.shared.send(py, &Value::Object(frame)) {
            let mut s = lock(&self.shared);
            s.deliveries.remove(&id);
            s.asks.remove(&id);
            return Err(e);
        }
        Ok(id)
    }

    /// Waits for the outcome of the send of `id` (its slot is removed either way).
    fn settle(&self, py: Python<'_>, id: &str) -> PyRes<Value> {
        let outcome = self.shared.wait(py, None, |s| {
            s.deliveries.get_mut(id).and_then(Option::take)
        });
        let mut s = lock(&self.shared);
        s.deliveries.remove(id);
        if outcome.is_err() {
            s.asks.remove(id);
        }
        outcome?.map_or_else(unreachable_wait, Ok)
    }

    /// The result of a send, or its failure raised.
    fn delivery<'py>(&self, py: Python<'py>, id: &str, frame: &Value) -> PyRes<Bound<'py, PyDict>> {
        let text = |k: &str| {
            frame
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if frame.get("type").and_then(Value::as_str) == Some("delivery_failed") {
            lock(&self.shared).asks.remove(id);
            let err = wire_error(py, &text("code"), &text("reason"));
            let value = err.value(py);
            value.setattr("accepted", frame.get("accepted").and_then(Value::as_bool))?;
            value.setattr("message_id", id)?;
            return Err(err);
        }
        let out = PyDict::new(py);
        out.set_item("message_id", id)?;
        out.set_item("delivery_id", text("deliveryId"))?;
        out.set_item(
            "queued",
            frame.get("type").and_then(Value::as_str) == Some("delivery_queued"),
        )?;
        Ok(out)
    }

    fn ask_control<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        id: &Bound<'py, PyAny>,
    ) -> PyRes<Bound<'py, PyDict>> {
        let id = str_arg(id, "message_id")?;
        let answer = self
            .shared
            .request(py, json!({ "type": kind, "messageId": id }))?;
        let applied = answer.get("applied") == Some(&Value::Bool(true));
        if kind == "cancel_ask" && applied {
            // The broker tells the asked session, not the asker: an ask() of this client that
            // waits for its reply ends here.
            let mut s = lock(&self.shared);
            if let Some(slot @ None) = s.asks.get_mut(&id) {
                *slot = Some(
                    json!({ "type": "ask_cancelled", "messageId": id, "reason": "cancelled" }),
                );
            }
            drop(s);
            self.shared.changed.notify_all();
        }
        let out = PyDict::new(py);
        out.set_item("applied", applied)?;
        out.set_item("action", answer.get("action").and_then(Value::as_str))?;
        out.set_item(
            "message_id",
            answer.get("messageId").and_then(Value::as_str),
        )?;
        Ok(out)
    }

    /// Waits for the reply to the ask `id` until `deadline` (`None` when none came). The reply
    /// may come before `delivered` (the recipient replies before it acknowledges the ask):
    /// whichever comes first is taken; a reply means the ask was delivered. A delivery failure
    /// is raised.
    fn await_reply(
        &self,
        py: Python<'_>,
        id: &str,
        deadline: Option<Instant>,
    ) -> PyRes<Option<Value>> {
        let answer: PyRes<Option<Value>> = loop {
            let step = self.shared.wait(py, deadline, |s| {
                if let Some(reply) = s.asks.get_mut(id).and_then(Option::take) {
                    return Some(Err(reply));
                }
                s.deliveries.get_mut(id).and_then(Option::take).map(Ok)
            });
            match step {
                Ok(Some(Ok(outcome))) => {
                    lock(&self.shared).deliveries.remove(id);
                    if let Err(e) = self.delivery(py, id, &outcome) {
                        break Err(e);
                    }
                }
                Ok(Some(Err(reply))) => break Ok(Some(reply)),
                other => break other.map(|_| None),
            }
        };
        let mut s = lock(&self.shared);
        s.asks.remove(id);
        s.deliveries.remove(id);
        answer
    }
}

impl Drop for Client {
    /// A client the program dropped without `close()` closes its connection, which ends the
    /// reader thread (it would otherwise hold the connection open for the process's life).
    fn drop(&mut self) {
        self.shared.wire.close();
    }
}

fn unreachable_wait<T>() -> PyRes<T> {
    Err(fail(ErrorCode::Internal, "a wait without a deadline ended"))
}

#[pymethods]
impl Client {
    /// Registers this connection as a session. `name` and `session` (more session fields:
    /// `cwd`, `model`, `status`, ...) are sent as given; `cwd`, `model` ("python"), `pid`,
    /// `startedAt` and `lastActivity` are filled in when absent. The scope is the one
    /// `connect()` was given. `access` (`{enrollmentToken}` or `{sessionCredential, sessionId,
    /// generation}`, on the remote gateway) registers a remote principal (`client::rules`).
    /// Returns `{"session_id"}` (and `access`, `remote_access` when the broker sent them);
    /// raises the broker's refusal.
    #[pyo3(signature = (
        name = None, *, session_id = None, session = None, access = None, **kwargs,
    ))]
    fn register<'py>(
        &self,
        py: Python<'py>,
        name: Option<&Bound<'py, PyAny>>,
        session_id: Option<&Bound<'py, PyAny>>,
        session: Option<&Bound<'py, PyAny>>,
        access: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyRes<Bound<'py, PyDict>> {
        no_other_keys(kwargs, "register")?;
        let mut fields = Map::new();
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        fields.insert("cwd".into(), cwd.into());
        fields.insert("model".into(), "python".into());
        fields.insert("pid".into(), std::process::id().into());
        fields.insert("startedAt".into(), self.started_at.into());
        fields.insert("lastActivity".into(), now_ms().into());
        if let Some(name) = name.filter(|n| !n.is_none()) {
            fields.insert("name".into(), str_arg(name, "name")?.into());
        }
        if let Some(given) = session.filter(|s| !s.is_none()) {
            match to_json(given, "session").map_err(py_error)? {
                Value::Object(given) => fields.extend(given),
                _ => return Err(fail(ErrorCode::InvalidArgument, "session must be a dict")),
            }
        }
        let mut request = Map::new();
        request.insert("session".into(), Value::Object(fields));
        if let Some(id) = session_id.filter(|s| !s.is_none()) {
            request.insert("sessionId".into(), str_arg(id, "session_id")?.into());
        }
        if let Some(scope) = &self.scope {
            request.insert("scopeId".into(), scope.clone().into());
        }
        if let Some(access) = access.filter(|a| !a.is_none()) {
            request.insert(
                "access".into(),
                to_json(access, "access").map_err(py_error)?,
            );
        }
        let checked =
            RegisterRequest::parse(&Value::Object(request), "request").map_err(py_error)?;
        let answer = self.registration(py, &checked)?;
        let out = PyDict::new(py);
        let id = answer
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string);
        out.set_item("session_id", &id)?;
        for (key, attr) in [("access", "access"), ("remoteAccess", "remote_access")] {
            if let Some(v) = answer.get(key) {
                out.set_item(attr, to_py(py, v)?)?;
            }
        }
        *self
            .session_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = id;
        Ok(out)
    }

    /// The sessions this session can see (itself and its scope), as the broker lists them.
    fn list<'py>(&self, py: Python<'py>) -> PyRes<Bound<'py, PyAny>> {
        let answer = self.shared.request(py, json!({ "type": "list" }))?;
        to_py(py, answer.get("sessions").unwrap_or(&Value::Array(vec![])))
    }

    /// Sends a message (a `str`, or a dict `{text | content, id?, ...}`) and waits until the
    /// receiver acknowledged it: `{"message_id", "delivery_id", "queued"}`. A delivery failure
    /// raises `IntercomError` with the broker's code (`SESSION_NOT_FOUND`, ...; `accepted` and
    /// `message_id` set). `queue=True`: to the full id of a known session that is away, the
    /// broker queues it (`queued` is then true); `receipts=True`: a `message_read` event comes
    /// once it was read. Another option is `UNKNOWN_KEY`.
    #[pyo3(signature = (to, message, **options))]
    fn send<'py>(
        &self,
        py: Python<'py>,
        to: &Bound<'py, PyAny>,
        message: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyRes<Bound<'py, PyDict>> {
        let id = self.send_message(py, to, message, Map::new(), options, false)?;
        let frame = self.settle(py, &id)?;
        self.delivery(py, &id, &frame)
    }

    /// Replies to an ask (`reply_to`: the ask's message id); as `send`.
    #[pyo3(signature = (to, reply_to, message, **options))]
    fn reply<'py>(
        &self,
        py: Python<'py>,
        to: &Bound<'py, PyAny>,
        reply_to: &Bound<'py, PyAny>,
        message: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyRes<Bound<'py, PyDict>> {
        let mut extra = Map::new();
        extra.insert("replyTo".into(), str_arg(reply_to, "reply_to")?.into());
        let id = self.send_message(py, to, message, extra, options, false)?;
        let frame = self.settle(py, &id)?;
        self.delivery(py, &id, &frame)
    }

    /// Sends a message that expects a reply and returns the reply (a `Message`, acknowledged).
    /// `timeout` in seconds (`None`: until the broker expires the ask): then the ask is
    /// cancelled and `ASK_TIMEOUT` raised. A cancelled or expired ask raises `CANCELLED`; a
    /// delivery failure as `send`.
    #[pyo3(signature = (to, message, *, timeout = None, **options))]
    fn ask(
        &self,
        py: Python<'_>,
        to: &Bound<'_, PyAny>,
        message: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyRes<Message> {
        let deadline = deadline_of(timeout, "timeout")?;
        let mut extra = Map::new();
        extra.insert("expectsReply".into(), true.into());
        let id = self.send_message(py, to, message, extra, options, true)?;
        let answer = self.await_reply(py, &id, deadline);
        match answer? {
            Some(frame) if frame.get("type").and_then(Value::as_str) == Some("message") => {
                let reply = Message::new(self.shared.clone(), &frame);
                reply.acknowledge(py)?;
                Ok(reply)
            }
            Some(cancelled) => {
                let reason = cancelled
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("cancelled");
                Err(fail(
                    ErrorCode::Cancelled,
                    format!("the ask was cancelled: {reason}"),
                ))
            }
            None => {
                // Best effort: the ask's edge would otherwise stay open at the broker.
                let _ = self.shared.send(
                    py,
                    &json!({ "type": "cancel_ask", "messageId": id, "requestId": uuid() }),
                );
                Err(fail(
                    ErrorCode::AskTimeout,
                    "no reply came within the timeout; the ask was cancelled",
                ))
            }
        }
    }

    /// Defers one of this session's asks (it stays replyable): `{"applied", "action",
    /// "message_id"}`.
    fn defer<'py>(
        &self,
        py: Python<'py>,
        message_id: &Bound<'py, PyAny>,
    ) -> PyRes<Bound<'py, PyDict>> {
        self.ask_control(py, "defer_ask", message_id)
    }

    /// Cancels one of this session's asks: `{"applied", "action", "message_id"}`.
    fn cancel<'py>(
        &self,
        py: Python<'py>,
        message_id: &Bound<'py, PyAny>,
    ) -> PyRes<Bound<'py, PyDict>> {
        self.ask_control(py, "cancel_ask", message_id)
    }

    /// The state of one of this session's messages: `accepted`, `queued`, `delivered`, `read`,
    /// `failed`, `expired` or `unknown`.
    fn delivery_status(
        &self,
        py: Python<'_>,
        message_id: &Bound<'_, PyAny>,
    ) -> PyRes<&'static str> {
        let message_id = str_arg(message_id, "message_id")?;
        let id = uuid();
        let frame =
            rules::delivery_status_request(&id, &message_id, "message_id").map_err(py_error)?;
        let answer = self.shared.request_with(py, &id, &frame)?;
        rules::delivery_status_answer(&answer, &id, &message_id).map_err(py_error)
    }

    /// Tells the broker the message of this delivery was shown to the model (its sender, if it
    /// asked for receipts, is told).
    fn mark_read(&self, py: Python<'_>, delivery_id: &Bound<'_, PyAny>) -> PyRes<()> {
        let delivery_id = str_arg(delivery_id, "delivery_id")?;
        let frame = rules::message_read_request(&delivery_id, "delivery_id").map_err(py_error)?;
        self.shared.send(py, &frame)
    }

    /// The next message (`None` when none came within `timeout` seconds; `None`: wait until
    /// one comes). Not acknowledged: call its `ack()` once it is handled.
    #[pyo3(signature = (timeout = None))]
    fn recv(&self, py: Python<'_>, timeout: Option<&Bound<'_, PyAny>>) -> PyRes<Option<Message>> {
        let deadline = deadline_of(timeout, "timeout")?;
        let frame = self.shared.wait(py, deadline, |s| s.inbox.pop_front())?;
        Ok(frame.map(|f| Message::new(self.shared.clone(), &f)))
    }

    /// The incoming messages, each acknowledged when the loop asks for the next one (after the
    /// loop's body returned) or ends; a body that raises leaves its message unacknowledged.
    /// Ends when the connection closes, or when none came within `timeout` seconds.
    #[pyo3(signature = (timeout = None))]
    fn messages(&self, timeout: Option<&Bound<'_, PyAny>>) -> PyRes<MessageIter> {
        let wait = match timeout.filter(|t| !t.is_none()) {
            Some(t) => {
                deadline_of(Some(t), "timeout")?;
                Some(t.extract::<f64>()?)
            }
            None => None,
        };
        Ok(MessageIter::new(self.shared.clone(), wait))
    }

    /// The next frame that is not a message nor an answer (`session_joined`, `session_left`,
    /// `presence_update`, `ask_deferred`, `ask_cancelled`, `delivery_queued`, `delivered` and
    /// `delivery_failed` of queued messages, `message_read`, `error`), as a dict; `None` when
    /// none within `timeout` seconds (`None`: only one already there).
    #[pyo3(signature = (timeout = None))]
    fn next_event<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<&Bound<'py, PyAny>>,
    ) -> PyRes<Option<Bound<'py, PyAny>>> {
        let deadline = deadline_of(timeout, "timeout")?;
        match self
            .shared
            .wait(py, deadline.or(Some(Instant::now())), |s| {
                s.events.pop_front()
            })? {
            Some(frame) => Ok(Some(to_py(py, &frame)?)),
            None => Ok(None),
        }
    }

    /// Updates name, status or model (another key is `UNKNOWN_KEY`).
    #[pyo3(signature = (**update))]
    fn presence(&self, py: Python<'_>, update: Option<&Bound<'_, PyDict>>) -> PyRes<()> {
        let mut frame = Map::new();
        frame.insert("type".into(), "presence".into());
        if let Some(update) = update {
            for (key, value) in update.iter() {
                let key = str_arg(&key, "a presence key")?;
                if !["name", "status", "model"].contains(&key.as_str()) {
                    return Err(fail(
                        ErrorCode::UnknownKey,
                        format!("presence takes name, status or model, not {key:?}"),
                    ));
                }
                let value = str_arg(&value, &key)?;
                frame.insert(key, value.into());
            }
        }
        self.shared.send(py, &Value::Object(frame))
    }

    /// Leaves; the connection may register again. `preserve_asks`: keep this session's asks.
    #[pyo3(signature = (preserve_asks = None))]
    fn unregister(&self, py: Python<'_>, preserve_asks: Option<&Bound<'_, PyAny>>) -> PyRes<()> {
        let mut frame = json!({ "type": "unregister" });
        if let Some(v) = preserve_asks.filter(|v| !v.is_none()) {
            let keep = v
                .cast::<pyo3::types::PyBool>()
                .map_err(|_| fail(ErrorCode::InvalidArgument, "preserve_asks must be a bool"))?;
            frame["preserveAsks"] = keep.is_true().into();
        }
        self.shared.send(py, &frame)
    }

    /// Closes the connection; later calls raise `NOT_CONNECTED`. Closing twice is harmless.
    fn close(&self) {
        self.shared.wire.close();
    }

    /// The session id of the last registration.
    #[getter]
    fn session_id(&self) -> Option<String> {
        self.session_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// True once the connection ended (closed by either side).
    #[getter]
    fn closed(&self) -> bool {
        lock(&self.shared).lost.is_some()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.close();
    }
}

impl Client {
    fn registration(&self, py: Python<'_>, checked: &RegisterRequest) -> PyRes<Value> {
        {
            let mut s = lock(&self.shared);
            if s.registration.is_some() {
                return Err(fail(
                    ErrorCode::InvalidArgument,
                    "a registration is already in progress",
                ));
            }
            s.registration = Some(None);
        }
        let shared = &self.shared;
        let answer = shared.send(py, checked.frame()).and_then(|()| {
            // The answer is taken and the registration ended under one lock: a frame right
            // behind the answer (a queued message handed over at registration) is never read
            // as the answer of a registration still marked in progress, and lost.
            shared.wait(py, Some(Instant::now() + ANSWER_TIMEOUT), |s| {
                if matches!(s.registration, Some(Some(_))) {
                    s.registration.take().flatten()
                } else {
                    None
                }
            })
        });
        lock(shared).registration = None;
        let Some(answer) = answer? else {
            shared.wire.close();
            return Err(fail(
                ErrorCode::NotConnected,
                format!(
                    "the broker did not answer register within {} s",
                    ANSWER_TIMEOUT.as_secs()
                ),
            ));
        };
        let access: Option<&Access> = checked.access();
        match rules::register_answer(&answer, access) {
            Ok(Answer::Accepted) => Ok(answer),
            Ok(Answer::Refused(error)) => Err(py_error(error)),
            Err(error) => {
                // An answer no client can use: the broker may hold the session registered on
                // the strength of it, so the connection goes.
                shared.wire.close();
                Err(py_error(error))
            }
        }
    }
}

/// Connects to the broker of `agent_dir` (`None`: `PI_CODING_AGENT_DIR` or `~/.pi/agent`), or
/// to `socket_path`. `scope` is the scope the sessions of this connection register in
/// (`INVALID_SCOPE` when it is not a scope id; `None` or `""`: unscoped).
#[pyfunction]
#[pyo3(signature = (agent_dir = None, scope = None, *, socket_path = None, **kwargs))]
fn connect(
    py: Python<'_>,
    agent_dir: Option<&Bound<'_, PyAny>>,
    scope: Option<&Bound<'_, PyAny>>,
    socket_path: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyRes<Client> {
    no_other_keys(kwargs, "connect")?;
    let scope = crate::contract::scope_text(scope, "scope")?;
    let socket: PathBuf = socket_of(agent_dir, socket_path)?;
    let wire = py
        .detach(|| WireClient::connect(&socket))
        .map_err(py_error)?;
    let shared = Arc::new(Shared {
        wire,
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    });
    let reader = shared.clone();
    std::thread::Builder::new()
        .name("agent-intercom-client".into())
        .spawn(move || reader.read())
        .map_err(|e| {
            fail(
                ErrorCode::Internal,
                format!("cannot start the reader thread: {e}"),
            )
        })?;
    Ok(Client {
        shared,
        scope,
        started_at: now_ms(),
        session_id: Mutex::new(None),
        socket_path: socket.display().to_string(),
    })
}

/// Probes a socket with a health frame: `compatible`, `incompatible` or `unreachable`.
#[pyfunction]
#[pyo3(signature = (socket_path, timeout_ms = None))]
fn broker_health(
    py: Python<'_>,
    socket_path: &Bound<'_, PyAny>,
    timeout_ms: Option<&Bound<'_, PyAny>>,
) -> PyRes<&'static str> {
    let socket = crate::broker::path_arg(Some(socket_path), "socket_path")?.unwrap_or_default();
    let wait = ms_arg(timeout_ms, "timeout_ms", Duration::from_secs(1))?;
    Ok(py
        .detach(|| agent_intercom_broker::health(&socket, wait))
        .as_str())
}

/// Sends one `access_control` request (`request`: the frame without its type, `{action,
/// adminToken, ...}` on the local socket or `{action, access, ...}` on the remote gateway) on a
/// connection of its own and returns the broker's `access_control_result`
/// (`agent_intercom_broker::client::access_control`). Raises the broker's refusal
/// (`ACCESS_DENIED`, `INVALID_REQUEST`), `NOT_CONNECTED` when no answer came within
/// `timeout_ms` (default `ANSWER_TIMEOUT_MS`), `INVALID_FRAME` for an answer that is not this
/// request's, and `INVALID_ARGUMENT` or `UNKNOWN_KEY` before anything is sent.
#[pyfunction]
#[pyo3(signature = (request, agent_dir = None, *, socket_path = None, timeout_ms = None))]
fn access_control<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    agent_dir: Option<&Bound<'py, PyAny>>,
    socket_path: Option<&Bound<'py, PyAny>>,
    timeout_ms: Option<&Bound<'py, PyAny>>,
) -> PyRes<Bound<'py, PyAny>> {
    let request = to_json(request, "request").map_err(py_error)?;
    let socket = socket_of(agent_dir, socket_path)?;
    let wait = ms_arg(timeout_ms, "timeout_ms", ANSWER_TIMEOUT)?;
    let answer = py
        .detach(|| agent_intercom_broker::client::access_control(&socket, &request, wait))
        .map_err(py_error)?;
    to_py(py, &answer.value)
}

/// The socket of the broker of `agent_dir` (`None`: from the environment), or `socket_path`.
#[pyfunction]
#[pyo3(signature = (agent_dir = None, *, socket_path = None))]
fn broker_socket_path(
    agent_dir: Option<&Bound<'_, PyAny>>,
    socket_path: Option<&Bound<'_, PyAny>>,
) -> PyRes<String> {
    Ok(socket_of(agent_dir, socket_path)?.display().to_string())
}

/// Adds the client's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Client>()?;
    m.add_class::<Message>()?;
    m.add_class::<MessageIter>()?;
    m.add_function(wrap_pyfunction!(connect, m)?)?;
    m.add_function(wrap_pyfunction!(broker_health, m)?)?;
    m.add_function(wrap_pyfunction!(access_control, m)?)?;
    m.add_function(wrap_pyfunction!(broker_socket_path, m)?)?;
    Ok(())
}
