//! The boss-run-v1 feature contract and the hashes a participant and its broker negotiate,
//! with the two checks that compare against them (`parseBossRunFeatureContract` and the Pi
//! adapter broker's registration metadata).
//!
//! The three negotiated hashes are computed here from their corpora, as the TypeScript core
//! computes them at load: `BOSS_RUN_FEATURE_SEMANTICS_HASH` over the feature-semantics corpus
//! ([`feature_semantics_corpus_json`]), `BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH` over the
//! feature contract, `BOSS_CAPABILITY_FEATURE_DIGEST` over the capability binding. The vector
//! hashes those corpora embed come from their vector files: the Boss policy's
//! ([`crate::boss::policy::semantics_hash`]), the feature routing's ([`super::vectors`]), the
//! participant-state and transition hashes ([`crate::boss::participant::vectors`]), the
//! worker-store migration's ([`worker_store::vectors_hash`]) and the supervision one
//! ([`crate::boss::supervision::vectors`]); all are literals in the TypeScript core.

use std::sync::LazyLock;

use super::vectors::routing_semantics_hash;
use crate::boss::participant::vectors::{
    PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION, PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
    participant_state_transition_vectors_hash, participant_state_vectors_hash,
};
use crate::boss::supervision::vectors as supervision;
use crate::boss::wire::{
    BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION, BOSS_CONTROL_ENVELOPE_VERSION,
    BOSS_POLICY_SEMANTICS_VERSION, BOSS_RUN_FEATURE, BOSS_RUN_FEATURE_VERSION,
    FEATURE_ROUTING_VECTOR_SCHEMA_VERSION, INTERCOM_BASE_PROTOCOL_VERSION,
    check_credential_envelope, hash, is_number, is_string,
};
use crate::boss::{JsonObject, policy, worker_store};
use crate::contract::read::{self, exact_record, fail, field, hex_digest};
use crate::contract::{Args, Failure, Js, Op, Out};

const FEATURE_SEMANTICS_DOMAIN: &str = "agent-intercom-core/boss-run-v1/feature-semantics";
const PROTOCOL_FEATURE_CONTRACT_DOMAIN: &str =
    "agent-intercom-core/boss-run-v1/protocol-feature-contract";
const CAPABILITY_FEATURE_DIGEST_DOMAIN: &str =
    "agent-intercom-core/boss-run-v1/capability-feature-digest";

/// The Boss policy semantics hash and the feature-routing semantics hash that the feature
/// corpus embeds, both computed from their vector files (`vectors/boss-policy-v1.json`,
/// `vectors/feature-routing-v1.json`).
fn upstream_semantics_hashes() -> (String, String) {
    (
        policy::semantics_hash().to_string(),
        routing_semantics_hash().to_string(),
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

/// The operations of this module.
pub const OPS: &[Op] = &[Op {
    name: "boss.parseBossRunFeatureContract",
    run: parse_feature_contract,
}];
