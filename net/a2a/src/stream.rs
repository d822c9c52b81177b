//! Streams over Server-Sent Events: `SendStreamingMessage` and `SubscribeToTask` (A2A 1.0),
//! `message/stream` and `tasks/resubscribe` (0.3). A stream is one JSON-RPC response per event,
//! each in one SSE `data:` line with the request's id: first the task as it stands, then a
//! status or artifact event for each change the task layer reports ([`Following`]), until the
//! task is terminal or newly interrupted, whose status event is the last (0.3: `final: true`).
//! A comment line keeps a quiet stream alive. Streams are counted per client and in all
//! ([`Streams`]); each holds its connection, which closes when the stream ends.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use agent_intercom_core::scratchpad::TaskState;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::dialect::Dialect;
use crate::errors::{INTERNAL_ERROR, RpcError};
use crate::feed::{Following, TaskEvent};
use crate::wire::{render_artifact_update, render_status_update, render_task_event};

/// What a stream sends when it has sent nothing for the keep-alive interval: an SSE comment,
/// which clients skip.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// Frames a stream may be ahead of its connection.
const FRAME_BUFFER: usize = 4;

/// Whether a stream (or a blocking send) is done with a task that has reached `state` by its
/// `ordinal`-th transition: the state is terminal, or interrupted (input required) by a
/// transition after the first `after` (those the task had when the stream or the wait began).
pub fn settles(state: &str, ordinal: i64, after: i64) -> bool {
    let state = TaskState::parse(state, "state").unwrap_or(TaskState::Failed);
    state.is_terminal() || (state == TaskState::InputRequired && ordinal > after)
}

/// The streams open, per client (sender identity) and in all, within their limits.
#[derive(Clone)]
pub struct Streams {
    open: Arc<Mutex<Open>>,
    max: usize,
    max_per_client: usize,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_client: HashMap<String, usize>,
}

fn lock(open: &Mutex<Open>) -> MutexGuard<'_, Open> {
    // Counting cannot leave the data half changed.
    open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Streams {
    /// At most `max` streams at once, `max_per_client` of them for one client.
    pub fn new(max: usize, max_per_client: usize) -> Streams {
        Streams {
            open: Arc::new(Mutex::new(Open::default())),
            max,
            max_per_client,
        }
    }

    /// Counts a new stream of `client`, or refuses it when a limit is reached (`-32603`,
    /// reason `TOO_MANY_STREAMS`): the count goes down when the permit is dropped.
    pub fn admit(&self, client: &str) -> Result<StreamPermit, RpcError> {
        let mut open = lock(&self.open);
        let mine = open.by_client.get(client).copied().unwrap_or(0);
        let (scope, limit) = if mine >= self.max_per_client {
            ("client", self.max_per_client)
        } else if open.total >= self.max {
            ("service", self.max)
        } else {
            open.total += 1;
            open.by_client.insert(client.to_string(), mine + 1);
            return Ok(StreamPermit {
                open: self.open.clone(),
                client: client.to_string(),
            });
        };
        let whose = if scope == "client" {
            "this client has"
        } else {
            "the service has"
        };
        Err(RpcError::new(
            INTERNAL_ERROR,
            "TOO_MANY_STREAMS",
            format!(
                "too many streams: {whose} {limit} open, the most it may; end one, or send \
                 without streaming and poll GetTask"
            ),
        )
        .with("scope", scope)
        .with("limit", limit.to_string()))
    }

    /// How many streams are open (all clients).
    pub fn open(&self) -> usize {
        lock(&self.open).total
    }
}

/// One open stream, counted until dropped.
pub struct StreamPermit {
    open: Arc<Mutex<Open>>,
    client: String,
}

impl std::fmt::Debug for StreamPermit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamPermit")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_client.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.by_client.remove(&self.client);
            }
        }
    }
}

/// A stream ready to be sent: the task followed, the point after which an interruption ends it,
/// and its place among the open streams.
#[derive(Debug)]
pub struct Opened {
    /// The task and its changes.
    pub following: Following,
    /// The transitions the task had when the client's message arrived or the subscription began
    /// (0 for a repeated message: being interrupted at all ends it).
    pub after: i64,
    /// Its place among the open streams.
    pub permit: StreamPermit,
}

/// How streams are sent.
#[derive(Clone, Debug)]
pub struct Sending {
    /// The longest a stream stays silent: then it sends a comment.
    pub keep_alive: Duration,
    /// Turns true when the service stops: streams end.
    pub shutdown: watch::Receiver<bool>,
}

/// The SSE response of a stream answering the JSON-RPC request `id` in `dialect`.
pub fn respond(id: Value, dialect: Dialect, opened: Opened, sending: Sending) -> Response {
    let (tx, rx) = mpsc::channel(FRAME_BUFFER);
    tokio::spawn(pump(id, dialect, opened, sending, tx));
    let mut response = Response::new(Body::from_stream(Frames(rx)));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // A proxy that buffers (nginx) would hold the events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    // The connection ends with the stream: it is not reused.
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The frames of a response body, as the stream's task writes them.
struct Frames(mpsc::Receiver<Bytes>);

impl futures_core::Stream for Frames {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|frame| frame.map(Ok))
    }
}

/// One SSE event holding one JSON-RPC response.
fn frame(response: &Value) -> Bytes {
    // serde_json writes no line breaks (they are escaped in strings): one `data:` line.
    Bytes::from(format!("data: {response}\n\n"))
}

/// Writes the stream's events into `tx` until it ends: the task is settled, the feed ends or
/// fails, the client is gone (`tx` closed) or the service stops.
async fn pump(
    id: Value,
    dialect: Dialect,
    opened: Opened,
    sending: Sending,
    tx: mpsc::Sender<Bytes>,
) {
    let Opened {
        following: Following {
            snapshot,
            mut events,
        },
        after,
        permit: _permit,
    } = opened;
    let Sending {
        keep_alive,
        mut shutdown,
    } = sending;
    let task = &snapshot.task;
    let result = |value: Value| frame(&json!({ "jsonrpc": "2.0", "id": id, "result": value }));
    if tx
        .send(result(render_task_event(&snapshot, dialect)))
        .await
        .is_err()
    {
        return;
    }
    if settles(&task.task.state, task.transitions, after) {
        let last = render_status_update(task, task.transitions, &task.last, dialect, true);
        let _ = tx.send(result(last)).await;
        return;
    }
    let quiet = tokio::time::sleep(keep_alive);
    tokio::pin!(quiet);
    loop {
        let (next, last) = tokio::select! {
            _ = shutdown.wait_for(|stopping| *stopping) => return,
            () = tx.closed() => return,
            () = &mut quiet => (Bytes::from_static(KEEP_ALIVE), false),
            event = events.recv() => match event {
                None => return,
                Some(TaskEvent::Status { ordinal, transition }) => {
                    let last = settles(&transition.to, ordinal, after);
                    let update = render_status_update(task, ordinal, &transition, dialect, last);
                    (result(update), last)
                }
                Some(TaskEvent::Artifact { index, artifact }) => {
                    (result(render_artifact_update(task, index, &artifact, dialect)), false)
                }
                Some(TaskEvent::Failed(e)) => {
                    let error = json!({ "jsonrpc": "2.0", "id": id, "error": e.to_json(dialect) });
                    (frame(&error), true)
                }
            },
        };
        let sent = tokio::select! {
            sent = tx.send(next) => sent.is_ok(),
            _ = shutdown.wait_for(|stopping| *stopping) => false,
        };
        if !sent || last {
            return;
        }
        quiet
            .as_mut()
            .reset(tokio::time::Instant::now() + keep_alive);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_counted_per_client_and_in_all() {
        let streams = Streams::new(3, 2);
        let a1 = streams.admit("a").unwrap();
        let _a2 = streams.admit("a").unwrap();
        let e = streams.admit("a").unwrap_err();
        assert_eq!((e.code, e.reason), (INTERNAL_ERROR, "TOO_MANY_STREAMS"));
        assert!(e.metadata.contains(&("scope", "client".to_string())));
        let _b1 = streams.admit("b").unwrap();
        let e = streams.admit("c").unwrap_err();
        assert!(e.metadata.contains(&("scope", "service".to_string())));
        assert!(e.metadata.contains(&("limit", "3".to_string())));
        drop(a1);
        assert_eq!(streams.open(), 2);
        let _c1 = streams.admit("c").unwrap();
        assert!(streams.admit("a").is_err());
    }

    #[test]
    fn terminal_states_settle_and_input_required_only_when_new() {
        assert!(settles("completed", 2, 5));
        assert!(settles("canceled", 1, 1));
        assert!(settles("input-required", 3, 2));
        assert!(!settles("input-required", 2, 2));
        assert!(!settles("working", 9, 0));
    }
}
