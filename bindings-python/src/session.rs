//! One connection's shared state: the reader thread that hands each frame to whoever waits for
//! it (a registration, a request id, a message id, an ask's reply) or queues it (messages,
//! events), and the waits, which release the GIL and check for signals every tenth of a second.
//! Also the argument helpers of the client: deadlines, unknown keywords, outgoing messages.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent_intercom_broker::client::rules;
use agent_intercom_broker::client::{ANSWER_TIMEOUT, Client as WireClient};
use agent_intercom_core::{Error, ErrorCode};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::{Map, Value, json};

use crate::convert::to_json;
use crate::{IntercomError, PyRes, fail, py_error};

/// How many events are kept unread; older ones are dropped first (messages are never dropped).
const MAX_EVENTS: usize = 4096;
const SLICE: Duration = Duration::from_millis(100);

/// What the reader thread has for the waiting calls.
#[derive(Default)]
pub struct State {
    /// `Some(None)` while a registration waits for its answer.
    pub registration: Option<Option<Value>>,
    /// Request id -> the answer (`sessions`, `ask_control_result`, `delivery_status`).
    pub requests: HashMap<String, Option<Value>>,
    /// Message id of a send -> its outcome (`delivered`, `delivery_queued`, `delivery_failed`).
    pub deliveries: HashMap<String, Option<Value>>,
    /// Message id of an ask -> its reply (a `message` frame) or its `ask_cancelled`.
    pub asks: HashMap<String, Option<Value>>,
    pub inbox: VecDeque<Value>,
    pub events: VecDeque<Value>,
    /// Why the connection ended, once it has.
    pub lost: Option<Error>,
    /// The broker's last refusal (`error` frame), named when the connection ends after it.
    refusal: Option<Error>,
}

/// One connection, shared by the Python object, its messages and the reader thread.
pub struct Shared {
    pub wire: WireClient,
    pub state: Mutex<State>,
    pub changed: Condvar,
}

pub fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(PoisonError::into_inner)
}

pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Raises `IntercomError` with a code of the wire (a delivery failure's), which the core's
/// ErrorCode may not name.
pub fn wire_error(py: Python<'_>, code: &str, message: &str) -> PyErr {
    let err = IntercomError::new_err(message.to_string());
    let value = err.value(py);
    let _ = value.setattr("code", code);
    let _ = value.setattr("message", message);
    let _ = value.setattr("accepted", py.None());
    let _ = value.setattr("message_id", py.None());
    err
}

impl Shared {
    pub fn read(self: Arc<Shared>) {
        loop {
            match self.wire.recv(Duration::MAX) {
                Ok(Some(received)) => self.dispatch(received.value),
                Ok(None) => {}
                Err(error) => {
                    lock(&self).lost = Some(error);
                    self.changed.notify_all();
                    return;
                }
            }
        }
    }

    fn dispatch(&self, frame: Value) {
        let mut s = lock(self);
        // The first frame after a register request is its answer, whatever it is (as for C and
        // Node).
        if matches!(s.registration, Some(None)) {
            s.registration = Some(Some(frame));
            drop(s);
            self.changed.notify_all();
            return;
        }
        let key = |k: &str| frame.get(k).and_then(Value::as_str).map(str::to_string);
        let fill =
            |map: &mut HashMap<String, Option<Value>>, id: Option<String>, f: &Value| match id
                .and_then(|id| map.get_mut(&id))
            {
                Some(slot @ None) => {
                    *slot = Some(f.clone());
                    true
                }
                _ => false,
            };
        let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
        let taken = match kind {
            // An answer to a request: never an event, also when nobody waits for it any more
            // (the best-effort cancel_ask after an ask timed out, an answer past its timeout).
            "sessions" | "ask_control_result" | "delivery_status" => {
                fill(&mut s.requests, key("requestId"), &frame);
                true
            }
            "delivery_accepted" => true,
            "delivered" | "delivery_failed" => fill(&mut s.deliveries, key("messageId"), &frame),
            // Always an event too: a queued message's outcome comes later, as an event.
            "delivery_queued" => {
                fill(&mut s.deliveries, key("messageId"), &frame);
                false
            }
            "error" => {
                s.refusal = Some(rules::broker_refusal(&frame));
                false
            }
            "ask_cancelled" => {
                fill(&mut s.asks, key("messageId"), &frame);
                false
            }
            "message" => {
                let reply_to = frame
                    .get("message")
                    .and_then(|m| m.get("replyTo"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if !fill(&mut s.asks, reply_to, &frame) {
                    s.inbox.push_back(frame.clone());
                }
                true
            }
            _ => false,
        };
        if !taken {
            if s.events.len() == MAX_EVENTS {
                s.events.pop_front();
            }
            s.events.push_back(frame);
        }
        drop(s);
        self.changed.notify_all();
    }

    /// Waits until `take` finds what it waits for, the connection ends (`NOT_CONNECTED`) or
    /// `deadline` passes (`Ok(None)`). The GIL is released while waiting.
    pub fn wait<T: Send>(
        &self,
        py: Python<'_>,
        deadline: Option<Instant>,
        mut take: impl FnMut(&mut State) -> Option<T> + Send,
    ) -> PyRes<Option<T>> {
        enum Step<T> {
            Found(T),
            Lost(Error),
            Tick,
        }
        loop {
            let step = py.detach(|| {
                let mut s = lock(self);
                let slice_end = Instant::now() + SLICE;
                loop {
                    if let Some(found) = take(&mut s) {
                        return Step::Found(found);
                    }
                    if let Some(lost) = &s.lost {
                        // A frame no client can use ended it: that is the answer's failure.
                        if lost.code() == ErrorCode::InvalidFrame {
                            return Step::Lost(lost.clone());
                        }
                        let after = s.refusal.as_ref().map_or(String::new(), |r| {
                            format!(" (after it refused: {} {})", r.code().as_str(), r.message())
                        });
                        return Step::Lost(Error::new(
                            ErrorCode::NotConnected,
                            format!(
                                "the connection to the broker is closed: {}{after}",
                                lost.message()
                            ),
                        ));
                    }
                    let now = Instant::now();
                    let end = deadline.map_or(slice_end, |d| d.min(slice_end));
                    if now >= end {
                        return Step::Tick;
                    }
                    s = self
                        .changed
                        .wait_timeout(s, end - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            });
            match step {
                Step::Found(found) => return Ok(Some(found)),
                Step::Lost(error) => return Err(py_error(error)),
                Step::Tick => {
                    py.check_signals()?;
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(None);
                    }
                }
            }
        }
    }

    pub fn send(&self, py: Python<'_>, frame: &Value) -> PyRes<()> {
        py.detach(|| self.wire.send(frame)).map_err(py_error)
    }

    /// Sends a request carrying a fresh `requestId` and waits for its answer.
    pub fn request(&self, py: Python<'_>, mut frame: Value) -> PyRes<Value> {
        let id = uuid();
        frame["requestId"] = Value::String(id.clone());
        self.request_with(py, &id, &frame)
    }

    pub fn request_with(&self, py: Python<'_>, id: &str, frame: &Value) -> PyRes<Value> {
        lock(self).requests.insert(id.to_string(), None);
        let answer = self.send(py, frame).and_then(|()| {
            self.wait(py, Some(Instant::now() + ANSWER_TIMEOUT), |s| {
                s.requests.get_mut(id).and_then(Option::take)
            })
        });
        lock(self).requests.remove(id);
        answer?.ok_or_else(|| {
            fail(
                ErrorCode::NotConnected,
                format!(
                    "the broker did not answer within {} s",
                    ANSWER_TIMEOUT.as_secs()
                ),
            )
        })
    }
}

/// A deadline `timeout` seconds from now (`None`: none).
pub fn deadline_of(timeout: Option<&Bound<'_, PyAny>>, name: &str) -> PyRes<Option<Instant>> {
    let Some(v) = timeout.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let bad = || {
        fail(
            ErrorCode::InvalidArgument,
            format!("{name} must be a non-negative number of seconds"),
        )
    };
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad());
    }
    let secs: f64 = v.extract().map_err(|_| bad())?;
    let wait = Duration::try_from_secs_f64(secs).map_err(|_| bad())?;
    Ok(Some(Instant::now().checked_add(wait).unwrap_or_else(
        || Instant::now() + Duration::from_secs(100 * 365 * 86_400),
    )))
}

/// Refuses keyword arguments a function does not take (`UNKNOWN_KEY`), naming the first.
pub fn no_other_keys(kwargs: Option<&Bound<'_, PyDict>>, what: &str) -> PyRes<()> {
    if let Some((key, _)) = kwargs.and_then(|k| k.iter().next()) {
        let key = key
            .cast::<PyString>()
            .map(|k| k.to_string())
            .unwrap_or_default();
        return Err(fail(
            ErrorCode::UnknownKey,
            format!("{what} takes no option {key:?}"),
        ));
    }
    Ok(())
}

/// An outgoing message: a `str` is `{"content": {"text": ...}}`; a `dict` is copied, `text`
/// becoming `content.text`; `id` and `timestamp` are added when absent.
pub fn outgoing(
    message: &Bound<'_, PyAny>,
    extra: Map<String, Value>,
) -> PyRes<Map<String, Value>> {
    let mut m = match to_json(message, "message").map_err(py_error)? {
        Value::String(text) => {
            let mut m = Map::new();
            m.insert("content".into(), json!({ "text": text }));
            m
        }
        Value::Object(mut m) => {
            if !m.contains_key("content")
                && let Some(text) = m.remove("text")
            {
                m.insert("content".into(), json!({ "text": text }));
            }
            m
        }
        _ => {
            return Err(fail(
                ErrorCode::InvalidArgument,
                "message must be a str or a dict",
            ));
        }
    };
    m.extend(extra);
    if !m.contains_key("id") {
        m.insert("id".into(), Value::String(uuid()));
    }
    if !m.contains_key("timestamp") {
        m.insert("timestamp".into(), Value::from(now_ms()));
    }
    Ok(m)
}
