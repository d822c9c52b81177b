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
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest as _, Sha256};

use crate::authority::{self, Fences};
use crate::keyrec;
use crate::ledger::{self, Authority, Charge, Operation};
use crate::schema::io;
use crate::secrets::hex;
use crate::startup::Started;
use crate::task::TaskRow;
use crate::wire::{self, Delivery, Endpoint};
use crate::{Code, LineError, NETWORK_ALLOWANCE};

/// The fault point of the outcome commit.
pub const OUTCOME_POINT: &str = "outcome-commit";

/// The longest foreign task id kept.
const MAX_FOREIGN_ID_BYTES: usize = 256;

/// Which exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Physical {
    /// `SendMessage`.
    Submit,
    /// `GetTask`.
    Poll,
    /// `CancelTask`.
    Cancel,
}

impl Physical {
    fn operation(self) -> Operation {
        match self {
            Physical::Submit => Operation::Submit,
            Physical::Poll => Operation::Poll,
            Physical::Cancel => Operation::Cancel,
        }
    }
}

/// A settled exchange, as the session answers it.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The task's status afterwards.
    pub status: String,
    /// For a cancel: `acknowledged` or `not_cancelable`.
    pub remote: &'static str,
}

/// The enrolled endpoint of an enrollment, its CA file re-read and checked against the digest
/// pinned at enrollment (`ca_changed`).
pub fn endpoint_of(conn: &Connection, enrollment_id: &str) -> Result<Endpoint, LineError> {
    let row: (String, String, i64, String, String, String) = conn
        .query_row(
            "SELECT address, hostname, port, path, ca_file, ca_sha256 FROM line_peer \
             WHERE enrollment_id = ?1",
            [enrollment_id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .map_err(|e| io("cannot read the enrollment", e))?;
    let (address, hostname, port, path, ca_file, pinned) = row;
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

/// The A2A 1.0 task state as the line names it.
fn local_state(state: &str) -> Option<&'static str> {
    Some(match state {
        "TASK_STATE_SUBMITTED" => "submitted",
        "TASK_STATE_WORKING" => "working",
        "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED" => "interrupted",
        "TASK_STATE_COMPLETED" => "completed",
        "TASK_STATE_FAILED" => "failed",
        "TASK_STATE_REJECTED" => "rejected",
        "TASK_STATE_CANCELED" => "canceled",
        _ => return None,
    })
}

/// What an authenticated response said.
enum Said {
    /// A task: its id, A2A state, retained text parts, omitted parts.
    Task {
        id: String,
        state: String,
        parts: Vec<serde_json::Value>,
        omitted: Vec<serde_json::Value>,
    },
    /// A JSON-RPC error or a non-200 status: the code.
    Refused(serde_json::Value),
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
    let _ = started.conn.execute(
        "UPDATE line_exchange SET outcome = 'unknown', settled_at_ms = ?2 \
         WHERE exchange_id = ?1 AND outcome IS NULL",
        params![exchange_id, now],
    );
    if physical == Physical::Submit {
        let _ = started.conn.execute(
            "UPDATE line_task SET status = 'unknown' WHERE task_id = ?1 AND status = 'claimed'",
            [&task.task_id],
        );
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
    let policy = &started.config.policy;
    let network = i64::from(policy.network_seconds);
    let key = started.identities.workload.signing_key();
    let signer = wire::Signer {
        key,
        key_id: &started.config.signing_key_id,
        issuer: &started.config.workload_id,
        audience: &task.selectors.peer_id,
    };
    let now_s = started.faults.now_ms().div_euclid(1000);
    let signed = wire::sign(endpoint, &body, &signer, now_s, network)?;
    let authority = Authority {
        generation: policy.generation,
        limits: policy.limits,
        host_key: started.installation_id.clone(),
    };
    let charged = ledger::charge(
        &mut started.conn,
        &authority,
        &Charge {
            task_id: &task.task_id,
            operation: physical.operation(),
            application_bytes: body.len() as u64,
            peer_id: &task.selectors.peer_id,
            purpose: &task.selectors.purpose,
            task_schema: &task.selectors.task_schema,
            request: Some((&signed.nonce, &signed.signature_sha256)),
        },
        &started.faults,
    )?;
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
    let version = Cell::new(None);
    let lookup_failed = Cell::new(false);
    let lookup = |key_id: &str| -> Option<PublicKey> {
        match authority::verification_key(
            &started.conn,
            fences,
            &task.selectors.peer_id,
            key_id,
            now_ms,
        ) {
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
    let verified = httpsig::verify_response(
        &Profile::line_response(),
        &received.response,
        &signed.request,
        &received.body,
        now_ms,
        lookup,
    );
    let field = |name: &str| {
        received
            .response
            .headers
            .values(name)
            .next()
            .map(|v| v.to_vec())
    };
    let authentic = match &verified {
        Ok(v) => {
            !lookup_failed.get()
                && field("intercom-issuer").as_deref() == Some(task.selectors.peer_id.as_bytes())
                && field("intercom-audience").as_deref()
                    == Some(started.config.workload_id.as_bytes())
                && v.created >= signed.created - Profile::line_response().max_skew_secs
                && v.nonce
                    .as_deref()
                    .is_some_and(|n| !response_nonce_seen(&started.conn, n).unwrap_or(true))
        }
        Err(_) => false,
    };
    let (Ok(verified), true, Some(key_version)) = (verified, authentic, version.get()) else {
        settle_unknown(started, &charged.exchange_id, task, physical);
        return Err(LineError::unknown(&task.task_id));
    };
    let Some(said) = said(
        received.response.status(),
        &received.body,
        &rpc_id_of(&body),
        physical,
    ) else {
        settle_unknown(started, &charged.exchange_id, task, physical);
        return Err(LineError::unknown(&task.task_id));
    };
    // A poll or cancel answered for another foreign task is not this task's.
    if let (Said::Task { id, .. }, Some(known)) = (&said, &task.foreign_task_id)
        && id != known
    {
        settle_unknown(started, &charged.exchange_id, task, physical);
        return Err(LineError::unknown(&task.task_id));
    }
    let settled = Settled {
        exchange_id: &charged.exchange_id,
        accepted: received.bytes,
        key_version,
        nonce: verified.nonce.as_deref().unwrap_or_default(),
        response_sha256: hex(&Sha256::digest(&received.body)),
        now_ms,
    };
    commit_outcome(started, task, physical, &settled, said)
}

fn response_nonce_seen(conn: &Connection, nonce: &str) -> Result<bool, LineError> {
    conn.query_row(
        "SELECT count(*) FROM line_exchange WHERE response_nonce = ?1",
        [nonce],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(|e| io("cannot read response nonces", e))
}

fn undelivered(
    started: &mut Started,
    exchange_id: &str,
    task: &TaskRow,
    physical: Physical,
    why: &str,
) -> Result<Outcome, LineError> {
    let now = started.faults.now_ms();
    let settled = (|| {
        let tx = started
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| io("cannot begin settling", e))?;
        tx.execute(
            "UPDATE line_exchange SET outcome = 'undelivered', settled_at_ms = ?2 \
             WHERE exchange_id = ?1 AND outcome IS NULL",
            params![exchange_id, now],
        )
        .map_err(|e| io("cannot settle the exchange", e))?;
        ledger::accept_in(&tx, exchange_id, 0)?;
        if physical == Physical::Submit {
            tx.execute(
                "UPDATE line_task SET status = 'undelivered' WHERE task_id = ?1 \
                 AND status = 'claimed'",
                [&task.task_id],
            )
            .map_err(|e| io("cannot settle the task", e))?;
        }
        tx.commit().map_err(|_| LineError::unknown(&task.task_id))
    })();
    settled?;
    let status = if physical == Physical::Submit {
        "undelivered"
    } else {
        task.status.as_str()
    };
    Err(LineError::new(
        Code::TransportFailed,
        format!("nothing reached the peer: {why}"),
    )
    .with("task_id", &*task.task_id)
    .with("status", status))
}

struct Settled<'a> {
    exchange_id: &'a str,
    accepted: u64,
    key_version: i64,
    nonce: &'a str,
    response_sha256: String,
    now_ms: i64,
}

/// The outcome commit: one transaction, under the fault point [`OUTCOME_POINT`].
fn commit_outcome(
    started: &mut Started,
    task: &TaskRow,
    physical: Physical,
    settled: &Settled<'_>,
    said: Said,
) -> Result<Outcome, LineError> {
    let task_id = task.task_id.as_str();
    let tx = started
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|_| LineError::unknown(task_id))?;
    let current: (Option<String>, String, i64, i64) = tx
        .query_row(
            "SELECT foreign_task_id, status, adoption_open, expires_at_ms FROM line_task \
             WHERE task_id = ?1",
            [task_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(|_| LineError::unknown(task_id))?;
    let (foreign, status, adoption_open, expires_at) = current;
    let outcome = match &said {
        Said::Task { .. } => "authenticated",
        Said::Refused(_) => "peer_refused",
    };
    let update = tx.execute(
        "UPDATE line_exchange SET outcome = ?2, response_key_version = ?3, response_nonce = ?4, \
         settled_at_ms = ?5 WHERE exchange_id = ?1 AND outcome IS NULL",
        params![
            settled.exchange_id,
            outcome,
            settled.key_version,
            settled.nonce,
            settled.now_ms
        ],
    );
    if update.is_err() {
        return Err(LineError::unknown(task_id));
    }
    ledger::accept_in(&tx, settled.exchange_id, settled.accepted)
        .map_err(|_| LineError::unknown(task_id))?;
    let mut remote = "acknowledged";
    let new_status = match &said {
        Said::Refused(code) => {
            let code_num = code.as_i64();
            if physical == Physical::Cancel && code_num == Some(-32002) {
                remote = "not_cancelable";
                status.clone()
            } else {
                if physical == Physical::Submit {
                    let _ = tx.execute(
                        "UPDATE line_task SET status = 'refused' WHERE task_id = ?1",
                        [task_id],
                    );
                }
                started
                    .faults
                    .commit(tx, OUTCOME_POINT, || LineError::unknown(task_id))?;
                return Err(LineError::new(
                    Code::PeerRefused,
                    "the peer refused, in a signed answer",
                )
                .with("task_id", task_id)
                .with("code", code.clone())
                .with(
                    "status",
                    if physical == Physical::Submit {
                        "refused"
                    } else {
                        status.as_str()
                    },
                ));
            }
        }
        Said::Task {
            id,
            state,
            parts,
            omitted,
        } => {
            let observed = local_state(state).unwrap_or("unknown");
            let terminal = matches!(observed, "completed" | "failed" | "rejected" | "canceled");
            let live = settled.now_ms < expires_at;
            let adopt = terminal && adoption_open == 1 && live;
            let already_terminal = crate::task::TERMINAL.contains(&status.as_str());
            let observation_id = uuid::Uuid::new_v4().hyphenated().to_string();
            let result = (adopt && observed == "completed")
                .then(|| serde_json::json!({"parts": parts}).to_string());
            let omitted_json = (!omitted.is_empty())
                .then(|| serde_json::Value::Array(omitted.clone()).to_string());
            tx.execute(
                "INSERT INTO line_observation (observation_id, task_id, exchange_id, \
                 foreign_task_id, foreign_state, key_version, response_sha256, adopted, \
                 result_json, omitted_parts_json, observed_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, \
                 ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    observation_id,
                    task_id,
                    settled.exchange_id,
                    id,
                    state,
                    settled.key_version,
                    settled.response_sha256,
                    i64::from(adopt),
                    result,
                    omitted_json,
                    settled.now_ms
                ],
            )
            .map_err(|_| LineError::unknown(task_id))?;
            let next = if already_terminal || !live {
                status.clone()
            } else {
                observed.to_string()
            };
            let (open, disposition) = if adopt {
                (0, "adopted".to_string())
            } else {
                (
                    adoption_open,
                    if adoption_open == 1 {
                        "open".to_string()
                    } else {
                        "adoption_closed".to_string()
                    },
                )
            };
            let foreign_id = foreign.clone().unwrap_or_else(|| id.clone());
            tx.execute(
                "UPDATE line_task SET foreign_task_id = ?2, status = ?3, adoption_open = ?4, \
                 local_disposition = ?5 WHERE task_id = ?1",
                params![task_id, foreign_id, next, open, disposition],
            )
            .map_err(|_| LineError::unknown(task_id))?;
            next
        }
    };
    started
        .faults
        .commit(tx, OUTCOME_POINT, || LineError::unknown(task_id))?;
    Ok(Outcome {
        status: new_status,
        remote,
    })
}

/// The adopted result of a task (`{"parts": [...]}`), `null` when none was adopted.
pub(crate) fn adopted_result(
    conn: &Connection,
    task_id: &str,
) -> Result<serde_json::Value, LineError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT result_json FROM line_observation WHERE task_id = ?1 AND adopted = 1",
            [task_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| io("cannot read observations", e))?
        .flatten();
    Ok(text
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null))
}

/// foreign id, state, observed at, adopted, result, omitted parts, key id.
type ObservationRow = (
    String,
    String,
    i64,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The latest authenticated observation of `task`, as `read` shows it (`null` when none).
pub(crate) fn latest_observation(
    conn: &Connection,
    task: &TaskRow,
) -> Result<serde_json::Value, LineError> {
    let row: Option<ObservationRow> = conn
        .query_row(
            "SELECT o.foreign_task_id, o.foreign_state, o.observed_at_ms, o.adopted, \
             o.result_json, o.omitted_parts_json, k.key_id FROM line_observation o \
             LEFT JOIN line_peer_key k ON k.peer_id = ?2 AND k.version = o.key_version \
             WHERE o.task_id = ?1 ORDER BY o.observed_at_ms DESC, o.rowid DESC LIMIT 1",
            params![task.task_id, task.selectors.peer_id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .optional()
        .map_err(|e| io("cannot read observations", e))?;
    let Some((foreign, state, at, adopted, result, omitted, key_id)) = row else {
        return Ok(serde_json::Value::Null);
    };
    // The adopted result, if any, is kept with the observation that adopted it.
    let adopted_result: Option<String> = conn
        .query_row(
            "SELECT result_json FROM line_observation WHERE task_id = ?1 AND adopted = 1",
            [&task.task_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| io("cannot read observations", e))?
        .flatten();
    let parse = |text: Option<String>| {
        text.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    Ok(serde_json::json!({
        "foreign_task_id": foreign,
        "state": state,
        "observed_at_ms": at,
        "key_id": key_id,
        "adopted": adopted == 1,
        "classification": "authenticated-foreign-data",
        "result": parse(result.or(adopted_result)),
        "omitted_parts": match parse(omitted) {
            serde_json::Value::Null => serde_json::json!([]),
            v => v,
        },
    }))
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
