//! Participant state (`./boss`, from the TypeScript core's `boss-participant-state`): the twelve
//! states and who may be dispatched, health events ([`health`]), the frozen WorkerStore v1 -> v2
//! migration ([`migration`]) and its legacy `stopping` reconciliation ([`stopping`]), the
//! evidence-guarded transition tables ([`transition`]) and the two vector corpora whose hashes
//! come from their files ([`vectors`]).
//!
//! Every reader returns a fresh value in the TypeScript member order and refuses with the
//! TypeScript path and message, checking in its order.

pub mod health;
pub mod migration;
pub mod stopping;
pub mod transition;
pub mod vectors;

use super::{JsonObject, string_array_json};
use crate::boss::store::{self, StoreVersion};
use crate::contract::read::{Read, fail, integer, one_of, string};
use crate::contract::value::write_json_string;
use crate::contract::{Args, Failure, Js, Op, Out, ops};

/// Every participant state, in the TypeScript core's order.
pub const PARTICIPANT_STATES: &[&str] = &[
    "provisioning",
    "registering",
    "ready",
    "working",
    "waiting",
    "paused",
    "stalled",
    "blocked",
    "failed",
    "lost",
    "unreachable",
    "stopped",
];

/// The states a participant never leaves within its generation.
pub const TERMINAL_PARTICIPANT_STATES: &[&str] = &["failed", "lost", "stopped"];

/// The only states work is dispatched to.
pub const PARTICIPANT_DISPATCHABLE_STATES: &[&str] = &["ready", "waiting"];

/// The nonterminal state that is read-only until registration recovers.
pub const PARTICIPANT_READ_ONLY_STATES: &[&str] = &["unreachable"];

/// The states of a WorkerStore v1 record.
pub const LEGACY_WORKER_STATES: &[&str] = &[
    "provisioning",
    "running",
    "idle",
    "needs_attention",
    "completed",
    "failed",
    "stopped",
    "lost",
    "stopping",
];

/// A health event's severities.
pub const PARTICIPANT_HEALTH_SEVERITIES: &[&str] = &["info", "warning", "error", "critical"];

/// What direct process evidence may establish for a legacy `stopping` worker.
pub const STOPPING_RECONCILIATION_OUTCOMES: &[&str] =
    &["stopped", "failed", "lost", "unresolved_after_settle"];

/// Where that evidence comes from.
pub const STOPPING_EVIDENCE_SOURCES: &[&str] = &["systemd", "cgroup", "systemd_and_cgroup"];

/// The states a blocked participant may resume to (its persisted `resumeState`).
pub const BLOCKED_RESUME_STATES: &[&str] =
    &["registering", "ready", "working", "waiting", "paused"];

/// The states a stalled participant may recover to.
pub const STALLED_RESUME_STATES: &[&str] = &["registering", "ready", "working", "waiting"];

/// `PARTICIPANT_HEALTH_EVENT_VERSION`.
pub const PARTICIPANT_HEALTH_EVENT_VERSION: i64 = 1;
/// `WORKER_STATE_MIGRATION_CONTRACT_VERSION`.
pub const WORKER_STATE_MIGRATION_CONTRACT_VERSION: i64 = 1;
/// `LEGACY_WORKER_STORE_SCHEMA_VERSION`.
pub const LEGACY_WORKER_STORE_SCHEMA_VERSION: i64 = 1;
/// `CANONICAL_WORKER_STORE_SCHEMA_VERSION`.
pub const CANONICAL_WORKER_STORE_SCHEMA_VERSION: i64 = 2;
/// `PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION`.
pub const PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION: i64 = 1;

/// `parseParticipantState(value, path = "$.state")`.
pub fn parse_participant_state(value: &Js, path: &str) -> Read<&'static str> {
    one_of(value, PARTICIPANT_STATES, path)
}

/// `isTerminalParticipantState(state)`: membership only; anything else (even a non-string) is
/// simply not terminal.
pub fn is_terminal_participant_state(value: &Js) -> bool {
    value
        .as_str()
        .is_some_and(|s| TERMINAL_PARTICIPANT_STATES.contains(&s))
}

/// `canDispatchParticipantState(value)`: a known state that is `ready` or `waiting`.
pub fn can_dispatch_participant_state(value: &Js) -> Read<bool> {
    let state = parse_participant_state(value, "$.state")?;
    Ok(PARTICIPANT_DISPATCHABLE_STATES.contains(&state))
}

/// `isParticipantStateReadOnly(value)`: a known state that is `unreachable`.
pub fn is_participant_state_read_only(value: &Js) -> Read<bool> {
    let state = parse_participant_state(value, "$.state")?;
    Ok(PARTICIPANT_READ_ONLY_STATES.contains(&state))
}

/// A version member that must be exactly `expected`: first a safe integer >= 0, then equal.
pub(crate) fn literal_integer(value: &Js, expected: i64, path: &str) -> Read<i64> {
    let parsed = integer(value, path, 0)?;
    if parsed != expected {
        return fail(
            path,
            format!("unsupported version {parsed}; expected {expected}"),
        );
    }
    Ok(expected)
}

/// `null`, or a non-empty string.
pub(crate) fn nullable_string(value: &Js, path: &str) -> Read<Option<String>> {
    match value {
        Js::Null => Ok(None),
        v => string(v, path).map(|s| Some(s.to_string())),
    }
}

/// `value` as JSON: the quoted string, or `null`.
pub(crate) fn json_or_null(value: Option<&str>) -> String {
    let mut out = String::new();
    match value {
        Some(text) => write_json_string(&mut out, text),
        None => out.push_str("null"),
    }
    out
}

/// `validateVersionedStoreRecord(value, expected, parser)` with a parser of this module: the
/// store gate, then the parser; a refusal is the gate's result object. Where the result names
/// the observed version, it is written as JSON when it can be (the Node binding replaces it by
/// the caller's own value in any case).
pub(crate) fn store_result(
    value: &Js,
    expected: i64,
    parse: impl FnOnce(&Js) -> Read<String>,
) -> String {
    store::validate(value, StoreVersion::Number(expected), |v| {
        parse(v).map(Out::Json)
    })
}

fn parse_state(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$.state")?;
    parse_participant_state(a.get(0), &path)?;
    Ok(Out::Input(0))
}

fn boolean(b: bool) -> Result<Out, Failure> {
    Ok(Out::Json(b.to_string()))
}

/// This module's constants, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    let list = |o: JsonObject, key: &str, items: &[&str]| o.raw(key, &string_array_json(items));
    let o = list(o, "PARTICIPANT_STATES", PARTICIPANT_STATES);
    let o = list(
        o,
        "TERMINAL_PARTICIPANT_STATES",
        TERMINAL_PARTICIPANT_STATES,
    );
    let o = list(o, "LEGACY_WORKER_STATES", LEGACY_WORKER_STATES);
    let o = o
        .int(
            "PARTICIPANT_HEALTH_EVENT_VERSION",
            PARTICIPANT_HEALTH_EVENT_VERSION,
        )
        .int(
            "WORKER_STATE_MIGRATION_CONTRACT_VERSION",
            WORKER_STATE_MIGRATION_CONTRACT_VERSION,
        )
        .int(
            "LEGACY_WORKER_STORE_SCHEMA_VERSION",
            LEGACY_WORKER_STORE_SCHEMA_VERSION,
        )
        .int(
            "CANONICAL_WORKER_STORE_SCHEMA_VERSION",
            CANONICAL_WORKER_STORE_SCHEMA_VERSION,
        )
        .int(
            "PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION",
            PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION,
        );
    let o = list(
        o,
        "PARTICIPANT_HEALTH_SEVERITIES",
        PARTICIPANT_HEALTH_SEVERITIES,
    );
    let o = list(
        o,
        "STOPPING_RECONCILIATION_OUTCOMES",
        STOPPING_RECONCILIATION_OUTCOMES,
    );
    let o = list(o, "STOPPING_EVIDENCE_SOURCES", STOPPING_EVIDENCE_SOURCES);
    let o = list(o, "BLOCKED_RESUME_STATES", BLOCKED_RESUME_STATES);
    let o = list(o, "STALLED_RESUME_STATES", STALLED_RESUME_STATES);
    let o = list(
        o,
        "PARTICIPANT_DISPATCHABLE_STATES",
        PARTICIPANT_DISPATCHABLE_STATES,
    );
    let o = list(
        o,
        "PARTICIPANT_READ_ONLY_STATES",
        PARTICIPANT_READ_ONLY_STATES,
    );
    o.then(transition::add_constants)
        .then(vectors::add_constants)
}

/// The operations of this module (and of its parts).
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseParticipantState",
        run: parse_state,
    },
    Op {
        name: "boss.isTerminalParticipantState",
        run: |a| boolean(is_terminal_participant_state(a.get(0))),
    },
    Op {
        name: "boss.canDispatchParticipantState",
        run: |a| boolean(can_dispatch_participant_state(a.get(0))?),
    },
    Op {
        name: "boss.isParticipantStateReadOnly",
        run: |a| boolean(is_participant_state_read_only(a.get(0))?),
    },
    Op {
        name: "boss.requiresDirectProcessEvidenceForCleanup",
        // Cleanup always consults systemd/cgroup evidence, whatever the state says.
        run: |_| boolean(true),
    },
    Op {
        name: "boss.parseParticipantHealthEventV1",
        run: health::parse_op,
    },
    Op {
        name: "boss.validateParticipantHealthEventStore",
        run: health::store_op,
    },
    Op {
        name: "boss.parseLegacyWorkerMigrationInputV1",
        run: migration::parse_input_op,
    },
    Op {
        name: "boss.validateLegacyWorkerMigrationInputStore",
        run: migration::input_store_op,
    },
    Op {
        name: "boss.migrateLegacyWorkerRecordV1",
        run: migration::migrate_op,
    },
    Op {
        name: "boss.parseLegacyStoppingReconciliationV1",
        run: stopping::parse_stopping_op,
    },
    Op {
        name: "boss.validateLegacyStoppingReconciliationStore",
        run: stopping::stopping_store_op,
    },
    Op {
        name: "boss.reconcileLegacyStoppingWorker",
        run: migration::reconcile_op,
    },
    Op {
        name: "boss.parseMigratedWorkerRecordV2",
        run: migration::parse_record_op,
    },
    Op {
        name: "boss.canDispatchMigratedWorker",
        run: migration::can_dispatch_op,
    },
    Op {
        name: "boss.parseParticipantStateTransitionEvidence",
        run: transition::parse_evidence_op,
    },
    Op {
        name: "boss.parseParticipantStateTransitionContextV1",
        run: transition::parse_context_op,
    },
    Op {
        name: "boss.validateParticipantStateTransition",
        run: transition::validate_op,
    },
    Op {
        name: "boss.participantStateVectors",
        run: vectors::state_vectors_op,
    },
    Op {
        name: "boss.participantStateTransitionVectors",
        run: vectors::transition_vectors_op,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    #[test]
    fn states_dispatch_and_read_only() {
        for state in PARTICIPANT_STATES {
            let v = Js::str(*state);
            assert_eq!(
                can_dispatch_participant_state(&v).unwrap(),
                *state == "ready" || *state == "waiting"
            );
            assert_eq!(
                is_participant_state_read_only(&v).unwrap(),
                *state == "unreachable"
            );
        }
        let refused = can_dispatch_participant_state(&js("\"newer-state\"")).unwrap_err();
        assert_eq!(refused.path.as_deref(), Some("$.state"));
        assert!(!is_terminal_participant_state(&js("1")));
        assert!(is_terminal_participant_state(&js("\"lost\"")));
    }

    #[test]
    fn literal_versions_read_as_integers_first() {
        let message = |t: &str| literal_integer(&js(t), 1, "$.v").unwrap_err().to_string();
        assert_eq!(message("2"), "$.v: unsupported version 2; expected 1");
        assert_eq!(message("-1"), "$.v: must be a safe integer >= 0");
        assert_eq!(message("\"1\""), "$.v: must be a safe integer >= 0");
    }

    #[test]
    fn store_results_name_the_observed_version() {
        let parse = |_: &Js| -> Read<String> { Ok("{}".into()) };
        assert_eq!(
            store_result(&js(r#"{"version":1}"#), 1, parse),
            r#"{"ok":true,"status":"valid","value":{}}"#
        );
        assert!(
            store_result(&js(r#"{"version":3}"#), 1, parse)
                .contains(r#""status":"unsupported_newer_version","observedVersion":3"#)
        );
        let refuse = |_: &Js| -> Read<String> { fail("$.x", "bad") };
        assert_eq!(
            store_result(&js(r#"{"version":1}"#), 1, refuse),
            concat!(
                r#"{"ok":false,"status":"corrupt","observedVersion":1,"path":"$.x","#,
                r#""message":"$.x: bad","preserveExisting":true,"mutationAllowed":false}"#
            )
        );
    }
}
