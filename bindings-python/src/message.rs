//! An incoming message, and the iterator that acknowledges each message once the loop's body
//! returned (the broker tells the sender `delivered` only then).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use serde_json::{Value, json};

use crate::PyRes;
use crate::convert::to_py;
use crate::session::{Shared, lock};

/// A message delivered to this session. `ack()` tells the broker it arrived (once; later calls
/// do nothing).
#[pyclass(module = "agent_intercom", frozen)]
pub struct Message {
    shared: Arc<Shared>,
    acked: AtomicBool,
    frame: Value,
    /// The delivery's id (for `ack`, `mark_read`).
    #[pyo3(get)]
    delivery_id: String,
    /// The sending session's id.
    #[pyo3(get)]
    sender: Option<String>,
    /// The message's id (what a reply names as `reply_to`).
    #[pyo3(get)]
    id: Option<String>,
    /// `content.text`, when it is a str.
    #[pyo3(get)]
    text: Option<String>,
    /// The ask this message replies to.
    #[pyo3(get)]
    reply_to: Option<String>,
    /// True for an ask.
    #[pyo3(get)]
    expects_reply: bool,
}

impl Message {
    pub fn new(shared: Arc<Shared>, frame: &Value) -> Message {
        let m = frame.get("message").unwrap_or(&Value::Null);
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        Message {
            shared,
            acked: AtomicBool::new(false),
            delivery_id: text(frame.get("deliveryId")).unwrap_or_default(),
            sender: text(frame.get("from").and_then(|f| f.get("id"))),
            id: text(m.get("id")),
            text: text(m.get("content").and_then(|c| c.get("text"))),
            reply_to: text(m.get("replyTo")),
            expects_reply: m
                .get("expectsReply")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            frame: frame.clone(),
        }
    }

    /// Sends `message_received` unless it was sent before (or the connection is gone).
    pub fn acknowledge(&self, py: Python<'_>) -> PyRes<()> {
        if self.acked.swap(true, Ordering::SeqCst) || lock(&self.shared).lost.is_some() {
            return Ok(());
        }
        let frame = json!({ "type": "message_received", "deliveryId": self.delivery_id });
        self.shared.send(py, &frame)
    }
}

#[pymethods]
impl Message {
    /// Tells the broker the message arrived (the sender is told `delivered`).
    fn ack(&self, py: Python<'_>) -> PyRes<()> {
        self.acknowledge(py)
    }

    /// True once acknowledged.
    #[getter]
    fn acked(&self) -> bool {
        self.acked.load(Ordering::SeqCst)
    }

    /// The message as the sender wrote it (`content`, `id`, `replyTo`, ...).
    #[getter]
    fn message<'py>(&self, py: Python<'py>) -> PyRes<Bound<'py, PyAny>> {
        to_py(py, self.frame.get("message").unwrap_or(&Value::Null))
    }

    /// The sender as the broker describes it (`from`).
    #[getter]
    fn sender_info<'py>(&self, py: Python<'py>) -> PyRes<Bound<'py, PyAny>> {
        to_py(py, self.frame.get("from").unwrap_or(&Value::Null))
    }

    fn __repr__(&self) -> String {
        let show = |v: &Option<String>| v.as_ref().map_or("None".into(), |s| format!("{s:?}"));
        format!(
            "Message(sender={}, id={}, text={})",
            show(&self.sender),
            show(&self.id),
            show(&self.text)
        )
    }
}

/// What `Client.messages()` returns.
#[pyclass(module = "agent_intercom")]
pub struct MessageIter {
    shared: Arc<Shared>,
    wait: Option<f64>,
    previous: Option<Py<Message>>,
}

impl MessageIter {
    pub fn new(shared: Arc<Shared>, wait: Option<f64>) -> MessageIter {
        MessageIter {
            shared,
            wait,
            previous: None,
        }
    }
}

impl Drop for MessageIter {
    /// A loop left with `break` (the body returned) acknowledges its last message; a loop left
    /// by an exception does not (the exception is set while the iterator is released).
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            Python::attach(|py| {
                if PyErr::occurred(py) {
                    return;
                }
                let _ = previous.get().acknowledge(py);
            });
        }
    }
}

#[pymethods]
impl MessageIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyRes<Py<Message>> {
        if let Some(previous) = self.previous.take() {
            previous.get().acknowledge(py)?;
        }
        let deadline = self
            .wait
            .map(|s| Instant::now() + Duration::from_secs_f64(s));
        let frame = match self.shared.wait(py, deadline, |s| s.inbox.pop_front()) {
            Ok(Some(frame)) => frame,
            // Nothing within the timeout, or the connection ended: the iteration ends.
            Ok(None) => return Err(PyStopIteration::new_err(())),
            Err(e) if lock(&self.shared).lost.is_some() => {
                drop(e);
                return Err(PyStopIteration::new_err(()));
            }
            Err(e) => return Err(e),
        };
        let message = Py::new(py, Message::new(self.shared.clone(), &frame))?;
        self.previous = Some(message.clone_ref(py));
        Ok(message)
    }
}
