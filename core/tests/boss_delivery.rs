//! `./boss` delivery operations (lifecycle notices, equivalence keys, group assembly, group,
//! claim, ingress and target-ledger records, their store validators): every case of
//! `tests/data/boss_delivery_cases.json` (each case's outcome as the TypeScript core 0.2.0 gives
//! it) through `registry::call_json`, the published golden ids, and the snapshot-only inputs
//! (accessors, holes, proxies, `undefined` members) JSON cannot carry.

#[path = "support/outcome_cases.rs"]
mod outcome_cases;
#[path = "support/vector_filter.rs"]
mod vector_filter;

use agent_intercom_core::boss::delivery;
use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::call_snapshot;

#[test]
fn typescript_outcomes() {
    outcome_cases::run("boss_delivery_cases.json");
}

fn case_arg(id: &str) -> Js {
    let doc = outcome_cases::load("boss_delivery_cases.json");
    let case = outcome_cases::items(doc.get("cases").unwrap())
        .into_iter()
        .find(|c| outcome_cases::text(c, "id") == id)
        .unwrap_or_else(|| panic!("no case {id}"))
        .clone();
    outcome_cases::items(case.get("args").unwrap())[0].clone()
}

/// The golden ids the TypeScript core's own tests assert, recomputed here.
#[test]
fn golden_ids() {
    let key = Js::parse_json(
        r#"{"recipientPrincipalId":"manager","recipientBindingEpoch":1,
        "sourceAuthorityId":{"kind":"worker_store","workerStoreId":"authority",
        "journalGeneration":1},
        "sourceEventId":"event-1","workerId":"worker-1","workerGeneration":1,
        "transitionId":"transition-1","transitionVersion":1}"#,
    )
    .unwrap();
    assert_eq!(
        delivery::delivery_group_id(&key).unwrap(),
        "4b406e560e6aaf2c44cbe13fd042f241edb977eab580d530286ac521ba6bcada"
    );
    let logical = Js::parse_json(
        r#"{"workerId":"worker-a","workerGeneration":6,"transitionId":"turn-settled-9",
        "transitionVersion":1,"kind":"turn_settled","assignmentId":"assignment-1"}"#,
    )
    .unwrap();
    assert_eq!(
        delivery::lifecycle_notice_id(&logical).unwrap(),
        "62a55d55fc11518e0ac6eedc485a9224493664f1e47022cb5ed2708ad68401cb"
    );
}

/// The checks other modules reuse agree with the operations.
#[test]
fn public_checks() {
    assert!(delivery::check_lifecycle_notice(&case_arg("notice/ok")).is_ok());
    assert!(delivery::check_group_record(&case_arg("group/ok")).is_ok());
    assert!(delivery::check_claim_record(&case_arg("claim/released")).is_ok());
    assert!(delivery::check_ingress_envelope(&case_arg("ingress/acknowledge/ok")).is_ok());
    assert!(delivery::check_target_ledger_result(&case_arg("ledger/inserted")).is_ok());
    assert!(delivery::check_equivalence_key(&case_arg("key/scheduler"), "$").is_ok());
    let group = Js::parse_json(&delivery::assemble_group_json(&case_arg("assemble/ok")).unwrap());
    assert!(delivery::check_group_record(&group.unwrap()).is_ok());
    assert_eq!(
        delivery::effective_intent(&["status_only", "follow_up"]),
        "follow_up"
    );
}

fn snapshot(op: &str, args: &str) -> String {
    call_snapshot(op, args).unwrap()
}

/// `arg` with `member` (a snapshot text) in place of its member `key`.
fn with_member(arg: &Js, key: &str, member: &str) -> String {
    let json = arg.to_json().unwrap();
    let value = arg.get(key).unwrap().to_json().unwrap();
    let needle = format!("\"{key}\":{value}");
    assert!(json.contains(&needle), "{key}");
    format!(
        "[{}]",
        json.replacen(&needle, &format!("\"{key}\":{member}"), 1)
    )
}

#[test]
fn snapshot_only_inputs() {
    let key = case_arg("key/controller");
    // An accessor is refused where it is, without being read; a proxy is never entered.
    let answer = snapshot(
        "boss.parseDeliveryEquivalenceKey",
        &with_member(&key, "sourceAuthorityId", "h"),
    );
    assert!(
        answer.contains("$.sourceAuthorityId: must be an enumerable data property"),
        "{answer}"
    );
    let answer = snapshot(
        "boss.parseDeliveryEquivalenceKey",
        &with_member(
            &key,
            "sourceAuthorityId",
            r#"{"kind":"controller","bossRunId":h,"controllerGeneration":3}"#,
        ),
    );
    assert!(
        answer.contains("$.sourceAuthorityId.bossRunId: must be an enumerable data property"),
        "{answer}"
    );
    for op in [
        "boss.parseDeliveryEquivalenceKey",
        "boss.parseLifecycleNotice",
        "boss.parseDeliveryClaimRecord",
    ] {
        let answer = snapshot(op, "[p]");
        assert!(
            answer.contains("$: must be a plain object"),
            "{op}: {answer}"
        );
    }
    // Intents: the array's shape is checked before its elements, at `intents`.
    for (intents, message) in [
        ("[_]", "intents[0]: sparse array holes are not supported"),
        (
            "[h,\"wake\"]",
            "intents[0]: must be an enumerable data property",
        ),
        (
            "[!\"wake\"]",
            "intents: array must not have symbol or non-index properties",
        ),
        ("p", "intents: must be an array"),
    ] {
        let answer = snapshot("boss.effectiveDeliveryIntent", &format!("[{intents}]"));
        assert!(answer.contains(message), "{intents}: {answer}");
    }
    // An optional member that is present but undefined passes its reader, then the hash
    // refuses it (without the canonical functions' code).
    let answer = snapshot("boss.deliveryGroupId", &with_member(&key, "turnId", "u"));
    assert!(
        answer.contains(r#""message":"$.turnId: undefined is not a canonical value""#),
        "{answer}"
    );
    assert!(!answer.contains("\"code\""), "{answer}");
    assert_eq!(
        snapshot(
            "boss.parseDeliveryEquivalenceKey",
            &with_member(&key, "turnId", "u")
        ),
        "i0"
    );
    // A store record whose version is an accessor is corrupt (refused as a record member), its
    // getter never run.
    let notice = case_arg("notice/ok");
    let answer = snapshot(
        "boss.validateLifecycleNoticeStore",
        &with_member(&notice, "version", "h"),
    );
    assert!(
        answer.contains(r#""message":"$.version: must be an enumerable data property""#),
        "{answer}"
    );
    let answer = snapshot(
        "boss.validateLifecycleNoticeStore",
        &with_member(&notice, "version", "u"),
    );
    assert!(
        answer.contains(r#""message":"store version is required""#),
        "{answer}"
    );
    // A version `String()` cannot convert is that TypeError, as in TypeScript.
    for (version, message) in [
        ("{#}", "Cannot convert object to primitive value"),
        ("[1,[s]]", "Cannot convert a Symbol value to a string"),
    ] {
        let answer = snapshot(
            "boss.parseTargetLedgerLookupResult",
            &with_member(&case_arg("ledger/inserted"), "version", version),
        );
        assert!(
            answer.starts_with(r#"e{"class":"TypeError""#) && answer.contains(message),
            "{version}: {answer}"
        );
    }
    // A record with a NaN version: observedVersion has no JSON form here (Node gives NaN).
    let answer = snapshot(
        "boss.validateTargetLedgerStore",
        &with_member(&case_arg("ledger/inserted"), "version", "N"),
    );
    assert!(answer.contains(r#""observedVersion":null"#), "{answer}");
}
