//! Feature-aware authorization: registrations, the legacy boundary and `authorizeFeatureAware`.
//!
//! The broker's registration of each principal, never the request, chooses the policy kernel:
//! two `ordinary` registrations go to the frozen remote-access kernel through the hardened
//! legacy boundary, two attested `boss-bound` registrations go to the Boss policy with the
//! epochs the registrations hold, and anything else is denied. The state is read through own
//! enumerable data members only, and no registration may hold a key outside its class.
//!
//! The corpus ([`vectors`]) names scenarios rather than inputs; [`case_for_vector`] builds each one
//! (the runners in Rust, C and Node all use it). The boss-run-v1 feature contract a Boss-bound
//! registration must carry, and the hashes computed over every Boss corpus, are [`semantics`].

pub mod semantics;
pub mod vectors;

use self::semantics::{
    capability_feature_digest, check_feature_contract, feature_contract_json,
    feature_semantics_hash,
};
use self::vectors::{VECTORS_JSON, routing_semantics_hash};
use super::policy::{self, Decision, Principal as BossPrincipal};
use crate::contract::read::{self, Read};
use crate::contract::value::{number_to_string, write_json_string};
use crate::contract::{Args, Failure, Js, JsObject, JsStr, Op, Out, Proto};

/// `LEGACY_POLICY_ACTIONS`: the actions of the frozen remote-access policy.
pub const LEGACY_POLICY_ACTIONS: [&str; 8] = [
    "discover",
    "send",
    "ask",
    "reply",
    "inspect_tree",
    "delegate_child",
    "revoke",
    "adopt",
];
/// `FeatureRegistrationState` (a Boss-bound registration may be in any of them).
pub const REGISTRATION_STATES: [&str; 6] = [
    "active",
    "credential_only",
    "unbound",
    "revoked",
    "replaced",
    "ended",
];
/// The states of an ordinary registration.
pub const ORDINARY_REGISTRATION_STATES: [&str; 3] = ["active", "revoked", "ended"];

/// A parsed `FeatureRegistration`.
#[derive(Clone, Debug, PartialEq)]
pub enum Registration {
    /// `principalClass: "ordinary"`.
    Ordinary {
        /// `principalId`.
        principal_id: String,
        /// One of [`ORDINARY_REGISTRATION_STATES`].
        state: &'static str,
    },
    /// `principalClass: "boss-bound"`.
    Boss(BossRegistration),
}

/// A `BossFeatureRegistration`.
#[derive(Clone, Debug, PartialEq)]
pub struct BossRegistration {
    /// `principalId`.
    pub principal_id: String,
    /// One of [`REGISTRATION_STATES`].
    pub state: &'static str,
    /// `bossRunId`.
    pub boss_run_id: String,
    /// `participantId`.
    pub participant_id: String,
    /// `bindingEpoch`.
    pub binding_epoch: i64,
    /// `featureContract`, as given (it equals `BOSS_RUN_FEATURE_CONTRACT`).
    pub feature_contract: Js,
    /// `policySemanticsHash`.
    pub policy_semantics_hash: String,
    /// `capabilityDigest`.
    pub capability_digest: String,
    /// `brokerIdentityVerified`.
    pub broker_identity_verified: bool,
}

impl Registration {
    fn principal_id(&self) -> &str {
        match self {
            Registration::Ordinary { principal_id, .. } => principal_id,
            Registration::Boss(b) => &b.principal_id,
        }
    }

    fn state(&self) -> &'static str {
        match self {
            Registration::Ordinary { state, .. } => state,
            Registration::Boss(b) => b.state,
        }
    }

    /// The registration as JSON, its members in the contract's order.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"principalId\":");
        write_json_string(&mut out, self.principal_id());
        let put = |out: &mut String, key: &str, value: &str| {
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":");
            write_json_string(out, value);
        };
        match self {
            Registration::Ordinary { state, .. } => {
                put(&mut out, "principalClass", "ordinary");
                put(&mut out, "state", state);
            }
            Registration::Boss(b) => {
                put(&mut out, "principalClass", "boss-bound");
                put(&mut out, "state", b.state);
                put(&mut out, "bossRunId", &b.boss_run_id);
                put(&mut out, "participantId", &b.participant_id);
                out.push_str(&format!(",\"bindingEpoch\":{}", b.binding_epoch));
                out.push_str(",\"featureContract\":");
                out.push_str(
                    &b.feature_contract
                        .to_json()
                        .unwrap_or_else(feature_contract_json),
                );
                put(&mut out, "policySemanticsHash", &b.policy_semantics_hash);
                put(&mut out, "capabilityDigest", &b.capability_digest);
                out.push_str(&format!(
                    ",\"brokerIdentityVerified\":{}",
                    b.broker_identity_verified
                ));
            }
        }
        out.push('}');
        out
    }
}

const BOSS_REGISTRATION_KEYS: [&str; 10] = [
    "principalId",
    "principalClass",
    "state",
    "bossRunId",
    "participantId",
    "bindingEpoch",
    "featureContract",
    "policySemanticsHash",
    "capabilityDigest",
    "brokerIdentityVerified",
];

/// `parseFeatureRegistration(value, path)`: the exact registration of its class.
pub fn parse_registration(value: &Js, path: &str) -> Read<Registration> {
    read::record(value, path)?;
    let at = |key: &str| read::member(path, key);
    let field = |key: &str| read::field(value, key);
    let class = read::one_of(
        field("principalClass"),
        &["ordinary", "boss-bound"],
        &at("principalClass"),
    )?;
    if class == "ordinary" {
        read::exact_keys(
            value,
            &["principalId", "principalClass", "state"],
            &[],
            path,
        )?;
        return Ok(Registration::Ordinary {
            principal_id: read::identifier(field("principalId"), &at("principalId"))?.to_string(),
            state: read::one_of(field("state"), &ORDINARY_REGISTRATION_STATES, &at("state"))?,
        });
    }
    read::exact_keys(value, &BOSS_REGISTRATION_KEYS, &[], path)?;
    let principal_id = read::identifier(field("principalId"), &at("principalId"))?.to_string();
    let state = read::one_of(field("state"), &REGISTRATION_STATES, &at("state"))?;
    let boss_run_id = read::identifier(field("bossRunId"), &at("bossRunId"))?.to_string();
    let participant_id =
        read::identifier(field("participantId"), &at("participantId"))?.to_string();
    let binding_epoch = read::integer(field("bindingEpoch"), &at("bindingEpoch"), 1)?;
    check_feature_contract(field("featureContract"))?;
    Ok(Registration::Boss(BossRegistration {
        principal_id,
        state,
        boss_run_id,
        participant_id,
        binding_epoch,
        feature_contract: field("featureContract").clone(),
        policy_semantics_hash: read::hex_digest(
            field("policySemanticsHash"),
            &at("policySemanticsHash"),
        )?
        .to_string(),
        capability_digest: read::hex_digest(field("capabilityDigest"), &at("capabilityDigest"))?
            .to_string(),
        broker_identity_verified: read::boolean(
            field("brokerIdentityVerified"),
            &at("brokerIdentityVerified"),
        )?,
    }))
}

/// A legacy `AuthorizationContext` as the feature boundary reads it (generations `>= 1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyContext {
    /// `actorGeneration`.
    pub actor_generation: Option<i64>,
    /// `targetGeneration`.
    pub target_generation: Option<i64>,
}

fn parse_legacy_context(value: &Js, path: &str) -> Read<LegacyContext> {
    read::exact_record(value, &[], &["actorGeneration", "targetGeneration"], path)?;
    let generation = |key: &str| {
        read::optional(read::field(value, key), |v| {
            read::integer(v, &read::member(path, key), 1)
        })
    };
    Ok(LegacyContext {
        actor_generation: generation("actorGeneration")?,
        target_generation: generation("targetGeneration")?,
    })
}

fn parse_boss_context(value: &Js, path: &str) -> Read<policy::Context> {
    read::exact_record(
        value,
        &[],
        &[
            "actorBindingEpoch",
            "targetBindingEpoch",
            "controlKind",
            "correlated",
        ],
        path,
    )?;
    let field = |key: &str| read::field(value, key);
    let at = |key: &str| read::member(path, key);
    let epoch = |key: &str| read::optional(field(key), |v| read::integer(v, &at(key), 1));
    Ok(policy::Context {
        actor_epoch: epoch("actorBindingEpoch")?,
        target_epoch: epoch("targetBindingEpoch")?,
        control_kind: read::optional(field("controlKind"), |v| {
            read::one_of(v, &policy::CONTROL_KINDS, &at("controlKind"))
        })?,
        correlated: read::optional(field("correlated"), |v| read::boolean(v, &at("correlated")))?,
    })
}

/// A parsed `FeatureAwareAuthorizationRequest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `actorId`.
    pub actor_id: String,
    /// `targetId`.
    pub target_id: String,
    /// `action`: any non-empty string; its namespace is checked once the class is known.
    pub action: String,
    /// `legacyContext`.
    pub legacy_context: Option<LegacyContext>,
    /// `bossContext`.
    pub boss_context: Option<policy::Context>,
}

impl Request {
    /// The request as JSON, its members in the contract's order.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"actorId\":");
        write_json_string(&mut out, &self.actor_id);
        out.push_str(",\"targetId\":");
        write_json_string(&mut out, &self.target_id);
        out.push_str(",\"action\":");
        write_json_string(&mut out, &self.action);
        let number = |out: &mut String, key: &str, n: Option<i64>| {
            if let Some(n) = n {
                out.push_str(&format!("{}\"{key}\":{n}", comma(out)));
            }
        };
        if let Some(c) = &self.legacy_context {
            out.push_str(",\"legacyContext\":{");
            number(&mut out, "actorGeneration", c.actor_generation);
            number(&mut out, "targetGeneration", c.target_generation);
            out.push('}');
        }
        if let Some(c) = &self.boss_context {
            out.push_str(",\"bossContext\":{");
            number(&mut out, "actorBindingEpoch", c.actor_epoch);
            number(&mut out, "targetBindingEpoch", c.target_epoch);
            if let Some(kind) = c.control_kind {
                out.push_str(&format!("{}\"controlKind\":\"{kind}\"", comma(&out)));
            }
            if let Some(correlated) = c.correlated {
                out.push_str(&format!("{}\"correlated\":{correlated}", comma(&out)));
            }
            out.push('}');
        }
        out.push('}');
        out
    }
}

fn comma(out: &str) -> &'static str {
    if out.ends_with('{') { "" } else { "," }
}

/// `parseFeatureAwareAuthorizationRequest`.
pub fn parse_request(value: &Js) -> Read<Request> {
    read::exact_record(
        value,
        &["actorId", "targetId", "action"],
        &["legacyContext", "bossContext"],
        "$",
    )?;
    let field = |key: &str| read::field(value, key);
    let legacy_context = read::optional(field("legacyContext"), |v| {
        parse_legacy_context(v, "$.legacyContext")
    })?;
    let boss_context = read::optional(field("bossContext"), |v| {
        parse_boss_context(v, "$.bossContext")
    })?;
    Ok(Request {
        actor_id: read::identifier(field("actorId"), "$.actorId")?.to_string(),
        target_id: read::identifier(field("targetId"), "$.targetId")?.to_string(),
        action: read::string(field("action"), "$.action")?.to_string(),
        legacy_context,
        boss_context,
    })
}

type Members = [(JsStr, Js)];

/// The own members of a record of own enumerable data string keys: a plain object, or (with
/// `any_prototype`) an object of any prototype, whose own members TypeScript reads as they are
/// (the snapshot carries them; its prototype's are never seen).
fn data_record(value: &Js, any_prototype: bool) -> Option<&Members> {
    match value {
        Js::Object(JsObject {
            proto,
            members,
            symbols: false,
        }) if *proto == Proto::Plain || any_prototype => {
            (!members.iter().any(|(_, v)| matches!(v, Js::Hidden))).then_some(members)
        }
        _ => None,
    }
}

fn has_exact_keys(members: &Members, keys: &[&str]) -> bool {
    members.len() == keys.len()
        && keys.iter().all(|key| {
            members
                .iter()
                .any(|(k, _)| k.lone.is_none() && k.text == *key)
        })
}

fn own<'a>(members: &'a Members, key: &JsStr) -> Option<&'a Js> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn own_str<'a>(members: &'a Members, key: &str) -> Option<&'a Js> {
    members
        .iter()
        .rev()
        .find(|(k, _)| k.lone.is_none() && k.text == key)
        .map(|(_, v)| v)
}

/// The additive state, projected: each map's own members.
struct Projected<'a> {
    registrations: &'a Members,
    legacy: &'a Members,
    boss: &'a Members,
}

fn principals_container(value: &Js) -> Option<&Members> {
    let container = data_record(value, false)?;
    if !has_exact_keys(container, &["principals"]) {
        return None;
    }
    data_record(own_str(container, "principals")?, true)
}

fn project(state: &Js) -> Option<Projected<'_>> {
    let top = data_record(state, false)?;
    if !has_exact_keys(top, &["registrations", "legacy", "boss"]) {
        return None;
    }
    Some(Projected {
        registrations: data_record(own_str(top, "registrations")?, false)?,
        legacy: principals_container(own_str(top, "legacy")?)?,
        boss: principals_container(own_str(top, "boss")?)?,
    })
}

/// A principal id as a property key (`String(id)`), `None` for a symbol (never an own key of a
/// projected map).
fn key_of(id: &Js) -> Option<JsStr> {
    match id {
        Js::Str(s) => Some(s.clone()),
        Js::Symbol => None,
        other => Some(JsStr {
            text: other.js_string(),
            lone: None,
        }),
    }
}

/// `$.registrations[<JSON.stringify(id)>]`.
fn registration_path(id: &Js) -> String {
    let shown = match id {
        Js::Str(s) => {
            let mut out = String::new();
            write_json_string(&mut out, &s.text);
            out
        }
        Js::Num(n) if n.is_finite() => number_to_string(*n),
        Js::Num(_) | Js::Null => "null".into(),
        Js::Bool(b) => b.to_string(),
        other => other.to_json().unwrap_or_else(|| "undefined".into()),
    };
    format!("$.registrations[{shown}]")
}

enum Lookup {
    Missing,
    Invalid,
    Valid(Registration),
}

fn registration(state: &Projected<'_>, id: &Js) -> Lookup {
    let Some(entry) = key_of(id).and_then(|key| own(state.registrations, &key)) else {
        return Lookup::Missing;
    };
    match parse_registration(entry, &registration_path(id)) {
        Ok(r) if id.as_str() == Some(r.principal_id()) => Lookup::Valid(r),
        _ => Lookup::Invalid,
    }
}

/// The legacy principal's own members when it is a record of exactly the policy interface's
/// keys (any prototype; values as given).
const LEGACY_REQUIRED: [&str; 6] = crate::policy::PRINCIPAL_KEYS;

fn legacy_principal<'a>(legacy: &'a Members, id: &Js) -> Option<&'a Js> {
    let entry = own(legacy, &key_of(id)?)?;
    let members = data_record(entry, true)?;
    let allowed = |k: &JsStr| {
        k.lone.is_none()
            && (LEGACY_REQUIRED.contains(&k.text.as_str()) || k.text == "parentSessionId")
    };
    if !members.iter().all(|(k, _)| allowed(k))
        || !LEGACY_REQUIRED
            .iter()
            .all(|key| members.iter().any(|(k, _)| k.text == *key))
    {
        return None;
    }
    Some(entry)
}

fn ordinary_binding(state: &Projected<'_>, id: &Js, registration: &Registration) -> bool {
    let Some(principal) = legacy_principal(state.legacy, id) else {
        return false;
    };
    registration.state() == "active"
        && principal.get("id") == Some(id)
        && principal.get("state").and_then(Js::as_str) == Some(registration.state())
}

fn boss_binding(
    state: &Projected<'_>,
    id: &str,
    registration: &BossRegistration,
) -> Option<policy::PrivatePrincipal> {
    let entry = own_str(state.boss, id)?;
    let BossPrincipal::Private(principal) = policy::parse_principal(entry).ok()? else {
        return None;
    };
    let bound = registration.state == "active"
        && principal.state == registration.state
        && principal.principal_id == id
        && registration.boss_run_id == principal.boss_run_id
        && registration.participant_id == principal.participant_id
        && registration.binding_epoch == principal.binding_epoch;
    bound.then_some(principal)
}

fn attested(r: &BossRegistration) -> bool {
    r.feature_contract.get("semanticsHash").and_then(Js::as_str) == Some(feature_semantics_hash())
        && r.policy_semantics_hash == policy::semantics_hash()
        && r.capability_digest == capability_feature_digest()
        && r.broker_identity_verified
}

/// The legacy principals the frozen kernel may see: own entries that name their key.
fn legacy_projection(legacy: &Members) -> Vec<(JsStr, Js)> {
    legacy
        .iter()
        .filter(|(key, _)| {
            let id = Js::Str(key.clone());
            legacy_principal(legacy, &id).is_some_and(|p| p.get("id") == Some(&id))
        })
        .cloned()
        .collect()
}

/// The frozen kernel's decision over the projection, hardened: a `local-public` answer needs
/// both principals to be `local-public` policies, else the remote-tree relationships decide.
///
/// The kernel is typed: a projected record it cannot read (an unknown kind, a generation that is
/// not a safe integer, ...) is left out of its state, so as the actor or the target it is
/// `UNKNOWN_PRINCIPAL` (TypeScript hands such values to the kernel as they are).
fn legacy_decide(
    projection: &[(JsStr, Js)],
    actor: &str,
    action: &'static str,
    target: &str,
    context: &LegacyContext,
) -> Result<Decision, Failure> {
    use crate::policy::{
        self as kernel, AllowReason, AuthorizationContext, PolicyAction, PolicyState, Principal,
        PrincipalPolicy,
    };
    let mut state = PolicyState::new();
    for (key, value) in projection {
        if let Ok(principal) = Principal::from_js(value, "$") {
            state.insert_keyed(key.text.clone(), principal);
        }
    }
    let kernel_action = PolicyAction::parse(action).expect("a frozen legacy policy action");
    let generation = |g: Option<i64>| g.map(|g| g as u64);
    let context = AuthorizationContext {
        actor_generation: generation(context.actor_generation),
        target_generation: generation(context.target_generation),
    };
    let decision = kernel::authorize(&state, actor, kernel_action, target, &context);
    let local_public = kernel::Decision::Allowed(AllowReason::LocalPublic);
    if decision != local_public {
        return Ok(match decision {
            kernel::Decision::Allowed(reason) => Decision::Allowed(reason.as_str()),
            kernel::Decision::Denied(code) => Decision::Denied(code.as_str()),
        });
    }
    let (Some(a), Some(t)) = (state.get(actor), state.get(target)) else {
        return Ok(Decision::Denied("POLICY_DENIED"));
    };
    if a.policy == PrincipalPolicy::LocalPublic && t.policy == PrincipalPolicy::LocalPublic {
        return Ok(Decision::Allowed("local-public"));
    }
    // The frozen kernel answers local-public on kind alone; live routing keeps only the
    // remote-tree relationships for a pair that is not two local-public policies.
    if matches!(action, "discover" | "send" | "ask" | "reply") {
        if kernel::is_direct_parent_pair(a, t) {
            return Ok(Decision::Allowed("direct-parent"));
        }
        if kernel::is_ancestor(&state, &a.id, &t.id) || kernel::is_ancestor(&state, &t.id, &a.id) {
            return Ok(Decision::Allowed("ancestor-chain"));
        }
    }
    if matches!(action, "inspect_tree" | "revoke" | "adopt")
        && kernel::is_ancestor(&state, &a.id, &t.id)
    {
        return Ok(Decision::Allowed("ancestor-control"));
    }
    Ok(Decision::Denied("POLICY_DENIED"))
}

fn legacy_action(action: &Js) -> Option<&'static str> {
    action
        .as_str()
        .and_then(|a| LEGACY_POLICY_ACTIONS.iter().find(|x| **x == a).copied())
}

/// `authorizeLegacyBoundary(state, actorId, action, targetId, context)`: throws (a
/// [`Failure`]) when the pair is not two active, bound ordinary registrations.
pub fn authorize_legacy_boundary(
    state: &Js,
    actor_id: &Js,
    action: &Js,
    target_id: &Js,
    context: &Js,
) -> Result<Decision, Failure> {
    let context = match context {
        Js::Undefined => LegacyContext::default(),
        value => parse_legacy_context(value, "$.legacyContext")?,
    };
    let Some(action) = legacy_action(action) else {
        return read::fail("$.action", "must be a frozen legacy policy action");
    };
    let Some(projected) = project(state) else {
        return read::fail("$.state", "must be an exact additive feature-policy state");
    };
    let exact_ordinary = |id: &Js| -> Read<Registration> {
        let path = registration_path(id);
        match registration(&projected, id) {
            Lookup::Valid(r @ Registration::Ordinary { .. }) if r.state() == "active" => Ok(r),
            Lookup::Valid(Registration::Ordinary { .. }) => read::fail(
                &read::member(&path, "state"),
                "must be active at the legacy authorization boundary",
            ),
            Lookup::Valid(Registration::Boss(_)) => read::fail(
                &path,
                "Boss-bound principals must never cross the frozen legacy authorization boundary",
            ),
            Lookup::Missing | Lookup::Invalid => {
                read::fail(&path, "must be an authoritative exact registration")
            }
        }
    };
    let actor = exact_ordinary(actor_id)?;
    let target = exact_ordinary(target_id)?;
    if !ordinary_binding(&projected, actor_id, &actor)
        || !ordinary_binding(&projected, target_id, &target)
    {
        return read::fail(
            "$.legacy.principals",
            "must contain active principals bound to their registration map keys",
        );
    }
    legacy_decide(
        &legacy_projection(projected.legacy),
        actor.principal_id(),
        action,
        target.principal_id(),
        &context,
    )
}

fn number(n: i64) -> Js {
    Js::Num(n as f64)
}

/// `authorizeFeatureAware(state, request)`: throws only for a malformed request.
pub fn authorize_feature_aware(state: &Js, request: &Js) -> Result<Decision, Failure> {
    use Decision::Denied;
    let request = parse_request(request)?;
    let Some(projected) = project(state) else {
        return Ok(Denied("FEATURE_ATTESTATION_DENIED"));
    };
    let actor_id = Js::str(request.actor_id.clone());
    let target_id = Js::str(request.target_id.clone());
    let (actor, target) = match (
        registration(&projected, &actor_id),
        registration(&projected, &target_id),
    ) {
        (Lookup::Missing, _) | (_, Lookup::Missing) => return Ok(Denied("UNKNOWN_REGISTRATION")),
        (Lookup::Valid(a), Lookup::Valid(t)) => (a, t),
        _ => return Ok(Denied("FEATURE_ATTESTATION_DENIED")),
    };
    if actor.state() != "active" || target.state() != "active" {
        return Ok(Denied("BINDING_INACTIVE"));
    }
    let (actor, target) = match (actor, target) {
        (a @ Registration::Ordinary { .. }, t @ Registration::Ordinary { .. }) => {
            if request.boss_context.is_some() {
                return Ok(Denied("CONTEXT_NAMESPACE_DENIED"));
            }
            let Some(action) = legacy_action(&Js::str(request.action.clone())) else {
                return Ok(Denied("ACTION_NAMESPACE_DENIED"));
            };
            if !ordinary_binding(&projected, &actor_id, &a)
                || !ordinary_binding(&projected, &target_id, &t)
            {
                return Ok(Denied("FEATURE_ATTESTATION_DENIED"));
            }
            return legacy_decide(
                &legacy_projection(projected.legacy),
                &request.actor_id,
                action,
                &request.target_id,
                &request.legacy_context.unwrap_or_default(),
            );
        }
        (Registration::Boss(a), Registration::Boss(t)) => (a, t),
        _ => return Ok(Denied("FEATURE_CLASS_DENIED")),
    };
    if !attested(&actor) || !attested(&target) {
        return Ok(Denied("FEATURE_ATTESTATION_DENIED"));
    }
    if boss_binding(&projected, &request.actor_id, &actor).is_none()
        || boss_binding(&projected, &request.target_id, &target).is_none()
    {
        return Ok(Denied("FEATURE_ATTESTATION_DENIED"));
    }
    if request.legacy_context.is_some() {
        return Ok(Denied("CONTEXT_NAMESPACE_DENIED"));
    }
    if !policy::ACTIONS.contains(&request.action.as_str()) {
        return Ok(Denied("ACTION_NAMESPACE_DENIED"));
    }
    let given = request.boss_context.unwrap_or_default();
    if given.actor_epoch.is_some_and(|e| e != actor.binding_epoch)
        || given
            .target_epoch
            .is_some_and(|e| e != target.binding_epoch)
    {
        return Ok(Denied("FEATURE_ATTESTATION_DENIED"));
    }
    // The Boss kernel reads the projected map and the registrations' epochs (the request's
    // control fields kept: an action that takes none is then denied by the kernel).
    let mut context = vec![
        ("actorBindingEpoch", number(actor.binding_epoch)),
        ("targetBindingEpoch", number(target.binding_epoch)),
    ];
    if let Some(kind) = given.control_kind {
        context.push(("controlKind", Js::str(kind)));
    }
    if let Some(correlated) = given.correlated {
        context.push(("correlated", Js::Bool(correlated)));
    }
    let boss_state = Js::object(vec![(
        "principals",
        Js::Object(JsObject {
            proto: Proto::Plain,
            members: projected.boss.to_vec(),
            symbols: false,
        }),
    )]);
    Ok(policy::authorize(
        &boss_state,
        &actor_id,
        &Js::str(request.action),
        &target_id,
        &Js::object(context),
    ))
}

/// The constants of the feature policy as one JSON object (read once by the Node module).
fn constants_json() -> String {
    let mut out = String::from("{\"legacyPolicyActions\":[");
    for (i, action) in LEGACY_POLICY_ACTIONS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(&mut out, action);
    }
    out.push_str("]}");
    out
}

/// The corpus as the Node module reads it: `{semanticsHash, corpus}` with the file as shipped.
fn vectors_json() -> String {
    format!(
        "{{\"semanticsHash\":\"{}\",\"corpus\":{VECTORS_JSON}}}",
        routing_semantics_hash()
    )
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.featureConstants",
        run: |_| Ok(Out::Json(constants_json())),
    },
    Op {
        name: "boss.featureRoutingVectors",
        run: |_| Ok(Out::Json(vectors_json())),
    },
    Op {
        name: "boss.parseFeatureRegistration",
        run: |a| {
            let path = crate::contract::ops::path(a, 1, "$")?;
            parse_registration(a.get(0), &path).map(|r| Out::Json(r.to_json()))
        },
    },
    Op {
        name: "boss.parseFeatureAwareAuthorizationRequest",
        run: |a| parse_request(a.get(0)).map(|r| Out::Json(r.to_json())),
    },
    Op {
        name: "boss.authorizeLegacyBoundary",
        run: legacy_op,
    },
    Op {
        name: "boss.authorizeFeatureAware",
        run: |a| authorize_feature_aware(a.get(0), a.get(1)).map(|d| Out::Json(d.to_json())),
    },
    Op {
        name: "boss.featureRoutingCaseForVector",
        run: |a| case_for_vector(a.get(0)).map(Out::Json),
    },
];

fn legacy_op(a: Args<'_>) -> Result<Out, Failure> {
    authorize_legacy_boundary(a.get(0), a.get(1), a.get(2), a.get(3), a.get(4))
        .map(|d| Out::Json(d.to_json()))
}

/// `featureRoutingCaseForVector(vector)`: the scenario a feature-routing vector names, as
/// `{entryPoint, args, expected}` (JSON). `entryPoint` is `authorizeFeatureAware` or
/// `authorizeLegacyBoundary`; `expected` is `{throws: "ContractValidationError"}` or
/// `{allowed, reason?|code?}` (a reason or code the vector leaves open is absent).
pub fn case_for_vector(vector: &Js) -> Result<String, Failure> {
    cases::build(vector)
}

/// The scenarios of the feature-routing corpus.
mod cases;
