//! `authorizeBossRestrictedClientRequest`: the requester's principal and current binding, the
//! idempotency records, and the authoritative evidence each operation's payload needs
//! (assignments, proofs, reviews, supervision grants, lifecycle subscriptions).

use std::cell::OnceCell;
use std::collections::HashSet;

use super::{IdempotencyRecord, Request, number, parse_idempotency_record, parse_request, text};
use crate::boss::JsonObject;
use crate::boss::policy::{Principal, PrivatePrincipal, parse_principal};
use crate::boss::supervision::subscription::{
    parse_lifecycle_subscription, parse_lifecycle_target,
};
use crate::boss::wire::check_participant_binding;
use crate::contract::read::{
    self, dense_array, element, exact_record, fail, field, integer, member, one_of, record, string,
    string_array,
};
use crate::contract::{Failure, Js};

const MISSING: &str = "MISSING_AUTHORIZATION_EVIDENCE";
const MISMATCH: &str = "PAYLOAD_AUTHORIZATION_MISMATCH";

/// A payload check: `Err(code)` denies.
type Check = Result<(), &'static str>;

/// The parsed `BossRestrictedClientAuthorizationContext`, with the binding read.
struct Context<'v> {
    policy: &'v Js,
    principal_id: &'v str,
    /// `currentBinding.authorityTransitionId` of the parsed binding.
    authority_transition_id: String,
    assignments: &'v Js,
    proofs: &'v Js,
    reviews: &'v Js,
    supervision: &'v Js,
    subscriptions: &'v Js,
    /// `parseActivePolicyPrincipals`, computed once when first needed.
    active: OnceCell<Option<Vec<PrivatePrincipal>>>,
}

/// `restrictedPolicyPrincipalMap`: `{principals: {...}}`, both exact plain records.
fn principal_map(policy: &Js) -> Option<&Js> {
    record(policy, "$.policy").ok()?;
    let Js::Object(object) = policy else {
        return None;
    };
    if object.members.len() != 1 || object.members[0].0.text != "principals" {
        return None;
    }
    let principals = &object.members[0].1;
    record(principals, "$.policy.principals").ok()?;
    Some(principals)
}

impl Context<'_> {
    /// `parseActivePolicyPrincipals`: every active Boss principal, or `None` when the map does
    /// not parse (or a principal is filed under another id).
    fn active(&self) -> Option<&[PrivatePrincipal]> {
        self.active
            .get_or_init(|| {
                let Js::Object(map) = principal_map(self.policy)? else {
                    return None;
                };
                let mut out = Vec::new();
                for (key, value) in &map.members {
                    let parsed = parse_principal(value).ok()?;
                    if parsed.principal_id() != key.text || key.lone.is_some() {
                        return None;
                    }
                    if let Principal::Private(p) = parsed
                        && p.state == "active"
                    {
                        out.push(p);
                    }
                }
                Some(out)
            })
            .as_deref()
    }

    /// `assignedTargetPrincipal(context, manager, participantId)`.
    fn assigned_target(&self, manager: &PrivatePrincipal, participant: &str) -> bool {
        if manager.role != "manager" || !assigned(manager, participant) {
            return false;
        }
        let Some(active) = self.active() else {
            return false;
        };
        let matches = active.iter().filter(|c| {
            c.participant_id == participant
                && c.boss_run_id == manager.boss_run_id
                && matches!(c.role, "worker" | "scout")
                && c.assigned_manager.as_deref() == Some(manager.participant_id.as_str())
        });
        matches.count() == 1
    }
}

fn assigned(manager: &PrivatePrincipal, participant: &str) -> bool {
    manager
        .assigned
        .as_ref()
        .is_some_and(|ids| ids.iter().any(|id| id == participant))
}

/// `parseAuthorizationRecordArray(value, path, parse)`.
fn records<'v, T>(
    value: &'v Js,
    path: &str,
    parse: fn(&'v Js, &str) -> read::Read<T>,
) -> read::Read<Vec<T>> {
    dense_array(value, path)?
        .into_iter()
        .enumerate()
        .map(|(index, entry)| parse(entry, &element(path, index)))
        .collect()
}

struct Assignment<'v> {
    boss_run_id: &'v str,
    assignment_id: &'v str,
    manager: &'v str,
    participant: &'v str,
}

fn assignment<'v>(v: &'v Js, path: &str) -> read::Read<Assignment<'v>> {
    let keys = [
        "bossRunId",
        "assignmentId",
        "managerParticipantId",
        "participantId",
    ];
    exact_record(v, &keys, &[], path)?;
    let get = |key: &str| string(field(v, key), &member(path, key));
    Ok(Assignment {
        boss_run_id: get("bossRunId")?,
        assignment_id: get("assignmentId")?,
        manager: get("managerParticipantId")?,
        participant: get("participantId")?,
    })
}

struct Proof<'v> {
    boss_run_id: &'v str,
    proof_id: &'v str,
    owner: &'v str,
    reviewers: Vec<&'v str>,
}

fn unique(items: &[&str]) -> bool {
    items.iter().collect::<HashSet<_>>().len() == items.len()
}

fn proof<'v>(v: &'v Js, path: &str) -> read::Read<Proof<'v>> {
    let keys = [
        "bossRunId",
        "proofId",
        "ownerParticipantId",
        "reviewerParticipantIds",
    ];
    exact_record(v, &keys, &[], path)?;
    let reviewers_path = member(path, "reviewerParticipantIds");
    let reviewers = string_array(field(v, "reviewerParticipantIds"), &reviewers_path)?;
    if !unique(&reviewers) {
        return fail(&reviewers_path, "must not contain duplicates");
    }
    let get = |key: &str| string(field(v, key), &member(path, key));
    Ok(Proof {
        boss_run_id: get("bossRunId")?,
        proof_id: get("proofId")?,
        owner: get("ownerParticipantId")?,
        reviewers,
    })
}

struct Review<'v> {
    boss_run_id: &'v str,
    review_id: &'v str,
    proof_id: &'v str,
    requester: &'v str,
    reviewer: &'v str,
    state: &'static str,
}

fn review<'v>(v: &'v Js, path: &str) -> read::Read<Review<'v>> {
    let keys = [
        "bossRunId",
        "reviewId",
        "proofId",
        "requesterParticipantId",
        "reviewerParticipantId",
        "state",
    ];
    exact_record(v, &keys, &[], path)?;
    let get = |key: &str| string(field(v, key), &member(path, key));
    Ok(Review {
        boss_run_id: get("bossRunId")?,
        review_id: get("reviewId")?,
        proof_id: get("proofId")?,
        requester: get("requesterParticipantId")?,
        reviewer: get("reviewerParticipantId")?,
        state: one_of(
            field(v, "state"),
            &["pending", "submitted", "cancelled"],
            &member(path, "state"),
        )?,
    })
}

struct Grant<'v> {
    boss_run_id: &'v str,
    principal: &'v str,
    participant: &'v str,
    epoch: i64,
    generation: i64,
    target: Js,
    targets: Vec<&'v str>,
}

fn grant<'v>(v: &'v Js, path: &str) -> read::Read<Grant<'v>> {
    let keys = [
        "bossRunId",
        "subscriberPrincipalId",
        "subscriberParticipantId",
        "subscriberBindingEpoch",
        "subscriberBindingGeneration",
        "target",
        "targetParticipantIds",
    ];
    exact_record(v, &keys, &[], path)?;
    let at = |key: &str| member(path, key);
    let targets = string_array(
        field(v, "targetParticipantIds"),
        &at("targetParticipantIds"),
    )?;
    if targets.is_empty() || !unique(&targets) {
        return fail(&at("targetParticipantIds"), "must be non-empty and unique");
    }
    let get = |key: &str| string(field(v, key), &at(key));
    let boss_run_id = get("bossRunId")?;
    let principal = get("subscriberPrincipalId")?;
    let participant = get("subscriberParticipantId")?;
    let epoch_key = "subscriberBindingEpoch";
    let epoch = integer(field(v, epoch_key), &at(epoch_key), 1)?;
    let generation_key = "subscriberBindingGeneration";
    let generation = integer(field(v, generation_key), &at(generation_key), 1)?;
    let target = parse_lifecycle_target(field(v, "target"), &at("target"))?;
    Ok(Grant {
        boss_run_id,
        principal,
        participant,
        epoch,
        generation,
        target,
        targets,
    })
}

/// `sameLifecycleTarget`.
fn same_target(left: &Js, right: &Js) -> bool {
    match (text(left, "kind"), text(right, "kind")) {
        (Some("worker"), Some("worker")) => {
            left.get("workerId") == right.get("workerId")
                && left.get("workerGeneration") == right.get("workerGeneration")
        }
        (Some("role"), Some("role")) => {
            left.get("bossRunId") == right.get("bossRunId") && left.get("role") == right.get("role")
        }
        _ => false,
    }
}

/// One match among `items` by `id`: none is missing evidence, several a mismatch.
fn one<T>(items: &[T], id: impl Fn(&T) -> bool) -> Result<&T, &'static str> {
    let mut found = items.iter().filter(|item| id(item));
    match (found.next(), found.next()) {
        (None, _) => Err(MISSING),
        (Some(item), None) => Ok(item),
        _ => Err(MISMATCH),
    }
}

/// Evidence that must be present and must parse.
fn evidence<'v, T>(
    value: &'v Js,
    path: &str,
    parse: fn(&'v Js, &str) -> read::Read<T>,
) -> Result<Vec<T>, &'static str> {
    if matches!(value, Js::Undefined) {
        return Err(MISSING);
    }
    records(value, path, parse).map_err(|_| MISMATCH)
}

fn check(ok: bool) -> Check {
    if ok { Ok(()) } else { Err(MISMATCH) }
}

/// `authorizeAssignmentPayload`.
fn assignment_payload(
    context: &Context<'_>,
    principal: &PrivatePrincipal,
    run: &str,
    assignment_id: &str,
) -> Check {
    let assignments = evidence(context.assignments, "$.assignments", assignment)?;
    let found = one(&assignments, |a| a.assignment_id == assignment_id)?;
    check(found.boss_run_id == run)?;
    if principal.role == "manager" {
        return check(
            found.manager == principal.participant_id
                && context.assigned_target(principal, found.participant),
        );
    }
    check(
        found.participant == principal.participant_id
            && Some(found.manager) == principal.assigned_manager.as_deref(),
    )
}

/// `authorizeSupervisionTarget`.
fn supervision_target(
    context: &Context<'_>,
    manager: &PrivatePrincipal,
    run: &str,
    epoch: i64,
    generation: Option<f64>,
    target: &Js,
) -> Check {
    let grants = evidence(context.supervision, "$.supervision", grant)?;
    let mut matches = grants.iter().filter(|g| {
        g.boss_run_id == run
            && g.principal == context.principal_id
            && g.participant == manager.participant_id
            && g.epoch == epoch
            && Some(g.generation as f64) == generation
            && same_target(&g.target, target)
    });
    let found = match (matches.next(), matches.next()) {
        (None, _) if grants.is_empty() => return Err(MISSING),
        (Some(g), None) => g,
        _ => return Err(MISMATCH),
    };
    let kind = text(target, "kind");
    check(kind != Some("worker") || found.targets.len() == 1)?;
    check(
        found
            .targets
            .iter()
            .all(|id| context.assigned_target(manager, id)),
    )?;
    if kind == Some("role") {
        let role = text(target, "role");
        check(text(target, "bossRunId") == Some(run) && matches!(role, Some("worker" | "scout")))?;
        let selected: HashSet<&str> = found.targets.iter().copied().collect();
        let Some(active) = context.active() else {
            return Err(MISMATCH);
        };
        let participants: Vec<&PrivatePrincipal> = active
            .iter()
            .filter(|c| {
                c.boss_run_id == run
                    && Some(c.role) == role
                    && assigned(manager, &c.participant_id)
                    && c.assigned_manager.as_deref() == Some(manager.participant_id.as_str())
            })
            .collect();
        check(
            participants.len() == selected.len()
                && participants
                    .iter()
                    .all(|c| selected.contains(c.participant_id.as_str())),
        )?;
    }
    Ok(())
}

/// `proofAuthorization`.
fn proof_evidence<'v>(context: &Context<'v>) -> Result<Vec<Proof<'v>>, &'static str> {
    evidence(context.proofs, "$.proofs", proof)
}

/// The modes of `authorizeProofPayload`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ProofMode {
    Owner,
    Reviewer,
    AdversaryReview,
}

/// `authorizeProofPayload`.
fn proof_payload(
    context: &Context<'_>,
    principal: &PrivatePrincipal,
    run: &str,
    proof_id: &str,
    mode: ProofMode,
) -> Check {
    let proofs = proof_evidence(context)?;
    let found = one(&proofs, |p| p.proof_id == proof_id)?;
    check(found.boss_run_id == run)?;
    let me = principal.participant_id.as_str();
    match mode {
        ProofMode::Owner => check(found.owner == me),
        ProofMode::Reviewer => check(found.reviewers.contains(&me)),
        ProofMode::AdversaryReview => {
            check(found.owner == me)?;
            check(context.active().is_some_and(|active| {
                active.iter().any(|c| {
                    c.boss_run_id == run
                        && c.role == "adversary"
                        && found.reviewers.contains(&c.participant_id.as_str())
                })
            }))
        }
    }
}

/// `authorizeReviewPayload`.
fn review_payload(
    context: &Context<'_>,
    principal: &PrivatePrincipal,
    run: &str,
    review_id: &str,
    submission_proof: Option<&str>,
) -> Check {
    let reviews = evidence(context.reviews, "$.reviews", review)?;
    let found = one(&reviews, |r| r.review_id == review_id)?;
    let me = principal.participant_id.as_str();
    check(found.boss_run_id == run && found.reviewer == me)?;
    if let Some(proof_id) = submission_proof {
        check(found.state == "pending" && found.proof_id == proof_id)?;
    }
    let proofs = proof_evidence(context)?;
    let proof = one(&proofs, |p| p.proof_id == found.proof_id)?;
    check(
        proof.boss_run_id == run && proof.owner == found.requester && proof.reviewers.contains(&me),
    )
}

/// `authorizeSubscriptionPayload`.
fn subscription_payload(
    context: &Context<'_>,
    manager: &PrivatePrincipal,
    request: &Request,
    subscription: &Js,
) -> Check {
    check(
        text(subscription, "subscriberPrincipalId") == Some(context.principal_id)
            && number(subscription, "subscriberBindingEpoch") == Some(request.binding_epoch as f64)
            && text(subscription, "bossRunId") == Some(request.boss_run_id.as_str())
            && text(subscription, "lastSubscriberAuthorityTransitionId")
                == Some(context.authority_transition_id.as_str()),
    )?;
    supervision_target(
        context,
        manager,
        &request.boss_run_id,
        request.binding_epoch,
        number(subscription, "subscriberBindingGeneration"),
        field(subscription, "target"),
    )
}

/// The stored lifecycle subscriptions (each through `parseLifecycleSubscription`).
fn stored_subscriptions(context: &Context<'_>) -> Result<Vec<Js>, &'static str> {
    if matches!(context.subscriptions, Js::Undefined) {
        return Err(MISSING);
    }
    let parsed: read::Read<Vec<Js>> = dense_array(context.subscriptions, "$.subscriptions")
        .and_then(|entries| {
            entries
                .into_iter()
                .map(parse_lifecycle_subscription)
                .collect()
        });
    parsed.map_err(|_| MISMATCH)
}

/// `authorizeRestrictedPayload`.
fn payload(request: &Request, context: &Context<'_>, principal: &PrivatePrincipal) -> Check {
    let run = request.boss_run_id.as_str();
    let member = |key: &str| text(&request.payload, key).unwrap_or("");
    match request.operation {
        "manager_create_assignment" => {
            check(context.assigned_target(principal, member("participantId")))?;
            let assignments = evidence(context.assignments, "$.assignments", assignment)?;
            check(
                !assignments
                    .iter()
                    .any(|a| a.assignment_id == member("assignmentId")),
            )
        }
        "manager_cancel_assignment"
        | "manager_submit_checkpoint"
        | "participant_accept_assignment"
        | "participant_reject_assignment"
        | "participant_submit_checkpoint"
        | "participant_submit_assignment"
        | "participant_report_blocker" => {
            assignment_payload(context, principal, run, member("assignmentId"))
        }
        "manager_create_subscription" => {
            let stored = stored_subscriptions(context)?;
            let id = request.payload.get("subscriptionId");
            check(!stored.iter().any(|s| s.get("subscriptionId") == id))?;
            subscription_payload(context, principal, request, &request.payload)
        }
        "manager_cancel_subscription" => {
            let stored = stored_subscriptions(context)?;
            let id = member("subscriptionId");
            let found = one(&stored, |s| text(s, "subscriptionId") == Some(id))?;
            subscription_payload(context, principal, request, found)
        }
        "manager_submit_proof" | "reviewer_submit_proof" => {
            proof_payload(context, principal, run, member("proofId"), ProofMode::Owner)
        }
        "manager_request_adversary_review" => proof_payload(
            context,
            principal,
            run,
            member("proofId"),
            ProofMode::AdversaryReview,
        ),
        "reviewer_get_proof" => proof_payload(
            context,
            principal,
            run,
            member("proofId"),
            ProofMode::Reviewer,
        ),
        "reviewer_submit_review" => review_payload(
            context,
            principal,
            run,
            member("reviewId"),
            Some(member("proofId")),
        ),
        "reviewer_get_objection_status" => {
            review_payload(context, principal, run, member("reviewId"), None)
        }
        _ => Ok(()),
    }
}

/// `expectedRestrictedRoles`.
fn roles(client: &str) -> &'static [&'static str] {
    match client {
        "boss_manager" => &["manager"],
        "boss_reviewer" => &["adversary", "council"],
        _ => &["worker", "scout"],
    }
}

fn denied(code: &str) -> String {
    JsonObject::new()
        .bool("allowed", false)
        .str("code", code)
        .finish()
}

fn allowed(idempotency: &str, record: &IdempotencyRecord) -> String {
    JsonObject::new()
        .bool("allowed", true)
        .str("idempotency", idempotency)
        .raw("record", &record.to_json())
        .finish()
}

/// The requester's active Boss principal, or the denial.
fn requester(map: &Js, principal_id: &str) -> Result<PrivatePrincipal, &'static str> {
    let value = map.get(principal_id).ok_or("UNKNOWN_PRINCIPAL")?;
    if !matches!(value, Js::Object(_) | Js::Array(_) | Js::Proxy) {
        return Err("POLICY_BINDING_MISMATCH");
    }
    match parse_principal(value) {
        Ok(Principal::Private(p)) if p.state == "active" => {
            if p.principal_id != principal_id {
                return Err("POLICY_BINDING_MISMATCH");
            }
            Ok(p)
        }
        _ => Err("PRINCIPAL_NOT_ACTIVE"),
    }
}

/// `authorizeBossRestrictedClientRequest(request, context)`: the decision as JSON, or the
/// failure of a malformed context, request or idempotency record.
pub(crate) fn authorize(request_value: &Js, context_value: &Js) -> Result<String, Failure> {
    let path = "$.authorizationContext";
    exact_record(
        context_value,
        &["policy", "principalId", "currentBinding"],
        &[
            "assignments",
            "proofs",
            "reviews",
            "supervision",
            "subscriptions",
            "idempotencyRecords",
        ],
        path,
    )?;
    let get = |key: &str| field(context_value, key);
    let principal_id = string(get("principalId"), &member(path, "principalId"))?;
    let request = parse_request(request_value)?;
    let Some(map) = principal_map(get("policy")) else {
        return Ok(denied("UNKNOWN_PRINCIPAL"));
    };
    let principal = match requester(map, principal_id) {
        Ok(p) => p,
        Err(code) => return Ok(denied(code)),
    };
    let binding = get("currentBinding");
    if check_participant_binding(binding).is_err() {
        return Ok(denied("POLICY_BINDING_MISMATCH"));
    }
    if text(binding, "state") != Some("active") {
        return Ok(denied("BINDING_NOT_ACTIVE"));
    }
    let binding_epoch = number(binding, "bindingEpoch");
    if text(binding, "participantId") != Some(principal.participant_id.as_str())
        || text(binding, "bossRunId") != Some(principal.boss_run_id.as_str())
        || text(binding, "role") != Some(principal.role)
        || binding_epoch != Some(principal.binding_epoch as f64)
    {
        return Ok(denied("POLICY_BINDING_MISMATCH"));
    }
    if !roles(request.client).contains(&principal.role) {
        return Ok(denied("UNAUTHORIZED_ROLE"));
    }
    if request.participant_id != principal.participant_id {
        return Ok(denied("PARTICIPANT_MISMATCH"));
    }
    if request.binding_epoch != principal.binding_epoch
        || Some(request.binding_epoch as f64) != binding_epoch
    {
        return Ok(denied("STALE_BINDING_EPOCH"));
    }
    if request.boss_run_id != principal.boss_run_id
        || text(binding, "bossRunId") != Some(request.boss_run_id.as_str())
    {
        return Ok(denied("CROSS_RUN_REPLAY"));
    }
    let record = request.idempotency_record();
    let stored = match get("idempotencyRecords") {
        Js::Undefined => Vec::new(),
        value => records(value, "$.idempotencyRecords", parse_idempotency_record)?,
    };
    let same_id: Vec<&IdempotencyRecord> = stored
        .iter()
        .filter(|e| e.request_id == record.request_id)
        .collect();
    let other_identity = |e: &IdempotencyRecord| {
        e.boss_run_id != record.boss_run_id
            || e.client != record.client
            || e.participant_id != record.participant_id
            || e.binding_epoch != record.binding_epoch
    };
    if same_id.iter().any(|e| other_identity(e)) {
        return Ok(denied("CROSS_RUN_REPLAY"));
    }
    if same_id.iter().any(|e| {
        e.scope != record.scope
            || e.operation != record.operation
            || e.idempotency_key != record.idempotency_key
            || e.request_digest != record.request_digest
    }) {
        return Ok(denied("REQUEST_ID_CONFLICT"));
    }
    let prior: Vec<&IdempotencyRecord> = stored
        .iter()
        .filter(|e| e.scope == record.scope && e.idempotency_key == record.idempotency_key)
        .collect();
    if prior.iter().any(|e| {
        other_identity(e)
            || e.operation != record.operation
            || e.request_id != record.request_id
            || e.request_digest != record.request_digest
    }) {
        return Ok(denied("IDEMPOTENCY_CONFLICT"));
    }
    if let Some(earlier) = prior.first().or(same_id.first()) {
        return Ok(allowed("replay", earlier));
    }
    let context = Context {
        policy: get("policy"),
        principal_id,
        authority_transition_id: text(binding, "authorityTransitionId")
            .unwrap_or("")
            .to_string(),
        assignments: get("assignments"),
        proofs: get("proofs"),
        reviews: get("reviews"),
        supervision: get("supervision"),
        subscriptions: get("subscriptions"),
        active: OnceCell::new(),
    };
    Ok(match payload(&request, &context, &principal) {
        Ok(()) => allowed("new", &record),
        Err(code) => denied(code),
    })
}
