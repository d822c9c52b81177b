//! Fault injection at the ledger's commit point (needs `--features fault-injection`): an
//! uncertain commit is `unknown` whichever way it went, a crash before the commit leaves
//! nothing, a crash after it leaves the whole charge, and in every case the ledger equals the
//! sum of its exchanges and the database passes `integrity_check`. Named by requirement (L-NN).
//!
//! `abort` kills the process, so those cases run in a child: this test binary started again
//! with one test selected and the database in [`CHILD_DB`].

mod common;

use std::path::Path;
use std::process::Command;

use agent_intercom_line::fault::Faults;
use agent_intercom_line::ledger::{self, Charge, Operation};
use agent_intercom_line::{Code, NETWORK_ALLOWANCE, schema};
use common::*;
use rusqlite::Connection;
use serde_json::json;

const NET: i64 = NETWORK_ALLOWANCE as i64;
const CHILD_DB: &str = "AGENT_INTERCOM_LINE_TEST_CHILD_DB";
const CHILD_FAULT: &str = "AGENT_INTERCOM_LINE_TEST_CHILD_FAULT";

fn charge_of(task: &str) -> Charge<'_> {
    Charge {
        task_id: task,
        operation: Operation::Submit,
        application_bytes: 99,
        peer_id: PEER,
        purpose: "public-summary",
        task_schema: "public-text@1",
        request: None,
    }
}

fn uses(db: &Path) -> Vec<i64> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT used_uses FROM line_capacity ORDER BY scope_kind, scope_key")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn consistent(db: &Path) {
    let conn = Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    assert!(
        ledger::mismatches(&conn).unwrap().is_empty(),
        "ledger = sum of exchanges"
    );
}

fn prepared(tmp: &Tmp) -> (std::path::PathBuf, ledger::Authority) {
    let (db, p) = established(tmp, &policy(1, |_| {}));
    task(&db, "t1", PEER, 1);
    let a = authority(&db, &p);
    (db, a)
}

#[test]
fn r51_uncertain_committed_charge_is_unknown_and_stands() {
    let tmp = Tmp::new("f-committed");
    let (db, a) = prepared(&tmp);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::parse(Some("ledger-commit:uncertain-committed"), None).unwrap();
    let e = ledger::charge(&mut conn, &a, &charge_of("t1"), &f).unwrap_err();
    assert_eq!(e.to_json(), json!({"error": "unknown", "task_id": "t1"}));
    assert_eq!(count(&db, "line_exchange"), 1, "the commit happened");
    assert_eq!(
        used(&db, "peer", PEER),
        (1, 99, NET, 0),
        "and is never refunded"
    );
    consistent(&db);
}

#[test]
fn r51_uncertain_absent_charge_is_unknown_and_absent() {
    let tmp = Tmp::new("f-absent");
    let (db, a) = prepared(&tmp);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::parse(Some("ledger-commit:uncertain-absent"), None).unwrap();
    let e = ledger::charge(&mut conn, &a, &charge_of("t1"), &f).unwrap_err();
    assert_eq!(e.to_json(), json!({"error": "unknown", "task_id": "t1"}));
    assert_eq!(count(&db, "line_exchange"), 0);
    assert!(uses(&db).iter().all(|u| *u == 0));
    consistent(&db);
    // The connection is usable afterwards: the next charge is charged once.
    ledger::charge(&mut conn, &a, &charge_of("t1"), &Faults::none()).unwrap();
    assert_eq!(used(&db, "peer", PEER), (1, 99, NET, 0));
    consistent(&db);
}

#[test]
fn r30_the_test_clock_stamps_the_charge() {
    let tmp = Tmp::new("f-clock");
    let (db, a) = prepared(&tmp);
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::parse(None, Some("1234567")).unwrap();
    ledger::charge(&mut conn, &a, &charge_of("t1"), &f).unwrap();
    let at: i64 = conn
        .query_row("SELECT charged_at_ms FROM line_exchange", [], |r| r.get(0))
        .unwrap();
    assert_eq!(at, 1_234_567);
}

/// Runs [`child_charges`] in a new process with `fault`; returns whether it aborted.
fn in_child(db: &Path, fault: &str) -> bool {
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_charges",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, db)
        .env(CHILD_FAULT, fault)
        .status()
        .unwrap();
    !status.success()
}

/// The child's half: charges once under the fault (does nothing unless started by
/// [`in_child`]).
#[test]
fn child_charges() {
    let (Some(db), Some(fault)) = (std::env::var_os(CHILD_DB), std::env::var(CHILD_FAULT).ok())
    else {
        return;
    };
    let db = std::path::PathBuf::from(db);
    let conn = Connection::open(&db).unwrap();
    let host_key = agent_intercom_line::host::installation_id(&conn)
        .unwrap()
        .unwrap();
    let p = parsed(&policy(1, |_| {}));
    let a = ledger::Authority {
        generation: 1,
        limits: p.limits,
        host_key,
    };
    let mut conn = schema::open_at_revision(&db).unwrap();
    let f = Faults::parse(Some(&fault), None).unwrap();
    let _ = ledger::charge(&mut conn, &a, &charge_of("t1"), &f);
}

#[test]
fn r68_abort_before_the_commit_leaves_nothing() {
    let tmp = Tmp::new("f-abort-before");
    let (db, a) = prepared(&tmp);
    assert!(in_child(&db, "ledger-commit:abort"), "the child aborted");
    assert_eq!(count(&db, "line_exchange"), 0);
    assert!(uses(&db).iter().all(|u| *u == 0));
    consistent(&db);
    // The database is usable after the crash.
    let mut conn = schema::open_at_revision(&db).unwrap();
    ledger::charge(&mut conn, &a, &charge_of("t1"), &Faults::none()).unwrap();
    consistent(&db);
}

#[test]
fn r30_abort_after_the_commit_leaves_the_whole_charge() {
    let tmp = Tmp::new("f-abort-after");
    let (db, _) = prepared(&tmp);
    assert!(
        in_child(&db, "after-claim-before-send:abort"),
        "the child aborted"
    );
    assert_eq!(count(&db, "line_exchange"), 1);
    assert_eq!(used(&db, "peer", PEER), (1, 99, NET, 0));
    assert_eq!(used(&db, "purpose", "public-summary"), (1, 99, NET, 0));
    consistent(&db);
    // A crash never refunds: a second crash charges again.
    assert!(in_child(&db, "after-claim-before-send:abort"));
    assert_eq!(
        used(&db, "task", &format!("{PEER}/public-text@1")),
        (2, 198, 2 * NET, 0)
    );
    consistent(&db);
}

#[test]
fn fault_variables_are_read_in_a_fault_build() {
    // This build has the feature: the variables are read, and a bad one is a usage error.
    let env = |name: &str| {
        (name == agent_intercom_line::fault::FAULT_ENV).then(|| "ledger-commit:explode".into())
    };
    assert_eq!(Faults::from_env(&env).unwrap_err().code, Code::Usage);
}

fn authority_config() -> agent_intercom_line::config::PublicConfig {
    parse_config(&config(policy(1, |_| {}))).unwrap()
}

fn revoke_line() -> serde_json::Value {
    json!({"operation": "revoke", "peer_id": PEER, "purpose": "public-summary",
           "task_schema": "public-text@1", "endpoint": ENDPOINT})
}

fn run_authority(db: &Path, line: &serde_json::Value, faults: &Faults) -> serde_json::Value {
    use agent_intercom_line::authority::{self, Context, Fences};
    let config = authority_config();
    let ctx = Context {
        config: &config,
        workload_fingerprint: "fp",
        faults,
    };
    let mut conn = schema::open_at_revision(db).unwrap();
    let text = line.to_string();
    let value = agent_intercom_core::canonical::parse(&text).unwrap();
    let mut fences = Fences::default();
    let result = match line["operation"].as_str() {
        Some("enroll") => authority::enroll(&mut conn, &ctx, &mut fences, &value),
        _ => authority::revoke(&mut conn, &ctx, &mut fences, &value),
    };
    result.unwrap_or_else(|e| e.to_json())
}

/// The child's half of the revoke crash: revokes once under the fault.
#[test]
fn child_revokes() {
    let (Some(db), Some(fault)) = (std::env::var_os(CHILD_DB), std::env::var(CHILD_FAULT).ok())
    else {
        return;
    };
    if !fault.starts_with("revoke-commit") {
        return;
    }
    let f = Faults::parse(Some(&fault), None).unwrap();
    run_authority(Path::new(&db), &revoke_line(), &f);
}

#[test]
fn r63_abort_at_the_revoke_commit_stays_fenced_across_restart() {
    use agent_intercom_core::httpsig::SigningKey;
    let tmp = Tmp::new("f-revoke");
    let (db, _) = established(&tmp, &policy(1, |_| {}));
    let ca = tmp.file("ca.pem", pem("CERTIFICATE", &[0x30; 64]).as_bytes(), 0o644);
    let public = SigningKey::from_seed(&[7; 32])
        .unwrap()
        .public_key()
        .to_bytes();
    let mut spki = vec![
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ];
    spki.extend_from_slice(&public);
    let public_pem = pem("PUBLIC KEY", &spki);
    let enroll = json!({
        "operation": "enroll", "peer_id": PEER, "purpose": "public-summary",
        "task_schema": "public-text@1",
        "key": {"key_id": "peer-key-1",
                "public_key_pem": public_pem,
                "issuer": PEER, "protocol": "rfc9421-ed25519@1", "audience": WORKLOAD,
                "assurance": "operator-enrolled", "valid_from": "2020-01-01T00:00:00Z",
                "expires_at": "2099-01-01T00:00:00Z"},
        "endpoint": {"address": "127.0.0.1", "hostname": "peer.example", "port": 443,
                     "path": "/a2a/jsonrpc", "ca_file": ca.to_str().unwrap()},
    });
    let out = run_authority(&db, &enroll, &Faults::none());
    assert_eq!(out["key_version"], 1, "{out}");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_revokes",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, &db)
        .env(CHILD_FAULT, "revoke-commit:abort")
        .status()
        .unwrap();
    assert!(!status.success(), "the child aborted");
    let conn = Connection::open(&db).unwrap();
    let (state, pending): (String, Option<String>) = conn
        .query_row("SELECT state, pending_mutation FROM line_peer", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        (state.as_str(), pending.as_deref()),
        ("active", Some("revoke"))
    );
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    // After the crash (fresh fences), the durable fence holds: no key verifies.
    let fences = agent_intercom_line::authority::Fences::default();
    let key = agent_intercom_line::authority::verification_key(
        &conn,
        &fences,
        PEER,
        "peer-key-1",
        1_800_000_000_000,
    )
    .unwrap();
    assert!(key.is_none());
    // Repeating the revoke completes it.
    let out = run_authority(&db, &revoke_line(), &Faults::none());
    assert_eq!(out, json!({"peer_id": PEER, "revoked": true}));
}
