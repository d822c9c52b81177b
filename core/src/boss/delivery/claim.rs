//! `parseDeliveryClaimRecord`: a claim's compare-and-set progression (reserved, inserting,
//! inserted, delivered; or blocked, or released behind a drained barrier), the evidence each
//! state must and must not carry, and its chronology.

use super::{
    CLAIM_RECIPIENT_CONTEXTS, DELIVERY_CLAIM_STATES, DELIVERY_CLAIM_VERSION, DELIVERY_INTENTS,
    DELIVERY_MODES, claim_identity, drained_flags, literal_version, millis, result_correlation,
    unique_strings,
};
use crate::contract::read::{
    self, exact_keys, exact_record, fail, field, integer, one_of, optional, optional_boolean,
    optional_string, optional_timestamp, record, string, timestamp,
};
use crate::contract::{Args, Failure, Js, Out};

const REQUIRED: &[&str] = &[
    "version",
    "deliveryClaimId",
    "deliveryGroupId",
    "membershipRevision",
    "effectiveDeliveryIntent",
    "primaryNoticeId",
    "memberNoticeIds",
    "claimGeneration",
    "expiresAt",
    "recipientContext",
    "recipientSessionId",
    "recipientPrincipalId",
    "recipientBindingEpoch",
    "recipientTransferGeneration",
    "workerId",
    "workerGeneration",
    "transitionId",
    "transitionVersion",
    "ingressMode",
    "state",
];

const OPTIONAL: &[&str] = &[
    "recipientTargetSessionId",
    "assignmentId",
    "turnId",
    "watchdogGeneration",
    "deliveryAttemptedAt",
    "targetLedgerEntryId",
    "insertedAt",
    "deliveredAt",
    "deliveryReceiptId",
    "resultMessageId",
    "coalescedByResult",
    "blockedReason",
    "releaseProof",
    "releasedAt",
];

/// The members of a drained-barrier proof (a release proof, or the ingress payload that
/// proves a target drained).
const DRAINED_BARRIER_KEYS: &[&str] = &[
    "deliveryClaimId",
    "claimGeneration",
    "recipientSessionId",
    "recipientBindingEpoch",
    "barrierId",
    "noSessionEntry",
    "noAdapterQueue",
    "noInflightInvocation",
    "noPiFollowUp",
    "noOpenCodePendingPrompt",
    "establishedAt",
];

/// A drained barrier at `path`: the claim it drains, the session and epoch, every absence flag
/// `true`. Answers its `establishedAt`.
pub(super) fn check_drained_barrier<'v>(v: &'v Js, path: &str) -> read::Read<&'v str> {
    record(v, path)?;
    exact_keys(v, DRAINED_BARRIER_KEYS, &["recipientTargetSessionId"], path)?;
    let at = |key: &str| format!("{path}.{key}");
    claim_identity(v, path)?;
    string(field(v, "recipientSessionId"), &at("recipientSessionId"))?;
    optional_string(
        field(v, "recipientTargetSessionId"),
        &at("recipientTargetSessionId"),
    )?;
    integer(
        field(v, "recipientBindingEpoch"),
        &at("recipientBindingEpoch"),
        1,
    )?;
    string(field(v, "barrierId"), &at("barrierId"))?;
    drained_flags(v, path)?;
    timestamp(field(v, "establishedAt"), &at("establishedAt"))
}

/// The release proof's bindings: the same claim, generation, session, target session (both
/// absent counts as the same) and epoch as the claim it releases, in that order.
fn proof_matches(claim: &Js, proof: &Js) -> read::Read<()> {
    for (key, detail) in [
        ("deliveryClaimId", "must match deliveryClaimId"),
        ("claimGeneration", "must match claimGeneration"),
        ("recipientSessionId", "must match recipientSessionId"),
        (
            "recipientTargetSessionId",
            "must match recipientTargetSessionId exactly",
        ),
        ("recipientBindingEpoch", "must match recipientBindingEpoch"),
    ] {
        if field(proof, key) != field(claim, key) {
            return fail(&format!("$.releaseProof.{key}"), detail);
        }
    }
    Ok(())
}

/// `parseDeliveryClaimRecord`'s checks.
pub fn check_claim_record(v: &Js) -> read::Read<()> {
    exact_record(v, REQUIRED, OPTIONAL, "$")?;
    let f = |key: &str| field(v, key);
    literal_version(f("version"), DELIVERY_CLAIM_VERSION, "$.version")?;
    string(f("deliveryClaimId"), "$.deliveryClaimId")?;
    string(f("deliveryGroupId"), "$.deliveryGroupId")?;
    integer(f("membershipRevision"), "$.membershipRevision", 1)?;
    one_of(
        f("effectiveDeliveryIntent"),
        DELIVERY_INTENTS,
        "$.effectiveDeliveryIntent",
    )?;
    let primary = string(f("primaryNoticeId"), "$.primaryNoticeId")?;
    let members = unique_strings(f("memberNoticeIds"), "$.memberNoticeIds")?;
    if !members.contains(&primary) {
        return fail("$.primaryNoticeId", "must be a memberNoticeId");
    }
    integer(f("claimGeneration"), "$.claimGeneration", 1)?;
    let expires_at = timestamp(f("expiresAt"), "$.expiresAt")?;
    one_of(
        f("recipientContext"),
        CLAIM_RECIPIENT_CONTEXTS,
        "$.recipientContext",
    )?;
    string(f("recipientSessionId"), "$.recipientSessionId")?;
    optional_string(f("recipientTargetSessionId"), "$.recipientTargetSessionId")?;
    string(f("recipientPrincipalId"), "$.recipientPrincipalId")?;
    integer(f("recipientBindingEpoch"), "$.recipientBindingEpoch", 1)?;
    integer(
        f("recipientTransferGeneration"),
        "$.recipientTransferGeneration",
        0,
    )?;
    string(f("workerId"), "$.workerId")?;
    integer(f("workerGeneration"), "$.workerGeneration", 1)?;
    string(f("transitionId"), "$.transitionId")?;
    integer(f("transitionVersion"), "$.transitionVersion", 1)?;
    optional_string(f("assignmentId"), "$.assignmentId")?;
    optional_string(f("turnId"), "$.turnId")?;
    optional(f("watchdogGeneration"), |g| {
        integer(g, "$.watchdogGeneration", 1)
    })?;
    let mode = one_of(f("ingressMode"), DELIVERY_MODES, "$.ingressMode")?;
    let state = one_of(f("state"), DELIVERY_CLAIM_STATES, "$.state")?;
    let attempted_at = optional_timestamp(f("deliveryAttemptedAt"), "$.deliveryAttemptedAt")?;
    let ledger_id = optional_string(f("targetLedgerEntryId"), "$.targetLedgerEntryId")?;
    let inserted_at = optional_timestamp(f("insertedAt"), "$.insertedAt")?;
    let delivered_at = optional_timestamp(f("deliveredAt"), "$.deliveredAt")?;
    let receipt = optional_string(f("deliveryReceiptId"), "$.deliveryReceiptId")?;
    let result_message_id = optional_string(f("resultMessageId"), "$.resultMessageId")?;
    let coalesced = optional_boolean(f("coalescedByResult"), "$.coalescedByResult")?;
    let blocked_reason = optional_string(f("blockedReason"), "$.blockedReason")?;
    let proof = f("releaseProof");
    let established_at = optional(proof, |p| check_drained_barrier(p, "$.releaseProof"))?;
    let released_at = optional_timestamp(f("releasedAt"), "$.releasedAt")?;

    let attempted = attempted_at.is_some();
    let inserted = ledger_id.is_some() || inserted_at.is_some();
    let receipted = delivered_at.is_some() || receipt.is_some();
    if inserted && (ledger_id.is_none() || inserted_at.is_none() || !attempted) {
        return fail(
            "$",
            "target ledger and insertion timestamp require deliveryAttemptedAt and must be \
             present together",
        );
    }
    if state == "reserved" && (attempted || inserted) {
        return fail(
            "$",
            "reserved claims cannot contain attempt, ledger, or insertion evidence",
        );
    }
    if state == "inserting" && (!attempted || inserted) {
        return fail("$", "inserting claims require only deliveryAttemptedAt");
    }
    if matches!(state, "inserted" | "delivered") && !inserted {
        return fail(
            "$",
            "inserted/delivered claims require attempted, ledger, and insertion evidence",
        );
    }
    if state == "delivered" && (delivered_at.is_none() || receipt.is_none()) {
        return fail(
            "$",
            "delivered claims require deliveredAt and deliveryReceiptId",
        );
    }
    if state != "delivered" && receipted {
        return fail(
            "$",
            "delivery receipt fields are valid only when state is delivered",
        );
    }
    if state == "blocked" && blocked_reason.is_none() {
        return fail("$.blockedReason", "is required while blocked");
    }
    if state == "released" && (released_at.is_none() || established_at.is_none()) {
        return fail(
            "$",
            "released claims require releasedAt and a drained-barrier releaseProof",
        );
    }
    if state != "blocked" && blocked_reason.is_some() {
        return fail("$.blockedReason", "is only valid while blocked");
    }
    if state != "released" && released_at.is_some() {
        return fail("$.releasedAt", "is only valid when released");
    }
    if state != "released" && established_at.is_some() {
        return fail("$.releaseProof", "is only valid when released");
    }
    if matches!(state, "blocked" | "released") && (inserted || receipted) {
        return fail(
            "$",
            "blocked/released claims cannot contain proved insertion or receipt evidence",
        );
    }
    if let Some(established) = established_at {
        proof_matches(v, proof)?;
        if released_at.is_some_and(|released| millis(released) < millis(established)) {
            return fail("$.releasedAt", "must not precede the drained barrier");
        }
        if attempted_at.is_some_and(|attempt| millis(established) < millis(attempt)) {
            return fail(
                "$.releaseProof.establishedAt",
                "must not precede deliveryAttemptedAt",
            );
        }
    }
    if result_message_id.is_some() && state != "delivered" {
        return fail("$.resultMessageId", "is valid only after delivery");
    }
    if coalesced.is_some() && state != "delivered" {
        return fail("$.coalescedByResult", "is valid only after delivery");
    }
    if state == "delivered" {
        result_correlation(mode, "ingressMode", result_message_id, coalesced, "$")?;
    }
    if let Some(attempt) = attempted_at {
        if millis(attempt) >= millis(expires_at) {
            return fail("$.deliveryAttemptedAt", "must occur before claim expiry");
        }
        if inserted_at.is_some_and(|inserted| millis(inserted) < millis(attempt)) {
            return fail("$.insertedAt", "must not precede deliveryAttemptedAt");
        }
    }
    if let (Some(delivered), Some(inserted)) = (delivered_at, inserted_at)
        && millis(delivered) < millis(inserted)
    {
        return fail("$.deliveredAt", "must not precede insertedAt");
    }
    Ok(())
}

pub(super) fn parse_op(a: Args<'_>) -> Result<Out, Failure> {
    check_claim_record(a.get(0))?;
    Ok(Out::Input(0))
}
