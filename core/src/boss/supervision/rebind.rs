//! Subscriber rebind migrations: the authoritative evidence for each old delivery group, its
//! digest, and `parseSubscriberRebindMigration`, which classifies every old group as migrated,
//! delivered at the old epoch, not replayed, or blocked on ambiguous evidence.

use super::delivery::{
    check_delivery_claim_record, check_delivery_group_record, delivery_group_id,
};
use super::subscription::hash_of;
use super::{
    REBIND_MIGRATION_STATES, Rec, SUBSCRIBER_REBIND_MIGRATION_VERSION, SUBSCRIPTION_STATES, get,
    int, millis, num, own_dense_array, same, strs, text,
};
use crate::contract::canonical::canonical_json;
use crate::contract::read::{
    Read, boolean, element, exact_keys, fail, field, hex_digest, integer, member, one_of,
    optional_string, optional_timestamp, record, string, string_array, timestamp,
};
use crate::contract::{Failure, Js, JsObject};

const EVIDENCE_DOMAIN: &str = "orc-subscriber-rebind-authoritative-evidence-v1";
const DISPOSITIONS: &[&str] = &[
    "migrated",
    "delivered_old_epoch",
    "blocked_ambiguous",
    "not_replayed",
];
const DRAINED: &[&str] = &[
    "noSessionEntry",
    "noAdapterQueue",
    "noInflightInvocation",
    "operativePathsDrained",
];

/// `rebindMigrationEvidenceDigest(evidence)`: the hash of the evidence as given.
pub fn evidence_digest(evidence: &Js) -> Result<String, Failure> {
    hash_of(EVIDENCE_DOMAIN, evidence)
}

/// The canonical JSON of a value already known to be canonical (two values compare equal under
/// `canonicalHash` exactly when these texts are equal).
fn canonical(value: &Js) -> Result<String, Failure> {
    canonical_json(value).map_err(|mut f| {
        f.code = None;
        f
    })
}

/// The fields that bind an old group revision to its recipient: read as a record at `path`,
/// in the TypeScript member order, from `deliveryGroupId` through `recipientTransferGeneration`.
fn binding(v: &Js, path: &str, rec: Rec) -> Read<Rec> {
    let at = |key: &str| member(path, key);
    Ok(rec
        .put(
            "deliveryGroupId",
            Js::str(string(field(v, "deliveryGroupId"), &at("deliveryGroupId"))?),
        )
        .put(
            "membershipRevision",
            num(integer(
                field(v, "membershipRevision"),
                &at("membershipRevision"),
                1,
            )?),
        )
        .put(
            "recipientPrincipalId",
            Js::str(string(
                field(v, "recipientPrincipalId"),
                &at("recipientPrincipalId"),
            )?),
        )
        .put(
            "recipientBindingEpoch",
            num(integer(
                field(v, "recipientBindingEpoch"),
                &at("recipientBindingEpoch"),
                1,
            )?),
        )
        .put(
            "recipientTransferGeneration",
            num(integer(
                field(v, "recipientTransferGeneration"),
                &at("recipientTransferGeneration"),
                0,
            )?),
        ))
}

/// The current-claim observation: `{status, observedAt, claim?}`; the claim is the caller's
/// object once it parses as a delivery claim.
fn current_claim(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(v, &["status", "observedAt"], &["claim"], path)?;
    let status = one_of(
        field(v, "status"),
        &["unclaimed", "claimed"],
        &member(path, "status"),
    )?;
    let observed = timestamp(field(v, "observedAt"), &member(path, "observedAt"))?;
    let claim = field(v, "claim");
    let has_claim = !matches!(claim, Js::Undefined);
    if has_claim {
        check_delivery_claim_record(claim)?;
    }
    if (status == "claimed") != has_claim {
        return fail(
            &member(path, "claim"),
            "is required exactly when the authoritative observation is claimed",
        );
    }
    if has_claim {
        let proof = field(claim, "releaseProof");
        let latest = [
            "deliveryAttemptedAt",
            "insertedAt",
            "deliveredAt",
            "releasedAt",
        ]
        .iter()
        .map(|k| field(claim, k))
        .chain(std::iter::once(field(proof, "establishedAt")))
        .filter_map(Js::as_str)
        .map(millis)
        .max();
        if latest.is_some_and(|latest| millis(observed) < latest) {
            return fail(
                &member(path, "observedAt"),
                "must not precede the claim evidence it observes",
            );
        }
    }
    Ok(Rec::new()
        .put("status", Js::str(status))
        .put("observedAt", Js::str(observed))
        .opt("claim", has_claim.then(|| claim.clone()))
        .build())
}

fn target_ledger(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "deliveryGroupId",
            "membershipRevision",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "recipientTransferGeneration",
            "state",
            "checkedAt",
        ],
        &["targetLedgerEntryId", "insertedAt"],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let state = one_of(
        field(v, "state"),
        &["absent", "inserting", "inserted", "ambiguous"],
        &at("state"),
    )?;
    let entry = optional_string(field(v, "targetLedgerEntryId"), &at("targetLedgerEntryId"))?;
    let inserted = optional_timestamp(field(v, "insertedAt"), &at("insertedAt"))?;
    if (state == "inserted") != (entry.is_some() && inserted.is_some()) {
        return fail(
            path,
            "target ledger entry and insertion time are required exactly for inserted evidence",
        );
    }
    let checked = binding(v, path, Rec::new())?
        .put("state", Js::str(state))
        .put(
            "checkedAt",
            Js::str(timestamp(field(v, "checkedAt"), &at("checkedAt"))?),
        );
    let ledger = checked
        .opt("targetLedgerEntryId", entry.map(Js::str))
        .opt("insertedAt", inserted.map(Js::str))
        .build();
    if let Some(inserted) = inserted
        && millis(text(&ledger, "checkedAt").expect("read")) < millis(inserted)
    {
        return fail(&at("checkedAt"), "must not precede the proved insertion");
    }
    Ok(ledger)
}

fn receipt(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "deliveryClaimId",
            "claimGeneration",
            "deliveryGroupId",
            "membershipRevision",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "recipientTransferGeneration",
            "deliveryReceiptId",
            "targetLedgerEntryId",
            "insertedAt",
            "deliveredAt",
        ],
        &[],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let s = |key: &str| string(field(v, key), &at(key)).map(Js::str);
    let head = Rec::new()
        .put("deliveryClaimId", s("deliveryClaimId")?)
        .put(
            "claimGeneration",
            num(integer(
                field(v, "claimGeneration"),
                &at("claimGeneration"),
                1,
            )?),
        );
    let receipt = binding(v, path, head)?
        .put("deliveryReceiptId", s("deliveryReceiptId")?)
        .put("targetLedgerEntryId", s("targetLedgerEntryId")?)
        .put(
            "insertedAt",
            Js::str(timestamp(field(v, "insertedAt"), &at("insertedAt"))?),
        )
        .put(
            "deliveredAt",
            Js::str(timestamp(field(v, "deliveredAt"), &at("deliveredAt"))?),
        )
        .build();
    let time = |key: &str| millis(text(&receipt, key).expect("read"));
    if time("deliveredAt") < time("insertedAt") {
        return fail(&at("deliveredAt"), "must not precede insertedAt");
    }
    Ok(receipt)
}

fn drain_barrier(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "deliveryGroupId",
            "membershipRevision",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "recipientTransferGeneration",
            "barrierId",
            "noSessionEntry",
            "noAdapterQueue",
            "noInflightInvocation",
            "operativePathsDrained",
            "establishedAt",
        ],
        &[],
        path,
    )?;
    let at = |key: &str| member(path, key);
    for key in DRAINED {
        if !boolean(field(v, key), &at(key))? {
            return fail(&at(key), "must be true to prove absence");
        }
    }
    let mut barrier = binding(v, path, Rec::new())?.put(
        "barrierId",
        Js::str(string(field(v, "barrierId"), &at("barrierId"))?),
    );
    for key in DRAINED {
        barrier = barrier.put(key, Js::Bool(true));
    }
    Ok(barrier
        .put(
            "establishedAt",
            Js::str(timestamp(field(v, "establishedAt"), &at("establishedAt"))?),
        )
        .build())
}

fn acknowledgment(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "deliveryGroupId",
            "noticeIds",
            "recipientPrincipalId",
            "recipientBindingEpoch",
            "acknowledgedAt",
        ],
        &[],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let notices = string_array(field(v, "noticeIds"), &at("noticeIds"))?;
    let unique = notices
        .iter()
        .enumerate()
        .all(|(i, n)| !notices[..i].contains(n));
    if notices.is_empty() || !unique {
        return fail(&at("noticeIds"), "must be non-empty and unique");
    }
    Ok(Rec::new()
        .put(
            "deliveryGroupId",
            Js::str(string(field(v, "deliveryGroupId"), &at("deliveryGroupId"))?),
        )
        .put("noticeIds", strs(&notices))
        .put(
            "recipientPrincipalId",
            Js::str(string(
                field(v, "recipientPrincipalId"),
                &at("recipientPrincipalId"),
            )?),
        )
        .put(
            "recipientBindingEpoch",
            num(integer(
                field(v, "recipientBindingEpoch"),
                &at("recipientBindingEpoch"),
                1,
            )?),
        )
        .put(
            "acknowledgedAt",
            Js::str(timestamp(
                field(v, "acknowledgedAt"),
                &at("acknowledgedAt"),
            )?),
        )
        .build())
}

/// An optional evidence part: parsed when present.
fn part(v: &Js, key: &str, path: &str, parse: fn(&Js, &str) -> Read<Js>) -> Read<Option<Js>> {
    match field(v, key) {
        Js::Undefined => Ok(None),
        value => parse(value, &member(path, key)).map(Some),
    }
}

/// One link's authoritative evidence, checked for internal consistency and bound by its digest.
fn link_evidence(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(
        v,
        &[
            "authorityPrincipalId",
            "authoritySessionId",
            "authenticatedAt",
            "evidenceDigest",
            "oldGroup",
            "currentClaim",
            "targetLedger",
        ],
        &["receipt", "drainBarrier", "acknowledgment"],
        path,
    )?;
    let old_group = field(v, "oldGroup");
    check_delivery_group_record(old_group)?;
    let claim = current_claim(field(v, "currentClaim"), &member(path, "currentClaim"))?;
    let ledger = target_ledger(field(v, "targetLedger"), &member(path, "targetLedger"))?;
    let receipt = part(v, "receipt", path, receipt)?;
    let barrier = part(v, "drainBarrier", path, drain_barrier)?;
    let ack = part(v, "acknowledgment", path, acknowledgment)?;
    let authenticated = timestamp(
        field(v, "authenticatedAt"),
        &member(path, "authenticatedAt"),
    )?;
    let principal = string(
        field(v, "authorityPrincipalId"),
        &member(path, "authorityPrincipalId"),
    )?;
    let session = string(
        field(v, "authoritySessionId"),
        &member(path, "authoritySessionId"),
    )?;
    let digest = hex_digest(field(v, "evidenceDigest"), &member(path, "evidenceDigest"))?;
    let observations = [
        text(&claim, "observedAt"),
        text(&ledger, "checkedAt"),
        receipt.as_ref().and_then(|r| text(r, "deliveredAt")),
        barrier.as_ref().and_then(|b| text(b, "establishedAt")),
        ack.as_ref().and_then(|a| text(a, "acknowledgedAt")),
    ];
    if observations
        .into_iter()
        .flatten()
        .any(|t| millis(authenticated) < millis(t))
    {
        return fail(
            &member(path, "authenticatedAt"),
            "must not precede any authenticated observation",
        );
    }
    let rest = |rec: Rec| {
        rec.put("oldGroup", old_group.clone())
            .put("currentClaim", claim.clone())
            .put("targetLedger", ledger.clone())
            .opt("receipt", receipt.clone())
            .opt("drainBarrier", barrier.clone())
            .opt("acknowledgment", ack.clone())
    };
    let head = Rec::new()
        .put("authorityPrincipalId", Js::str(principal))
        .put("authoritySessionId", Js::str(session))
        .put("authenticatedAt", Js::str(authenticated));
    let unsigned = rest(head).build();
    if digest != evidence_digest(&unsigned)? {
        return fail(
            &member(path, "evidenceDigest"),
            "does not bind the authoritative migration evidence",
        );
    }
    let signed = Rec::new()
        .put("authorityPrincipalId", Js::str(principal))
        .put("authoritySessionId", Js::str(session))
        .put("authenticatedAt", Js::str(authenticated))
        .put("evidenceDigest", Js::str(digest));
    Ok(rest(signed).build())
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
    let at = |key: &str| member(path, key);
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
    let disposition = one_of(
        field(entry, "disposition"),
        DISPOSITIONS,
        &at("disposition"),
    )?;
    let successor_id = optional_string(
        field(entry, "successorDeliveryGroupId"),
        &at("successorDeliveryGroupId"),
    )?;
    let successor_key = field(entry, "successorEquivalenceKey");
    let has_successor_key = !matches!(successor_key, Js::Undefined);
    let migrated = disposition == "migrated";
    if migrated != successor_id.is_some() || migrated != has_successor_key {
        return fail(
            &at("successorDeliveryGroupId"),
            "successor ID and equivalence key are required only for migrated groups",
        );
    }
    let old_id = string(
        field(entry, "oldDeliveryGroupId"),
        &at("oldDeliveryGroupId"),
    )?;
    let old_key = field(entry, "oldEquivalenceKey");
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
    let previous = integer(
        field(entry, "previousRecipientTransferGeneration"),
        &at("previousRecipientTransferGeneration"),
        0,
    )?;
    let transfer = integer(
        field(entry, "recipientTransferGeneration"),
        &at("recipientTransferGeneration"),
        0,
    )?;
    let evidence_path = at("evidence");
    let evidence = link_evidence(field(entry, "evidence"), &evidence_path)?;
    let in_evidence = |key: &str| member(&evidence_path, key);
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
    let version = string(field(v, "version"), "$.version")?;
    if version != SUBSCRIBER_REBIND_MIGRATION_VERSION {
        return fail("$.version", format!("unsupported version: {version}"));
    }
    let n = |key: &str| integer(field(v, key), &member("$", key), 1);
    let old_epoch = n("oldSubscriberBindingEpoch")?;
    let new_epoch = n("newSubscriberBindingEpoch")?;
    let old_generation = n("oldSubscriberBindingGeneration")?;
    let new_generation = n("newSubscriberBindingGeneration")?;
    let principal = string(
        field(v, "stableSubscriberPrincipalId"),
        "$.stableSubscriberPrincipalId",
    )?;
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
    let entries = own_dense_array(field(v, "deliveryGroups"), "$.deliveryGroups")?;
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
    let reauthorized = boolean(field(v, "reauthorized"), "$.reauthorized")?;
    let resulting = one_of(
        field(v, "resultingSubscriptionState"),
        SUBSCRIPTION_STATES,
        "$.resultingSubscriptionState",
    )?;
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
    let state = one_of(field(v, "state"), REBIND_MIGRATION_STATES, "$.state")?;
    let committed = optional_timestamp(field(v, "committedAt"), "$.committedAt")?;
    if (state == "committed") != committed.is_some() {
        return fail(
            "$.committedAt",
            "is required exactly when state is committed",
        );
    }
    let created = timestamp(field(v, "createdAt"), "$.createdAt")?;
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
    let s = |key: &str| string(field(v, key), &member("$", key)).map(Js::str);
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
