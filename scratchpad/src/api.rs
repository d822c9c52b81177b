//! One JSON entry point over the store, shared by the CLI (`agent-intercom pad`), the C ABI
//! (`aic_pad_request`) and the Node package (`./scratchpad`): an operation name and a JSON object
//! of arguments in, a JSON value out, failures as stable error codes.

use serde_json::{Map, Value, json};

use crate::{Config, EventFilter, NewMessage, Pricing, RateDecision, RateLimits, Store, Usage};
use agent_intercom_core::{Error, ErrorCode};

/// The operations, for help texts and tests.
pub const OPERATIONS: &[&str] = &[
    "register",
    "post",
    "unread",
    "list",
    "task.create",
    "task.get",
    "task.transition",
    "task.history",
    "task.artifact",
    "task.artifacts",
    "rate.take",
    "cost.record",
    "cost.list",
    "export",
    "events",
];

/// The rule checks, which need no store: the contract's pure rules, for adapters and the
/// vector runners in C and Node.
pub const CHECKS: &[&str] = &[
    "check.visible",
    "check.ttl",
    "check.transition",
    "check.addressing",
    "check.redact",
    "check.rate",
];

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

struct Args<'a>(&'a Map<String, Value>);

impl<'a> Args<'a> {
    fn opt_str(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(bad(format!("{key} must be a string"))),
        }
    }
    fn str(&self, key: &str) -> Result<&'a str, Error> {
        self.opt_str(key)?
            .ok_or_else(|| bad(format!("{key} is required")))
    }
    fn opt_int(&self, key: &str) -> Result<Option<i64>, Error> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            // Whole numbers written as floats (1e3, or what a C JSON printer makes of a large
            // integer) count; beyond the i64 range they saturate, so range checks still refuse
            // them with their own code.
            Some(v) => match (v.as_i64(), v.as_f64()) {
                (Some(i), _) => Ok(Some(i)),
                (None, Some(f)) if f.is_finite() && f.fract() == 0.0 => Ok(Some(f as i64)),
                _ => Err(bad(format!("{key} must be an integer"))),
            },
        }
    }
    fn opt_u32(&self, key: &str) -> Result<Option<u32>, Error> {
        self.opt_int(key)?
            .map(|v| {
                u32::try_from(v).map_err(|_| bad(format!("{key} must be from 0 to {}", u32::MAX)))
            })
            .transpose()
    }
    fn u64_or_zero(&self, key: &str) -> Result<u64, Error> {
        Ok(self
            .opt_int(key)?
            .map(|v| u64::try_from(v).map_err(|_| bad(format!("{key} must not be negative"))))
            .transpose()?
            .unwrap_or(0))
    }
    fn bool(&self, key: &str) -> Result<bool, Error> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(format!("{key} must be a boolean"))),
        }
    }
    fn strings(&self, key: &str) -> Result<Vec<String>, Error> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| bad(format!("{key} must hold strings")))
                })
                .collect(),
            Some(_) => Err(bad(format!("{key} must be an array of strings"))),
        }
    }
    fn limit(&self, default: usize) -> Result<usize, Error> {
        Ok(self
            .opt_int("limit")?
            .map(|l| usize::try_from(l).unwrap_or(0))
            .unwrap_or(default))
    }
}

fn message_json(m: &crate::Message) -> Value {
    json!({
        "id": m.id, "from": m.from, "to": m.to, "category": m.category, "priority": m.priority, "privacy": m.privacy,
        "content": m.content, "metadata": m.metadata.as_deref().and_then(|t| serde_json::from_str::<Value>(t).ok()),
        "task_id": m.task_id, "project_root": m.project_root, "created_at": m.created_at, "expires_at": m.expires_at,
    })
}

fn task_json(t: &crate::Task) -> Value {
    json!({ "id": t.id, "creator": t.creator, "assignee": t.assignee, "title": t.title, "state": t.state,
        "project_root": t.project_root, "created_at": t.created_at, "updated_at": t.updated_at })
}

fn object<'a>(
    args: &'a Value,
    empty: &'a Map<String, Value>,
) -> Result<&'a Map<String, Value>, Error> {
    match args {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(empty),
        _ => Err(bad("arguments must be a JSON object")),
    }
}

fn sub<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Args<'a>, Error> {
    match map.get(key) {
        Some(Value::Object(m)) => Ok(Args(m)),
        _ => Err(bad(format!("{key} must be an object"))),
    }
}

/// Evaluates one rule check (see [`CHECKS`]); no store is involved.
pub fn check(op: &str, args: &Value) -> Result<Value, Error> {
    use agent_intercom_core::scratchpad::{
        self as rules, MessageView, Privacy, ReaderView, TaskState,
    };
    let empty = Map::new();
    let map = object(args, &empty)?;
    let a = Args(map);
    Ok(match op {
        "check.visible" => {
            let (m, r) = (sub(map, "message")?, sub(map, "reader")?);
            let message = MessageView {
                from: m.str("from")?,
                to: m.opt_str("to")?,
                privacy: Privacy::parse(m.str("privacy")?, "privacy")?,
                sender_team: m.opt_str("sender_team")?,
                project_root: m.opt_str("project_root")?,
                expires_at: m
                    .opt_int("expires_at")?
                    .ok_or_else(|| bad("expires_at is required"))?,
            };
            let reader = ReaderView {
                agent: r.str("agent")?,
                team: r.opt_str("team")?,
                project_root: r.opt_str("project_root")?,
            };
            let now = a.opt_int("now")?.ok_or_else(|| bad("now is required"))?;
            json!({ "visible": rules::visible(&message, &reader, now) })
        }
        "check.ttl" => json!({ "hours": rules::ttl_hours(a.opt_int("ttl_hours")?)? }),
        "check.transition" => {
            rules::check_transition(
                TaskState::parse(a.str("from")?, "from")?,
                TaskState::parse(a.str("to")?, "to")?,
            )?;
            json!({ "ok": true })
        }
        "check.addressing" => {
            rules::check_addressing(
                Privacy::parse(a.str("privacy")?, "privacy")?,
                a.opt_str("to")?,
            )?;
            json!({ "ok": true })
        }
        "check.rate" => {
            // One bucket, full at the first take: each take at its time is allowed (and consumes a
            // token) or refused with the wait, rounded up, and consumes nothing.
            let per_minute = a
                .opt_u32("per_minute")?
                .filter(|&n| n >= 1)
                .ok_or_else(|| bad("per_minute is required, at least 1"))?;
            let takes = match map.get("takes") {
                Some(Value::Array(t)) => t,
                _ => return Err(bad("takes must be an array of times in milliseconds")),
            };
            let times = takes
                .iter()
                .map(|t| t.as_i64().ok_or_else(|| bad("takes must hold integers")))
                .collect::<Result<Vec<_>, _>>()?;
            let out: Vec<Value> = rules::simulate_takes(per_minute, &times)
                .into_iter()
                .map(|r| match r {
                    Ok(()) => json!({ "allowed": true }),
                    Err(wait) => json!({ "allowed": false, "retry_after_ms": wait }),
                })
                .collect();
            Value::Array(out)
        }
        "check.redact" => {
            json!({ "text": rules::redact(a.str("text")?, a.opt_str("project_root")?) })
        }
        other => {
            return Err(bad(format!(
                "unknown check {other:?}; checks: {}",
                CHECKS.join(", ")
            )));
        }
    })
}

/// Whether `op` is a rule check (see [`CHECKS`]), which needs no store.
pub fn is_check(op: &str) -> bool {
    op.starts_with("check.")
}

/// Arguments or options as JSON text: absent or blank is none (`null`); anything else must be
/// JSON (`INVALID_JSON`, naming `what`). Every surface reads its text through this.
pub fn parse(text: Option<&str>, what: &str) -> Result<Value, Error> {
    match text {
        None => Ok(Value::Null),
        Some(t) if t.trim().is_empty() => Ok(Value::Null),
        Some(t) => serde_json::from_str(t).map_err(|e| {
            Error::new(
                ErrorCode::InvalidJson,
                format!("{what} is not valid JSON: {e}"),
            )
        }),
    }
}

/// One request from any surface: a rule check runs without a store; a store operation needs
/// `store`, and fails with `no_store()` without one.
pub fn request(
    store: Option<&mut Store>,
    op: &str,
    args: &Value,
    env: &dyn Fn(&str) -> Option<String>,
    no_store: impl FnOnce() -> Error,
) -> Result<Value, Error> {
    if is_check(op) {
        return check(op, args);
    }
    handle(store.ok_or_else(no_store)?, op, args, env)
}

/// Handles one request. `env` supplies rate limits that `rate.take` does not name
/// (`LEAN_CTX_RATE_LIMIT_*_PER_MIN` / `LCTX_...`).
pub fn handle(
    store: &mut Store,
    op: &str,
    args: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, Error> {
    if is_check(op) {
        return check(op, args);
    }
    let empty = Map::new();
    let map = object(args, &empty)?;
    let a = Args(map);
    Ok(match op {
        "register" => {
            store.register_agent(a.str("agent")?, a.opt_str("project_root")?, a.opt_str("team")?)?;
            json!({ "ok": true })
        }
        "post" => {
            let metadata = match map.get("metadata") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.to_string()),
            };
            let posted = store.post(&NewMessage {
                from: a.str("from")?.to_string(),
                to: a.opt_str("to")?.map(str::to_string),
                category: a.opt_str("category")?.unwrap_or("note").to_string(),
                priority: a.opt_str("priority")?.map(str::to_string),
                privacy: a.opt_str("privacy")?.map(str::to_string),
                content: a.str("content")?.to_string(),
                metadata,
                task_id: a.opt_str("task_id")?.map(str::to_string),
                project_root: a.opt_str("project_root")?.map(str::to_string),
                ttl_hours: a.opt_int("ttl_hours")?,
            })?;
            json!({ "id": posted.id, "expires_at": posted.expires_at, "evicted": posted.evicted })
        }
        "unread" => Value::Array(store.read_unread(a.str("agent")?, a.opt_str("project_root")?)?.iter().map(message_json).collect()),
        "list" => {
            let page = store.list(a.str("agent")?, a.opt_str("project_root")?, a.opt_str("category")?, a.opt_str("from")?, a.limit(50)?, a.opt_str("after")?)?;
            json!({ "messages": page.messages.iter().map(message_json).collect::<Vec<_>>(), "next": page.next })
        }
        "task.create" => task_json(&store.create_task(a.str("creator")?, a.opt_str("assignee")?, a.str("title")?, a.opt_str("project_root")?)?),
        "task.get" => task_json(&store.task(a.str("id")?)?),
        "task.transition" => task_json(&store.transition_task(a.str("id")?, a.str("by")?, a.str("to")?, a.opt_str("reason")?)?),
        "task.history" => Value::Array(
            store
                .task_history(a.str("id")?)?
                .iter()
                .map(|t| json!({ "from": t.from, "to": t.to, "by": t.by, "reason": t.reason, "at": t.at }))
                .collect(),
        ),
        "task.artifact" => {
            store.add_artifact(a.str("id")?, a.str("by")?, a.str("name")?, a.str("content")?)?;
            json!({ "ok": true })
        }
        "task.artifacts" => Value::Array(
            store.artifacts(a.str("id")?)?.iter().map(|x| json!({ "by": x.by, "name": x.name, "content": x.content, "at": x.at })).collect(),
        ),
        "rate.take" => {
            let from_env = RateLimits::from_env(env)?;
            let limits = RateLimits {
                global_per_min: a.opt_u32("global_per_min")?.or(from_env.global_per_min),
                agent_per_min: a.opt_u32("agent_per_min")?.or(from_env.agent_per_min),
                tool_per_min: a.opt_u32("tool_per_min")?.or(from_env.tool_per_min),
            };
            match store.take_rate(a.str("agent")?, a.str("tool")?, &limits)? {
                RateDecision::Allowed => json!({ "allowed": true }),
                RateDecision::Refused { retry_after_ms, levels } => json!({ "allowed": false, "retry_after_ms": retry_after_ms, "levels": levels }),
            }
        }
        "cost.record" => {
            let pricing_map = match map.get("pricing") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(p)) => p.clone(),
                Some(_) => return Err(bad("pricing must be an object")),
            };
            let p = Args(&pricing_map);
            let pricing = Pricing {
                input_per_million_micros: p.u64_or_zero("input_per_million_micros")?,
                output_per_million_micros: p.u64_or_zero("output_per_million_micros")?,
                cached_per_million_micros: p.u64_or_zero("cached_per_million_micros")?,
            };
            let usage = Usage { input_tokens: a.u64_or_zero("input_tokens")?, output_tokens: a.u64_or_zero("output_tokens")?, cached_tokens: a.u64_or_zero("cached_tokens")? };
            store.record_cost(a.str("agent")?, a.str("tool")?, &usage, &pricing)?;
            json!({ "cost_micros": pricing.cost_micros(&usage) })
        }
        "cost.list" => Value::Array(
            store
                .costs()?
                .iter()
                .map(|c| {
                    json!({ "agent": c.agent, "tool": c.tool, "input_tokens": c.usage.input_tokens, "output_tokens": c.usage.output_tokens,
                        "cached_tokens": c.usage.cached_tokens, "calls": c.calls, "cost_micros": c.cost_micros })
                })
                .collect(),
        ),
        "export" => {
            let (agent, root, limit, full) = (a.str("agent")?, a.opt_str("project_root")?, a.limit(200)?, a.bool("full")?);
            match a.opt_str("path")? {
                Some(path) => {
                    store.export_to_file(std::path::Path::new(path), agent, root, limit, full)?;
                    json!({ "written": path })
                }
                None => serde_json::from_str(&store.export(agent, root, limit, full)?).map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?,
            }
        }
        "events" => {
            let filter = EventFilter { kinds: a.strings("kinds")?, actors: a.strings("actors")?, targets: a.strings("targets")? };
            let (events, cursor) = store.poll_events(a.str("agent")?, a.opt_str("project_root")?, a.opt_int("after")?.unwrap_or(0), &filter, a.limit(100)?)?;
            json!({
                "events": events.iter().map(|e| json!({ "seq": e.seq, "kind": e.kind, "actor": e.actor, "target": e.target, "ref_id": e.ref_id, "at": e.at })).collect::<Vec<_>>(),
                "cursor": cursor,
            })
        }
        other => return Err(bad(format!("unknown operation {other:?}; operations: {}", OPERATIONS.join(", ")))),
    })
}

/// The keys of [`config`]'s object (the fields of [`Config`]).
pub const OPTION_KEYS: &[&str] = &[
    "per_project_cap",
    "per_recipient_cap",
    "max_content_bytes",
    "allow_full_export",
];

/// Store limits from a JSON object (`per_project_cap`, `per_recipient_cap`, `max_content_bytes`,
/// `allow_full_export`); absent keys keep the defaults, unknown keys are refused.
pub fn config(options: &Value) -> Result<Config, Error> {
    let empty = Map::new();
    let map = object(options, &empty)?;
    let a = Args(map);
    let mut config = Config::default();
    for key in map.keys() {
        if !OPTION_KEYS.contains(&key.as_str()) {
            return Err(bad(format!(
                "unknown store option {key:?}; options: {}",
                OPTION_KEYS.join(", ")
            )));
        }
    }
    let size = |key: &str, default: usize| -> Result<usize, Error> {
        match a.opt_int(key)? {
            None => Ok(default),
            Some(v) if v >= 1 => usize::try_from(v).map_err(|_| bad(format!("{key} is too large"))),
            Some(_) => Err(bad(format!("{key} must be at least 1"))),
        }
    };
    config.per_project_cap = size("per_project_cap", config.per_project_cap)?;
    config.per_recipient_cap = size("per_recipient_cap", config.per_recipient_cap)?;
    config.max_content_bytes = size("max_content_bytes", config.max_content_bytes)?;
    config.allow_full_export = a.bool("allow_full_export")?;
    Ok(config)
}
