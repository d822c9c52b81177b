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
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest as _, Sha256};

use crate::authority::{self, Fences, Selectors, check_members, string};
use crate::exchange::{self, Physical};
use crate::policy::Action;
use crate::schema::io;
use crate::secrets::hex;
use crate::startup::{Started, check_live};
use crate::{Code, LineError, NETWORK_ALLOWANCE};

/// The fault point of `submit`'s intent commit.
pub const INTENT_POINT: &str = "intent-commit";
/// The fault point of `cancel`'s adoption-closing commit.
pub const CANCEL_CLOSE_POINT: &str = "cancel-close";
/// The fault point just after that commit, before any charge or send.
pub const AFTER_CANCEL_CLOSE_POINT: &str = "after-cancel-close";

/// Room left in the allowance for the request line, fields and the whole response head.
const HEAD_ROOM: u64 = 16 * 1024;

/// Statuses from which nothing more is sent or adopted.
pub const TERMINAL: [&str; 7] = [
    "completed",
    "failed",
    "rejected",
    "canceled",
    "refused",
    "undelivered",
    "expired",
];

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

/// A task row: what every target command checks and uses.
#[derive(Clone, Debug)]
pub(crate) struct TaskRow {
    pub task_id: String,
    pub selectors: Selectors,
    pub endpoint: String,
    pub body_sha256: String,
    pub source_assertion_json: String,
    pub expires_at_ms: i64,
    pub foreign_task_id: Option<String>,
    pub status: String,
    pub adoption_open: bool,
    pub local_disposition: String,
    pub owner_kind: String,
}

pub(crate) fn task_row(conn: &Connection, task_id: &str) -> Result<Option<TaskRow>, LineError> {
    conn.query_row(
        "SELECT task_id, peer_id, purpose, task_schema, category, endpoint, \
         body_sha256, source_assertion_json, expires_at_ms, foreign_task_id, status, \
         adoption_open, local_disposition, owner_kind FROM line_task WHERE task_id = ?1",
        [task_id],
        |r| {
            Ok(TaskRow {
                task_id: r.get(0)?,
                selectors: Selectors {
                    peer_id: r.get(1)?,
                    purpose: r.get(2)?,
                    task_schema: r.get(3)?,
                    category: r.get(4)?,
                },
                endpoint: r.get(5)?,
                body_sha256: r.get(6)?,
                source_assertion_json: r.get(7)?,
                expires_at_ms: r.get(8)?,
                foreign_task_id: r.get(9)?,
                status: r.get(10)?,
                adoption_open: r.get::<_, i64>(11)? == 1,
                local_disposition: r.get(12)?,
                owner_kind: r.get(13)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read the task", e))
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
        let left: Option<i64> = conn
            .query_row(
                "SELECT ceil_app - used_app FROM line_capacity WHERE scope_kind = ?1 \
                 AND scope_key = ?2",
                params![kind, key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| io("cannot read capacity", e))?;
        least = least.min(left.unwrap_or(0));
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

/// The stored request body of a task (its one `SendMessage`).
pub(crate) fn body_of(conn: &Connection, task_id: &str) -> Result<Vec<u8>, LineError> {
    conn.query_row(
        "SELECT body FROM line_task WHERE task_id = ?1",
        [task_id],
        |r| r.get(0),
    )
    .map_err(|e| io("cannot read the task's body", e))
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
    let Some(declaration) = memory.declarations.get(id).cloned() else {
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
    let expires = now + i64::from(policy.task_seconds) * 1000;
    let assertion = serde_json::json!({
        "by": "operator",
        "public_assertion": true,
        "text_sha256": declaration.text_sha256,
        "declared_at_ms": declaration.declared_at_ms,
        "startup_id": started.startup_id,
    })
    .to_string();
    let intent = (|| {
        let tx = started
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| io("cannot begin the intent", e))?;
        check_live(&tx, policy.generation)?;
        insert_task(
            &tx,
            &NewTask {
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
                expires_at_ms: expires,
            },
        )
        .map_err(|e| io("cannot record the task", e))?;
        started
            .faults
            .commit(tx, INTENT_POINT, || LineError::unknown(&task_id))
    })();
    if let Err(e) = intent {
        if e.code == Code::Unknown {
            memory.uncertain.insert(task_id.clone());
        }
        return Err(e);
    }
    let task = task_row(&started.conn, &task_id)?.ok_or_else(|| LineError::unknown(&task_id))?;
    let result = exchange::run(
        started,
        fences,
        &task,
        &endpoint,
        Physical::Submit,
        declaration.body.clone(),
    );
    finish(
        memory,
        &task_id,
        result,
        |outcome| serde_json::json!({"task_id": task_id, "status": outcome.status}),
    )
}

/// A task's immutable request, as its intent records it (`prepared`, adoption open).
pub(crate) struct NewTask<'a> {
    pub task_id: &'a str,
    pub owner_kind: &'a str,
    pub startup_id: &'a str,
    pub enrollment_id: &'a str,
    pub selectors: &'a Selectors,
    pub endpoint: &'a str,
    pub message_id: &'a str,
    pub body: &'a [u8],
    pub source_assertion_json: &'a str,
    pub generation: u64,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// Inserts the `line_task` row of `t` (the body's SHA-256 computed here).
pub(crate) fn insert_task(tx: &rusqlite::Transaction<'_>, t: &NewTask<'_>) -> rusqlite::Result<()> {
    let s = t.selectors;
    tx.execute(
        "INSERT INTO line_task (task_id, owner_kind, startup_id, enrollment_id, peer_id, \
         purpose, task_schema, category, endpoint, message_id, body, body_sha256, \
         source_assertion_json, generation, created_at_ms, expires_at_ms, foreign_task_id, \
         status, adoption_open, local_disposition) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
         ?10, ?11, ?12, ?13, ?14, ?15, ?16, NULL, 'prepared', 1, 'open')",
        params![
            t.task_id,
            t.owner_kind,
            t.startup_id,
            t.enrollment_id,
            s.peer_id,
            s.purpose,
            s.task_schema,
            s.category,
            t.endpoint,
            t.message_id,
            t.body,
            hex(&Sha256::digest(t.body)),
            t.source_assertion_json,
            t.generation as i64,
            t.created_at_ms,
            t.expires_at_ms
        ],
    )?;
    Ok(())
}

/// Answers an exchange's result, remembering an uncertain task.
fn finish(
    memory: &mut Memory,
    task_id: &str,
    result: Result<exchange::Outcome, LineError>,
    answer: impl FnOnce(&exchange::Outcome) -> serde_json::Value,
) -> Result<serde_json::Value, LineError> {
    match result {
        Ok(outcome) => Ok(answer(&outcome)),
        Err(e) => {
            if e.code == Code::Unknown {
                memory.uncertain.insert(task_id.to_string());
            }
            Err(e)
        }
    }
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
    let Some(task) = task_row(&started.conn, task_id)?.filter(|t| t.owner_kind == "operator")
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

fn is_terminal(status: &str) -> bool {
    TERMINAL.contains(&status)
}

/// Marks a task expired (durably, once) and refuses.
fn expire(started: &mut Started, task: &TaskRow) -> LineError {
    if !is_terminal(&task.status) && task.status != "unknown" {
        let _ = started.conn.execute(
            "UPDATE line_task SET status = 'expired' WHERE task_id = ?1 AND status = ?2",
            params![task.task_id, task.status],
        );
    }
    LineError::new(
        Code::Expired,
        "the task outlived task_seconds: nothing more is sent or adopted",
    )
    .with("task_id", &*task.task_id)
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
    finish(
        memory,
        &task.task_id,
        result,
        |outcome| serde_json::json!({"task_id": task.task_id, "status": outcome.status}),
    )
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
    finish(memory, &task.task_id, result, |outcome| {
        serde_json::json!({
            "task_id": task.task_id,
            "local_disposition": "adoption_closed",
            "remote": outcome.remote,
            "status": outcome.status,
        })
    })
}

/// Closes adoption in its own commit, before anything is charged or sent.
fn close_adoption(started: &mut Started, task: &TaskRow) -> Result<(), LineError> {
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin closing adoption", e))?;
    check_live(&tx, started.config.policy.generation)?;
    tx.execute(
        "UPDATE line_task SET adoption_open = 0, local_disposition = 'adoption_closed' \
         WHERE task_id = ?1 AND adoption_open = 1",
        [&task.task_id],
    )
    .map_err(|e| io("cannot close adoption", e))?;
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
    let status = if memory.uncertain.contains(&task.task_id)
        && matches!(task.status.as_str(), "prepared" | "claimed")
    {
        "unknown".to_string()
    } else {
        task.status.clone()
    };
    let assertion: serde_json::Value =
        serde_json::from_str(&task.source_assertion_json).unwrap_or(serde_json::Value::Null);
    let observation = exchange::latest_observation(&started.conn, &task)?;
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
