//! `parseLifecycleNotice`: the notice, its claim projection (all four claim fields or none),
//! its delivery receipt tuple (all three or none), their chronology, and the notice id, which
//! must be the hash of the notice's own logical key.

use super::keys::lifecycle_notice_id;
use super::{
    DELIVERY_INTENTS, DELIVERY_MODES, LIFECYCLE_NOTICE_VERSION, NOTICE_DELIVERY_CLAIM_STATES,
    RECIPIENT_CONTEXTS, literal_version, millis, result_correlation,
};
use crate::contract::read::{
    self, exact_record, fail, field, integer, one_of, optional, optional_boolean, optional_integer,
    optional_string, optional_timestamp, string, timestamp,
};
use crate::contract::{Args, Failure, Js, Out};

const REQUIRED: &[&str] = &[
    "version",
    "noticeId",
    "deliveryGroupId",
    "deliveryGroupMembershipRevision",
    "sourceEventId",
    "transitionId",
    "transitionVersion",
    "workerId",
    "workerIncarnationId",
    "workerGeneration",
    "kind",
    "severity",
    "observedState",
    "reason",
    "createdAt",
    "recipientContext",
];

const OPTIONAL: &[&str] = &[
    "requestedDeliveryIntent",
    "bossRunId",
    "assignmentId",
    "turnId",
    "watchdogGeneration",
    "subscriptionId",
    "subscriptionTriggerGeneration",
    "causationId",
    "resultMessageId",
    "recipientSessionId",
    "recipientTargetSessionId",
    "recipientPrincipalId",
    "recipientBindingEpoch",
    "deliveryAttemptedAt",
    "deliveryClaimId",
    "deliveryClaimGeneration",
    "deliveryClaimExpiresAt",
    "deliveryClaimState",
    "deliveredAt",
    "deliveryMode",
    "deliveryReceiptId",
    "coalescedByResult",
    "acknowledgedAt",
];

/// The members of the notice's logical key, read by the notice's own (string) readers; the key
/// is then checked again by the key's readers (identifiers) when its id is computed.
struct LogicalKey<'v> {
    worker_id: &'v str,
    worker_generation: i64,
    transition_id: &'v str,
    transition_version: i64,
    kind: &'v str,
    assignment_id: Option<&'v str>,
    watchdog_generation: Option<i64>,
    subscription_id: Option<&'v str>,
    trigger_generation: Option<i64>,
}

impl LogicalKey<'_> {
    /// The key as the object `lifecycleNoticeId` is given (absent members left out).
    fn to_js(&self) -> Js {
        let mut members = vec![
            ("workerId", Js::str(self.worker_id)),
            ("workerGeneration", Js::Num(self.worker_generation as f64)),
            ("transitionId", Js::str(self.transition_id)),
            ("transitionVersion", Js::Num(self.transition_version as f64)),
            ("kind", Js::str(self.kind)),
        ];
        if let Some(id) = self.assignment_id {
            members.push(("assignmentId", Js::str(id)));
        }
        if let Some(g) = self.watchdog_generation {
            members.push(("watchdogGeneration", Js::Num(g as f64)));
        }
        if let Some(id) = self.subscription_id {
            members.push(("subscriptionId", Js::str(id)));
        }
        if let Some(g) = self.trigger_generation {
            members.push(("subscriptionTriggerGeneration", Js::Num(g as f64)));
        }
        Js::object(members)
    }
}

/// `parseLifecycleNotice`'s checks.
pub fn check_lifecycle_notice(v: &Js) -> read::Read<()> {
    exact_record(v, REQUIRED, OPTIONAL, "$")?;
    let f = |key: &str| field(v, key);
    literal_version(f("version"), LIFECYCLE_NOTICE_VERSION, "$.version")?;
    let notice_id = string(f("noticeId"), "$.noticeId")?;
    string(f("deliveryGroupId"), "$.deliveryGroupId")?;
    integer(
        f("deliveryGroupMembershipRevision"),
        "$.deliveryGroupMembershipRevision",
        1,
    )?;
    optional(f("requestedDeliveryIntent"), |i| {
        one_of(i, DELIVERY_INTENTS, "$.requestedDeliveryIntent")
    })?;
    string(f("sourceEventId"), "$.sourceEventId")?;
    let transition_id = string(f("transitionId"), "$.transitionId")?;
    let transition_version = integer(f("transitionVersion"), "$.transitionVersion", 1)?;
    optional_string(f("bossRunId"), "$.bossRunId")?;
    let worker_id = string(f("workerId"), "$.workerId")?;
    string(f("workerIncarnationId"), "$.workerIncarnationId")?;
    let assignment_id = optional_string(f("assignmentId"), "$.assignmentId")?;
    optional_string(f("turnId"), "$.turnId")?;
    let watchdog_generation = optional(f("watchdogGeneration"), |g| {
        integer(g, "$.watchdogGeneration", 1)
    })?;
    let subscription_id = optional_string(f("subscriptionId"), "$.subscriptionId")?;
    let trigger_generation = optional(f("subscriptionTriggerGeneration"), |g| {
        integer(g, "$.subscriptionTriggerGeneration", 1)
    })?;
    optional_string(f("causationId"), "$.causationId")?;
    let result_message_id = optional_string(f("resultMessageId"), "$.resultMessageId")?;
    optional_string(f("recipientSessionId"), "$.recipientSessionId")?;
    optional_string(f("recipientTargetSessionId"), "$.recipientTargetSessionId")?;
    optional_string(f("recipientPrincipalId"), "$.recipientPrincipalId")?;
    optional_integer(f("recipientBindingEpoch"), "$.recipientBindingEpoch", 1)?;
    let worker_generation = integer(f("workerGeneration"), "$.workerGeneration", 1)?;
    let kind = string(f("kind"), "$.kind")?;
    string(f("severity"), "$.severity")?;
    string(f("observedState"), "$.observedState")?;
    string(f("reason"), "$.reason")?;
    let created_at = timestamp(f("createdAt"), "$.createdAt")?;
    let attempted_at = optional_timestamp(f("deliveryAttemptedAt"), "$.deliveryAttemptedAt")?;
    let claim_id = optional_string(f("deliveryClaimId"), "$.deliveryClaimId")?;
    let claim_generation = optional(f("deliveryClaimGeneration"), |g| {
        integer(g, "$.deliveryClaimGeneration", 1)
    })?;
    let claim_expires_at =
        optional_timestamp(f("deliveryClaimExpiresAt"), "$.deliveryClaimExpiresAt")?;
    let claim_state = optional(f("deliveryClaimState"), |s| {
        one_of(s, NOTICE_DELIVERY_CLAIM_STATES, "$.deliveryClaimState")
    })?;
    let claim_fields = [
        claim_id.is_some(),
        claim_generation.is_some(),
        claim_expires_at.is_some(),
        claim_state.is_some(),
    ];
    let claim_count = claim_fields.iter().filter(|present| **present).count();
    if claim_count != 0 && claim_count != 4 {
        return fail("$", "delivery claim fields must be present together");
    }
    one_of(
        f("recipientContext"),
        RECIPIENT_CONTEXTS,
        "$.recipientContext",
    )?;
    let delivered_at = optional_timestamp(f("deliveredAt"), "$.deliveredAt")?;
    let mode = optional(f("deliveryMode"), |m| {
        one_of(m, DELIVERY_MODES, "$.deliveryMode")
    })?;
    let receipt_id = optional_string(f("deliveryReceiptId"), "$.deliveryReceiptId")?;
    let coalesced = optional_boolean(f("coalescedByResult"), "$.coalescedByResult")?;
    let acknowledged_at = optional_timestamp(f("acknowledgedAt"), "$.acknowledgedAt")?;
    let receipt_count = [delivered_at.is_some(), mode.is_some(), receipt_id.is_some()]
        .iter()
        .filter(|present| **present)
        .count();
    if receipt_count % 3 != 0 {
        return fail(
            "$",
            "deliveredAt, deliveryMode, and deliveryReceiptId must be present together",
        );
    }
    let delivered = delivered_at.is_some();
    if (claim_state == Some("delivered")) != delivered {
        return fail(
            "$.deliveryClaimState",
            "must be delivered exactly when the delivery receipt tuple is present",
        );
    }
    let attempted = attempted_at.is_some();
    if claim_state.is_none() && attempted {
        return fail("$.deliveryAttemptedAt", "requires delivery claim fields");
    }
    if claim_state == Some("reserved") && attempted {
        return fail(
            "$.deliveryAttemptedAt",
            "is not valid while the delivery claim is reserved",
        );
    }
    if matches!(claim_state, Some("inserting" | "inserted" | "delivered")) && !attempted {
        return fail(
            "$.deliveryAttemptedAt",
            "is required once delivery claim insertion starts",
        );
    }
    if let Some(attempt) = attempted_at {
        if millis(attempt) < millis(created_at) {
            return fail("$.deliveryAttemptedAt", "must not precede createdAt");
        }
        if claim_expires_at.is_some_and(|expiry| millis(attempt) >= millis(expiry)) {
            return fail("$.deliveryAttemptedAt", "must occur before claim expiry");
        }
        if delivered_at.is_some_and(|delivered| millis(delivered) < millis(attempt)) {
            return fail("$.deliveredAt", "must not precede deliveryAttemptedAt");
        }
    }
    if let Some(acknowledged) = acknowledged_at
        && millis(acknowledged) < millis(delivered_at.unwrap_or(created_at))
    {
        return fail("$.acknowledgedAt", "must not precede delivery or creation");
    }
    if coalesced.is_some() && claim_state != Some("delivered") {
        return fail("$.coalescedByResult", "is valid only for delivered notices");
    }
    if result_message_id.is_some() && !delivered {
        return fail(
            "$.resultMessageId",
            "is valid only with a delivered claim and delivery receipt tuple",
        );
    }
    if let Some(mode) = mode {
        result_correlation(mode, "deliveryMode", result_message_id, coalesced, "$")?;
    }
    let key = LogicalKey {
        worker_id,
        worker_generation,
        transition_id,
        transition_version,
        kind,
        assignment_id,
        watchdog_generation,
        subscription_id,
        trigger_generation,
    };
    if notice_id != lifecycle_notice_id(&key.to_js())? {
        return fail("$.noticeId", "does not match the lifecycle logical key");
    }
    Ok(())
}

pub(super) fn parse_op(a: Args<'_>) -> Result<Out, Failure> {
    check_lifecycle_notice(a.get(0))?;
    Ok(Out::Input(0))
}
