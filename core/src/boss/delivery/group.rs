//! Delivery groups: minting an assembly member, the assembly input, the sealed group it
//! assembles, and the stored group record.
//!
//! Assembly is a replay: whatever order the members come in, the group lists them by notice id
//! in UTF-16 code-unit order (JavaScript's `<`), so every permutation assembles the same record.

use super::keys::{check_equivalence_key, delivery_group_id, effective_intent};
use super::{
    DELIVERY_GROUP_ASSEMBLY_VERSION, DELIVERY_GROUP_MEMBERSHIP_STATES, DELIVERY_GROUP_STATES,
    DELIVERY_GROUP_VERSION, DELIVERY_INTENTS, enum_array, literal_version, unique_strings,
};
use crate::boss::{JsonObject, string_array_json};
use crate::canonical::compare_utf16;
use crate::contract::read::{
    self, dense_array, element, exact_keys, exact_record, fail, field, integer, one_of,
    optional_string, optional_timestamp, record, string,
};
use crate::contract::{Args, Failure, Js, Out};

const MEMBER_KINDS: &[&str] = &["built_in", "subscription"];

/// An assembly member: a notice and the intent it was minted with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Member<'v> {
    notice_id: &'v str,
    intent: &'static str,
}

impl Member<'_> {
    fn to_json(self) -> String {
        JsonObject::new()
            .str("noticeId", self.notice_id)
            .str("requestedDeliveryIntent", self.intent)
            .finish()
    }
}

/// `mintDeliveryGroupAssemblyMember`: a built-in member defaults to `wake`; a subscription
/// member must bring its intent.
pub(super) fn mint_member_op(a: Args<'_>) -> Result<Out, Failure> {
    let v = a.get(0);
    exact_record(v, &["kind", "noticeId"], &["requestedDeliveryIntent"], "$")?;
    let kind = one_of(field(v, "kind"), MEMBER_KINDS, "$.kind")?;
    let intent = match field(v, "requestedDeliveryIntent") {
        Js::Undefined => (kind == "built_in").then_some("wake"),
        given => Some(one_of(
            given,
            DELIVERY_INTENTS,
            "$.requestedDeliveryIntent",
        )?),
    };
    let Some(intent) = intent else {
        return fail(
            "$.requestedDeliveryIntent",
            "subscription members must declare an intent before assembly",
        );
    };
    let notice_id = string(field(v, "noticeId"), "$.noticeId")?;
    Ok(Out::Json(Member { notice_id, intent }.to_json()))
}

/// A parsed assembly input (the equivalence key stays the caller's value).
struct AssemblyInput<'v> {
    equivalence_key: &'v Js,
    subscription_registry_revision: i64,
    membership_revision: i64,
    primary_notice_id: &'v str,
    members: Vec<Member<'v>>,
    recipient_transfer_generation: i64,
}

fn parse_assembly_input(v: &Js) -> read::Read<AssemblyInput<'_>> {
    exact_record(
        v,
        &[
            "version",
            "equivalenceKey",
            "subscriptionRegistryRevision",
            "membershipRevision",
            "primaryNoticeId",
            "members",
            "recipientTransferGeneration",
        ],
        &[],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        DELIVERY_GROUP_ASSEMBLY_VERSION,
        "$.version",
    )?;
    let equivalence_key = field(v, "equivalenceKey");
    check_equivalence_key(equivalence_key, "$.equivalenceKey")?;
    let values = dense_array(field(v, "members"), "$.members")?;
    if values.is_empty() {
        return fail("$.members", "must be a non-empty array");
    }
    let mut members = Vec::with_capacity(values.len());
    for (i, value) in values.into_iter().enumerate() {
        let path = element("$.members", i);
        record(value, &path)?;
        exact_keys(value, &["noticeId", "requestedDeliveryIntent"], &[], &path)?;
        let notice_id = string(field(value, "noticeId"), &format!("{path}.noticeId"))?;
        let intent = one_of(
            field(value, "requestedDeliveryIntent"),
            DELIVERY_INTENTS,
            &format!("{path}.requestedDeliveryIntent"),
        )?;
        members.push(Member { notice_id, intent });
    }
    let mut ids: Vec<&str> = members.iter().map(|m| m.notice_id).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|pair| pair[0] == pair[1]) {
        return fail("$.members", "notice IDs must be unique");
    }
    let primary_notice_id = string(field(v, "primaryNoticeId"), "$.primaryNoticeId")?;
    if !members.iter().any(|m| m.notice_id == primary_notice_id) {
        return fail("$.primaryNoticeId", "must identify an assembly member");
    }
    Ok(AssemblyInput {
        equivalence_key,
        subscription_registry_revision: integer(
            field(v, "subscriptionRegistryRevision"),
            "$.subscriptionRegistryRevision",
            0,
        )?,
        membership_revision: integer(field(v, "membershipRevision"), "$.membershipRevision", 1)?,
        primary_notice_id,
        members,
        recipient_transfer_generation: integer(
            field(v, "recipientTransferGeneration"),
            "$.recipientTransferGeneration",
            0,
        )?,
    })
}

fn key_json(key: &Js) -> String {
    key.to_json()
        .expect("a checked equivalence key is plain JSON")
}

/// `parseDeliveryGroupAssemblyInput`: a fresh input (the binding puts the caller's own
/// equivalence key back in it).
pub(super) fn parse_assembly_input_op(a: Args<'_>) -> Result<Out, Failure> {
    let input = parse_assembly_input(a.get(0))?;
    let members: Vec<String> = input.members.iter().map(|m| m.to_json()).collect();
    Ok(Out::Json(
        JsonObject::new()
            .str("version", DELIVERY_GROUP_ASSEMBLY_VERSION)
            .raw("equivalenceKey", &key_json(input.equivalence_key))
            .int(
                "subscriptionRegistryRevision",
                input.subscription_registry_revision,
            )
            .int("membershipRevision", input.membership_revision)
            .str("primaryNoticeId", input.primary_notice_id)
            .raw("members", &format!("[{}]", members.join(",")))
            .int(
                "recipientTransferGeneration",
                input.recipient_transfer_generation,
            )
            .finish(),
    ))
}

/// `assembleDeliveryGroup(value)` as JSON: the sealed, pending group of the input's members
/// in notice-id order.
pub fn assemble_group_json(value: &Js) -> read::Read<String> {
    let input = parse_assembly_input(value)?;
    let mut members = input.members;
    members.sort_by(|x, y| compare_utf16(x.notice_id, y.notice_id));
    let ids: Vec<&str> = members.iter().map(|m| m.notice_id).collect();
    let intents: Vec<&str> = members.iter().map(|m| m.intent).collect();
    let group_id = delivery_group_id(input.equivalence_key)?;
    Ok(JsonObject::new()
        .str("version", DELIVERY_GROUP_VERSION)
        .str("deliveryGroupId", &group_id)
        .raw("equivalenceKey", &key_json(input.equivalence_key))
        .int(
            "subscriptionRegistryRevision",
            input.subscription_registry_revision,
        )
        .int("membershipRevision", input.membership_revision)
        .str("membershipState", "sealed")
        .str("primaryNoticeId", input.primary_notice_id)
        .raw("memberNoticeIds", &string_array_json(&ids))
        .raw("requestedIntents", &string_array_json(&intents))
        .str("effectiveDeliveryIntent", effective_intent(&intents))
        .int(
            "recipientTransferGeneration",
            input.recipient_transfer_generation,
        )
        .str("state", "pending")
        .finish())
}

pub(super) fn assemble_op(a: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(assemble_group_json(a.get(0))?))
}

/// `parseDeliveryGroupRecord`'s checks: the id is the key's, the membership is unique and
/// holds the primary, one intent per member and their aggregate, and the state rules
/// (assembling groups stay pending, migration and succession links).
pub fn check_group_record(v: &Js) -> read::Read<()> {
    exact_record(
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
    let f = |key: &str| field(v, key);
    literal_version(f("version"), DELIVERY_GROUP_VERSION, "$.version")?;
    let group_id = string(f("deliveryGroupId"), "$.deliveryGroupId")?;
    let key = f("equivalenceKey");
    check_equivalence_key(key, "$.equivalenceKey")?;
    if group_id != delivery_group_id(key)? {
        return fail("$.deliveryGroupId", "does not match equivalenceKey");
    }
    integer(
        f("subscriptionRegistryRevision"),
        "$.subscriptionRegistryRevision",
        0,
    )?;
    integer(f("membershipRevision"), "$.membershipRevision", 1)?;
    let membership = one_of(
        f("membershipState"),
        DELIVERY_GROUP_MEMBERSHIP_STATES,
        "$.membershipState",
    )?;
    let primary = string(f("primaryNoticeId"), "$.primaryNoticeId")?;
    let members = unique_strings(f("memberNoticeIds"), "$.memberNoticeIds")?;
    if !members.contains(&primary) {
        return fail("$.primaryNoticeId", "must be a memberNoticeId");
    }
    let intents = enum_array(
        f("requestedIntents"),
        DELIVERY_INTENTS,
        "$.requestedIntents",
    )?;
    if intents.len() != members.len() {
        return fail(
            "$.requestedIntents",
            "must contain one intent for each member notice",
        );
    }
    let aggregate = one_of(
        f("effectiveDeliveryIntent"),
        DELIVERY_INTENTS,
        "$.effectiveDeliveryIntent",
    )?;
    if aggregate != effective_intent(&intents) {
        return fail(
            "$.effectiveDeliveryIntent",
            "does not equal the monotonic wake > follow_up > status_only aggregate",
        );
    }
    let consumed_at = optional_timestamp(
        f("operativeActivationConsumedAt"),
        "$.operativeActivationConsumedAt",
    )?;
    integer(
        f("recipientTransferGeneration"),
        "$.recipientTransferGeneration",
        0,
    )?;
    let supersedes = optional_string(
        f("supersedesDeliveryGroupId"),
        "$.supersedesDeliveryGroupId",
    )?;
    let successor = optional_string(f("successorDeliveryGroupId"), "$.successorDeliveryGroupId")?;
    let transition = optional_string(f("authorityTransitionId"), "$.authorityTransitionId")?;
    let state = one_of(f("state"), DELIVERY_GROUP_STATES, "$.state")?;
    if membership == "assembling" && state != "pending" {
        return fail("$.state", "an assembling group must remain pending");
    }
    if state != "pending" && membership != "sealed" {
        return fail(
            "$.membershipState",
            "must be sealed before reservation or any later state",
        );
    }
    let receipted = matches!(state, "inserted" | "delivered");
    if (aggregate == "status_only" || !receipted) && consumed_at.is_some() {
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
                "a migrated old group requires sealed membership, successor, and authority \
                 transition only",
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
    if supersedes == Some(group_id) || successor == Some(group_id) {
        return fail("$", "a group cannot supersede itself");
    }
    Ok(())
}

pub(super) fn parse_record_op(a: Args<'_>) -> Result<Out, Failure> {
    check_group_record(a.get(0))?;
    Ok(Out::Input(0))
}
