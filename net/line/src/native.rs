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
use rusqlite::Connection;
use sha2::{Digest as _, Sha256};

use crate::authority::{self, Fences, check_members, invalid_field, string};
use crate::custody;
use crate::custody::runs::{self, NewRun, Reauthorization, Run};
use crate::custody::tasks::{self, NewTask, TaskRow};
use crate::exchange::{self, Physical};
use crate::fault::Mode;
use crate::policy::{Action, Selectors, check_name};
use crate::schema::io;
use crate::secrets::hex;
use crate::startup::{Started, check_live};
use crate::task::{check_size, json_or_null, public_text, send_message_body};
use crate::transitions::{self, Next, RunNext, is_terminal};
use crate::wire::Endpoint;
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

fn run_of(conn: &Connection, run_id: &str) -> Result<Run, LineError> {
    runs::run(conn, run_id)?.ok_or_else(|| LineError::new(Code::RunNotFound, "no run has this id"))
}

/// The run's peer task.
fn task_of(conn: &Connection, run: &Run) -> Result<TaskRow, LineError> {
    tasks::row(conn, &run.task_id)?
        .ok_or_else(|| LineError::new(Code::RunNotFound, "the run's task is missing"))
}

/// The reply the run's task adopted (`{"parts": [...]}`), `null` when none.
fn adopted_reply(conn: &Connection, task_id: &str) -> Result<serde_json::Value, LineError> {
    Ok(json_or_null(tasks::adopted_result(conn, task_id)?))
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

fn target_json(s: &Selectors, endpoint: &str) -> serde_json::Value {
    serde_json::json!({
        "peer_id": s.peer_id, "purpose": s.purpose, "task_schema": s.task_schema,
        "category": s.category, "endpoint": endpoint,
    })
}

/// What `submit-public-run` asks for.
struct Admission<'v> {
    request_id: &'v str,
    session_id: Option<String>,
    selectors: Selectors,
    endpoint: String,
    text: &'v str,
}

impl Admission<'_> {
    /// The SHA-256 of the public text, hex.
    fn text_sha256(&self) -> String {
        hex(&Sha256::digest(self.text.as_bytes()))
    }
}

fn admission<'v>(value: &'v Value<'_>) -> Result<Admission<'v>, LineError> {
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
    Ok(Admission {
        request_id,
        session_id,
        selectors: authority::selectors(value)?,
        endpoint: string(value, "endpoint")?.to_string(),
        text: public_text(value)?,
    })
}

/// `submit-public-run`: admits one run and prepares its immutable task, with no contact.
pub fn submit_public_run(
    started: &mut Started,
    fences: &Fences,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let a = admission(value)?;
    let (s, endpoint) = (&a.selectors, a.endpoint.as_str());
    let policy = &started.config.policy;
    for action in [Action::Admit, Action::ClassifyPublic] {
        policy.authorize(action, &s.target(endpoint))?;
    }
    check_live(&started.conn, policy.generation)?;
    let fingerprint = started.identities.workload.fingerprint();
    let enrollment = authority::target_gate(&started.conn, fences, s, endpoint, &fingerprint)?;
    let request_digest = digest_of(
        "agent-intercom-line/native-request-v1",
        &serde_json::json!({
            "text_sha256": a.text_sha256(),
            "peer_id": s.peer_id, "purpose": s.purpose, "task_schema": s.task_schema,
            "category": s.category, "endpoint": endpoint,
        }),
    )?;
    // The same request again: the same run, or a refusal.
    if let Some((run_id, digest)) = runs::by_request(&started.conn, a.request_id)? {
        let same = digest == request_digest;
        return repeated(&started.conn, &run_id, same, a.session_id.as_deref());
    }
    if let Some(id) = &a.session_id
        && !runs::session_exists(&started.conn, id)?
    {
        return Err(LineError::new(
            Code::SessionUnknown,
            "no run session has this id",
        ));
    }
    // The enrolled CA file is checked now too (`ca_changed`), before anything is admitted.
    exchange::endpoint_of(&started.conn, &enrollment.enrollment_id)?;
    admit(started, &a, &enrollment.enrollment_id, &request_digest)
}

/// The answer to a request id admitted before: its run, when the request is the `same` and
/// names the run's session; `request_conflict` otherwise.
fn repeated(
    conn: &Connection,
    run_id: &str,
    same: bool,
    session_id: Option<&str>,
) -> Result<serde_json::Value, LineError> {
    let run = run_of(conn, run_id)?;
    if !same || session_id != Some(run.session_id.as_str()) {
        return Err(LineError::new(
            Code::RequestConflict,
            "this request id names another request (its text, target or session differ)",
        )
        .with("run_id", run_id));
    }
    Ok(serde_json::json!({
        "run_id": run.run_id, "session_id": run.session_id, "task_id": run.task_id,
        "binding_digest": run.binding_digest, "status": run.status,
    }))
}

/// Admits a new run for `a` (a request not seen before): its task prepared, bound and
/// checkpointed `admitted`, with the session when it is new, in one commit.
fn admit(
    started: &mut Started,
    a: &Admission<'_>,
    enrollment_id: &str,
    request_digest: &str,
) -> Result<serde_json::Value, LineError> {
    let (s, endpoint) = (&a.selectors, a.endpoint.as_str());
    let new_id = || uuid::Uuid::new_v4().hyphenated().to_string();
    let (run_id, task_id, message_id) = (new_id(), new_id(), new_id());
    let session_id = a.session_id.clone().unwrap_or_else(new_id);
    let body = send_message_body(&message_id, a.text);
    check_size(&started.conn, started, s, body.len() as u64)?;
    let now = started.faults.now_ms();
    let policy = &started.config.policy;
    let expires = now + i64::from(policy.task_seconds) * 1000;
    let target = target_json(s, endpoint);
    let workflow = workflow_digest()?;
    let body_sha256 = hex(&Sha256::digest(&body));
    let binding = binding_digest(
        &run_id,
        a.request_id,
        &session_id,
        &workflow,
        &task_id,
        &target,
        &body_sha256,
        expires,
    )?;
    let assertion = serde_json::json!({
        "by": "operator", "public_assertion": true,
        "text_sha256": a.text_sha256(), "declared_at_ms": now,
        "startup_id": started.startup_id, "request_id": a.request_id,
    })
    .to_string();
    let run = NewRun {
        run_id: &run_id,
        session_id: &session_id,
        request_id: a.request_id,
        request_digest,
        station: STATION,
        workflow_id: WORKFLOW_ID,
        workflow_digest: &workflow,
        task_id: &task_id,
        step_id: PEER_STEP,
        binding_digest: &binding,
        now_ms: now,
    };
    let task = NewTask {
        task_id: &task_id,
        owner_kind: "native",
        startup_id: &started.startup_id,
        enrollment_id,
        selectors: s,
        endpoint,
        message_id: &message_id,
        body: &body,
        source_assertion_json: &assertion,
        generation: policy.generation,
        created_at_ms: now,
        expires_at_ms: expires,
    };
    let new_session = a.session_id.is_none();
    commit_admission(&mut started.conn, &run, &task, new_session, &target)?;
    Ok(serde_json::json!({
        "run_id": run_id, "session_id": session_id, "task_id": task_id,
        "binding_digest": binding, "status": "awaiting_peer",
    }))
}

/// The admission commit: the session (when new), the run, its task, the binding and the
/// `admitted` checkpoint, in one transaction.
fn commit_admission(
    conn: &mut Connection,
    run: &NewRun<'_>,
    task: &NewTask<'_>,
    new_session: bool,
    target: &serde_json::Value,
) -> Result<(), LineError> {
    let tx = custody::begin(conn, "cannot begin the admission")?;
    check_live(&tx, task.generation)?;
    let write = (|| {
        if new_session {
            runs::insert_session(&tx, run.session_id, task.startup_id, run.now_ms)?;
        }
        runs::insert_run(&tx, run)?;
        tasks::insert(&tx, task)?;
        runs::bind_task(&tx, run)?;
        runs::checkpoint(&tx, run.run_id, PEER_STEP, "admitted", target, run.now_ms)
    })();
    write.map_err(|e| io("cannot admit the run", e))?;
    tx.commit()
        .map_err(|e| io("cannot commit the admission", e))
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
    let rows = runs::reauthorized(&started.conn, &task.task_id, &started.startup_id)?;
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

fn settle(started: &Started, run_id: &str, status: &str) -> Result<(), LineError> {
    runs::settle(&started.conn, run_id, status, started.faults.now_ms())
        .map_err(|e| io("cannot settle the run", e))?;
    Ok(())
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
    let task = task_of(&started.conn, &run)?;
    let startup = tasks::startup_of(&started.conn, &task.task_id)?;
    let mut performed = "none";
    if !is_terminal(&task.status) {
        let now = started.faults.now_ms();
        let has_foreign = task.foreign_task_id.is_some();
        let physical =
            match transitions::next_step(&task.status, has_foreign, now, task.expires_at_ms) {
                Next::Expire => {
                    settle(started, &run.run_id, "expired")?;
                    return Ok(answer("expired", "none", Some("expired")));
                }
                // Claimed, with no authenticated foreign id: never replaced (L-89).
                Next::Unknown => {
                    settle(started, &run.run_id, "unknown")?;
                    return Ok(answer("unknown", "none", Some("unknown")));
                }
                Next::Exchange(physical) => physical,
            };
        let (action, name) = match physical {
            Physical::Submit => (Action::Submit, "submit"),
            Physical::Poll | Physical::Cancel => (Action::Poll, "poll"),
        };
        allowed(started, &task, &startup, action)?;
        let (endpoint, body) = prepare(started, fences, &task, physical)?;
        performed = name;
        if let Err(e) = exchange::run(started, fences, &task, &endpoint, physical, body) {
            let Some(step) = transitions::after_failed_exchange(physical, e.code) else {
                return Err(e);
            };
            if step.settles {
                settle(started, &run.run_id, step.status)?;
            }
            return Ok(answer(step.status, performed, Some(step.outcome)));
        }
    }
    let task = task_of(&started.conn, &run)?;
    match transitions::run_next(&task.status, &task.local_disposition) {
        RunNext::Resume => {
            allowed(started, &task, &startup, Action::Adopt)?;
            allowed(started, &task, &startup, Action::Resume)?;
            resume(started, &run.run_id, &task)?;
            Ok(answer("completed", performed, Some("resumed")))
        }
        RunNext::Settle(status) => {
            settle(started, &run.run_id, status)?;
            Ok(answer(status, performed, Some(status)))
        }
        RunNext::Wait => Ok(answer("awaiting_peer", performed, None)),
    }
}

/// The endpoint and request body of a tick's exchange, the enrollment's gate passed.
fn prepare(
    started: &Started,
    fences: &Fences,
    task: &TaskRow,
    physical: Physical,
) -> Result<(Endpoint, Vec<u8>), LineError> {
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
        tasks::body(&started.conn, &task.task_id)?
    } else {
        exchange::get_task_body(task.foreign_task_id.as_deref().unwrap_or_default())
    };
    Ok((endpoint, body))
}

/// The exactly-once resume: the `adopted` checkpoint, the worker, the `resumed` checkpoint with
/// the run's completion (each at most once per step occurrence).
fn resume(started: &mut Started, run_id: &str, task: &TaskRow) -> Result<(), LineError> {
    let reply = adopted_reply(&started.conn, &task.task_id)?;
    let now = started.faults.now_ms();
    let tx = custody::begin(&mut started.conn, "cannot begin the adoption")?;
    let adopted = serde_json::json!({"task_id": task.task_id});
    runs::checkpoint(&tx, run_id, PEER_STEP, "adopted", &adopted, now)
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
    let tx = custody::begin(&mut started.conn, "cannot begin the resume")?;
    let first = runs::checkpoint(&tx, run_id, WORKER_STEP, "resumed", &output, now)
        .map_err(|e| io("cannot checkpoint the resume", e))?;
    if first {
        runs::complete(&tx, run_id, now)?;
    }
    tx.commit().map_err(|e| io("cannot commit the resume", e))
}

/// `status`: the run, its binding and checkpoints; the reply only under `read` now.
pub fn status(started: &mut Started, value: &Value<'_>) -> Result<serde_json::Value, LineError> {
    let run_id = run_input(value, &[], &[])?;
    let run = run_of(&started.conn, run_id)?;
    let task = task_of(&started.conn, &run)?;
    let target = task.selectors.target(&task.endpoint);
    started.config.policy.authorize(Action::Inspect, &target)?;
    check_live(&started.conn, started.config.policy.generation)?;
    let (workflow_digest, request_digest) = runs::digests(&started.conn, &run.run_id)?;
    let kinds = runs::checkpoints(&started.conn, &run.run_id)?;
    let mut answer = serde_json::json!({
        "run_id": run.run_id, "status": run.status, "task_id": run.task_id,
        "foreign_task_id": task.foreign_task_id, "task_status": task.status,
        "local_disposition": task.local_disposition,
        "binding": {
            "session_id": run.session_id, "station": STATION, "request_id": run.request_id,
            "request_digest": request_digest, "workflow_id": WORKFLOW_ID,
            "workflow_digest": workflow_digest, "step_id": PEER_STEP, "occurrence": 1,
            "target": target_json(&task.selectors, &task.endpoint),
            "body_sha256": task.body_sha256, "expires_at_ms": task.expires_at_ms,
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
        let reply = adopted_reply(&started.conn, &task.task_id)?;
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
    let task = task_of(&started.conn, &run)?;
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
    let remote = transitions::remote_after_cancel(&task.status, task.foreign_task_id.is_some());
    let now = started.faults.now_ms();
    let generation = started.config.policy.generation;
    let tx = custody::begin(&mut started.conn, "cannot begin the cancel")?;
    check_live(&tx, generation)?;
    let write = tasks::close_adoption(&tx, &task.task_id)
        .and_then(|_| runs::cancel(&tx, &run.run_id, remote != "none", now));
    write.map_err(|e| io("cannot cancel the run", e))?;
    tx.commit().map_err(|e| io("cannot commit the cancel", e))?;
    Ok(serde_json::json!({
        "run_id": run.run_id, "status": "cancelled", "local_exchange": "retired",
        "remote": remote,
    }))
}

/// The actions `reauthorize-run` names: each once, each reauthorizable, at least one.
fn actions_of(value: &Value<'_>) -> Result<BTreeSet<String>, LineError> {
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
    Ok(actions)
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
    let actions = actions_of(value)?;
    let reaffirm = match value.get("reaffirm_public_source") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid_field("reaffirm_public_source", "must be a boolean")),
    };
    let task = task_of(&started.conn, &run)?;
    let target = task.selectors.target(&task.endpoint);
    for name in &actions {
        let action =
            Action::from_name(name).ok_or_else(|| invalid_field("actions", "an unknown action"))?;
        started.config.policy.authorize(action, &target)?;
    }
    if actions.contains("submit") {
        let has_foreign = task.foreign_task_id.is_some();
        transitions::reauthorize_submit(&task.status, has_foreign, reaffirm)?;
    }
    let generation = started.config.policy.generation;
    let list: Vec<&String> = actions.iter().collect();
    let actions_json = serde_json::to_string(&list).unwrap_or_default();
    let now = started.faults.now_ms();
    let tx = custody::begin(&mut started.conn, "cannot begin the reauthorization")?;
    check_live(&tx, generation)?;
    let record = Reauthorization {
        run_id: &run.run_id,
        startup_id: &started.startup_id,
        task_id: &run.task_id,
        binding_digest: &run.binding_digest,
        actions_json: &actions_json,
        generation,
        reaffirmed_public_source: reaffirm,
        now_ms: now,
    };
    runs::insert_reauthorization(&tx, &record)?;
    tx.commit()
        .map_err(|e| io("cannot commit the reauthorization", e))?;
    Ok(serde_json::json!({
        "run_id": run.run_id, "task_id": run.task_id, "actions": list, "generation": generation,
    }))
}
