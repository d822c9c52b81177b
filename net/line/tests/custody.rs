//! The custody database on real SQLite files (docs/line.md §1.8, §1.3 L-25/L-26): the migration
//! gate, downgrade refusal, append-only triggers, one control process, and durable policy
//! generations. Named by requirement (L-NN).

mod common;

use agent_intercom_line::schema::{
    self, CUSTODY_REVISION, CUSTODY_TABLES, ControlLock, NATIVE_REVISION, NATIVE_TABLES,
};
use agent_intercom_line::{Code, host, startup};
use common::*;
use rusqlite::Connection;
use serde_json::json;

fn tables(db: &std::path::Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn r65_sessions_start_only_at_the_custody_revision() {
    let tmp = Tmp::new("r65");
    let db = tmp.path("line.sqlite");
    // No database: migration required, and no file is created by the gate.
    assert_eq!(
        schema::open_at_revision(&db).unwrap_err().code,
        Code::MigrationRequired
    );
    assert!(!db.exists());
    // An empty file: migration required.
    std::fs::write(&db, b"").unwrap();
    assert_eq!(
        schema::open_at_revision(&db).unwrap_err().code,
        Code::MigrationRequired
    );
    let m = schema::migrate(&db, CUSTODY_REVISION).unwrap();
    assert_eq!((m.from, m.to), (0, 1));
    assert!(schema::open_at_revision(&db).is_ok());
    // Migrating again changes nothing.
    assert_eq!(
        schema::migrate(&db, 1).unwrap(),
        schema::Migrated { from: 1, to: 1 }
    );
    // A newer revision is refused, never rewritten.
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 3)
        .unwrap();
    assert_eq!(
        schema::open_at_revision(&db).unwrap_err().code,
        Code::SchemaNewer
    );
    assert_eq!(schema::migrate(&db, 1).unwrap_err().code, Code::SchemaNewer);
    assert_eq!(schema::migrate(&db, 7).unwrap_err().code, Code::Usage);
}

#[test]
fn r65_a_foreign_database_is_refused() {
    let tmp = Tmp::new("r65-foreign");
    let db = tmp.path("other.sqlite");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE messages (id INTEGER)")
        .unwrap();
    assert_eq!(
        schema::migrate(&db, 1).unwrap_err().code,
        Code::ForeignDatabase
    );
    assert_eq!(
        schema::open_at_revision(&db).unwrap_err().code,
        Code::ForeignDatabase
    );
    assert_eq!(tables(&db), ["messages"]);
    let garbage = tmp.file("garbage.sqlite", &[0x55; 4096], 0o600);
    assert!(schema::migrate(&garbage, 1).is_err());
    assert_eq!(std::fs::read(&garbage).unwrap(), vec![0x55; 4096]);
}

#[test]
fn r66_the_custody_revision_creates_its_tables() {
    let tmp = Tmp::new("r66");
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, 1).unwrap();
    let mut want: Vec<String> = CUSTODY_TABLES.iter().map(|t| t.to_string()).collect();
    want.sort();
    assert_eq!(tables(&db), want);
    assert_eq!(CUSTODY_TABLES.len(), 8);
    let conn = Connection::open(&db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn r67_downgrade_refused_while_any_row_remains_including_unused_capacity() {
    let tmp = Tmp::new("r67");
    let db = tmp.path("line.sqlite");
    // Empty custody: the downgrade succeeds and leaves a plain empty database.
    schema::migrate(&db, 1).unwrap();
    assert_eq!(
        schema::migrate(&db, 0).unwrap(),
        schema::Migrated { from: 1, to: 0 }
    );
    assert!(tables(&db).is_empty());
    assert_eq!(
        schema::open_at_revision(&db).unwrap_err().code,
        Code::MigrationRequired
    );
    // Establishing a policy creates zero-use capacity rows: they block the downgrade.
    let (db, _) = established(&tmp, &policy(1, |_| {}));
    let before = count(&db, "line_capacity");
    assert!(before > 0);
    assert_eq!(
        ledger_total_used(&db),
        0,
        "the capacity rows are unused, and still custody"
    );
    let e = schema::migrate(&db, 0).unwrap_err();
    assert_eq!(e.code, Code::DowngradeRefused);
    assert_eq!(count(&db, "line_capacity"), before);
    assert_eq!(count(&db, "line_policy"), 1);
    assert!(schema::open_at_revision(&db).is_ok());
    // A host row alone (a credential, no policy) also blocks it.
    let tmp2 = Tmp::new("r67-host");
    let db2 = tmp2.path("line.sqlite");
    schema::migrate(&db2, 1).unwrap();
    host::set_operator_credential(&db2, &credential(), 5).unwrap();
    assert_eq!(
        schema::migrate(&db2, 0).unwrap_err().code,
        Code::DowngradeRefused
    );
}

fn ledger_total_used(db: &std::path::Path) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row(
        "SELECT sum(used_uses + used_app + reserved_net) FROM line_capacity",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn r64_custody_rows_are_never_deleted_and_counters_never_go_down() {
    let tmp = Tmp::new("r64");
    let (db, _) = established(&tmp, &policy(1, |_| {}));
    let conn = Connection::open(&db).unwrap();
    for table in ["line_host", "line_policy", "line_capacity"] {
        let e = conn
            .execute(&format!("DELETE FROM {table}"), [])
            .unwrap_err();
        assert!(e.to_string().contains("never deleted"), "{table}: {e}");
    }
    assert!(
        conn.execute("UPDATE line_policy SET digest = 'x'", [])
            .is_err()
    );
    assert!(
        conn.execute("UPDATE line_capacity SET ceil_uses = ceil_uses + 1", [])
            .is_err()
    );
    conn.execute("UPDATE line_capacity SET used_uses = 1", [])
        .unwrap();
    assert!(
        conn.execute("UPDATE line_capacity SET used_uses = 0", [])
            .is_err()
    );
    // A counter past its ceiling is refused by the table itself.
    assert!(
        conn.execute("UPDATE line_capacity SET used_uses = ceil_uses + 1", [])
            .is_err()
    );
}

#[test]
fn r69_one_control_process_per_database() {
    let tmp = Tmp::new("r69");
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, 1).unwrap();
    let held = ControlLock::acquire(&db).unwrap();
    assert_eq!(
        ControlLock::acquire(&db).unwrap_err().code,
        Code::SessionBusy
    );
    // A migration needs the database to itself (both ways).
    assert_eq!(schema::migrate(&db, 0).unwrap_err().code, Code::SessionBusy);
    assert_eq!(tables(&db).len(), CUSTODY_TABLES.len());
    // Establishing a policy is one transaction beside a live session (L-26).
    let p = parsed(&policy(1, |_| {}));
    assert!(host::establish_policy(&db, &p, 1).unwrap().new);
    drop(held);
    assert!(ControlLock::acquire(&db).is_ok());
}

#[test]
fn r25_a_generation_is_active_only_when_durably_established() {
    let tmp = Tmp::new("r25");
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, 1).unwrap();
    let conn = || schema::open_at_revision(&db).unwrap();
    let cfg1 = parse_config(&config(policy(1, |_| {}))).unwrap();
    assert_eq!(
        startup::check_generation(&conn(), &cfg1).unwrap_err().code,
        Code::PolicyNotEstablished
    );
    host::establish_policy(&db, &cfg1.policy, 1).unwrap();
    assert!(startup::check_generation(&conn(), &cfg1).is_ok());
    // The same generation with another content: a mismatch, never activated.
    let other = parse_config(&config(policy(1, |p| p["categories"] = json!(["x"])))).unwrap();
    assert_eq!(
        startup::check_generation(&conn(), &other).unwrap_err().code,
        Code::PolicyMismatch
    );
    // Re-establishing the identical generation is a no-op; another content for it refuses.
    assert!(!host::establish_policy(&db, &cfg1.policy, 2).unwrap().new);
    assert_eq!(
        host::establish_policy(&db, &other.policy, 2)
            .unwrap_err()
            .code,
        Code::GenerationNotNewer
    );
    // A newer durable generation makes the older one stale.
    let cfg2 = parse_config(&config(policy(2, |_| {}))).unwrap();
    assert!(host::establish_policy(&db, &cfg2.policy, 3).unwrap().new);
    assert_eq!(
        startup::check_generation(&conn(), &cfg1).unwrap_err().code,
        Code::StaleGeneration
    );
    assert!(startup::check_generation(&conn(), &cfg2).is_ok());
    assert_eq!(
        host::establish_policy(&db, &cfg1.policy, 4)
            .unwrap_err()
            .code,
        Code::GenerationNotNewer
    );
    assert_eq!(count(&db, "line_policy"), 2);
}

#[test]
fn r26_a_newer_durable_generation_invalidates_live_authority_at_once() {
    let tmp = Tmp::new("r26");
    let (db, p1) = established(&tmp, &policy(1, |_| {}));
    let live = schema::open_at_revision(&db).unwrap();
    assert!(startup::check_live(&live, 1).is_ok());
    // Another connection (the host) establishes generation 2: the live one sees it next time.
    host::establish_policy(&db, &parsed(&policy(2, |_| {})), 9).unwrap();
    let e = startup::check_live(&live, p1.generation).unwrap_err();
    assert_eq!(e.code, Code::StaleGeneration);
    assert_eq!(e.members, vec![("generation", json!(2))]);
}

#[test]
fn r34_a_changed_ceiling_refuses_and_never_resets() {
    let tmp = Tmp::new("r34");
    let (db, _) = established(&tmp, &policy(1, |_| {}));
    let before: Vec<_> =
        agent_intercom_line::ledger::scopes(&Connection::open(&db).unwrap()).unwrap();
    for (kind, member, value) in [
        ("peer", "uses", 21),
        ("task", "uses", 5),
        ("host", "application_bytes", 1),
        ("purpose", "network_bytes", 0),
    ] {
        let p2 = parsed(&policy(2, |p| p["limits"][kind][member] = json!(value)));
        let e = host::establish_policy(&db, &p2, 2).unwrap_err();
        assert_eq!(e.code, Code::CeilingChanged, "{kind}.{member}");
        assert_eq!(e.members[0].0, "scope");
        assert_eq!(e.members[0].1["kind"], json!(kind));
    }
    let after: Vec<_> =
        agent_intercom_line::ledger::scopes(&Connection::open(&db).unwrap()).unwrap();
    assert_eq!(before, after);
    assert_eq!(
        count(&db, "line_policy"),
        1,
        "the refused generations left nothing"
    );
    // A new generation that keeps every ceiling but names a new peer adds that peer's rows.
    let p2 = parsed(&policy(2, |p| p["peers"] = json!([PEER, PEER_B])));
    let e = host::establish_policy(&db, &p2, 3).unwrap();
    assert_eq!(e.scopes_created, 2, "the new peer and its task family");
}

#[test]
fn r65_the_native_lab_needs_revision_2_and_the_session_runs_on_both() {
    let tmp = Tmp::new("r65n");
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, CUSTODY_REVISION).unwrap();
    assert_eq!(
        schema::open_native(&db).unwrap_err().code,
        Code::MigrationRequired
    );
    let m = schema::migrate(&db, NATIVE_REVISION).unwrap();
    assert_eq!((m.from, m.to), (1, 2));
    assert!(schema::open_native(&db).is_ok());
    assert!(schema::open_at_revision(&db).is_ok());
    let names = tables(&db);
    for table in CUSTODY_TABLES.iter().chain(NATIVE_TABLES) {
        assert!(names.iter().any(|n| n == table), "{table}");
    }
    // Down to 1 with no native row: the native tables go, custody stays.
    schema::migrate(&db, CUSTODY_REVISION).unwrap();
    assert!(
        tables(&db)
            .iter()
            .all(|n| !NATIVE_TABLES.contains(&n.as_str()))
    );
    // 0 to 2 in one step.
    let fresh = tmp.path("fresh.sqlite");
    assert_eq!(schema::migrate(&fresh, 2).unwrap().from, 0);
    assert_eq!(schema::migrate(&fresh, 0).unwrap().to, 0);
    assert!(tables(&fresh).is_empty());
}

/// A task at revision 1 that names a native owner has no run to bind it: the upgrade refuses.
#[test]
fn r72_the_native_migration_refuses_inconsistent_wait_owners() {
    let tmp = Tmp::new("r72");
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, CUSTODY_REVISION).unwrap();
    {
        let conn = Connection::open(&db).unwrap();
        plant_native_task(&conn);
    }
    let e = schema::migrate(&db, NATIVE_REVISION).unwrap_err();
    assert_eq!(e.code, Code::InconsistentWaitOwner);
    assert_eq!(
        schema::open_native(&db).unwrap_err().code,
        Code::MigrationRequired
    );
}

/// A native task (even without its run rows) blocks the downgrade from 2, and so does any row
/// of a native table.
#[test]
fn r73_native_downgrade_is_refused_while_native_evidence_remains() {
    let tmp = Tmp::new("r73");
    let db = tmp.path("line.sqlite");
    schema::migrate(&db, NATIVE_REVISION).unwrap();
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO run_session (session_id, startup_id, created_at_ms) VALUES ('s', 'u', 0)",
            [],
        )
        .unwrap();
    }
    let e = schema::migrate(&db, CUSTODY_REVISION).unwrap_err();
    assert_eq!(
        (e.code, e.to_json()["table"].clone()),
        (Code::DowngradeRefused, json!("run_session"))
    );
    let e = schema::migrate(&db, 0).unwrap_err();
    assert_eq!(e.code, Code::DowngradeRefused);
    assert!(tables(&db).iter().any(|n| n == "run_session"));

    let db2 = tmp.path("line2.sqlite");
    schema::migrate(&db2, NATIVE_REVISION).unwrap();
    plant_native_task(&Connection::open(&db2).unwrap());
    let e = schema::migrate(&db2, CUSTODY_REVISION).unwrap_err();
    assert_eq!(
        (e.code, e.to_json()["table"].clone()),
        (Code::DowngradeRefused, json!("line_task"))
    );
}

/// A `line_task` row owned by the native lab, with just enough of its references.
fn plant_native_task(conn: &Connection) {
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF;
         INSERT INTO line_task (task_id, owner_kind, startup_id, enrollment_id, peer_id, purpose,
           task_schema, category, endpoint, message_id, body, body_sha256, source_assertion_json,
           generation, created_at_ms, expires_at_ms, foreign_task_id, status, adoption_open,
           local_disposition) VALUES ('t', 'native', 'u', 'e', 'p', 'x', 'y', 'z',
           'https://h:1/', 'm', X'7B7D', 'd', '{}', 1, 0, 1, NULL, 'prepared', 1, 'open');",
    )
    .unwrap();
}
