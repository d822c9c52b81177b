//! The authoritative evidence of one subscriber-rebind link: the old delivery group, the current
//! claim observation, the target-ledger observation, and the optional receipt, drain barrier and
//! acknowledgment, each checked on its own, then bound together by `evidenceDigest`.

use super::subscription::hash_of;
use super::{Fields, Rec, fields, millis, num, strs, text};
use crate::boss::delivery::{check_claim_record, check_group_record};
use crate::contract::read::{Read, exact_keys, fail, hex_digest, record, string_array};
use crate::contract::{Failure, Js};

const EVIDENCE_DOMAIN: &str = "orc-subscriber-rebind-authoritative-evidence-v1";
const DRAINED: &[&str] = &[
    "noSessionEntry",
    "noAdapterQueue",
    "noInflightInvocation",
    "operativePathsDrained",
];
/// The members that bind an observation to an old group revision and its recipient.
const BINDING: &[&str] = &[
    "deliveryGroupId",
    "membershipRevision",
    "recipientPrincipalId",
    "recipientBindingEpoch",
    "recipientTransferGeneration",
];

/// `rebindMigrationEvidenceDigest(evidence)`: the hash of the evidence as given.
pub fn evidence_digest(evidence: &Js) -> Result<String, Failure> {
    hash_of(EVIDENCE_DOMAIN, evidence)
}

/// `BINDING` followed by `rest`.
fn with_binding(rest: &[&'static str]) -> Vec<&'static str> {
    BINDING.iter().chain(rest).copied().collect()
}

/// The `BINDING` members, read in the TypeScript member order, after those already in `rec`.
fn binding(f: Fields<'_, '_>, rec: Rec) -> Read<Rec> {
    Ok(rec
        .put("deliveryGroupId", Js::str(f.string("deliveryGroupId")?))
        .put(
            "membershipRevision",
            num(f.integer("membershipRevision", 1)?),
        )
        .put(
            "recipientPrincipalId",
            Js::str(f.string("recipientPrincipalId")?),
        )
        .put(
            "recipientBindingEpoch",
            num(f.integer("recipientBindingEpoch", 1)?),
        )
        .put(
            "recipientTransferGeneration",
            num(f.integer("recipientTransferGeneration", 0)?),
        ))
}

/// The current-claim observation: `{status, observedAt, claim?}`; the claim is the caller's
/// object once it parses as a delivery claim.
fn current_claim(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    exact_keys(v, &["status", "observedAt"], &["claim"], path)?;
    let f = fields(v, path);
    let status = f.one_of("status", &["unclaimed", "claimed"])?;
    let observed = f.timestamp("observedAt")?;
    let claim = f.get("claim");
    let has_claim = !matches!(claim, Js::Undefined);
    if has_claim {
        check_claim_record(claim)?;
    }
    if (status == "claimed") != has_claim {
        return fail(
            &f.at("claim"),
            "is required exactly when the authoritative observation is claimed",
        );
    }
    let proof = claim.get("releaseProof").unwrap_or(&Js::Undefined);
    let latest = [
        "deliveryAttemptedAt",
        "insertedAt",
        "deliveredAt",
        "releasedAt",
    ]
    .iter()
    .map(|key| text(claim, key))
    .chain(std::iter::once(text(proof, "establishedAt")))
    .flatten()
    .map(millis)
    .max();
    if latest.is_some_and(|latest| millis(observed) < latest) {
        return fail(
            &f.at("observedAt"),
            "must not precede the claim evidence it observes",
        );
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
        &with_binding(&["state", "checkedAt"]),
        &["targetLedgerEntryId", "insertedAt"],
        path,
    )?;
    let f = fields(v, path);
    let state = f.one_of("state", &["absent", "inserting", "inserted", "ambiguous"])?;
    let entry = f.optional_string("targetLedgerEntryId")?;
    let inserted = f.optional_timestamp("insertedAt")?;
    if (state == "inserted") != (entry.is_some() && inserted.is_some()) {
        return fail(
            path,
            "target ledger entry and insertion time are required exactly for inserted evidence",
        );
    }
    let checked = binding(f, Rec::new())?
        .put("state", Js::str(state))
        .put("checkedAt", Js::str(f.timestamp("checkedAt")?));
    let ledger = checked
        .opt("targetLedgerEntryId", entry.map(Js::str))
        .opt("insertedAt", inserted.map(Js::str))
        .build();
    if let Some(inserted) = inserted
        && millis(text(&ledger, "checkedAt").expect("read")) < millis(inserted)
    {
        return fail(&f.at("checkedAt"), "must not precede the proved insertion");
    }
    Ok(ledger)
}

fn receipt(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    let mut required = vec!["deliveryClaimId", "claimGeneration"];
    required.extend(with_binding(&[
        "deliveryReceiptId",
        "targetLedgerEntryId",
        "insertedAt",
        "deliveredAt",
    ]));
    exact_keys(v, &required, &[], path)?;
    let f = fields(v, path);
    let head = Rec::new()
        .put("deliveryClaimId", Js::str(f.string("deliveryClaimId")?))
        .put("claimGeneration", num(f.integer("claimGeneration", 1)?));
    let receipt = binding(f, head)?
        .put("deliveryReceiptId", Js::str(f.string("deliveryReceiptId")?))
        .put(
            "targetLedgerEntryId",
            Js::str(f.string("targetLedgerEntryId")?),
        )
        .put("insertedAt", Js::str(f.timestamp("insertedAt")?))
        .put("deliveredAt", Js::str(f.timestamp("deliveredAt")?))
        .build();
    let time = |key: &str| millis(text(&receipt, key).expect("read"));
    if time("deliveredAt") < time("insertedAt") {
        return fail(&f.at("deliveredAt"), "must not precede insertedAt");
    }
    Ok(receipt)
}

fn drain_barrier(v: &Js, path: &str) -> Read<Js> {
    record(v, path)?;
    let mut required = with_binding(&["barrierId"]);
    required.extend(DRAINED);
    required.push("establishedAt");
    exact_keys(v, &required, &[], path)?;
    let f = fields(v, path);
    for key in DRAINED {
        if !f.boolean(key)? {
            return fail(&f.at(key), "must be true to prove absence");
        }
    }
    let mut barrier = binding(f, Rec::new())?.put("barrierId", Js::str(f.string("barrierId")?));
    for key in DRAINED {
        barrier = barrier.put(key, Js::Bool(true));
    }
    Ok(barrier
        .put("establishedAt", Js::str(f.timestamp("establishedAt")?))
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
    let f = fields(v, path);
    let notices = string_array(f.get("noticeIds"), &f.at("noticeIds"))?;
    let unique = notices
        .iter()
        .enumerate()
        .all(|(i, n)| !notices[..i].contains(n));
    if notices.is_empty() || !unique {
        return fail(&f.at("noticeIds"), "must be non-empty and unique");
    }
    Ok(Rec::new()
        .put("deliveryGroupId", Js::str(f.string("deliveryGroupId")?))
        .put("noticeIds", strs(&notices))
        .put(
            "recipientPrincipalId",
            Js::str(f.string("recipientPrincipalId")?),
        )
        .put(
            "recipientBindingEpoch",
            num(f.integer("recipientBindingEpoch", 1)?),
        )
        .put("acknowledgedAt", Js::str(f.timestamp("acknowledgedAt")?))
        .build())
}

/// An optional evidence part: parsed when present.
fn part(f: Fields<'_, '_>, key: &str, parse: fn(&Js, &str) -> Read<Js>) -> Read<Option<Js>> {
    match f.get(key) {
        Js::Undefined => Ok(None),
        value => parse(value, &f.at(key)).map(Some),
    }
}

/// One link's authoritative evidence, checked for internal consistency and bound by its digest.
pub(crate) fn link_evidence(v: &Js, path: &str) -> Read<Js> {
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
    let f = fields(v, path);
    let old_group = f.get("oldGroup");
    check_group_record(old_group)?;
    let claim = current_claim(f.get("currentClaim"), &f.at("currentClaim"))?;
    let ledger = target_ledger(f.get("targetLedger"), &f.at("targetLedger"))?;
    let receipt = part(f, "receipt", receipt)?;
    let barrier = part(f, "drainBarrier", drain_barrier)?;
    let ack = part(f, "acknowledgment", acknowledgment)?;
    let authenticated = f.timestamp("authenticatedAt")?;
    let principal = f.string("authorityPrincipalId")?;
    let session = f.string("authoritySessionId")?;
    let head = || {
        Rec::new()
            .put("authorityPrincipalId", Js::str(principal))
            .put("authoritySessionId", Js::str(session))
            .put("authenticatedAt", Js::str(authenticated))
    };
    let digest = hex_digest(f.get("evidenceDigest"), &f.at("evidenceDigest"))?;
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
            &f.at("authenticatedAt"),
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
    if digest != evidence_digest(&rest(head()).build())? {
        return fail(
            &f.at("evidenceDigest"),
            "does not bind the authoritative migration evidence",
        );
    }
    Ok(rest(head().put("evidenceDigest", Js::str(digest))).build())
}
