//! `./boss` credential registry, credential use, credential audit, authority transition and
//! store-gate operations: `tests/data/boss_authority_cases.json` (each case's outcome as the
//! TypeScript core 0.2.0 gives it) through `contract::call_json`, plus the snapshot-only inputs
//! (undefined members, accessors, proxies, symbols) JSON cannot carry.

#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::{authority, credential};
use agent_intercom_core::contract::{Js, call_json, call_snapshot};
use vector_filter::{Counts, Filter};

fn cases() -> Js {
    let path = format!(
        "{}/tests/data/boss_authority_cases.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Js::parse_json(&text).unwrap()
}

fn items(value: &Js) -> Vec<&Js> {
    match value {
        Js::Array(a) => a.items.iter().map(|i| i.as_ref().unwrap()).collect(),
        _ => panic!("not an array"),
    }
}

fn text<'a>(value: &'a Js, key: &str) -> &'a str {
    value.get(key).and_then(Js::as_str).unwrap_or("")
}

#[test]
fn typescript_outcomes() {
    let doc = cases();
    let list = items(doc.get("cases").unwrap());
    assert_eq!(
        doc.get("count").and_then(Js::as_num),
        Some(list.len() as f64)
    );
    let filter = Filter::from_env();
    let mut counts = Counts::new(list.len());
    let mut failures = Vec::new();
    for case in list {
        let id = text(case, "id");
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        let args = case.get("args").unwrap();
        let op = format!("boss.{}", text(case, "op"));
        let answer = call_json(&op, &args.to_json().unwrap()).unwrap();
        let answer = Js::parse_json(&answer).unwrap();
        let expect = case.get("expect").unwrap();
        let ok = match text(expect, "kind") {
            "input" => answer.get("value") == items(args).first().copied(),
            "value" => answer.get("value") == expect.get("value"),
            _ => answer.get("error").is_some_and(|e| {
                text(e, "class") == text(expect, "class")
                    && text(e, "message") == text(expect, "message")
                    && e.get("code") == expect.get("code")
            }),
        };
        if !ok {
            failures.push(format!(
                "{id}: expected {}, got {}",
                expect.to_json().unwrap(),
                answer.to_json().unwrap()
            ));
        }
    }
    counts.report("boss_authority_cases.json", &filter);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The first argument of a case, as snapshot text.
fn case_arg(id: &str) -> String {
    let doc = cases();
    let case = items(doc.get("cases").unwrap())
        .into_iter()
        .find(|c| text(c, "id") == id)
        .unwrap_or_else(|| panic!("no case {id}"));
    items(case.get("args").unwrap())[0].to_json().unwrap()
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
    let all = Js::parse_json(&agent_intercom_core::boss::wire::constants_json()).unwrap();
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
