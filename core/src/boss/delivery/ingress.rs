//! The recipient ingress envelope (one payload shape per operation) and the target-ledger
//! lookup result a recipient answers with.

use super::claim::check_drained_barrier;
use super::{
    CLAIM_RECIPIENT_CONTEXTS, DELIVERY_INTENTS, DELIVERY_MODES,
    NOTICE_RECIPIENT_INGRESS_OPERATIONS, NOTICE_RECIPIENT_INGRESS_VERSION,
    TARGET_LEDGER_RESULT_VERSION, TARGET_LEDGER_STATES, claim_identity, literal_version, millis,
    primary_and_members, result_correlation, unique_strings,
};
use crate::contract::read::{
    self, exact_keys, exact_record, fail, field, integer, member, one_of, optional_boolean,
    optional_integer, optional_string, optional_timestamp, record, string, timestamp,
};
use crate::contract::{Args, Failure, Js, Out};

const PAYLOAD: &str = "$.payload";

/// `$.payload.<key>`.
fn at(key: &str) -> String {
    member(PAYLOAD, key)
}

/// The group and its membership revision.
fn group_binding(v: &Js) -> read::Read<()> {
    string(field(v, "deliveryGroupId"), &at("deliveryGroupId"))?;
    integer(field(v, "membershipRevision"), &at("membershipRevision"), 1)?;
    Ok(())
}

/// The group binding, then the group's intent and members (the primary among them).
fn group_membership(v: &Js) -> read::Read<()> {
    group_binding(v)?;
    one_of(
        field(v, "effectiveDeliveryIntent"),
        DELIVERY_INTENTS,
        &at("effectiveDeliveryIntent"),
    )?;
    primary_and_members(
        field(v, "primaryNoticeId"),
        field(v, "memberNoticeIds"),
        PAYLOAD,
    )
}

/// The recipient's context (a claim's: Pi or OpenCode), session and optional target session.
fn recipient_session(v: &Js) -> read::Read<()> {
    one_of(
        field(v, "recipientContext"),
        CLAIM_RECIPIENT_CONTEXTS,
        &at("recipientContext"),
    )?;
    string(field(v, "recipientSessionId"), &at("recipientSessionId"))?;
    optional_string(
        field(v, "recipientTargetSessionId"),
        &at("recipientTargetSessionId"),
    )?;
    Ok(())
}

fn recipient_binding(v: &Js) -> read::Read<()> {
    string(
        field(v, "recipientPrincipalId"),
        &at("recipientPrincipalId"),
    )?;
    integer(
        field(v, "recipientBindingEpoch"),
        &at("recipientBindingEpoch"),
        1,
    )?;
    Ok(())
}

fn reserve_delivery(v: &Js) -> read::Read<()> {
    exact_keys(
        v,
        &[
            "deliveryGroupId",
            "membershipRevision",
            "effectiveDeliveryIntent",
            "primaryNoticeId",
            "memberNoticeIds",
            "recipientContext",
            "recipientSessionId",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "recipientTransferGeneration",
            "workerGeneration",
            "requestedAt",
        ],
        &["recipientTargetSessionId"],
        PAYLOAD,
    )?;
    group_membership(v)?;
    recipient_session(v)?;
    recipient_binding(v)?;
    integer(
        field(v, "recipientTransferGeneration"),
        &at("recipientTransferGeneration"),
        0,
    )?;
    integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?;
    timestamp(field(v, "requestedAt"), &at("requestedAt"))?;
    Ok(())
}

fn lookup_target_ledger(v: &Js) -> read::Read<()> {
    exact_keys(
        v,
        &[
            "deliveryClaimId",
            "claimGeneration",
            "recipientContext",
            "recipientSessionId",
            "checkedAt",
        ],
        &["recipientTargetSessionId"],
        PAYLOAD,
    )?;
    claim_identity(v, PAYLOAD)?;
    recipient_session(v)?;
    timestamp(field(v, "checkedAt"), &at("checkedAt"))?;
    Ok(())
}

fn insert_or_attach(v: &Js) -> read::Read<()> {
    exact_keys(
        v,
        &[
            "deliveryClaimId",
            "claimGeneration",
            "deliveryGroupId",
            "membershipRevision",
            "effectiveDeliveryIntent",
            "primaryNoticeId",
            "memberNoticeIds",
            "transitionIds",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "workerGeneration",
            "ingressMode",
            "requestedAt",
        ],
        &["resultMessageId"],
        PAYLOAD,
    )?;
    claim_identity(v, PAYLOAD)?;
    group_membership(v)?;
    unique_strings(field(v, "transitionIds"), &at("transitionIds"))?;
    recipient_binding(v)?;
    integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?;
    let mode = one_of(field(v, "ingressMode"), DELIVERY_MODES, &at("ingressMode"))?;
    let result_message_id = optional_string(field(v, "resultMessageId"), &at("resultMessageId"))?;
    result_correlation(mode, "ingressMode", result_message_id, None, PAYLOAD)?;
    timestamp(field(v, "requestedAt"), &at("requestedAt"))?;
    Ok(())
}

fn record_receipt(v: &Js) -> read::Read<()> {
    exact_keys(
        v,
        &[
            "deliveryClaimId",
            "claimGeneration",
            "deliveryGroupId",
            "membershipRevision",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "workerGeneration",
            "deliveryReceiptId",
            "targetLedgerEntryId",
            "deliveryMode",
            "insertedAt",
            "deliveredAt",
        ],
        &["resultMessageId", "coalescedByResult"],
        PAYLOAD,
    )?;
    claim_identity(v, PAYLOAD)?;
    group_binding(v)?;
    recipient_binding(v)?;
    integer(field(v, "workerGeneration"), &at("workerGeneration"), 1)?;
    string(field(v, "deliveryReceiptId"), &at("deliveryReceiptId"))?;
    string(field(v, "targetLedgerEntryId"), &at("targetLedgerEntryId"))?;
    let mode = one_of(
        field(v, "deliveryMode"),
        DELIVERY_MODES,
        &at("deliveryMode"),
    )?;
    let inserted_at = timestamp(field(v, "insertedAt"), &at("insertedAt"))?;
    let delivered_at = timestamp(field(v, "deliveredAt"), &at("deliveredAt"))?;
    let result_message_id = optional_string(field(v, "resultMessageId"), &at("resultMessageId"))?;
    let coalesced = optional_boolean(field(v, "coalescedByResult"), &at("coalescedByResult"))?;
    if millis(delivered_at) < millis(inserted_at) {
        return fail(&at("deliveredAt"), "must not precede insertedAt");
    }
    result_correlation(mode, "deliveryMode", result_message_id, coalesced, PAYLOAD)
}

fn acknowledge(v: &Js) -> read::Read<()> {
    exact_keys(
        v,
        &[
            "deliveryGroupId",
            "noticeIds",
            "recipientPrincipalId",
            "acknowledgedAt",
        ],
        &["recipientBindingEpoch"],
        PAYLOAD,
    )?;
    string(field(v, "deliveryGroupId"), &at("deliveryGroupId"))?;
    unique_strings(field(v, "noticeIds"), &at("noticeIds"))?;
    string(
        field(v, "recipientPrincipalId"),
        &at("recipientPrincipalId"),
    )?;
    optional_integer(
        field(v, "recipientBindingEpoch"),
        &at("recipientBindingEpoch"),
        1,
    )?;
    timestamp(field(v, "acknowledgedAt"), &at("acknowledgedAt"))?;
    Ok(())
}

/// The payload of `operation`.
fn check_payload(operation: &str, v: &Js) -> read::Read<()> {
    record(v, PAYLOAD)?;
    match operation {
        "reserve_delivery" => reserve_delivery(v),
        "lookup_target_ledger" => lookup_target_ledger(v),
        "insert_or_attach" => insert_or_attach(v),
        "record_receipt" => record_receipt(v),
        // The payload's keys are those of a release proof (checked in the same order).
        "prove_target_drained" => check_drained_barrier(v, PAYLOAD).map(|_| ()),
        _ => acknowledge(v),
    }
}

/// `parseNoticeRecipientIngressEnvelope`'s checks.
pub fn check_ingress_envelope(v: &Js) -> read::Read<()> {
    exact_record(
        v,
        &[
            "version",
            "operation",
            "requestId",
            "idempotencyKey",
            "payload",
        ],
        &[],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        NOTICE_RECIPIENT_INGRESS_VERSION,
        "$.version",
    )?;
    let operation = one_of(
        field(v, "operation"),
        NOTICE_RECIPIENT_INGRESS_OPERATIONS,
        "$.operation",
    )?;
    string(field(v, "requestId"), "$.requestId")?;
    string(field(v, "idempotencyKey"), "$.idempotencyKey")?;
    check_payload(operation, field(v, "payload"))
}

pub(super) fn parse_envelope_op(a: Args<'_>) -> Result<Out, Failure> {
    check_ingress_envelope(a.get(0))?;
    Ok(Out::Input(0))
}

/// `parseTargetLedgerLookupResult`'s checks: ledger evidence exactly when inserted, and the
/// lookup not before the insertion it saw.
pub fn check_target_ledger_result(v: &Js) -> read::Read<()> {
    exact_record(
        v,
        &[
            "version",
            "deliveryClaimId",
            "claimGeneration",
            "state",
            "checkedAt",
        ],
        &["targetLedgerEntryId", "insertedAt"],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        TARGET_LEDGER_RESULT_VERSION,
        "$.version",
    )?;
    claim_identity(v, "$")?;
    let state = one_of(field(v, "state"), TARGET_LEDGER_STATES, "$.state")?;
    let checked_at = timestamp(field(v, "checkedAt"), "$.checkedAt")?;
    let ledger_id = optional_string(field(v, "targetLedgerEntryId"), "$.targetLedgerEntryId")?;
    let inserted_at = optional_timestamp(field(v, "insertedAt"), "$.insertedAt")?;
    let evidence = [ledger_id.is_some(), inserted_at.is_some()];
    if state == "inserted" && evidence.contains(&false) {
        return fail("$", "ledger evidence is required when state is inserted");
    }
    if state != "inserted" && evidence.contains(&true) {
        return fail("$", "ledger evidence is valid only when state is inserted");
    }
    if let Some(inserted) = inserted_at
        && millis(checked_at) < millis(inserted)
    {
        return fail("$.checkedAt", "must not precede insertedAt");
    }
    Ok(())
}

pub(super) fn parse_target_ledger_op(a: Args<'_>) -> Result<Out, Failure> {
    check_target_ledger_result(a.get(0))?;
    Ok(Out::Input(0))
}
