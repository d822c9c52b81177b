//! `broker-audit.jsonl`: the lines the Pi broker writes (tests/data/access/pi-audit.jsonl came
//! from its own BrokerAuditLog), append-only, fsynced, private, and never through a symlink.

mod common;

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use agent_intercom_broker::access::{AUDIT_EVENTS, AUDIT_FILE_NAME, AuditEntry, AuditLog};
use common::TempDir;

fn pi_lines() -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/access/pi-audit.jsonl"),
    )
    .unwrap()
}

fn connect() -> AuditEntry<'static> {
    AuditEntry {
        event: "remote_connect",
        outcome: "allowed",
        actor_id: Some("remote-1"),
        remote_host_id: Some("ika"),
        generation: Some(2),
        ..AuditEntry::default()
    }
}

#[test]
fn lines_are_what_the_pi_broker_writes() {
    let dir = TempDir::new("aud-pi");
    let log = AuditLog::open(&dir.0);
    assert_eq!(log.path(), dir.0.join(AUDIT_FILE_NAME));
    log.record(&connect(), 1234).unwrap();
    log.record(
        &AuditEntry {
            event: "remote_delivery_denied",
            outcome: "denied",
            actor_id: Some("remote-1"),
            target_id: Some("hidden"),
            reason: Some("POLICY_DENIED"),
            ..AuditEntry::default()
        },
        1234,
    )
    .unwrap();
    log.record(
        &AuditEntry {
            event: "remote_visibility_filtered",
            outcome: "observed",
            actor_id: Some("x"),
            target_id: Some("t"),
            remote_host_id: Some("h"),
            generation: Some(7),
            reason: Some("r\n\"q\u{1}é\u{2028}\u{7f}\\"),
            visible_count: Some(1),
            hidden_count: Some(3),
        },
        1234,
    )
    .unwrap();
    let text = fs::read_to_string(log.path()).unwrap();
    assert_eq!(text, pi_lines());
    assert!(!text.contains("credential"));
    assert_eq!(
        fs::metadata(log.path()).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn the_line_carries_version_timestamp_event_outcome_then_present_fields_in_order() {
    let minimal = AuditEntry {
        event: "remote_registration_denied",
        outcome: "denied",
        reason: Some("MISSING_CREDENTIAL"),
        ..AuditEntry::default()
    };
    assert_eq!(
        minimal.to_line(5),
        concat!(
            r#"{"version":1,"timestamp":5,"event":"remote_registration_denied","#,
            r#""outcome":"denied","reason":"MISSING_CREDENTIAL"}"#,
        )
    );
    let counts = AuditEntry {
        event: "tree_inspected",
        outcome: "allowed",
        actor_id: Some("local-admin"),
        target_id: Some("p"),
        visible_count: Some(0),
        ..AuditEntry::default()
    };
    assert_eq!(
        counts.to_line(-1),
        concat!(
            r#"{"version":1,"timestamp":-1,"event":"tree_inspected","outcome":"allowed","#,
            r#""actorId":"local-admin","targetId":"p","visibleCount":0}"#,
        )
    );
}

#[test]
fn records_append_and_the_mode_is_restored() {
    let dir = TempDir::new("aud-append");
    let log = AuditLog::open(&dir.0);
    fs::write(log.path(), "earlier line\n").unwrap();
    fs::set_permissions(log.path(), fs::Permissions::from_mode(0o644)).unwrap();
    for (i, event) in AUDIT_EVENTS.iter().enumerate() {
        let e = AuditEntry {
            event,
            outcome: "observed",
            ..AuditEntry::default()
        };
        log.record(&e, i as i64).unwrap();
    }
    let text = fs::read_to_string(log.path()).unwrap();
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 1 + AUDIT_EVENTS.len());
    assert_eq!(lines[0], "earlier line");
    for (i, line) in lines[1..].iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["event"], AUDIT_EVENTS[i]);
        assert_eq!(v["timestamp"], i as i64);
    }
    assert!(text.ends_with('\n'));
    assert_eq!(
        fs::metadata(log.path()).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn unknown_events_and_outcomes_are_refused_without_writing() {
    let dir = TempDir::new("aud-unknown");
    let log = AuditLog::open(&dir.0);
    for e in [
        AuditEntry {
            event: "remote_conect",
            ..connect()
        },
        AuditEntry {
            outcome: "maybe",
            ..connect()
        },
        AuditEntry::default(),
    ] {
        let err = log.record(&e, 1).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    }
    assert!(!log.path().exists());
}

#[test]
fn a_symlink_or_a_non_file_at_the_path_is_refused_not_followed() {
    let dir = TempDir::new("aud-link");
    let log = AuditLog::open(&dir.0);
    let target = dir.0.join("elsewhere");
    fs::write(&target, "untouched").unwrap();
    symlink(&target, log.path()).unwrap();
    let err = log.record(&connect(), 1).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "untouched");
    // A dangling link would otherwise create its target.
    fs::remove_file(log.path()).unwrap();
    let missing = dir.0.join("missing");
    symlink(&missing, log.path()).unwrap();
    assert!(log.record(&connect(), 1).is_err());
    assert!(!missing.exists());
    fs::remove_file(log.path()).unwrap();

    fs::create_dir(log.path()).unwrap();
    assert!(log.record(&connect(), 1).is_err());
    fs::remove_dir(log.path()).unwrap();

    // A FIFO neither blocks the broker nor takes the line.
    let c_path = CString::new(log.path().as_os_str().as_bytes()).unwrap();
    // SAFETY: c_path is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    assert!(log.record(&connect(), 1).is_err());
}
