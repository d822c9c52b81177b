//! Boss wire records and the words every Boss module shares: the `./boss` constants (the
//! feature's name and versions, the record versions, roles, binding states, credential kinds,
//! control types), the comparisons the parsers are written with (`is_string`, `is_number`,
//! `literal_version`), and the records that need nothing more: run authority identities,
//! participant bindings, credential envelopes and their digest, control envelopes.
//!
//! The floor of `./boss`: this module imports no other Boss module, so any of them may import it.
//! The boss-run-v1 feature contract and the hashes computed over the Boss corpora are
//! [`super::feature::semantics`]; every constant as the one object the Node module reads is
//! [`super::constants`].

use crate::canonical::canonical_hash_of_text;
use crate::contract::read::{
    self, exact_record, fail, field, integer, member, one_of, optional_string, string, timestamp,
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

const PARTICIPANT_CREDENTIAL_DOMAIN: &str =
    "agent-intercom-core/boss-run-v1/participant-credential";

/// The canonical hash of a corpus or a record this crate wrote as JSON.
pub(crate) fn hash(domain: &str, json: &str) -> String {
    canonical_hash_of_text(domain, json).expect("a Boss binding corpus is canonical JSON")
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

/// The operations of this module.
pub const OPS: &[Op] = &[
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
