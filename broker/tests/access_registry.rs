//! The remote-access registry's operations, against real files in a temporary directory, with
//! time passed in (no clock, no sleeps). Mirrors what the Pi adapter's
//! `broker/access-registry.test.ts` asserts, then the error paths it leaves out; the limits are
//! in access_limits.rs.

mod access_common;
mod common;

use std::fs;

use access_common::*;
use agent_intercom_broker::access::{
    ACCESS_FILE_NAME, ChildRequest, DEFAULT_ENROLLMENT_TTL_MS, DEFAULT_PRINCIPAL_TTL_MS,
    EnrollmentTemplate, Issued, PrincipalState,
};
use common::TempDir;

#[test]
fn one_use_enrollment_assigns_the_identity_and_stores_only_hashes() {
    let dir = TempDir::new("acc-enroll");
    let mut reg = open(&dir);
    let issued = reg.issue_enrollment(template(), None, NOW).unwrap();
    assert_eq!(issued.expires_at, NOW + DEFAULT_ENROLLMENT_TTL_MS);
    assert_eq!(issued.enrollment_token.len(), 43);
    assert_reloads(&dir.0, &reg);
    let (principal, credential) = reg
        .consume_enrollment(&issued.enrollment_token, NOW)
        .unwrap();
    assert_reloads(&dir.0, &reg);
    assert!(uuid::Uuid::parse_str(&principal.id).is_ok());
    assert_eq!(principal.id, principal.id.to_lowercase());
    assert_eq!(principal.id.len(), 36);
    assert_eq!(principal.name, "ika/manager");
    assert_eq!(principal.parent_session_id, "local-root");
    assert_eq!(principal.root_session_id, "local-root");
    assert_eq!(principal.remote_host_id, "ika-dev-v3");
    assert_eq!(principal.generation, 1);
    assert_eq!(principal.state, PrincipalState::Active);
    assert_eq!(
        (principal.depth, principal.max_depth, principal.max_children),
        (1, 1, 0)
    );
    assert!(!principal.can_delegate);
    assert_eq!(principal.expires_at, NOW + DEFAULT_PRINCIPAL_TTL_MS);
    assert_eq!((principal.created_at, principal.updated_at), (NOW, NOW));
    assert_eq!(credential.len(), 43);
    assert_ne!(credential, issued.enrollment_token);
    let authed = reg
        .authenticate_session(&principal.id, 1, &credential, NOW)
        .unwrap();
    assert_eq!(authed, principal);
    assert_eq!(reg.get(&principal.id), Some(&principal));

    let file = fs::read(dir.0.join(ACCESS_FILE_NAME)).unwrap();
    for secret in [&issued.enrollment_token, &credential] {
        assert!(
            !file.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "a secret reached the file"
        );
    }
    assert_eq!(reg.enrollment_count(), 0);

    // A replayed token is refused and changes nothing.
    let before = reg.snapshot_json();
    refused(
        reg.consume_enrollment(&issued.enrollment_token, NOW),
        "INVALID_ENROLLMENT",
        "Enrollment credential is invalid or already consumed",
    );
    refused(
        reg.consume_enrollment("never-issued", NOW),
        "INVALID_ENROLLMENT",
        "Enrollment credential is invalid or already consumed",
    );
    assert_eq!(reg.snapshot_json(), before);
}

#[test]
fn an_expired_enrollment_is_refused_and_removed_durably() {
    let dir = TempDir::new("acc-expired");
    let mut reg = open(&dir);
    let issued = reg.issue_enrollment(template(), Some(1000), NOW).unwrap();
    assert_eq!(issued.expires_at, NOW + 1000);
    // Exactly at its expiry the token is already refused (expiresAt <= now).
    refused(
        reg.consume_enrollment(&issued.enrollment_token, NOW + 1000),
        "INVALID_ENROLLMENT",
        "Enrollment credential has expired",
    );
    assert_eq!(reg.enrollment_count(), 0);
    assert_reloads(&dir.0, &reg);
    refused(
        reg.consume_enrollment(&issued.enrollment_token, NOW + 1000),
        "INVALID_ENROLLMENT",
        "Enrollment credential is invalid or already consumed",
    );
    assert_eq!(reg.principals().count(), 0);
}

#[test]
fn expired_enrollments_are_pruned_when_the_next_one_is_issued() {
    let dir = TempDir::new("acc-prune");
    let mut reg = open(&dir);
    reg.issue_enrollment(template(), Some(1000), NOW).unwrap();
    let kept = reg.issue_enrollment(template(), Some(5000), NOW).unwrap();
    assert_eq!(reg.enrollment_count(), 2);
    reg.issue_enrollment(template(), None, NOW + 1000).unwrap();
    assert_eq!(reg.enrollment_count(), 2);
    assert_reloads(&dir.0, &reg);
    reg.consume_enrollment(&kept.enrollment_token, NOW + 1000)
        .unwrap();
}

#[test]
fn reconnect_needs_the_exact_identity_credential_and_generation() {
    let dir = TempDir::new("acc-reconnect");
    let mut reg = open(&dir);
    let (p, credential) = enroll(&mut reg, template(), NOW);
    refused(
        reg.authenticate_session("chosen-id", 1, &credential, NOW),
        "INVALID_CREDENTIAL",
        "Session credential is invalid",
    );
    refused(
        reg.authenticate_session(&p.id, 1, "wrong", NOW),
        "INVALID_CREDENTIAL",
        "Session credential is invalid",
    );
    refused(
        reg.authenticate_session(&p.id, 1, &format!("{credential}x"), NOW),
        "INVALID_CREDENTIAL",
        "Session credential is invalid",
    );
    refused(
        reg.authenticate_session(&p.id, 2, &credential, NOW),
        "STALE_GENERATION",
        "Session credential generation is stale",
    );
    refused(
        reg.authenticate_session(&p.id, 1, &credential, p.expires_at),
        "EXPIRED_CREDENTIAL",
        "Session credential has expired",
    );
    assert!(
        reg.authenticate_session(&p.id, 1, &credential, p.expires_at - 1)
            .is_ok()
    );
    refused(
        reg.validate_principal("nobody", 1, NOW),
        "INVALID_CREDENTIAL",
        "Remote principal does not exist",
    );
    assert_eq!(reg.validate_principal(&p.id, 1, NOW).unwrap(), &p);
}

#[test]
fn validation_checks_revocation_then_expiry_then_generation() {
    let dir = TempDir::new("acc-order");
    let mut reg = open(&dir);
    let (p, credential) = enroll(&mut reg, template(), NOW);
    reg.revoke(&p.id, NOW).unwrap();
    // Revoked wins over expired and stale; the credential still has to be right first.
    refused(
        reg.authenticate_session(&p.id, 1, &credential, p.expires_at + 1),
        "REVOKED_CREDENTIAL",
        "Session credential is revoked",
    );
    refused(
        reg.authenticate_session(&p.id, 2, "wrong", NOW),
        "INVALID_CREDENTIAL",
        "Session credential is invalid",
    );
    let (q, _) = enroll(&mut reg, template(), NOW);
    refused(
        reg.validate_principal(&q.id, 9, q.expires_at),
        "EXPIRED_CREDENTIAL",
        "Session credential has expired",
    );
}

#[test]
fn delegated_child_enrollment_is_broker_computed_and_cannot_widen_the_parent() {
    let dir = TempDir::new("acc-delegate");
    let mut reg = open(&dir);
    let (parent, _) = enroll(&mut reg, delegating(3, 1), NOW);
    let lead_token = reg
        .issue_child_enrollment(
            &parent.id,
            1,
            ChildRequest {
                can_delegate: true,
                max_depth: Some(3),
                max_children: Some(1),
                ..child("ika/lead")
            },
            None,
            NOW,
        )
        .unwrap();
    assert_reloads(&dir.0, &reg);
    // The pending enrollment already uses the parent's only child slot.
    refused(
        reg.issue_child_enrollment(&parent.id, 1, child("ika/sibling"), None, NOW),
        "INVALID_ENROLLMENT",
        "Parent child limit is exhausted",
    );
    let (lead, _) = reg
        .consume_enrollment(&lead_token.enrollment_token, NOW)
        .unwrap();
    assert_eq!(lead.parent_session_id, parent.id);
    assert_eq!(lead.root_session_id, "local-root");
    assert_eq!(lead.remote_host_id, "ika-dev-v3");
    assert_eq!((lead.depth, lead.max_depth, lead.max_children), (2, 3, 1));
    assert!(lead.can_delegate);
    assert_eq!(lead.expires_at, parent.expires_at);
    // ... and now the active child does.
    refused(
        reg.issue_child_enrollment(&parent.id, 1, child("ika/sibling"), None, NOW),
        "INVALID_ENROLLMENT",
        "Parent child limit is exhausted",
    );
    refused(
        reg.issue_child_enrollment(
            &lead.id,
            1,
            ChildRequest {
                max_depth: Some(4),
                ..child("too-wide")
            },
            None,
            NOW,
        ),
        "INVALID_REQUEST",
        "Invalid child maximum depth",
    );
    let (worker, _) = enroll_child(&mut reg, &lead, child("ika/worker"), NOW);
    assert_eq!(
        (worker.depth, worker.max_depth, worker.max_children),
        (3, 3, 0)
    );
    assert!(!worker.can_delegate);
    assert_reloads(&dir.0, &reg);

    let tree = reg.inspect_subtree(&parent.id);
    assert_eq!(ids(&tree), [&*parent.id, &*lead.id, &*worker.id]);
    assert_eq!(
        ids(&reg.inspect_subtree(&lead.id)),
        [&*lead.id, &*worker.id]
    );
    assert!(reg.inspect_subtree("nobody").is_empty());
    for p in &tree {
        assert!(!p.metadata_text().contains("credentialHash"));
        assert!(!p.metadata_json().contains_key("credentialHash"));
    }
}

#[test]
fn non_delegating_principals_cannot_issue_children() {
    let dir = TempDir::new("acc-nodelegate");
    let mut reg = open(&dir);
    let (p, _) = enroll(&mut reg, template(), NOW);
    refused(
        reg.issue_child_enrollment(&p.id, 1, child("child"), None, NOW),
        "INVALID_ENROLLMENT",
        "Parent principal cannot delegate children",
    );
}

#[test]
fn adoption_rewrites_ancestry_fences_generations_and_cancels_pending_tokens() {
    let dir = TempDir::new("acc-adopt");
    let mut reg = open(&dir);
    let (parent, _) = enroll(&mut reg, delegating(3, 1), NOW);
    let (lead, lead_credential) = enroll_child(
        &mut reg,
        &parent,
        ChildRequest {
            can_delegate: true,
            max_depth: Some(3),
            max_children: Some(1),
            ..child("child")
        },
        NOW,
    );
    let pending = reg
        .issue_child_enrollment(&lead.id, 1, child("pending-grandchild"), None, NOW)
        .unwrap();
    let unrelated = reg.issue_enrollment(template(), None, NOW).unwrap();
    refused(
        reg.adopt_subtree(&parent.id, &lead.id, "root", NOW),
        "INVALID_REQUEST",
        "Adoption would create an ownership cycle",
    );
    refused(
        reg.adopt_subtree(&parent.id, &parent.id, "root", NOW),
        "INVALID_REQUEST",
        "Adoption would create an ownership cycle",
    );
    refused(
        reg.adopt_subtree("nobody", "other", "other", NOW),
        "INVALID_REQUEST",
        "Unknown adopted principal",
    );
    refused(
        reg.adopt_subtree(&lead.id, " ", "other", NOW),
        "INVALID_REQUEST",
        "Invalid new parent session ID",
    );
    refused(
        reg.adopt_subtree(&lead.id, "other", "", NOW),
        "INVALID_REQUEST",
        "Invalid new root session ID",
    );
    // A refused adoption changed nothing, not even the parent link.
    assert_eq!(reg.get(&lead.id), Some(&lead));
    assert_eq!(reg.enrollment_count(), 2);

    let changed = reg
        .adopt_subtree(&lead.id, "other-local-root", "other-local-root", NOW + 7)
        .unwrap();
    assert_eq!(ids(&changed), [&*lead.id]);
    assert_eq!(changed[0].parent_session_id, "other-local-root");
    assert_eq!(changed[0].root_session_id, "other-local-root");
    assert_eq!(changed[0].generation, 2);
    assert_eq!(changed[0].updated_at, NOW + 7);
    assert_eq!(changed[0].state, PrincipalState::Active);
    assert_eq!(reg.get(&lead.id), Some(&changed[0]));
    // Only the moved subtree's pending token is cancelled.
    assert_eq!(reg.enrollment_count(), 1);
    refused(
        reg.consume_enrollment(&pending.enrollment_token, NOW + 7),
        "INVALID_ENROLLMENT",
        "Enrollment credential is invalid or already consumed",
    );
    reg.consume_enrollment(&unrelated.enrollment_token, NOW + 7)
        .unwrap();
    refused(
        reg.authenticate_session(&lead.id, 1, &lead_credential, NOW + 7),
        "STALE_GENERATION",
        "Session credential generation is stale",
    );
    assert!(
        reg.authenticate_session(&lead.id, 2, &lead_credential, NOW + 7)
            .is_ok()
    );
    assert_eq!(reg.get(&parent.id), Some(&parent));
    assert_reloads(&dir.0, &reg);
}

#[test]
fn adoption_moves_the_whole_subtree_under_a_remote_parent() {
    let dir = TempDir::new("acc-adopt-tree");
    let mut reg = open(&dir);
    let (a, _) = enroll(&mut reg, delegating(4, 2), NOW);
    let (b, _) = enroll_child(
        &mut reg,
        &a,
        ChildRequest {
            can_delegate: true,
            max_depth: Some(4),
            max_children: Some(2),
            ..child("b")
        },
        NOW,
    );
    let (c, _) = enroll_child(&mut reg, &b, child("c"), NOW);
    let (d, _) = enroll(&mut reg, template(), NOW);
    // A cycle through a deeper ancestor is refused too.
    refused(
        reg.adopt_subtree(&a.id, &c.id, "local-root", NOW),
        "INVALID_REQUEST",
        "Adoption would create an ownership cycle",
    );
    let changed = reg.adopt_subtree(&b.id, &d.id, "root-2", NOW + 1).unwrap();
    assert_eq!(ids(&changed), [&*b.id, &*c.id]);
    assert_eq!(changed[0].parent_session_id, d.id);
    assert_eq!(changed[1].parent_session_id, b.id);
    assert!(
        changed
            .iter()
            .all(|p| p.root_session_id == "root-2" && p.generation == 2)
    );
    assert_eq!(ids(&reg.inspect_subtree(&d.id)), [&*d.id, &*b.id, &*c.id]);
    assert_eq!(ids(&reg.inspect_subtree(&a.id)), [&*a.id]);
    assert_reloads(&dir.0, &reg);
}

#[test]
fn recursive_revoke_fences_generations_and_refuses_reconnect() {
    let dir = TempDir::new("acc-revoke");
    let mut reg = open(&dir);
    let (parent, _) = enroll(&mut reg, template(), NOW);
    let (kid, kid_credential) = enroll(
        &mut reg,
        EnrollmentTemplate {
            name: "ika/child".into(),
            parent_session_id: parent.id.clone(),
            ..template()
        },
        NOW,
    );
    let (other, _) = enroll(&mut reg, template(), NOW);
    let changed = reg.revoke(&parent.id, NOW + 3).unwrap();
    assert_eq!(ids(&changed), [&*parent.id, &*kid.id]);
    assert!(changed.iter().all(|p| p.state == PrincipalState::Revoked
        && p.generation == 2
        && p.updated_at == NOW + 3));
    refused(
        reg.authenticate_session(&kid.id, 1, &kid_credential, NOW),
        "REVOKED_CREDENTIAL",
        "Session credential is revoked",
    );
    assert_eq!(reg.get(&other.id), Some(&other));
    assert_reloads(&dir.0, &reg);
    // Revoking again bumps the generation again, as the Pi broker does.
    let again = reg.revoke(&kid.id, NOW + 4).unwrap();
    assert_eq!(again[0].generation, 3);
}

#[test]
fn revoking_an_unknown_principal_changes_and_writes_nothing() {
    use std::os::unix::fs::MetadataExt;
    let dir = TempDir::new("acc-revoke-none");
    let mut reg = open(&dir);
    enroll(&mut reg, template(), NOW);
    let inode = fs::metadata(dir.0.join(ACCESS_FILE_NAME)).unwrap().ino();
    assert!(reg.revoke("nobody", NOW).unwrap().is_empty());
    assert!(reg.expire(NOW).unwrap().is_empty());
    assert_eq!(
        fs::metadata(dir.0.join(ACCESS_FILE_NAME)).unwrap().ino(),
        inode,
        "no write"
    );
}

#[test]
fn expiry_revokes_expired_subtrees_shallowest_first() {
    let dir = TempDir::new("acc-expire");
    let mut reg = open(&dir);
    let (parent, _) = enroll(
        &mut reg,
        EnrollmentTemplate {
            expires_at: Some(NOW + 1000),
            ..delegating(3, 2)
        },
        NOW,
    );
    let (kid, _) = enroll_child(
        &mut reg,
        &parent,
        ChildRequest {
            can_delegate: true,
            max_depth: Some(3),
            max_children: Some(1),
            expires_at: Some(NOW + 500),
            ..child("child")
        },
        NOW,
    );
    let (grandchild, _) = enroll_child(&mut reg, &kid, child("grandchild"), NOW);
    let (sibling, _) = enroll_child(&mut reg, &parent, child("sibling"), NOW);
    let (lasting, _) = enroll(&mut reg, template(), NOW);
    assert_eq!(reg.next_expiry(), Some(NOW + 500));

    // At NOW + 500 the child and grandchild (both expiring then) go; the parent stays.
    let first = reg.expire(NOW + 500).unwrap();
    assert_eq!(ids(&first), [&*kid.id, &*grandchild.id]);
    assert!(
        first
            .iter()
            .all(|p| p.state == PrincipalState::Revoked && p.generation == 2)
    );
    assert_reloads(&dir.0, &reg);
    assert_eq!(reg.next_expiry(), Some(NOW + 1000));
    assert!(reg.expire(NOW + 999).unwrap().is_empty());

    // At NOW + 1000 the parent is the shallowest expired root: its whole subtree is revoked once
    // more (generations 3), and the sibling once.
    let second = reg.expire(NOW + 1000).unwrap();
    assert_eq!(
        ids(&second),
        [&*parent.id, &*kid.id, &*sibling.id, &*grandchild.id]
    );
    let generation = |id: &str| second.iter().find(|p| p.id == id).unwrap().generation;
    assert_eq!(generation(&parent.id), 2);
    assert_eq!(generation(&sibling.id), 2);
    assert_eq!(generation(&kid.id), 3);
    assert_eq!(generation(&grandchild.id), 3);
    assert_eq!(reg.get(&lasting.id), Some(&lasting));
    assert_eq!(reg.next_expiry(), Some(lasting.expires_at));
    assert_reloads(&dir.0, &reg);
}

#[test]
fn expiry_sorts_roots_by_depth_not_by_registry_order() {
    // A deeper principal listed first: the shallow one must be revoked first so its subtree
    // comes out in breadth-first order from the top, each principal once.
    let dir = TempDir::new("acc-expire-order");
    let principal = |id: &str, parent: &str, depth: u32| {
        format!(
            concat!(
                r#""{id}":{{"id":"{id}","name":"{id}","credentialHash":"00","#,
                r#""parentSessionId":"{parent}","rootSessionId":"r","remoteHostId":"h","#,
                r#""generation":1,"policy":"remote-tree","canDelegate":false,"depth":{depth},"#,
                r#""maxDepth":{depth},"maxChildren":0,"state":"active","expiresAt":10,"#,
                r#""createdAt":1,"updatedAt":1}}"#,
            ),
            id = id,
            parent = parent,
            depth = depth
        )
    };
    fs::write(
        dir.0.join(ACCESS_FILE_NAME),
        format!(
            r#"{{"version":2,"principals":{{{},{},{}}},"enrollments":{{}}}}"#,
            principal("deep", "top", 2),
            principal("top", "r", 1),
            principal("deeper", "deep", 3),
        ),
    )
    .unwrap();
    let mut reg = open(&dir);
    let changed = reg.expire(10).unwrap();
    assert_eq!(ids(&changed), ["top", "deep", "deeper"]);
    assert!(
        changed
            .iter()
            .all(|p| p.generation == 2 && p.updated_at == 10)
    );
}

#[test]
fn a_token_whose_parent_was_revoked_or_whose_principal_expired_is_refused() {
    let dir = TempDir::new("acc-orphan");
    let mut reg = open(&dir);
    let (parent, _) = enroll(&mut reg, delegating(2, 2), NOW);
    let orphan = reg
        .issue_child_enrollment(&parent.id, 1, child("orphan"), None, NOW)
        .unwrap();
    reg.revoke(&parent.id, NOW).unwrap();
    refused(
        reg.consume_enrollment(&orphan.enrollment_token, NOW),
        "INVALID_ENROLLMENT",
        "Enrollment parent is no longer active",
    );
    assert_eq!(reg.enrollment_count(), 0);
    assert_reloads(&dir.0, &reg);

    let short = reg
        .issue_enrollment(
            EnrollmentTemplate {
                expires_at: Some(NOW + 100),
                ..template()
            },
            Some(1000),
            NOW,
        )
        .unwrap();
    refused(
        reg.consume_enrollment(&short.enrollment_token, NOW + 100),
        "INVALID_ENROLLMENT",
        "Enrollment credential has expired",
    );
    assert_eq!(reg.enrollment_count(), 0);
}

#[test]
fn reload_after_every_operation_gives_the_same_state() {
    let dir = TempDir::new("acc-reload");
    let mut reg = open(&dir);
    reg.ensure_admin_credential().unwrap();
    assert_reloads(&dir.0, &reg);
    let (a, _) = enroll(&mut reg, delegating(3, 3), NOW);
    assert_reloads(&dir.0, &reg);
    let Issued {
        enrollment_token, ..
    } = reg
        .issue_child_enrollment(&a.id, 1, child("b"), None, NOW + 1)
        .unwrap();
    assert_reloads(&dir.0, &reg);
    let (b, _) = reg.consume_enrollment(&enrollment_token, NOW + 2).unwrap();
    assert_reloads(&dir.0, &reg);
    let (c, _) = enroll(&mut reg, template(), NOW + 3);
    reg.adopt_subtree(&b.id, &c.id, "local-root", NOW + 4)
        .unwrap();
    assert_reloads(&dir.0, &reg);
    reg.revoke(&c.id, NOW + 5).unwrap();
    assert_reloads(&dir.0, &reg);
    reg.expire(a.expires_at).unwrap();
    assert_reloads(&dir.0, &reg);
    assert!(reg.principals().all(|p| p.state == PrincipalState::Revoked));
}

#[test]
fn metadata_has_the_pi_key_order_and_no_credential_hash() {
    let dir = TempDir::new("acc-meta");
    let mut reg = open(&dir);
    let (p, _) = enroll(&mut reg, delegating(2, 1), NOW);
    let expected = format!(
        concat!(
            r#"{{"id":"{}","name":"ika/manager","parentSessionId":"local-root","#,
            r#""rootSessionId":"local-root","remoteHostId":"ika-dev-v3","generation":1,"#,
            r#""policy":"remote-tree","canDelegate":true,"depth":1,"maxDepth":2,"maxChildren":1,"#,
            r#""state":"active","expiresAt":{},"createdAt":{NOW},"updatedAt":{NOW}}}"#,
        ),
        p.id,
        p.expires_at,
        NOW = NOW
    );
    assert_eq!(p.metadata_text(), expected);
    assert_eq!(
        p.summary_text(true),
        format!("{},\"connected\":true}}", &expected[..expected.len() - 1])
    );
    assert!(
        p.summary_text(false)
            .ends_with(r#","updatedAt":1800000000000,"connected":false}"#)
    );
    let parsed: serde_json::Value = serde_json::from_str(&expected).unwrap();
    assert_eq!(serde_json::Value::Object(p.metadata_json()), parsed);
}
