use super::vectors::*;
use super::*;
use crate::registry::call_json;

fn p(id: &str, parent: Option<&str>) -> Principal {
    match parent {
        Some(parent) => Principal::remote(id, parent, "root"),
        None => Principal::local(id),
    }
}

/// root (local) <- manager <- lead <- worker, all remote below root.
fn hierarchy() -> PolicyState {
    PolicyState::from_principals([
        p("root", None),
        p("manager", Some("root")),
        p("lead", Some("manager")),
        p("worker", Some("lead")),
    ])
}

fn decide(state: &PolicyState, actor: &str, action: PolicyAction, target: &str) -> Decision {
    authorize(
        state,
        actor,
        action,
        target,
        &AuthorizationContext::default(),
    )
}

#[test]
fn decision_order_matches_the_typescript_kernel() {
    let mut state = hierarchy();
    use AllowReason as A;
    use DenialCode as D;
    use PolicyAction as Act;
    let table = [
        ("ghost", Act::Send, "root", "UNKNOWN_PRINCIPAL"),
        ("root", Act::Send, "ghost", "UNKNOWN_PRINCIPAL"),
        ("worker", Act::Adopt, "worker", "self"),
        ("lead", Act::Ask, "worker", "direct-parent"),
        ("worker", Act::Reply, "root", "ancestor-chain"),
        ("manager", Act::InspectTree, "worker", "ancestor-control"),
        // A direct child is controlled through the ancestor rule, not direct-parent.
        ("lead", Act::Revoke, "worker", "ancestor-control"),
        ("worker", Act::Revoke, "lead", "POLICY_DENIED"),
        ("root", Act::DelegateChild, "worker", "POLICY_DENIED"),
    ];
    for (actor, action, target, label) in table {
        assert_eq!(
            decide(&state, actor, action, target).label(),
            label,
            "{actor} {action} {target}"
        );
    }
    // Generations: checked before self; each side on its own.
    let stale = AuthorizationContext {
        actor_generation: Some(2),
        target_generation: None,
    };
    assert_eq!(
        authorize(&state, "worker", Act::Send, "worker", &stale),
        Decision::Denied(D::StaleGeneration)
    );
    let fresh = AuthorizationContext {
        actor_generation: Some(1),
        target_generation: Some(1),
    };
    assert_eq!(
        authorize(&state, "worker", Act::Send, "root", &fresh),
        Decision::Allowed(A::AncestorChain)
    );
    // Revoked beats stale; unknown beats revoked.
    state.get_mut("worker").unwrap().state = PrincipalState::Revoked;
    assert_eq!(
        authorize(&state, "root", Act::Send, "worker", &stale),
        Decision::Denied(D::RevokedPrincipal)
    );
    assert_eq!(
        decide(&state, "worker", Act::Send, "ghost"),
        Decision::Denied(D::UnknownPrincipal)
    );
    // Two locals: local-public whatever the action.
    state.insert(Principal::local("peer"));
    assert_eq!(
        decide(&state, "peer", Act::Revoke, "root"),
        Decision::Allowed(A::LocalPublic)
    );
    assert_eq!(
        decide(&state, "peer", Act::Send, "manager"),
        Decision::Denied(D::PolicyDenied)
    );
}

#[test]
fn decisions_serialize_as_typescript_returns_them() {
    assert_eq!(
        Decision::Allowed(AllowReason::SelfAccess).to_json(),
        r#"{"allowed":true,"reason":"self"}"#
    );
    assert_eq!(
        Decision::Denied(DenialCode::StaleGeneration).to_json(),
        r#"{"allowed":false,"code":"STALE_GENERATION"}"#
    );
    assert_eq!(
        Decision::Denied(DenialCode::PolicyDenied).label(),
        "POLICY_DENIED"
    );
}

#[test]
fn ancestry_is_cycle_safe() {
    let mut state = hierarchy();
    assert!(is_ancestor(&state, "root", "worker"));
    assert!(is_ancestor(&state, "manager", "worker"));
    assert!(!is_ancestor(&state, "worker", "root"));
    assert!(!is_ancestor(&state, "worker", "worker"));
    assert!(!is_ancestor(&state, "root", "ghost"));
    state.get_mut("root").unwrap().parent_session_id = Some("worker".into());
    assert!(!is_ancestor(&state, "unrelated", "worker"));
    assert!(is_ancestor(&state, "worker", "manager"));
    // A self-loop ends too.
    state.get_mut("lead").unwrap().parent_session_id = Some("lead".into());
    assert!(!is_ancestor(&state, "root", "worker"));
}

#[test]
fn long_chains_and_long_cycles_end() {
    // Past the walk's scanned list (16 ids), into its hashed one, and round a cycle of 40.
    let mut state = PolicyState::from_principals([Principal::local("p0")]);
    for i in 1..40 {
        state.insert(Principal::remote(
            format!("p{i}"),
            format!("p{}", i - 1),
            "p0",
        ));
    }
    assert!(is_ancestor(&state, "p0", "p39"));
    assert!(is_ancestor(&state, "p3", "p39"));
    assert!(!is_ancestor(&state, "p39", "p0"));
    assert!(!is_ancestor(&state, "ghost", "p39"));
    state.get_mut("p0").unwrap().parent_session_id = Some("p39".into());
    assert!(!is_ancestor(&state, "ghost", "p39"));
    assert!(is_ancestor(&state, "p39", "p0"));
    assert!(is_ancestor(&state, "p20", "p10"), "round the cycle");
}

#[test]
fn direct_parent_pairs_are_symmetric() {
    let state = hierarchy();
    let (root, manager, lead) = (
        state.get("root").unwrap(),
        state.get("manager").unwrap(),
        state.get("lead").unwrap(),
    );
    assert!(is_direct_parent_pair(root, manager));
    assert!(is_direct_parent_pair(manager, root));
    assert!(!is_direct_parent_pair(root, lead));
}

#[test]
fn revocation_is_breadth_first_on_a_copy() {
    let mut state = hierarchy();
    state.insert(p("sibling", Some("manager")));
    let result = revoke_subtree(&state, "manager").unwrap();
    assert_eq!(
        result.changed_principal_ids,
        ["manager", "lead", "sibling", "worker"]
    );
    assert!(state.get("manager").unwrap().is_active());
    for id in &result.changed_principal_ids {
        let principal = result.state.get(id).unwrap();
        assert_eq!(principal.state, PrincipalState::Revoked);
        assert_eq!(principal.generation, 2);
    }
    assert!(result.state.get("root").unwrap().is_active());
    let none = revoke_subtree(&state, "ghost").unwrap();
    assert!(none.changed_principal_ids.is_empty());
    assert_eq!(none.state, state);
}

#[test]
fn adoption_moves_the_subtree_and_fences_generations() {
    let mut state = hierarchy();
    state.insert(Principal::local("otherRoot"));
    let result = adopt_subtree(&state, "lead", "otherRoot", "otherRoot").unwrap();
    assert_eq!(result.changed_principal_ids, ["lead", "worker"]);
    let lead = result.state.get("lead").unwrap();
    assert_eq!(lead.parent_session_id.as_deref(), Some("otherRoot"));
    assert_eq!(lead.root_session_id, "otherRoot");
    assert_eq!(lead.generation, 2);
    assert_eq!(
        result.state.get("worker").unwrap().root_session_id,
        "otherRoot"
    );
    assert_eq!(
        state.get("lead").unwrap().parent_session_id.as_deref(),
        Some("manager")
    );
    let err = |r: Result<Transition, PolicyError>| r.unwrap_err().to_string();
    assert_eq!(
        err(adopt_subtree(&state, "ghost", "root", "root")),
        "Unknown principal: ghost"
    );
    assert_eq!(
        err(adopt_subtree(&state, "lead", "nobody", "root")),
        "Unknown parent principal: nobody"
    );
    assert_eq!(
        err(adopt_subtree(&state, "manager", "worker", "root")),
        "Adoption would create an ownership cycle"
    );
    assert_eq!(
        err(adopt_subtree(&state, "lead", "lead", "root")),
        "Adoption would create an ownership cycle"
    );
}

#[test]
fn generations_stay_exact_in_javascript() {
    let mut state = hierarchy();
    state.get_mut("worker").unwrap().generation = MAX_GENERATION;
    assert_eq!(
        revoke_subtree(&state, "lead").unwrap_err(),
        PolicyError::GenerationOverflow("worker".into())
    );
}

#[test]
fn keys_enumerate_in_javascript_order() {
    let mut state = PolicyState::new();
    for id in ["b", "10", "a", "2"] {
        state.insert(Principal::local(id));
    }
    let keys: Vec<&str> = state.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["2", "10", "b", "a"]);
    assert!(state.get("10").is_some());
    assert_eq!(state.remove("10").unwrap().id, "10");
    assert_eq!(state.len(), 3);
    assert_eq!(state.get("b").unwrap().id, "b");
}

#[test]
fn reading_from_javascript_refuses_malformed_state() {
    let bad = |args: &str| {
        let out = call_json("policy.authorize", args).unwrap();
        assert!(out.starts_with(r#"{"ok":false"#), "{args} -> {out}");
        out
    };
    let root = Principal::local("r").to_json();
    assert!(
        bad(r#"[null,"r","send","r"]"#).contains(r#""message":"$.state: must be a plain object""#)
    );
    assert!(
        bad(r#"[{},"r","send","r"]"#).contains(r#""message":"$.state.principals: is required""#)
    );
    assert!(
        bad(&format!(
            r#"[{{"principals":{{"r":{root}}}}},"r","fly","r"]"#
        ))
        .contains("$.action: must be one of: discover, send, ask, reply, inspect_tree")
    );
    assert!(
        bad(&format!(
            r#"[{{"principals":{{"r":{root}}}}},"r","send","r",{{"actorGen":1}}]"#
        ))
        .contains(r#""message":"$.context.actorGen: is not supported""#)
    );
    let weird = root.replace("\"active\"", "\"paused\"");
    assert!(
        bad(&format!(
            r#"[{{"principals":{{"r":{weird}}}}},"r","send","r"]"#
        ))
        .contains("$.state.principals.r.state: must be one of: active, revoked")
    );
    let ok = call_json(
        "policy.authorize",
        &format!(r#"[{{"principals":{{"r":{root}}}}},"r","send","r",{{"actorGeneration":1}}]"#),
    )
    .unwrap();
    assert_eq!(
        ok,
        r#"{"ok":true,"value":{"allowed":true,"reason":"self"}}"#
    );
    // Members of Object.prototype are never principals.
    let proto = call_json(
        "policy.authorize",
        r#"[{"principals":{}},"toString","send","r"]"#,
    );
    assert!(proto.unwrap().contains("UNKNOWN_PRINCIPAL"));
}

#[test]
fn transitions_from_javascript_answer_typescript_shapes() {
    let state = hierarchy().to_json();
    let out = call_json("policy.revokeSubtree", &format!(r#"[{state},"lead"]"#)).unwrap();
    assert!(
        out.ends_with(r#""changedPrincipalIds":["lead","worker"]}}"#),
        "{out}"
    );
    let out = call_json(
        "policy.adoptSubtree",
        &format!(r#"[{state},"manager","worker","r"]"#),
    );
    assert!(out.unwrap().contains(
        r#""error":{"class":"Error","message":"Adoption would create an ownership cycle""#
    ));
    let back = Js::parse_json(&state).unwrap();
    assert_eq!(PolicyState::from_js(&back, "$").unwrap(), hierarchy());
}

#[test]
fn the_embedded_corpus_is_the_published_one() {
    assert_eq!(
        semantics_hash(),
        "f3b00e503631bc91123aedfbcf1df72cc9913e1893c09728b2c598f3dcdfdfe0"
    );
    assert_eq!(vectors().len(), 12);
    for vector in vectors() {
        assert!(vector.passes(), "{}", vector.name);
    }
}

#[test]
fn a_state_finds_its_keys_below_and_above_the_scanned_size() {
    // A model of the state: the keys in enumeration order (array indices first, ascending).
    let mut model: Vec<String> = Vec::new();
    let mut state = PolicyState::new();
    let insert_order = |keys: &[String]| -> Vec<String> {
        let mut sorted = keys.to_vec();
        sorted.sort_by_key(|k| array_index(k).map_or((1, 0), |i| (0, i)));
        sorted
    };
    for i in 0..(2 * SCANNED + 5) {
        let key = if i % 5 == 0 {
            (100 - i).to_string()
        } else {
            format!("p{i}")
        };
        assert!(state.insert(p(&key, None)).is_none(), "{key} is new");
        model.push(key);
        let expected = insert_order(&model);
        let keys: Vec<&str> = state.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, expected, "order after inserting {i}");
        for key in &model {
            assert_eq!(state.get(key).map(|q| q.id.as_str()), Some(key.as_str()));
        }
        assert!(!state.contains("absent"));
    }
    // Replacing keeps the place; removing shrinks back below the scanned size.
    let replaced = state.insert_keyed("p1", Principal::local("other"));
    assert_eq!(replaced.map(|q| q.id), Some("p1".to_string()));
    assert_eq!(state.get("p1").map(|q| q.id.as_str()), Some("other"));
    while let Some(key) = model.pop() {
        assert!(state.remove(&key).is_some(), "{key} was there");
        assert!(!state.contains(&key));
        let keys: Vec<&str> = state.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, insert_order(&model), "order after removing {key}");
        for key in &model {
            assert!(state.contains(key), "{key} is still there");
        }
    }
    assert!(state.is_empty());
}
