//! Authenticated activity, active-operation and external-wait leases, their renewals, and
//! smart-inactivity suppression.

use super::{
    ACTIVE_OPERATION_LEASE_VERSION, ACTIVITY_KINDS, ACTIVITY_RECORD_VERSION, ACTIVITY_TYPES,
    EXTERNAL_WAIT_LEASE_VERSION, MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT, OPERATION_LEASE_STATES, Rec,
    WAIT_LEASE_STATES, WAIT_SOURCE_KINDS, get, millis, num, same, text,
};
use crate::contract::read::{
    Read, exact_keys, fail, field, hex_digest, integer, member, one_of, optional_string,
    optional_timestamp, record, string, timestamp,
};
use crate::contract::value::is_safe_integer;
use crate::contract::{Failure, Js};

const MEANINGFUL_TYPES: &[&str] = &[
    "turn",
    "tool",
    "progress",
    "checkpoint",
    "assignment",
    "state_transition",
];

/// `version` must be a non-empty string equal to `expected`.
fn version(v: &Js, expected: &str) -> Read<()> {
    let version = string(field(v, "version"), "$.version")?;
    if version != expected {
        return fail("$.version", format!("unsupported version: {version}"));
    }
    Ok(())
}

fn s(v: &Js, key: &str) -> Read<Js> {
    string(field(v, key), &member("$", key)).map(Js::str)
}

fn n(v: &Js, key: &str, minimum: i64) -> Read<Js> {
    integer(field(v, key), &member("$", key), minimum).map(num)
}

fn t<'v>(v: &'v Js, key: &str) -> Read<&'v str> {
    timestamp(field(v, key), &member("$", key))
}

/// `parseAuthenticatedActivity`: the activity kind must match its type (meaningful work or
/// liveness).
pub fn parse_authenticated_activity(v: &Js) -> Read<Js> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "activityId",
            "workerId",
            "workerGeneration",
            "sourceEventId",
            "participantId",
            "bindingEpoch",
            "kind",
            "activityType",
            "occurredAt",
        ],
        &[],
        "$",
    )?;
    version(v, ACTIVITY_RECORD_VERSION)?;
    let kind = one_of(field(v, "kind"), ACTIVITY_KINDS, "$.kind")?;
    let activity_type = one_of(field(v, "activityType"), ACTIVITY_TYPES, "$.activityType")?;
    if (kind == "meaningful") != MEANINGFUL_TYPES.contains(&activity_type) {
        return fail("$.activityType", format!("is not {kind} activity"));
    }
    Ok(Rec::new()
        .put("version", Js::str(ACTIVITY_RECORD_VERSION))
        .put("activityId", s(v, "activityId")?)
        .put("workerId", s(v, "workerId")?)
        .put("workerGeneration", n(v, "workerGeneration", 1)?)
        .put("sourceEventId", s(v, "sourceEventId")?)
        .put("participantId", s(v, "participantId")?)
        .put("bindingEpoch", n(v, "bindingEpoch", 1)?)
        .put("kind", Js::str(kind))
        .put("activityType", Js::str(activity_type))
        .put("occurredAt", Js::str(t(v, "occurredAt")?))
        .build())
}

/// The five lease timestamps, read in the TypeScript order.
struct Bounds<'v> {
    started: &'v str,
    renew_by: &'v str,
    max_until: &'v str,
    hard: &'v str,
    max_runtime: &'v str,
}

fn bounds(v: &Js) -> Read<Bounds<'_>> {
    Ok(Bounds {
        started: t(v, "startedAt")?,
        renew_by: t(v, "renewBy")?,
        max_until: t(v, "maxUntil")?,
        hard: t(v, "hardWorkerLeaseExpiresAt")?,
        max_runtime: t(v, "maxRuntimeAt")?,
    })
}

impl Bounds<'_> {
    /// `startedAt <= renewBy <= maxUntil <= bound`.
    fn ordered(&self, bound: i64) -> bool {
        millis(self.started) <= millis(self.renew_by)
            && millis(self.renew_by) <= millis(self.max_until)
            && millis(self.max_until) <= bound
    }
}

/// `parseActiveOperationLease`: bounded by the hard worker lease and the run's MaxRuntime.
pub fn parse_active_operation_lease(v: &Js) -> Read<Js> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "leaseId",
            "workerId",
            "workerGeneration",
            "invocationId",
            "processId",
            "cgroupIdentity",
            "startedAt",
            "renewBy",
            "maxUntil",
            "hardWorkerLeaseExpiresAt",
            "maxRuntimeAt",
            "state",
        ],
        &[],
        "$",
    )?;
    version(v, ACTIVE_OPERATION_LEASE_VERSION)?;
    let b = bounds(v)?;
    if !b.ordered(millis(b.hard).min(millis(b.max_runtime))) {
        return fail(
            "$.maxUntil",
            "must satisfy startedAt <= renewBy <= maxUntil <= min(hard worker lease, MaxRuntime)",
        );
    }
    Ok(Rec::new()
        .put("version", Js::str(ACTIVE_OPERATION_LEASE_VERSION))
        .put("leaseId", s(v, "leaseId")?)
        .put("workerId", s(v, "workerId")?)
        .put("workerGeneration", n(v, "workerGeneration", 1)?)
        .put("invocationId", s(v, "invocationId")?)
        .put("processId", n(v, "processId", 1)?)
        .put("cgroupIdentity", s(v, "cgroupIdentity")?)
        .put("startedAt", Js::str(b.started))
        .put("renewBy", Js::str(b.renew_by))
        .put("maxUntil", Js::str(b.max_until))
        .put("hardWorkerLeaseExpiresAt", Js::str(b.hard))
        .put("maxRuntimeAt", Js::str(b.max_runtime))
        .put(
            "state",
            Js::str(one_of(
                field(v, "state"),
                OPERATION_LEASE_STATES,
                "$.state",
            )?),
        )
        .build())
}

/// The `maxExternalWaitLeaseMs` argument: the default when `undefined`, else a positive safe
/// integer.
fn ceiling(value: &Js) -> Read<i64> {
    match value {
        Js::Undefined => Ok(MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT),
        Js::Num(x) if is_safe_integer(*x) && *x >= 1.0 => Ok(*x as i64),
        _ => fail("maxExternalWaitLeaseMs", "must be a positive safe integer"),
    }
}

/// `parseExternalWaitLease(value)` with the default ceiling.
pub fn parse_external_wait_lease(v: &Js) -> Read<Js> {
    parse_external_wait_lease_with(v, &Js::Undefined)
}

/// `parseExternalWaitLease(value, maxExternalWaitLeaseMs)`.
pub fn parse_external_wait_lease_with(v: &Js, max: &Js) -> Read<Js> {
    let max = ceiling(max)?;
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "leaseId",
            "workerId",
            "workerGeneration",
            "sourceKind",
            "sourceRefHash",
            "startedAt",
            "renewBy",
            "maxUntil",
            "hardWorkerLeaseExpiresAt",
            "maxRuntimeAt",
            "state",
        ],
        &["processIdentity", "expectedWakeAt"],
        "$",
    )?;
    version(v, EXTERNAL_WAIT_LEASE_VERSION)?;
    let b = bounds(v)?;
    // startedAt + max is exact in i64; beyond 2^53 it exceeds every timestamp either way.
    let bound = (millis(b.started) + max)
        .min(millis(b.hard))
        .min(millis(b.max_runtime));
    if !b.ordered(bound) {
        return fail(
            "$.maxUntil",
            concat!(
                "must satisfy startedAt <= renewBy <= maxUntil <= ",
                "min(configured ceiling, hard worker lease, MaxRuntime)"
            ),
        );
    }
    let wake = optional_timestamp(field(v, "expectedWakeAt"), "$.expectedWakeAt")?;
    if wake.is_some_and(|w| millis(w) < millis(b.started) || millis(w) > millis(b.max_until)) {
        return fail("$.expectedWakeAt", "must be between startedAt and maxUntil");
    }
    let source = one_of(field(v, "sourceKind"), WAIT_SOURCE_KINDS, "$.sourceKind")?;
    let process = optional_string(field(v, "processIdentity"), "$.processIdentity")?;
    if source == "process" && process.is_none() {
        return fail("$.processIdentity", "is required for process waits");
    }
    Ok(Rec::new()
        .put("version", Js::str(EXTERNAL_WAIT_LEASE_VERSION))
        .put("leaseId", s(v, "leaseId")?)
        .put("workerId", s(v, "workerId")?)
        .put("workerGeneration", n(v, "workerGeneration", 1)?)
        .put("sourceKind", Js::str(source))
        .put(
            "sourceRefHash",
            Js::str(hex_digest(field(v, "sourceRefHash"), "$.sourceRefHash")?),
        )
        .opt("processIdentity", process.map(Js::str))
        .put("startedAt", Js::str(b.started))
        .put("renewBy", Js::str(b.renew_by))
        .put("maxUntil", Js::str(b.max_until))
        .opt("expectedWakeAt", wake.map(Js::str))
        .put("hardWorkerLeaseExpiresAt", Js::str(b.hard))
        .put("maxRuntimeAt", Js::str(b.max_runtime))
        .put(
            "state",
            Js::str(one_of(field(v, "state"), WAIT_LEASE_STATES, "$.state")?),
        )
        .build())
}

/// The checks both renewals share, over the two parsed leases: the fixed fields, a renewal
/// deadline that does not move back, and no way out of a terminal state.
fn renewal(previous: &Js, next: Js, fixed: &[&str]) -> Read<Js> {
    for key in fixed {
        if !same(get(previous, key), get(&next, key)) {
            return fail(&member("$", key), "cannot change during renewal");
        }
    }
    let deadline = |lease: &Js| millis(text(lease, "renewBy").expect("a parsed lease"));
    if deadline(&next) < deadline(previous) {
        return fail("$.renewBy", "cannot move backwards during renewal");
    }
    let before = text(previous, "state").expect("a parsed lease");
    let after = text(&next, "state").expect("a parsed lease");
    if before != "active" && after != before {
        return fail(
            "$.state",
            format!("terminal lease state {before} cannot transition to {after}"),
        );
    }
    Ok(next)
}

/// `validateActiveOperationLeaseRenewal(previous, next)`: the parsed `next`.
pub fn validate_operation_renewal(previous: &Js, next: &Js) -> Read<Js> {
    let previous = parse_active_operation_lease(previous)?;
    let next = parse_active_operation_lease(next)?;
    renewal(
        &previous,
        next,
        &[
            "version",
            "leaseId",
            "workerId",
            "workerGeneration",
            "invocationId",
            "processId",
            "cgroupIdentity",
            "startedAt",
            "maxUntil",
            "hardWorkerLeaseExpiresAt",
            "maxRuntimeAt",
        ],
    )
}

/// `validateExternalWaitLeaseRenewal(previous, next, maxExternalWaitLeaseMs)`: the parsed `next`.
pub fn validate_wait_renewal(previous: &Js, next: &Js, max: &Js) -> Read<Js> {
    let previous = parse_external_wait_lease_with(previous, max)?;
    let next = parse_external_wait_lease_with(next, max)?;
    renewal(
        &previous,
        next,
        &[
            "version",
            "leaseId",
            "workerId",
            "workerGeneration",
            "sourceKind",
            "sourceRefHash",
            "processIdentity",
            "startedAt",
            "maxUntil",
            "hardWorkerLeaseExpiresAt",
            "maxRuntimeAt",
        ],
    )
}

/// `object.key` as JavaScript reads it from a value that is not validated: `undefined` for a
/// primitive, for a missing member and (not running it) for an accessor or a proxy; a TypeError
/// for `undefined` and `null`.
fn property<'v>(object: &'v Js, key: &str) -> Result<&'v Js, Failure> {
    match object {
        Js::Undefined | Js::Null => Err(Failure::type_error(format!(
            "Cannot read properties of {} (reading '{key}')",
            object.js_string()
        ))),
        Js::Object(_) => Ok(match object.get(key) {
            Some(Js::Hidden) | None => &Js::Undefined,
            Some(value) => value,
        }),
        _ => Ok(&Js::Undefined),
    }
}

/// `optional?.key`.
fn optional_property<'v>(object: &'v Js, key: &str) -> &'v Js {
    match object {
        Js::Undefined | Js::Null => &Js::Undefined,
        other => property(other, key).unwrap_or(&Js::Undefined),
    }
}

/// Whether `now` lies in `[startedAt, min(renewBy, maxUntil)]` of a parsed lease.
fn within(lease: &Js, now: i64) -> bool {
    let at = |key: &str| millis(text(lease, key).expect("a parsed lease"));
    now >= at("startedAt") && now <= at("renewBy") && now <= at("maxUntil")
}

/// `isSmartInactivitySuppressed(evidence)`: an active, current operation lease whose live
/// invocation matches it exactly, or else an active, current external wait whose source is not
/// known to have ended.
pub fn is_smart_inactivity_suppressed(evidence: &Js) -> Result<bool, Failure> {
    let now = millis(timestamp(property(evidence, "now")?, "$.now")?);
    let worker = property(evidence, "workerId")?;
    let generation = property(evidence, "workerGeneration")?;
    let current_worker = |lease: &Js| {
        text(lease, "state") == Some("active")
            && same(get(lease, "workerId"), worker)
            && same(get(lease, "workerGeneration"), generation)
    };
    let operation = match property(evidence, "activeOperation")? {
        Js::Undefined => None,
        lease => Some(parse_active_operation_lease(lease)?),
    };
    let observed = property(evidence, "currentOperation")?;
    if let Some(operation) = &operation
        && current_worker(operation)
        && matches!(optional_property(observed, "live"), Js::Bool(true))
        && ["invocationId", "processId", "cgroupIdentity"]
            .iter()
            .all(|key| same(optional_property(observed, key), get(operation, key)))
        && within(operation, now)
    {
        return Ok(true);
    }
    let wait = match property(evidence, "externalWait")? {
        Js::Undefined => None,
        lease => Some(parse_external_wait_lease(lease)?),
    };
    Ok(wait.is_some_and(|wait| {
        current_worker(&wait)
            && !matches!(
                property(evidence, "externalWaitSourceTerminal"),
                Ok(Js::Bool(true))
            )
            && within(&wait, now)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    #[test]
    fn the_ceiling_argument_is_a_positive_safe_integer() {
        assert_eq!(ceiling(&Js::Undefined).unwrap(), 7_200_000);
        for bad in ["0", "-0", "1.5", "9007199254740992", "\"1\"", "N"] {
            assert_eq!(
                ceiling(&js(bad)).unwrap_err().message(),
                "maxExternalWaitLeaseMs: must be a positive safe integer",
                "{bad}"
            );
        }
    }

    #[test]
    fn evidence_reads_as_javascript_reads_properties() {
        assert_eq!(
            is_smart_inactivity_suppressed(&Js::Undefined)
                .unwrap_err()
                .message(),
            "Cannot read properties of undefined (reading 'now')"
        );
        assert_eq!(
            is_smart_inactivity_suppressed(&js("1"))
                .unwrap_err()
                .message(),
            "$.now: must be a non-empty string"
        );
        let idle = js(r#"{"now":"2026-07-28T12:00:00.000Z","workerId":"w","workerGeneration":1}"#);
        assert!(!is_smart_inactivity_suppressed(&idle).unwrap());
    }
}
