//! `./boss` credential registry, credential use, credential audit, authority transition and
//! store-gate operations: `tests/data/boss_authority_cases.json` (each case's outcome as the
//! TypeScript core 0.2.0 gives it) through `registry::call_json`, plus the snapshot-only inputs
//! (undefined members, accessors, proxies, symbols) JSON cannot carry.

#[path = "support/outcome_cases.rs"]
mod outcome_cases;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::{authority, credential};
use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::call_snapshot;

#[test]
fn typescript_outcomes() {
    outcome_cases::run("boss_authority_cases.json");
}

/// The first argument of a case, as snapshot text.
fn case_arg(id: &str) -> String {
    let doc = outcome_cases::load("boss_authority_cases.json");
    let case = outcome_cases::items(doc.get("cases").unwrap())
        .into_iter()
        .find(|c| outcome_cases::text(c, "id") == id)
        .unwrap_or_else(|| panic!("no case {id}"));
    outcome_cases::items(case.get("args").unwrap())[0]
        .to_json()
        .unwrap()
}

fn snapshot(op: &str, args: &str) -> String {
    call_snapshot(op, args).unwrap()
}

#[test]
fn undefined_members_are_absent_values() {
    // An optional member present as undefined is allowed and reads as absent.
    let event = case_arg("event/subscriber").replacen('{', r#"{"bossRunId":u,"#, 1);
    assert_eq!(
        snapshot("boss.parseAuthorityTransitionEvent", &format!("[{event}]")),
        "i0"
    );
    let record = case_arg("transition/prepared").replacen('{', r#"{"committedAt":u,"#, 1);
    assert_eq!(
        snapshot(
            "boss.parseAuthorityTransitionRecord",
            &format!("[{record}]")
        ),
        "i0"
    );
    // A required member present as undefined passes the key check and fails its reader.
    let event = case_arg("event/ok").replace(r#""state":"committed""#, r#""state":u"#);
    assert!(
        snapshot("boss.parseAuthorityTransitionEvent", &format!("[{event}]"))
            .contains("$.state: authority events are emitted only for committed transitions")
    );
    // An epoch record of undefined dimensions only is empty.
    let record = case_arg("transition/prepared").replace(
        r#""prior":{"participantBindingEpoch":4}"#,
        r#""prior":{"participantBindingEpoch":u}"#,
    );
    assert!(
        snapshot(
            "boss.parseAuthorityTransitionRecord",
            &format!("[{record}]")
        )
        .contains("$.prior: must contain at least one generation or epoch")
    );
    // Revocation needs a transition id, even when the key is there.
    let audit = case_arg("audit/rotate").replace(
        r#""authorityTransitionId":"t-1""#,
        r#""authorityTransitionId":u"#,
    );
    assert!(
        snapshot("boss.parseBossCredentialAuditEvent", &format!("[{audit}]"))
            .contains("is required for revocation and rotation")
    );
    // No arguments at all.
    assert!(
        snapshot("boss.authorizeBossCredentialUse", "[]").contains(r#""path":"$""#),
        "refused at $"
    );
}

#[test]
fn accessors_and_proxies_are_refused_unread() {
    let record = case_arg("transition/prepared").replace(r#""state":"prepared""#, r#""state":h"#);
    assert!(
        snapshot(
            "boss.parseAuthorityTransitionRecord",
            &format!("[{record}]")
        )
        .contains("$.state: must be an enumerable data property")
    );
    let record = case_arg("transition/prepared").replace(
        r#""target":{"bossRunId":"run-a""#,
        r#""target":{"bossRunId":h"#,
    );
    assert!(
        snapshot(
            "boss.parseAuthorityTransitionRecord",
            &format!("[{record}]")
        )
        .contains("$.target.bossRunId: must be an enumerable data property")
    );
    for op in [
        "boss.parseBossCredentialDigestRecord",
        "boss.parseAuthorityTransitionRequest",
        "boss.parseBossCredentialAuditEvent",
    ] {
        assert!(
            snapshot(op, "[p]").contains("$: must be a plain object"),
            "{op}"
        );
    }
    // A null-prototype payload is not a plain object.
    let request = case_arg("request/query").replace(r#""payload":{}"#, r#""payload":{#}"#);
    assert!(
        snapshot(
            "boss.parseAuthorityTransitionRequest",
            &format!("[{request}]")
        )
        .contains("$.payload: must be a plain object")
    );
}

#[test]
fn store_gates_never_fail() {
    for (op, args) in [
        ("boss.validateAuthorityEventStore", "[p]"),
        ("boss.validateAuthorityEventStore", "[]"),
        (
            "boss.validateAuthorityTransitionStore",
            r#"[{"version":h}]"#,
        ),
        (
            "boss.validateBossCredentialDigestStore",
            r#"[{"version":s}]"#,
        ),
        (
            "boss.validateBossParticipantBindingStore",
            r#"[{!"version":1}]"#,
        ),
    ] {
        let answer = snapshot(op, args);
        assert!(
            answer.starts_with(r#"j{"ok":false"#),
            "{op} {args}: {answer}"
        );
    }
    // The version is an accessor: corrupt, and it is not read.
    assert!(
        snapshot(
            "boss.validateAuthorityTransitionStore",
            r#"[{"version":h}]"#
        )
        .contains(
            r#""path":"$.version","message":"$.version: must be an enumerable data property""#
        )
    );
    // A symbol version cannot be written as JSON: `null` here, the caller's value in Node.
    assert!(
        snapshot(
            "boss.validateBossCredentialDigestStore",
            r#"[{"version":s}]"#
        )
        .contains(r#""observedVersion":null"#)
    );
}

#[test]
fn constants() {
    assert_eq!(credential::BOSS_CREDENTIAL_STATES.len(), 4);
    assert_eq!(credential::BOSS_CREDENTIAL_AUDIT_OPERATIONS.len(), 6);
    assert_eq!(authority::AUTHORITY_TRANSITION_OPERATIONS.len(), 11);
    assert_eq!(authority::AUTHORITY_TRANSITION_STATES.len(), 3);
    assert_eq!(authority::AUTHORITY_REQUEST_OPERATIONS.len(), 4);
    let all = Js::parse_json(&agent_intercom_core::boss::constants::constants_json()).unwrap();
    for key in [
        "BOSS_CREDENTIAL_STATES",
        "BOSS_CREDENTIAL_AUDIT_OPERATIONS",
        "AUTHORITY_TRANSITION_OPERATIONS",
        "AUTHORITY_TRANSITION_STATES",
        "AUTHORITY_REQUEST_OPERATIONS",
    ] {
        assert!(matches!(all.get(key), Some(Js::Array(_))), "{key}");
    }
    for operation in authority::AUTHORITY_TRANSITION_OPERATIONS {
        assert!(
            authority::epoch_field(operation).ends_with("Epoch") || operation.contains("takeover")
        );
    }
}
