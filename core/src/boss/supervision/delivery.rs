//! The delivery records a subscriber rebind migration carries (the TypeScript core's
//! `boss-wire.ts`): delivery equivalence keys and `deliveryGroupId`, delivery-group and
//! delivery-claim records, and the monotonic delivery-intent aggregate.
//!
//! These are the checks a migration link runs on its old group and current claim, with the
//! TypeScript paths (a group or claim is parsed at `$`, as the TypeScript core parses it there).
//! The delivery operations themselves (`parseDeliveryGroupRecord`, ...) belong to the delivery
//! part of `./boss`; when it lands, these functions are its to own.

use super::subscription::hash_of;
use super::{fields, millis};
use crate::boss::wire::literal_version;
use crate::contract::read::{
    Read, dense_array, element, exact_keys, fail, field, member, one_of, optional_boolean, record,
    string_array,
};
use crate::contract::{Failure, Js};

/// `orc.delivery-group.v1`.
pub const DELIVERY_GROUP_VERSION: &str = "orc.delivery-group.v1";
/// `orc.delivery-claim.v1`.
pub const DELIVERY_CLAIM_VERSION: &str = "orc.delivery-claim.v1";
/// `DELIVERY_INTENTS`, strongest first.
pub const DELIVERY_INTENTS: &[&str] = &["wake", "follow_up", "status_only"];
/// `DELIVERY_CLAIM_STATES`.
pub const DELIVERY_CLAIM_STATES: &[&str] = &[
    "reserved",
    "inserting",
    "inserted",
    "delivered",
    "blocked",
    "released",
];
/// `DELIVERY_MODES`.
pub const DELIVERY_MODES: &[&str] = &["lifecycle_message", "correlated_result"];
/// `DELIVERY_GROUP_MEMBERSHIP_STATES`.
pub const DELIVERY_GROUP_MEMBERSHIP_STATES: &[&str] = &["assembling", "sealed"];
/// `DELIVERY_GROUP_STATES`.
pub const DELIVERY_GROUP_STATES: &[&str] = &[
    "pending",
    "reserved",
    "inserting",
    "inserted",
    "delivered",
    "blocked",
    "migrated",
];

const DELIVERY_GROUP_DOMAIN: &str = "orc-delivery-group-v1";

/// `effectiveDeliveryIntent(intents)`: `wake` over `follow_up` over `status_only` (the default
/// of an empty list).
pub fn effective_delivery_intent(intents: &Js) -> Read<&'static str> {
    let entries = dense_array(intents, "intents")?;
    let mut validated = Vec::with_capacity(entries.len());
    for (index, intent) in entries.into_iter().enumerate() {
        validated.push(one_of(
            intent,
            DELIVERY_INTENTS,
            &element("intents", index),
        )?);
    }
    Ok(strongest(&validated))
}

fn strongest(intents: &[&str]) -> &'static str {
    DELIVERY_INTENTS
        .iter()
        .copied()
        .find(|i| *i != "status_only" && intents.contains(i))
        .unwrap_or("status_only")
}

fn source_authority_id<'v>(v: &'v Js, path: &str) -> Read<(&'static str, Option<&'v str>)> {
    record(v, path)?;
    let f = fields(v, path);
    let kind = f.one_of("kind", &["worker_store", "controller", "orc_scheduler"])?;
    match kind {
        "worker_store" => {
            exact_keys(
                v,
                &["kind", "workerStoreId", "journalGeneration"],
                &[],
                path,
            )?;
            f.identifier("workerStoreId")?;
            f.integer("journalGeneration", 1)?;
            Ok((kind, None))
        }
        "controller" => {
            exact_keys(v, &["kind", "bossRunId", "controllerGeneration"], &[], path)?;
            let run = f.identifier("bossRunId")?;
            f.integer("controllerGeneration", 1)?;
            Ok((kind, Some(run)))
        }
        _ => {
            exact_keys(v, &["kind", "ownerUid", "schedulerGeneration"], &[], path)?;
            f.integer("ownerUid", 0)?;
            f.integer("schedulerGeneration", 1)?;
            Ok((kind, None))
        }
    }
}

/// `parseDeliveryEquivalenceKey(value, path)`.
pub fn parse_delivery_equivalence_key(v: &Js, path: &str) -> Read<()> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "sourceAuthorityId",
            "sourceEventId",
            "workerId",
            "workerGeneration",
            "transitionId",
            "transitionVersion",
        ],
        &["bossRunId", "assignmentId", "turnId", "watchdogGeneration"],
        path,
    )?;
    let f = fields(v, path);
    f.identifier("recipientPrincipalId")?;
    f.integer("recipientBindingEpoch", 1)?;
    let authority_path = f.at("sourceAuthorityId");
    let (kind, authority_run) = source_authority_id(f.get("sourceAuthorityId"), &authority_path)?;
    f.identifier("sourceEventId")?;
    let run = f.optional_identifier("bossRunId")?;
    if kind == "controller" {
        let Some(run) = run else {
            return fail(
                &f.at("bossRunId"),
                "is required for a controller source authority",
            );
        };
        if authority_run != Some(run) {
            return fail(
                &member(&authority_path, "bossRunId"),
                "must exactly match bossRunId for a controller source authority",
            );
        }
    }
    f.identifier("workerId")?;
    f.integer("workerGeneration", 1)?;
    f.identifier("transitionId")?;
    f.integer("transitionVersion", 1)?;
    f.optional_identifier("assignmentId")?;
    f.optional_identifier("turnId")?;
    f.optional_integer("watchdogGeneration", 1)?;
    Ok(())
}

/// `deliveryGroupId(key)`: the hash of the key as given, once it parses (at `$`).
pub fn delivery_group_id(key: &Js) -> Result<String, Failure> {
    parse_delivery_equivalence_key(key, "$")?;
    hash_of(DELIVERY_GROUP_DOMAIN, key)
}

/// `readUniqueStrings`.
fn unique_strings<'v>(value: &'v Js, path: &str) -> Read<Vec<&'v str>> {
    let entries = string_array(value, path)?;
    if entries.is_empty() {
        return fail(path, "must not be empty");
    }
    if entries
        .iter()
        .enumerate()
        .any(|(i, e)| entries[..i].contains(e))
    {
        return fail(path, "must not contain duplicates");
    }
    Ok(entries)
}

/// `readEnumArray`.
fn enum_array(value: &Js, allowed: &[&'static str], path: &str) -> Read<Vec<&'static str>> {
    let entries = dense_array(value, path)?;
    if entries.is_empty() {
        return fail(path, "must be a non-empty array");
    }
    entries
        .into_iter()
        .enumerate()
        .map(|(i, e)| one_of(e, allowed, &element(path, i)))
        .collect()
}

/// `parseDeliveryGroupRecord`: the checks only (the TypeScript core returns the caller's object).
pub fn check_delivery_group_record(v: &Js) -> Read<()> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "deliveryGroupId",
            "equivalenceKey",
            "subscriptionRegistryRevision",
            "membershipRevision",
            "membershipState",
            "primaryNoticeId",
            "memberNoticeIds",
            "requestedIntents",
            "effectiveDeliveryIntent",
            "recipientTransferGeneration",
            "state",
        ],
        &[
            "operativeActivationConsumedAt",
            "supersedesDeliveryGroupId",
            "successorDeliveryGroupId",
            "authorityTransitionId",
        ],
        "$",
    )?;
    literal_version(field(v, "version"), DELIVERY_GROUP_VERSION, "$.version")?;
    let f = fields(v, "$");
    let group = f.string("deliveryGroupId")?;
    let key = f.get("equivalenceKey");
    parse_delivery_equivalence_key(key, "$.equivalenceKey")?;
    if group != delivery_group_id(key)? {
        return fail("$.deliveryGroupId", "does not match equivalenceKey");
    }
    f.integer("subscriptionRegistryRevision", 0)?;
    f.integer("membershipRevision", 1)?;
    let membership = f.one_of("membershipState", DELIVERY_GROUP_MEMBERSHIP_STATES)?;
    let primary = f.string("primaryNoticeId")?;
    let members = unique_strings(f.get("memberNoticeIds"), "$.memberNoticeIds")?;
    if !members.contains(&primary) {
        return fail("$.primaryNoticeId", "must be a memberNoticeId");
    }
    let intents = enum_array(
        f.get("requestedIntents"),
        DELIVERY_INTENTS,
        "$.requestedIntents",
    )?;
    if intents.len() != members.len() {
        return fail(
            "$.requestedIntents",
            "must contain one intent for each member notice",
        );
    }
    let aggregate = f.one_of("effectiveDeliveryIntent", DELIVERY_INTENTS)?;
    if aggregate != strongest(&intents) {
        return fail(
            "$.effectiveDeliveryIntent",
            "does not equal the monotonic wake > follow_up > status_only aggregate",
        );
    }
    let consumed = f.optional_timestamp("operativeActivationConsumedAt")?;
    f.integer("recipientTransferGeneration", 0)?;
    let supersedes = f.optional_string("supersedesDeliveryGroupId")?;
    let successor = f.optional_string("successorDeliveryGroupId")?;
    let transition = f.optional_string("authorityTransitionId")?;
    let state = f.one_of("state", DELIVERY_GROUP_STATES)?;
    if membership == "assembling" && state != "pending" {
        return fail("$.state", "an assembling group must remain pending");
    }
    if state != "pending" && membership != "sealed" {
        return fail(
            "$.membershipState",
            "must be sealed before reservation or any later state",
        );
    }
    let receipted = state == "inserted" || state == "delivered";
    if (aggregate == "status_only" || !receipted) && consumed.is_some() {
        return fail(
            "$.operativeActivationConsumedAt",
            "requires a receipted non-status operative insertion",
        );
    }
    if state == "migrated" {
        if membership != "sealed"
            || successor.is_none()
            || transition.is_none()
            || supersedes.is_some()
        {
            return fail(
                "$",
                concat!(
                    "a migrated old group requires sealed membership, ",
                    "successor, and authority transition only"
                ),
            );
        }
    } else if successor.is_some() {
        return fail(
            "$.successorDeliveryGroupId",
            "is valid only for a migrated old group",
        );
    }
    if supersedes.is_some() && transition.is_none() {
        return fail(
            "$.authorityTransitionId",
            "is required for a successor group",
        );
    }
    if transition.is_some() && supersedes.is_none() && state != "migrated" {
        return fail(
            "$.authorityTransitionId",
            "requires a migrated or successor group",
        );
    }
    if supersedes == Some(group) || successor == Some(group) {
        return fail("$", "a group cannot supersede itself");
    }
    Ok(())
}

/// The drained-barrier proof of a released claim (at `$.releaseProof`).
fn check_release_proof(v: &Js) -> Read<()> {
    let path = "$.releaseProof";
    record(v, path)?;
    exact_keys(
        v,
        &[
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
        ],
        &["recipientTargetSessionId"],
        path,
    )?;
    let f = fields(v, path);
    f.string("deliveryClaimId")?;
    f.integer("claimGeneration", 1)?;
    f.string("recipientSessionId")?;
    f.optional_string("recipientTargetSessionId")?;
    f.integer("recipientBindingEpoch", 1)?;
    f.string("barrierId")?;
    for key in [
        "noSessionEntry",
        "noAdapterQueue",
        "noInflightInvocation",
        "noPiFollowUp",
        "noOpenCodePendingPrompt",
    ] {
        if !f.boolean(key)? {
            return fail(&f.at(key), "must be true to prove absence");
        }
    }
    f.timestamp("establishedAt")?;
    Ok(())
}

/// `assertResultCorrelation` for a delivered claim (at `$`, its mode field `ingressMode`).
fn check_result_correlation(mode: &str, result: Option<&str>, coalesced: Option<bool>) -> Read<()> {
    if coalesced == Some(true) && result.is_none() {
        return fail("$.coalescedByResult", "requires resultMessageId");
    }
    if coalesced == Some(true) && mode != "correlated_result" {
        return fail(
            "$.coalescedByResult",
            "is valid only with correlated_result ingressMode",
        );
    }
    if mode == "correlated_result" && result.is_none() {
        return fail(
            "$.ingressMode",
            "correlated_result requires resultMessageId",
        );
    }
    if mode == "lifecycle_message" && result.is_some() {
        return fail(
            "$.resultMessageId",
            "is forbidden with lifecycle_message ingressMode",
        );
    }
    Ok(())
}

/// `parseDeliveryClaimRecord`: the checks only (the TypeScript core returns the caller's object).
pub fn check_delivery_claim_record(v: &Js) -> Read<()> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
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
        ],
        &[
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
        ],
        "$",
    )?;
    literal_version(field(v, "version"), DELIVERY_CLAIM_VERSION, "$.version")?;
    let f = fields(v, "$");
    f.string("deliveryClaimId")?;
    f.string("deliveryGroupId")?;
    f.integer("membershipRevision", 1)?;
    f.one_of("effectiveDeliveryIntent", DELIVERY_INTENTS)?;
    let primary = f.string("primaryNoticeId")?;
    let members = unique_strings(f.get("memberNoticeIds"), "$.memberNoticeIds")?;
    if !members.contains(&primary) {
        return fail("$.primaryNoticeId", "must be a memberNoticeId");
    }
    f.integer("claimGeneration", 1)?;
    let expires = f.timestamp("expiresAt")?;
    f.one_of("recipientContext", &["pi", "opencode"])?;
    f.string("recipientSessionId")?;
    f.optional_string("recipientTargetSessionId")?;
    f.string("recipientPrincipalId")?;
    f.integer("recipientBindingEpoch", 1)?;
    f.integer("recipientTransferGeneration", 0)?;
    f.string("workerId")?;
    f.integer("workerGeneration", 1)?;
    f.string("transitionId")?;
    f.integer("transitionVersion", 1)?;
    f.optional_string("assignmentId")?;
    f.optional_string("turnId")?;
    f.optional_integer("watchdogGeneration", 1)?;
    let mode = f.one_of("ingressMode", DELIVERY_MODES)?;
    let state = f.one_of("state", DELIVERY_CLAIM_STATES)?;
    let attempted = f.optional_timestamp("deliveryAttemptedAt")?;
    let ledger = f.optional_string("targetLedgerEntryId")?;
    let inserted = f.optional_timestamp("insertedAt")?;
    let delivered = f.optional_timestamp("deliveredAt")?;
    let receipt = f.optional_string("deliveryReceiptId")?;
    let result = f.optional_string("resultMessageId")?;
    let coalesced = optional_boolean(f.get("coalescedByResult"), "$.coalescedByResult")?;
    let blocked_reason = f.optional_string("blockedReason")?;
    let proof = f.get("releaseProof");
    let has_proof = !matches!(proof, Js::Undefined);
    if has_proof {
        check_release_proof(proof)?;
    }
    let released = f.optional_timestamp("releasedAt")?;
    let has_attempt = attempted.is_some();
    let has_insertion = ledger.is_some() || inserted.is_some();
    if has_insertion && (ledger.is_none() || inserted.is_none() || !has_attempt) {
        return fail(
            "$",
            concat!(
                "target ledger and insertion timestamp require ",
                "deliveryAttemptedAt and must be present together"
            ),
        );
    }
    if state == "reserved" && (has_attempt || has_insertion) {
        return fail(
            "$",
            "reserved claims cannot contain attempt, ledger, or insertion evidence",
        );
    }
    if state == "inserting" && (!has_attempt || has_insertion) {
        return fail("$", "inserting claims require only deliveryAttemptedAt");
    }
    if (state == "inserted" || state == "delivered") && !has_insertion {
        return fail(
            "$",
            "inserted/delivered claims require attempted, ledger, and insertion evidence",
        );
    }
    if state == "delivered" && (delivered.is_none() || receipt.is_none()) {
        return fail(
            "$",
            "delivered claims require deliveredAt and deliveryReceiptId",
        );
    }
    if state != "delivered" && (delivered.is_some() || receipt.is_some()) {
        return fail(
            "$",
            "delivery receipt fields are valid only when state is delivered",
        );
    }
    if state == "blocked" && blocked_reason.is_none() {
        return fail("$.blockedReason", "is required while blocked");
    }
    if state == "released" && (released.is_none() || !has_proof) {
        return fail(
            "$",
            "released claims require releasedAt and a drained-barrier releaseProof",
        );
    }
    if state != "blocked" && blocked_reason.is_some() {
        return fail("$.blockedReason", "is only valid while blocked");
    }
    if state != "released" && released.is_some() {
        return fail("$.releasedAt", "is only valid when released");
    }
    if state != "released" && has_proof {
        return fail("$.releaseProof", "is only valid when released");
    }
    if (state == "blocked" || state == "released")
        && (has_insertion || delivered.is_some() || receipt.is_some())
    {
        return fail(
            "$",
            "blocked/released claims cannot contain proved insertion or receipt evidence",
        );
    }
    if has_proof {
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
            if !super::same(field(proof, key), field(v, key)) {
                return fail(&member("$.releaseProof", key), detail);
            }
        }
        let established = millis(field(proof, "establishedAt").as_str().expect("checked"));
        if released.is_some_and(|r| millis(r) < established) {
            return fail("$.releasedAt", "must not precede the drained barrier");
        }
        if attempted.is_some_and(|a| established < millis(a)) {
            return fail(
                "$.releaseProof.establishedAt",
                "must not precede deliveryAttemptedAt",
            );
        }
    }
    if result.is_some() && state != "delivered" {
        return fail("$.resultMessageId", "is valid only after delivery");
    }
    if coalesced.is_some() && state != "delivered" {
        return fail("$.coalescedByResult", "is valid only after delivery");
    }
    if state == "delivered" {
        check_result_correlation(mode, result, coalesced)?;
    }
    if attempted.is_some_and(|a| millis(a) >= millis(expires)) {
        return fail("$.deliveryAttemptedAt", "must occur before claim expiry");
    }
    if let (Some(i), Some(a)) = (inserted, attempted)
        && millis(i) < millis(a)
    {
        return fail("$.insertedAt", "must not precede deliveryAttemptedAt");
    }
    if let (Some(d), Some(i)) = (delivered, inserted)
        && millis(d) < millis(i)
    {
        return fail("$.deliveredAt", "must not precede insertedAt");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    #[test]
    fn intents_aggregate_monotonically() {
        assert_eq!(effective_delivery_intent(&js("[]")).unwrap(), "status_only");
        assert_eq!(
            effective_delivery_intent(&js(r#"["status_only","follow_up"]"#)).unwrap(),
            "follow_up"
        );
        assert_eq!(
            effective_delivery_intent(&js(r#"["follow_up","wake","status_only"]"#)).unwrap(),
            "wake"
        );
        assert_eq!(
            effective_delivery_intent(&js(r#"["interrupt"]"#))
                .unwrap_err()
                .message(),
            "intents[0]: must be one of: wake, follow_up, status_only"
        );
        assert_eq!(
            effective_delivery_intent(&js("{}")).unwrap_err().message(),
            "intents: must be an array"
        );
    }

    #[test]
    fn controller_keys_bind_their_run() {
        let key = |run: &str| {
            js(&format!(
                concat!(
                    r#"{{"recipientPrincipalId":"m","recipientBindingEpoch":1,"#,
                    r#""sourceAuthorityId":{{"kind":"controller","bossRunId":"r","#,
                    r#""controllerGeneration":1}},"sourceEventId":"e","workerId":"w","#,
                    r#""workerGeneration":1,"transitionId":"t","#,
                    r#""transitionVersion":1{}}}"#
                ),
                run
            ))
        };
        assert_eq!(
            parse_delivery_equivalence_key(&key(""), "$")
                .unwrap_err()
                .message(),
            "$.bossRunId: is required for a controller source authority"
        );
        assert_eq!(
            parse_delivery_equivalence_key(&key(r#","bossRunId":"x""#), "$")
                .unwrap_err()
                .message(),
            concat!(
                "$.sourceAuthorityId.bossRunId: must exactly ",
                "match bossRunId for a controller source authority"
            )
        );
        assert_eq!(
            delivery_group_id(&key(r#","bossRunId":"r""#))
                .unwrap()
                .len(),
            64
        );
    }
}
