//! One charged physical exchange of a task, end to end: sign, claim (charge), send, authenticate
//! the response, commit the outcome.
//!
//! The order is the line's contract (docs/line.md, "Exchanges"):
//!
//! 1. the request is signed (a fresh nonce) and the enrolled CA file checked against its pinned
//!    digest (`ca_changed`), with no charge yet;
//! 2. the charge commits ([`ledger::charge`], with the request's nonce), before any byte leaves;
//! 3. the request is sent once ([`wire::exchange`]); nothing is ever resent;
//! 4. the response is authenticated: its RFC 9421 signature under [`Profile::line_response`],
//!    bound to this request's signature, by an active key version of the target peer inside its
//!    validity, issuer and audience exact, fresh, its nonce never seen; until then nothing of it
//!    is believed;
//! 5. the outcome commits in one transaction: the exchange's outcome and accepted bytes, the
//!    observation, the task's status, foreign id (set once) and adoption.
//!
//! A failure before the first request byte is `undelivered` (`transport_failed`); a failure after
//! it, an unauthenticated response, or an uncertain outcome commit is exactly
//! `{"error":"unknown","task_id":...}`.

use std::cell::Cell;
use std::time::Duration;

use agent_intercom_core::httpsig::{self, Profile, PublicKey};
use rusqlite::Connection;
use sha2::{Digest as _, Sha256};

use crate::authority::{self, Fences};
use crate::custody::tasks::{self, TaskRow};
use crate::custody::{self, ledger as exchanges, peers};
use crate::keyrec;
use crate::ledger::{self, Authority, Charge, Exchange, Operation};
use crate::schema::io;
use crate::secrets::hex;
use crate::startup::Started;
use crate::transitions::{self, Said, TaskWrite, local_state};
use crate::wire::{self, Delivery, Endpoint, Received, Signed};
use crate::{Code, LineError, NETWORK_ALLOWANCE};

pub use crate::transitions::{Outcome, Physical};

/// The fault point of the outcome commit.
pub const OUTCOME_POINT: &str = "outcome-commit";

/// The longest foreign task id kept.
const MAX_FOREIGN_ID_BYTES: usize = 256;

/// The ledger's name of an exchange.
fn operation(physical: Physical) -> Operation {
    match physical {
        Physical::Submit => Operation::Submit,
        Physical::Poll => Operation::Poll,
        Physical::Cancel => Operation::Cancel,
    }
}

/// The enrolled endpoint of an enrollment, its CA file re-read and checked against the digest
/// pinned at enrollment (`ca_changed`).
pub fn endpoint_of(conn: &Connection, enrollment_id: &str) -> Result<Endpoint, LineError> {
    let (address, hostname, port, path, ca_file, pinned) = peers::endpoint(conn, enrollment_id)?;
    let changed = || {
        LineError::new(
            Code::CaChanged,
            "the enrolled CA file is not the one pinned at enrollment",
        )
    };
    let (digest, anchors) = keyrec::ca_certificates(&ca_file, "ca_file").map_err(|_| changed())?;
    if digest != pinned {
        return Err(changed());
    }
    Ok(Endpoint {
        address: address
            .parse()
            .map_err(|_| LineError::new(Code::StoreIo, "a stored address does not parse"))?,
        hostname,
        port: u16::try_from(port)
            .map_err(|_| LineError::new(Code::StoreIo, "a stored port is out of range"))?,
        path,
        trust_anchors: anchors,
    })
}

fn rpc_id() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// `GetTask` for `foreign`.
pub fn get_task_body(foreign: &str) -> Vec<u8> {
    serde_json::json!({"jsonrpc": "2.0", "id": rpc_id(), "method": "GetTask",
                       "params": {"id": foreign}})
    .to_string()
    .into_bytes()
}

/// `CancelTask` for `foreign`.
pub fn cancel_task_body(foreign: &str) -> Vec<u8> {
    serde_json::json!({"jsonrpc": "2.0", "id": rpc_id(), "method": "CancelTask",
                       "params": {"id": foreign}})
    .to_string()
    .into_bytes()
}

/// Reads an authenticated response body. `None` when it is not a JSON-RPC answer to `rpc_id`
/// carrying a task or an error (then nothing of it is used).
fn said(status: u16, body: &[u8], rpc_id: &serde_json::Value, physical: Physical) -> Option<Said> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object()?;
    if let Some(error) = object.get("error") {
        let code = error
            .get("code")
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        return Some(Said::Refused(code));
    }
    if status != 200 {
        return Some(Said::Refused(serde_json::Value::from(status)));
    }
    if object.get("jsonrpc")? != "2.0" || object.get("id")? != rpc_id {
        return None;
    }
    let result = object.get("result")?;
    let task = match physical {
        Physical::Submit => result.get("task")?,
        Physical::Poll | Physical::Cancel => result,
    };
    let id = task.get("id")?.as_str()?;
    if id.is_empty() || id.len() > MAX_FOREIGN_ID_BYTES {
        return None;
    }
    let state = task.get("status")?.get("state")?.as_str()?;
    local_state(state)?;
    let mut parts = Vec::new();
    let mut omitted = Vec::new();
    if state == "TASK_STATE_COMPLETED" {
        let artifacts = task.get("artifacts").and_then(|a| a.as_array());
        for (a, artifact) in artifacts.into_iter().flatten().enumerate() {
            let list = artifact.get("parts").and_then(|p| p.as_array());
            for (p, part) in list.into_iter().flatten().enumerate() {
                match part.get("text").and_then(|t| t.as_str()) {
                    Some(text) => parts.push(serde_json::json!({"text": text})),
                    None => {
                        let kind = ["url", "raw", "data", "file"]
                            .into_iter()
                            .find(|k| part.get(*k).is_some())
                            .unwrap_or("other");
                        omitted.push(serde_json::json!({"artifact": a, "part": p, "kind": kind}));
                    }
                }
            }
        }
    }
    Some(Said::Task {
        id: id.to_string(),
        state: state.to_string(),
        parts,
        omitted,
    })
}

fn rpc_id_of(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(serde_json::Value::Null)
}

/// Settles an exchange whose response never authenticated (or never came): `unknown`, best
/// effort (startup settles what this cannot).
fn settle_unknown(started: &mut Started, exchange_id: &str, task: &TaskRow, physical: Physical) {
    let now = started.faults.now_ms();
    let _ = exchanges::settle(&started.conn, exchange_id, "unknown", now);
    if let Some(m) = transitions::unanswered(physical) {
        let _ = tasks::move_status(&started.conn, &task.task_id, m.from, m.to);
    }
}

/// Runs one exchange of `task` (see the module documentation).
pub(crate) fn run(
    started: &mut Started,
    fences: &Fences,
    task: &TaskRow,
    endpoint: &Endpoint,
    physical: Physical,
    body: Vec<u8>,
) -> Result<Outcome, LineError> {
    let network = i64::from(started.config.policy.network_seconds);
    let signer = wire::Signer {
        key: started.identities.workload.signing_key(),
        key_id: &started.config.signing_key_id,
        issuer: &started.config.workload_id,
        audience: &task.selectors.peer_id,
    };
    let now_s = started.faults.now_ms().div_euclid(1000);
    let signed = wire::sign(endpoint, &body, &signer, now_s, network)?;
    let charged = charge(started, task, physical, &body, &signed)?;
    let deadline = Duration::from_secs(network.unsigned_abs());
    let delivery = wire::exchange(
        endpoint,
        &signed,
        deadline,
        NETWORK_ALLOWANCE,
        &started.faults,
    );
    let received = match delivery {
        Delivery::Undelivered(why) => {
            return undelivered(started, &charged.exchange_id, task, physical, &why);
        }
        Delivery::Uncertain(_) => {
            settle_unknown(started, &charged.exchange_id, task, physical);
            return Err(LineError::unknown(&task.task_id));
        }
        Delivery::Received(r) => r,
    };
    // Authentication: nothing of the response is believed before this passes.
    let now_ms = started.faults.now_ms();
    let authentic = authenticate(started, fences, task, &signed, &received, now_ms);
    let status = received.response.status();
    let said = authentic
        .as_ref()
        .and_then(|_| said(status, &received.body, &rpc_id_of(&body), physical))
        // A poll or cancel answered for another foreign task is not this task's.
        .filter(|said| match (said, &task.foreign_task_id) {
            (Said::Task { id, .. }, Some(known)) => id == known,
            _ => true,
        });
    let (Some((nonce, key_version)), Some(said)) = (authentic, said) else {
        settle_unknown(started, &charged.exchange_id, task, physical);
        return Err(LineError::unknown(&task.task_id));
    };
    let settled = Settled {
        exchange_id: &charged.exchange_id,
        accepted: received.bytes,
        key_version,
        nonce: &nonce,
        response_sha256: hex(&Sha256::digest(&received.body)),
        now_ms,
    };
    commit_outcome(started, task, physical, &settled, said)
}

/// Charges the exchange `signed` of `task` before it is sent (a submit's charge is its claim).
fn charge(
    started: &mut Started,
    task: &TaskRow,
    physical: Physical,
    body: &[u8],
    signed: &Signed,
) -> Result<Exchange, LineError> {
    let policy = &started.config.policy;
    let authority = Authority {
        generation: policy.generation,
        limits: policy.limits,
        host_key: started.installation_id.clone(),
    };
    ledger::charge(
        &mut started.conn,
        &authority,
        &Charge {
            task_id: &task.task_id,
            operation: operation(physical),
            application_bytes: body.len() as u64,
            peer_id: &task.selectors.peer_id,
            purpose: &task.selectors.purpose,
            task_schema: &task.selectors.task_schema,
            request: Some((&signed.nonce, &signed.signature_sha256)),
        },
        &started.faults,
    )
}

/// Authenticates `received`, the answer to `signed`: its RFC 9421 signature under
/// [`Profile::line_response`], bound to the request's, by an active key version of the task's
/// peer valid at `now_ms` (and the peer neither fenced nor revoked); issuer and audience exact;
/// fresh; its nonce never seen. The response's nonce and the key version, or `None`.
fn authenticate(
    started: &Started,
    fences: &Fences,
    task: &TaskRow,
    signed: &Signed,
    received: &Received,
    now_ms: i64,
) -> Option<(String, i64)> {
    let peer_id = &task.selectors.peer_id;
    let version = Cell::new(None);
    let lookup_failed = Cell::new(false);
    let lookup = |key_id: &str| -> Option<PublicKey> {
        match authority::verification_key(&started.conn, fences, peer_id, key_id, now_ms) {
            Ok(Some(k)) => {
                version.set(Some(k.version));
                PublicKey::from_bytes(&k.public_key_raw).ok()
            }
            Ok(None) => None,
            Err(_) => {
                lookup_failed.set(true);
                None
            }
        }
    };
    let profile = Profile::line_response();
    let verified = httpsig::verify_response(
        &profile,
        &received.response,
        &signed.request,
        &received.body,
        now_ms,
        lookup,
    )
    .ok()?;
    let field = |name: &str| received.response.headers.values(name).next();
    let nonce = verified.nonce?;
    let authentic = !lookup_failed.get()
        && field("intercom-issuer") == Some(peer_id.as_bytes())
        && field("intercom-audience") == Some(started.config.workload_id.as_bytes())
        && verified.created >= signed.created - profile.max_skew_secs
        && !exchanges::response_nonce_seen(&started.conn, &nonce).unwrap_or(true);
    authentic.then_some((nonce, version.get()?))
}

/// Settles an exchange of which nothing reached the peer (`undelivered`, no bytes accepted) and
/// answers `transport_failed`.
fn undelivered(
    started: &mut Started,
    exchange_id: &str,
    task: &TaskRow,
    physical: Physical,
    why: &str,
) -> Result<Outcome, LineError> {
    let now = started.faults.now_ms();
    let tx = custody::begin(&mut started.conn, "cannot begin settling")?;
    exchanges::settle(&tx, exchange_id, "undelivered", now)
        .map_err(|e| io("cannot settle the exchange", e))?;
    ledger::accept_in(&tx, exchange_id, 0)?;
    if let Some(m) = transitions::undelivered(physical) {
        tasks::move_status(&tx, &task.task_id, m.from, m.to)
            .map_err(|e| io("cannot settle the task", e))?;
    }
    tx.commit().map_err(|_| LineError::unknown(&task.task_id))?;
    Err(transitions::transport_failed(
        &task.task_id,
        physical,
        &task.status,
        why,
    ))
}

/// An authenticated answer, as its outcome commit records it.
struct Settled<'a> {
    exchange_id: &'a str,
    accepted: u64,
    key_version: i64,
    nonce: &'a str,
    response_sha256: String,
    now_ms: i64,
}

/// The outcome commit: one transaction, under the fault point [`OUTCOME_POINT`]. What it
/// writes is [`transitions::settle`]'s, from the task as this transaction finds it.
fn commit_outcome(
    started: &mut Started,
    task: &TaskRow,
    physical: Physical,
    settled: &Settled<'_>,
    said: Said,
) -> Result<Outcome, LineError> {
    let task_id = task.task_id.as_str();
    let unknown = |_| LineError::unknown(task_id);
    let tx = custody::begin(&mut started.conn, "cannot begin the outcome").map_err(unknown)?;
    let found = tasks::found(&tx, task_id).map_err(|_| LineError::unknown(task_id))?;
    let settlement = transitions::settle(task_id, &found, physical, said, settled.now_ms);
    exchanges::settle_answered(
        &tx,
        settled.exchange_id,
        settlement.exchange_outcome,
        settled.key_version,
        settled.nonce,
        settled.now_ms,
    )
    .map_err(|_| LineError::unknown(task_id))?;
    ledger::accept_in(&tx, settled.exchange_id, settled.accepted).map_err(unknown)?;
    if let Some(o) = &settlement.observation {
        let (id, at) = (settled.exchange_id, settled.now_ms);
        let sha = &settled.response_sha256;
        tasks::insert_observation(&tx, task_id, id, o, settled.key_version, sha, at)
            .map_err(|_| LineError::unknown(task_id))?;
    }
    match &settlement.task {
        TaskWrite::Nothing => {}
        // Best effort: the refusal is answered whether or not the status is written.
        TaskWrite::Refused => {
            let _ = tasks::set_status(&tx, task_id, "refused");
        }
        TaskWrite::Observed {
            foreign_task_id,
            status,
            adoption_open,
            local_disposition,
        } => {
            let (open, disposition) = (*adoption_open, *local_disposition);
            tasks::observed(&tx, task_id, foreign_task_id, status, open, disposition)
                .map_err(|_| LineError::unknown(task_id))?;
        }
    }
    started
        .faults
        .commit(tx, OUTCOME_POINT, || LineError::unknown(task_id))?;
    settlement.answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said_of(status: u16, body: serde_json::Value, physical: Physical) -> Option<Said> {
        said(status, body.to_string().as_bytes(), &"r-1".into(), physical)
    }

    #[test]
    fn an_authenticated_answer_is_read_strictly() {
        let task = serde_json::json!({"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}});
        let ok = |result| serde_json::json!({"jsonrpc": "2.0", "id": "r-1", "result": result});
        // SendMessage answers {"task": ...}; GetTask and CancelTask the task itself.
        assert!(matches!(
            said_of(200, ok(serde_json::json!({"task": task})), Physical::Submit),
            Some(Said::Task { ref id, ref state, .. })
                if id == "t-1" && state == "TASK_STATE_WORKING"
        ));
        assert!(said_of(200, ok(task.clone()), Physical::Submit).is_none());
        assert!(matches!(
            said_of(200, ok(task.clone()), Physical::Poll),
            Some(Said::Task { .. })
        ));
        // Another request's id, another version, no result: nothing of it is used.
        let mut other = ok(task.clone());
        other["id"] = "r-2".into();
        assert!(said_of(200, other, Physical::Poll).is_none());
        let mut v1 = ok(task.clone());
        v1["jsonrpc"] = "1.0".into();
        assert!(said_of(200, v1, Physical::Poll).is_none());
        assert!(said(200, b"not json", &"r-1".into(), Physical::Poll).is_none());
        // An unknown state, an empty or huge foreign id.
        for bad in [
            serde_json::json!({"id": "t-1", "status": {"state": "TASK_STATE_SLEEPING"}}),
            serde_json::json!({"id": "", "status": {"state": "TASK_STATE_WORKING"}}),
            serde_json::json!({"id": "x".repeat(257), "status": {"state": "TASK_STATE_WORKING"}}),
            serde_json::json!({"id": 7, "status": {"state": "TASK_STATE_WORKING"}}),
        ] {
            assert!(
                said_of(200, ok(bad.clone()), Physical::Poll).is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn refusals_carry_their_code() {
        let error = serde_json::json!({"jsonrpc": "2.0", "id": "r-1",
                                       "error": {"code": -32002, "message": "no"}});
        assert!(matches!(
            said_of(200, error.clone(), Physical::Cancel),
            Some(Said::Refused(ref c)) if c == -32002
        ));
        assert!(matches!(
            said_of(401, error, Physical::Poll),
            Some(Said::Refused(ref c)) if c == -32002
        ));
        let plain = serde_json::json!({"jsonrpc": "2.0", "id": "r-1", "result": {}});
        assert!(matches!(
            said_of(503, plain, Physical::Poll),
            Some(Said::Refused(ref c)) if c == 503
        ));
    }

    #[test]
    fn only_text_parts_of_a_completed_task_are_kept() {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": "r-1", "result": {
        "id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [
            {"parts": [{"text": "one"}, {"url": "https://x.example/f"}]},
            {"parts": [{"raw": "AAAA"}, {"text": "two"}, {"data": {"k": 1}}]},
        ]}});
        let Some(Said::Task { parts, omitted, .. }) = said_of(200, body, Physical::Poll) else {
            panic!("a task")
        };
        assert_eq!(
            parts,
            [
                serde_json::json!({"text": "one"}),
                serde_json::json!({"text": "two"})
            ]
        );
        let kinds: Vec<_> = omitted.iter().map(|o| o["kind"].clone()).collect();
        assert_eq!(kinds, ["url", "raw", "data"]);
        // A task not completed keeps nothing.
        let working = serde_json::json!({"jsonrpc": "2.0", "id": "r-1", "result": {
            "id": "t-1", "status": {"state": "TASK_STATE_WORKING"},
            "artifacts": [{"parts": [{"text": "early"}]}]}});
        let Some(Said::Task { parts, .. }) = said_of(200, working, Physical::Poll) else {
            panic!("a task")
        };
        assert!(parts.is_empty());
    }
}
