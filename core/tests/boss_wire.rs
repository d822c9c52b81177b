//! `./boss` wire, service, participant-state and worker-identity operations: the computed
//! hashes against the published values, and `tests/data/boss_wire_cases.json` (each case's
//! outcome as the TypeScript core 0.2.0 gives it) through `registry::call_json`, plus the
//! snapshot-only inputs (accessors, holes, proxies) JSON cannot carry.

#[path = "support/outcome_cases.rs"]
mod outcome_cases;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::feature::semantics;
use agent_intercom_core::boss::{constants, participant, service, wire, worker};
use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::{call_json, call_snapshot};

/// Inventory §1.3: the values the TypeScript core 0.2.0 publishes (measured there).
const PUBLISHED_FEATURE_SEMANTICS_HASH: &str =
    "8943eb60d29afa5264322b5cc7df3de245b01b1cf48a8cbf9cfb6188b02fcfa9";
const PUBLISHED_PROTOCOL_FEATURE_CONTRACT_HASH: &str =
    "dae30efe2c48d2de0fe72a7ebdfd107d3feaefc180d42056ba05df6088a94364";
const PUBLISHED_CAPABILITY_FEATURE_DIGEST: &str =
    "239bee8bb64cc8c149d49ac00c7396f33f375a89a1d6dea6bd86ff840d551a59";
const PUBLISHED_EMPTY_FEATURE_SET_HASH: &str =
    "0423394d55ed9769cfd7d71a0177a094d6a3962175885ec84a1ce5d77938ba70";
const PUBLISHED_BOSS_FEATURE_SET_HASH: &str =
    "cebf86aee47c13a0913fb0228817319bebaf06720ba732fb9833bde3d9dbc7cc";

#[test]
fn computed_hashes_are_the_published_ones() {
    assert_eq!(
        semantics::feature_semantics_hash(),
        PUBLISHED_FEATURE_SEMANTICS_HASH
    );
    assert_eq!(
        semantics::protocol_feature_contract_hash(),
        PUBLISHED_PROTOCOL_FEATURE_CONTRACT_HASH
    );
    assert_eq!(
        semantics::capability_feature_digest(),
        PUBLISHED_CAPABILITY_FEATURE_DIGEST
    );
    assert_eq!(
        service::broker_feature_set_hash(&Js::array(vec![])).unwrap(),
        PUBLISHED_EMPTY_FEATURE_SET_HASH
    );
    let boss = Js::parse_json(&format!(
        r#"[{{"version":"intercom.broker-feature.v1","feature":"boss-run-v1","featureVersion":1,
        "semanticsHash":"{}","controlEnvelopeVersion":1,"capabilityDigest":"{}"}}]"#,
        PUBLISHED_FEATURE_SEMANTICS_HASH, PUBLISHED_CAPABILITY_FEATURE_DIGEST
    ))
    .unwrap();
    assert_eq!(
        service::broker_feature_set_hash(&boss).unwrap(),
        PUBLISHED_BOSS_FEATURE_SET_HASH
    );
    // The corpus has 28 members and embeds the vector hashes (the participant-state ones
    // computed from their vector files).
    let corpus = Js::parse_json(&semantics::feature_semantics_corpus_json()).unwrap();
    let Js::Object(members) = &corpus else {
        panic!("corpus is an object")
    };
    assert_eq!(members.members.len(), 28);
    assert_eq!(
        corpus
            .get("participantStateVectorsHash")
            .and_then(Js::as_str),
        Some("0da19269f0c2befd9b22b8d146d6bd30450f3f0d64598148fd9317f36a5fc920")
    );
}

#[test]
fn constants_are_one_object() {
    let constants = Js::parse_json(&constants::constants_json()).unwrap();
    let text = |k: &str| constants.get(k).and_then(Js::as_str).map(str::to_string);
    assert_eq!(text("BOSS_RUN_FEATURE").as_deref(), Some("boss-run-v1"));
    assert_eq!(
        text("BOSS_RUN_FEATURE_SEMANTICS_HASH").as_deref(),
        Some(PUBLISHED_FEATURE_SEMANTICS_HASH)
    );
    assert_eq!(
        text("BROKER_PROTECTED_PROVIDER_ROOT").as_deref(),
        Some(service::BROKER_PROTECTED_PROVIDER_ROOT)
    );
    assert_eq!(
        text("WORKER_IDENTITY_VERSION").as_deref(),
        Some(worker::WORKER_IDENTITY_VERSION)
    );
    let contract = constants.get("BOSS_RUN_FEATURE_CONTRACT").unwrap();
    assert_eq!(
        contract.get("semanticsHash").and_then(Js::as_str),
        Some(PUBLISHED_FEATURE_SEMANTICS_HASH)
    );
    let Some(Js::Array(states)) = constants.get("PARTICIPANT_STATES") else {
        panic!("PARTICIPANT_STATES is an array")
    };
    assert_eq!(states.items.len(), participant::PARTICIPANT_STATES.len());
    for key in [
        "INTERCOM_BASE_PROTOCOL_VERSION",
        "BOSS_RUN_FEATURE_VERSION",
        "BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION",
        "BOSS_CONTROL_ENVELOPE_VERSION",
        "BROKER_FEATURE_ATTESTATION_VERSION",
        "BOSS_PARTICIPANT_ROLES",
        "BOSS_COMMUNICATION_PROFILES",
        "BOSS_BINDING_STATES",
        "BOSS_CREDENTIAL_KINDS",
        "BOSS_CONTROL_TYPES",
        "TERMINAL_PARTICIPANT_STATES",
        "BROKER_PEER_EXPECTATION_VERSION",
        "BOSS_PARTICIPANT_BINDING_VERSION",
        "BOSS_PARTICIPANT_CREDENTIAL_VERSION",
        "AUTHORITY_EVENT_VERSION",
        "AUTHORITY_REQUEST_VERSION",
        "AUTHORITY_TRANSITION_VERSION",
        "BOSS_RUN_AUTHORITY_IDENTITY_VERSION",
        "BROKER_IDENTITY_RECORD_VERSION",
        "BROKER_PROVIDER_ATTESTATION_VERSION",
        "PARTICIPANT_STATE_TRANSITION_VECTORS_HASH",
        "SUPERVISION_VECTORS_HASH",
        "FULL_WORKER_STORE_MIGRATION_VECTORS_HASH",
    ] {
        assert!(constants.get(key).is_some(), "{key}");
    }
}

#[test]
fn typescript_outcomes() {
    outcome_cases::run("boss_wire_cases.json");
}

fn snapshot(op: &str, args: &str) -> String {
    call_snapshot(op, args).unwrap()
}

#[test]
fn snapshot_only_inputs() {
    // An accessor is refused without being read; a proxy is never entered.
    let answer = snapshot("boss.parseBossRunFeatureContract", r#"[{"feature":h}]"#);
    assert!(
        answer.contains("$.feature: must be an enumerable data property"),
        "{answer}"
    );
    let answer = snapshot("boss.parseBossControlEnvelope", "[p]");
    assert!(answer.contains("$: must be a plain object"), "{answer}");
    // A payload hole, an accessor in a payload, a non-plain payload.
    let envelope = |payload: &str| {
        format!(
            r#"[{{"type":"boss.worker.health","version":1,"messageId":"m","bossRunId":"r",
            "participantId":"p","bindingEpoch":1,"idempotencyKey":"k","payload":{payload}}}]"#
        )
    };
    for (payload, message) in [
        ("[1,_]", "$[1]: sparse array holes are not supported"),
        (r#"{"a":h}"#, "$.a: must be an enumerable data property"),
        (
            "{@}",
            "$: value must be a JSON primitive, array, or plain object",
        ),
        (r#"{"a":u}"#, "$.a: undefined is not a canonical value"),
        (
            "-0",
            "$: number must be a safe integer and must not be negative zero",
        ),
        (r#"{"b":1,"a":b"1"}"#, "$.a: value must be a JSON primitive"),
    ] {
        let answer = snapshot("boss.parseBossControlEnvelope", &envelope(payload));
        assert!(answer.contains(message), "{payload}: {answer}");
    }
    assert_eq!(
        snapshot(
            "boss.parseBossControlEnvelope",
            &envelope(r#"{"x":[null,true]}"#)
        ),
        "i0"
    );
    // Feature arrays: a hole is an advertisement error wrapping the reader's message.
    let answer = snapshot("boss.brokerFeatureSetHash", "[[_]]");
    assert!(
        answer.contains("BrokerCapabilityAdvertisementError"),
        "{answer}"
    );
    assert!(
        answer.contains("$.features: $.features[0]: sparse array holes are not supported"),
        "{answer}"
    );
    // The environment: an accessor on a supported key is refused, on an unrelated key ignored;
    // a symbol-keyed environment is fine.
    let answer = snapshot(
        "boss.workerIdentityFromEnvironment",
        r#"[{!"HOME":h,"AGENT_INTERCOM_WORKER_ID":"w","AGENT_INTERCOM_WORKER_INCARNATION_ID":"i",
        "AGENT_INTERCOM_WORKER_GENERATION":"1"}]"#,
    );
    assert!(answer.starts_with("j{"), "{answer}");
    let answer = snapshot(
        "boss.workerIdentityFromEnvironment",
        r#"[{"AGENT_INTERCOM_WORKER_ID":h}]"#,
    );
    assert!(
        answer.contains("$.AGENT_INTERCOM_WORKER_ID: must be an enumerable data property"),
        "{answer}"
    );
    // evaluateBrokerCompatibility never fails, whatever it is given.
    for args in [
        "[]",
        "[p,p,p]",
        "[u,u]",
        r#"[{"clientKind":"ordinary"},[],h]"#,
    ] {
        let answer = snapshot("boss.evaluateBrokerCompatibility", args);
        assert!(
            answer.starts_with(r#"j{"compatible":false"#),
            "{args}: {answer}"
        );
    }
    // isTerminalParticipantState does no validation.
    assert_eq!(snapshot("boss.isTerminalParticipantState", "[p]"), "jfalse");
}

/// An identity whose signature is well-formed but wrong is refused at the Ed25519 step.
#[test]
fn a_boss_request_with_a_forged_identity_signature_is_refused() {
    let doc = outcome_cases::load("boss_wire_cases.json");
    let case = outcome_cases::items(doc.get("cases").unwrap())
        .into_iter()
        .find(|c| outcome_cases::text(c, "id") == "eval/boss-signature-shape")
        .unwrap()
        .clone();
    let mut args = outcome_cases::items(case.get("args").unwrap())
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    if let Js::Object(identity) = &mut args[2] {
        for (k, v) in &mut identity.members {
            if k.text == "signature" {
                *v = Js::str(format!("{}==", "A".repeat(86)));
            }
        }
    }
    let answer = call_json(
        "boss.evaluateBrokerCompatibility",
        &Js::array(args).to_json().unwrap(),
    )
    .unwrap();
    assert_eq!(
        answer,
        r#"{"ok":true,"value":{"compatible":false,"code":"IDENTITY_SIGNATURE_INVALID"}}"#
    );
}

/// A trust-store entry the snapshot shows as a class instance stands for a `KeyObject` only
/// when the Node module's table names it (with its SPKI DER); the request then comes back with
/// `null` in its place, where the Node module puts the caller's own object.
#[test]
fn a_key_object_trust_store_entry_comes_from_the_node_table() {
    let doc = outcome_cases::load("boss_wire_cases.json");
    let case = outcome_cases::items(doc.get("cases").unwrap())
        .into_iter()
        .find(|c| outcome_cases::text(c, "id") == "request/boss")
        .unwrap()
        .clone();
    let request = outcome_cases::items(case.get("args").unwrap())[0]
        .to_json()
        .unwrap();
    let Some(Js::Str(pem)) = outcome_cases::items(case.get("args").unwrap())[0]
        .get("identityVerification")
        .and_then(|v| v.get("trustedIdentityKeys"))
        .and_then(|k| k.get("ik"))
        .cloned()
    else {
        panic!("the case has a PEM identity key")
    };
    let pem_json = Js::Str(pem.clone()).to_json().unwrap();
    let with_key_object = request.replacen(&format!("\"ik\":{pem_json}"), "\"ik\":{@}", 1);
    let answer = snapshot(
        "boss.parseBrokerCompatibilityRequest",
        &format!("[{with_key_object}]"),
    );
    assert!(
        answer.contains(
            "$.identityVerification.trustedIdentityKeys.ik: must be a public KeyObject or \
             encoded public key"
        ),
        "{answer}"
    );
    let body: String = pem
        .text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let table =
        format!(r#"[{{"field":"trustedIdentityKeys","id":"ik","type":"public","spki":"{body}"}}]"#);
    let answer = snapshot(
        "boss.parseBrokerCompatibilityRequest",
        &format!("[{with_key_object},{table}]"),
    );
    assert!(
        answer.contains(r#""trustedIdentityKeys":{"ik":null}"#),
        "{answer}"
    );
    let private = table.replace(r#""type":"public""#, r#""type":"private""#);
    let answer = snapshot(
        "boss.parseBrokerCompatibilityRequest",
        &format!("[{with_key_object},{private}]"),
    );
    assert!(answer.contains("must be a public KeyObject"), "{answer}");
}

/// `session.boss` as the Pi adapter's broker reads it (`parseBossParticipantRegistrationMetadata`):
/// the one valid request, then each way to miss it, with the path the refusal names.
#[test]
fn participant_registration_requests() {
    let doc = outcome_cases::load("boss_wire_cases.json");
    let case_arg = |id: &str| {
        let case = outcome_cases::items(doc.get("cases").unwrap())
            .into_iter()
            .find(|c| outcome_cases::text(c, "id") == id)
            .unwrap_or_else(|| panic!("no case {id}"));
        outcome_cases::items(case.get("args").unwrap())[0]
            .to_json()
            .unwrap()
    };
    let credential = case_arg("credential/ok");
    let contract = semantics::feature_contract_json();
    let digest = semantics::capability_feature_digest();
    let request = |contract: &str, digest: &str, credential: &str| {
        let text = format!(
            r#"{{"featureContract":{contract},"capabilityDigest":"{digest}","credential":{}}}"#,
            credential
        );
        Js::parse_json(&text).unwrap()
    };
    let path = |v: &Js| match semantics::check_participant_registration(v) {
        Ok(()) => "ok".to_string(),
        Err(f) => f.path.unwrap_or_default(),
    };
    assert_eq!(path(&request(&contract, digest, &credential)), "ok");
    let other_digest = "0".repeat(64);
    let upper_digest = digest.to_uppercase();
    let other_contract = contract.replace(semantics::feature_semantics_hash(), &other_digest);
    let other_namespace = credential.replace("\"boss-run-v1\"", "\"boss-run-v2\"");
    assert_ne!(other_namespace, credential);
    for (v, at) in [
        (request(&contract, &other_digest, &credential), "$.boss"),
        (
            request(&contract, &upper_digest, &credential),
            "$.boss.capabilityDigest",
        ),
        (
            request(&other_contract, digest, &credential),
            "$.semanticsHash",
        ),
        (request(&contract, digest, &other_namespace), "$.namespace"),
        (request(&contract, digest, "{}"), "$.version"),
        (Js::parse_json("{}").unwrap(), "$.boss.featureContract"),
        (Js::parse_json("[]").unwrap(), "$.boss"),
        (Js::parse_json("null").unwrap(), "$.boss"),
    ] {
        assert_eq!(path(&v), at, "{}", v.to_json().unwrap());
    }
    let mut extra = request(&contract, digest, &credential);
    if let Js::Object(o) = &mut extra {
        o.members.push((
            agent_intercom_core::contract::JsStr {
                text: "extra".into(),
                lone: None,
            },
            Js::Num(1.0),
        ));
    }
    assert_eq!(path(&extra), "$.boss.extra");
}

/// The control envelope check answers the envelope's message id, which the broker compares
/// with the transport message's.
#[test]
fn control_envelope_message_id() {
    let doc = outcome_cases::load("boss_wire_cases.json");
    let list = outcome_cases::items(doc.get("cases").unwrap());
    let arg = |id: &str| {
        let case = list
            .iter()
            .find(|c| outcome_cases::text(c, "id") == id)
            .unwrap();
        outcome_cases::items(case.get("args").unwrap())[0].clone()
    };
    assert_eq!(wire::check_control_envelope(&arg("control/ok")), Ok("m-1"));
    assert_eq!(
        wire::check_control_envelope(&arg("control/optional")),
        Ok("m-1")
    );
    let refused = Js::parse_json(r#"{"type":"boss.run","version":1}"#).unwrap();
    assert!(wire::check_control_envelope(&refused).is_err());
}
