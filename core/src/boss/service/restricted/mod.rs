//! Restricted Boss client requests and results (`boss.restricted-client-request.v1`,
//! `boss.restricted-client-result.v1`): the per-client operation lists, the exact payload of
//! every operation, idempotency scopes and records, and the binding of a result to the request
//! it answers. Their authorization is [`authorize`].
//!
//! Three rules of other `./boss` modules are called where they are written, so each is written
//! once: `parseLifecycleSubscription` and `parseLifecycleTarget` (supervision) and
//! `parseBossParticipantBinding` (the wire records).

pub mod authorize;

use super::{BOSS_RESTRICTED_CLIENT_REQUEST_VERSION, BOSS_RESTRICTED_CLIENT_RESULT_VERSION};
use crate::boss::participant::parse_participant_state;
use crate::boss::supervision::subscription::parse_lifecycle_subscription;
use crate::boss::wire::is_string;
use crate::boss::{JsonObject, string_array_json};
use crate::canonical::canonical_hash_of_text;
use crate::contract::read::{
    self, exact_keys, exact_record, fail, field, hex_digest, integer, member, one_of, record,
    string, string_array, timestamp,
};
use crate::contract::{Args, Js, Op, Out};

/// `BOSS_MANAGER_OPERATIONS`.
pub const BOSS_MANAGER_OPERATIONS: &[&str] = &[
    "manager_get_status",
    "manager_request_staff",
    "manager_create_assignment",
    "manager_cancel_assignment",
    "manager_create_subscription",
    "manager_list_subscriptions",
    "manager_cancel_subscription",
    "manager_submit_checkpoint",
    "manager_report_blocker",
    "manager_submit_proof",
    "manager_request_adversary_review",
    "manager_request_council",
];
/// `BOSS_PARTICIPANT_OPERATIONS`.
pub const BOSS_PARTICIPANT_OPERATIONS: &[&str] = &[
    "participant_accept_assignment",
    "participant_reject_assignment",
    "participant_submit_checkpoint",
    "participant_submit_assignment",
    "participant_report_blocker",
    "participant_report_health",
];
/// `BOSS_REVIEWER_OPERATIONS`.
pub const BOSS_REVIEWER_OPERATIONS: &[&str] = &[
    "reviewer_get_proof",
    "reviewer_submit_review",
    "reviewer_submit_proof",
    "reviewer_get_objection_status",
    "reviewer_report_health",
];
/// `BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES`.
pub const BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES: &[&str] = &[
    "UNKNOWN_PRINCIPAL",
    "PRINCIPAL_NOT_ACTIVE",
    "BINDING_NOT_ACTIVE",
    "POLICY_BINDING_MISMATCH",
    "UNAUTHORIZED_ROLE",
    "PARTICIPANT_MISMATCH",
    "STALE_BINDING_EPOCH",
    "CROSS_RUN_REPLAY",
    "MISSING_AUTHORIZATION_EVIDENCE",
    "PAYLOAD_AUTHORIZATION_MISMATCH",
    "REQUEST_ID_CONFLICT",
    "IDEMPOTENCY_CONFLICT",
];
/// `RESTRICTED_RESULT_STATUSES`.
pub const RESTRICTED_RESULT_STATUSES: &[&str] = &[
    "ok",
    "rejected",
    "feature_not_enabled",
    "conflict",
    "unauthorized",
];

const CLIENTS: &[&str] = &["boss_manager", "boss_participant", "boss_reviewer"];
const SCOPE_DOMAIN: &str = "agent-intercom-core/boss-restricted-client/idempotency-scope/v1";
const REQUEST_DOMAIN: &str = "agent-intercom-core/boss-restricted-client/request/v1";

/// A string member of a parsed value.
pub(crate) fn text<'v>(value: &'v Js, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Js::as_str)
}

/// A number member of a parsed value.
pub(crate) fn number(value: &Js, key: &str) -> Option<f64> {
    value.get(key).and_then(Js::as_num)
}

fn version(v: &Js, expected: &str) -> read::Read<()> {
    let version = field(v, "version");
    if !is_string(version, expected) {
        return fail(
            "$.version",
            format!("unsupported version: {}", version.js_string()),
        );
    }
    Ok(())
}

/// `readClientOperation`.
pub(crate) fn client_operation(client: &str, value: &Js, path: &str) -> read::Read<&'static str> {
    let list = match client {
        "boss_manager" => BOSS_MANAGER_OPERATIONS,
        "boss_participant" => BOSS_PARTICIPANT_OPERATIONS,
        _ => BOSS_REVIEWER_OPERATIONS,
    };
    one_of(value, list, path)
}

/// How one payload member is read.
#[derive(Clone, Copy, Debug)]
enum Rule {
    Str,
    Digest,
    Count,
    Strings,
    Timestamp,
    State,
    OneOf(&'static [&'static str]),
}

type Rules = &'static [(&'static str, Rule)];

const SEVERITIES: &[&str] = &["info", "warning", "error", "critical"];
const DECISIONS: &[&str] = &["approved", "changes_requested", "rejected"];
const CHECKPOINT: Rules = &[
    ("assignmentId", Rule::Str),
    ("checkpointId", Rule::Str),
    ("summary", Rule::Str),
    ("occurredAt", Rule::Timestamp),
];
const HEALTH: Rules = &[
    ("state", Rule::State),
    ("severity", Rule::OneOf(SEVERITIES)),
    ("observedAt", Rule::Timestamp),
];
const ASSIGNMENT_REASON: Rules = &[("assignmentId", Rule::Str), ("reason", Rule::Str)];
const PROOF_DIGEST: Rules = &[("proofId", Rule::Str), ("digest", Rule::Digest)];

/// The members of a request payload (`None`: a lifecycle subscription).
fn request_rules(operation: &str) -> Option<Rules> {
    Some(match operation {
        "manager_get_status" | "manager_list_subscriptions" => &[],
        "manager_request_staff" => &[
            ("role", Rule::OneOf(&["scout", "worker"])),
            ("count", Rule::Count),
        ],
        "manager_create_assignment" => &[
            ("assignmentId", Rule::Str),
            ("participantId", Rule::Str),
            ("objective", Rule::Str),
        ],
        "manager_cancel_assignment" | "participant_reject_assignment" => ASSIGNMENT_REASON,
        "manager_create_subscription" => return None,
        "manager_cancel_subscription" => &[("subscriptionId", Rule::Str)],
        "manager_submit_checkpoint" | "participant_submit_checkpoint" => CHECKPOINT,
        "manager_report_blocker" => &[("blockerId", Rule::Str), ("reason", Rule::Str)],
        "manager_submit_proof" | "reviewer_submit_proof" => PROOF_DIGEST,
        "manager_request_adversary_review" | "reviewer_get_proof" => &[("proofId", Rule::Str)],
        "manager_request_council" => &[("question", Rule::Str)],
        "participant_accept_assignment" => &[("assignmentId", Rule::Str)],
        "participant_submit_assignment" => {
            &[("assignmentId", Rule::Str), ("resultDigest", Rule::Digest)]
        }
        "participant_report_blocker" => ASSIGNMENT_REASON,
        "participant_report_health" | "reviewer_report_health" => HEALTH,
        "reviewer_submit_review" => &[
            ("reviewId", Rule::Str),
            ("proofId", Rule::Str),
            ("decision", Rule::OneOf(DECISIONS)),
            ("reason", Rule::Str),
        ],
        _ => &[("reviewId", Rule::Str)],
    })
}

/// The members of a successful result's payload.
fn result_rules(operation: &str) -> Rules {
    match operation {
        "manager_get_status" => &[("status", Rule::Str)],
        "manager_request_staff" => &[("staffRequestId", Rule::Str)],
        "manager_create_assignment"
        | "manager_cancel_assignment"
        | "participant_accept_assignment"
        | "participant_reject_assignment"
        | "participant_submit_assignment" => &[("assignmentId", Rule::Str)],
        "manager_create_subscription" | "manager_cancel_subscription" => {
            &[("subscriptionId", Rule::Str)]
        }
        "manager_list_subscriptions" => &[("subscriptionIds", Rule::Strings)],
        "manager_submit_checkpoint" | "participant_submit_checkpoint" => &[
            ("assignmentId", Rule::Str),
            ("checkpointId", Rule::Str),
            ("recordedAt", Rule::Timestamp),
        ],
        "manager_report_blocker" | "participant_report_blocker" => &[("blockerId", Rule::Str)],
        "manager_submit_proof" | "reviewer_submit_proof" => &[("proofId", Rule::Str)],
        "manager_request_adversary_review" | "reviewer_submit_review" => &[("reviewId", Rule::Str)],
        "manager_request_council" => &[],
        "participant_report_health" | "reviewer_report_health" => &[("healthEventId", Rule::Str)],
        "reviewer_get_proof" => PROOF_DIGEST,
        _ => &[("reviewId", Rule::Str), ("status", Rule::Str)],
    }
}

/// `parseExactPayload(value, rules, "$.payload")`: a fresh object of the members, in the rules'
/// order.
fn exact_payload(value: &Js, rules: Rules) -> read::Read<Js> {
    let path = "$.payload";
    record(value, path)?;
    let keys: Vec<&str> = rules.iter().map(|(k, _)| *k).collect();
    exact_keys(value, &keys, &[], path)?;
    let mut members = Vec::with_capacity(rules.len());
    for &(key, rule) in rules {
        let item = field(value, key);
        let at = member(path, key);
        let parsed = match rule {
            Rule::Str => Js::str(string(item, &at)?),
            Rule::Digest => Js::str(hex_digest(item, &at)?),
            Rule::Count => Js::Num(integer(item, &at, 1)? as f64),
            Rule::Strings => Js::array(string_array(item, &at)?.into_iter().map(Js::str).collect()),
            Rule::Timestamp => Js::str(timestamp(item, &at)?),
            Rule::State => Js::str(parse_participant_state(item, &at)?),
            Rule::OneOf(allowed) => Js::str(one_of(item, allowed, &at)?),
        };
        members.push((key, parsed));
    }
    Ok(Js::object(members))
}

/// `parseLifecycleSubscriptionCreation`: a lifecycle subscription in its first state.
fn subscription_creation(value: &Js) -> read::Read<Js> {
    let subscription = parse_lifecycle_subscription(value)?;
    if text(&subscription, "state") != Some("armed") {
        return fail("$.payload.state", "must be armed on creation");
    }
    if number(&subscription, "triggerGeneration") != Some(0.0) {
        return fail("$.payload.triggerGeneration", "must be zero on creation");
    }
    if subscription.get("createdAt") != subscription.get("updatedAt") {
        return fail("$.payload.updatedAt", "must equal createdAt on creation");
    }
    for key in ["lastActivityAt", "dueAt", "lastSourceEventId"] {
        if !matches!(field(&subscription, key), Js::Undefined) {
            return fail(&member("$.payload", key), "must be absent on creation");
        }
    }
    Ok(subscription)
}

/// A parsed `BossRestrictedClientRequest`.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) client: &'static str,
    pub(crate) boss_run_id: String,
    /// `managerParticipantId` or `participantId`.
    pub(crate) participant_id: String,
    pub(crate) binding_epoch: i64,
    pub(crate) request_id: String,
    pub(crate) idempotency_key: String,
    pub(crate) operation: &'static str,
    pub(crate) payload: Js,
}

fn participant_field(client: &str) -> &'static str {
    if client == "boss_manager" {
        "managerParticipantId"
    } else {
        "participantId"
    }
}

impl Request {
    /// The fresh object `parseBossRestrictedClientRequest` returns.
    pub(crate) fn to_json(&self) -> String {
        JsonObject::new()
            .str("version", BOSS_RESTRICTED_CLIENT_REQUEST_VERSION)
            .str("client", self.client)
            .str("bossRunId", &self.boss_run_id)
            .int("bindingEpoch", self.binding_epoch)
            .str("requestId", &self.request_id)
            .str("idempotencyKey", &self.idempotency_key)
            .str("operation", self.operation)
            .raw("payload", &self.payload.to_json().unwrap_or_default())
            .str(participant_field(self.client), &self.participant_id)
            .finish()
    }

    /// `bossRestrictedClientIdempotencyScope`.
    pub(crate) fn scope(&self) -> String {
        scope_of(
            &self.boss_run_id,
            self.client,
            &self.participant_id,
            self.binding_epoch,
        )
    }

    /// `createBossRestrictedClientIdempotencyRecord`.
    pub(crate) fn idempotency_record(&self) -> IdempotencyRecord {
        IdempotencyRecord {
            scope: self.scope(),
            boss_run_id: self.boss_run_id.clone(),
            client: self.client,
            participant_id: self.participant_id.clone(),
            binding_epoch: self.binding_epoch,
            operation: self.operation,
            request_id: self.request_id.clone(),
            idempotency_key: self.idempotency_key.clone(),
            request_digest: hash(REQUEST_DOMAIN, &self.to_json()),
        }
    }
}

fn hash(domain: &str, json: &str) -> String {
    canonical_hash_of_text(domain, json).expect("a fresh record is canonical JSON")
}

/// The idempotency scope of a run, client, participant and epoch.
fn scope_of(run: &str, client: &str, participant: &str, epoch: i64) -> String {
    let binding = JsonObject::new()
        .str("bossRunId", run)
        .str("client", client)
        .str("participantId", participant)
        .int("bindingEpoch", epoch)
        .finish();
    hash(SCOPE_DOMAIN, &binding)
}

/// `parseBossRestrictedClientRequest`.
pub(crate) fn parse_request(v: &Js) -> read::Read<Request> {
    record(v, "$")?;
    let client = one_of(field(v, "client"), CLIENTS, "$.client")?;
    let participant_key = participant_field(client);
    exact_keys(
        v,
        &[
            "version",
            "client",
            "bossRunId",
            participant_key,
            "bindingEpoch",
            "requestId",
            "idempotencyKey",
            "operation",
            "payload",
        ],
        &[],
        "$",
    )?;
    version(v, BOSS_RESTRICTED_CLIENT_REQUEST_VERSION)?;
    let operation = client_operation(client, field(v, "operation"), "$.operation")?;
    let payload = match request_rules(operation) {
        Some(rules) => exact_payload(field(v, "payload"), rules)?,
        None => subscription_creation(field(v, "payload"))?,
    };
    let boss_run_id = string(field(v, "bossRunId"), "$.bossRunId")?.to_string();
    let binding_epoch = integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?;
    let request_id = string(field(v, "requestId"), "$.requestId")?.to_string();
    let idempotency_key = string(field(v, "idempotencyKey"), "$.idempotencyKey")?.to_string();
    let participant_path = member("$", participant_key);
    let participant_id = string(field(v, participant_key), &participant_path)?.to_string();
    Ok(Request {
        client,
        boss_run_id,
        participant_id,
        binding_epoch,
        request_id,
        idempotency_key,
        operation,
        payload,
    })
}

/// A `BossRestrictedClientIdempotencyRecord`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IdempotencyRecord {
    pub(crate) scope: String,
    pub(crate) boss_run_id: String,
    pub(crate) client: &'static str,
    pub(crate) participant_id: String,
    pub(crate) binding_epoch: i64,
    pub(crate) operation: &'static str,
    pub(crate) request_id: String,
    pub(crate) idempotency_key: String,
    pub(crate) request_digest: String,
}

impl IdempotencyRecord {
    /// The record as JSON, in the TypeScript member order.
    pub(crate) fn to_json(&self) -> String {
        JsonObject::new()
            .str("scope", &self.scope)
            .str("bossRunId", &self.boss_run_id)
            .str("client", self.client)
            .str("participantId", &self.participant_id)
            .int("bindingEpoch", self.binding_epoch)
            .str("operation", self.operation)
            .str("requestId", &self.request_id)
            .str("idempotencyKey", &self.idempotency_key)
            .str("requestDigest", &self.request_digest)
            .finish()
    }
}

/// `parseBossRestrictedClientIdempotencyRecord(value, path)`.
pub(crate) fn parse_idempotency_record(v: &Js, path: &str) -> read::Read<IdempotencyRecord> {
    exact_record(
        v,
        &[
            "scope",
            "bossRunId",
            "client",
            "participantId",
            "bindingEpoch",
            "operation",
            "requestId",
            "idempotencyKey",
            "requestDigest",
        ],
        &[],
        path,
    )?;
    let at = |key: &str| member(path, key);
    let client = one_of(field(v, "client"), CLIENTS, &at("client"))?;
    let record = IdempotencyRecord {
        scope: hex_digest(field(v, "scope"), &at("scope"))?.to_string(),
        boss_run_id: string(field(v, "bossRunId"), &at("bossRunId"))?.to_string(),
        client,
        participant_id: string(field(v, "participantId"), &at("participantId"))?.to_string(),
        binding_epoch: integer(field(v, "bindingEpoch"), &at("bindingEpoch"), 1)?,
        operation: client_operation(client, field(v, "operation"), &at("operation"))?,
        request_id: string(field(v, "requestId"), &at("requestId"))?.to_string(),
        idempotency_key: string(field(v, "idempotencyKey"), &at("idempotencyKey"))?.to_string(),
        request_digest: hex_digest(field(v, "requestDigest"), &at("requestDigest"))?.to_string(),
    };
    let bound = scope_of(
        &record.boss_run_id,
        record.client,
        &record.participant_id,
        record.binding_epoch,
    );
    if record.scope != bound {
        return fail(&at("scope"), "is not bound to the record identity");
    }
    Ok(record)
}

/// A parsed `BossRestrictedClientResult`.
#[derive(Clone, Debug)]
struct ResultRecord {
    boss_run_id: String,
    client: &'static str,
    participant_id: String,
    binding_epoch: i64,
    request_id: String,
    idempotency_key: String,
    operation: &'static str,
    status: &'static str,
    /// `payload` (ok), `denialCode` (unauthorized) or `errorCode`.
    outcome: Js,
}

fn status_field(status: &str) -> &'static str {
    match status {
        "ok" => "payload",
        "unauthorized" => "denialCode",
        _ => "errorCode",
    }
}

impl ResultRecord {
    fn to_json(&self) -> String {
        JsonObject::new()
            .str("version", BOSS_RESTRICTED_CLIENT_RESULT_VERSION)
            .str("bossRunId", &self.boss_run_id)
            .str("client", self.client)
            .int("bindingEpoch", self.binding_epoch)
            .str("requestId", &self.request_id)
            .str("idempotencyKey", &self.idempotency_key)
            .str("operation", self.operation)
            .str("status", self.status)
            .str(participant_field(self.client), &self.participant_id)
            .raw(
                status_field(self.status),
                &self.outcome.to_json().unwrap_or_default(),
            )
            .finish()
    }
}

/// `parseBossRestrictedClientResult(value)` without the request binding.
fn parse_result(v: &Js) -> read::Read<ResultRecord> {
    record(v, "$")?;
    let client = one_of(field(v, "client"), CLIENTS, "$.client")?;
    let participant_key = participant_field(client);
    let status = one_of(field(v, "status"), RESTRICTED_RESULT_STATUSES, "$.status")?;
    let outcome_key = status_field(status);
    exact_keys(
        v,
        &[
            "version",
            "bossRunId",
            "client",
            participant_key,
            "bindingEpoch",
            "requestId",
            "idempotencyKey",
            "operation",
            "status",
            outcome_key,
        ],
        &[],
        "$",
    )?;
    version(v, BOSS_RESTRICTED_CLIENT_RESULT_VERSION)?;
    let operation = client_operation(client, field(v, "operation"), "$.operation")?;
    if operation == "manager_request_council"
        && (status != "feature_not_enabled"
            || !is_string(field(v, "errorCode"), "feature_not_enabled"))
    {
        return fail(
            "$.status",
            "Council execution is reserved and must deterministically return \
             feature_not_enabled",
        );
    }
    let boss_run_id = string(field(v, "bossRunId"), "$.bossRunId")?.to_string();
    let binding_epoch = integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?;
    let request_id = string(field(v, "requestId"), "$.requestId")?.to_string();
    let idempotency_key = string(field(v, "idempotencyKey"), "$.idempotencyKey")?.to_string();
    let participant_path = member("$", participant_key);
    let participant_id = string(field(v, participant_key), &participant_path)?.to_string();
    let outcome = match status {
        "ok" => exact_payload(field(v, "payload"), result_rules(operation))?,
        "unauthorized" => Js::str(one_of(
            field(v, "denialCode"),
            BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES,
            "$.denialCode",
        )?),
        _ => Js::str(string(field(v, "errorCode"), "$.errorCode")?),
    };
    Ok(ResultRecord {
        boss_run_id,
        client,
        participant_id,
        binding_epoch,
        request_id,
        idempotency_key,
        operation,
        status,
        outcome,
    })
}

/// The request payload members a successful result must echo.
fn echoed(operation: &str) -> &'static [&'static str] {
    match operation {
        "manager_create_assignment"
        | "manager_cancel_assignment"
        | "participant_accept_assignment"
        | "participant_reject_assignment"
        | "participant_submit_assignment" => &["assignmentId"],
        "manager_submit_checkpoint" | "participant_submit_checkpoint" => {
            &["assignmentId", "checkpointId"]
        }
        "manager_create_subscription" | "manager_cancel_subscription" => &["subscriptionId"],
        "manager_report_blocker" => &["blockerId"],
        "manager_submit_proof" | "reviewer_get_proof" | "reviewer_submit_proof" => &["proofId"],
        "reviewer_submit_review" | "reviewer_get_objection_status" => &["reviewId"],
        _ => &[],
    }
}

/// `assertBossRestrictedClientResultBinding(result, request)`.
fn assert_binding(result_value: &Js, request_value: &Js) -> read::Read<()> {
    let result = parse_result(result_value)?;
    let request = parse_request(request_value)?;
    if result.boss_run_id != request.boss_run_id
        || result.client != request.client
        || result.participant_id != request.participant_id
        || result.binding_epoch != request.binding_epoch
        || result.request_id != request.request_id
        || result.idempotency_key != request.idempotency_key
        || result.operation != request.operation
    {
        return fail(
            "$",
            "restricted result is not bound to the originating authenticated request",
        );
    }
    if result.status == "ok" {
        for key in echoed(request.operation) {
            if result.outcome.get(key) != request.payload.get(key) {
                return fail(
                    &member("$.payload", key),
                    "does not match the originating request payload",
                );
            }
        }
    }
    Ok(())
}

/// `parseBossRestrictedClientResult(value, request?)`, as the fresh result's JSON.
fn parse_bound_result(value: &Js, request: &Js) -> read::Read<String> {
    let result = parse_result(value)?;
    let json = result.to_json();
    if !matches!(request, Js::Undefined) {
        let fresh = Js::parse_json(&json).expect("a fresh result is JSON");
        assert_binding(&fresh, request)?;
    }
    Ok(json)
}

fn json_string(text: &str) -> String {
    let mut out = String::new();
    crate::contract::value::write_json_string(&mut out, text);
    out
}

/// This module's constants, added to `./boss`'s constant object.
pub(crate) fn add_constants(o: JsonObject) -> JsonObject {
    o.raw(
        "BOSS_MANAGER_OPERATIONS",
        &string_array_json(BOSS_MANAGER_OPERATIONS),
    )
    .raw(
        "BOSS_PARTICIPANT_OPERATIONS",
        &string_array_json(BOSS_PARTICIPANT_OPERATIONS),
    )
    .raw(
        "BOSS_REVIEWER_OPERATIONS",
        &string_array_json(BOSS_REVIEWER_OPERATIONS),
    )
    .raw(
        "BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES",
        &string_array_json(BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES),
    )
    .raw(
        "RESTRICTED_RESULT_STATUSES",
        &string_array_json(RESTRICTED_RESULT_STATUSES),
    )
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseBossRestrictedClientRequest",
        run: |a: Args<'_>| Ok(Out::Json(parse_request(a.get(0))?.to_json())),
    },
    Op {
        name: "boss.bossRestrictedClientIdempotencyScope",
        run: |a: Args<'_>| Ok(Out::Json(json_string(&parse_request(a.get(0))?.scope()))),
    },
    Op {
        name: "boss.createBossRestrictedClientIdempotencyRecord",
        run: |a: Args<'_>| {
            let record = parse_request(a.get(0))?.idempotency_record();
            Ok(Out::Json(record.to_json()))
        },
    },
    Op {
        name: "boss.parseBossRestrictedClientResult",
        run: |a: Args<'_>| Ok(Out::Json(parse_bound_result(a.get(0), a.get(1))?)),
    },
    Op {
        name: "boss.assertBossRestrictedClientResultBinding",
        run: |a: Args<'_>| {
            assert_binding(a.get(0), a.get(1))?;
            Ok(Out::Undefined)
        },
    },
    Op {
        name: "boss.authorizeBossRestrictedClientRequest",
        run: |a: Args<'_>| Ok(Out::Json(authorize::authorize(a.get(0), a.get(1))?)),
    },
];
