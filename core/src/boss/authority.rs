//! Authority transitions: the broker's two-phase record of a change of who holds authority over
//! a run (bind, rebind, revoke, replace, takeover, credential rotation), the event it emits
//! once a transition commits, the authority-socket request, and the two store gates.
//!
//! Each operation moves exactly one authority dimension (controller generation, Boss binding
//! epoch, participant binding epoch or subscriber binding epoch, [`epoch_field`]) strictly
//! upward, leaves the others as they were, and names exactly the target members it concerns.

use super::JsonObject;
use super::store::{self, StoreVersion};
use super::string_array_json;
use super::wire::{
    AUTHORITY_EVENT_VERSION, AUTHORITY_REQUEST_VERSION, AUTHORITY_TRANSITION_VERSION, is_string,
    literal_version,
};
use crate::contract::read::{
    Read, exact_keys, exact_record, fail, field, integer, member, one_of, optional_string,
    optional_timestamp, parse_timestamp, record, string, timestamp,
};
use crate::contract::{Failure, Js, Op, Out};

/// `AUTHORITY_TRANSITION_OPERATIONS`.
pub const AUTHORITY_TRANSITION_OPERATIONS: &[&str] = &[
    "bind_boss",
    "rebind_boss",
    "revoke_boss",
    "bind_participant",
    "rebind_participant",
    "revoke_participant",
    "replace_participant",
    "replace_manager",
    "rebind_subscriber",
    "controller_takeover",
    "rotate_credential",
];
/// `AUTHORITY_TRANSITION_STATES`.
pub const AUTHORITY_TRANSITION_STATES: &[&str] = &["prepared", "committed", "aborted"];
/// `AUTHORITY_REQUEST_OPERATIONS`.
pub const AUTHORITY_REQUEST_OPERATIONS: &[&str] = &["prepare", "commit", "abort", "query"];

/// The four authority dimensions, in the order the epoch records list them.
const EPOCH_FIELDS: [&str; 4] = [
    "controllerGeneration",
    "bossBindingEpoch",
    "participantBindingEpoch",
    "subscriberBindingEpoch",
];

/// The target members beyond `bossRunId`, in the order they are checked.
const TARGET_FIELDS: [&str; 5] = [
    "participantId",
    "replacementParticipantId",
    "controllerPrincipalId",
    "credentialId",
    "subscriberPrincipalId",
];

/// An initial bind: its prior epoch is exactly 0.
fn is_initial_bind(operation: &str) -> bool {
    matches!(operation, "bind_boss" | "bind_participant")
}

/// The dimension an operation moves.
pub fn epoch_field(operation: &str) -> &'static str {
    match operation {
        "controller_takeover" => "controllerGeneration",
        "bind_boss" | "rebind_boss" | "revoke_boss" => "bossBindingEpoch",
        "rebind_subscriber" => "subscriberBindingEpoch",
        _ => "participantBindingEpoch",
    }
}

/// The target members an operation may name besides `bossRunId`.
fn allowed_target_fields(operation: &str) -> &'static [&'static str] {
    match operation {
        "bind_participant" | "rebind_participant" | "revoke_participant" => &["participantId"],
        "replace_participant" | "replace_manager" => &["participantId", "replacementParticipantId"],
        "rebind_subscriber" => &["subscriberPrincipalId"],
        "controller_takeover" => &["controllerPrincipalId"],
        "rotate_credential" => &["participantId", "credentialId"],
        _ => &[],
    }
}

/// A target's members (each absent or a non-empty string).
#[derive(Default)]
struct Target<'v> {
    boss_run_id: Option<&'v str>,
    others: [Option<&'v str>; 5],
}

impl Target<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        if key == "bossRunId" {
            return self.boss_run_id;
        }
        let at = TARGET_FIELDS.iter().position(|k| *k == key)?;
        self.others[at]
    }
}

fn read_target<'v>(v: &'v Js, path: &str) -> Read<Target<'v>> {
    record(v, path)?;
    let mut optional = vec!["bossRunId"];
    optional.extend(TARGET_FIELDS);
    exact_keys(v, &[], &optional, path)?;
    let mut target = Target {
        boss_run_id: optional_string(field(v, "bossRunId"), &member(path, "bossRunId"))?,
        ..Target::default()
    };
    for (slot, key) in target.others.iter_mut().zip(TARGET_FIELDS) {
        *slot = optional_string(field(v, key), &member(path, key))?;
    }
    Ok(target)
}

/// An epoch record: each dimension absent or a safe integer of at least the minimum.
type Epochs = [Option<i64>; 4];

fn epoch(epochs: &Epochs, key: &str) -> Option<i64> {
    EPOCH_FIELDS
        .iter()
        .position(|k| *k == key)
        .and_then(|i| epochs[i])
}

fn read_epochs(v: &Js, path: &str, minimum: i64) -> Read<Epochs> {
    record(v, path)?;
    exact_keys(v, &[], &EPOCH_FIELDS, path)?;
    let mut epochs: Epochs = [None; 4];
    for (slot, key) in epochs.iter_mut().zip(EPOCH_FIELDS) {
        *slot = match field(v, key) {
            Js::Undefined => None,
            value => Some(integer(value, &member(path, key), minimum)?),
        };
    }
    if epochs.iter().all(Option::is_none) {
        return fail(path, "must contain at least one generation or epoch");
    }
    Ok(epochs)
}

/// The prior epochs of `operation`, read at `path` (0 allowed only for the initial binds).
fn read_prior(v: &Js, operation: &str, path: &str) -> Read<Epochs> {
    read_epochs(v, path, if is_initial_bind(operation) { 0 } else { 1 })
}

/// The prior value of the moved dimension: present, exactly 0 for an initial bind, positive
/// otherwise.
fn check_prior_epoch(operation: &str, prior: &Epochs, path: &str) -> Read<()> {
    let key = epoch_field(operation);
    let at = member(path, key);
    let Some(value) = epoch(prior, key) else {
        return fail(&at, format!("is required for {operation}"));
    };
    if is_initial_bind(operation) && value != 0 {
        return fail(&at, format!("must be exactly 0 for initial {operation}"));
    }
    if !is_initial_bind(operation) && value < 1 {
        return fail(&at, format!("must be positive for {operation}"));
    }
    Ok(())
}

/// The target an operation needs: `bossRunId` (except for a subscriber rebind), the members the
/// operation concerns, and none it does not.
fn check_target(operation: &str, target: &Target<'_>, path: &str) -> Read<()> {
    let required = |key: &str| -> Read<()> {
        match target.get(key) {
            Some(_) => Ok(()),
            None => fail(&member(path, key), format!("is required for {operation}")),
        }
    };
    if operation != "rebind_subscriber" {
        required("bossRunId")?;
    }
    if epoch_field(operation) == "participantBindingEpoch" {
        required("participantId")?;
    }
    let needs = match operation {
        "replace_participant" | "replace_manager" => Some("replacementParticipantId"),
        "controller_takeover" => Some("controllerPrincipalId"),
        "rotate_credential" => Some("credentialId"),
        "rebind_subscriber" => Some("subscriberPrincipalId"),
        _ => None,
    };
    if let Some(key) = needs {
        required(key)?;
    }
    let allowed = allowed_target_fields(operation);
    for key in TARGET_FIELDS {
        if target.get(key).is_some() && !allowed.contains(&key) {
            return fail(&member(path, key), format!("is not valid for {operation}"));
        }
    }
    Ok(())
}

/// The change from `prior` to `proposed` (an event's `resulting`; paths are `$.proposed` for
/// both, as in the TypeScript core): the moved dimension strictly increases, the target fits,
/// every dimension is present on both sides or neither, and the others keep their values.
fn check_epoch_change(
    operation: &str,
    target: &Target<'_>,
    prior: &Epochs,
    proposed: &Epochs,
) -> Read<()> {
    let moved = epoch_field(operation);
    check_prior_epoch(operation, prior, "$.prior")?;
    match (epoch(prior, moved), epoch(proposed, moved)) {
        (Some(before), Some(after)) if after > before => {}
        _ => {
            return fail(
                &member("$.proposed", moved),
                format!("must monotonically increase {moved}"),
            );
        }
    }
    check_target(operation, target, "$.target")?;
    for (i, key) in EPOCH_FIELDS.into_iter().enumerate() {
        let (before, after) = (prior[i], proposed[i]);
        if before.is_some() != after.is_some() {
            return fail(
                &member("$.proposed", key),
                "must be paired with the prior value",
            );
        }
        if key != moved && before.is_some() && after != before {
            return fail(
                &member("$.proposed", key),
                "unaffected authority dimensions must remain unchanged",
            );
        }
    }
    Ok(())
}

fn millis(text: &str) -> i64 {
    parse_timestamp(text).expect("a timestamp the reader accepted")
}

/// `parseAuthorityTransitionRecord`'s checks.
pub fn check_transition_record(v: &Js) -> Read<()> {
    exact_record(
        v,
        &[
            "version",
            "authorityTransitionId",
            "expectedBrokerRevision",
            "brokerRevision",
            "operation",
            "target",
            "prior",
            "proposed",
            "idempotencyKey",
            "state",
            "prepareToken",
            "preparedAt",
        ],
        &["committedAt", "abortedAt", "abortReason"],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        AUTHORITY_TRANSITION_VERSION,
        "$.version",
    )?;
    string(field(v, "authorityTransitionId"), "$.authorityTransitionId")?;
    let expected = integer(
        field(v, "expectedBrokerRevision"),
        "$.expectedBrokerRevision",
        0,
    )?;
    let revision = integer(field(v, "brokerRevision"), "$.brokerRevision", 0)?;
    if revision <= expected {
        return fail(
            "$.brokerRevision",
            "must be later than expectedBrokerRevision after durable prepare",
        );
    }
    let operation = one_of(
        field(v, "operation"),
        AUTHORITY_TRANSITION_OPERATIONS,
        "$.operation",
    )?;
    let target = read_target(field(v, "target"), "$.target")?;
    let prior = read_prior(field(v, "prior"), operation, "$.prior")?;
    let proposed = read_epochs(field(v, "proposed"), "$.proposed", 1)?;
    check_epoch_change(operation, &target, &prior, &proposed)?;
    string(field(v, "idempotencyKey"), "$.idempotencyKey")?;
    let state = one_of(field(v, "state"), AUTHORITY_TRANSITION_STATES, "$.state")?;
    string(field(v, "prepareToken"), "$.prepareToken")?;
    let prepared = millis(timestamp(field(v, "preparedAt"), "$.preparedAt")?);
    let committed = optional_timestamp(field(v, "committedAt"), "$.committedAt")?;
    let aborted = optional_timestamp(field(v, "abortedAt"), "$.abortedAt")?;
    let reason = optional_string(field(v, "abortReason"), "$.abortReason")?;
    match state {
        "committed" => {
            if committed.is_none() {
                return fail("$.committedAt", "is required for a committed transition");
            }
            if aborted.is_some() || reason.is_some() {
                return fail("$", "committed transition cannot be aborted");
            }
        }
        "aborted" => {
            if aborted.is_none() || reason.is_none() {
                return fail("$", "aborted transition requires abortedAt and abortReason");
            }
            if committed.is_some() {
                return fail("$", "aborted transition cannot have commit fields");
            }
        }
        _ => {
            if committed.is_some() || aborted.is_some() || reason.is_some() {
                return fail("$", "prepared transition cannot have terminal fields");
            }
        }
    }
    if committed.is_some_and(|at| millis(at) < prepared) {
        return fail("$.committedAt", "must not precede preparedAt");
    }
    if aborted.is_some_and(|at| millis(at) < prepared) {
        return fail("$.abortedAt", "must not precede preparedAt");
    }
    Ok(())
}

/// `parseAuthorityTransitionRecord`: the record itself.
pub fn parse_transition_record(v: &Js) -> Result<Out, Failure> {
    check_transition_record(v).map(|()| Out::Input(0))
}

/// `parseAuthorityTransitionEvent`'s checks.
pub fn check_transition_event(v: &Js) -> Read<()> {
    exact_record(
        v,
        &[
            "version",
            "eventId",
            "authorityTransitionId",
            "brokerRevision",
            "operation",
            "state",
            "target",
            "prior",
            "resulting",
            "occurredAt",
        ],
        &["bossRunId"],
        "$",
    )?;
    literal_version(field(v, "version"), AUTHORITY_EVENT_VERSION, "$.version")?;
    string(field(v, "eventId"), "$.eventId")?;
    let run = optional_string(field(v, "bossRunId"), "$.bossRunId")?;
    string(field(v, "authorityTransitionId"), "$.authorityTransitionId")?;
    integer(field(v, "brokerRevision"), "$.brokerRevision", 0)?;
    let operation = one_of(
        field(v, "operation"),
        AUTHORITY_TRANSITION_OPERATIONS,
        "$.operation",
    )?;
    if !is_string(field(v, "state"), "committed") {
        return fail(
            "$.state",
            "authority events are emitted only for committed transitions",
        );
    }
    let target = read_target(field(v, "target"), "$.target")?;
    if target.boss_run_id != run {
        return fail("$.target.bossRunId", "must match bossRunId");
    }
    let prior = read_prior(field(v, "prior"), operation, "$.prior")?;
    let resulting = read_epochs(field(v, "resulting"), "$.resulting", 1)?;
    check_epoch_change(operation, &target, &prior, &resulting)?;
    timestamp(field(v, "occurredAt"), "$.occurredAt")?;
    Ok(())
}

/// `parseAuthorityTransitionEvent`: the event itself.
pub fn parse_transition_event(v: &Js) -> Result<Out, Failure> {
    check_transition_event(v).map(|()| Out::Input(0))
}

/// `parseAuthorityTransitionRequest`'s checks: the envelope, then the payload of its operation
/// (prepare: the requested operation, its target and prior epochs; commit: the prepare token;
/// abort: the token and a reason; query: nothing).
pub fn check_transition_request(v: &Js) -> Read<()> {
    exact_record(
        v,
        &[
            "version",
            "operation",
            "requestId",
            "idempotencyKey",
            "authorityTransitionId",
            "expectedBrokerRevision",
            "payload",
        ],
        &[],
        "$",
    )?;
    literal_version(field(v, "version"), AUTHORITY_REQUEST_VERSION, "$.version")?;
    let operation = one_of(
        field(v, "operation"),
        AUTHORITY_REQUEST_OPERATIONS,
        "$.operation",
    )?;
    string(field(v, "requestId"), "$.requestId")?;
    string(field(v, "idempotencyKey"), "$.idempotencyKey")?;
    string(field(v, "authorityTransitionId"), "$.authorityTransitionId")?;
    integer(
        field(v, "expectedBrokerRevision"),
        "$.expectedBrokerRevision",
        0,
    )?;
    let payload = field(v, "payload");
    record(payload, "$.payload")?;
    let keys: &[&str] = match operation {
        "prepare" => &["requestedOperation", "target", "prior"],
        "commit" => &["prepareToken"],
        "abort" => &["prepareToken", "reason"],
        _ => &[],
    };
    exact_keys(payload, keys, &[], "$.payload")?;
    match operation {
        "prepare" => {
            let requested = one_of(
                field(payload, "requestedOperation"),
                AUTHORITY_TRANSITION_OPERATIONS,
                "$.payload.requestedOperation",
            )?;
            let target = read_target(field(payload, "target"), "$.payload.target")?;
            let prior = read_prior(field(payload, "prior"), requested, "$.payload.prior")?;
            check_prior_epoch(requested, &prior, "$.payload.prior")?;
            check_target(requested, &target, "$.payload.target")?;
        }
        "commit" | "abort" => {
            string(field(payload, "prepareToken"), "$.payload.prepareToken")?;
            if operation == "abort" {
                string(field(payload, "reason"), "$.payload.reason")?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The constants of this module, added to `boss.constants`.
pub(crate) fn add_constants(object: JsonObject) -> JsonObject {
    object
        .raw(
            "AUTHORITY_TRANSITION_OPERATIONS",
            &string_array_json(AUTHORITY_TRANSITION_OPERATIONS),
        )
        .raw(
            "AUTHORITY_TRANSITION_STATES",
            &string_array_json(AUTHORITY_TRANSITION_STATES),
        )
        .raw(
            "AUTHORITY_REQUEST_OPERATIONS",
            &string_array_json(AUTHORITY_REQUEST_OPERATIONS),
        )
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseAuthorityTransitionRecord",
        run: |a| parse_transition_record(a.get(0)),
    },
    Op {
        name: "boss.parseAuthorityTransitionEvent",
        run: |a| parse_transition_event(a.get(0)),
    },
    Op {
        name: "boss.parseAuthorityTransitionRequest",
        run: |a| check_transition_request(a.get(0)).map(|()| Out::Input(0)),
    },
    Op {
        name: "boss.validateAuthorityTransitionStore",
        run: |a| {
            store::answer(
                a,
                StoreVersion::Text(AUTHORITY_TRANSITION_VERSION),
                parse_transition_record,
            )
        },
    },
    Op {
        name: "boss.validateAuthorityEventStore",
        run: |a| {
            store::answer(
                a,
                StoreVersion::Text(AUTHORITY_EVENT_VERSION),
                parse_transition_event,
            )
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn message(check: fn(&Js) -> Read<()>, text: &str) -> String {
        match check(&Js::parse_json(text).unwrap()) {
            Ok(()) => "ok".into(),
            Err(f) => f.message(),
        }
    }

    const RECORD: &str = r#"{"version":"boss.authority-transition.v1","authorityTransitionId":"t",
        "expectedBrokerRevision":12,"brokerRevision":13,"operation":"replace_manager",
        "target":{"bossRunId":"run-a","participantId":"m-a","replacementParticipantId":"m-b"},
        "prior":{"participantBindingEpoch":4},"proposed":{"participantBindingEpoch":5},
        "idempotencyKey":"k","state":"prepared","prepareToken":"p",
        "preparedAt":"2026-07-28T12:00:00.000Z"}"#;

    #[test]
    fn records_move_one_dimension_up() {
        assert_eq!(message(check_transition_record, RECORD), "ok");
        let with = |from: &str, to: &str| RECORD.replace(from, to);
        assert_eq!(
            message(
                check_transition_record,
                &with(
                    r#""proposed":{"participantBindingEpoch":5}"#,
                    r#""proposed":{"participantBindingEpoch":4}"#
                )
            ),
            concat!(
                "$.proposed.participantBindingEpoch: ",
                "must monotonically increase participantBindingEpoch"
            )
        );
        assert_eq!(
            message(
                check_transition_record,
                &with(
                    r#""prior":{"participantBindingEpoch":4}"#,
                    r#""prior":{"participantBindingEpoch":4,"bossBindingEpoch":2}"#
                )
            ),
            "$.proposed.bossBindingEpoch: must be paired with the prior value"
        );
        assert_eq!(
            message(
                check_transition_record,
                &with(
                    r#","replacementParticipantId":"m-b""#,
                    r#","credentialId":"c""#
                )
            ),
            "$.target.replacementParticipantId: is required for replace_manager"
        );
        assert_eq!(
            message(
                check_transition_record,
                &with(r#""prior":{"participantBindingEpoch":4}"#, r#""prior":{}"#)
            ),
            "$.prior: must contain at least one generation or epoch"
        );
    }

    #[test]
    fn requests_check_their_payload() {
        let request = |operation: &str, payload: &str| {
            format!(
                r#"{{"version":"boss.authority-request.v1","operation":"{operation}",
                "requestId":"r",
                "idempotencyKey":"k","authorityTransitionId":"t","expectedBrokerRevision":0,
                "payload":{payload}}}"#
            )
        };
        assert_eq!(
            message(check_transition_request, &request("query", "{}")),
            "ok"
        );
        assert_eq!(
            message(
                check_transition_request,
                &request("abort", r#"{"prepareToken":"p"}"#)
            ),
            "$.payload.reason: is required"
        );
        assert_eq!(
            message(
                check_transition_request,
                &request(
                    "prepare",
                    r#"{"requestedOperation":"controller_takeover","target":{"bossRunId":"r"},
                    "prior":{"controllerGeneration":1}}"#
                )
            ),
            "$.payload.target.controllerPrincipalId: is required for controller_takeover"
        );
        assert_eq!(
            message(check_transition_request, &request("commit", "[]")),
            "$.payload: must be a plain object"
        );
    }
}
