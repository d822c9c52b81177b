//! enroll, rotate and revoke on real SQLite files (L-08 to L-16, L-60 to L-63), by requirement.

mod common;

use std::path::{Path, PathBuf};

use agent_intercom_core::canonical;
use agent_intercom_core::httpsig::SigningKey;
use agent_intercom_line::authority::{self, Context, Fences};
use agent_intercom_line::config::PublicConfig;
use agent_intercom_line::fault::Faults;
use agent_intercom_line::{Code, LineError};
use common::*;
use rusqlite::Connection;
use serde_json::{Value, json};

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600_000;
const FINGERPRINT: &str = "ab12";

fn spki_pem(seed: u8) -> String {
    let public = SigningKey::from_seed(&[seed; 32])
        .unwrap()
        .public_key()
        .to_bytes();
    let mut der = vec![
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ];
    der.extend_from_slice(&public);
    pem("PUBLIC KEY", &der)
}

fn key(key_id: &str, seed: u8) -> Value {
    json!({
        "key_id": key_id,
        "public_key_pem": spki_pem(seed),
        "issuer": PEER,
        "protocol": "rfc9421-ed25519@1",
        "audience": WORKLOAD,
        "assurance": "operator-enrolled",
        "valid_from": "2025-12-01T00:00:00+01:00",
        "expires_at": "2027-01-01T00:00:00Z",
    })
}

struct Lab {
    tmp: Tmp,
    db: PathBuf,
    config: PublicConfig,
    ca: PathBuf,
}

impl Lab {
    fn new(name: &str, edit: impl FnOnce(&mut Value)) -> Lab {
        let tmp = Tmp::new(name);
        let p = policy(1, edit);
        let (db, _) = established(&tmp, &p);
        let config = parse_config(&config(p)).unwrap();
        let ca = tmp.file("ca.pem", pem("CERTIFICATE", &[0x30; 64]).as_bytes(), 0o644);
        Lab {
            tmp,
            db,
            config,
            ca,
        }
    }

    fn enroll_line(&self) -> Value {
        json!({
            "operation": "enroll",
            "peer_id": PEER,
            "purpose": "public-summary",
            "task_schema": "public-text@1",
            "key": key("peer-key-1", 7),
            "endpoint": {
                "address": "127.0.0.1",
                "hostname": "peer.example",
                "port": 443,
                "path": "/a2a/jsonrpc",
                "ca_file": self.ca.to_str().unwrap(),
            },
        })
    }

    fn run(
        &self,
        op: &str,
        fences: &mut Fences,
        faults: &Faults,
        line: &Value,
    ) -> Result<Value, LineError> {
        let mut conn = Connection::open(&self.db).unwrap();
        let ctx = Context {
            config: &self.config,
            workload_fingerprint: FINGERPRINT,
            faults,
        };
        let text = line.to_string();
        let value = canonical::parse(&text).unwrap();
        match op {
            "enroll" => authority::enroll(&mut conn, &ctx, fences, &value),
            "rotate" => authority::rotate(&mut conn, &ctx, fences, &value),
            _ => authority::revoke(&mut conn, &ctx, fences, &value),
        }
    }

    fn ok(&self, op: &str, fences: &mut Fences, line: &Value) -> Value {
        self.run(op, fences, &clock(), line).unwrap()
    }

    fn refused(&self, op: &str, line: &Value) -> LineError {
        let before = dump(&self.db);
        let err = self
            .run(op, &mut Fences::default(), &clock(), line)
            .unwrap_err();
        assert_eq!(dump(&self.db), before, "a refusal changes nothing");
        err
    }
}

fn clock() -> Faults {
    Faults::parse(None, Some(&NOW.to_string())).unwrap()
}

fn fault(point: &str) -> Faults {
    Faults::parse(Some(point), Some(&NOW.to_string())).unwrap()
}

fn dump(db: &Path) -> String {
    let conn = Connection::open(db).unwrap();
    let mut out = String::new();
    for table in ["line_peer", "line_peer_key"] {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY 1, 2"))
            .unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap();
        for row in rows {
            out += &row.unwrap();
            out.push('\n');
        }
    }
    out
}

fn target() -> Value {
    json!({
        "peer_id": PEER,
        "purpose": "public-summary",
        "task_schema": "public-text@1",
        "endpoint": ENDPOINT,
    })
}

fn with(mut v: Value, name: &str, value: Value) -> Value {
    v[name] = value;
    v
}

fn key_state(db: &Path) -> Vec<(i64, String, String)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT version, key_id, state FROM line_peer_key ORDER BY version")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn r08_enroll_needs_the_action_and_every_selector() {
    let lab = Lab::new("r08a", |p| p["actions"] = json!(["rotate", "revoke"]));
    let err = lab.refused("enroll", &lab.enroll_line());
    assert_eq!(
        (err.code, err.to_json()["reason"].clone()),
        (Code::Denied, json!("action"))
    );
    let lab = Lab::new("r08b", |_| {});
    for (name, value, reason) in [
        ("peer_id", json!(PEER_B), "peer"),
        ("purpose", json!("private-summary"), "purpose"),
        ("task_schema", json!("public-text@2"), "task_schema"),
        ("category", json!("other"), "category"),
    ] {
        let err = lab.refused("enroll", &with(lab.enroll_line(), name, value));
        assert_eq!(err.code, Code::Denied, "{name}");
        assert_eq!(err.to_json()["reason"], reason);
    }
    let mut line = lab.enroll_line();
    line["endpoint"]["port"] = json!(8443);
    let err = lab.refused("enroll", &line);
    assert_eq!(
        err.to_json()["reason"],
        "endpoint",
        "the exact URI with its port (L-23)"
    );
}

#[test]
fn r09_enroll_makes_no_contact_and_needs_no_reachable_peer() {
    // 127.0.0.1:443 is not listening in the test; enrollment is local bookkeeping only.
    let lab = Lab::new("r09", |_| {});
    let out = lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    assert_eq!(out["endpoint"], ENDPOINT);
    assert_eq!(count(&lab.db, "line_exchange"), 0);
}

#[test]
fn r10_fields_default_category_and_refusals() {
    let lab = Lab::new("r10", |_| {});
    let out = lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    assert_eq!(out["category"], "public-task");
    assert_eq!(out["key_id"], "peer-key-1");
    assert_eq!(out["key_version"], 1);
    assert_eq!(out["peer_id"], PEER);
    let lab = Lab::new("r10b", |_| {});
    let mut missing = lab.enroll_line();
    missing.as_object_mut().unwrap().remove("key");
    for (line, field) in [
        (with(lab.enroll_line(), "extra", json!(1)), "extra"),
        (missing, "key"),
        (with(lab.enroll_line(), "peer_id", json!(7)), "peer_id"),
        (with(lab.enroll_line(), "peer_id", json!("PEER")), "peer_id"),
        (with(lab.enroll_line(), "category", json!(null)), "category"),
    ] {
        let err = lab.refused("enroll", &line);
        assert_eq!(err.code, Code::InvalidField, "{field}");
        assert_eq!(err.to_json()["field"], field);
    }
}

#[test]
fn r11_address_is_numeric_and_hostname_is_never_resolved() {
    let lab = Lab::new("r11", |_| {});
    for (member, value) in [
        ("address", json!("peer.example")),
        ("address", json!("127.000.0.1")),
        ("address", json!(2130706433)),
        ("hostname", json!("127.0.0.1")),
        ("hostname", json!("PEER.example")),
        ("port", json!(0)),
        ("port", json!("443")),
        ("path", json!("a2a")),
        ("path", json!("/a2a?x=1")),
    ] {
        let mut line = lab.enroll_line();
        line["endpoint"][member] = value.clone();
        let err = lab.refused("enroll", &line);
        assert_eq!(err.code, Code::EndpointInvalid, "{member} {value}");
        assert_eq!(err.to_json()["field"], format!("endpoint.{member}"));
    }
    // peer.example resolves nowhere: enrollment never asks.
    let mut line = lab.enroll_line();
    line["endpoint"]["address"] = json!("::1");
    let out = lab.ok("enroll", &mut Fences::default(), &line);
    let conn = Connection::open(&lab.db).unwrap();
    let (address, hostname): (String, String) = conn
        .query_row("SELECT address, hostname FROM line_peer", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        (address.as_str(), hostname.as_str()),
        ("::1", "peer.example")
    );
    assert_eq!(out["endpoint"], ENDPOINT);
}

#[test]
fn r12_ca_file_is_absolute_certificates_only_and_pinned() {
    let lab = Lab::new("r12", |_| {});
    let key_file = lab.tmp.file("key.pem", key_pem(&[9; 32]).as_bytes(), 0o600);
    let empty = lab.tmp.file("empty.pem", b"", 0o644);
    for ca in [
        json!("ca.pem"),
        json!(lab.tmp.path("absent.pem").to_str().unwrap()),
        json!(key_file.to_str().unwrap()),
        json!(empty.to_str().unwrap()),
        json!(lab.tmp.0.to_str().unwrap()),
    ] {
        let mut line = lab.enroll_line();
        line["endpoint"]["ca_file"] = ca.clone();
        let err = lab.refused("enroll", &line);
        assert_eq!(err.code, Code::EndpointInvalid, "{ca}");
        assert_eq!(err.to_json()["field"], "endpoint.ca_file");
    }
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let conn = Connection::open(&lab.db).unwrap();
    let (file, digest): (String, String) = conn
        .query_row("SELECT ca_file, ca_sha256 FROM line_peer", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(file, lab.ca.to_str().unwrap());
    let expected: String = {
        use sha2::Digest;
        sha2::Sha256::digest(std::fs::read(&lab.ca).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    assert_eq!(digest, expected);
}

#[test]
fn r13_key_record_mutations_each_refuse_with_their_field() {
    let lab = Lab::new("r13", |_| {});
    let private = key_pem(&[7; 32]);
    let rsa_like = pem("PUBLIC KEY", &[0x30; 40]);
    let cases: Vec<(&str, Value)> = vec![
        ("valid_from", json!("2025-12-01T00:00:00")),
        ("expires_at", json!("2027-01-01 00:00:00")),
        ("public_key_pem", json!(private)),
        ("public_key_pem", json!(rsa_like)),
        ("issuer", json!(PEER_B)),
        ("audience", json!(PEER)),
        ("protocol", json!("rfc9421-ed25519@2")),
        ("assurance", json!("tls-observed")),
        ("expires_at", json!("2025-12-01T00:00:00+01:00")),
        ("expires_at", json!("2025-12-31T23:59:59Z")),
        ("key_id", json!("has space")),
        ("key_id", json!(1)),
    ];
    for (member, value) in cases {
        let mut line = lab.enroll_line();
        line["key"][member] = value.clone();
        let err = lab.refused("enroll", &line);
        assert_eq!(err.code, Code::KeyInvalid, "{member} {value}");
        assert_eq!(err.to_json()["field"], format!("key.{member}"));
        assert!(
            !err.to_json().to_string().contains("PRIVATE"),
            "never echoed"
        );
    }
    let mut line = lab.enroll_line();
    line["key"]["extra"] = json!(true);
    assert_eq!(lab.refused("enroll", &line).to_json()["field"], "key.extra");
}

#[test]
fn r14_peer_identity_is_immutable() {
    let lab = Lab::new("r14", |p| {
        p["purposes"] = json!(["public-summary", "public-translate"]);
    });
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let again = lab.refused("enroll", &lab.enroll_line());
    assert_eq!(again.code, Code::AlreadyEnrolled);
    let mut other_key = lab.enroll_line();
    other_key["key"] = key("peer-key-2", 8);
    other_key["purpose"] = json!("public-translate");
    assert_eq!(
        lab.refused("enroll", &other_key).code,
        Code::AlreadyEnrolled
    );
    // Another purpose with the same key: a new enrollment sharing the key version.
    let same_key = with(lab.enroll_line(), "purpose", json!("public-translate"));
    let out = lab.ok("enroll", &mut Fences::default(), &same_key);
    assert_eq!(out["key_version"], 1);
    assert_eq!(count(&lab.db, "line_peer"), 2);
    assert_eq!(count(&lab.db, "line_peer_key"), 1);
}

#[test]
fn r15_enrollment_pins_the_workload_key_not_its_id() {
    let lab = Lab::new("r15", |_| {});
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let conn = Connection::open(&lab.db).unwrap();
    let pinned: String = conn
        .query_row("SELECT workload_key_sha256 FROM line_peer", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(pinned, FINGERPRINT);
    let s = authority::Selectors {
        peer_id: PEER.into(),
        purpose: "public-summary".into(),
        task_schema: "public-text@1".into(),
        category: "public-task".into(),
    };
    let fences = Fences::default();
    assert!(authority::target_gate(&conn, &fences, &s, ENDPOINT, FINGERPRINT).is_ok());
    let err = authority::target_gate(&conn, &fences, &s, ENDPOINT, "cd34").unwrap_err();
    assert_eq!(err.code, Code::WorkloadKeyChanged);
}

#[test]
fn r16_key_validity_is_checked_at_verification_time() {
    let lab = Lab::new("r16", |_| {});
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let conn = Connection::open(&lab.db).unwrap();
    let f = Fences::default();
    let at = |ms: i64| authority::verification_key(&conn, &f, PEER, "peer-key-1", ms).unwrap();
    assert!(at(NOW).is_some());
    let from = 1_764_543_600_000; // 2025-11-30T23:00:00Z (+01:00 applied)
    assert!(at(from - 1).is_none());
    assert!(at(from).is_some());
    let expires = 1_798_761_600_000; // 2027-01-01T00:00:00Z
    assert!(at(expires - 1).is_some());
    assert!(at(expires).is_none());
    assert!(
        authority::verification_key(&conn, &f, PEER, "other", NOW)
            .unwrap()
            .is_none()
    );
}

#[test]
fn r60_rotate_needs_the_action_the_target_and_a_new_key() {
    let lab = Lab::new("r60", |_| {});
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let line = with(target(), "key", key("peer-key-2", 8));
    let reused_id = with(target(), "key", key("peer-key-1", 8));
    assert_eq!(
        lab.refused("rotate", &reused_id).to_json()["field"],
        "key.key_id"
    );
    let reused_bytes = with(target(), "key", key("peer-key-2", 7));
    let err = lab.refused("rotate", &reused_bytes);
    assert_eq!(
        (err.code, err.to_json()["field"].clone()),
        (Code::KeyInvalid, json!("key.public_key_pem"))
    );
    let wrong_port = with(
        line.clone(),
        "endpoint",
        json!("https://peer.example/a2a/jsonrpc"),
    );
    assert_eq!(lab.refused("rotate", &wrong_port).code, Code::Denied);
    let other = with(line.clone(), "category", json!("public-task"));
    let out = lab.ok("rotate", &mut Fences::default(), &other);
    assert_eq!(
        out,
        json!({"peer_id": PEER, "retired_key_id": "peer-key-1", "key_id": "peer-key-2",
               "key_version": 2})
    );
    let denied = Lab::new("r60b", |p| p["actions"] = json!(["enroll"]));
    denied.ok("enroll", &mut Fences::default(), &denied.enroll_line());
    assert_eq!(
        denied.refused("rotate", &line).to_json()["reason"],
        "action"
    );
    let fresh = Lab::new("r60c", |_| {});
    assert_eq!(fresh.refused("rotate", &line).code, Code::NotEnrolled);
}

#[test]
fn r61_old_key_retired_before_the_persistence_wait() {
    let lab = Lab::new("r61", |_| {});
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let line = with(target(), "key", key("peer-key-2", 8));
    let mut fences = Fences::default();
    let err = lab
        .run(
            "rotate",
            &mut fences,
            &fault("rotate-commit:uncertain-absent"),
            &line,
        )
        .unwrap_err();
    assert_eq!(err.to_json(), json!({"error": "unknown", "peer_id": PEER}));
    assert!(fences.is_retired(PEER, "peer-key-1"));
    let conn = Connection::open(&lab.db).unwrap();
    // The old row is still active on disk, yet it no longer verifies.
    assert_eq!(
        key_state(&lab.db),
        vec![(1, "peer-key-1".into(), "active".into())]
    );
    let verify =
        |f: &Fences, id: &str| authority::verification_key(&conn, f, PEER, id, NOW).unwrap();
    assert!(verify(&fences, "peer-key-1").is_none());
    assert!(
        verify(&Fences::default(), "peer-key-1").is_none(),
        "durably fenced too"
    );
    // Repeating it completes; afterwards only the new version verifies.
    lab.ok("rotate", &mut fences, &line);
    assert!(!fences.is_fenced(PEER));
    assert_eq!(
        key_state(&lab.db),
        vec![
            (1, "peer-key-1".into(), "retired".into()),
            (2, "peer-key-2".into(), "active".into())
        ]
    );
    assert!(verify(&Fences::default(), "peer-key-1").is_none());
    assert!(verify(&Fences::default(), "peer-key-2").is_some());
    // A committed-but-uncertain rotation, repeated, answers the same and lifts the fence.
    let third = with(target(), "key", key("peer-key-3", 9));
    let mut fences = Fences::default();
    let err = lab
        .run(
            "rotate",
            &mut fences,
            &fault("rotate-commit:uncertain-committed"),
            &third,
        )
        .unwrap_err();
    assert_eq!(err.code, Code::Unknown);
    assert!(fences.is_fenced(PEER));
    assert!(verify(&fences, "peer-key-3").is_none());
    let out = lab.ok("rotate", &mut fences, &third);
    assert_eq!(
        (out["retired_key_id"].clone(), out["key_version"].clone()),
        (json!("peer-key-2"), json!(3))
    );
    assert!(verify(&fences, "peer-key-3").is_some());
}

#[test]
fn r62_revoke_fences_first_then_refuses_everything() {
    let lab = Lab::new("r62", |_| {});
    lab.ok("enroll", &mut Fences::default(), &lab.enroll_line());
    let mut fences = Fences::default();
    let out = lab.ok("revoke", &mut fences, &target());
    assert_eq!(out, json!({"peer_id": PEER, "revoked": true}));
    assert!(fences.is_fenced(PEER));
    assert_eq!(
        key_state(&lab.db),
        vec![(1, "peer-key-1".into(), "revoked".into())]
    );
    let conn = Connection::open(&lab.db).unwrap();
    let s = authority::Selectors {
        peer_id: PEER.into(),
        purpose: "public-summary".into(),
        task_schema: "public-text@1".into(),
        category: "public-task".into(),
    };
    let none = Fences::default();
    let gate = authority::target_gate(&conn, &none, &s, ENDPOINT, FINGERPRINT).unwrap_err();
    assert_eq!(gate.code, Code::Revoked);
    assert!(
        authority::verification_key(&conn, &none, PEER, "peer-key-1", NOW)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        lab.refused("rotate", &with(target(), "key", key("k2", 8)))
            .code,
        Code::Revoked
    );
    assert_eq!(
        lab.refused("enroll", &lab.enroll_line()).code,
        Code::Revoked
    );
    // Revocation is final; repeating it answers the same.
    assert_eq!(lab.ok("revoke", &mut Fences::default(), &target()), out);
    let denied = Lab::new("r62b", |p| p["actions"] = json!(["enroll"]));
    denied.ok("enroll", &mut Fences::default(), &denied.enroll_line());
    assert_eq!(
        denied.refused("revoke", &target()).to_json()["reason"],
        "action"
    );
}

#[test]
fn r63_uncertain_mutations_stay_fenced_until_repeated() {
    for mode in ["uncertain-absent", "uncertain-committed"] {
        let lab = Lab::new(&format!("r63-{mode}"), |_| {});
        let mut fences = Fences::default();
        let point = format!("enroll-commit:{mode}");
        let err = lab
            .run("enroll", &mut fences, &fault(&point), &lab.enroll_line())
            .unwrap_err();
        assert_eq!(
            err.to_json(),
            json!({"error": "unknown", "peer_id": PEER}),
            "{mode}"
        );
        assert!(fences.is_fenced(PEER));
        let conn = Connection::open(&lab.db).unwrap();
        assert!(
            authority::verification_key(&conn, &fences, PEER, "peer-key-1", NOW)
                .unwrap()
                .is_none()
        );
        // Repeating the same enroll completes it.
        let out = lab.ok("enroll", &mut fences, &lab.enroll_line());
        assert_eq!(out["key_version"], 1, "{mode}");
        assert!(!fences.is_fenced(PEER));
        // An uncertain revoke: fenced in memory, and durably (a restart has fresh fences).
        let point = format!("revoke-commit:{mode}");
        let mut fences = Fences::default();
        let err = lab
            .run("revoke", &mut fences, &fault(&point), &target())
            .unwrap_err();
        assert_eq!(err.to_json(), json!({"error": "unknown", "peer_id": PEER}));
        let s = authority::Selectors {
            peer_id: PEER.into(),
            purpose: "public-summary".into(),
            task_schema: "public-text@1".into(),
            category: "public-task".into(),
        };
        let gate = authority::target_gate(&conn, &fences, &s, ENDPOINT, FINGERPRINT).unwrap_err();
        assert!(matches!(gate.code, Code::Fenced | Code::Revoked), "{mode}");
        let restarted = Fences::default();
        let gate =
            authority::target_gate(&conn, &restarted, &s, ENDPOINT, FINGERPRINT).unwrap_err();
        let expected = if mode == "uncertain-absent" {
            Code::Fenced
        } else {
            Code::Revoked
        };
        assert_eq!(gate.code, expected, "{mode}");
        assert_eq!(
            lab.refused("rotate", &with(target(), "key", key("k2", 8)))
                .code,
            expected
        );
        lab.ok("revoke", &mut Fences::default(), &target());
        let gate =
            authority::target_gate(&conn, &restarted, &s, ENDPOINT, FINGERPRINT).unwrap_err();
        assert_eq!(gate.code, Code::Revoked);
    }
}

#[test]
fn r26_authority_mutations_refuse_under_a_stale_generation() {
    let lab = Lab::new("r26auth", |_| {});
    let newer = parsed(&policy(2, |_| {}));
    agent_intercom_line::host::establish_policy(&lab.db, &newer, 2_000).unwrap();
    assert_eq!(
        lab.refused("enroll", &lab.enroll_line()).code,
        Code::StaleGeneration
    );
}
