//! Subscriber rebind migrations: `parseSubscriberRebindMigration`, which classifies every old
//! delivery group of a subscriber, by its authoritative evidence ([`super::evidence`]), as
//! migrated, delivered at the old epoch, not replayed, or blocked on ambiguous evidence.

use super::evidence::link_evidence;
use super::lease::{s, version};
use super::{
    REBIND_MIGRATION_STATES, Rec, SUBSCRIBER_REBIND_MIGRATION_VERSION, SUBSCRIPTION_STATES, fields,
    get, int, millis, num, own_dense_array, same, text,
};
use crate::boss::delivery::delivery_group_id;
use crate::contract::canonical::canonical_json;
use crate::contract::read::{Read, element, exact_keys, fail, member, record};
use crate::contract::{Failure, Js, JsObject};

const DISPOSITIONS: &[&str] = &[
    "migrated",
    "delivered_old_epoch",
    "blocked_ambiguous",
    "not_replayed",
];

/// The canonical JSON of a value already known to be canonical (two values compare equal under
/// `canonicalHash` exactly when these texts are equal).
fn canonical(value: &Js) -> Result<String, Failure> {
    canonical_json(value).map_err(|mut f| {
        f.code = None;
        f
    })
}

/// `{...key, recipientBindingEpoch: epoch}`.
fn with_epoch(key: &Js, epoch: i64) -> Js {
    let Js::Object(object) = key else {
        return key.clone();
    };
    let mut members = object.members.clone();
    match members
        .iter_mut()
        .find(|(k, _)| k.lone.is_none() && k.text == "recipientBindingEpoch")
    {
        Some(slot) => slot.1 = num(epoch),
        None => {
            return Rec(members)
                .put("recipientBindingEpoch", num(epoch))
                .build();
        }
    }
    Js::Object(JsObject {
        members,
        ..object.clone()
    })
}

/// What the migration record fixes for every link.
struct Subscriber<'a> {
    principal: &'a str,
    old_epoch: i64,
    new_epoch: i64,
}

/// Whether `record` binds the old group revision, the stable subscriber at the old epoch and the
/// previous transfer generation.
fn binds_old_revision(
    record: &Js,
    group_id: &str,
    revision: Js,
    who: &Subscriber,
    transfer: i64,
) -> bool {
    text(record, "deliveryGroupId") == Some(group_id)
        && same(get(record, "membershipRevision"), &revision)
        && text(record, "recipientPrincipalId") == Some(who.principal)
        && int(record, "recipientBindingEpoch") == Some(who.old_epoch)
        && int(record, "recipientTransferGeneration") == Some(transfer)
}

/// One `deliveryGroups` entry.
fn link(entry: &Js, path: &str, who: &Subscriber) -> Read<Js> {
    record(entry, path)?;
    exact_keys(
        entry,
        &[
            "oldDeliveryGroupId",
            "oldEquivalenceKey",
            "disposition",
            "previousRecipientTransferGeneration",
            "recipientTransferGeneration",
            "evidence",
        ],
        &["successorDeliveryGroupId", "successorEquivalenceKey"],
        path,
    )?;
    let f = fields(entry, path);
    let at = |key: &str| f.at(key);
    let disposition = f.one_of("disposition", DISPOSITIONS)?;
    let successor_id = f.optional_string("successorDeliveryGroupId")?;
    let successor_key = f.get("successorEquivalenceKey");
    let has_successor_key = !matches!(successor_key, Js::Undefined);
    let migrated = disposition == "migrated";
    if migrated != successor_id.is_some() || migrated != has_successor_key {
        return fail(
            &at("successorDeliveryGroupId"),
            "successor ID and equivalence key are required only for migrated groups",
        );
    }
    let old_id = f.string("oldDeliveryGroupId")?;
    let old_key = f.get("oldEquivalenceKey");
    if old_id != delivery_group_id(old_key)? {
        return fail(
            &at("oldDeliveryGroupId"),
            "does not match oldEquivalenceKey",
        );
    }
    if text(old_key, "recipientPrincipalId") != Some(who.principal)
        || int(old_key, "recipientBindingEpoch") != Some(who.old_epoch)
    {
        return fail(
            &at("oldEquivalenceKey"),
            "must bind the stable subscriber at the old epoch",
        );
    }
    if successor_id == Some(old_id) {
        return fail(
            &at("successorDeliveryGroupId"),
            "must differ from the old group",
        );
    }
    let previous = f.integer("previousRecipientTransferGeneration", 0)?;
    let transfer = f.integer("recipientTransferGeneration", 0)?;
    let evidence_path = at("evidence");
    let evidence = link_evidence(f.get("evidence"), &evidence_path)?;
    let in_evidence = |key: &str| fields(entry, &evidence_path).at(key);
    let group = get(&evidence, "oldGroup");
    let group_path = in_evidence("oldGroup");
    if text(group, "membershipState") != Some("sealed") {
        return fail(
            &member(&group_path, "membershipState"),
            "the old delivery group must be sealed",
        );
    }
    let group_state = text(group, "state").expect("a parsed group");
    if group_state == "migrated" {
        return fail(
            &member(&group_path, "state"),
            "evidence must describe the authoritative pre-migration state",
        );
    }
    if text(group, "deliveryGroupId") != Some(old_id)
        || canonical(get(group, "equivalenceKey"))? != canonical(old_key)?
    {
        return fail(
            &group_path,
            "must be the old delivery group named by this link",
        );
    }
    if int(group, "recipientTransferGeneration") != Some(previous) {
        return fail(
            &member(&group_path, "recipientTransferGeneration"),
            "must match the link's previous transfer generation",
        );
    }
    let revision = get(group, "membershipRevision").clone();
    let ledger = get(&evidence, "targetLedger");
    if !binds_old_revision(ledger, old_id, revision.clone(), who, previous) {
        return fail(
            &in_evidence("targetLedger"),
            "must bind the old group revision, recipient epoch, and transfer generation",
        );
    }
    if text(&evidence, "authorityPrincipalId") != Some(who.principal) {
        return fail(
            &in_evidence("authorityPrincipalId"),
            "must authenticate the old recipient's target ledger",
        );
    }
    let observation = get(&evidence, "currentClaim");
    let claim = observation.get("claim");
    if let Some(claim) = claim
        && !binds_old_revision(claim, old_id, revision.clone(), who, previous)
    {
        return fail(
            &in_evidence("currentClaim"),
            "must bind the current claim for the old group revision and recipient epoch",
        );
    }
    let ledger_state = text(ledger, "state").expect("a parsed ledger");
    let receipt = evidence.get("receipt");
    let matching_receipt = match (receipt, claim) {
        (Some(r), Some(c)) if text(c, "state") == Some("delivered") => {
            same(get(r, "deliveryClaimId"), get(c, "deliveryClaimId"))
                && same(get(r, "claimGeneration"), get(c, "claimGeneration"))
                && binds_old_revision(r, old_id, revision.clone(), who, previous)
                && [
                    "deliveryReceiptId",
                    "targetLedgerEntryId",
                    "insertedAt",
                    "deliveredAt",
                ]
                .iter()
                .all(|k| same(get(r, k), get(c, k)))
                && ledger_state == "inserted"
                && same(
                    get(r, "targetLedgerEntryId"),
                    get(ledger, "targetLedgerEntryId"),
                )
                && same(get(r, "insertedAt"), get(ledger, "insertedAt"))
        }
        _ => false,
    };
    if receipt.is_some() && !matching_receipt {
        return fail(
            &in_evidence("receipt"),
            concat!(
                "must exactly match the delivered current claim ",
                "and authenticated inserted-ledger evidence"
            ),
        );
    }
    let time = |v: &Js, key: &str| millis(text(v, key).expect("a parsed timestamp"));
    let barrier = evidence.get("drainBarrier");
    let matching_barrier = barrier.is_some_and(|b| {
        binds_old_revision(b, old_id, revision.clone(), who, previous)
            && time(b, "establishedAt") >= time(observation, "observedAt")
            && time(b, "establishedAt") >= time(ledger, "checkedAt")
    });
    if barrier.is_some() && !matching_barrier {
        return fail(
            &in_evidence("drainBarrier"),
            "must postdate and bind the unclaimed old group and absent-ledger observations",
        );
    }
    let ack = evidence.get("acknowledgment");
    let matching_ack = ack.is_some_and(|a| {
        let members = match get(group, "memberNoticeIds") {
            Js::Array(list) => list.items.iter().flatten().filter_map(Js::as_str).collect(),
            _ => Vec::new(),
        };
        let notices: Vec<&str> = match get(a, "noticeIds") {
            Js::Array(list) => list.items.iter().flatten().filter_map(Js::as_str).collect(),
            _ => Vec::new(),
        };
        text(a, "deliveryGroupId") == Some(old_id)
            && text(a, "recipientPrincipalId") == Some(who.principal)
            && int(a, "recipientBindingEpoch") == Some(who.old_epoch)
            && notices.len() == members.len()
            && notices.iter().all(|n| members.contains(n))
            && receipt.is_none_or(|r| time(a, "acknowledgedAt") >= time(r, "deliveredAt"))
    });
    if ack.is_some() && !matching_ack {
        return fail(
            &in_evidence("acknowledgment"),
            "must acknowledge every notice in the old sealed group at the old recipient epoch",
        );
    }
    let claimed = text(observation, "status") == Some("claimed");
    let proved_absent =
        group_state == "pending" && !claimed && ledger_state == "absent" && matching_barrier;
    let proved_delivered = group_state == "delivered" && matching_receipt;
    let proved_not_replayed = proved_delivered || matching_ack;
    let ambiguous = ledger_state == "inserting"
        || ledger_state == "ambiguous"
        || (claimed && claim.and_then(|c| text(c, "state")) != Some("delivered"))
        || (!proved_absent && !proved_delivered && !matching_ack);
    if migrated {
        if !proved_absent || receipt.is_some() || ack.is_some() {
            return fail(
                &evidence_path,
                concat!(
                    "migration requires an unclaimed pending group, authenticated ",
                    "absent ledger, and a matching fully drained barrier"
                ),
            );
        }
        if successor_id != Some(delivery_group_id(successor_key)?.as_str()) {
            return fail(
                &at("successorDeliveryGroupId"),
                "does not match successorEquivalenceKey",
            );
        }
        if canonical(successor_key)? != canonical(&with_epoch(old_key, who.new_epoch))? {
            return fail(
                &at("successorEquivalenceKey"),
                "must differ from the old key only by the new recipient epoch",
            );
        }
        if transfer != previous + 1 {
            return fail(
                &at("recipientTransferGeneration"),
                "must increment exactly once for migration",
            );
        }
    } else if transfer != previous {
        return fail(
            &at("recipientTransferGeneration"),
            "must not increment without a successor group",
        );
    }
    if disposition == "delivered_old_epoch" && !proved_delivered {
        return fail(
            &in_evidence("receipt"),
            "delivered_old_epoch requires a receipt matching the delivered old-epoch claim",
        );
    }
    if disposition == "not_replayed" && !proved_not_replayed {
        return fail(
            &evidence_path,
            "not_replayed requires matching delivered or acknowledged evidence",
        );
    }
    if disposition == "blocked_ambiguous" && !ambiguous {
        return fail(
            &evidence_path,
            "blocked_ambiguous requires unresolved claim or ledger evidence",
        );
    }
    if disposition != "blocked_ambiguous" && ambiguous {
        return fail(
            &at("disposition"),
            "ambiguous evidence must block the migration",
        );
    }
    Ok(Rec::new()
        .put("oldDeliveryGroupId", Js::str(old_id))
        .put("oldEquivalenceKey", old_key.clone())
        .opt("successorDeliveryGroupId", successor_id.map(Js::str))
        .opt(
            "successorEquivalenceKey",
            has_successor_key.then(|| successor_key.clone()),
        )
        .put("disposition", Js::str(disposition))
        .put("previousRecipientTransferGeneration", num(previous))
        .put("recipientTransferGeneration", num(transfer))
        .put("evidence", evidence)
        .build())
}

fn distinct(ids: &[&str]) -> bool {
    ids.iter().enumerate().all(|(i, id)| !ids[..i].contains(id))
}

/// `parseSubscriberRebindMigration`.
pub fn parse_subscriber_rebind_migration(v: &Js) -> Read<Js> {
    record(v, "$")?;
    exact_keys(
        v,
        &[
            "version",
            "authorityTransitionId",
            "subscriptionId",
            "stableSubscriberPrincipalId",
            "oldSubscriberBindingEpoch",
            "newSubscriberBindingEpoch",
            "oldSubscriberBindingGeneration",
            "newSubscriberBindingGeneration",
            "reauthorized",
            "resultingSubscriptionState",
            "deliveryGroups",
            "state",
            "createdAt",
        ],
        &["committedAt"],
        "$",
    )?;
    let f = fields(v, "$");
    version(f, SUBSCRIBER_REBIND_MIGRATION_VERSION)?;
    let n = |key: &str| f.integer(key, 1);
    let old_epoch = n("oldSubscriberBindingEpoch")?;
    let new_epoch = n("newSubscriberBindingEpoch")?;
    let old_generation = n("oldSubscriberBindingGeneration")?;
    let new_generation = n("newSubscriberBindingGeneration")?;
    let principal = f.string("stableSubscriberPrincipalId")?;
    if new_epoch <= old_epoch {
        return fail("$.newSubscriberBindingEpoch", "must increase");
    }
    if new_generation != old_generation + 1 {
        return fail(
            "$.newSubscriberBindingGeneration",
            "must increment exactly once",
        );
    }
    let who = Subscriber {
        principal,
        old_epoch,
        new_epoch,
    };
    let entries = own_dense_array(f.get("deliveryGroups"), "$.deliveryGroups")?;
    let mut links = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        links.push(link(entry, &element("$.deliveryGroups", index), &who)?);
    }
    let ids: Vec<&str> = links
        .iter()
        .filter_map(|l| text(l, "oldDeliveryGroupId"))
        .collect();
    if !distinct(&ids) {
        return fail("$.deliveryGroups", "old delivery group IDs must be unique");
    }
    let successors: Vec<&str> = links
        .iter()
        .filter_map(|l| text(l, "successorDeliveryGroupId"))
        .collect();
    if !distinct(&successors) {
        return fail(
            "$.deliveryGroups",
            "successor delivery group IDs must be unique",
        );
    }
    let reauthorized = f.boolean("reauthorized")?;
    let resulting = f.one_of("resultingSubscriptionState", SUBSCRIPTION_STATES)?;
    if !reauthorized && resulting != "suspended" {
        return fail(
            "$.resultingSubscriptionState",
            "must be suspended when reauthorization fails",
        );
    }
    let disposition = |l: &Js| text(l, "disposition").expect("a parsed link").to_string();
    if !reauthorized && links.iter().any(|l| disposition(l) == "migrated") {
        return fail(
            "$.deliveryGroups",
            "unauthorized subscriptions cannot migrate delivery to the new binding",
        );
    }
    let state = f.one_of("state", REBIND_MIGRATION_STATES)?;
    let committed = f.optional_timestamp("committedAt")?;
    if (state == "committed") != committed.is_some() {
        return fail(
            "$.committedAt",
            "is required exactly when state is committed",
        );
    }
    let created = f.timestamp("createdAt")?;
    if committed.is_some_and(|c| millis(c) < millis(created)) {
        return fail("$.committedAt", "must not precede createdAt");
    }
    let authenticated =
        |l: &Js| millis(text(get(l, "evidence"), "authenticatedAt").expect("a parsed link"));
    if links.iter().any(|l| authenticated(l) > millis(created)) {
        return fail(
            "$.deliveryGroups",
            concat!(
                "authoritative link evidence must be authenticated ",
                "before the migration record is created"
            ),
        );
    }
    let blocked = links.iter().any(|l| disposition(l) == "blocked_ambiguous");
    if state == "blocked" && !blocked {
        return fail(
            "$.deliveryGroups",
            "a blocked migration requires an ambiguous old-epoch group",
        );
    }
    if state != "blocked" && blocked {
        return fail(
            "$.deliveryGroups",
            "ambiguous old-epoch evidence blocks projection and commit",
        );
    }
    let s = |key: &str| s(f, key);
    Ok(Rec::new()
        .put("version", Js::str(SUBSCRIBER_REBIND_MIGRATION_VERSION))
        .put("authorityTransitionId", s("authorityTransitionId")?)
        .put("subscriptionId", s("subscriptionId")?)
        .put("stableSubscriberPrincipalId", Js::str(principal))
        .put("oldSubscriberBindingEpoch", num(old_epoch))
        .put("newSubscriberBindingEpoch", num(new_epoch))
        .put("oldSubscriberBindingGeneration", num(old_generation))
        .put("newSubscriberBindingGeneration", num(new_generation))
        .put("reauthorized", Js::Bool(reauthorized))
        .put("resultingSubscriptionState", Js::str(resulting))
        .put("deliveryGroups", Js::array(links))
        .put("state", Js::str(state))
        .put("createdAt", Js::str(created))
        .opt("committedAt", committed.map(Js::str))
        .build())
}
