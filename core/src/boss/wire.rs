//! Boss wire records: the feature contract and its hashes, participant bindings, credentials,
//! control envelopes.
//!
//! The three negotiated hashes are computed here from their corpora, as the TypeScript core
//! computes them at load: `BOSS_RUN_FEATURE_SEMANTICS_HASH` over the feature-semantics corpus
//! ([`feature_semantics_corpus_json`]), `BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH` over the
//! feature contract, `BOSS_CAPABILITY_FEATURE_DIGEST` over the capability binding. The vector
//! hashes those corpora embed come from their vector files: the participant-state and transition
//! hashes ([`super::participant::vectors`]), the worker-store migration's
//! ([`worker_store::vectors_hash`]) and the supervision one
//! ([`crate::boss::supervision::vectors`]); all are literals in the TypeScript core.

use std::sync::LazyLock;

use super::participant::vectors::{
    PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION, PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
    participant_state_transition_vectors_hash, participant_state_vectors_hash,
};
use super::supervision::vectors as supervision;
use super::{JsonObject, string_array_json, worker_store};
use crate::canonical::canonical_hash_of_text;
use crate::contract::read::{
    self, exact_record, fail, field, hex_digest, integer, member, one_of, optional_string, string,
    timestamp,
};
use crate::contract::{Args, Failure, Js, Op, Out};

/// The protocol version Boss negotiation is defined over.
pub const INTERCOM_BASE_PROTOCOL_VERSION: i64 = 4;
/// The Boss feature's name.
pub const BOSS_RUN_FEATURE: &str = "boss-run-v1";
/// The Boss feature's version.
pub const BOSS_RUN_FEATURE_VERSION: i64 = 1;
/// The Boss control envelope's version.
pub const BOSS_CONTROL_ENVELOPE_VERSION: i64 = 1;
/// The capability binding's version.
pub const BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION: i64 = 1;

/// The Boss policy semantics version the feature corpus names.
pub const BOSS_POLICY_SEMANTICS_VERSION: i64 = 1;
/// The feature-routing vector schema version the feature corpus names.
pub const FEATURE_ROUTING_VECTOR_SCHEMA_VERSION: i64 = 1;

/// Record versions.
pub const BOSS_RUN_AUTHORITY_IDENTITY_VERSION: &str = "boss.run-authority.v1";
/// `boss.participant-binding.v1`.
pub const BOSS_PARTICIPANT_BINDING_VERSION: &str = "boss.participant-binding.v1";
/// `boss.participant-credential.v1`.
pub const BOSS_PARTICIPANT_CREDENTIAL_VERSION: &str = "boss.participant-credential.v1";
/// `boss.credential-digest.v1`.
pub const BOSS_CREDENTIAL_DIGEST_RECORD_VERSION: &str = "boss.credential-digest.v1";
/// `boss.credential-audit-event.v1`.
pub const BOSS_CREDENTIAL_AUDIT_EVENT_VERSION: &str = "boss.credential-audit-event.v1";
/// `boss.authority-transition.v1`.
pub const AUTHORITY_TRANSITION_VERSION: &str = "boss.authority-transition.v1";
/// `boss.authority-event.v1`.
pub const AUTHORITY_EVENT_VERSION: &str = "boss.authority-event.v1";
/// `boss.authority-request.v1`.
pub const AUTHORITY_REQUEST_VERSION: &str = "boss.authority-request.v1";

/// The participant roles; the communication profiles are the same list.
pub const BOSS_PARTICIPANT_ROLES: &[&str] =
    &["boss", "manager", "adversary", "scout", "worker", "council"];
/// Binding states.
pub const BOSS_BINDING_STATES: &[&str] = &["active", "revoked", "replaced"];
/// Credential kinds.
pub const BOSS_CREDENTIAL_KINDS: &[&str] = &["enrollment", "reconnect"];
/// Control envelope types.
pub const BOSS_CONTROL_TYPES: &[&str] = &[
    "boss.assignment.created",
    "boss.assignment.accepted",
    "boss.assignment.checkpoint",
    "boss.assignment.submitted",
    "boss.assignment.rejected",
    "boss.assignment.cancelled",
    "boss.staffing.requested",
    "boss.staffing.resolved",
    "boss.review.requested",
    "boss.review.submitted",
    "boss.council.requested",
    "boss.council.submitted",
    "boss.proof.submitted",
    "boss.worker.health",
    "boss.worker.blocked",
    "boss.worker.failed",
    "boss.worker.notice",
    "boss.worker.notice_delivery_failed",
    "boss.decision.required",
];

const FEATURE_SEMANTICS_DOMAIN: &str = "agent-intercom-core/boss-run-v1/feature-semantics";
const PROTOCOL_FEATURE_CONTRACT_DOMAIN: &str =
    "agent-intercom-core/boss-run-v1/protocol-feature-contract";
const CAPABILITY_FEATURE_DIGEST_DOMAIN: &str =
    "agent-intercom-core/boss-run-v1/capability-feature-digest";
const PARTICIPANT_CREDENTIAL_DOMAIN: &str =
    "agent-intercom-core/boss-run-v1/participant-credential";

/// The Boss policy semantics hash and the feature-routing semantics hash that the feature
/// corpus embeds, both computed from their vector files (`vectors/boss-policy-v1.json`,
/// `vectors/feature-routing-v1.json`).
fn upstream_semantics_hashes() -> (String, String) {
    (
        crate::boss::policy::semantics_hash().to_string(),
        crate::boss::feature::routing_semantics_hash().to_string(),
    )
}

/// `BOSS_POLICY_SEMANTICS_HASH`, as the feature corpus embeds it.
pub fn boss_policy_semantics_hash() -> String {
    upstream_semantics_hashes().0
}

/// `FEATURE_ROUTING_SEMANTICS_HASH`, as the feature corpus embeds it.
pub fn feature_routing_semantics_hash() -> String {
    upstream_semantics_hashes().1
}

/// `BOSS_RUN_FEATURE_SEMANTICS_CORPUS` as JSON, in the TypeScript core's member order.
pub fn feature_semantics_corpus_json() -> String {
    let (policy, routing) = upstream_semantics_hashes();
    JsonObject::new()
        .str("feature", BOSS_RUN_FEATURE)
        .int("version", BOSS_RUN_FEATURE_VERSION)
        .int("baseProtocolVersion", INTERCOM_BASE_PROTOCOL_VERSION)
        .int("controlEnvelopeVersion", BOSS_CONTROL_ENVELOPE_VERSION)
        .str("bindingAuthority", "broker")
        .str("unknownMetadata", "reject")
        .str("downgradeToLocalPublic", "forbidden")
        .str("participantEpochs", "independent")
        .str("bossBindingEpoch", "independent")
        .str("crossRunCommunication", "deny")
        .str(
            "controllerDeliveryRunIdentity",
            "embedded_and_top_level_boss_run_id_present_and_equal",
        )
        .str("legacyRemoteAccessSemantics", "unchanged")
        .str(
            "deliveryClaimReleaseProof",
            "drained_barrier_bound_to_claim_generation_session_epoch_named_pi_opencode_paths\
             _and_not_before_attempt",
        )
        .str(
            "recordReceiptIngress",
            "persisted_claim_chronology_and_result_invariants",
        )
        .int("initialAuthorityBindPriorEpoch", 0)
        .str("laterAuthorityTransitionPriorEpoch", "positive")
        .int("bossPolicySemanticsVersion", BOSS_POLICY_SEMANTICS_VERSION)
        .str("bossPolicySemanticsHash", &policy)
        .int(
            "featureRoutingVectorVersion",
            FEATURE_ROUTING_VECTOR_SCHEMA_VERSION,
        )
        .str("featureRoutingSemanticsHash", &routing)
        .with_vector_hashes()
        .finish()
}

impl JsonObject {
    /// The four vector corpora's versions and hashes, as both binding corpora list them.
    fn with_vector_hashes(self) -> JsonObject {
        self.int(
            "participantStateVectorSchemaVersion",
            PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
        )
        .str(
            "participantStateVectorsHash",
            participant_state_vectors_hash(),
        )
        .int(
            "participantStateTransitionVectorSchemaVersion",
            PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION,
        )
        .str(
            "participantStateTransitionVectorsHash",
            participant_state_transition_vectors_hash(),
        )
        .int(
            "supervisionVectorSchemaVersion",
            supervision::SCHEMA_VERSION,
        )
        .str("supervisionVectorsHash", supervision::vectors_hash())
        .int(
            "fullWorkerStoreMigrationVectorVersion",
            worker_store::vector_version(),
        )
        .str(
            "fullWorkerStoreMigrationVectorsHash",
            worker_store::vectors_hash(),
        )
    }
}

fn hash(domain: &str, json: &str) -> String {
    canonical_hash_of_text(domain, json).expect("a Boss binding corpus is canonical JSON")
}

static FEATURE_SEMANTICS_HASH: LazyLock<String> =
    LazyLock::new(|| hash(FEATURE_SEMANTICS_DOMAIN, &feature_semantics_corpus_json()));
static PROTOCOL_FEATURE_CONTRACT_HASH: LazyLock<String> =
    LazyLock::new(|| hash(PROTOCOL_FEATURE_CONTRACT_DOMAIN, &feature_contract_json()));
static CAPABILITY_FEATURE_DIGEST: LazyLock<String> =
    LazyLock::new(|| hash(CAPABILITY_FEATURE_DIGEST_DOMAIN, &capability_binding_json()));

/// `BOSS_RUN_FEATURE_SEMANTICS_HASH`.
pub fn feature_semantics_hash() -> &'static str {
    &FEATURE_SEMANTICS_HASH
}

/// `BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH`.
pub fn protocol_feature_contract_hash() -> &'static str {
    &PROTOCOL_FEATURE_CONTRACT_HASH
}

/// `BOSS_CAPABILITY_FEATURE_DIGEST`.
pub fn capability_feature_digest() -> &'static str {
    &CAPABILITY_FEATURE_DIGEST
}

/// `BOSS_RUN_FEATURE_CONTRACT` as JSON.
pub fn feature_contract_json() -> String {
    JsonObject::new()
        .str("feature", BOSS_RUN_FEATURE)
        .int("version", BOSS_RUN_FEATURE_VERSION)
        .int("baseProtocolVersion", INTERCOM_BASE_PROTOCOL_VERSION)
        .str("semanticsHash", feature_semantics_hash())
        .int("controlEnvelopeVersion", BOSS_CONTROL_ENVELOPE_VERSION)
        .finish()
}

/// The capability binding `BOSS_CAPABILITY_FEATURE_DIGEST` hashes.
pub fn capability_binding_json() -> String {
    JsonObject::new()
        .int("version", BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION)
        .int("canonicalEncodingVersion", 1)
        .int("baseProtocolVersion", INTERCOM_BASE_PROTOCOL_VERSION)
        .str(
            "protocolFeatureContractHash",
            protocol_feature_contract_hash(),
        )
        .int("policySemanticsVersion", BOSS_POLICY_SEMANTICS_VERSION)
        .str("policySemanticsHash", &boss_policy_semantics_hash())
        .int("controlEnvelopeVersion", BOSS_CONTROL_ENVELOPE_VERSION)
        .with_vector_hashes()
        .finish()
}

/// `value === n` for a number `n`.
pub(crate) fn is_number(value: &Js, n: i64) -> bool {
    matches!(value, Js::Num(x) if *x == n as f64)
}

/// `value === text` for a string `text`.
pub(crate) fn is_string(value: &Js, text: &str) -> bool {
    value.as_str() == Some(text)
}

/// `unsupported version: <value>; expected <expected>` unless the version is exactly it.
pub(crate) fn literal_version(value: &Js, expected: &str, path: &str) -> read::Read<()> {
    if is_string(value, expected) {
        return Ok(());
    }
    fail(
        path,
        format!(
            "unsupported version: {}; expected {expected}",
            value.js_string()
        ),
    )
}

fn parse_feature_contract(a: Args<'_>) -> Result<Out, Failure> {
    check_feature_contract(a.get(0)).map(|()| Out::Input(0))
}

/// `parseBossRunFeatureContract` as a check: the exact `BOSS_RUN_FEATURE_CONTRACT`, field by
/// field (paths `$.<field>`).
pub fn check_feature_contract(v: &Js) -> read::Read<()> {
    exact_record(
        v,
        &[
            "feature",
            "version",
            "baseProtocolVersion",
            "semanticsHash",
            "controlEnvelopeVersion",
        ],
        &[],
        "$",
    )?;
    if !is_string(field(v, "feature"), BOSS_RUN_FEATURE) {
        return fail("$.feature", format!("must be {BOSS_RUN_FEATURE}"));
    }
    let version = field(v, "version");
    if !is_number(version, BOSS_RUN_FEATURE_VERSION) {
        return fail(
            "$.version",
            format!("unsupported Boss feature version: {}", version.js_string()),
        );
    }
    let base = field(v, "baseProtocolVersion");
    if !is_number(base, INTERCOM_BASE_PROTOCOL_VERSION) {
        return fail(
            "$.baseProtocolVersion",
            format!(
                "unsupported Boss base protocol version: {}",
                base.js_string()
            ),
        );
    }
    if hex_digest(field(v, "semanticsHash"), "$.semanticsHash")? != feature_semantics_hash() {
        return fail(
            "$.semanticsHash",
            "does not match the boss-run-v1 semantics corpus",
        );
    }
    let envelope = field(v, "controlEnvelopeVersion");
    if !is_number(envelope, BOSS_CONTROL_ENVELOPE_VERSION) {
        return fail(
            "$.controlEnvelopeVersion",
            format!(
                "unsupported control envelope version: {}",
                envelope.js_string()
            ),
        );
    }
    Ok(())
}

fn parse_run_authority_identity(a: Args<'_>) -> Result<Out, Failure> {
    let v = a.get(0);
    exact_record(
        v,
        &[
            "version",
            "controllerPrincipalId",
            "bossRunId",
            "controllerGeneration",
            "authorityTransitionRevision",
            "bossBindingEpoch",
        ],
        &["activeBossSessionId"],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        BOSS_RUN_AUTHORITY_IDENTITY_VERSION,
        "$.version",
    )?;
    string(field(v, "controllerPrincipalId"), "$.controllerPrincipalId")?;
    string(field(v, "bossRunId"), "$.bossRunId")?;
    integer(
        field(v, "controllerGeneration"),
        "$.controllerGeneration",
        1,
    )?;
    integer(
        field(v, "authorityTransitionRevision"),
        "$.authorityTransitionRevision",
        0,
    )?;
    optional_string(field(v, "activeBossSessionId"), "$.activeBossSessionId")?;
    integer(field(v, "bossBindingEpoch"), "$.bossBindingEpoch", 1)?;
    Ok(Out::Input(0))
}

/// Role and profile: both from the role list, and equal (`mismatch` is the message).
fn role_and_profile<'a>(v: &Js, mismatch: &str) -> read::Read<&'a str> {
    let role = one_of(field(v, "role"), BOSS_PARTICIPANT_ROLES, "$.role")?;
    let profile = one_of(
        field(v, "communicationProfile"),
        BOSS_PARTICIPANT_ROLES,
        "$.communicationProfile",
    )?;
    if profile != role {
        return fail("$.communicationProfile", mismatch);
    }
    Ok(role)
}

/// `parseBossParticipantBinding`'s checks.
pub fn check_participant_binding(v: &Js) -> read::Read<()> {
    exact_record(
        v,
        &[
            "version",
            "bossRunId",
            "participantId",
            "role",
            "communicationProfile",
            "bindingEpoch",
            "sessionId",
            "brokerGeneration",
            "brokerBootInstance",
            "state",
            "authorityTransitionId",
        ],
        &["assignedManagerParticipantId"],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        BOSS_PARTICIPANT_BINDING_VERSION,
        "$.version",
    )?;
    string(field(v, "bossRunId"), "$.bossRunId")?;
    string(field(v, "participantId"), "$.participantId")?;
    let role = role_and_profile(v, "must match the authenticated role")?;
    integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?;
    string(field(v, "sessionId"), "$.sessionId")?;
    integer(field(v, "brokerGeneration"), "$.brokerGeneration", 1)?;
    string(field(v, "brokerBootInstance"), "$.brokerBootInstance")?;
    one_of(field(v, "state"), BOSS_BINDING_STATES, "$.state")?;
    let manager = optional_string(
        field(v, "assignedManagerParticipantId"),
        "$.assignedManagerParticipantId",
    )?;
    if matches!(role, "worker" | "scout") != manager.is_some() {
        return fail(
            "$.assignedManagerParticipantId",
            "is required exactly for Worker and Scout bindings",
        );
    }
    string(field(v, "authorityTransitionId"), "$.authorityTransitionId")?;
    Ok(())
}

fn parse_participant_binding(a: Args<'_>) -> Result<Out, Failure> {
    check_participant_binding(a.get(0))?;
    Ok(Out::Input(0))
}

/// `parseBossParticipantCredentialEnvelope`'s checks.
pub fn check_credential_envelope(v: &Js) -> read::Read<()> {
    exact_record(
        v,
        &[
            "version",
            "namespace",
            "credentialKind",
            "credentialId",
            "credential",
            "bossRunId",
            "participantId",
            "role",
            "communicationProfile",
            "bindingEpoch",
            "issuedAt",
            "expiresAt",
            "nonce",
        ],
        &[],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        BOSS_PARTICIPANT_CREDENTIAL_VERSION,
        "$.version",
    )?;
    if !is_string(field(v, "namespace"), BOSS_RUN_FEATURE) {
        return fail("$.namespace", format!("must be {BOSS_RUN_FEATURE}"));
    }
    one_of(
        field(v, "credentialKind"),
        BOSS_CREDENTIAL_KINDS,
        "$.credentialKind",
    )?;
    for key in ["credentialId", "credential", "bossRunId", "participantId"] {
        string(field(v, key), &member("$", key))?;
    }
    role_and_profile(v, "must match role")?;
    integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?;
    let issued = timestamp(field(v, "issuedAt"), "$.issuedAt")?;
    let expires = timestamp(field(v, "expiresAt"), "$.expiresAt")?;
    if read::parse_timestamp(expires) <= read::parse_timestamp(issued) {
        return fail("$.expiresAt", "must be later than issuedAt");
    }
    string(field(v, "nonce"), "$.nonce")?;
    Ok(())
}

fn parse_credential_envelope(a: Args<'_>) -> Result<Out, Failure> {
    check_credential_envelope(a.get(0))?;
    Ok(Out::Input(0))
}

/// `credentialDigest(envelope)`: the envelope's canonical hash, after parsing it.
pub fn credential_digest(envelope: &Js) -> read::Read<String> {
    check_credential_envelope(envelope)?;
    let json = envelope
        .to_json()
        .expect("a parsed credential envelope is plain JSON");
    Ok(hash(PARTICIPANT_CREDENTIAL_DOMAIN, &json))
}

fn credential_digest_op(a: Args<'_>) -> Result<Out, Failure> {
    let digest = credential_digest(a.get(0))?;
    Ok(Out::Json(format!("\"{digest}\"")))
}

/// The Pi adapter broker's `parseBossParticipantRegistrationMetadata`: `session.boss` of a
/// `register` frame is exactly `{featureContract, capabilityDigest, credential}`, each valid, and
/// it asks for exactly boss-run-v1 over base protocol v4 (the contract canonically equal to
/// `BOSS_RUN_FEATURE_CONTRACT`, the digest `BOSS_CAPABILITY_FEATURE_DIGEST`, the credential of
/// namespace boss-run-v1).
pub fn check_participant_registration(v: &Js) -> read::Read<()> {
    exact_record(
        v,
        &["featureContract", "capabilityDigest", "credential"],
        &[],
        "$.boss",
    )?;
    check_feature_contract(field(v, "featureContract"))?;
    let digest = hex_digest(field(v, "capabilityDigest"), "$.boss.capabilityDigest")?;
    check_credential_envelope(field(v, "credential"))?;
    // The contract and the namespace passed their parsers, which accept only the exact values.
    if digest != capability_feature_digest() {
        return fail(
            "$.boss",
            "must exactly request boss-run-v1 over base protocol v4",
        );
    }
    Ok(())
}

/// `parseBossControlEnvelope`'s checks; the envelope's `messageId` when it passes.
pub fn check_control_envelope(v: &Js) -> read::Read<&str> {
    exact_record(
        v,
        &[
            "type",
            "version",
            "messageId",
            "bossRunId",
            "participantId",
            "bindingEpoch",
            "idempotencyKey",
            "payload",
        ],
        &["causationId", "replyTo"],
        "$",
    )?;
    one_of(field(v, "type"), BOSS_CONTROL_TYPES, "$.type")?;
    let version = field(v, "version");
    if !is_number(version, BOSS_CONTROL_ENVELOPE_VERSION) {
        return fail(
            "$.version",
            format!(
                "unsupported Boss control envelope version: {}",
                version.js_string()
            ),
        );
    }
    let message_id = string(field(v, "messageId"), "$.messageId")?;
    string(field(v, "bossRunId"), "$.bossRunId")?;
    string(field(v, "participantId"), "$.participantId")?;
    integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?;
    optional_string(field(v, "causationId"), "$.causationId")?;
    optional_string(field(v, "replyTo"), "$.replyTo")?;
    string(field(v, "idempotencyKey"), "$.idempotencyKey")?;
    // The payload is checked as `canonicalJson` checks a value: from `$`, not `$.payload`; the
    // refusal is the envelope parser's, without canonicalJson's extra `.code`.
    crate::contract::canonical::canonical_json(field(v, "payload")).map_err(|mut refusal| {
        refusal.code = None;
        refusal
    })?;
    Ok(message_id)
}

fn parse_control_envelope(a: Args<'_>) -> Result<Out, Failure> {
    check_control_envelope(a.get(0))?;
    Ok(Out::Input(0))
}

/// Every constant of `./boss` that this crate owns, as one JSON object (read once by the
/// Node module at load).
pub fn constants_json() -> String {
    use super::{
        authority as a, credential as c, delivery as d, participant as p, service as s, worker as w,
    };
    let roles = string_array_json(BOSS_PARTICIPANT_ROLES);
    JsonObject::new()
        .int(
            "INTERCOM_BASE_PROTOCOL_VERSION",
            INTERCOM_BASE_PROTOCOL_VERSION,
        )
        .str("BOSS_RUN_FEATURE", BOSS_RUN_FEATURE)
        .int("BOSS_RUN_FEATURE_VERSION", BOSS_RUN_FEATURE_VERSION)
        .int(
            "BOSS_CONTROL_ENVELOPE_VERSION",
            BOSS_CONTROL_ENVELOPE_VERSION,
        )
        .raw(
            "BOSS_RUN_FEATURE_SEMANTICS_CORPUS",
            &feature_semantics_corpus_json(),
        )
        .str("BOSS_RUN_FEATURE_SEMANTICS_HASH", feature_semantics_hash())
        .raw("BOSS_RUN_FEATURE_CONTRACT", &feature_contract_json())
        .str(
            "BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH",
            protocol_feature_contract_hash(),
        )
        .int(
            "BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION",
            BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION,
        )
        .str(
            "BOSS_CAPABILITY_FEATURE_DIGEST",
            capability_feature_digest(),
        )
        .int(
            "PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION",
            PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
        )
        .str(
            "PARTICIPANT_STATE_VECTORS_HASH",
            participant_state_vectors_hash(),
        )
        .int(
            "PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION",
            PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION,
        )
        .str(
            "PARTICIPANT_STATE_TRANSITION_VECTORS_HASH",
            participant_state_transition_vectors_hash(),
        )
        .int(
            "FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION",
            worker_store::vector_version(),
        )
        .str(
            "FULL_WORKER_STORE_MIGRATION_VECTORS_HASH",
            worker_store::vectors_hash(),
        )
        .raw("BOSS_PARTICIPANT_ROLES", &roles)
        .raw("BOSS_COMMUNICATION_PROFILES", &roles)
        .raw(
            "BOSS_BINDING_STATES",
            &string_array_json(BOSS_BINDING_STATES),
        )
        .raw(
            "BOSS_CREDENTIAL_KINDS",
            &string_array_json(BOSS_CREDENTIAL_KINDS),
        )
        .raw("BOSS_CONTROL_TYPES", &string_array_json(BOSS_CONTROL_TYPES))
        .str(
            "BOSS_RUN_AUTHORITY_IDENTITY_VERSION",
            BOSS_RUN_AUTHORITY_IDENTITY_VERSION,
        )
        .str(
            "BOSS_PARTICIPANT_BINDING_VERSION",
            BOSS_PARTICIPANT_BINDING_VERSION,
        )
        .str(
            "BOSS_PARTICIPANT_CREDENTIAL_VERSION",
            BOSS_PARTICIPANT_CREDENTIAL_VERSION,
        )
        .str(
            "BOSS_CREDENTIAL_DIGEST_RECORD_VERSION",
            BOSS_CREDENTIAL_DIGEST_RECORD_VERSION,
        )
        .str(
            "BOSS_CREDENTIAL_AUDIT_EVENT_VERSION",
            BOSS_CREDENTIAL_AUDIT_EVENT_VERSION,
        )
        .str("AUTHORITY_TRANSITION_VERSION", AUTHORITY_TRANSITION_VERSION)
        .str("AUTHORITY_EVENT_VERSION", AUTHORITY_EVENT_VERSION)
        .str("AUTHORITY_REQUEST_VERSION", AUTHORITY_REQUEST_VERSION)
        .then(s::add_constants)
        .then(p::add_constants)
        .then(w::add_constants)
        .then(worker_store::add_constants)
        .then(c::add_constants)
        .then(a::add_constants)
        .then(crate::boss::supervision::add_constants)
        .then(d::add_constants)
        .finish()
}

fn constants(_: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(constants_json()))
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.constants",
        run: constants,
    },
    Op {
        name: "boss.parseBossRunFeatureContract",
        run: parse_feature_contract,
    },
    Op {
        name: "boss.parseBossRunAuthorityIdentity",
        run: parse_run_authority_identity,
    },
    Op {
        name: "boss.parseBossParticipantBinding",
        run: parse_participant_binding,
    },
    Op {
        name: "boss.parseBossParticipantCredentialEnvelope",
        run: parse_credential_envelope,
    },
    Op {
        name: "boss.credentialDigest",
        run: credential_digest_op,
    },
    Op {
        name: "boss.parseBossControlEnvelope",
        run: parse_control_envelope,
    },
];
