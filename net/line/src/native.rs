//! The native run lab (`native-public-peer@1`, docs/line.md, "The native run lab"): a pinned
//! workflow whose first step asks an enrolled peer to do a public task, and whose second step, a
//! local worker function, resumes once on the peer's correlated terminal.
//!
//! - **Binding.** A run binds its one peer task to the run, its session, the station, the
//!   request, the pinned workflow (id and digest), the step and its occurrence; the binding's
//!   digest covers all of them with the task's selectors, body digest and expiry.
//! - **Admission** (`submit-public-run`, action `admit` with `classify_public`) prepares the
//!   immutable task and checkpoints it, with no contact. The same request in the same session
//!   with the same content answers the same ids; anything else under its id is refused.
//! - **`tick`** performs at most one exchange: the submit of an unclaimed task, else a poll. An
//!   adopted COMPLETED then resumes the workflow once: an `adopted` checkpoint, the worker, a
//!   `resumed` checkpoint (a unique index makes each once). Nothing ticks by itself.
//! - **Restart.** Evidence is restored; no exchange or resume happens in a later startup before
//!   `reauthorize-run` names the run's exact task and binding digest and the actions it allows
//!   (`submit poll read adopt resume`, each admitted now). An uncertain submit is never
//!   replaced: it settles `unknown`.

use std::collections::BTreeSet;

use agent_intercom_core::canonical::{self, Value};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest as _, Sha256};

use crate::authority::{self, Fences, check_members, invalid_field, string};
use crate::exchange::{self, Physical};
use crate::fault::Mode;
use crate::policy::{Action, check_name};
use crate::schema::io;
use crate::secrets::hex;
use crate::startup::{Started, check_live};
use crate::task::{self, TaskRow};
use crate::{Code, LineError};

/// The lab's profile name.
pub const NATIVE_PROFILE: &str = "native-public-peer@1";
/// The station every run of this lab is bound to.
pub const STATION: &str = "native-public-peer-lab";
/// The pinned workflow.
pub const WORKFLOW_ID: &str = "public-peer-reply@1";
/// Its peer step.
pub const PEER_STEP: &str = "ask-peer";
/// Its worker step.
pub const WORKER_STEP: &str = "record-reply";
/// The fault point after the `adopted` checkpoint commits, before the worker runs.
pub const ADOPTED_POINT: &str = "run-adopted";
/// The fault point of the worker: `uncertain-absent` makes it fail, `abort` crashes in it.
pub const WORKER_POINT: &str = "worker";
/// The actions `reauthorize-run` may grant.
const REAUTHORIZABLE: [&str; 5] = ["submit", "poll", "read", "adopt", "resume"];

/// The pinned workflow's definition; its digest is pinned in every run.
fn workflow_definition() -> serde_json::Value {
    serde_json::json!({
        "workflow_id": WORKFLOW_ID,
        "steps": [
            {"id": PEER_STEP, "kind": "peer-task", "occurrences": 1},
            {"id": WORKER_STEP, "kind": "worker", "function": "reply-digest@1",
             "input": "the adopted reply, as foreign data"},
        ],
    })
}

fn digest_of(domain: &str, value: &serde_json::Value) -> Result<String, LineError> {
    canonical::canonical_hash_of_text(domain, &value.to_string())
        .map_err(|e| LineError::new(Code::StoreIo, format!("cannot digest: {e}")))
}

/// The pinned workflow's digest.
pub fn workflow_digest() -> Result<String, LineError> {
    digest_of(
        "agent-intercom-line/native-workflow-v1",
        &workflow_definition(),
    )
}

/// The worker function: a record of the reply (its digest and size), never an action on it.
fn worker(reply: &serde_json::Value) -> serde_json::Value {
    let text = reply.to_string();
    serde_json::json!({
        "function": "reply-digest@1",
        "reply_sha256": hex(&Sha256::digest(text.as_bytes())),
        "reply_bytes": text.len(),
        "classification": "authenticated-foreign-data",
    })
}

/// A run and its binding.
#[derive(Clone, Debug)]
struct Run {
    run_id: String,
    session_id: String,
    request_id: String,
    status: String,
    task_id: String,
    binding_digest: String,
}

fn run_of(conn: &Connection, run_id: &str) -> Result<Run, LineError> {
    conn.query_row(
        "SELECT r.run_id, r.session_id, r.request_id, r.status, b.task_id, b.binding_digest \
         FROM run_record r JOIN run_peer_task b ON b.run_id = r.run_id WHERE r.run_id = ?1",
        [run_id],
        |r| {
            Ok(Run {
                run_id: r.get(0)?,
                session_id: r.get(1)?,
                request_id: r.get(2)?,
                status: r.get(3)?,
                task_id: r.get(4)?,
                binding_digest: r.get(5)?,
            })
        },
    )
    .optional()
    .map_err(|e| io("cannot read the run", e))?
    .ok_or_else(|| LineError::new(Code::RunNotFound, "no run has this id"))
}

fn run_input<'v>(
    value: &'v Value<'_>,
    extra: &[&str],
    optional: &[&str],
) -> Result<&'v str, LineError> {
    let mut required = vec!["run_id"];
    required.extend_from_slice(extra);
    check_members(value, &required, optional)?;
    string(value, "run_id")
}

/// The binding digest of a run's peer task.
#[allow(clippy::too_many_arguments)]
fn binding_digest(
    run_id: &str,
    request_id: &str,
    session_id: &str,
    workflow_digest: &str,
    task_id: &str,
    target: &serde_json::Value,
    body_sha256: &str,
    expires_at_ms: i64,
) -> Result<String, LineError> {
    digest_of(
        "agent-intercom-line/native-binding-v1",
        &serde_json::json!({
            "run_id": run_id, "session_id": session_id, "station": STATION,
            "request_id": request_id, "workflow_id": WORKFLOW_ID,
            "workflow_digest": workflow_digest, "step_id": PEER_STEP, "occurrence": 1,
            "task_id": task_id, "target": target, "body_sha256": body_sha256,
            "expires_at_ms": expires_at_ms,
        }),
    )
}

fn target_json(task: &TaskRow) -> serde_json::Value {
    serde_json::json!({
        "peer_id": task.selectors.peer_id, "purpose": task.selectors.purpose,
        "task_schema": task.selectors.task_schema, "category": task.selectors.category,
        "endpoint": task.endpoint,
    })
}

/// `submit-public-run`: admits one run and prepares its immutable task, with no contact.
pub fn submit_public_run(
    started: &mut Started,
    fences: &Fences,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    check_members(
        value,
        &[
            "request_id",
            "peer_id",
            "purpose",
            "task_schema",
            "endpoint",
            "source",
        ],
        &["category", "session_id"],
    )?;
    let request_id = string(value, "request_id")?;
    check_name(request_id).map_err(|why| invalid_field("request_id", why))?;
    let session_id = match value.get("session_id") {
        None => None,
        Some(_) => Some(string(value, "session_id")?.to_string()),
    };
    let s = authority::selectors(value)?;
    let endpoint = string(value, "endpoint")?.to_string();
    let text = task::public_text(value)?;
    let policy = &started.config.policy;
    for action in [Action::Admit, Action::ClassifyPublic] {
        policy.authorize(action, &s.target(&endpoint))?;
    }
    check_live(&started.conn, policy.generation)?;
    let fingerprint = started.identities.workload.fingerprint();
    let enrollment = authority::target_gate(&started.conn, fences, &s, &endpoint, &fingerprint)?;
    let request_digest = digest_of(
        "agent-intercom-line/native-request-v1",
        &serde_json::json!({
            "text_sha256": hex(&Sha256::digest(text.as_bytes())),
            "peer_id": s.peer_id, "purpose": s.purpose, "task_schema": s.task_schema,
            "category": s.category, "endpoint": endpoint,
        }),
    )?;
    // The same request again: the same run, or a refusal.
    let existing: Option<(String, String)> = started
        .conn
        .query_row(
            "SELECT run_id, request_digest FROM run_record WHERE request_id = ?1",
            [request_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| io("cannot read runs", e))?;
    if let Some((run_id, digest)) = existing {
        let run = run_of(&started.conn, &run_id)?;
        if digest != request_digest || session_id.as_deref() != Some(run.session_id.as_str()) {
            return Err(LineError::new(
                Code::RequestConflict,
                "this request id names another request (its text, target or session differ)",
            )
            .with("run_id", run_id));
        }
        return Ok(serde_json::json!({
            "run_id": run.run_id, "session_id": run.session_id, "task_id": run.task_id,
            "binding_digest": run.binding_digest, "status": run.status,
        }));
    }
    if let Some(id) = &session_id {
        let known: i64 = started
            .conn
            .query_row(
                "SELECT count(*) FROM run_session WHERE session_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(|e| io("cannot read sessions", e))?;
        if known == 0 {
            return Err(LineError::new(
                Code::SessionUnknown,
                "no run session has this id",
            ));
        }
    }
    // The enrolled CA file is checked now too (`ca_changed`), before anything is admitted.
    exchange::endpoint_of(&started.conn, &enrollment.enrollment_id)?;
    let new_id = || uuid::Uuid::new_v4().hyphenated().to_string();
    let (run_id, task_id, message_id) = (new_id(), new_id(), new_id());
    let new_session = session_id.is_none();
    let session_id = session_id.unwrap_or_else(new_id);
    let body = task::send_message_body(&message_id, text);
    task::check_size(&started.conn, started, &s, body.len() as u64)?;
    let now = started.faults.now_ms();
    let expires = now + i64::from(policy.task_seconds) * 1000;
    let body_sha256 = hex(&Sha256::digest(&body));
    let target = serde_json::json!({
        "peer_id": s.peer_id, "purpose": s.purpose, "task_schema": s.task_schema,
        "category": s.category, "endpoint": endpoint,
    });
    let workflow = workflow_digest()?;
    let binding = binding_digest(
        &run_id,
        request_id,
        &session_id,
        &workflow,
        &task_id,
        &target,
        &body_sha256,
        expires,
    )?;
    let assertion = serde_json::json!({
        "by": "operator", "public_assertion": true,
        "text_sha256": hex(&Sha256::digest(text.as_bytes())), "declared_at_ms": now,
        "startup_id": started.startup_id, "request_id": request_id,
    })
    .to_string();
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the admission", e))?;
    check_live(&tx, policy.generation)?;
    let write = (|| {
        if new_session {
            tx.execute(
                "INSERT INTO run_session (session_id, startup_id, created_at_ms) VALUES \
                 (?1, ?2, ?3)",
                params![session_id, started.startup_id, now],
            )?;
        }
        tx.execute(
            "INSERT INTO run_record (run_id, session_id, request_id, request_digest, station, \
             workflow_id, workflow_digest, status, created_at_ms, updated_at_ms) VALUES (?1, \
             ?2, ?3, ?4, ?5, ?6, ?7, 'awaiting_peer', ?8, ?8)",
            params![
                run_id,
                session_id,
                request_id,
                request_digest,
                STATION,
                WORKFLOW_ID,
                workflow,
                now
            ],
        )?;
        task::insert_task(
            &tx,
            &task::NewTask {
                task_id: &task_id,
                owner_kind: "native",
                startup_id: &started.startup_id,
                enrollment_id: &enrollment.enrollment_id,
                selectors: &s,
                endpoint: &endpoint,
                message_id: &message_id,
                body: &body,
                source_assertion_json: &assertion,
                generation: policy.generation,
                created_at_ms: now,
                expires_at_ms: expires,
            },
        )?;
        tx.execute(
            "INSERT INTO run_peer_task (run_id, task_id, step_id, occurrence, binding_digest) \
             VALUES (?1, ?2, ?3, 1, ?4)",
            params![run_id, task_id, PEER_STEP, binding],
        )?;
        checkpoint(&tx, &run_id, PEER_STEP, "admitted", &target, now)
    })();
    write.map_err(|e| io("cannot admit the run", e))?;
    tx.commit()
        .map_err(|e| io("cannot commit the admission", e))?;
    Ok(serde_json::json!({
        "run_id": run_id, "session_id": session_id, "task_id": task_id,
        "binding_digest": binding, "status": "awaiting_peer",
    }))
}

/// Appends a checkpoint; `Ok(false)` when that step occurrence already has this kind.
fn checkpoint(
    tx: &rusqlite::Transaction<'_>,
    run_id: &str,
    step: &str,
    kind: &str,
    state: &serde_json::Value,
    now: i64,
) -> rusqlite::Result<bool> {
    let seq: i64 = tx.query_row(
        "SELECT coalesce(max(seq), 0) + 1 FROM run_checkpoint WHERE run_id = ?1",
        [run_id],
        |r| r.get(0),
    )?;
    let n = tx.execute(
        "INSERT OR IGNORE INTO run_checkpoint (run_id, seq, step_id, occurrence, kind, \
         state_json, created_at_ms) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6)",
        params![run_id, seq, step, kind, state.to_string(), now],
    )?;
    Ok(n == 1)
}

/// Whether `action` may act on the run's task now: admitted by the live policy for its target,
/// and, in a startup other than the one that admitted it, reauthorized in this startup.
fn allowed(
    started: &Started,
    task: &TaskRow,
    task_startup: &str,
    action: Action,
) -> Result<(), LineError> {
    started
        .config
        .policy
        .authorize(action, &task.selectors.target(&task.endpoint))?;
    if task_startup == started.startup_id {
        return Ok(());
    }
    let rows: Vec<String> = {
        let mut stmt = started
            .conn
            .prepare(
                "SELECT actions_json FROM run_reauthorization WHERE task_id = ?1 \
                 AND startup_id = ?2",
            )
            .map_err(|e| io("cannot read reauthorizations", e))?;
        let rows = stmt
            .query_map(params![task.task_id, started.startup_id], |r| r.get(0))
            .map_err(|e| io("cannot read reauthorizations", e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| io("cannot read reauthorizations", e))?
    };
    let name = action.as_str();
    let granted = rows.iter().any(|json| {
        serde_json::from_str::<Vec<String>>(json).is_ok_and(|a| a.iter().any(|x| x == name))
    });
    if granted {
        Ok(())
    } else {
        Err(LineError::new(
            Code::ReauthorizationRequired,
            format!("after a restart, `{name}` on this run needs reauthorize-run"),
        ))
    }
}

fn settle(started: &mut Started, run_id: &str, status: &str) -> Result<(), LineError> {
    started
        .conn
        .execute(
            "UPDATE run_record SET status = ?2, updated_at_ms = ?3 WHERE run_id = ?1 \
             AND status = 'awaiting_peer'",
            params![run_id, status, started.faults.now_ms()],
        )
        .map_err(|e| io("cannot settle the run", e))?;
    Ok(())
}

fn task_startup(conn: &Connection, task_id: &str) -> Result<String, LineError> {
    conn.query_row(
        "SELECT startup_id FROM line_task WHERE task_id = ?1",
        [task_id],
        |r| r.get(0),
    )
    .map_err(|e| io("cannot read the task", e))
}

/// `tick`: at most one exchange for the run, then its resume if the peer's terminal is adopted.
pub fn tick(
    started: &mut Started,
    fences: &Fences,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let run_id = run_input(value, &[], &[])?;
    let run = run_of(&started.conn, run_id)?;
    check_live(&started.conn, started.config.policy.generation)?;
    let answer = |status: &str, performed: &str, outcome: Option<&str>| {
        let mut v = serde_json::json!({"run_id": run.run_id, "status": status,
                                       "performed": performed});
        if let Some(o) = outcome {
            v["outcome"] = o.into();
        }
        v
    };
    if run.status != "awaiting_peer" {
        return Ok(answer(&run.status, "none", None));
    }
    let task = task::task_row(&started.conn, &run.task_id)?
        .ok_or_else(|| LineError::new(Code::RunNotFound, "the run's task is missing"))?;
    let startup = task_startup(&started.conn, &task.task_id)?;
    let now = started.faults.now_ms();
    let terminal = task::TERMINAL.contains(&task.status.as_str());
    let mut performed = "none";
    if !terminal {
        if now >= task.expires_at_ms {
            settle(started, &run.run_id, "expired")?;
            return Ok(answer("expired", "none", Some("expired")));
        }
        let physical = match (task.status.as_str(), &task.foreign_task_id) {
            ("prepared", _) => Physical::Submit,
            (_, Some(_)) => Physical::Poll,
            // Claimed, with no authenticated foreign id: never replaced (L-89).
            _ => {
                settle(started, &run.run_id, "unknown")?;
                return Ok(answer("unknown", "none", Some("unknown")));
            }
        };
        let action = if physical == Physical::Submit {
            Action::Submit
        } else {
            Action::Poll
        };
        allowed(started, &task, &startup, action)?;
        let fingerprint = started.identities.workload.fingerprint();
        let enrollment = authority::target_gate(
            &started.conn,
            fences,
            &task.selectors,
            &task.endpoint,
            &fingerprint,
        )?;
        let endpoint = exchange::endpoint_of(&started.conn, &enrollment.enrollment_id)?;
        let body = if physical == Physical::Submit {
            task::body_of(&started.conn, &task.task_id)?
        } else {
            exchange::get_task_body(task.foreign_task_id.as_deref().unwrap_or_default())
        };
        performed = if physical == Physical::Submit {
            "submit"
        } else {
            "poll"
        };
        match exchange::run(started, fences, &task, &endpoint, physical, body) {
            Ok(_) => {}
            Err(e) if e.code == Code::Unknown => {
                if physical == Physical::Submit {
                    settle(started, &run.run_id, "unknown")?;
                    return Ok(answer("unknown", performed, Some("unknown")));
                }
                return Ok(answer("awaiting_peer", performed, Some("unknown")));
            }
            Err(e) if matches!(e.code, Code::TransportFailed | Code::PeerRefused) => {
                if physical == Physical::Submit {
                    settle(started, &run.run_id, "failed")?;
                    return Ok(answer("failed", performed, Some(e.code.as_str())));
                }
                return Ok(answer("awaiting_peer", performed, Some(e.code.as_str())));
            }
            Err(e) => return Err(e),
        }
    }
    let task = task::task_row(&started.conn, &run.task_id)?
        .ok_or_else(|| LineError::new(Code::RunNotFound, "the run's task is missing"))?;
    if task.local_disposition == "adopted" && task.status == "completed" {
        allowed(started, &task, &startup, Action::Adopt)?;
        allowed(started, &task, &startup, Action::Resume)?;
        resume(started, &run.run_id, &task)?;
        return Ok(answer("completed", performed, Some("resumed")));
    }
    if task::TERMINAL.contains(&task.status.as_str()) {
        let status = if task.status == "expired" {
            "expired"
        } else {
            "remote_noncompletion"
        };
        settle(started, &run.run_id, status)?;
        return Ok(answer(status, performed, Some(status)));
    }
    Ok(answer("awaiting_peer", performed, None))
}

/// The exactly-once resume: the `adopted` checkpoint, the worker, the `resumed` checkpoint with
/// the run's completion (each at most once per step occurrence).
fn resume(started: &mut Started, run_id: &str, task: &TaskRow) -> Result<(), LineError> {
    let reply = exchange::adopted_result(&started.conn, &task.task_id)?;
    let now = started.faults.now_ms();
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the adoption", e))?;
    checkpoint(
        &tx,
        run_id,
        PEER_STEP,
        "adopted",
        &serde_json::json!({"task_id": task.task_id}),
        now,
    )
    .map_err(|e| io("cannot checkpoint the adoption", e))?;
    tx.commit()
        .map_err(|e| io("cannot commit the adoption", e))?;
    started.faults.crash_at(ADOPTED_POINT);
    match started.faults.at(WORKER_POINT) {
        Some(Mode::Abort) => std::process::abort(),
        Some(_) => {
            return Err(LineError::new(
                Code::WorkerFailed,
                "the worker failed: the run is not settled",
            )
            .with("run_id", run_id));
        }
        None => {}
    }
    let output = worker(&reply);
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the resume", e))?;
    let first = checkpoint(&tx, run_id, WORKER_STEP, "resumed", &output, now)
        .map_err(|e| io("cannot checkpoint the resume", e))?;
    if first {
        tx.execute(
            "UPDATE run_record SET status = 'completed', updated_at_ms = ?2 WHERE run_id = ?1 \
             AND status = 'awaiting_peer'",
            params![run_id, now],
        )
        .map_err(|e| io("cannot complete the run", e))?;
    }
    tx.commit().map_err(|e| io("cannot commit the resume", e))
}

/// `status`: the run, its binding and checkpoints; the reply only under `read` now.
pub fn status(started: &mut Started, value: &Value<'_>) -> Result<serde_json::Value, LineError> {
    let run_id = run_input(value, &[], &[])?;
    let run = run_of(&started.conn, run_id)?;
    let task = task::task_row(&started.conn, &run.task_id)?
        .ok_or_else(|| LineError::new(Code::RunNotFound, "the run's task is missing"))?;
    let target = task.selectors.target(&task.endpoint);
    started.config.policy.authorize(Action::Inspect, &target)?;
    check_live(&started.conn, started.config.policy.generation)?;
    let (workflow_digest, request_digest): (String, String) = started
        .conn
        .query_row(
            "SELECT workflow_digest, request_digest FROM run_record WHERE run_id = ?1",
            [&run.run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| io("cannot read the run", e))?;
    let kinds: Vec<(String, String)> = {
        let mut stmt = started
            .conn
            .prepare("SELECT step_id, kind FROM run_checkpoint WHERE run_id = ?1 ORDER BY seq")
            .map_err(|e| io("cannot read checkpoints", e))?;
        let rows = stmt
            .query_map([&run.run_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| io("cannot read checkpoints", e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| io("cannot read checkpoints", e))?
    };
    let mut answer = serde_json::json!({
        "run_id": run.run_id, "status": run.status, "task_id": run.task_id,
        "foreign_task_id": task.foreign_task_id, "task_status": task.status,
        "local_disposition": task.local_disposition,
        "binding": {
            "session_id": run.session_id, "station": STATION, "request_id": run.request_id,
            "request_digest": request_digest, "workflow_id": WORKFLOW_ID,
            "workflow_digest": workflow_digest, "step_id": PEER_STEP, "occurrence": 1,
            "target": target_json(&task), "body_sha256": task.body_sha256,
            "expires_at_ms": task.expires_at_ms,
        },
        "binding_digest": run.binding_digest,
        "checkpoints": kinds.iter().map(|(s, k)| serde_json::json!({"step_id": s, "kind": k}))
            .collect::<Vec<_>>(),
    });
    if started
        .config
        .policy
        .authorize(Action::Read, &target)
        .is_ok()
    {
        let reply = exchange::adopted_result(&started.conn, &task.task_id)?;
        if !reply.is_null() {
            answer["reply"] = serde_json::json!({
                "classification": "authenticated-foreign-data", "result": reply,
            });
        }
    }
    Ok(answer)
}

/// `cancel-run`: closes local adoption and retires the local exchange (a settled run is never
/// ticked again, so a task never claimed is never sent); the peer is not asked, and what it may
/// still hold stays visible as `remote`.
pub fn cancel_run(
    started: &mut Started,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let run_id = run_input(value, &[], &[])?;
    let run = run_of(&started.conn, run_id)?;
    let task = task::task_row(&started.conn, &run.task_id)?
        .ok_or_else(|| LineError::new(Code::RunNotFound, "the run's task is missing"))?;
    started
        .config
        .policy
        .authorize(Action::Cancel, &task.selectors.target(&task.endpoint))?;
    if run.status != "awaiting_peer" {
        return Err(LineError::new(
            Code::AlreadyTerminal,
            "the run is settled: nothing is cancelled",
        )
        .with("run_id", &*run.run_id)
        .with("status", &*run.status));
    }
    let remote = match (task.status.as_str(), &task.foreign_task_id) {
        ("prepared", _) => "none",
        (_, Some(_)) => "observed",
        _ => "unknown",
    };
    let now = started.faults.now_ms();
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the cancel", e))?;
    check_live(&tx, started.config.policy.generation)?;
    let write = (|| {
        tx.execute(
            "UPDATE line_task SET adoption_open = 0, local_disposition = 'adoption_closed' \
             WHERE task_id = ?1 AND adoption_open = 1",
            [&task.task_id],
        )?;
        tx.execute(
            "INSERT INTO run_closure (run_id, reason, remote_uncertain, closed_at_ms) VALUES \
             (?1, 'cancelled', ?2, ?3)",
            params![run.run_id, i64::from(remote != "none"), now],
        )?;
        tx.execute(
            "UPDATE run_record SET status = 'cancelled', updated_at_ms = ?2 WHERE run_id = ?1",
            params![run.run_id, now],
        )
    })();
    write.map_err(|e| io("cannot cancel the run", e))?;
    tx.commit().map_err(|e| io("cannot commit the cancel", e))?;
    Ok(serde_json::json!({
        "run_id": run.run_id, "status": "cancelled", "local_exchange": "retired",
        "remote": remote,
    }))
}

/// `reauthorize-run`: this startup's authority over the run's exact task and binding.
pub fn reauthorize_run(
    started: &mut Started,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let run_id = run_input(
        value,
        &["task_id", "binding_digest", "actions"],
        &["reaffirm_public_source"],
    )?;
    let run = run_of(&started.conn, run_id)?;
    if run.status != "awaiting_peer" {
        return Err(LineError::new(
            Code::AlreadyTerminal,
            "the run is settled: there is nothing to reauthorize",
        )
        .with("run_id", &*run.run_id)
        .with("status", &*run.status));
    }
    let task_id = string(value, "task_id")?;
    let digest = string(value, "binding_digest")?;
    if task_id != run.task_id || digest != run.binding_digest {
        return Err(LineError::new(
            Code::BindingMismatch,
            "the task or binding digest is not this run's",
        ));
    }
    let Some(Value::Array(items)) = value.get("actions") else {
        return Err(invalid_field("actions", "must be an array of action names"));
    };
    let mut actions = BTreeSet::new();
    for item in items {
        let Some(name) = item.as_str().filter(|n| REAUTHORIZABLE.contains(n)) else {
            return Err(invalid_field(
                "actions",
                "each action is one of submit, poll, read, adopt, resume",
            ));
        };
        if !actions.insert(name.to_string()) {
            return Err(invalid_field("actions", "an action is named twice"));
        }
    }
    if actions.is_empty() {
        return Err(invalid_field("actions", "must name at least one action"));
    }
    let reaffirm = match value.get("reaffirm_public_source") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid_field("reaffirm_public_source", "must be a boolean")),
    };
    let task = task::task_row(&started.conn, &run.task_id)?
        .ok_or_else(|| LineError::new(Code::RunNotFound, "the run's task is missing"))?;
    let target = task.selectors.target(&task.endpoint);
    for name in &actions {
        let action =
            Action::from_name(name).ok_or_else(|| invalid_field("actions", "an unknown action"))?;
        started.config.policy.authorize(action, &target)?;
    }
    if actions.contains("submit") {
        if task.status == "prepared" {
            if !reaffirm {
                return Err(LineError::new(
                    Code::ReaffirmRequired,
                    "an unclaimed first submit needs reaffirm_public_source: true",
                ));
            }
        } else if task.foreign_task_id.is_none() {
            return Err(LineError::new(
                Code::UncertainSubmit,
                "the submit was claimed and never answered: it is reconciled as unknown, \
                 never replaced",
            ));
        }
    }
    let generation = started.config.policy.generation;
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| io("cannot begin the reauthorization", e))?;
    check_live(&tx, generation)?;
    let list: Vec<&String> = actions.iter().collect();
    tx.execute(
        "INSERT INTO run_reauthorization (run_id, startup_id, task_id, binding_digest, \
         actions_json, generation, reaffirmed_public_source, created_at_ms) VALUES (?1, ?2, \
         ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            run.run_id,
            started.startup_id,
            run.task_id,
            run.binding_digest,
            serde_json::to_string(&list).unwrap_or_default(),
            generation as i64,
            i64::from(reaffirm),
            started.faults.now_ms()
        ],
    )
    .map_err(|e| io("cannot record the reauthorization", e))?;
    tx.commit()
        .map_err(|e| io("cannot commit the reauthorization", e))?;
    Ok(serde_json::json!({
        "run_id": run.run_id, "task_id": run.task_id, "actions": list, "generation": generation,
    }))
}
