//! Lifecycle notices and their delivery: notice and delivery-group identities, group assembly,
//! group and claim records, the recipient ingress envelope, target-ledger lookups and the store
//! validators of those records (all exported by `./boss`).
//!
//! Every parser checks in the TypeScript core's order and answers with its paths and messages;
//! parsers that return the caller's record answer [`Out::Input`], the assembly functions a fresh
//! record. The two identities are canonical hashes: `lifecycleNoticeId` over the notice's
//! logical key (domain `orc-notice-v1`) and `deliveryGroupId` over the delivery equivalence key
//! (domain `orc-delivery-group-v1`).
//!
//! The record checks are public (`check_*`), so other modules (supervision) reuse them.

mod claim;
mod group;
mod ingress;
mod keys;
mod notice;
mod store;

pub use claim::check_claim_record;
pub use group::{assemble_group_json, check_group_record};
pub use ingress::{check_ingress_envelope, check_target_ledger_result};
pub use keys::{
    check_equivalence_key, delivery_group_id, effective_delivery_intent, effective_intent,
    lifecycle_notice_id,
};
pub use notice::check_lifecycle_notice;

use super::{JsonObject, string_array_json};
use crate::contract::read::{self, dense_array, element, fail, member, one_of, string_array};
use crate::contract::{Failure, Js, Op, Proto};

/// `orc.lifecycle-notice.v1`.
pub const LIFECYCLE_NOTICE_VERSION: &str = "orc.lifecycle-notice.v1";
/// `orc.delivery-group.v1`.
pub const DELIVERY_GROUP_VERSION: &str = "orc.delivery-group.v1";
/// `orc.delivery-claim.v1`.
pub const DELIVERY_CLAIM_VERSION: &str = "orc.delivery-claim.v1";
/// `orc.notice-recipient-ingress.v1`.
pub const NOTICE_RECIPIENT_INGRESS_VERSION: &str = "orc.notice-recipient-ingress.v1";
/// `orc.target-ledger-result.v1`.
pub const TARGET_LEDGER_RESULT_VERSION: &str = "orc.target-ledger-result.v1";
/// `orc.delivery-group-assembly.v1`.
pub const DELIVERY_GROUP_ASSEMBLY_VERSION: &str = "orc.delivery-group-assembly.v1";

/// Delivery intents, strongest first (the aggregate of a group is the strongest present).
pub const DELIVERY_INTENTS: &[&str] = &["wake", "follow_up", "status_only"];
/// Where a recipient runs.
pub const RECIPIENT_CONTEXTS: &[&str] = &["pi", "opencode", "headless_cli"];
/// The contexts a delivery claim can target (no headless recipient holds a claim).
pub(crate) const CLAIM_RECIPIENT_CONTEXTS: &[&str] = &["pi", "opencode"];
/// States of a delivery claim record.
pub const DELIVERY_CLAIM_STATES: &[&str] = &[
    "reserved",
    "inserting",
    "inserted",
    "delivered",
    "blocked",
    "released",
];
/// The claim states a notice projects (a released claim is authority state, not a notice's).
pub const NOTICE_DELIVERY_CLAIM_STATES: &[&str] =
    &["reserved", "inserting", "inserted", "delivered", "blocked"];
/// How a delivery reaches the recipient.
pub const DELIVERY_MODES: &[&str] = &["lifecycle_message", "correlated_result"];
/// Membership states of a delivery group.
pub const DELIVERY_GROUP_MEMBERSHIP_STATES: &[&str] = &["assembling", "sealed"];
/// States of a delivery group.
pub const DELIVERY_GROUP_STATES: &[&str] = &[
    "pending",
    "reserved",
    "inserting",
    "inserted",
    "delivered",
    "blocked",
    "migrated",
];
/// Operations of the recipient ingress envelope.
pub const NOTICE_RECIPIENT_INGRESS_OPERATIONS: &[&str] = &[
    "reserve_delivery",
    "lookup_target_ledger",
    "insert_or_attach",
    "record_receipt",
    "prove_target_drained",
    "acknowledge",
];
/// States of a target-ledger lookup.
pub const TARGET_LEDGER_STATES: &[&str] = &["absent", "inserting", "inserted", "ambiguous"];

/// The five absence flags a drained barrier proves, each `true`.
pub(crate) const DRAINED_FLAGS: &[&str] = &[
    "noSessionEntry",
    "noAdapterQueue",
    "noInflightInvocation",
    "noPiFollowUp",
    "noOpenCodePendingPrompt",
];

/// This module's constants, added to the `boss.constants` object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    let list = |o: JsonObject, key: &str, items: &[&str]| o.raw(key, &string_array_json(items));
    let o = o
        .str("LIFECYCLE_NOTICE_VERSION", LIFECYCLE_NOTICE_VERSION)
        .str("DELIVERY_GROUP_VERSION", DELIVERY_GROUP_VERSION)
        .str("DELIVERY_CLAIM_VERSION", DELIVERY_CLAIM_VERSION)
        .str(
            "NOTICE_RECIPIENT_INGRESS_VERSION",
            NOTICE_RECIPIENT_INGRESS_VERSION,
        )
        .str("TARGET_LEDGER_RESULT_VERSION", TARGET_LEDGER_RESULT_VERSION)
        .str(
            "DELIVERY_GROUP_ASSEMBLY_VERSION",
            DELIVERY_GROUP_ASSEMBLY_VERSION,
        );
    let o = list(o, "DELIVERY_INTENTS", DELIVERY_INTENTS);
    let o = list(o, "RECIPIENT_CONTEXTS", RECIPIENT_CONTEXTS);
    let o = list(o, "DELIVERY_CLAIM_STATES", DELIVERY_CLAIM_STATES);
    let o = list(
        o,
        "NOTICE_DELIVERY_CLAIM_STATES",
        NOTICE_DELIVERY_CLAIM_STATES,
    );
    let o = list(o, "DELIVERY_MODES", DELIVERY_MODES);
    let o = list(
        o,
        "DELIVERY_GROUP_MEMBERSHIP_STATES",
        DELIVERY_GROUP_MEMBERSHIP_STATES,
    );
    let o = list(o, "DELIVERY_GROUP_STATES", DELIVERY_GROUP_STATES);
    let o = list(
        o,
        "NOTICE_RECIPIENT_INGRESS_OPERATIONS",
        NOTICE_RECIPIENT_INGRESS_OPERATIONS,
    );
    list(o, "TARGET_LEDGER_STATES", TARGET_LEDGER_STATES)
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.lifecycleNoticeId",
        run: keys::lifecycle_notice_id_op,
    },
    Op {
        name: "boss.deliveryGroupId",
        run: keys::delivery_group_id_op,
    },
    Op {
        name: "boss.parseDeliveryEquivalenceKey",
        run: keys::parse_equivalence_key_op,
    },
    Op {
        name: "boss.effectiveDeliveryIntent",
        run: keys::effective_intent_op,
    },
    Op {
        name: "boss.parseLifecycleNotice",
        run: notice::parse_op,
    },
    Op {
        name: "boss.mintDeliveryGroupAssemblyMember",
        run: group::mint_member_op,
    },
    Op {
        name: "boss.parseDeliveryGroupAssemblyInput",
        run: group::parse_assembly_input_op,
    },
    Op {
        name: "boss.assembleDeliveryGroup",
        run: group::assemble_op,
    },
    Op {
        name: "boss.parseDeliveryGroupRecord",
        run: group::parse_record_op,
    },
    Op {
        name: "boss.parseDeliveryClaimRecord",
        run: claim::parse_op,
    },
    Op {
        name: "boss.parseNoticeRecipientIngressEnvelope",
        run: ingress::parse_envelope_op,
    },
    Op {
        name: "boss.parseTargetLedgerLookupResult",
        run: ingress::parse_target_ledger_op,
    },
    Op {
        name: "boss.validateLifecycleNoticeStore",
        run: store::lifecycle_notice_op,
    },
    Op {
        name: "boss.validateDeliveryGroupStore",
        run: store::delivery_group_op,
    },
    Op {
        name: "boss.validateDeliveryClaimStore",
        run: store::delivery_claim_op,
    },
    Op {
        name: "boss.validateTargetLedgerStore",
        run: store::target_ledger_op,
    },
];

/// Milliseconds of a timestamp a reader already accepted (`Date.parse`).
pub(crate) fn millis(timestamp: &str) -> i64 {
    read::parse_timestamp(timestamp).unwrap_or_default()
}

/// The result-correlation rules shared by notices, claims and ingress payloads: `coalescedByResult`
/// needs a result message and correlated mode; correlated mode needs a result message; lifecycle
/// mode forbids one. `mode_field` names the mode in the messages (`deliveryMode`, `ingressMode`).
pub(crate) fn result_correlation(
    mode: &str,
    mode_field: &str,
    result_message_id: Option<&str>,
    coalesced: Option<bool>,
    path: &str,
) -> read::Read<()> {
    let coalesced = coalesced == Some(true);
    if coalesced && result_message_id.is_none() {
        return fail(
            &member(path, "coalescedByResult"),
            "requires resultMessageId",
        );
    }
    if coalesced && mode != "correlated_result" {
        return fail(
            &member(path, "coalescedByResult"),
            format!("is valid only with correlated_result {mode_field}"),
        );
    }
    if mode == "correlated_result" && result_message_id.is_none() {
        return fail(
            &member(path, mode_field),
            "correlated_result requires resultMessageId",
        );
    }
    if mode == "lifecycle_message" && result_message_id.is_some() {
        return fail(
            &member(path, "resultMessageId"),
            format!("is forbidden with lifecycle_message {mode_field}"),
        );
    }
    Ok(())
}

/// A non-empty array of distinct non-empty strings.
pub(crate) fn unique_strings<'v>(value: &'v Js, path: &str) -> read::Read<Vec<&'v str>> {
    let entries = string_array(value, path)?;
    if entries.is_empty() {
        return fail(path, "must not be empty");
    }
    let mut sorted = entries.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return fail(path, "must not contain duplicates");
    }
    Ok(entries)
}

/// A non-empty array whose every element is one of `allowed`.
pub(crate) fn enum_array(
    value: &Js,
    allowed: &[&'static str],
    path: &str,
) -> read::Read<Vec<&'static str>> {
    let entries = dense_array(value, path)?;
    if entries.is_empty() {
        return fail(path, "must be a non-empty array");
    }
    entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| one_of(entry, allowed, &element(path, i)))
        .collect()
}

/// The primary notice (a non-empty string) and the members (distinct), the primary among them.
pub(crate) fn primary_and_members(primary: &Js, members: &Js, path: &str) -> read::Read<()> {
    let primary_path = member(path, "primaryNoticeId");
    let primary = read::string(primary, &primary_path)?;
    let members = unique_strings(members, &member(path, "memberNoticeIds"))?;
    if !members.contains(&primary) {
        return fail(&primary_path, "must be a memberNoticeId");
    }
    Ok(())
}

/// `deliveryClaimId` (a non-empty string) and `claimGeneration` (≥ 1) of a record at `path`.
pub(crate) fn claim_identity(value: &Js, path: &str) -> read::Read<()> {
    read::string(
        read::field(value, "deliveryClaimId"),
        &member(path, "deliveryClaimId"),
    )?;
    read::integer(
        read::field(value, "claimGeneration"),
        &member(path, "claimGeneration"),
        1,
    )?;
    Ok(())
}

/// Every drained-barrier flag of the record at `path` is the boolean `true`.
pub(crate) fn drained_flags(value: &Js, path: &str) -> read::Read<()> {
    for key in DRAINED_FLAGS {
        let at = member(path, key);
        if !read::boolean(read::field(value, key), &at)? {
            return fail(&at, "must be true to prove absence");
        }
    }
    Ok(())
}

/// The path argument of a parser that takes one (`path = "$"` in TypeScript).
pub(crate) fn path_argument(value: &Js) -> String {
    match value {
        Js::Undefined => "$".to_string(),
        other => other.js_string(),
    }
}

/// A contract failure without the canonical functions' extra `.code` (what a Boss parser throws
/// when a value it hashes is not canonical).
pub(crate) fn without_code(mut failure: Failure) -> Failure {
    failure.code = None;
    failure
}

/// `assertLiteralVersion`: the version is exactly `expected`, else `unsupported version:
/// ${String(value)}; expected <expected>`. Where `String(value)` itself throws (a
/// null-prototype object has no `toString`; `Array.prototype.join` cannot convert a symbol
/// element), that `TypeError` is the refusal, as in TypeScript.
pub(crate) fn literal_version(value: &Js, expected: &str, path: &str) -> read::Read<()> {
    if value.as_str() == Some(expected) {
        return Ok(());
    }
    if let Some(message) = unconvertible(value, 0) {
        return Err(Failure::type_error(message));
    }
    crate::boss::wire::literal_version(value, expected, path)
}

/// Why `String(value)` throws, if it does (nested arrays are joined, to a bounded depth).
fn unconvertible(value: &Js, depth: usize) -> Option<&'static str> {
    match value {
        Js::Object(o) if o.proto == Proto::Null => Some("Cannot convert object to primitive value"),
        Js::Array(a) if depth < 64 => a.items.iter().flatten().find_map(|item| match item {
            Js::Symbol => Some("Cannot convert a Symbol value to a string"),
            other => unconvertible(other, depth + 1),
        }),
        _ => None,
    }
}
