use super::policy;
use super::semantics::{capability_feature_digest, feature_contract_json};
use crate::contract::{Failure, Js};

const VECTOR_KEYS: [&str; 22] = [
    "name",
    "actorClass",
    "targetClass",
    "actorState",
    "targetState",
    "brokerBossFeatureAdvertised",
    "actorPolicy",
    "targetPolicy",
    "relationship",
    "action",
    "featureAttestation",
    "policyAttestation",
    "capabilityAttestation",
    "brokerIdentityVerified",
    "registrationIdentity",
    "downgradeAttempt",
    "context",
    "entryPoint",
    "supervisorEdge",
    "policyClass",
    "expected",
    "id",
];
const OTHER_DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000000";

type Map = Vec<(String, Js)>;

fn unknown(key: &str, value: &Js) -> Failure {
    Failure::error(format!(
        "featureRoutingCaseForVector: unknown {key} {}",
        value.to_json().unwrap_or_else(|| value.js_string())
    ))
}

fn set(map: &mut Map, key: &str, value: Js) {
    match map.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => map.push((key.to_string(), value)),
    }
}

fn object(map: &Map) -> Js {
    Js::object(map.iter().map(|(k, v)| (k.as_str(), v.clone())).collect())
}

fn record(map: &mut Map, id: &str) -> Map {
    match map.iter().find(|(k, _)| k == id) {
        Some((_, Js::Object(o))) => o
            .members
            .iter()
            .map(|(k, v)| (k.text.clone(), v.clone()))
            .collect(),
        _ => Map::new(),
    }
}

/// Edits the record under `id` of `map`.
fn edit(map: &mut Map, id: &str, change: impl FnOnce(&mut Map)) {
    let mut fields = record(map, id);
    change(&mut fields);
    set(map, id, object(&fields));
}

fn legacy_principal(id: &str, kind: &str, policy: &str, parent: Option<&str>) -> Js {
    let mut fields: Vec<(&str, Js)> = vec![
        ("id", Js::str(id)),
        ("kind", Js::str(kind)),
        ("state", Js::str("active")),
        ("generation", Js::Num(1.0)),
        ("policy", Js::str(policy)),
    ];
    if let Some(parent) = parent {
        fields.push(("parentSessionId", Js::str(parent)));
    }
    fields.push(("rootSessionId", Js::str(parent.map_or(id, |_| "root"))));
    Js::object(fields)
}

fn boss_principal(id: &str, role: &str) -> Js {
    let mut fields: Vec<(&str, Js)> = vec![
        ("version", Js::str(policy::PRINCIPAL_VERSION)),
        ("principalId", Js::str(id)),
        ("principalClass", Js::str("boss-private")),
        ("state", Js::str("active")),
        ("bossRunId", Js::str("run-a")),
        ("participantId", Js::str(id)),
        ("role", Js::str(role)),
        ("bindingEpoch", Js::Num(1.0)),
    ];
    match role {
        "manager" => fields.push((
            "assignedParticipantIds",
            Js::array(vec![Js::str("worker"), Js::str("scout")]),
        )),
        "worker" | "scout" => fields.push(("assignedManagerParticipantId", Js::str("manager"))),
        _ => {}
    }
    Js::object(fields)
}

fn boss_registration(id: &str) -> Js {
    Js::object(vec![
        ("principalId", Js::str(id)),
        ("principalClass", Js::str("boss-bound")),
        ("state", Js::str("active")),
        ("bossRunId", Js::str("run-a")),
        ("participantId", Js::str(id)),
        ("bindingEpoch", Js::Num(1.0)),
        (
            "featureContract",
            Js::parse_json(&feature_contract_json()).expect("the contract is JSON"),
        ),
        ("policySemanticsHash", Js::str(policy::semantics_hash())),
        ("capabilityDigest", Js::str(capability_feature_digest())),
        ("brokerIdentityVerified", Js::Bool(true)),
    ])
}

fn ordinary_registration(id: &str) -> Js {
    Js::object(vec![
        ("principalId", Js::str(id)),
        ("principalClass", Js::str("ordinary")),
        ("state", Js::str("active")),
    ])
}

const ORDINARY: [&str; 2] = ["ordinary-a", "ordinary-b"];
const BOSS: [(&str, &str); 5] = [
    ("boss", "boss"),
    ("manager", "manager"),
    ("worker", "worker"),
    ("scout", "scout"),
    ("controller", "controller"),
];

/// See [`super::case_for_vector`].
pub fn build(vector: &Js) -> Result<String, Failure> {
    let Js::Object(fields) = vector else {
        return Err(Failure::type_error(
            "a feature-routing vector must be an object",
        ));
    };
    for (key, value) in &fields.members {
        if !VECTOR_KEYS.contains(&key.text.as_str()) {
            return Err(unknown("field", value));
        }
    }
    let text = |key: &str| vector.get(key).and_then(Js::as_str);
    let mut registrations = Map::new();
    let mut legacy = Map::new();
    let mut boss = Map::new();
    for id in ORDINARY {
        registrations.push((id.into(), ordinary_registration(id)));
        legacy.push((
            id.into(),
            legacy_principal(id, "local", "local-public", None),
        ));
    }
    for (id, role) in BOSS {
        registrations.push((id.into(), boss_registration(id)));
        boss.push((id.into(), boss_principal(id, role)));
    }
    let side = |class: Option<&str>, ordinary: &str, bound: &str| match class {
        Some("ordinary") | None => Ok(ordinary.to_string()),
        Some("boss-bound") => Ok(bound.to_string()),
        Some("unknown") => Ok("unregistered".to_string()),
        Some(other) => Err(unknown("class", &Js::str(other))),
    };
    let mut actor = side(text("actorClass"), ORDINARY[0], "boss")?;
    let mut target = side(text("targetClass"), ORDINARY[1], "manager")?;
    let mut action = text("action").unwrap_or("discover").to_string();

    for (key, id) in [
        ("actorState", actor.clone()),
        ("targetState", target.clone()),
    ] {
        match text(key) {
            None | Some("active") => {}
            Some("missing") => registrations.retain(|(k, _)| *k != id),
            Some(state) => {
                edit(&mut registrations, &id, |r| set(r, "state", Js::str(state)));
            }
        }
    }
    // Broker advertisement reaches neither the state nor the request: it cannot reroute.
    let _ = vector.get("brokerBossFeatureAdvertised");
    for (key, id) in [
        ("actorPolicy", actor.clone()),
        ("targetPolicy", target.clone()),
    ] {
        if let Some(policy) = text(key) {
            edit(&mut legacy, &id, |p| set(p, "policy", Js::str(policy)));
        }
    }
    // The chains run target -> (intermediary ->) actor: the actor is the ancestor.
    let (a, t) = (actor.clone(), target.clone());
    let chain = |legacy: &mut Map, via: Option<&str>| {
        let parent = via.unwrap_or(&a).to_string();
        edit(legacy, &t, |p| {
            set(p, "parentSessionId", Js::str(parent));
            set(p, "rootSessionId", Js::str(a.clone()));
        });
    };
    match text("relationship") {
        None | Some("unrelated") => {}
        Some("direct-parent") => chain(&mut legacy, None),
        Some(kind @ ("own_intermediary" | "intermediary_key_identity_mismatch")) => {
            chain(&mut legacy, Some("intermediary"));
            let id = if kind == "own_intermediary" {
                "intermediary"
            } else {
                "intermediary-elsewhere"
            };
            let mut record = legacy_principal(id, "local", "remote-tree", Some(&a));
            if let Js::Object(o) = &mut record {
                o.members.retain(|(k, _)| k.text != "rootSessionId");
                o.members.push((
                    crate::contract::JsStr {
                        text: "rootSessionId".into(),
                        lone: None,
                    },
                    Js::str(a.clone()),
                ));
            }
            legacy.push(("intermediary".into(), record));
        }
        // TypeScript puts the intermediary on the map's prototype, which the boundary never
        // reads; here it is simply not an own entry (the snapshot form carries no prototype
        // members).
        Some("prototype_intermediary") => chain(&mut legacy, Some("intermediary")),
        Some(other) => return Err(unknown("relationship", &Js::str(other))),
    }
    let registration_edit = |registrations: &mut Map, key: &str, value: Js| {
        let id = actor.clone();
        edit(registrations, &id, |r| set(r, key, value));
    };
    match text("featureAttestation") {
        None => {}
        Some("missing") => edit(&mut registrations, &actor, |r| {
            r.retain(|(k, _)| k != "featureContract")
        }),
        Some(kind @ ("unknown_version" | "semantics_mismatch")) => {
            let mut contract =
                Js::parse_json(&feature_contract_json()).expect("the contract is JSON");
            if let Js::Object(o) = &mut contract {
                for (k, v) in &mut o.members {
                    if kind == "unknown_version" && k.text == "version" {
                        *v = Js::Num(2.0);
                    }
                    if kind == "semantics_mismatch" && k.text == "semanticsHash" {
                        *v = Js::str(OTHER_DIGEST);
                    }
                }
            }
            registration_edit(&mut registrations, "featureContract", contract);
        }
        Some(other) => return Err(unknown("featureAttestation", &Js::str(other))),
    }
    match text("policyAttestation") {
        None => {}
        Some("semantics_mismatch") => registration_edit(
            &mut registrations,
            "policySemanticsHash",
            Js::str(OTHER_DIGEST),
        ),
        Some(other) => return Err(unknown("policyAttestation", &Js::str(other))),
    }
    match text("capabilityAttestation") {
        None => {}
        Some("digest_mismatch") => registration_edit(
            &mut registrations,
            "capabilityDigest",
            Js::str(OTHER_DIGEST),
        ),
        Some(other) => return Err(unknown("capabilityAttestation", &Js::str(other))),
    }
    match vector.get("brokerIdentityVerified") {
        None => {}
        Some(v @ Js::Bool(_)) => {
            registration_edit(&mut registrations, "brokerIdentityVerified", v.clone())
        }
        Some(other) => return Err(unknown("brokerIdentityVerified", other)),
    }
    match text("registrationIdentity") {
        None => {}
        Some("boss_run_mismatch") => {
            registration_edit(&mut registrations, "bossRunId", Js::str("run-b"))
        }
        Some("participant_mismatch") => {
            registration_edit(&mut registrations, "participantId", Js::str("someone-else"))
        }
        Some("binding_epoch_mismatch") => {
            registration_edit(&mut registrations, "bindingEpoch", Js::Num(2.0))
        }
        Some(other) => return Err(unknown("registrationIdentity", &Js::str(other))),
    }
    let mut legacy_context = None;
    let mut boss_context = None;
    let mut extra_request = None;
    let ordinary = text("actorClass").is_none_or(|c| c == "ordinary");
    match text("downgradeAttempt") {
        None => {}
        Some("boss_fields_under_ordinary_discriminator") => {
            registration_edit(&mut registrations, "bossRunId", Js::str("run-a"));
            registration_edit(&mut registrations, "participantId", Js::str(actor.clone()));
            registration_edit(&mut registrations, "bindingEpoch", Js::Num(1.0));
        }
        Some("unknown_registration_field") => {
            registration_edit(&mut registrations, "routeAs", Js::str("ordinary"))
        }
        Some("map_key_principal_id_mismatch") => {
            registration_edit(&mut registrations, "principalId", Js::str("substitute"))
        }
        Some("policy_key_principal_id_mismatch") => {
            edit(&mut legacy, &actor, |p| set(p, "id", Js::str("substitute")))
        }
        Some("policy_state_mismatch") if ordinary => {
            edit(&mut legacy, &actor, |p| set(p, "state", Js::str("revoked")))
        }
        Some("policy_state_mismatch") => {
            edit(&mut boss, &actor, |p| set(p, "state", Js::str("revoked")))
        }
        Some("unknown_request_field") => {
            extra_request = Some(("principalClass", Js::str("ordinary")))
        }
        Some("boss_epoch_in_legacy_context") => {
            legacy_context = Some(Js::object(vec![("actorBindingEpoch", Js::Num(1.0))]))
        }
        Some(other) => return Err(unknown("downgradeAttempt", &Js::str(other))),
    }
    match text("context") {
        None => {}
        Some("boss") => boss_context = Some(Js::object(vec![])),
        Some("legacy") => legacy_context = Some(Js::object(vec![])),
        Some(other) => return Err(unknown("context", &Js::str(other))),
    }
    match (text("supervisorEdge"), text("policyClass")) {
        (None, None) => {}
        (Some("ordinary_owner_to_owned_worker"), Some("ordinary")) => {
            // A remote worker owned by the ordinary session: a tree edge, not local kind.
            let owner = actor.clone();
            edit(&mut legacy, &target, |p| {
                set(p, "kind", Js::str("remote"));
                set(p, "policy", Js::str("remote-tree"));
                set(p, "parentSessionId", Js::str(owner.clone()));
                set(p, "rootSessionId", Js::str(owner));
            });
        }
        (Some(edge), Some("boss-bound")) => {
            let (from, to) = match edge {
                "manager_to_assigned_worker" => ("manager", "worker"),
                "manager_to_assigned_scout" => ("manager", "scout"),
                "boss_to_current_manager" => ("boss", "manager"),
                "controller_to_run_participant" => ("controller", "worker"),
                other => return Err(unknown("supervisorEdge", &Js::str(other))),
            };
            actor = from.into();
            target = to.into();
            action = "discover".into();
        }
        (edge, class) => {
            return Err(unknown(
                "supervisorEdge",
                &Js::str(format!("{edge:?}/{class:?}")),
            ));
        }
    }
    let state = Js::object(vec![
        ("registrations", object(&registrations)),
        ("legacy", Js::object(vec![("principals", object(&legacy))])),
        ("boss", Js::object(vec![("principals", object(&boss))])),
    ]);
    let expected = match text("expected") {
        Some("THROW_CONTRACT_VALIDATION") => {
            Js::object(vec![("throws", Js::str("ContractValidationError"))])
        }
        Some("route_legacy") => allowed(Some("local-public")),
        Some("route_boss") => allowed(Some("communication-profile")),
        Some("dispatcher_discover_allowed") => allowed(None),
        Some(code) if code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') => {
            Js::object(vec![("allowed", Js::Bool(false)), ("code", Js::str(code))])
        }
        Some(reason) => allowed(Some(reason)),
        None => return Err(unknown("expected", &Js::Undefined)),
    };
    let (entry, args) = match text("entryPoint") {
        None => {
            let mut request = vec![
                ("actorId", Js::str(actor.clone())),
                ("targetId", Js::str(target.clone())),
                ("action", Js::str(action.clone())),
            ];
            if let Some(c) = legacy_context {
                request.push(("legacyContext", c));
            }
            if let Some(c) = boss_context {
                request.push(("bossContext", c));
            }
            if let Some(extra) = extra_request {
                request.push(extra);
            }
            ("authorizeFeatureAware", vec![state, Js::object(request)])
        }
        Some("legacy_boundary") => (
            "authorizeLegacyBoundary",
            vec![state, Js::str(actor), Js::str(action), Js::str(target)],
        ),
        Some(other) => return Err(unknown("entryPoint", &Js::str(other))),
    };
    let case = Js::object(vec![
        ("entryPoint", Js::str(entry)),
        ("args", Js::array(args)),
        ("expected", expected),
    ]);
    Ok(case.to_json().expect("a case is JSON data"))
}

fn allowed(reason: Option<&str>) -> Js {
    let mut fields = vec![("allowed", Js::Bool(true))];
    if let Some(reason) = reason {
        fields.push(("reason", Js::str(reason)));
    }
    Js::object(fields)
}
