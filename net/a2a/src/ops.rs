//! The A2A operations over the scratchpad store: send (new task, follow-up, idempotent repeat;
//! blocking or not), get, cancel and list, for one sender identity, in one A2A version.

use std::time::Duration;

use agent_intercom_core::scratchpad::TaskState;
use agent_intercom_core::time::parse_offset_time;
use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_scratchpad::{
    A2aInbound, A2aQuery, A2aTask, A2aView, Canceled, GatewayTarget, MAX_A2A_ID_BYTES,
    MAX_A2A_PAGE, Receipt,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::dialect::Dialect;
use crate::errors::{PUSH_NOT_SUPPORTED, RpcError, TASK_NOT_CANCELABLE, UNSUPPORTED_OPERATION};
use crate::feed::follow;
use crate::fields::Fields;
use crate::gateway::{Route, ask_content};
use crate::json::digest;
use crate::stream::{Opened, Streams, settles};
use crate::wire::{ArtifactsField, Inbound, parse_message, render_task};
use crate::worker::StoreHandle;

/// Tasks per `ListTasks` page when the client names no size.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// Longest task id a 0.1 client may choose (its message ids are derived from it).
const MAX_LEGACY_ID_BYTES: usize = 160;

/// The history reason of a cancel asked for by the A2A client.
const CANCEL_REASON: &str = "canceled by the A2A client";

/// What the operations share: the store, who works on A2A tasks, and how long a blocking send
/// waits.
#[derive(Clone)]
pub struct Service {
    /// The store thread.
    pub store: StoreHandle,
    /// The local agent new tasks are assigned to.
    pub assignee: String,
    /// The project root of new tasks.
    pub project_root: Option<String>,
    /// The longest a blocking send waits for a terminal or interrupted state.
    pub blocking_timeout: Duration,
    /// Turns true when the service stops: blocking sends answer at once, streams end.
    pub shutdown: watch::Receiver<bool>,
    /// The streams open, within their limits.
    pub streams: Streams,
    /// `serve --broker`: messages become asks to live sessions (gateway.rs).
    pub gateway: Option<Route>,
}

/// A store failure as a JSON-RPC error: bad input the store refused is `-32602`, the rest
/// `-32603`.
fn store_error(e: &Error, field: &str) -> RpcError {
    match e.code() {
        ErrorCode::ContentTooLarge => RpcError {
            reason: "CONTENT_TOO_LARGE",
            ..RpcError::param(field, e.message())
        },
        ErrorCode::InvalidArgument => RpcError::param(field, e.message()),
        _ => RpcError::internal(e),
    }
}

/// A refusal because `task` is in a terminal state: it `what` ("cannot be canceled" ...).
fn terminal(code: i64, reason: &'static str, task: &A2aTask, what: &str) -> RpcError {
    RpcError::new(
        code,
        reason,
        format!(
            "task {} is {} (a terminal state) and {what}",
            task.task.id, task.task.state
        ),
    )
    .with("taskId", task.task.id.clone())
    .with("state", task.task.state.clone())
}

/// Done waiting: terminal, or interrupted (input required) by a transition after `after`.
fn settled(task: &A2aTask, after: i64) -> bool {
    settles(&task.task.state, task.transitions, after)
}

/// What a send request asks besides its message.
struct SendOptions {
    blocking: bool,
    history: Option<usize>,
    legacy_id: Option<String>,
}

fn history_length(f: &Fields<'_>) -> Result<Option<usize>, RpcError> {
    Ok(f.count("historyLength")?.map(|n| n as usize))
}

/// Parses the parameters of `SendMessage` (1.0), `message/send` (0.3) or `tasks/send` (0.1).
fn send_request(params: &Value, dialect: Dialect) -> Result<(Inbound, SendOptions), RpcError> {
    let f = Fields::of(params, "")?;
    let push = RpcError::new(
        PUSH_NOT_SUPPORTED,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "push notifications are not supported (the Agent Card says pushNotifications: false); \
         poll GetTask instead",
    );
    f.object("metadata")?;
    if dialect == Dialect::V01 {
        let id = f.id("id", MAX_LEGACY_ID_BYTES)?;
        if f.get("pushNotification").is_some() {
            return Err(push);
        }
        let mut inbound = parse_message(f.get("message"), "message", dialect, Some(String::new()))?;
        // 0.1 messages have no id: the task id and what was sent make one, so that a repeated
        // tasks/send is recognised and a different one continues the task.
        let hash = digest(&inbound.message);
        let message_id = format!("tasks/send:{id}:{}", &hash[..16]);
        inbound.message["messageId"] = Value::String(message_id.clone());
        inbound.message_id = message_id;
        inbound.context_id = f.opt_id("sessionId", MAX_A2A_ID_BYTES)?.map(str::to_string);
        let options = SendOptions {
            blocking: false,
            history: history_length(&f)?,
            legacy_id: Some(id.to_string()),
        };
        return Ok((inbound, options));
    }
    let inbound = parse_message(f.get("message"), "message", dialect, None)?;
    let config_path = f.at("configuration");
    let (blocking, history) = match f.object("configuration")? {
        None => (true, None),
        Some(map) => {
            let c = Fields {
                map,
                path: &config_path,
            };
            c.strings("acceptedOutputModes")?;
            let push_key = if dialect == Dialect::V1 {
                "taskPushNotificationConfig"
            } else {
                "pushNotificationConfig"
            };
            if c.get(push_key).is_some() {
                return Err(push);
            }
            let blocking = if dialect == Dialect::V1 {
                !c.bool("returnImmediately")?.unwrap_or(false)
            } else {
                c.bool("blocking")?.unwrap_or(true)
            };
            (blocking, history_length(&c)?)
        }
    };
    let options = SendOptions {
        blocking,
        history,
        legacy_id: None,
    };
    Ok((inbound, options))
}

impl Service {
    async fn view(
        &self,
        id: String,
        sender: String,
        history: Option<usize>,
    ) -> Result<Option<A2aView>, RpcError> {
        self.store
            .call(move |s| s.a2a_view(&id, &sender, history, true))
            .await
            .map_err(|e| RpcError::internal(&e))
    }

    /// Waits until the task is settled (see [`settled`]), the blocking timeout passes or the
    /// service stops.
    async fn wait(&self, id: &str, sender: &str, after: i64) -> Result<(), RpcError> {
        let deadline = tokio::time::Instant::now() + self.blocking_timeout;
        let mut changes = self.store.changes();
        let mut shutdown = self.shutdown.clone();
        loop {
            changes.borrow_and_update();
            let (id_, sender_) = (id.to_string(), sender.to_string());
            let task = self
                .store
                .call(move |s| s.a2a_task(&id_, &sender_))
                .await
                .map_err(|e| RpcError::internal(&e))?;
            if task.is_none_or(|t| settled(&t, after)) || *shutdown.borrow() {
                return Ok(());
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return Ok(()) },
                () = tokio::time::sleep_until(deadline) => return Ok(()),
                _ = shutdown.changed() => return Ok(()),
            }
        }
    }

    /// Stores a client's message (a new task, a follow-up or a repeat, `a2a_receive`): the task
    /// and the number of transitions after which an interruption is news to the client (0 for
    /// a repeat: being interrupted at all answers it).
    async fn receive(
        &self,
        sender: &str,
        dialect: Dialect,
        inbound: &Inbound,
        options: &SendOptions,
    ) -> Result<(A2aTask, i64), RpcError> {
        let digest_hex = digest(&inbound.digest_input(options.legacy_id.as_deref()));
        let message = inbound.message.to_string();
        // A message naming its task continues that task: it needs no target (a gateway task
        // takes no second message, and one made without --broker goes to its assignee).
        let (assignee, target) = match &self.gateway {
            Some(route) if inbound.task_id.is_some() => (route.name.clone(), None),
            Some(route) => (route.name.clone(), Some(route.target(&inbound.message)?)),
            None => (self.assignee.clone(), None),
        };
        let content = target
            .as_ref()
            .map(|_| ask_content(&inbound.message, &inbound.text))
            .unwrap_or_default();
        let (sender_, root) = (sender.to_string(), self.project_root.clone());
        let (legacy_id, message_id) = (options.legacy_id.clone(), inbound.message_id.clone());
        let receipt = {
            let inbound = inbound.clone();
            self.store
                .call(move |s| {
                    s.a2a_receive(&A2aInbound {
                        sender: &sender_,
                        message_id: &inbound.message_id,
                        digest: &digest_hex,
                        context_id: inbound.context_id.as_deref(),
                        task_id: inbound.task_id.as_deref(),
                        legacy_id: legacy_id.as_deref(),
                        dialect: dialect.as_str(),
                        message: &message,
                        title: &inbound.title,
                        text: &inbound.text,
                        assignee: &assignee,
                        project_root: root.as_deref(),
                        gateway: target.as_deref().map(|target| GatewayTarget {
                            target,
                            content: &content,
                        }),
                    })
                })
                .await
                .map_err(|e| store_error(&e, "message.parts"))?
        };
        match receipt {
            Receipt::Created(t) | Receipt::Appended(t) => {
                if let Some(route) = &self.gateway {
                    route.wake.notify_one();
                }
                let after = t.transitions;
                Ok((t, after))
            }
            Receipt::OneMessage(t) => Err(RpcError::new(
                UNSUPPORTED_OPERATION,
                "ONE_MESSAGE_PER_TASK",
                format!(
                    "task {} went to a live session as one ask and takes no second message; \
                     send a new message (without taskId) for more work",
                    t.task.id
                ),
            )
            .with("taskId", t.task.id.clone())),
            Receipt::Repeated(t) => Ok((t, 0)),
            Receipt::Reused { task_id } => Err(RpcError {
                reason: "MESSAGE_ID_REUSED",
                ..RpcError::param(
                    "message.messageId",
                    format!(
                        "messageId {message_id:?} was already sent with another content \
                         (task {task_id}); a repeat must be identical, a new message needs a \
                         new messageId"
                    ),
                )
            }
            .with("messageId", message_id)
            .with("taskId", task_id)),
            Receipt::NoTask => {
                let named = inbound.task_id.clone().or(options.legacy_id.clone());
                Err(RpcError::task_not_found(&named.unwrap_or_default()))
            }
            Receipt::Terminal(t) => Err(terminal(
                UNSUPPORTED_OPERATION,
                "TASK_TERMINAL",
                &t,
                "takes no more messages",
            )),
            Receipt::ContextMismatch(t) => Err(RpcError {
                reason: "CONTEXT_MISMATCH",
                ..RpcError::param(
                    "message.contextId",
                    format!(
                        "task {} belongs to context {}, not the one given",
                        t.task.id, t.context_id
                    ),
                )
            }),
        }
    }

    /// `SendMessage` / `message/send` / `tasks/send`.
    pub async fn send(
        &self,
        sender: &str,
        dialect: Dialect,
        params: &Value,
    ) -> Result<Value, RpcError> {
        let (inbound, options) = send_request(params, dialect)?;
        let (task, after) = self.receive(sender, dialect, &inbound, &options).await?;
        if options.blocking {
            self.wait(&task.task.id, sender, after).await?;
        }
        let view = self
            .view(task.task.id.clone(), sender.to_string(), options.history)
            .await?
            .ok_or_else(|| RpcError::task_not_found(&task.task.id))?;
        let rendered = render_task(&view, dialect, ArtifactsField::NonEmpty);
        Ok(match dialect {
            Dialect::V1 => json!({ "task": rendered }),
            _ => rendered,
        })
    }

    /// `SendStreamingMessage` (1.0) / `message/stream` (0.3): the message is stored as by a
    /// send (blocking or not makes no difference: the stream is the wait), then its task is
    /// followed. A stream over the limits is refused before anything is stored.
    pub async fn send_streaming(
        &self,
        sender: &str,
        dialect: Dialect,
        params: &Value,
    ) -> Result<Opened, RpcError> {
        let (inbound, options) = send_request(params, dialect)?;
        let permit = self.streams.admit(sender)?;
        let (task, after) = self.receive(sender, dialect, &inbound, &options).await?;
        let snapshot = self
            .view(task.task.id.clone(), sender.to_string(), options.history)
            .await?
            .ok_or_else(|| RpcError::task_not_found(&task.task.id))?;
        Ok(Opened {
            following: follow(self.store.clone(), sender.to_string(), snapshot),
            after,
            permit,
        })
    }

    /// `SubscribeToTask` (1.0) / `tasks/resubscribe` (0.3): the task as it stands (its whole
    /// history and its artifacts), then its changes. A terminal task has none to stream:
    /// `-32004`, as A2A 1.0 says.
    pub async fn subscribe(
        &self,
        sender: &str,
        dialect: Dialect,
        params: &Value,
    ) -> Result<Opened, RpcError> {
        let f = Fields::of(params, "")?;
        let id = f.id("id", MAX_A2A_ID_BYTES)?;
        f.object("metadata")?;
        let (task_id, _) = self.find(sender, dialect, id).await?;
        let permit = self.streams.admit(sender)?;
        let snapshot = self
            .view(task_id, sender.to_string(), None)
            .await?
            .ok_or_else(|| RpcError::task_not_found(id))?;
        let state = TaskState::parse(&snapshot.task.task.state, "state");
        if state.is_ok_and(TaskState::is_terminal) {
            return Err(terminal(
                UNSUPPORTED_OPERATION,
                "TASK_TERMINAL",
                &snapshot.task,
                "has no more changes to stream; GetTask returns it",
            ));
        }
        let after = snapshot.task.transitions;
        Ok(Opened {
            following: follow(self.store.clone(), sender.to_string(), snapshot),
            after,
            permit,
        })
    }

    /// Finds a task by id, or (asked in 0.3 or 0.1) by the id its 0.1 client chose; the version
    /// to answer in (a task created by `tasks/send` answers in 0.1).
    async fn find(
        &self,
        sender: &str,
        dialect: Dialect,
        id: &str,
    ) -> Result<(String, Dialect), RpcError> {
        let (id_, sender_) = (id.to_string(), sender.to_string());
        let found = self
            .store
            .call(move |s| match s.a2a_task(&id_, &sender_)? {
                Some(t) => Ok(Some(t)),
                None if dialect != Dialect::V1 => s.a2a_task_by_legacy_id(&id_, &sender_),
                None => Ok(None),
            })
            .await
            .map_err(|e| RpcError::internal(&e))?
            .ok_or_else(|| RpcError::task_not_found(id))?;
        let answer_in = if dialect != Dialect::V1 && found.dialect == Dialect::V01.as_str() {
            Dialect::V01
        } else {
            dialect
        };
        Ok((found.task.id, answer_in))
    }

    /// `GetTask` / `tasks/get`.
    pub async fn get(
        &self,
        sender: &str,
        dialect: Dialect,
        params: &Value,
    ) -> Result<Value, RpcError> {
        let f = Fields::of(params, "")?;
        let id = f.id("id", MAX_A2A_ID_BYTES)?;
        let history = history_length(&f)?;
        f.object("metadata")?;
        let (task_id, answer_in) = self.find(sender, dialect, id).await?;
        let view = self
            .view(task_id, sender.to_string(), history)
            .await?
            .ok_or_else(|| RpcError::task_not_found(id))?;
        Ok(render_task(&view, answer_in, ArtifactsField::NonEmpty))
    }

    /// `CancelTask` / `tasks/cancel`: the task is canceled in the store first, then the answer
    /// says so; a terminal task is `-32002` and stays as it is.
    pub async fn cancel(
        &self,
        sender: &str,
        dialect: Dialect,
        params: &Value,
    ) -> Result<Value, RpcError> {
        let f = Fields::of(params, "")?;
        let id = f.id("id", MAX_A2A_ID_BYTES)?;
        f.object("metadata")?;
        let (task_id, answer_in) = self.find(sender, dialect, id).await?;
        let (id_, sender_) = (task_id.clone(), sender.to_string());
        let outcome = self
            .store
            .call(move |s| s.a2a_cancel(&id_, &sender_, CANCEL_REASON))
            .await
            .map_err(|e| RpcError::internal(&e))?;
        match outcome {
            Canceled::Canceled(_) => {
                // The bridge cancels the ask at the broker.
                if let Some(route) = &self.gateway {
                    route.wake.notify_one();
                }
            }
            Canceled::NoTask => return Err(RpcError::task_not_found(id)),
            Canceled::NotCancelable(t) => {
                return Err(terminal(
                    TASK_NOT_CANCELABLE,
                    "TASK_NOT_CANCELABLE",
                    &t,
                    "cannot be canceled",
                ));
            }
        }
        let view = self
            .view(task_id, sender.to_string(), None)
            .await?
            .ok_or_else(|| RpcError::task_not_found(id))?;
        Ok(render_task(&view, answer_in, ArtifactsField::NonEmpty))
    }

    /// `ListTasks` (1.0): the sender's tasks, newest status first, filtered and paged.
    pub async fn list(&self, sender: &str, params: &Value) -> Result<Value, RpcError> {
        let f = Fields::of(params, "")?;
        let context_id = f.opt_id("contextId", MAX_A2A_ID_BYTES)?.map(str::to_string);
        let state = list_state(&f)?;
        let page_size = match f.count("pageSize")? {
            None => DEFAULT_PAGE_SIZE,
            Some(n) if (1..=MAX_A2A_PAGE as u64).contains(&n) => n as usize,
            Some(n) => {
                return Err(RpcError::param(
                    "pageSize",
                    format!("must be from 1 to {MAX_A2A_PAGE}, got {n}"),
                ));
            }
        };
        let after = match f.str("pageToken")? {
            None | Some("") => None,
            Some(token) => Some(parse_page_token(token)?),
        };
        let updated_after = match f.str("statusTimestampAfter")? {
            None => None,
            Some(text) => Some(parse_offset_time(text).ok_or_else(|| {
                RpcError::param(
                    "statusTimestampAfter",
                    "must be an ISO 8601 timestamp such as 2026-01-02T03:04:05.000Z",
                )
            })?),
        };
        let history = history_length(&f)?;
        let include_artifacts = f.bool("includeArtifacts")?.unwrap_or(false);
        let Some(state) = state else {
            // A state the scratchpad never has (AUTH_REQUIRED): nothing matches.
            return Ok(json!({
                "tasks": [], "nextPageToken": "", "pageSize": page_size, "totalSize": 0,
            }));
        };
        let sender = sender.to_string();
        let page = self
            .store
            .call(move |s| {
                s.a2a_list(&A2aQuery {
                    sender: &sender,
                    context_id: context_id.as_deref(),
                    state,
                    updated_after,
                    limit: page_size,
                    after,
                    history,
                    artifacts: include_artifacts,
                })
            })
            .await
            .map_err(|e| store_error(&e, "params"))?;
        let artifacts = if include_artifacts {
            ArtifactsField::Always
        } else {
            ArtifactsField::Omit
        };
        let tasks: Vec<Value> = page
            .tasks
            .iter()
            .map(|v| render_task(v, Dialect::V1, artifacts))
            .collect();
        let next = page
            .next
            .map(|(at, id)| format!("{at}.{id}"))
            .unwrap_or_default();
        Ok(json!({
            "tasks": tasks,
            "nextPageToken": next,
            "pageSize": page_size,
            "totalSize": page.total,
        }))
    }
}

/// The `status` filter of `ListTasks`: `Ok(Some(None))` for none (absent,
/// `TASK_STATE_UNSPECIFIED`, or `UNRECOGNIZED`, which @a2a-js/sdk writes for an unset status),
/// `Ok(None)` for a state no scratchpad task has (`AUTH_REQUIRED`).
fn list_state(f: &Fields<'_>) -> Result<Option<Option<TaskState>>, RpcError> {
    const NAMES: [&str; 9] = [
        "TASK_STATE_UNSPECIFIED",
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    ];
    let index = match f.get("status") {
        // What @a2a-js/sdk writes for a status left unset in a partial request object.
        None => 0,
        Some(Value::String(name)) if name == "UNRECOGNIZED" => 0,
        Some(Value::String(name)) => NAMES.iter().position(|n| n == name).ok_or_else(|| {
            RpcError::param("status", format!("must be one of: {}", NAMES.join(", ")))
        })?,
        // ProtoJSON also accepts an enum's number.
        Some(Value::Number(n)) => n
            .as_u64()
            .filter(|&i| (i as usize) < NAMES.len())
            .ok_or_else(|| RpcError::param("status", "must be a TaskState from 0 to 8"))?
            as usize,
        Some(_) => return Err(RpcError::param("status", "must be a TaskState name")),
    };
    Ok(match NAMES[index] {
        "TASK_STATE_UNSPECIFIED" => Some(None),
        "TASK_STATE_AUTH_REQUIRED" => None,
        name => {
            let kebab = name["TASK_STATE_".len()..]
                .to_ascii_lowercase()
                .replace('_', "-");
            Some(TaskState::parse(&kebab, "status").ok())
        }
    })
}

fn parse_page_token(token: &str) -> Result<(i64, String), RpcError> {
    let bad = || RpcError::param("pageToken", "is not a token a previous page returned");
    let (at, id) = token.split_once('.').ok_or_else(bad)?;
    let at: i64 = at.parse().map_err(|_| bad())?;
    if id.is_empty() || id.len() > MAX_A2A_ID_BYTES {
        return Err(bad());
    }
    Ok((at, id.to_string()))
}
