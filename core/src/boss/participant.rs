//! Participant states: the twelve states, the terminal ones, and their two readers.

use super::{JsonObject, string_array_json};
use crate::contract::read::one_of;
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

/// The states a participant never leaves.
pub const TERMINAL_PARTICIPANT_STATES: &[&str] = &["failed", "lost", "stopped"];

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
pub fn parse_participant_state<'a>(value: &Js, path: &str) -> Result<&'a str, Failure> {
    one_of(value, PARTICIPANT_STATES, path)
}

/// `isTerminalParticipantState(state)`: membership only; anything else (even a non-string) is
/// simply not terminal.
pub fn is_terminal_participant_state(value: &Js) -> bool {
    value
        .as_str()
        .is_some_and(|s| TERMINAL_PARTICIPANT_STATES.contains(&s))
}

fn parse_state(a: Args<'_>) -> Result<Out, Failure> {
    let path = ops::path(a, 1, "$.state")?;
    parse_participant_state(a.get(0), &path)?;
    Ok(Out::Input(0))
}

fn is_terminal(a: Args<'_>) -> Result<Out, Failure> {
    let terminal = is_terminal_participant_state(a.get(0));
    Ok(Out::Json(terminal.to_string()))
}

/// This module's constants, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.raw("PARTICIPANT_STATES", &string_array_json(PARTICIPANT_STATES))
        .raw(
            "TERMINAL_PARTICIPANT_STATES",
            &string_array_json(TERMINAL_PARTICIPANT_STATES),
        )
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
        )
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseParticipantState",
        run: parse_state,
    },
    Op {
        name: "boss.isTerminalParticipantState",
        run: is_terminal,
    },
];
