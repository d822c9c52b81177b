//! The rule checks (`check.*`): the contract's pure rules, evaluated without a store.

use agent_intercom_core::scratchpad::{
    self as rules, MessageView, Privacy, ReaderView, TaskState, TaskView,
};
use agent_intercom_core::{Error, ErrorCode};
use serde_json::{Value, json};

use super::args::{Args, bad};
use super::table::{CHECKS, is_check, request_of};

/// Evaluates one rule check (see [`CHECKS`]); no store is involved.
pub fn check(op: &str, args: &Value) -> Result<Value, Error> {
    let request = request_of(op).filter(|r| is_check(r.name)).ok_or_else(|| {
        bad(format!(
            "unknown check {op:?}; checks: {}",
            CHECKS.join(", ")
        ))
    })?;
    let a = Args::of(request, args)?;
    match op {
        "check.visible" => visible(&a),
        "check.ttl" => Ok(json!({ "hours": a.ttl_hours("ttl_hours")? })),
        "check.transition" => transition(&a),
        "check.addressing" => addressing(&a),
        "check.rate" => rate(&a),
        "check.task_read" => task_read(&a),
        "check.redact" => redact(&a),
        // A test runs every declared request; this is for a table row added without a handler.
        other => Err(Error::new(
            ErrorCode::Internal,
            format!("{other} is declared in CHECK_TABLE but has no handler"),
        )),
    }
}

fn visible(a: &Args<'_>) -> Result<Value, Error> {
    let (m, r) = (a.object("message", true)?, a.object("reader", true)?);
    let message = MessageView {
        from: m.str("from")?,
        to: m.opt_str("to")?,
        privacy: Privacy::parse(m.str("privacy")?, "privacy")?,
        sender_team: m.opt_str("sender_team")?,
        project_root: m.opt_str("project_root")?,
        expires_at: m.int("expires_at")?,
    };
    let reader = ReaderView {
        agent: r.str("agent")?,
        team: r.opt_str("team")?,
        project_root: r.opt_str("project_root")?,
    };
    Ok(json!({ "visible": rules::visible(&message, &reader, a.int("now")?) }))
}

fn transition(a: &Args<'_>) -> Result<Value, Error> {
    rules::check_transition(
        TaskState::parse(a.str("from")?, "from")?,
        TaskState::parse(a.str("to")?, "to")?,
    )?;
    Ok(json!({ "ok": true }))
}

fn addressing(a: &Args<'_>) -> Result<Value, Error> {
    rules::check_addressing(
        Privacy::parse(a.str("privacy")?, "privacy")?,
        a.opt_str("to")?,
    )?;
    Ok(json!({ "ok": true }))
}

/// One bucket, full at the first take: each take at its time is allowed (and consumes a token)
/// or refused with the wait, rounded up, and consumes nothing.
fn rate(a: &Args<'_>) -> Result<Value, Error> {
    let per_minute = a
        .opt_u32("per_minute")?
        .filter(|&n| n >= 1)
        .ok_or_else(|| bad("per_minute is required, at least 1"))?;
    let times = a
        .array("takes")?
        .ok_or_else(|| bad("takes must be an array of times in milliseconds"))?
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
    Ok(Value::Array(out))
}

fn task_read(a: &Args<'_>) -> Result<Value, Error> {
    let t = a.object("task", true)?;
    let task = TaskView {
        creator: t.str("creator")?,
        assignee: t.opt_str("assignee")?,
    };
    rules::check_task_read(&task, a.str("agent")?)?;
    Ok(json!({ "ok": true }))
}

fn redact(a: &Args<'_>) -> Result<Value, Error> {
    Ok(json!({ "text": rules::redact(a.str("text")?, a.opt_str("project_root")?) }))
}
