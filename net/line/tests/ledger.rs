//! The capacity ledger on real SQLite files (docs/line.md §1.4). Named by requirement (L-NN).

mod common;

use agent_intercom_line::fault::Faults;
use agent_intercom_line::ledger::{self, Authority, Charge, Operation};
use agent_intercom_line::{Code, NETWORK_ALLOWANCE, host, schema};
use common::*;
use serde_json::json;

const NET: i64 = NETWORK_ALLOWANCE as i64;

fn charge_of<'a>(task: &'a str, op: Operation, bytes: u64) -> Charge<'a> {
    Charge {
        task_id: task,
        operation: op,
        application_bytes: bytes,
        peer_id: PEER,
        purpose: "public-summary",
        task_schema: "public-text@1",
        request: None,
    }
}

fn all_four(db: &std::path::Path, a: &Authority) -> [(i64, i64, i64, i64); 4] {
    [
        used(db, "host", &a.host_key),
        used(db, "purpose", "public-summary"),
        used(db, "peer", PEER),
        used(db, "task", &format!("{PEER}/public-text@1")),
    ]
}

#[test]
fn r30_one_exchange_charges_all_four_scopes_in_one_transaction() {
    let tmp = Tmp::new("r30");
    let (db, p) = established(&tmp, &policy(1, |_| {}));
    let a = authority(&db, &p);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let x = ledger::charge(
        &mut conn,
        &a,
        &charge_of("t1", Operation::Submit, 1234),
        &Faults::none(),
    )
    .unwrap();
    assert_eq!(x.seq, 1);
    for row in all_four(&db, &a) {
        assert_eq!(row, (1, 1234, NET, 0));
    }
    assert_eq!(count(&db, "line_exchange"), 1);
    assert!(ledger::mismatches(&conn).unwrap().is_empty());
    // The exchange row carries the charge and no outcome yet.
    let (uses, app, net, outcome): (i64, i64, i64, Option<String>) = conn
        .query_row(
            "SELECT charged_uses, charged_app, charged_net, outcome FROM line_exchange",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((uses, app, net, outcome), (1, 1234, NET, None));
}

#[test]
fn r31_every_exchange_is_charged_separately() {
    let tmp = Tmp::new("r31-sep");
    let (db, p) = established(&tmp, &policy(1, |_| {}));
    let a = authority(&db, &p);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::none();
    ledger::charge(&mut conn, &a, &charge_of("t1", Operation::Submit, 500), &f).unwrap();
    for i in 0..3 {
        let x = ledger::charge(&mut conn, &a, &charge_of("t1", Operation::Poll, 40), &f).unwrap();
        assert_eq!(x.seq, i + 2);
    }
    for row in all_four(&db, &a) {
        assert_eq!(row, (4, 620, 4 * NET, 0), "submit + 3 polls = 4 uses");
    }
    assert!(ledger::mismatches(&conn).unwrap().is_empty());
}

#[test]
fn r31_charging_is_all_or_nothing() {
    let tmp = Tmp::new("r31-aon");
    let (db, p) = established(&tmp, &policy(1, |p| p["limits"]["peer"]["uses"] = json!(2)));
    let a = authority(&db, &p);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::none();
    for _ in 0..2 {
        ledger::charge(&mut conn, &a, &charge_of("t1", Operation::Poll, 10), &f).unwrap();
    }
    let before = all_four(&db, &a);
    let e = ledger::charge(&mut conn, &a, &charge_of("t1", Operation::Poll, 10), &f).unwrap_err();
    assert_eq!(e.code, Code::CapacityExhausted);
    assert_eq!(e.to_json()["scope"], json!({"kind": "peer", "key": PEER}));
    assert_eq!(e.to_json()["exhausted"], json!("uses"));
    assert_eq!(all_four(&db, &a), before, "the other scopes are unchanged");
    assert_eq!(count(&db, "line_exchange"), 2);
}

#[test]
fn r29_each_scope_kind_and_counter_can_be_exhausted() {
    for (kind, member, value, bytes) in [
        ("host", "uses", 1, 0),
        ("purpose", "uses", 1, 0),
        ("peer", "uses", 1, 0),
        ("task", "uses", 1, 0),
        ("host", "application_bytes", 100, 60),
        ("task", "application_bytes", 100, 60),
        ("purpose", "network_bytes", NET + 1, 0),
        ("peer", "network_bytes", NET + 1, 0),
    ] {
        let tmp = Tmp::new(&format!("r29-{kind}-{member}"));
        let (db, p) = established(
            &tmp,
            &policy(1, |p| p["limits"][kind][member] = json!(value)),
        );
        let a = authority(&db, &p);
        task(&db, "t1", PEER, 1);
        let mut conn = schema::open_at_revision(&db).unwrap();
        let f = Faults::none();
        ledger::charge(&mut conn, &a, &charge_of("t1", Operation::Poll, bytes), &f).unwrap();
        let e = ledger::charge(&mut conn, &a, &charge_of("t1", Operation::Poll, bytes), &f)
            .unwrap_err();
        assert_eq!(e.code, Code::CapacityExhausted, "{kind}.{member}");
        let json = e.to_json();
        assert_eq!(json["scope"]["kind"], json!(kind));
        assert_eq!(json["exhausted"], json!(member));
        for row in all_four(&db, &a) {
            assert_eq!(
                row,
                (1, bytes as i64, NET, 0),
                "{kind}.{member}: one charge stands"
            );
        }
    }
}

#[test]
fn r30_a_body_larger_than_the_remaining_bytes_is_refused_before_contact() {
    let tmp = Tmp::new("r30-big");
    let (db, p) = established(&tmp, &policy(1, |_| {}));
    let a = authority(&db, &p);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let e = ledger::charge(
        &mut conn,
        &a,
        &charge_of("t1", Operation::Submit, 100_001),
        &Faults::none(),
    )
    .unwrap_err();
    assert_eq!(e.code, Code::CapacityExhausted);
    assert_eq!(e.to_json()["scope"]["kind"], json!("task"));
    assert_eq!(count(&db, "line_exchange"), 0);
}

#[test]
fn r32_accepted_bytes_are_recorded_apart_and_never_refund() {
    let tmp = Tmp::new("r32");
    let (db, p) = established(&tmp, &policy(1, |_| {}));
    let a = authority(&db, &p);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let x = ledger::charge(
        &mut conn,
        &a,
        &charge_of("t1", Operation::Poll, 77),
        &Faults::none(),
    )
    .unwrap();
    ledger::record_accepted(&mut conn, &x.exchange_id, 2048).unwrap();
    for row in all_four(&db, &a) {
        assert_eq!(
            row,
            (1, 77, NET, 2048),
            "the reservation stands beside what was used"
        );
    }
    // Once only, and never more than the allowance.
    assert!(ledger::record_accepted(&mut conn, &x.exchange_id, 1).is_err());
    let y = ledger::charge(
        &mut conn,
        &a,
        &charge_of("t1", Operation::Poll, 0),
        &Faults::none(),
    )
    .unwrap();
    let e = ledger::record_accepted(&mut conn, &y.exchange_id, NETWORK_ALLOWANCE + 1).unwrap_err();
    assert_eq!(e.code, Code::CapacityExhausted);
    assert_eq!(
        ledger::record_accepted(&mut conn, "no-such", 1)
            .unwrap_err()
            .code,
        Code::TaskNotFound
    );
    assert!(ledger::mismatches(&conn).unwrap().is_empty());
    // Nothing can lower a counter, even by hand.
    assert!(
        conn.execute("UPDATE line_capacity SET reserved_net = 0", [])
            .is_err()
    );
    assert!(
        conn.execute("UPDATE line_exchange SET accepted_net = 0", [])
            .is_err()
    );
}

#[test]
fn r33_capacity_survives_relabelling_new_task_ids_and_new_credentials() {
    let tmp = Tmp::new("r33");
    let (db, p1) = established(&tmp, &policy(1, |_| {}));
    host::set_operator_credential(&db, &credential(), 1).unwrap();
    let a1 = authority(&db, &p1);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::none();
    ledger::charge(&mut conn, &a1, &charge_of("t1", Operation::Submit, 300), &f).unwrap();
    let before = all_four(&db, &a1);
    // A new generation: other categories, endpoints and actions, the same ceilings. A new
    // operator credential. A new task id. None of them resets anything.
    let p2 = parsed(&policy(2, |p| {
        p["categories"] = json!(["public-task", "renamed"]);
        p["endpoints"] = json!(["https://peer.example:8443/v2"]);
        p["actions"] = json!(["poll"]);
    }));
    host::establish_policy(&db, &p2, 2).unwrap();
    let other = agent_intercom_line::secrets::credential_of(&[b'z'; 40]).unwrap();
    host::set_operator_credential(&db, &other, 3).unwrap();
    let a2 = authority(&db, &p2);
    assert_eq!(
        a2.host_key, a1.host_key,
        "the installation is the host scope, not a label"
    );
    assert_eq!(all_four(&db, &a2), before);
    task(&db, "t2", PEER, 2);
    ledger::charge(&mut conn, &a2, &charge_of("t2", Operation::Poll, 5), &f).unwrap();
    for (row, was) in all_four(&db, &a2).into_iter().zip(before) {
        assert_eq!(row, (was.0 + 1, was.1 + 5, was.2 + NET, 0));
    }
    assert!(ledger::mismatches(&conn).unwrap().is_empty());
}

#[test]
fn r26_a_charge_under_a_stale_generation_is_refused_inside_its_transaction() {
    let tmp = Tmp::new("r26-charge");
    let (db, p1) = established(&tmp, &policy(1, |_| {}));
    let a1 = authority(&db, &p1);
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    host::establish_policy(&db, &parsed(&policy(2, |_| {})), 2).unwrap();
    let e = ledger::charge(
        &mut conn,
        &a1,
        &charge_of("t1", Operation::Submit, 10),
        &Faults::none(),
    )
    .unwrap_err();
    assert_eq!(e.code, Code::StaleGeneration);
    assert_eq!(count(&db, "line_exchange"), 0);
    for row in all_four(&db, &a1) {
        assert_eq!(row, (0, 0, 0, 0));
    }
}

#[test]
fn r34_a_live_authority_with_other_ceilings_is_refused() {
    let tmp = Tmp::new("r34-live");
    let (db, p1) = established(&tmp, &policy(1, |_| {}));
    let mut a = authority(&db, &p1);
    a.limits.peer.uses += 1;
    task(&db, "t1", PEER, 1);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let e = ledger::charge(
        &mut conn,
        &a,
        &charge_of("t1", Operation::Poll, 1),
        &Faults::none(),
    )
    .unwrap_err();
    assert_eq!(e.code, Code::CeilingChanged);
    assert_eq!(count(&db, "line_exchange"), 0);
}
