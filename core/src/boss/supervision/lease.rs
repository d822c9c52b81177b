//! Authenticated activity, active-operation and external-wait leases, their renewals, and
//! smart-inactivity suppression.

use super::{
    ACTIVE_OPERATION_LEASE_VERSION, ACTIVITY_KINDS, ACTIVITY_RECORD_VERSION, ACTIVITY_TYPES,
    EXTERNAL_WAIT_LEASE_VERSION, Fields, MAX_EXTERNAL_WAIT_LEASE_MS_DEFAULT,
    OPERATION_LEASE_STATES, Rec, WAIT_LEASE_STATES, WAIT_SOURCE_KINDS, fields, get, millis, num,
    same, text,
};
use crate::contract::read::{Read, exact_keys, fail, hex_digest, member, record, timestamp};
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
pub(crate) fn version(f: Fields<'_, '_>, expected: &str) -> Read<()> {
    let version = f.string("version")?;
    if version != expected {
        return fail("$.version", format!("unsupported version: {version}"));
    }
    Ok(())
}

/// A string member as a value.
pub(crate) fn s(f: Fields<'_, '_>, key: &str) -> Read<Js> {
    f.string(key).map(Js::str)
}

/// An integer member as a value.
pub(crate) fn n(f: Fields<'_, '_>, key: &str, minimum: i64) -> Read<Js> {
    f.integer(key, minimum).map(num)
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
    let f = fields(v, "$");
    version(f, ACTIVITY_RECORD_VERSION)?;
    let kind = f.one_of("kind", ACTIVITY_KINDS)?;
    let activity_type = f.one_of("activityType", ACTIVITY_TYPES)?;
    if (kind == "meaningful") != MEANINGFUL_TYPES.contains(&activity_type) {
        return fail("$.activityType", format!("is not {kind} activity"));
    }
    Ok(Rec::new()
        .put("version", Js::str(ACTIVITY_RECORD_VERSION))
        .put("activityId", s(f, "activityId")?)
        .put("workerId", s(f, "workerId")?)
        .put("workerGeneration", n(f, "workerGeneration", 1)?)
        .put("sourceEventId", s(f, "sourceEventId")?)
        .put("participantId", s(f, "participantId")?)
        .put("bindingEpoch", n(f, "bindingEpoch", 1)?)
        .put("kind", Js::str(kind))
        .put("activityType", Js::str(activity_type))
        .put("occurredAt", Js::str(f.timestamp("occurredAt")?))
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

fn bounds<'v>(f: Fields<'v, '_>) -> Read<Bounds<'v>> {
    Ok(Bounds {
        started: f.timestamp("startedAt")?,
        renew_by: f.timestamp("renewBy")?,
        max_until: f.timestamp("maxUntil")?,
        hard: f.timestamp("hardWorkerLeaseExpiresAt")?,
        max_runtime: f.timestamp("maxRuntimeAt")?,
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
    let f = fields(v, "$");
    version(f, ACTIVE_OPERATION_LEASE_VERSION)?;
    let b = bounds(f)?;
    if !b.ordered(millis(b.hard).min(millis(b.max_runtime))) {
        return fail(
            "$.maxUntil",
            "must satisfy startedAt <= renewBy <= maxUntil <= min(hard worker lease, MaxRuntime)",
        );
    }
    Ok(Rec::new()
        .put("version", Js::str(ACTIVE_OPERATION_LEASE_VERSION))
        .put("leaseId", s(f, "leaseId")?)
        .put("workerId", s(f, "workerId")?)
        .put("workerGeneration", n(f, "workerGeneration", 1)?)
        .put("invocationId", s(f, "invocationId")?)
        .put("processId", n(f, "processId", 1)?)
        .put("cgroupIdentity", s(f, "cgroupIdentity")?)
        .put("startedAt", Js::str(b.started))
        .put("renewBy", Js::str(b.renew_by))
        .put("maxUntil", Js::str(b.max_until))
        .put("hardWorkerLeaseExpiresAt", Js::str(b.hard))
        .put("maxRuntimeAt", Js::str(b.max_runtime))
        .put("state", Js::str(f.one_of("state", OPERATION_LEASE_STATES)?))
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
    let f = fields(v, "$");
    version(f, EXTERNAL_WAIT_LEASE_VERSION)?;
    let b = bounds(f)?;
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
    let wake = f.optional_timestamp("expectedWakeAt")?;
    if wake.is_some_and(|w| millis(w) < millis(b.started) || millis(w) > millis(b.max_until)) {
        return fail("$.expectedWakeAt", "must be between startedAt and maxUntil");
    }
    let source = f.one_of("sourceKind", WAIT_SOURCE_KINDS)?;
    let process = f.optional_string("processIdentity")?;
    if source == "process" && process.is_none() {
        return fail("$.processIdentity", "is required for process waits");
    }
    Ok(Rec::new()
        .put("version", Js::str(EXTERNAL_WAIT_LEASE_VERSION))
        .put("leaseId", s(f, "leaseId")?)
        .put("workerId", s(f, "workerId")?)
        .put("workerGeneration", n(f, "workerGeneration", 1)?)
        .put("sourceKind", Js::str(source))
        .put(
            "sourceRefHash",
            Js::str(hex_digest(f.get("sourceRefHash"), "$.sourceRefHash")?),
        )
        .opt("processIdentity", process.map(Js::str))
        .put("startedAt", Js::str(b.started))
        .put("renewBy", Js::str(b.renew_by))
        .put("maxUntil", Js::str(b.max_until))
        .opt("expectedWakeAt", wake.map(Js::str))
        .put("hardWorkerLeaseExpiresAt", Js::str(b.hard))
        .put("maxRuntimeAt", Js::str(b.max_runtime))
        .put("state", Js::str(f.one_of("state", WAIT_LEASE_STATES)?))
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
