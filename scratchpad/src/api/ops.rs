//! The store operations, one function each: read the arguments (in the order their refusals are
//! reported), call the [`Store`], answer in JSON.

use agent_intercom_core::{Error, ErrorCode};
use serde_json::{Value, json};

use super::args::Args;
use crate::{
    CostRow, EventFilter, Message, NewMessage, Pricing, RateDecision, RateLimits, Store, Task,
    Usage,
};

fn ok() -> Value {
    json!({ "ok": true })
}

fn message_json(m: &Message) -> Value {
    json!({
        "id": m.id, "from": m.from, "to": m.to, "category": m.category,
        "priority": m.priority, "privacy": m.privacy, "content": m.content,
        "metadata": m.metadata.as_deref().and_then(|t| serde_json::from_str::<Value>(t).ok()),
        "task_id": m.task_id, "project_root": m.project_root,
        "created_at": m.created_at, "expires_at": m.expires_at,
    })
}

fn task_json(t: &Task) -> Value {
    json!({
        "id": t.id, "creator": t.creator, "assignee": t.assignee, "title": t.title,
        "state": t.state, "project_root": t.project_root,
        "created_at": t.created_at, "updated_at": t.updated_at,
    })
}

fn cost_json(c: &CostRow) -> Value {
    json!({
        "agent": c.agent, "tool": c.tool, "input_tokens": c.usage.input_tokens,
        "output_tokens": c.usage.output_tokens, "cached_tokens": c.usage.cached_tokens,
        "calls": c.calls, "cost_micros": c.cost_micros,
    })
}

pub(super) fn register(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    store.register_agent(
        a.name("agent")?,
        a.opt_name("project_root")?,
        a.opt_name("team")?,
    )?;
    Ok(ok())
}

pub(super) fn post(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let metadata = a.value("metadata").map(Value::to_string);
    let posted = store.post(&NewMessage {
        from: a.name("from")?.to_string(),
        to: a.opt_str("to")?.map(str::to_string),
        category: a.opt_str("category")?.unwrap_or("note").to_string(),
        priority: a.opt_str("priority")?.map(str::to_string),
        privacy: a.opt_str("privacy")?.map(str::to_string),
        content: a.str("content")?.to_string(),
        metadata,
        task_id: a.opt_name("task_id")?.map(str::to_string),
        project_root: a.opt_name("project_root")?.map(str::to_string),
        ttl_hours: Some(a.ttl_hours("ttl_hours")?.into()),
    })?;
    Ok(json!({ "id": posted.id, "expires_at": posted.expires_at, "evicted": posted.evicted }))
}

pub(super) fn unread(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let messages = store.read_unread(a.name("agent")?, a.opt_name("project_root")?)?;
    Ok(Value::Array(messages.iter().map(message_json).collect()))
}

pub(super) fn list(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let page = store.list(
        a.name("agent")?,
        a.opt_name("project_root")?,
        a.opt_str("category")?,
        a.opt_name("from")?,
        a.limit(50)?,
        a.opt_str("after")?,
    )?;
    let messages: Vec<Value> = page.messages.iter().map(message_json).collect();
    Ok(json!({ "messages": messages, "next": page.next }))
}

pub(super) fn task_create(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let task = store.create_task(
        a.name("creator")?,
        a.opt_name("assignee")?,
        a.str("title")?,
        a.opt_name("project_root")?,
    )?;
    Ok(task_json(&task))
}

pub(super) fn task_get(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    Ok(task_json(&store.task(a.str("id")?, a.name("agent")?)?))
}

pub(super) fn task_transition(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let task = store.transition_task(
        a.str("id")?,
        a.name("by")?,
        a.str("to")?,
        a.opt_str("reason")?,
    )?;
    Ok(task_json(&task))
}

pub(super) fn task_history(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let history = store.task_history(a.str("id")?, a.name("agent")?)?;
    Ok(Value::Array(
        history
            .iter()
            .map(|t| {
                json!({ "from": t.from, "to": t.to, "by": t.by, "reason": t.reason, "at": t.at })
            })
            .collect(),
    ))
}

pub(super) fn task_artifact(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    store.add_artifact(
        a.str("id")?,
        a.name("by")?,
        a.str("name")?,
        a.str("content")?,
    )?;
    Ok(ok())
}

pub(super) fn task_artifacts(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let artifacts = store.artifacts(a.str("id")?, a.name("agent")?)?;
    Ok(Value::Array(
        artifacts
            .iter()
            .map(|x| json!({ "by": x.by, "name": x.name, "content": x.content, "at": x.at }))
            .collect(),
    ))
}

/// `env` supplies the limits the request does not name.
pub(super) fn rate_take(
    store: &mut Store,
    a: &Args<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, Error> {
    let from_env = RateLimits::from_env(env)?;
    let limits = RateLimits {
        global_per_min: a.opt_u32("global_per_min")?.or(from_env.global_per_min),
        agent_per_min: a.opt_u32("agent_per_min")?.or(from_env.agent_per_min),
        tool_per_min: a.opt_u32("tool_per_min")?.or(from_env.tool_per_min),
    };
    Ok(
        match store.take_rate(a.name("agent")?, a.name("tool")?, &limits)? {
            RateDecision::Allowed => json!({ "allowed": true }),
            RateDecision::Refused {
                retry_after_ms,
                levels,
            } => json!({ "allowed": false, "retry_after_ms": retry_after_ms, "levels": levels }),
        },
    )
}

pub(super) fn cost_record(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let p = a.object("pricing", false)?;
    let pricing = Pricing {
        input_per_million_micros: p.u64_or_zero("input_per_million_micros")?,
        output_per_million_micros: p.u64_or_zero("output_per_million_micros")?,
        cached_per_million_micros: p.u64_or_zero("cached_per_million_micros")?,
    };
    let usage = Usage {
        input_tokens: a.u64_or_zero("input_tokens")?,
        output_tokens: a.u64_or_zero("output_tokens")?,
        cached_tokens: a.u64_or_zero("cached_tokens")?,
    };
    let cost = store.record_cost(a.name("agent")?, a.name("tool")?, &usage, &pricing)?;
    Ok(json!({ "cost_micros": cost }))
}

pub(super) fn cost_list(store: &mut Store, _: &Args<'_>) -> Result<Value, Error> {
    Ok(Value::Array(store.costs()?.iter().map(cost_json).collect()))
}

pub(super) fn export(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let (agent, root, limit, full) = (
        a.name("agent")?,
        a.opt_name("project_root")?,
        a.limit(200)?,
        a.bool("full")?,
    );
    match a.opt_str("path")? {
        Some(path) => {
            store.export_to_file(std::path::Path::new(path), agent, root, limit, full)?;
            Ok(json!({ "written": path }))
        }
        None => serde_json::from_str(&store.export(agent, root, limit, full)?)
            .map_err(|e| Error::new(ErrorCode::Internal, e.to_string())),
    }
}

pub(super) fn events(store: &mut Store, a: &Args<'_>) -> Result<Value, Error> {
    let filter = EventFilter {
        kinds: a.strings("kinds")?,
        actors: a.strings("actors")?,
        targets: a.strings("targets")?,
    };
    let (events, cursor) = store.poll_events(
        a.name("agent")?,
        a.opt_name("project_root")?,
        a.opt_int("after")?.unwrap_or(0),
        &filter,
        a.limit(100)?,
    )?;
    let events: Vec<Value> = events
        .iter()
        .map(|e| {
            json!({
                "seq": e.seq, "kind": e.kind, "actor": e.actor, "target": e.target,
                "ref_id": e.ref_id, "at": e.at,
            })
        })
        .collect();
    Ok(json!({ "events": events, "cursor": cursor }))
}
