//! `boss.constants`: every constant of `./boss` that this crate owns, as the one JSON object the
//! Node module reads at load.
//!
//! The roof of `./boss`: it gathers the shared constants of [`super::wire`], the hashes of
//! [`super::feature::semantics`] and each module's own constants (its `add_constants`). No Boss
//! module imports it.

use super::feature::semantics::{
    capability_feature_digest, feature_contract_json, feature_semantics_corpus_json,
    feature_semantics_hash, protocol_feature_contract_hash,
};
use super::participant::vectors::{
    PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION, PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION,
    participant_state_transition_vectors_hash, participant_state_vectors_hash,
};
use super::wire::{
    AUTHORITY_EVENT_VERSION, AUTHORITY_REQUEST_VERSION, AUTHORITY_TRANSITION_VERSION,
    BOSS_BINDING_STATES, BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION, BOSS_CONTROL_ENVELOPE_VERSION,
    BOSS_CONTROL_TYPES, BOSS_CREDENTIAL_AUDIT_EVENT_VERSION, BOSS_CREDENTIAL_DIGEST_RECORD_VERSION,
    BOSS_CREDENTIAL_KINDS, BOSS_PARTICIPANT_BINDING_VERSION, BOSS_PARTICIPANT_CREDENTIAL_VERSION,
    BOSS_PARTICIPANT_ROLES, BOSS_RUN_AUTHORITY_IDENTITY_VERSION, BOSS_RUN_FEATURE,
    BOSS_RUN_FEATURE_VERSION, INTERCOM_BASE_PROTOCOL_VERSION,
};
use super::{
    JsonObject, authority, credential, delivery, participant, service, string_array_json,
    supervision, worker, worker_store,
};
use crate::contract::{Args, Failure, Op, Out};

/// Every constant of `./boss` that this crate owns, as one JSON object (read once by the
/// Node module at load).
pub fn constants_json() -> String {
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
        .then(service::add_constants)
        .then(participant::add_constants)
        .then(worker::add_constants)
        .then(worker_store::add_constants)
        .then(credential::add_constants)
        .then(authority::add_constants)
        .then(supervision::add_constants)
        .then(delivery::add_constants)
        .finish()
}

fn constants(_: Args<'_>) -> Result<Out, Failure> {
    Ok(Out::Json(constants_json()))
}

/// The operations of this module.
pub const OPS: &[Op] = &[Op {
    name: "boss.constants",
    run: constants,
}];
