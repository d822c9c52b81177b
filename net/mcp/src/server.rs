//! The MCP side: `initialize` (the client's version when supported), the tools, and the
//! `intercom://inbox` resource whose subscribers are told when a message arrives.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_intercom_core::{Error, ErrorCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    Implementation, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceUpdatedNotificationParam, ServerConfig, SubscribeRequestParams, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::inbox::{self, ASK_ANSWERED, Stored};
use crate::link::{Delivery, Link, Settled, now_ms};
use crate::pad::Pad;
use crate::tools::{self, Args, PAGE};

/// The inbox resource.
pub const INBOX_URI: &str = "intercom://inbox";
/// How long a send waits for the broker to settle it.
const SETTLE_WAIT: Duration = Duration::from_secs(15);
/// How often a waiting ask reports progress to a client that asked for it.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The server of one session.
#[derive(Clone)]
pub struct Server {
    link: Link,
    team: Option<String>,
    pad: Arc<Pad>,
    tools: Arc<Vec<Tool>>,
    subscribed: Arc<AtomicBool>,
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
}

/// A tool's outcome: a JSON value, or an error with its stable code (the library's, or a
/// delivery code of the protocol such as `SESSION_NOT_FOUND`).
type Outcome = Result<Value, (String, String)>;

fn refused(e: Error) -> (String, String) {
    (e.code().as_str().to_string(), e.message().to_string())
}

fn result(outcome: Outcome) -> CallToolResult {
    match outcome {
        Ok(value @ Value::Object(_)) => CallToolResult::structured(value),
        // MCP's structuredContent is an object (the TypeScript SDK drops anything else): a list
        // (the scratchpad's unread, a task's history) is carried as {"result": ...}.
        Ok(value) => CallToolResult::structured(json!({"result": value})),
        Err((code, message)) => {
            CallToolResult::structured_error(json!({"code": code, "message": message}))
        }
    }
}

fn new_message(content: Value) -> Value {
    json!({"id": uuid::Uuid::new_v4().to_string(), "timestamp": now_ms(), "content": content})
}

impl Server {
    /// A server over `link`, its scratchpad tools over `pad`, `intercom_team` over the
    /// manifest `team` names.
    pub fn new(link: Link, pad: Pad, team: Option<String>) -> Server {
        let server = Server {
            link,
            tools: Arc::new(tools::all(team.is_some())),
            team,
            pad: Arc::new(pad),
            subscribed: Arc::new(AtomicBool::new(false)),
            peer: Arc::new(Mutex::new(None)),
        };
        server.watch_arrivals();
        server
    }

    /// Tells a subscribed client each time a message arrives.
    fn watch_arrivals(&self) {
        let mut arrivals = self.link.arrivals();
        let subscribed = self.subscribed.clone();
        let peer = self.peer.clone();
        tokio::spawn(async move {
            while arrivals.changed().await.is_ok() {
                if !subscribed.load(Ordering::SeqCst) {
                    continue;
                }
                let peer = peer.lock().unwrap_or_else(PoisonError::into_inner).clone();
                if let Some(peer) = peer {
                    let param = ResourceUpdatedNotificationParam::new(INBOX_URI);
                    let _ = peer.notify_resource_updated(param).await;
                }
            }
        });
    }

    async fn call(&self, name: &str, args: Option<&Map<String, Value>>, cx: &Context) -> Outcome {
        match name {
            "intercom_whoami" => self.whoami(args),
            "intercom_status" => self.status(args).await,
            "intercom_list" => self.list(args).await,
            "intercom_set_summary" => self.set_summary(args).await,
            "intercom_send" => self.send(args).await,
            "intercom_ask" => self.ask(args, cx).await,
            "intercom_pending" => self.pending(args).await,
            "intercom_reply" => self.reply(args).await,
            "intercom_wait" => self.wait(args, cx).await,
            "intercom_team" => self.team(args).await,
            "intercom_delivery_status" => self.delivery_status(args).await,
            _ => self.pad.call(name, args, &self.link.identity().name).await,
        }
    }

    fn whoami(&self, args: Option<&Map<String, Value>>) -> Outcome {
        Args::new("intercom_whoami", args, &[]).map_err(refused)?;
        let id = self.link.identity();
        Ok(json!({
            "session_id": id.session_id,
            "name": id.name,
            "cwd": id.cwd,
            "model": id.model,
            // Whether it is scoped, never the scope: a scope id is a capability.
            "scoped": id.scope.is_some(),
            "connected": self.link.is_connected(),
        }))
    }

    async fn sessions(&self) -> Result<Vec<Value>, Error> {
        let answer = self
            .link
            .request(json!({"type": "list"}), Duration::from_secs(10))
            .await?;
        Ok(answer["sessions"].as_array().cloned().unwrap_or_default())
    }

    async fn status(&self, args: Option<&Map<String, Value>>) -> Outcome {
        Args::new("intercom_status", args, &[]).map_err(refused)?;
        let (unread, asks, unsent, evicted) = self
            .link
            .inbox(|i| -> Result<_, Error> {
                let (unread, asks) = i.counts()?;
                Ok((unread, asks, i.unsettled()?.len(), i.evicted()?))
            })
            .map_err(refused)?;
        let me = self.link.identity().session_id.clone();
        let others = match self.sessions().await {
            Ok(list) => json!(list.iter().filter(|s| s["id"] != me.as_str()).count()),
            Err(_) => Value::Null,
        };
        Ok(json!({
            "connected": self.link.is_connected(),
            "session_id": me,
            "name": self.link.identity().name,
            "live_sessions": others,
            "unread": unread,
            "open_asks": asks,
            "unconfirmed_sends": unsent,
            "evicted_unread": evicted,
        }))
    }

    async fn list(&self, args: Option<&Map<String, Value>>) -> Outcome {
        let args = Args::new("intercom_list", args, &["scope", "include_self"]).map_err(refused)?;
        let scope = args
            .choice("scope", &["machine", "directory", "repo"])
            .map_err(refused)?;
        let include_self = args.flag("include_self", false).map_err(refused)?;
        let me = self.link.identity().clone();
        let sessions = self.sessions().await.map_err(refused)?;
        let repo_of = |cwd: &str| git_toplevel(cwd);
        let my_repo = if scope == "repo" {
            repo_of(&me.cwd)
        } else {
            None
        };
        let mut out = Vec::new();
        for s in sessions {
            let is_self = s["id"] == me.session_id.as_str();
            if is_self && !include_self {
                continue;
            }
            let cwd = s["cwd"].as_str().unwrap_or_default();
            let keep = match scope {
                "directory" => cwd == me.cwd,
                "repo" => my_repo.is_some() && repo_of(cwd) == my_repo,
                _ => true,
            };
            if keep {
                let mut view = json!({
                    "id": s["id"], "name": s["name"], "cwd": s["cwd"], "model": s["model"],
                    "status": s["status"], "last_activity": s["lastActivity"],
                });
                if is_self {
                    view["self"] = true.into();
                }
                out.push(view);
            }
        }
        Ok(json!({"scope": scope, "sessions": out}))
    }

    async fn team(&self, args: Option<&Map<String, Value>>) -> Outcome {
        Args::new("intercom_team", args, &[]).map_err(refused)?;
        let raw = self.team.as_deref().unwrap_or_default();
        let manifest = match crate::team::read(raw) {
            Ok(Some(manifest)) => manifest,
            Ok(None) => return Err(("NOT_FOUND".into(), "no team manifest is named".into())),
            Err(failure) => {
                let code = failure
                    .code
                    .clone()
                    .unwrap_or_else(|| "INVALID_ARGUMENT".into());
                return Err((code, failure.detail));
            }
        };
        let live = self.sessions().await.map_err(refused)?;
        let me = &self.link.identity().session_id;
        let member = |id: &str, role: &str| {
            let session = live.iter().find(|s| s["id"] == id);
            json!({
                "session_id": id, "role": role, "live": session.is_some(),
                "name": session.map(|s| s["name"].clone()),
                "status": session.map(|s| s["status"].clone()),
                "you": id == me.as_str(),
            })
        };
        let members: Vec<Value> = manifest
            .members
            .iter()
            .map(|m| member(&m.session_id, m.role.as_str()))
            .collect();
        Ok(json!({
            "run_id": manifest.run_id,
            "lead": member(&manifest.lead_id, "lead"),
            "members": members,
        }))
    }

    async fn set_summary(&self, args: Option<&Map<String, Value>>) -> Outcome {
        let args = Args::new("intercom_set_summary", args, &["summary"]).map_err(refused)?;
        let summary = args.string("summary").map_err(refused)?;
        if summary.chars().count() > tools::MAX_SUMMARY_CHARS {
            return Err(refused(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "intercom_set_summary: summary is at most {} characters",
                    tools::MAX_SUMMARY_CHARS
                ),
            )));
        }
        self.link.set_summary(summary).await.map_err(refused)?;
        Ok(json!({"summary": summary}))
    }

    /// The delivery options of a call (`queue`, `receipts`): refused, naming them, when the
    /// broker does not speak the extensions.
    fn delivery(&self, args: &Args<'_>) -> Result<Delivery, (String, String)> {
        let options = Delivery {
            queue: args.flag("queue", false).map_err(refused)?,
            receipts: args.flag("receipts", false).map_err(refused)?,
        };
        if options != Delivery::default() && !self.link.has_extensions() {
            return Err(refused(Error::new(
                ErrorCode::InvalidArgument,
                "queue and receipts need a broker with the offline queue and read receipts \
                 (agent-intercom's); this one does not list them",
            )));
        }
        Ok(options)
    }

    /// Sends and reports how it settled.
    async fn deliver(
        &self,
        to: &str,
        message: Value,
        options: Delivery,
        reply: Option<oneshot::Sender<Stored>>,
    ) -> Result<Value, (String, String)> {
        let id = message["id"].clone();
        match self
            .link
            .send(to, message, options, SETTLE_WAIT, reply)
            .await
        {
            Ok(Settled::Delivered) => Ok(json!({"delivered": true, "message_id": id})),
            Ok(Settled::Queued) => {
                Ok(json!({"delivered": false, "queued": true, "message_id": id}))
            }
            Ok(Settled::Failed(code, reason)) => Err((code, reason)),
            Err(e) => Err(refused(e)),
        }
    }

    async fn send(&self, args: Option<&Map<String, Value>>) -> Outcome {
        let keys = ["to", "message", "attachments", "queue", "receipts"];
        let args = Args::new("intercom_send", args, &keys).map_err(refused)?;
        let to = args.string("to").map_err(refused)?;
        let content = args.content("message").map_err(refused)?;
        let options = self.delivery(&args)?;
        self.deliver(to, new_message(content), options, None).await
    }

    async fn ask(&self, args: Option<&Map<String, Value>>, cx: &Context) -> Outcome {
        let keys = [
            "to",
            "message",
            "attachments",
            "timeout_ms",
            "queue",
            "receipts",
        ];
        let args = Args::new("intercom_ask", args, &keys).map_err(refused)?;
        let options = self.delivery(&args)?;
        let to = args.string("to").map_err(refused)?;
        let content = args.content("message").map_err(refused)?;
        let timeout = args
            .integer(
                "timeout_ms",
                1,
                tools::MAX_ASK_TIMEOUT_MS,
                tools::DEFAULT_ASK_TIMEOUT_MS,
            )
            .map_err(refused)?;
        let mut message = new_message(content);
        message["expectsReply"] = true.into();
        let id = message["id"].as_str().unwrap_or_default().to_string();
        let started = Instant::now();
        let (tx, mut rx) = oneshot::channel();
        self.deliver(to, message, options, Some(tx)).await?;
        let deadline = started + Duration::from_millis(timeout);
        let mut progress = tokio::time::interval(PROGRESS_EVERY);
        progress.tick().await;
        loop {
            tokio::select! {
                reply = &mut rx => {
                    let Ok(stored) = reply else {
                        return Err(refused(Error::new(
                            ErrorCode::NotConnected,
                            "the ask's reply could not be awaited",
                        )));
                    };
                    self.link.inbox(|i| i.mark_read(&[stored.seq], now_ms())).map_err(refused)?;
                    return Ok(json!({"ask_id": id, "reply": inbox::view(&stored)}));
                }
                () = tokio::time::sleep_until(deadline.into()) => {
                    self.link.forget_reply(&id);
                    let _ = self.link.request(
                        json!({"type": "defer_ask", "messageId": id}),
                        Duration::from_secs(5),
                    ).await;
                    return Err((ErrorCode::AskTimeout.as_str().into(), format!(
                        "no reply from {to} within {timeout} ms; the ask stays open and its \
                         reply will appear in intercom_pending (ask id {id})"
                    )));
                }
                () = cx.cancelled() => {
                    self.link.forget_reply(&id);
                    let _ = self.link.request(
                        json!({"type": "cancel_ask", "messageId": id}),
                        Duration::from_secs(5),
                    ).await;
                    return Err((ErrorCode::Cancelled.as_str().into(),
                        format!("the ask was cancelled; {to} was told (ask id {id})")));
                }
                _ = progress.tick() => {
                    cx.progress(started, timeout, to).await;
                }
            }
        }
    }

    async fn delivery_status(&self, args: Option<&Map<String, Value>>) -> Outcome {
        let args = Args::new("intercom_delivery_status", args, &["message_id"]).map_err(refused)?;
        let id = args.string("message_id").map_err(refused)?;
        if !self.link.has_extensions() {
            return Err(refused(Error::new(
                ErrorCode::InvalidArgument,
                "delivery status needs a broker that keeps it (agent-intercom's); this one \
                 does not list it",
            )));
        }
        let answer = self
            .link
            .request(
                json!({"type": "delivery_status", "messageId": id}),
                Duration::from_secs(10),
            )
            .await
            .map_err(refused)?;
        Ok(json!({"message_id": id, "state": answer["state"]}))
    }

    async fn pending(&self, args: Option<&Map<String, Value>>) -> Outcome {
        let args = Args::new("intercom_pending", args, &["mark_read"]).map_err(refused)?;
        let mark = args.flag("mark_read", false).map_err(refused)?;
        let (out, shown) = self
            .link
            .inbox(|i| -> Result<(Value, Vec<Stored>), Error> {
                let (unread, open) = i.counts()?;
                let shown = i.unread_page(PAGE)?;
                let asks = i.open_asks_page(PAGE)?;
                if mark {
                    let seqs: Vec<i64> = shown.iter().map(|s| s.seq).collect();
                    i.mark_read(&seqs, now_ms())?;
                }
                let evicted = if mark {
                    i.take_evicted()?
                } else {
                    i.evicted()?
                };
                let out = json!({
                    "messages": shown.iter().map(inbox::view).collect::<Vec<_>>(),
                    "more_unread": unread.saturating_sub(shown.len() as u64),
                    "open_asks": asks.iter().map(inbox::view).collect::<Vec<_>>(),
                    "more_open_asks": open.saturating_sub(asks.len() as u64),
                    "evicted_unread": evicted,
                    "marked_read": mark,
                });
                Ok((out, shown))
            })
            .map_err(refused)?;
        if mark && self.link.has_extensions() {
            // Shown to the model: the broker records it read, and tells a sender that asked.
            for stored in &shown {
                if let Some(delivery_id) = &stored.delivery_id {
                    let frame = json!({"type": "message_read", "deliveryId": delivery_id});
                    let _ = self.link.send_frame(frame).await;
                }
            }
        }
        Ok(out)
    }

    async fn reply(&self, args: Option<&Map<String, Value>>) -> Outcome {
        let keys = ["message", "to", "which", "ask", "attachments"];
        let args = Args::new("intercom_reply", args, &keys).map_err(refused)?;
        let content = args.content("message").map_err(refused)?;
        let to = args.opt_string("to").map_err(refused)?;
        let which = args
            .choice("which", &["oldest", "latest"])
            .map_err(refused)?;
        let ask = args.opt_string("ask").map_err(refused)?;
        let open = self.link.inbox(|i| i.open_asks()).map_err(refused)?;
        let mut matching = open
            .iter()
            .filter(|s| ask.is_none_or(|a| s.message_id() == a))
            .filter(|s| to.is_none_or(|t| names(s, t)));
        let chosen = if which == "latest" {
            matching.next_back()
        } else {
            matching.next()
        };
        let Some(chosen) = chosen.cloned() else {
            let what = match (ask, to) {
                (Some(a), _) => format!("no open ask {a}"),
                (None, Some(t)) => format!("no open ask from {t}"),
                (None, None) => "no open ask".to_string(),
            };
            return Err(refused(Error::new(ErrorCode::NotFound, what)));
        };
        let mut message = new_message(content);
        message["replyTo"] = chosen.message_id().into();
        // To the asker's full id: with the offline queue, a reply waits for an asker that is
        // away instead of failing.
        let options = Delivery {
            queue: self.link.has_extensions(),
            receipts: false,
        };
        let mut out = self
            .deliver(chosen.sender_id(), message, options, None)
            .await?;
        self.link
            .inbox(|i| i.settle_ask(chosen.sender_id(), chosen.message_id(), ASK_ANSWERED, None))
            .map_err(refused)?;
        out["ask_id"] = chosen.message_id().into();
        out["to"] = json!({"id": chosen.from["id"], "name": chosen.from["name"]});
        Ok(out)
    }

    async fn wait(&self, args: Option<&Map<String, Value>>, cx: &Context) -> Outcome {
        let args = Args::new("intercom_wait", args, &["timeout_ms", "from"]).map_err(refused)?;
        let timeout = args
            .integer(
                "timeout_ms",
                1,
                tools::MAX_WAIT_TIMEOUT_MS,
                tools::DEFAULT_WAIT_TIMEOUT_MS,
            )
            .map_err(refused)?;
        let from = args.opt_string("from").map_err(refused)?;
        let mut arrivals = self.link.arrivals();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout);
        loop {
            let unread: Vec<Stored> = self
                .link
                .inbox(|i| match from {
                    None => i.unread_page(PAGE),
                    Some(_) => i.unread(),
                })
                .map_err(refused)?
                .into_iter()
                .filter(|s| from.is_none_or(|f| names(s, f)))
                .take(PAGE)
                .collect();
            if !unread.is_empty() {
                return Ok(json!({
                    "messages": unread.iter().map(inbox::view).collect::<Vec<_>>(),
                    "timed_out": false,
                }));
            }
            tokio::select! {
                changed = arrivals.changed() => {
                    if changed.is_err() {
                        return Err(refused(Error::new(ErrorCode::Internal, "the link stopped")));
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Ok(json!({"messages": [], "timed_out": true}));
                }
                () = cx.cancelled() => {
                    return Err((ErrorCode::Cancelled.as_str().into(), "cancelled".into()));
                }
            }
        }
    }
}

/// The repository `cwd` is in (`git rev-parse --show-toplevel`), if any.
fn git_toplevel(cwd: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["-C", cwd, "rev-parse", "--show-toplevel"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|top| !top.is_empty())
}

/// Whether `selector` names the sender of `stored`: its full id, its name, or a prefix of its id.
fn names(stored: &Stored, selector: &str) -> bool {
    let id = stored.sender_id();
    !selector.is_empty()
        && (id == selector || stored.from["name"] == selector || id.starts_with(selector))
}

/// What a tool call needs of its request: cancellation and progress.
struct Context {
    request: RequestContext<RoleServer>,
}

impl Context {
    async fn cancelled(&self) {
        self.request.ct.cancelled().await;
    }

    async fn progress(&self, started: Instant, timeout_ms: u64, to: &str) {
        let Some(token) = self.request.meta.get_progress_token() else {
            return;
        };
        let elapsed = started.elapsed().as_millis() as f64;
        let param = ProgressNotificationParam::new(token, elapsed)
            .with_total(timeout_ms as f64)
            .with_message(format!("waiting for the reply of {to}"));
        let _ = self.request.peer.notify_progress(param).await;
    }
}

fn tool_list(tools: &[Tool]) -> ListToolsResult {
    serde_json::from_value(json!({"tools": tools})).expect("a list of tools")
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let info: ServerConfig = serde_json::from_value(json!({
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST,
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"subscribe": true, "listChanged": false},
            },
            "serverInfo": Implementation::new("agent-intercom", agent_intercom_core::VERSION),
            "instructions": "The intercom: talk to the other coding sessions on this machine. \
                Use intercom_list to see who is there, intercom_send to tell, intercom_ask to \
                ask and wait, intercom_pending and intercom_reply for what came to you, and \
                intercom_wait to wait for the next message. Every message delivered to this \
                session is kept on disk until read.",
        }))
        .expect("the server's description");
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(tool_list(&self.tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.get_tool(&request.name).is_none() {
            return Err(McpError::invalid_params(
                format!("no tool named {:?}", request.name),
                None,
            ));
        }
        let cx = Context { request: context };
        let outcome = self
            .call(&request.name, request.arguments.as_ref(), &cx)
            .await;
        Ok(result(outcome).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(serde_json::from_value(json!({"resources": [{
            "uri": INBOX_URI,
            "name": "inbox",
            "title": "This session's intercom inbox",
            "description": "Unread messages and open asks; subscribe to be told of arrivals",
            "mimeType": "application/json",
        }]}))
        .expect("the resource list"))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != INBOX_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let view = self
            .link
            .inbox(|i| -> Result<Value, Error> {
                let (unread, asks) = i.counts()?;
                let shown: Vec<Value> = i.unread_page(PAGE)?.iter().map(inbox::view).collect();
                Ok(json!({"unread": unread, "open_asks": asks, "messages": shown}))
            })
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let result: ReadResourceResult = serde_json::from_value(json!({"contents": [{
            "uri": INBOX_URI, "mimeType": "application/json", "text": view.to_string(),
        }]}))
        .expect("a resource read");
        Ok(result.into())
    }

    /// A method of MCP arrives here only when its params did not read as that method's (rmcp
    /// then takes it for a custom method): the answer is -32602 with the reason, not -32601.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let wrong = match request.method.as_str() {
            "tools/call" => request.params_as::<CallToolRequestParams>().err(),
            "resources/read" => request.params_as::<ReadResourceRequestParams>().err(),
            "resources/subscribe" => request.params_as::<SubscribeRequestParams>().err(),
            "resources/unsubscribe" => request.params_as::<UnsubscribeRequestParams>().err(),
            "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
                request.params_as::<PaginatedRequestParams>().err()
            }
            _ => {
                let code = rmcp::model::ErrorCode::METHOD_NOT_FOUND;
                return Err(McpError::new(code, request.method, None));
            }
        };
        let why = wrong.map_or_else(|| "they are missing".to_string(), |e| e.to_string());
        Err(McpError::invalid_params(
            format!(
                "the params of {} do not fit its schema: {why}",
                request.method
            ),
            None,
        ))
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri != INBOX_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        *self.peer.lock().unwrap_or_else(PoisonError::into_inner) = Some(context.peer);
        self.subscribed.store(true, Ordering::SeqCst);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri == INBOX_URI {
            self.subscribed.store(false, Ordering::SeqCst);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_content_is_always_an_object() {
        let list = result(Ok(json!([1, 2])));
        assert_eq!(list.structured_content, Some(json!({"result": [1, 2]})));
        let object = result(Ok(json!({"a": 1})));
        assert_eq!(object.structured_content, Some(json!({"a": 1})));
        let refused = result(Err(("NOT_FOUND".into(), "no".into())));
        assert_eq!(refused.is_error, Some(true));
        assert_eq!(
            refused.structured_content,
            Some(json!({"code": "NOT_FOUND", "message": "no"}))
        );
    }
}
