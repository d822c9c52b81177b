//! The remote-access files: `broker-access.json` and `broker-admin.json` exactly as the Pi
//! broker writes them (fixtures in tests/data/access were produced by the Pi adapter's own
//! registry, see generate.mts there), refusal of files we cannot understand, symlinks never
//! followed, and every failed write leaving the registry as it was.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use agent_intercom_broker::access::{
    ACCESS_FILE_NAME, ADMIN_FILE_NAME, AccessError, ChildRequest, EnrollmentTemplate,
    PrincipalState, Registry,
};
use common::TempDir;
use serde_json::Value;

const NOW: i64 = 1_800_000_000_000;
/// The admin token generate.mts gives Pi for the `*-new-admin` and `v1-migrated` fixtures.
const FIXTURE_ADMIN_TOKEN: &str = "fixture-admin-token-0123456789-abcdefghijklmnop";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/access")
        .join(name)
}

fn read_data(name: &str) -> String {
    fs::read_to_string(data(name)).unwrap()
}

fn secrets() -> Value {
    serde_json::from_str(&read_data("pi-v2-secrets.json")).unwrap()
}

fn secret<'v>(v: &'v Value, path: &[&str]) -> &'v str {
    path.iter()
        .fold(v, |v, key| &v[*key])
        .as_str()
        .unwrap_or_else(|| panic!("{path:?} in pi-v2-secrets.json"))
}

/// A directory holding `fixture` as broker-access.json (and optionally an admin file).
fn dir_with(name: &str, fixture: &str) -> TempDir {
    let dir = TempDir::new(name);
    fs::copy(data(fixture), dir.0.join(ACCESS_FILE_NAME)).unwrap();
    dir
}

fn access_text(dir: &TempDir) -> String {
    fs::read_to_string(dir.0.join(ACCESS_FILE_NAME)).unwrap()
}

/// Same members and values (a reloaded state writes a loaded `adminCredentialHash` second, as
/// Pi's loader does, where a fresh process appended it last).
#[track_caller]
fn same_state(a: &str, b: &str) {
    let a: Value = serde_json::from_str(a).unwrap();
    let b: Value = serde_json::from_str(b).unwrap();
    assert_eq!(a, b);
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn template() -> EnrollmentTemplate {
    EnrollmentTemplate {
        name: "n".into(),
        parent_session_id: "local-root".into(),
        root_session_id: "local-root".into(),
        remote_host_id: "h".into(),
        ..EnrollmentTemplate::default()
    }
}

#[track_caller]
fn io_error<T: std::fmt::Debug>(result: Result<T, AccessError>) -> String {
    match result.expect_err("must fail") {
        AccessError::Io(e) => e.to_string(),
        other => panic!("expected an IO error, got {other:?}"),
    }
}

#[test]
fn a_pi_written_registry_loads_and_is_written_back_byte_for_byte() {
    let dir = dir_with("accf-pi", "pi-v2.json");
    let reg = Registry::open(&dir.0).unwrap();
    // Pi wrote the hash last (added in a running broker); loaded, it comes second, in Pi too.
    let loaded = reg.snapshot_json();
    same_state(&loaded, &read_data("pi-v2.json"));
    assert!(loaded.starts_with(r#"{"version":2,"adminCredentialHash":""#));
    assert!(loaded.ends_with(r#"}}}"#));
    let s = secrets();
    let manager = secret(&s, &["principals", "ika/manager", "id"]);
    let lead = secret(&s, &["principals", "ika/lead", "id"]);
    let other = secret(&s, &["principals", "other", "id"]);
    let names: Vec<_> = reg.principals().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["ika/manager", "ika/lead", "other"]);
    let m = reg
        .authenticate_session(
            manager,
            1,
            secret(&s, &["principals", "ika/manager", "sessionCredential"]),
            NOW,
        )
        .unwrap();
    assert!(m.can_delegate);
    assert_eq!((m.depth, m.max_depth, m.max_children), (1, 3, 2));
    let l = reg
        .authenticate_session(
            lead,
            1,
            secret(&s, &["principals", "ika/lead", "sessionCredential"]),
            NOW,
        )
        .unwrap();
    assert_eq!(l.parent_session_id, manager);
    let revoked = reg.authenticate_session(
        other,
        2,
        secret(&s, &["principals", "other", "sessionCredential"]),
        NOW,
    );
    assert_eq!(revoked.unwrap_err().code(), "REVOKED_CREDENTIAL");
    assert_eq!(reg.enrollment_count(), 2);
    let tree: Vec<_> = reg
        .inspect_subtree(manager)
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(tree, ["ika/manager", "ika/lead"]);
}

#[test]
fn a_pi_token_is_consumed_and_a_pi_admin_file_accepted() {
    let dir = dir_with("accf-pi-consume", "pi-v2.json");
    fs::copy(data("pi-v2-admin.json"), dir.0.join(ADMIN_FILE_NAME)).unwrap();
    let inode = fs::metadata(dir.0.join(ACCESS_FILE_NAME)).unwrap().ino();
    let mut reg = Registry::open(&dir.0).unwrap();
    reg.ensure_admin_credential().unwrap();
    // Same token, same hash: nothing to write.
    assert_eq!(
        fs::metadata(dir.0.join(ACCESS_FILE_NAME)).unwrap().ino(),
        inode
    );
    assert_eq!(mode(&dir.0.join(ADMIN_FILE_NAME)), 0o600);
    let s = secrets();
    assert!(reg.authenticate_admin(secret(&s, &["adminToken"])));
    assert!(!reg.authenticate_admin(&format!("{}x", secret(&s, &["adminToken"]))));
    let token = secret(
        &s,
        &["enrollments", "ika/pending-worker", "enrollmentToken"],
    );
    let (worker, _) = reg.consume_enrollment(token, NOW + 60_000).unwrap();
    assert_eq!(worker.name, "ika/pending-worker");
    assert_eq!(
        worker.parent_session_id,
        secret(&s, &["principals", "ika/lead", "id"])
    );
    assert_eq!(
        (worker.depth, worker.max_depth, worker.max_children),
        (3, 3, 0)
    );
    let next = secret(&s, &["enrollments", "ika/next", "enrollmentToken"]);
    let (p, _) = reg.consume_enrollment(next, NOW + 60_000).unwrap();
    assert_eq!(p.expires_at, 1_900_000_000_000);
    assert_eq!(
        Registry::open(&dir.0).unwrap().snapshot_json(),
        access_text(&dir)
    );
}

/// Deterministic operations give exactly the bytes the Pi registry wrote for the same operation
/// on the same file.
#[test]
fn deterministic_operations_write_what_the_pi_broker_writes() {
    let s = secrets();
    let manager = secret(&s, &["principals", "ika/manager", "id"]).to_owned();
    let lead = secret(&s, &["principals", "ika/lead", "id"]).to_owned();
    let pending = secret(
        &s,
        &["enrollments", "ika/pending-worker", "enrollmentToken"],
    )
    .to_owned();
    type Op = Box<dyn Fn(&mut Registry)>;
    let cases: Vec<(&str, &str, Op)> = vec![
        (
            "pi-v2.json",
            "pi-v2-revoke.json",
            Box::new(move |r| {
                r.revoke(&manager, NOW + 100).unwrap();
            }),
        ),
        (
            "pi-v2.json",
            "pi-v2-adopt.json",
            Box::new(move |r| {
                r.adopt_subtree(&lead, "other-local-root", "other-local-root", NOW + 100)
                    .unwrap();
            }),
        ),
        (
            "pi-v2.json",
            "pi-v2-expire.json",
            Box::new(|r| {
                assert_eq!(r.expire(1_802_592_000_000).unwrap().len(), 2);
            }),
        ),
        (
            "pi-v2.json",
            "pi-v2-consume-expired.json",
            Box::new(move |r| {
                let err = r.consume_enrollment(&pending, NOW + 60_010).unwrap_err();
                assert_eq!(err.to_string(), "Enrollment credential has expired");
            }),
        ),
        (
            "pi-v2.json",
            "pi-v2-new-admin.json",
            Box::new(|r| {
                fs::write(
                    r.admin_credential_path(),
                    format!(r#"{{"version":1,"adminToken":"{FIXTURE_ADMIN_TOKEN}"}}"#),
                )
                .unwrap();
                r.ensure_admin_credential().unwrap();
                assert!(r.authenticate_admin(FIXTURE_ADMIN_TOKEN));
            }),
        ),
        (
            "pi-odd.json",
            "pi-odd-revoke.json",
            Box::new(|r| {
                assert_eq!(r.revoke("7", NOW + 100).unwrap().len(), 2);
            }),
        ),
    ];
    for (input, expected, op) in cases {
        let dir = dir_with("accf-same", input);
        let mut reg = Registry::open(&dir.0).unwrap();
        op(&mut reg);
        assert_eq!(access_text(&dir), read_data(expected), "{expected}");
        assert_eq!(reg.snapshot_json(), read_data(expected), "{expected}");
        assert_eq!(mode(&dir.0.join(ACCESS_FILE_NAME)), 0o600);
    }
}

#[test]
fn a_version_one_registry_migrates_as_the_pi_broker_migrates_it() {
    let dir = dir_with("accf-v1", "pi-v1.json");
    let mut reg = Registry::open(&dir.0).unwrap();
    let legacy = reg.get("legacy").unwrap().clone();
    assert!(!legacy.can_delegate);
    assert_eq!(
        (legacy.depth, legacy.max_depth, legacy.max_children),
        (1, 1, 0)
    );
    assert_eq!(legacy.state, PrincipalState::Active);
    assert!(legacy.metadata_text().contains(r#""policy":"remote-tree""#));
    // Loading alone writes nothing.
    assert_eq!(access_text(&dir), read_data("pi-v1.json"));
    fs::write(
        reg.admin_credential_path(),
        format!(r#"{{"version":1,"adminToken":"{FIXTURE_ADMIN_TOKEN}"}}"#),
    )
    .unwrap();
    reg.ensure_admin_credential().unwrap();
    assert_eq!(access_text(&dir), read_data("pi-v1-migrated.json"));
    // The migrated file loads as version 2 and is stable from then on.
    let reopened = Registry::open(&dir.0).unwrap();
    same_state(&reopened.snapshot_json(), &read_data("pi-v1-migrated.json"));
    assert_eq!(reopened.get("legacy"), Some(&legacy));
}

#[test]
fn a_fresh_directory_gets_an_admin_credential_as_the_pi_broker_makes_it() {
    let dir = TempDir::new("accf-admin");
    let mut reg = Registry::open(&dir.0).unwrap();
    assert!(!reg.authenticate_admin(""));
    reg.ensure_admin_credential().unwrap();
    let admin_path = dir.0.join(ADMIN_FILE_NAME);
    assert_eq!(mode(&admin_path), 0o600);
    assert_eq!(mode(&dir.0.join(ACCESS_FILE_NAME)), 0o600);
    let admin_text = fs::read_to_string(&admin_path).unwrap();
    let admin: Value = serde_json::from_str(&admin_text).unwrap();
    let token = admin["adminToken"].as_str().unwrap().to_owned();
    assert_eq!(
        admin_text,
        format!(r#"{{"version":1,"adminToken":"{token}"}}"#)
    );
    assert_eq!(token.len(), 43);
    assert!(reg.authenticate_admin(&token));
    assert!(!reg.authenticate_admin(&format!("{token}x")));
    assert!(!reg.authenticate_admin(&token[..42]));
    // As in a fresh Pi broker, the hash is added after the other members.
    let text = access_text(&dir);
    assert!(!text.contains(&token));
    let hash = serde_json::from_str::<Value>(&text).unwrap()["adminCredentialHash"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        text,
        format!(
            r#"{{"version":2,"principals":{{}},"enrollments":{{}},"adminCredentialHash":"{hash}"}}"#
        )
    );

    // The next start keeps the token, restores the file mode and writes nothing.
    fs::set_permissions(&admin_path, fs::Permissions::from_mode(0o644)).unwrap();
    let inode = fs::metadata(dir.0.join(ACCESS_FILE_NAME)).unwrap().ino();
    let mut again = Registry::open(&dir.0).unwrap();
    again.ensure_admin_credential().unwrap();
    assert_eq!(fs::read_to_string(&admin_path).unwrap(), admin_text);
    assert_eq!(mode(&admin_path), 0o600);
    assert_eq!(
        fs::metadata(dir.0.join(ACCESS_FILE_NAME)).unwrap().ino(),
        inode
    );
    assert!(again.authenticate_admin(&token));
}

#[test]
fn an_unusable_admin_credential_is_replaced_as_the_pi_broker_replaces_it() {
    for bad in [
        r#"{"version":1,"adminToken":"short"}"#.to_owned(),
        format!(r#"{{"version":2,"adminToken":"{FIXTURE_ADMIN_TOKEN}"}}"#),
        format!(r#"{{"adminToken":"{FIXTURE_ADMIN_TOKEN}"}}"#),
        r#"{"version":1,"adminToken":42}"#.to_owned(),
        "[]".to_owned(),
        "null".to_owned(),
    ] {
        let dir = TempDir::new("accf-admin-bad");
        fs::write(dir.0.join(ADMIN_FILE_NAME), &bad).unwrap();
        let mut reg = Registry::open(&dir.0).unwrap();
        reg.ensure_admin_credential().unwrap();
        let admin: Value =
            serde_json::from_str(&fs::read_to_string(dir.0.join(ADMIN_FILE_NAME)).unwrap())
                .unwrap();
        let token = admin["adminToken"].as_str().unwrap();
        assert_eq!(token.len(), 43, "{bad}");
        assert!(reg.authenticate_admin(token));
        assert!(!reg.authenticate_admin(FIXTURE_ADMIN_TOKEN));
    }
}

#[test]
fn an_admin_file_that_is_not_json_or_not_a_file_is_refused_and_left_alone() {
    let dir = TempDir::new("accf-admin-refused");
    let admin_path = dir.0.join(ADMIN_FILE_NAME);
    fs::write(&admin_path, "{\"version\":1,").unwrap();
    let mut reg = Registry::open(&dir.0).unwrap();
    let err = reg.ensure_admin_credential().unwrap_err();
    assert_eq!(err.code(), "INVALID_REQUEST");
    assert!(
        err.to_string().contains(&admin_path.display().to_string()),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&admin_path).unwrap(), "{\"version\":1,");
    assert!(!dir.0.join(ACCESS_FILE_NAME).exists());

    // A symlink is refused and its target neither read into the state nor rewritten.
    fs::remove_file(&admin_path).unwrap();
    let target = dir.0.join("elsewhere.json");
    let planted = format!(r#"{{"version":1,"adminToken":"{FIXTURE_ADMIN_TOKEN}"}}"#);
    fs::write(&target, &planted).unwrap();
    symlink(&target, &admin_path).unwrap();
    let message = io_error(reg.ensure_admin_credential());
    assert!(message.contains("symbolic link"), "{message}");
    assert!(!reg.authenticate_admin(FIXTURE_ADMIN_TOKEN));
    assert_eq!(fs::read_to_string(&target).unwrap(), planted);
    assert!(
        fs::symlink_metadata(&admin_path)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    fs::remove_file(&admin_path).unwrap();
    fs::create_dir(&admin_path).unwrap();
    let message = io_error(reg.ensure_admin_credential());
    assert!(message.contains("not a regular file"), "{message}");
}

#[test]
fn a_registry_that_cannot_be_understood_is_refused_and_never_overwritten() {
    let principal = |extra: &str| {
        format!(
            concat!(
                r#"{{"version":2,"principals":{{"p":{{"id":"p","name":"p","credentialHash":"00","#,
                r#""parentSessionId":"r","rootSessionId":"r","remoteHostId":"h","generation":1,"#,
                r#""state":"active","expiresAt":5,"createdAt":1,"updatedAt":1{extra}}}}},"#,
                r#""enrollments":{{}}}}"#,
            ),
            extra = extra
        )
    };
    let enrollment = |template: &str| {
        format!(
            concat!(
                r#"{{"version":2,"principals":{{}},"enrollments":{{"e":{{"tokenHash":"e","#,
                r#""template":{template},"expiresAt":5,"createdAt":1}}}}}}"#,
            ),
            template = template
        )
    };
    let good_template =
        r#"{"name":"n","parentSessionId":"r","rootSessionId":"r","remoteHostId":"h","expiresAt":9"#;
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "unexpected end of JSON input"),
        ("{\"version\":2,".into(), "expected a property name"),
        ("[]".into(), "expected object"),
        (
            r#"{"version":3,"principals":{},"enrollments":{}}"#.into(),
            "unsupported version 3 (this broker reads versions 1 and 2)",
        ),
        (
            r#"{"version":"2","principals":{},"enrollments":{}}"#.into(),
            "unsupported version",
        ),
        (
            r#"{"principals":{},"enrollments":{}}"#.into(),
            "unsupported version",
        ),
        (
            r#"{"version":2,"principals":[],"enrollments":{}}"#.into(),
            "invalid principals",
        ),
        (
            r#"{"version":2,"principals":{}}"#.into(),
            "invalid enrollments",
        ),
        (
            r#"{"version":2,"adminCredentialHash":1,"principals":{},"enrollments":{}}"#.into(),
            "invalid admin credential hash",
        ),
        (
            r#"{"version":2,"principals":{"p":{"id":"q"}},"enrollments":{}}"#.into(),
            "invalid principal p",
        ),
        (principal(r#","state":"gone""#), "invalid principal p"),
        (principal(r#","generation":1.5"#), "invalid principal p"),
        (principal(r#","generation":-1"#), "invalid principal p"),
        (principal(r#","expiresAt":"soon""#), "invalid principal p"),
        (principal(r#","depth":0"#), "Invalid principal depth"),
        (principal(r#","depth":"2""#), "Invalid principal depth"),
        (
            principal(r#","depth":2,"maxDepth":1"#),
            "Invalid maximum delegation depth",
        ),
        (
            principal(r#","maxChildren":129"#),
            "Invalid maximum child count",
        ),
        (enrollment("[]"), "invalid enrollment e"),
        (enrollment(r#"{"name":"n"}"#), "invalid enrollment e"),
        (
            enrollment(&format!("{good_template},\"depth\":33}}")),
            "Invalid enrollment depth",
        ),
        (
            enrollment(&format!("{good_template},\"depth\":2,\"maxDepth\":1}}")),
            "Invalid enrollment maximum depth",
        ),
        (
            enrollment(&format!("{good_template},\"maxChildren\":-1}}")),
            "Invalid enrollment maximum children",
        ),
        (
            r#"{"version":2,"principals":{},"enrollments":{"e":{"template":{}}}}"#.into(),
            "invalid enrollment e",
        ),
    ];
    for (text, why) in cases {
        let dir = TempDir::new("accf-bad");
        let path = dir.0.join(ACCESS_FILE_NAME);
        fs::write(&path, &text).unwrap();
        let err = Registry::open(&dir.0).unwrap_err();
        assert_eq!(err.code(), "INVALID_REQUEST", "{text}");
        let message = err.to_string();
        let prefix = format!("Invalid remote access registry at {}: ", path.display());
        assert!(message.starts_with(&prefix), "{message}");
        assert!(
            message[prefix.len()..].starts_with(why),
            "{text}: {message}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), text, "left untouched");
    }
    // The loader's own good case, for contrast.
    let dir = TempDir::new("accf-good");
    fs::write(
        dir.0.join(ACCESS_FILE_NAME),
        enrollment(&format!("{good_template}}}")),
    )
    .unwrap();
    assert_eq!(Registry::open(&dir.0).unwrap().enrollment_count(), 1);
}

#[test]
fn a_registry_path_that_is_a_symlink_or_not_a_file_is_refused() {
    let dir = TempDir::new("accf-link");
    let path = dir.0.join(ACCESS_FILE_NAME);
    let target = dir.0.join("target.json");
    fs::copy(data("pi-v2.json"), &target).unwrap();
    symlink(&target, &path).unwrap();
    let message = io_error(Registry::open(&dir.0));
    assert!(message.contains("symbolic link") && message.contains(&path.display().to_string()));
    // A dangling link too (the Pi broker would have treated it as no file).
    fs::remove_file(&path).unwrap();
    symlink(dir.0.join("missing.json"), &path).unwrap();
    assert!(io_error(Registry::open(&dir.0)).contains("symbolic link"));
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    assert!(io_error(Registry::open(&dir.0)).contains("not a regular file"));
    fs::remove_dir(&path).unwrap();
    fs::write(&path, [0x7b, 0xff, 0x7d]).unwrap();
    let err = Registry::open(&dir.0).unwrap_err();
    assert!(err.to_string().contains("not UTF-8"), "{err}");
}

/// Every mutating operation, with the registry file's path made unwritable (a directory put in
/// its place, which works as root too): IO error, state exactly as before, and it all works once
/// the path is free again.
#[test]
fn a_failed_write_leaves_the_registry_exactly_as_it_was() {
    let dir = TempDir::new("accf-rollback");
    let path = dir.0.join(ACCESS_FILE_NAME);
    let mut reg = Registry::open(&dir.0).unwrap();
    reg.ensure_admin_credential().unwrap();
    let admin: Value =
        serde_json::from_str(&fs::read_to_string(dir.0.join(ADMIN_FILE_NAME)).unwrap()).unwrap();
    let admin_token = admin["adminToken"].as_str().unwrap().to_owned();
    let parent_t = EnrollmentTemplate {
        can_delegate: true,
        max_depth: Some(3),
        max_children: Some(2),
        expires_at: Some(NOW + 10_000),
        ..template()
    };
    let issued = reg.issue_enrollment(parent_t, None, NOW).unwrap();
    let (parent, parent_credential) = reg
        .consume_enrollment(&issued.enrollment_token, NOW)
        .unwrap();
    let pending = reg
        .issue_child_enrollment(
            &parent.id,
            1,
            ChildRequest {
                name: "c".into(),
                ..Default::default()
            },
            None,
            NOW,
        )
        .unwrap();
    let expired = reg.issue_enrollment(template(), Some(10), NOW).unwrap();
    let saved = fs::read_to_string(&path).unwrap();
    let before = reg.snapshot_json();

    let block = || {
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
    };
    let unblock = || {
        fs::remove_dir(&path).unwrap();
        fs::write(&path, &saved).unwrap();
    };
    block();
    let failures = [
        io_error(reg.issue_enrollment(template(), None, NOW)),
        io_error(reg.issue_child_enrollment(
            &parent.id,
            1,
            ChildRequest {
                name: "d".into(),
                ..Default::default()
            },
            None,
            NOW,
        )),
        io_error(reg.consume_enrollment(&pending.enrollment_token, NOW)),
        io_error(reg.consume_enrollment(&expired.enrollment_token, NOW + 10)),
        io_error(reg.adopt_subtree(&parent.id, "other-root", "other-root", NOW)),
        io_error(reg.revoke(&parent.id, NOW)),
        io_error(reg.expire(NOW + 10_000)),
    ];
    for message in &failures {
        assert!(message.contains("not a regular file"), "{message}");
    }
    assert_eq!(reg.snapshot_json(), before);
    // The consumed-but-unstored token is still there, the revoke did not happen.
    assert_eq!(reg.enrollment_count(), 2);
    assert!(
        reg.authenticate_session(&parent.id, 1, &parent_credential, NOW)
            .is_ok()
    );
    // A changed admin token that cannot be recorded is not accepted either.
    fs::write(
        dir.0.join(ADMIN_FILE_NAME),
        format!(r#"{{"version":1,"adminToken":"{FIXTURE_ADMIN_TOKEN}"}}"#),
    )
    .unwrap();
    io_error(reg.ensure_admin_credential());
    assert!(reg.authenticate_admin(&admin_token));
    assert!(!reg.authenticate_admin(FIXTURE_ADMIN_TOKEN));
    // No temporary file is left behind.
    let leftovers: Vec<_> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    unblock();
    let (kid, _) = reg
        .consume_enrollment(&pending.enrollment_token, NOW)
        .unwrap();
    assert_eq!(kid.parent_session_id, parent.id);
    assert_eq!(reg.revoke(&parent.id, NOW).unwrap().len(), 2);
    same_state(
        &Registry::open(&dir.0).unwrap().snapshot_json(),
        &reg.snapshot_json(),
    );
}

#[test]
fn a_symlink_planted_at_the_registry_path_is_not_written_through() {
    let dir = TempDir::new("accf-plant");
    let path = dir.0.join(ACCESS_FILE_NAME);
    let mut reg = Registry::open(&dir.0).unwrap();
    reg.issue_enrollment(template(), None, NOW).unwrap();
    let before = reg.snapshot_json();
    let victim = dir.0.join("victim.txt");
    fs::write(&victim, "keep me").unwrap();
    fs::remove_file(&path).unwrap();
    symlink(&victim, &path).unwrap();
    let message = io_error(reg.issue_enrollment(template(), None, NOW));
    assert!(message.contains("symbolic link"), "{message}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(
        fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(reg.snapshot_json(), before);
}

#[test]
fn no_secret_reaches_the_registry_file() {
    let dir = TempDir::new("accf-scan");
    let mut reg = Registry::open(&dir.0).unwrap();
    reg.ensure_admin_credential().unwrap();
    let admin: Value =
        serde_json::from_str(&fs::read_to_string(dir.0.join(ADMIN_FILE_NAME)).unwrap()).unwrap();
    let mut secrets = vec![admin["adminToken"].as_str().unwrap().to_owned()];
    let t = EnrollmentTemplate {
        can_delegate: true,
        max_depth: Some(3),
        max_children: Some(3),
        ..template()
    };
    let issued = reg.issue_enrollment(t, None, NOW).unwrap();
    secrets.push(issued.enrollment_token.clone());
    let (p, credential) = reg
        .consume_enrollment(&issued.enrollment_token, NOW)
        .unwrap();
    secrets.push(credential);
    for i in 0..2 {
        let child = reg
            .issue_child_enrollment(
                &p.id,
                1,
                ChildRequest {
                    name: format!("c{i}"),
                    ..Default::default()
                },
                None,
                NOW,
            )
            .unwrap();
        secrets.push(child.enrollment_token.clone());
        if i == 0 {
            let (_, c) = reg
                .consume_enrollment(&child.enrollment_token, NOW)
                .unwrap();
            secrets.push(c);
        }
    }
    let file = fs::read(dir.0.join(ACCESS_FILE_NAME)).unwrap();
    for s in &secrets {
        assert!(
            !file.windows(s.len()).any(|w| w == s.as_bytes()),
            "secret in the file"
        );
    }
    let admin_file = fs::read(dir.0.join(ADMIN_FILE_NAME)).unwrap();
    for s in &secrets[1..] {
        assert!(!admin_file.windows(s.len()).any(|w| w == s.as_bytes()));
    }
}

/// The other direction: the Pi adapter's own registry loads files our registry wrote, accepts
/// our admin token, credentials and enrollment token. Needs node, tsx and the Pi adapter:
/// `PI_ADAPTER_DIR=/work/ext/pi TSX=/work/tools/node_modules/.bin/tsx cargo test -p
/// agent-intercom-broker --test access_files -- --ignored`.
#[test]
#[ignore = "needs node, tsx and the Pi adapter (PI_ADAPTER_DIR, TSX)"]
fn pi_loads_our_files() {
    let pi = std::env::var("PI_ADAPTER_DIR").unwrap_or_else(|_| "/work/ext/pi".into());
    let tsx = std::env::var("TSX").unwrap_or_else(|_| "/work/tools/node_modules/.bin/tsx".into());
    let dir = TempDir::new("accf-topi");
    let mut reg = Registry::open(&dir.0).unwrap();
    reg.ensure_admin_credential().unwrap();
    let t = EnrollmentTemplate {
        can_delegate: true,
        max_depth: Some(3),
        max_children: Some(2),
        ..template()
    };
    let issued = reg.issue_enrollment(t, None, NOW).unwrap();
    let (p, credential) = reg
        .consume_enrollment(&issued.enrollment_token, NOW)
        .unwrap();
    let (q, q_credential) = {
        let child = reg
            .issue_child_enrollment(
                &p.id,
                1,
                ChildRequest {
                    name: "kid".into(),
                    can_delegate: true,
                    max_depth: Some(3),
                    max_children: Some(1),
                    ..Default::default()
                },
                None,
                NOW,
            )
            .unwrap();
        reg.consume_enrollment(&child.enrollment_token, NOW)
            .unwrap()
    };
    let pending = reg
        .issue_child_enrollment(
            &q.id,
            1,
            ChildRequest {
                name: "grandkid".into(),
                ..Default::default()
            },
            None,
            NOW,
        )
        .unwrap();
    let (r, r_credential) = {
        let issued = reg.issue_enrollment(template(), None, NOW).unwrap();
        reg.consume_enrollment(&issued.enrollment_token, NOW)
            .unwrap()
    };
    reg.adopt_subtree(&r.id, &p.id, "local-root", NOW).unwrap();
    let request = serde_json::json!({
        "now": NOW + 1,
        "principals": [
            {"id": p.id, "generation": 1, "sessionCredential": credential},
            {"id": q.id, "generation": 1, "sessionCredential": q_credential},
            {"id": r.id, "generation": 2, "sessionCredential": r_credential},
            {"id": r.id, "generation": 1, "sessionCredential": r_credential},
        ],
        "enrollmentToken": pending.enrollment_token,
        "inspect": p.id,
    });
    let request_path = dir.0.join("request.json");
    fs::write(&request_path, request.to_string()).unwrap();
    let ours_before = fs::read_to_string(dir.0.join(ACCESS_FILE_NAME)).unwrap();
    let output = std::process::Command::new(tsx)
        .arg(data("pi-check.mts"))
        .arg(&pi)
        .arg(&dir.0)
        .arg(&request_path)
        .output()
        .expect("tsx runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let admin: Value =
        serde_json::from_str(&fs::read_to_string(dir.0.join(ADMIN_FILE_NAME)).unwrap()).unwrap();
    assert_eq!(result["adminToken"], admin["adminToken"]);
    assert_eq!(result["adminAuthenticates"], true);
    assert_eq!(
        result["sessions"],
        serde_json::json!([{"ok": "n"}, {"ok": "kid"}, {"ok": "n"}, {"error": "STALE_GENERATION"}])
    );
    assert_eq!(
        result["consumed"],
        serde_json::json!({"ok": {"parentSessionId": q.id, "depth": 3, "name": "grandkid"}})
    );
    assert_eq!(
        result["inspected"],
        serde_json::json!(["n", "kid", "n", "grandkid"])
    );
    // What Pi wrote after consuming loads in ours, and Pi kept our bytes for everything else.
    let after = Registry::open(&dir.0).unwrap();
    assert_eq!(
        after.snapshot_json(),
        fs::read_to_string(dir.0.join(ACCESS_FILE_NAME)).unwrap()
    );
    assert_eq!(after.principals().count(), 4);
    for id in [&p.id, &q.id, &r.id] {
        assert_eq!(after.get(id), reg.get(id));
    }
    assert_eq!(after.enrollment_count(), 0);
    // Pi rewrote the file with our records byte for byte, plus the one it added.
    let added = after.principals().last().unwrap().metadata_text();
    assert!(added.contains("grandkid"));
    assert!(ours_before.len() < after.snapshot_json().len());
}
