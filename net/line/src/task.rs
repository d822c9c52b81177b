//! The session's task operations (docs/line.md, "Tasks"): `declare-public`, `submit`, `poll`,
//! `cancel` and `read`.
//!
//! - A declaration lives in this process's memory only, bound to this startup, used once, and
//!   expires after `declaration_seconds`. It fixes the exact request body (and so the charge).
//! - `submit` commits the task's intent (the immutable request) before its claim (the charge,
//!   [`crate::ledger::charge`]), and the claim before the one `SendMessage`. Each commit that may
//!   or may not have happened answers exactly `{"error":"unknown","task_id":...}`.
//! - `poll` and `cancel` repeat the task's selectors exactly, are authorized now, and are each one
//!   charged exchange (`GetTask`, `CancelTask`); without a foreign task id nothing is sent.
//! - `cancel` closes local adoption durably before it charges or sends anything.
//! - `read` is local: never charged, never sent, repeatable.
//!
//! Authority is evaluated at execution time, every time: the action and selectors against the
//! live policy, the generation inside each transaction that commits, the enrollment's gate
//! ([`authority::target_gate`]).

use std::collections::{HashMap, HashSet};

use agent_intercom_core::canonical::Value;
use rusqlite::Connection;
use sha2::{Digest as _, Sha256};

use crate::authority::{self, Fences, check_members, string};
use crate::custody::tasks::{self, NewTask, TaskRow};
use crate::custody::{self, ledger};
use crate::exchange::{self, Physical};
use crate::fault::Faults;
use crate::policy::{Action, Selectors};
use crate::schema::io;
use crate::secrets::hex;
use crate::startup::{Started, check_live};
use crate::transitions::{self, is_terminal};
use crate::{Code, LineError, NETWORK_ALLOWANCE};

/// The fault point of `submit`'s intent commit.
pub const INTENT_POINT: &str = "intent-commit";
/// The fault point of `cancel`'s adoption-closing commit.
pub const CANCEL_CLOSE_POINT: &str = "cancel-close";
/// The fault point just after that commit, before any charge or send.
pub const AFTER_CANCEL_CLOSE_POINT: &str = "after-cancel-close";

/// Room left in the allowance for the request line, fields and the whole response head.
const HEAD_ROOM: u64 = 16 * 1024;

/// A live declaration.
#[derive(Clone, Debug)]
struct Declaration {
    selectors: Selectors,
    endpoint: String,
    text_sha256: String,
    message_id: String,
    body: Vec<u8>,
    declared_at_ms: i64,
    expires_at_ms: i64,
    used: bool,
}

/// The session's memory: declarations of this startup, and tasks whose last commit is
/// uncertain. Nothing of it survives the process.
#[derive(Debug, Default)]
pub struct Memory {
    declarations: HashMap<String, Declaration>,
    uncertain: HashSet<String>,
}

impl Memory {
    /// The declaration `id`, if this startup made it, it is unused and it is live at `now`.
    fn live_declaration(&self, id: &str, now: i64) -> Result<Declaration, LineError> {
        let Some(declaration) = self.declarations.get(id).cloned() else {
            return Err(LineError::new(
                Code::DeclarationUnknown,
                "no declaration of this startup has this id",
            ));
        };
        if declaration.used {
            return Err(LineError::new(
                Code::DeclarationUsed,
                "this declaration was used by an earlier submit",
            ));
        }
        if now >= declaration.expires_at_ms {
            return Err(LineError::new(
                Code::DeclarationExpired,
                "this declaration outlived declaration_seconds",
            ));
        }
        Ok(declaration)
    }

    /// `result`, remembering `task_id` as uncertain when it is `unknown`.
    fn remember<T>(&mut self, task_id: &str, result: Result<T, LineError>) -> Result<T, LineError> {
        if let Err(e) = &result
            && e.code == Code::Unknown
        {
            self.uncertain.insert(task_id.to_string());
        }
        result
    }
}

fn source_refused(why: &str) -> LineError {
    LineError::new(Code::SourceRefused, why.to_string()).with("field", "source")
}

/// `source` must be exactly `{"text": non-empty string, "public_assertion": true}`.
pub(crate) fn public_text<'v>(value: &'v Value<'_>) -> Result<&'v str, LineError> {
    let Some(Value::Object(pairs)) = value.get("source") else {
        return Err(source_refused(
            "source must be an object {text, public_assertion: true}",
        ));
    };
    if pairs.len() != 2 {
        return Err(source_refused(
            "source has exactly two members: text and public_assertion",
        ));
    }
    let source = value.get("source").unwrap_or(&Value::Null);
    let text = source
        .get("text")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| source_refused("source.text must be a non-empty string"))?;
    match source.get("public_assertion") {
        Some(Value::Bool(true)) => Ok(text),
        _ => Err(source_refused(
            "source.public_assertion must be JSON true: the operator asserts the text is public",
        )),
    }
}

/// The exact `SendMessage` body of a declaration (A2A 1.0, `returnImmediately`).
pub(crate) fn send_message_body(message_id: &str, text: &str) -> Vec<u8> {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": message_id,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": message_id,
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            },
            "configuration": {"returnImmediately": true},
        },
    })
    .to_string()
    .into_bytes()
}

/// The least application bytes any of the four scopes of `s` has left.
fn remaining_app_bytes(
    conn: &Connection,
    started: &Started,
    s: &Selectors,
) -> Result<i64, LineError> {
    let keys = [
        ("host", started.installation_id.clone()),
        ("purpose", s.purpose.clone()),
        ("peer", s.peer_id.clone()),
        (
            "task",
            crate::policy::task_scope_key(&s.peer_id, &s.task_schema),
        ),
    ];
    let mut least = i64::MAX;
    for (kind, key) in keys {
        least = least.min(ledger::app_bytes_left(conn, kind, &key)?.unwrap_or(0));
    }
    Ok(least)
}

/// `too_large` for a request body that would not fit one exchange's allowance (with room for
/// the head) or the application bytes any of its scopes has left.
pub(crate) fn check_size(
    conn: &Connection,
    started: &Started,
    s: &Selectors,
    bytes: u64,
) -> Result<(), LineError> {
    if bytes + HEAD_ROOM > NETWORK_ALLOWANCE {
        return Err(LineError::new(
            Code::TooLarge,
            "the request would not fit one exchange's 512 KiB network allowance",
        )
        .with("application_bytes", bytes));
    }
    if (bytes as i64) > remaining_app_bytes(conn, started, s)? {
        return Err(LineError::new(
            Code::TooLarge,
            "the request is larger than the application bytes a scope has left",
        )
        .with("application_bytes", bytes));
    }
    Ok(())
}

/// `declare-public`: the operator asserts `source.text` is authored public text for this exact
/// target. No contact, no charge, nothing durable.
pub fn declare(
    started: &mut Started,
    fences: &Fences,
    memory: &mut Memory,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    check_members(
        value,
        &["peer_id", "purpose", "task_schema", "endpoint", "source"],
        &["category"],
    )?;
    let s = authority::selectors(value)?;
    let endpoint = string(value, "endpoint")?.to_string();
    let text = public_text(value)?;
    let policy = &started.config.policy;
    policy.authorize(Action::ClassifyPublic, &s.target(&endpoint))?;
    check_live(&started.conn, policy.generation)?;
    let fingerprint = started.identities.workload.fingerprint();
    authority::target_gate(&started.conn, fences, &s, &endpoint, &fingerprint)?;
    let message_id = uuid::Uuid::new_v4().hyphenated().to_string();
    let body = send_message_body(&message_id, text);
    let bytes = body.len() as u64;
    check_size(&started.conn, started, &s, bytes)?;
    let now = started.faults.now_ms();
    let expires = now + i64::from(policy.declaration_seconds) * 1000;
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    memory.declarations.insert(
        id.clone(),
        Declaration {
            selectors: s,
            endpoint,
            text_sha256: hex(&Sha256::digest(text.as_bytes())),
            message_id,
            body,
            declared_at_ms: now,
            expires_at_ms: expires,
            used: false,
        },
    );
    Ok(serde_json::json!({
        "declaration_id": id,
        "expires_at_ms": expires,
        "application_bytes": bytes,
    }))
}

/// `submit`: the declaration's one `SendMessage`.
pub fn submit(
    started: &mut Started,
    fences: &Fences,
    memory: &mut Memory,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    check_members(value, &["declaration_id"], &[])?;
    let id = string(value, "declaration_id")?;
    let now = started.faults.now_ms();
    let declaration = memory.live_declaration(id, now)?;
    let s = &declaration.selectors;
    let policy = &started.config.policy;
    policy.authorize(Action::Submit, &s.target(&declaration.endpoint))?;
    check_live(&started.conn, policy.generation)?;
    let fingerprint = started.identities.workload.fingerprint();
    let enrollment = authority::target_gate(
        &started.conn,
        fences,
        s,
        &declaration.endpoint,
        &fingerprint,
    )?;
    let endpoint = exchange::endpoint_of(&started.conn, &enrollment.enrollment_id)?;
    // From here the declaration is spent, whatever happens.
    if let Some(d) = memory.declarations.get_mut(id) {
        d.used = true;
    }
    let task_id = uuid::Uuid::new_v4().hyphenated().to_string();
    let assertion = serde_json::json!({
        "by": "operator",
        "public_assertion": true,
        "text_sha256": declaration.text_sha256,
        "declared_at_ms": declaration.declared_at_ms,
        "startup_id": started.startup_id,
    })
    .to_string();
    let intent = NewTask {
        task_id: &task_id,
        owner_kind: "operator",
        startup_id: &started.startup_id,
        enrollment_id: &enrollment.enrollment_id,
        selectors: s,
        endpoint: &declaration.endpoint,
        message_id: &declaration.message_id,
        body: &declaration.body,
        source_assertion_json: &assertion,
        generation: policy.generation,
        created_at_ms: now,
        expires_at_ms: now + i64::from(policy.task_seconds) * 1000,
    };
    let recorded = record_intent(&mut started.conn, &started.faults, &intent);
    memory.remember(&task_id, recorded)?;
    let task = tasks::row(&started.conn, &task_id)?.ok_or_else(|| LineError::unknown(&task_id))?;
    let body = declaration.body.clone();
    let result = exchange::run(started, fences, &task, &endpoint, Physical::Submit, body);
    let outcome = memory.remember(&task_id, result)?;
    Ok(serde_json::json!({"task_id": task_id, "status": outcome.status}))
}

/// The intent commit of `task` (its immutable request), under the fault point
/// [`INTENT_POINT`]: an uncertain commit is `unknown` with the task id.
fn record_intent(
    conn: &mut Connection,
    faults: &Faults,
    task: &NewTask<'_>,
) -> Result<(), LineError> {
    let tx = custody::begin(conn, "cannot begin the intent")?;
    check_live(&tx, task.generation)?;
    tasks::insert(&tx, task).map_err(|e| io("cannot record the task", e))?;
    faults.commit(tx, INTENT_POINT, || LineError::unknown(task.task_id))
}

/// The task named by a target command, with its selectors repeated exactly.
fn targeted(started: &Started, value: &Value<'_>, action: Action) -> Result<TaskRow, LineError> {
    check_members(
        value,
        &["task_id", "peer_id", "purpose", "task_schema", "endpoint"],
        &["category"],
    )?;
    let task_id = string(value, "task_id")?;
    let s = authority::selectors(value)?;
    let endpoint = string(value, "endpoint")?;
    // A native lab's task is its run's: this profile does not see it.
    let Some(task) = tasks::row(&started.conn, task_id)?.filter(|t| t.owner_kind == "operator")
    else {
        return Err(LineError::new(Code::TaskNotFound, "no task has this id"));
    };
    if task.selectors != s || task.endpoint != endpoint {
        return Err(LineError::new(
            Code::TargetMismatch,
            "the selectors differ from the task's recorded ones",
        ));
    }
    started
        .config
        .policy
        .authorize(action, &s.target(endpoint))?;
    check_live(&started.conn, started.config.policy.generation)?;
    Ok(task)
}

/// [`targeted`] for a command that may exchange: the enrollment's gate too (`revoked`,
/// `fenced`, `workload_key_changed`).
fn targeted_exchange(
    started: &Started,
    fences: &Fences,
    value: &Value<'_>,
    action: Action,
) -> Result<(TaskRow, authority::Enrollment), LineError> {
    let task = targeted(started, value, action)?;
    let fingerprint = started.identities.workload.fingerprint();
    let enrollment = authority::target_gate(
        &started.conn,
        fences,
        &task.selectors,
        &task.endpoint,
        &fingerprint,
    )?;
    Ok((task, enrollment))
}

/// Marks a task expired (durably, once) and refuses.
fn expire(started: &mut Started, task: &TaskRow) -> LineError {
    if transitions::expires(&task.status) {
        let _ = tasks::move_status(&started.conn, &task.task_id, &task.status, "expired");
    }
    transitions::expired(&task.task_id)
}

/// `poll`: one `GetTask` for a task with a known foreign id.
pub fn poll(
    started: &mut Started,
    fences: &Fences,
    memory: &mut Memory,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let (task, enrollment) = targeted_exchange(started, fences, value, Action::Poll)?;
    if is_terminal(&task.status) {
        return Ok(serde_json::json!({"task_id": task.task_id, "status": task.status}));
    }
    if started.faults.now_ms() >= task.expires_at_ms {
        return Err(expire(started, &task));
    }
    let Some(foreign) = task.foreign_task_id.clone() else {
        // No authenticated foreign id: it cannot be discovered, and nothing is resent.
        return Err(LineError::unknown(&task.task_id));
    };
    let endpoint = exchange::endpoint_of(&started.conn, &enrollment.enrollment_id)?;
    let body = exchange::get_task_body(&foreign);
    let result = exchange::run(started, fences, &task, &endpoint, Physical::Poll, body);
    let outcome = memory.remember(&task.task_id, result)?;
    Ok(serde_json::json!({"task_id": task.task_id, "status": outcome.status}))
}

/// `cancel`: closes local adoption durably, then (with a foreign id) one `CancelTask`.
pub fn cancel(
    started: &mut Started,
    fences: &Fences,
    memory: &mut Memory,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let (task, enrollment) = targeted_exchange(started, fences, value, Action::Cancel)?;
    if is_terminal(&task.status) {
        return Err(LineError::new(
            Code::AlreadyTerminal,
            "the task reached a terminal state: it stays readable, nothing is sent",
        )
        .with("task_id", &*task.task_id)
        .with("status", &*task.status));
    }
    if started.faults.now_ms() >= task.expires_at_ms {
        return Err(expire(started, &task));
    }
    close_adoption(started, &task)?;
    let Some(foreign) = task.foreign_task_id.clone() else {
        return Ok(serde_json::json!({
            "task_id": task.task_id,
            "local_disposition": "adoption_closed",
            "remote": "not_contacted",
            "status": task.status,
        }));
    };
    let endpoint = exchange::endpoint_of(&started.conn, &enrollment.enrollment_id)?;
    let body = exchange::cancel_task_body(&foreign);
    let result = exchange::run(started, fences, &task, &endpoint, Physical::Cancel, body);
    let outcome = memory.remember(&task.task_id, result)?;
    Ok(serde_json::json!({
        "task_id": task.task_id,
        "local_disposition": "adoption_closed",
        "remote": outcome.remote,
        "status": outcome.status,
    }))
}

/// Closes adoption in its own commit, before anything is charged or sent.
fn close_adoption(started: &mut Started, task: &TaskRow) -> Result<(), LineError> {
    let tx = custody::begin(&mut started.conn, "cannot begin closing adoption")?;
    check_live(&tx, started.config.policy.generation)?;
    tasks::close_adoption(&tx, &task.task_id).map_err(|e| io("cannot close adoption", e))?;
    let faults = &started.faults;
    faults.commit(tx, CANCEL_CLOSE_POINT, || LineError::unknown(&task.task_id))?;
    faults.crash_at(AFTER_CANCEL_CLOSE_POINT);
    Ok(())
}

/// `read`: the task's local status and disposition, the operator's assertion, and the latest
/// authenticated foreign observation. Local, uncharged, repeatable.
pub fn read(
    started: &mut Started,
    memory: &Memory,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let task = targeted(started, value, Action::Read)?;
    let uncertain = memory.uncertain.contains(&task.task_id);
    let status = transitions::shown_status(&task.status, uncertain);
    let assertion: serde_json::Value =
        serde_json::from_str(&task.source_assertion_json).unwrap_or(serde_json::Value::Null);
    let observation = latest_observation(&started.conn, &task)?;
    Ok(serde_json::json!({
        "task_id": task.task_id,
        "status": status,
        "local_disposition": task.local_disposition,
        "adoption_open": task.adoption_open,
        "body_sha256": task.body_sha256,
        "source_assertion": assertion,
        "foreign_observation": observation,
    }))
}

/// Stored JSON text as a value, `null` when there is none (or it does not parse).
pub(crate) fn json_or_null(text: Option<String>) -> serde_json::Value {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// The latest authenticated observation of `task`, as `read` shows it (`null` when none).
fn latest_observation(conn: &Connection, task: &TaskRow) -> Result<serde_json::Value, LineError> {
    let found = tasks::latest_observation(conn, &task.task_id, &task.selectors.peer_id)?;
    let Some(o) = found else {
        return Ok(serde_json::Value::Null);
    };
    // The adopted result, if any, is kept with the observation that adopted it.
    let adopted_result = tasks::adopted_result(conn, &task.task_id)?;
    Ok(serde_json::json!({
        "foreign_task_id": o.foreign_task_id,
        "state": o.state,
        "observed_at_ms": o.observed_at_ms,
        "key_id": o.key_id,
        "adopted": o.adopted,
        "classification": "authenticated-foreign-data",
        "result": json_or_null(o.result_json.or(adopted_result)),
        "omitted_parts": match json_or_null(o.omitted_parts_json) {
            serde_json::Value::Null => serde_json::json!([]),
            v => v,
        },
    }))
}
