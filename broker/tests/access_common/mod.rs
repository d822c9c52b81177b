//! Helpers shared by the remote-access registry tests.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use agent_intercom_broker::access::{
    ACCESS_FILE_NAME, AccessError, ChildRequest, EnrollmentTemplate, PrincipalRecord, Registry,
};

use crate::common::TempDir;

pub const NOW: i64 = 1_800_000_000_000;

/// depth, max_depth, max_children, and the refusal they get.
pub type Limits = (Option<u32>, Option<u32>, Option<u32>, &'static str);

pub fn template() -> EnrollmentTemplate {
    EnrollmentTemplate {
        name: "ika/manager".into(),
        parent_session_id: "local-root".into(),
        root_session_id: "local-root".into(),
        remote_host_id: "ika-dev-v3".into(),
        ..EnrollmentTemplate::default()
    }
}

pub fn delegating(max_depth: u32, max_children: u32) -> EnrollmentTemplate {
    EnrollmentTemplate {
        can_delegate: true,
        max_depth: Some(max_depth),
        max_children: Some(max_children),
        ..template()
    }
}

pub fn child(name: &str) -> ChildRequest {
    ChildRequest {
        name: name.into(),
        ..ChildRequest::default()
    }
}

pub fn open(dir: &TempDir) -> Registry {
    Registry::open(&dir.0).expect("registry opens")
}

pub fn enroll(reg: &mut Registry, t: EnrollmentTemplate, now: i64) -> (PrincipalRecord, String) {
    let issued = reg.issue_enrollment(t, None, now).expect("issued");
    reg.consume_enrollment(&issued.enrollment_token, now)
        .expect("consumed")
}

pub fn enroll_child(
    reg: &mut Registry,
    parent: &PrincipalRecord,
    r: ChildRequest,
    now: i64,
) -> (PrincipalRecord, String) {
    let issued = reg
        .issue_child_enrollment(&parent.id, parent.generation, r, None, now)
        .expect("child issued");
    reg.consume_enrollment(&issued.enrollment_token, now)
        .expect("child consumed")
}

#[track_caller]
pub fn refused<T: std::fmt::Debug>(result: Result<T, AccessError>, code: &str, message: &str) {
    let err = result.expect_err("must be refused");
    assert_eq!(err.code(), code, "{err}");
    assert_eq!(err.to_string(), message);
}

/// The file holds exactly the in-memory state, and a fresh load reads the same state back (the
/// same members and values, principals in the same order; only a loaded `adminCredentialHash`
/// moves to second place, as in the Pi broker's loader).
#[track_caller]
pub fn assert_reloads(dir: &Path, reg: &Registry) {
    let text = fs::read_to_string(dir.join(ACCESS_FILE_NAME)).expect("access file");
    assert_eq!(text, reg.snapshot_json());
    let again = Registry::open(dir).expect("reloads");
    let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
    assert_eq!(parse(&again.snapshot_json()), parse(&text));
    assert_eq!(
        again.principals().collect::<Vec<_>>(),
        reg.principals().collect::<Vec<_>>()
    );
    assert_eq!(again.enrollment_count(), reg.enrollment_count());
}

pub fn ids(records: &[PrincipalRecord]) -> Vec<&str> {
    records.iter().map(|p| p.id.as_str()).collect()
}
