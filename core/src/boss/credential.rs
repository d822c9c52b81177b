//! Boss participant credentials on the broker side: the digest registry record, the pure
//! credential-use decision, the credential audit event, and the store gates of the participant
//! binding and the digest record.
//!
//! The envelope itself (`parseBossParticipantCredentialEnvelope`, `credentialDigest`) is in
//! [`super::wire`]; the decision re-parses it exactly as the TypeScript core does.

use super::store::{self, StoreVersion};
use super::wire::{
    self, BOSS_CREDENTIAL_AUDIT_EVENT_VERSION, BOSS_CREDENTIAL_DIGEST_RECORD_VERSION,
    BOSS_CREDENTIAL_KINDS, BOSS_PARTICIPANT_BINDING_VERSION, BOSS_PARTICIPANT_ROLES,
    BOSS_RUN_FEATURE, check_participant_binding, is_string, literal_version,
};
use super::{JsonObject, string_array_json};
use crate::contract::read::{
    Read, exact_record, fail, field, hex_digest, integer, one_of, optional_string,
    optional_timestamp, parse_timestamp, string, timestamp,
};
use crate::contract::{Args, Failure, Js, Op, Out};

/// `BOSS_CREDENTIAL_STATES`.
pub const BOSS_CREDENTIAL_STATES: &[&str] = &["issued", "consumed", "revoked", "expired"];
/// `BOSS_CREDENTIAL_AUDIT_OPERATIONS`.
pub const BOSS_CREDENTIAL_AUDIT_OPERATIONS: &[&str] =
    &["issue", "consume", "reconnect", "deny", "revoke", "rotate"];
/// What an audit event's `outcome` may be: `accepted`, or a denial code of
/// [`authorize_credential_use`], in the TypeScript order.
pub const BOSS_CREDENTIAL_AUDIT_OUTCOMES: &[&str] = &[
    "accepted",
    "DIGEST_MISMATCH",
    "NOT_YET_VALID",
    "EXPIRED",
    "ALREADY_CONSUMED",
    "REVOKED",
    "RUN_SUBSTITUTION",
    "PARTICIPANT_SUBSTITUTION",
    "ROLE_SUBSTITUTION",
    "EPOCH_MISMATCH",
    "NONCE_MISMATCH",
    "KIND_MISMATCH",
    "REGISTRY_MISMATCH",
];

/// Milliseconds of a timestamp the readers accepted.
fn millis(text: &str) -> i64 {
    parse_timestamp(text).expect("a timestamp the reader accepted")
}

/// The fields of a digest record the decision compares.
struct DigestRecord<'v> {
    credential_kind: &'v str,
    credential_id: &'v str,
    digest: &'v str,
    boss_run_id: &'v str,
    participant_id: &'v str,
    role: &'v str,
    binding_epoch: i64,
    nonce: &'v str,
    issued_at: &'v str,
    expires_at: &'v str,
    state: &'v str,
    audit_event_id: &'v str,
}

/// `parseBossCredentialDigestRecord`'s checks, in its order.
fn read_digest_record(v: &Js) -> Read<DigestRecord<'_>> {
    exact_record(
        v,
        &[
            "version",
            "namespace",
            "credentialKind",
            "credentialId",
            "digest",
            "bossRunId",
            "participantId",
            "role",
            "bindingEpoch",
            "nonce",
            "issuedAt",
            "expiresAt",
            "state",
            "auditEventId",
        ],
        &["consumedAt", "revokedAt"],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        BOSS_CREDENTIAL_DIGEST_RECORD_VERSION,
        "$.version",
    )?;
    if !is_string(field(v, "namespace"), BOSS_RUN_FEATURE) {
        return fail("$.namespace", format!("must be {BOSS_RUN_FEATURE}"));
    }
    let credential_kind = one_of(
        field(v, "credentialKind"),
        BOSS_CREDENTIAL_KINDS,
        "$.credentialKind",
    )?;
    let credential_id = string(field(v, "credentialId"), "$.credentialId")?;
    let digest = hex_digest(field(v, "digest"), "$.digest")?;
    let boss_run_id = string(field(v, "bossRunId"), "$.bossRunId")?;
    let participant_id = string(field(v, "participantId"), "$.participantId")?;
    let role = one_of(field(v, "role"), BOSS_PARTICIPANT_ROLES, "$.role")?;
    let binding_epoch = integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?;
    let nonce = string(field(v, "nonce"), "$.nonce")?;
    let issued_at = timestamp(field(v, "issuedAt"), "$.issuedAt")?;
    let expires_at = timestamp(field(v, "expiresAt"), "$.expiresAt")?;
    let (issued, expires) = (millis(issued_at), millis(expires_at));
    if expires <= issued {
        return fail("$.expiresAt", "must be later than issuedAt");
    }
    let state = one_of(field(v, "state"), BOSS_CREDENTIAL_STATES, "$.state")?;
    let consumed_at = optional_timestamp(field(v, "consumedAt"), "$.consumedAt")?;
    let revoked_at = optional_timestamp(field(v, "revokedAt"), "$.revokedAt")?;
    let audit_event_id = string(field(v, "auditEventId"), "$.auditEventId")?;
    if (state == "consumed") != consumed_at.is_some() {
        return fail("$.consumedAt", "is required exactly when state is consumed");
    }
    if (state == "revoked") != revoked_at.is_some() {
        return fail("$.revokedAt", "is required exactly when state is revoked");
    }
    if let Some(consumed) = consumed_at.map(millis) {
        if consumed < issued {
            return fail("$.consumedAt", "must not precede issuedAt");
        }
        if consumed >= expires {
            return fail("$.consumedAt", "must be earlier than expiresAt");
        }
    }
    if revoked_at
        .map(millis)
        .is_some_and(|revoked| revoked < issued)
    {
        return fail("$.revokedAt", "must not precede issuedAt");
    }
    Ok(DigestRecord {
        credential_kind,
        credential_id,
        digest,
        boss_run_id,
        participant_id,
        role,
        binding_epoch,
        nonce,
        issued_at,
        expires_at,
        state,
        audit_event_id,
    })
}

/// `parseBossCredentialDigestRecord`: the record itself when it is valid.
pub fn parse_digest_record(v: &Js) -> Result<Out, Failure> {
    read_digest_record(v).map(|_| Out::Input(0))
}

/// The use context: exactly `{now, credentialKind, bossRunId, participantId, role,
/// bindingEpoch, nonce}` (paths from `$`).
struct UseContext<'v> {
    now: &'v str,
    credential_kind: &'v str,
    boss_run_id: &'v str,
    participant_id: &'v str,
    role: &'v str,
    binding_epoch: i64,
    nonce: &'v str,
}

fn read_use_context(v: &Js) -> Read<UseContext<'_>> {
    exact_record(
        v,
        &[
            "now",
            "credentialKind",
            "bossRunId",
            "participantId",
            "role",
            "bindingEpoch",
            "nonce",
        ],
        &[],
        "$",
    )?;
    Ok(UseContext {
        now: timestamp(field(v, "now"), "$.now")?,
        credential_kind: one_of(
            field(v, "credentialKind"),
            BOSS_CREDENTIAL_KINDS,
            "$.credentialKind",
        )?,
        boss_run_id: string(field(v, "bossRunId"), "$.bossRunId")?,
        participant_id: string(field(v, "participantId"), "$.participantId")?,
        role: one_of(field(v, "role"), BOSS_PARTICIPANT_ROLES, "$.role")?,
        binding_epoch: integer(field(v, "bindingEpoch"), "$.bindingEpoch", 1)?,
        nonce: string(field(v, "nonce"), "$.nonce")?,
    })
}

/// A member of an envelope that `check_credential_envelope` accepted, as text.
fn text<'v>(envelope: &'v Js, key: &str) -> &'v str {
    field(envelope, key).as_str().unwrap_or_default()
}

/// `authorizeBossCredentialUse(envelope, record, context)`: the decision as JSON,
/// `{accepted:true,credentialId,auditEventId}` or `{accepted:false,code,auditEventId}`. Throws
/// (a contract failure) only when one of the three does not parse, in that order.
pub fn authorize_credential_use(envelope: &Js, record: &Js, context: &Js) -> Read<String> {
    wire::check_credential_envelope(envelope)?;
    let record = read_digest_record(record)?;
    let context = read_use_context(context)?;
    let decision = |code: Option<&str>| {
        let object = JsonObject::new().bool("accepted", code.is_none());
        match code {
            None => object.str("credentialId", text(envelope, "credentialId")),
            Some(code) => object.str("code", code),
        }
        .str("auditEventId", record.audit_event_id)
        .finish()
    };
    let e = |key: &str| text(envelope, key);
    let epoch = field(envelope, "bindingEpoch")
        .safe_integer()
        .unwrap_or_default();
    if record.digest != wire::credential_digest(envelope)?
        || record.credential_id != e("credentialId")
    {
        return Ok(decision(Some("DIGEST_MISMATCH")));
    }
    let state_code = match record.state {
        "consumed" => Some("ALREADY_CONSUMED"),
        "revoked" => Some("REVOKED"),
        "expired" => Some("EXPIRED"),
        _ => None,
    };
    if state_code.is_some() {
        return Ok(decision(state_code));
    }
    if record.issued_at != e("issuedAt") || record.expires_at != e("expiresAt") {
        return Ok(decision(Some("REGISTRY_MISMATCH")));
    }
    let now = millis(context.now);
    if now < millis(e("issuedAt")) {
        return Ok(decision(Some("NOT_YET_VALID")));
    }
    if now >= millis(e("expiresAt")) || now >= millis(record.expires_at) {
        return Ok(decision(Some("EXPIRED")));
    }
    // Each of the context and the record must name what the envelope names.
    let mismatches: [(bool, &str); 6] = [
        (
            context.credential_kind != e("credentialKind")
                || record.credential_kind != e("credentialKind"),
            "KIND_MISMATCH",
        ),
        (
            context.boss_run_id != e("bossRunId") || record.boss_run_id != e("bossRunId"),
            "RUN_SUBSTITUTION",
        ),
        (
            context.participant_id != e("participantId")
                || record.participant_id != e("participantId"),
            "PARTICIPANT_SUBSTITUTION",
        ),
        (
            context.role != e("role") || record.role != e("role"),
            "ROLE_SUBSTITUTION",
        ),
        (
            context.binding_epoch != epoch || record.binding_epoch != epoch,
            "EPOCH_MISMATCH",
        ),
        (
            context.nonce != e("nonce") || record.nonce != e("nonce"),
            "NONCE_MISMATCH",
        ),
    ];
    let code = mismatches.iter().find(|(differs, _)| *differs).map(|m| m.1);
    Ok(decision(code))
}

/// `parseBossCredentialAuditEvent`: a fresh event as JSON, in the TypeScript member order
/// (`authorityTransitionId` only when given).
pub fn parse_audit_event(v: &Js) -> Read<String> {
    exact_record(
        v,
        &[
            "version",
            "eventId",
            "credentialId",
            "credentialKind",
            "bossRunId",
            "participantId",
            "presentedBindingEpoch",
            "operation",
            "outcome",
            "nonceDigest",
            "occurredAt",
        ],
        &["authorityTransitionId"],
        "$",
    )?;
    literal_version(
        field(v, "version"),
        BOSS_CREDENTIAL_AUDIT_EVENT_VERSION,
        "$.version",
    )?;
    let operation = one_of(
        field(v, "operation"),
        BOSS_CREDENTIAL_AUDIT_OPERATIONS,
        "$.operation",
    )?;
    let outcome = one_of(
        field(v, "outcome"),
        BOSS_CREDENTIAL_AUDIT_OUTCOMES,
        "$.outcome",
    )?;
    if (operation == "deny") != (outcome != "accepted") {
        return fail(
            "$.outcome",
            "deny requires a denial code and all other audit operations require accepted",
        );
    }
    let transition = optional_string(field(v, "authorityTransitionId"), "$.authorityTransitionId")?;
    if matches!(operation, "revoke" | "rotate") && transition.is_none() {
        return fail(
            "$.authorityTransitionId",
            "is required for revocation and rotation",
        );
    }
    // The fresh object's members are read in its literal's order.
    let object = JsonObject::new()
        .str("version", BOSS_CREDENTIAL_AUDIT_EVENT_VERSION)
        .str("eventId", string(field(v, "eventId"), "$.eventId")?)
        .str(
            "credentialId",
            string(field(v, "credentialId"), "$.credentialId")?,
        )
        .str(
            "credentialKind",
            one_of(
                field(v, "credentialKind"),
                BOSS_CREDENTIAL_KINDS,
                "$.credentialKind",
            )?,
        )
        .str("bossRunId", string(field(v, "bossRunId"), "$.bossRunId")?)
        .str(
            "participantId",
            string(field(v, "participantId"), "$.participantId")?,
        )
        .int(
            "presentedBindingEpoch",
            integer(
                field(v, "presentedBindingEpoch"),
                "$.presentedBindingEpoch",
                1,
            )?,
        )
        .str("operation", operation)
        .str("outcome", outcome)
        .str(
            "nonceDigest",
            hex_digest(field(v, "nonceDigest"), "$.nonceDigest")?,
        )
        .opt_str("authorityTransitionId", transition);
    Ok(object
        .str(
            "occurredAt",
            timestamp(field(v, "occurredAt"), "$.occurredAt")?,
        )
        .finish())
}

/// `parseBossParticipantBinding`, as the binding store's parser.
fn parse_binding(v: &Js) -> Result<Out, Failure> {
    check_participant_binding(v)?;
    Ok(Out::Input(0))
}

/// The constants of this module, added to `boss.constants`.
pub(crate) fn add_constants(object: JsonObject) -> JsonObject {
    object
        .raw(
            "BOSS_CREDENTIAL_STATES",
            &string_array_json(BOSS_CREDENTIAL_STATES),
        )
        .raw(
            "BOSS_CREDENTIAL_AUDIT_OPERATIONS",
            &string_array_json(BOSS_CREDENTIAL_AUDIT_OPERATIONS),
        )
}

fn json_answer(result: Read<String>) -> Result<Out, Failure> {
    result.map(Out::Json)
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.parseBossCredentialDigestRecord",
        run: |a: Args<'_>| parse_digest_record(a.get(0)),
    },
    Op {
        name: "boss.authorizeBossCredentialUse",
        run: |a| json_answer(authorize_credential_use(a.get(0), a.get(1), a.get(2))),
    },
    Op {
        name: "boss.parseBossCredentialAuditEvent",
        run: |a| json_answer(parse_audit_event(a.get(0))),
    },
    Op {
        name: "boss.validateBossParticipantBindingStore",
        run: |a| {
            store::answer(
                a,
                StoreVersion::Text(BOSS_PARTICIPANT_BINDING_VERSION),
                parse_binding,
            )
        },
    },
    Op {
        name: "boss.validateBossCredentialDigestStore",
        run: |a| {
            store::answer(
                a,
                StoreVersion::Text(BOSS_CREDENTIAL_DIGEST_RECORD_VERSION),
                parse_digest_record,
            )
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::call_json;

    const T0: &str = "2026-07-28T12:00:00.000Z";
    const T1: &str = "2026-07-28T12:01:00.000Z";
    const T2: &str = "2026-07-28T12:02:00.000Z";

    fn envelope() -> String {
        format!(
            r#"{{"version":"boss.participant-credential.v1","namespace":"boss-run-v1",
            "credentialKind":"enrollment","credentialId":"cred-1","credential":"s",
            "bossRunId":"run-a","participantId":"worker-a","role":"worker",
            "communicationProfile":"worker","bindingEpoch":2,"issuedAt":"{T0}",
            "expiresAt":"{T2}","nonce":"nonce-1"}}"#
        )
    }

    fn record(extra: &str) -> String {
        let digest = wire::credential_digest(&Js::parse_json(&envelope()).unwrap()).unwrap();
        format!(
            r#"{{"version":"boss.credential-digest.v1","namespace":"boss-run-v1",
            "credentialKind":"enrollment","credentialId":"cred-1","digest":"{digest}",
            "bossRunId":"run-a","participantId":"worker-a","role":"worker","bindingEpoch":2,
            "nonce":"nonce-1","issuedAt":"{T0}","expiresAt":"{T2}","state":"issued",
            "auditEventId":"audit-1"{extra}}}"#
        )
    }

    fn context(now: &str) -> String {
        format!(
            r#"{{"now":"{now}","credentialKind":"enrollment","bossRunId":"run-a",
            "participantId":"worker-a","role":"worker","bindingEpoch":2,"nonce":"nonce-1"}}"#
        )
    }

    fn decide(record: &str, now: &str) -> String {
        call_json(
            "boss.authorizeBossCredentialUse",
            &format!("[{},{record},{}]", envelope(), context(now)),
        )
        .unwrap()
    }

    #[test]
    fn the_decision_window_and_its_codes() {
        assert_eq!(
            decide(&record(""), T1),
            concat!(
                r#"{"ok":true,"value":{"accepted":true,"credentialId":"cred-1","#,
                r#""auditEventId":"audit-1"}}"#
            )
        );
        assert!(decide(&record(""), T0).contains(r#""accepted":true"#));
        assert!(decide(&record(""), "2026-07-28T11:59:59.999Z").contains("NOT_YET_VALID"));
        assert!(decide(&record(""), T2).contains(r#""code":"EXPIRED""#));
        let consumed =
            record(&format!(r#","consumedAt":"{T1}""#)).replace("issued\"", "consumed\"");
        assert!(
            decide(&consumed, T1).contains("ALREADY_CONSUMED"),
            "{consumed}"
        );
        let later = record("").replace(
            &format!(r#""expiresAt":"{T2}""#),
            r#""expiresAt":"2026-07-28T12:03:00.000Z""#,
        );
        assert!(decide(&later, T1).contains("REGISTRY_MISMATCH"));
        let other_nonce = record("").replace("nonce-1", "nonce-2");
        assert!(decide(&other_nonce, T1).contains("NONCE_MISMATCH"));
    }

    #[test]
    fn the_digest_record_rules() {
        let check = |text: &str| {
            read_digest_record(&Js::parse_json(text).unwrap())
                .map(|_| ())
                .map_err(|f| f.message())
        };
        assert_eq!(check(&record("")), Ok(()));
        assert_eq!(
            check(&record(&format!(r#","revokedAt":"{T1}""#))),
            Err("$.revokedAt: is required exactly when state is revoked".into())
        );
        let revoked = record(r#","revokedAt":"2026-07-28T11:59:59.999Z""#)
            .replace("\"issued\"", "\"revoked\"");
        assert_eq!(
            check(&revoked),
            Err("$.revokedAt: must not precede issuedAt".into())
        );
    }

    #[test]
    fn audit_events_are_fresh_and_ordered() {
        let event = format!(
            r#"{{"occurredAt":"{T1}","authorityTransitionId":"t-1",
            "version":"boss.credential-audit-event.v1",
            "eventId":"e","credentialId":"c","credentialKind":"reconnect","bossRunId":"r",
            "participantId":"p","presentedBindingEpoch":3,"operation":"rotate","outcome":"accepted",
            "nonceDigest":"{}"}}"#,
            "a".repeat(64)
        );
        let parsed = parse_audit_event(&Js::parse_json(&event).unwrap()).unwrap();
        assert!(parsed.starts_with(r#"{"version":"boss.credential-audit-event.v1","eventId":"e""#));
        assert!(parsed.ends_with(&format!(
            r#""authorityTransitionId":"t-1","occurredAt":"{T1}"}}"#
        )));
        let without = event.replace(r#""authorityTransitionId":"t-1","#, "");
        assert_eq!(
            parse_audit_event(&Js::parse_json(&without).unwrap())
                .unwrap_err()
                .message(),
            "$.authorityTransitionId: is required for revocation and rotation"
        );
    }
}
