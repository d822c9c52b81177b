//! The remote-access registry's limits: token TTL, expiry, depth, child counts, text fields,
//! and what a child enrollment may ask of its parent.

mod access_common;
mod common;

use std::fs;

use access_common::*;
use agent_intercom_broker::access::{
    ACCESS_FILE_NAME, ChildRequest, EnrollmentTemplate, MAX_ENROLLMENT_TTL_MS, Registry,
};
use common::TempDir;

#[test]
fn a_child_enrollment_needs_a_current_parent() {
    let dir = TempDir::new("acc-childparent");
    let mut reg = open(&dir);
    let (p, _) = enroll(&mut reg, delegating(2, 2), NOW);
    refused(
        reg.issue_child_enrollment("nobody", 1, child("c"), None, NOW),
        "INVALID_CREDENTIAL",
        "Remote principal does not exist",
    );
    refused(
        reg.issue_child_enrollment(&p.id, 2, child("c"), None, NOW),
        "STALE_GENERATION",
        "Session credential generation is stale",
    );
    refused(
        reg.issue_child_enrollment(&p.id, 1, child("c"), None, p.expires_at),
        "EXPIRED_CREDENTIAL",
        "Session credential has expired",
    );
    reg.revoke(&p.id, NOW).unwrap();
    refused(
        reg.issue_child_enrollment(&p.id, 2, child("c"), None, NOW),
        "REVOKED_CREDENTIAL",
        "Session credential is revoked",
    );
    assert_eq!(reg.enrollment_count(), 0);
}

#[test]
fn the_child_count_is_active_children_plus_unexpired_pending_enrollments() {
    let dir = TempDir::new("acc-childcount");
    let mut reg = open(&dir);
    let (p, _) = enroll(&mut reg, delegating(2, 2), NOW);
    let (a, _) = enroll_child(&mut reg, &p, child("a"), NOW);
    let pending = reg
        .issue_child_enrollment(&p.id, 1, child("b"), Some(1000), NOW)
        .unwrap();
    refused(
        reg.issue_child_enrollment(&p.id, 1, child("c"), None, NOW),
        "INVALID_ENROLLMENT",
        "Parent child limit is exhausted",
    );
    // Once the pending token expires it no longer counts.
    reg.issue_child_enrollment(&p.id, 1, child("c"), None, NOW + 1000)
        .unwrap();
    refused(
        reg.issue_child_enrollment(&p.id, 1, child("d"), None, NOW + 1000),
        "INVALID_ENROLLMENT",
        "Parent child limit is exhausted",
    );
    refused(
        reg.consume_enrollment(&pending.enrollment_token, NOW + 1000),
        "INVALID_ENROLLMENT",
        "Enrollment credential is invalid or already consumed",
    );
    // A revoked child frees its slot.
    reg.revoke(&a.id, NOW + 1000).unwrap();
    reg.issue_child_enrollment(&p.id, 1, child("d"), None, NOW + 1000)
        .unwrap();
    refused(
        reg.issue_child_enrollment(&p.id, 1, child("e"), None, NOW + 1000),
        "INVALID_ENROLLMENT",
        "Parent child limit is exhausted",
    );
    assert_reloads(&dir.0, &reg);
}

#[test]
fn child_limits_and_expiry_stay_within_the_parent() {
    let dir = TempDir::new("acc-childlimits");
    let mut reg = open(&dir);
    let (p, _) = enroll(
        &mut reg,
        EnrollmentTemplate {
            expires_at: Some(NOW + 10_000),
            ..delegating(3, 2)
        },
        NOW,
    );
    let ask =
        |r: ChildRequest, reg: &mut Registry| reg.issue_child_enrollment(&p.id, 1, r, None, NOW);
    refused(
        ask(
            ChildRequest {
                max_children: Some(3),
                ..child("c")
            },
            &mut reg,
        ),
        "INVALID_REQUEST",
        "Invalid child maximum count",
    );
    refused(
        ask(
            ChildRequest {
                max_depth: Some(1),
                ..child("c")
            },
            &mut reg,
        ),
        "INVALID_REQUEST",
        "Invalid child maximum depth",
    );
    for r in [
        ChildRequest {
            can_delegate: true,
            max_children: Some(1),
            ..child("c")
        },
        ChildRequest {
            can_delegate: true,
            max_depth: Some(3),
            ..child("c")
        },
    ] {
        refused(
            ask(r, &mut reg),
            "INVALID_REQUEST",
            "Delegating child requires remaining depth and child capacity",
        );
    }
    for expires_at in [NOW + 10_001, NOW, NOW - 1] {
        refused(
            ask(
                ChildRequest {
                    expires_at: Some(expires_at),
                    ..child("c")
                },
                &mut reg,
            ),
            "INVALID_REQUEST",
            "Child expiry must not exceed the parent expiry",
        );
    }
    refused(
        reg.issue_child_enrollment(&p.id, 1, child("c"), Some(0), NOW),
        "INVALID_REQUEST",
        "Invalid enrollment TTL",
    );
    refused(
        ask(child(" \t "), &mut reg),
        "INVALID_REQUEST",
        "Invalid principal name",
    );
    assert_eq!(reg.enrollment_count(), 0);
    let issued = ask(
        ChildRequest {
            expires_at: Some(NOW + 5_000),
            ..child("  short-lived  ")
        },
        &mut reg,
    )
    .unwrap();
    let (c, _) = reg
        .consume_enrollment(&issued.enrollment_token, NOW)
        .unwrap();
    assert_eq!(c.expires_at, NOW + 5_000);
    assert_eq!(c.name, "short-lived");
}

#[test]
fn delegation_depth_is_exhausted_at_the_parents_maximum() {
    // Only a loaded file (the Pi broker does not check this on load) or an old record can hold a
    // delegating principal with no depth left.
    let dir = TempDir::new("acc-depth");
    let record = concat!(
        r#"{"id":"p","name":"p","credentialHash":"00","parentSessionId":"r","rootSessionId":"r","#,
        r#""remoteHostId":"h","generation":1,"policy":"remote-tree","canDelegate":true,"depth":2,"#,
        r#""maxDepth":2,"maxChildren":4,"state":"active","expiresAt":1900000000000,"createdAt":1,"#,
        r#""updatedAt":1}"#,
    );
    fs::write(
        dir.0.join(ACCESS_FILE_NAME),
        format!(r#"{{"version":2,"principals":{{"p":{record}}},"enrollments":{{}}}}"#),
    )
    .unwrap();
    let mut reg = open(&dir);
    refused(
        reg.issue_child_enrollment("p", 1, child("c"), None, NOW),
        "INVALID_ENROLLMENT",
        "Parent delegation depth is exhausted",
    );
}

#[test]
fn enrollment_limits_match_the_pi_broker() {
    let dir = TempDir::new("acc-limits");
    let mut reg = open(&dir);
    let issue = |reg: &mut Registry, t: EnrollmentTemplate, ttl: Option<i64>| {
        reg.issue_enrollment(t, ttl, NOW)
    };
    for ttl in [0, -1, MAX_ENROLLMENT_TTL_MS + 1, i64::MAX] {
        refused(
            issue(&mut reg, template(), Some(ttl)),
            "INVALID_REQUEST",
            "Invalid enrollment TTL",
        );
    }
    let longest = issue(&mut reg, template(), Some(MAX_ENROLLMENT_TTL_MS)).unwrap();
    assert_eq!(longest.expires_at, NOW + 86_400_000);
    for expires_at in [NOW, NOW - 1, (1 << 53), i64::MAX] {
        refused(
            issue(
                &mut reg,
                EnrollmentTemplate {
                    expires_at: Some(expires_at),
                    ..template()
                },
                None,
            ),
            "INVALID_REQUEST",
            "Invalid principal expiry",
        );
    }
    let cases: [Limits; 6] = [
        (Some(0), None, None, "Invalid principal depth"),
        (Some(33), None, None, "Invalid principal depth"),
        (Some(3), Some(2), None, "Invalid maximum delegation depth"),
        (Some(1), Some(33), None, "Invalid maximum delegation depth"),
        (None, None, Some(129), "Invalid maximum child count"),
        (None, None, Some(u32::MAX), "Invalid maximum child count"),
    ];
    for (depth, max_depth, max_children, message) in cases {
        let t = EnrollmentTemplate {
            depth,
            max_depth,
            max_children,
            ..template()
        };
        refused(issue(&mut reg, t, None), "INVALID_REQUEST", message);
    }
    for t in [delegating(1, 4), delegating(2, 0), delegating(32, 0)] {
        refused(
            issue(&mut reg, t, None),
            "INVALID_REQUEST",
            "Delegating principals require remaining depth and child capacity",
        );
    }
    let widest = EnrollmentTemplate {
        depth: Some(31),
        ..delegating(32, 128)
    };
    let token = issue(&mut reg, widest, None).unwrap();
    let (p, _) = reg
        .consume_enrollment(&token.enrollment_token, NOW)
        .unwrap();
    assert_eq!((p.depth, p.max_depth, p.max_children), (31, 32, 128));
    let deepest = EnrollmentTemplate {
        depth: Some(32),
        ..template()
    };
    let token = issue(&mut reg, deepest, None).unwrap();
    let (p, _) = reg
        .consume_enrollment(&token.enrollment_token, NOW)
        .unwrap();
    assert_eq!((p.depth, p.max_depth), (32, 32));
    assert_reloads(&dir.0, &reg);
}

#[test]
fn names_and_ids_are_trimmed_bounded_and_free_of_control_characters() {
    let dir = TempDir::new("acc-text");
    let mut reg = open(&dir);
    let with = |name: &str, parent: &str, host: &str| EnrollmentTemplate {
        name: name.into(),
        parent_session_id: parent.into(),
        root_session_id: parent.into(),
        remote_host_id: host.into(),
        ..EnrollmentTemplate::default()
    };
    let emoji_128 = "😀".repeat(128); // 256 UTF-16 units
    let emoji_129 = "😀".repeat(129); // 258
    let bad = [
        (with("", "r", "h"), "Invalid principal name"),
        (
            with(" \u{feff}\u{3000}\n", "r", "h"),
            "Invalid principal name",
        ),
        (with("a\u{0}b", "r", "h"), "Invalid principal name"),
        (with("a\u{1f}b", "r", "h"), "Invalid principal name"),
        (with("a\u{7f}b", "r", "h"), "Invalid principal name"),
        (with(&emoji_129, "r", "h"), "Invalid principal name"),
        (with("n", "", "h"), "Invalid parent session ID"),
        (
            with("n", &"p".repeat(513), "h"),
            "Invalid parent session ID",
        ),
        (with("n", "r", &"h".repeat(257)), "Invalid remote host ID"),
        (
            EnrollmentTemplate {
                root_session_id: "a\tb".into(),
                ..with("n", "r", "h")
            },
            "Invalid root session ID",
        ),
    ];
    for (t, message) in bad {
        refused(
            reg.issue_enrollment(t, None, NOW),
            "INVALID_REQUEST",
            message,
        );
    }
    assert!(
        !dir.0.join(ACCESS_FILE_NAME).exists(),
        "nothing was written"
    );
    // JavaScript's trim: U+FEFF goes, U+0085 (NEL, not JS white space) stays and is allowed.
    let token = reg
        .issue_enrollment(
            with(
                &format!("\u{feff} {emoji_128}\u{2029}"),
                &format!(" {}", "p".repeat(512)),
                &format!("\u{85}{}", "h".repeat(255)),
            ),
            None,
            NOW,
        )
        .unwrap();
    let (p, _) = reg
        .consume_enrollment(&token.enrollment_token, NOW)
        .unwrap();
    assert_eq!(p.name, emoji_128);
    assert_eq!(p.parent_session_id, "p".repeat(512));
    assert_eq!(p.remote_host_id, format!("\u{85}{}", "h".repeat(255)));
    assert_reloads(&dir.0, &reg);
}
