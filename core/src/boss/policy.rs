//! The Boss policy (`./boss/policy`): principals, `authorizeBossPolicy`, and its vector corpus.
//!
//! Boss-private principals belong to one Boss run and talk along the run's role edges
//! (communication) or send typed, correlated control along a directional allowlist
//! ([`CONTROL_MATRIX`]); legacy local-public principals only talk to each other. A decision
//! never throws: every malformed input is a denial, tried in the TypeScript contract's order
//! (action, ids, context, state, principals, states, class, epochs, run, identity uniqueness,
//! then the edges).
//!
//! The corpus (`vectors/boss-policy-v1.json`, embedded from `core/data/`) fixes the semantics:
//! [`semantics_hash`] is computed from it, never typed in.

use std::sync::LazyLock;

use crate::boss::wire::BOSS_POLICY_SEMANTICS_VERSION;
use crate::canonical::{self, Value};
use crate::contract::read::{self, Read};
use crate::contract::value::write_json_string;
use crate::contract::{Args, Failure, Js, JsObject, JsStr, Op, Out, Proto};

/// `BOSS_POLICY_PRINCIPAL_VERSION`: the `version` of every principal record.
pub const PRINCIPAL_VERSION: &str = "boss.policy-principal.v1";
/// `BOSS_POLICY_ACTIONS`.
pub const ACTIONS: [&str; 5] = ["discover", "send", "ask", "reply", "control"];
/// `BOSS_POLICY_ROLES`: the six participant roles and the run's controller.
pub const ROLES: [&str; 7] = [
    "boss",
    "manager",
    "adversary",
    "scout",
    "worker",
    "council",
    "controller",
];
/// `BOSS_CONTROL_KINDS`.
pub const CONTROL_KINDS: [&str; 9] = [
    "assignment_request",
    "assignment_response",
    "health",
    "staffing",
    "review_request",
    "review_result",
    "proof",
    "lifecycle",
    "decision",
];

/// Control kinds one role may send to another.
pub type ControlRow = (&'static str, &'static [&'static str]);

/// `BOSS_DIRECTIONAL_CONTROL_KIND_MATRIX`: actor role → target role → the control kinds it may
/// send, in the contract's order. An absent pair or kind is denied; assignment (Manager with its
/// Workers and Scouts) and requester (Council) bindings are checked on top of it.
pub const CONTROL_MATRIX: [(&str, &[ControlRow]); 7] = [
    (
        "boss",
        &[
            ("manager", &["lifecycle", "decision"]),
            ("adversary", &["review_request"]),
            ("council", &["review_request"]),
            ("controller", &["lifecycle", "decision"]),
        ],
    ),
    (
        "manager",
        &[
            ("boss", &["health", "staffing", "proof", "lifecycle"]),
            ("adversary", &["review_request"]),
            ("scout", &["assignment_request", "lifecycle"]),
            ("worker", &["assignment_request", "lifecycle"]),
            (
                "controller",
                &[
                    "assignment_request",
                    "health",
                    "staffing",
                    "review_request",
                    "proof",
                    "lifecycle",
                ],
            ),
        ],
    ),
    (
        "adversary",
        &[
            ("boss", &["health", "review_result", "proof"]),
            ("manager", &["health", "review_result", "proof"]),
            ("controller", &["health", "review_result", "proof"]),
        ],
    ),
    (
        "scout",
        &[
            ("manager", &["assignment_response", "health", "proof"]),
            ("controller", &["assignment_response", "health"]),
        ],
    ),
    (
        "worker",
        &[
            ("manager", &["assignment_response", "health", "proof"]),
            ("controller", &["assignment_response", "health"]),
        ],
    ),
    (
        "council",
        &[
            ("boss", &["health", "review_result"]),
            ("controller", &["health", "review_result"]),
        ],
    ),
    (
        "controller",
        &[
            ("boss", &["health", "proof", "lifecycle", "decision"]),
            (
                "manager",
                &[
                    "assignment_response",
                    "health",
                    "staffing",
                    "review_result",
                    "lifecycle",
                    "decision",
                ],
            ),
            ("adversary", &["review_request", "lifecycle"]),
            ("scout", &["assignment_request", "lifecycle"]),
            ("worker", &["assignment_request", "lifecycle"]),
            ("council", &["review_request"]),
        ],
    ),
];

/// The corpus file exactly as shipped in `vectors/boss-policy-v1.json`, embedded from the
/// crate's own copy (`core/data/`, written by `cargo xtask gen`) so the crate can be packaged.
pub const VECTORS_JSON: &str = include_str!("../../data/boss-policy-v1.json");
/// The domain of [`semantics_hash`].
pub const VECTORS_HASH_DOMAIN: &str = "agent-intercom-core/boss-run-v1/policy-vectors";
/// `BOSS_POLICY_VECTOR_SCHEMA_VERSION`.
pub const VECTOR_SCHEMA_VERSION: u32 = 1;

static SEMANTICS_HASH: LazyLock<String> =
    LazyLock::new(|| corpus_hash(VECTORS_HASH_DOMAIN, VECTORS_JSON));

/// `BOSS_POLICY_SEMANTICS_HASH`: `canonicalHash(VECTORS_HASH_DOMAIN, {version, vectors})` of the
/// embedded corpus.
pub fn semantics_hash() -> &'static str {
    &SEMANTICS_HASH
}

/// `canonicalHash(domain, {version, vectors})` of a corpus file's `version` and `vectors`.
pub(crate) fn corpus_hash(domain: &str, file: &str) -> String {
    let doc = canonical::parse(file).expect("an embedded corpus is canonical JSON data");
    let member = |key: &str| {
        doc.get(key)
            .unwrap_or_else(|| panic!("the corpus has no {key}"))
            .clone()
    };
    let hashed = Value::Object(vec![
        ("version".into(), member("version")),
        ("vectors".into(), member("vectors")),
    ]);
    canonical::canonical_hash(domain, &hashed).expect("the corpus hashes")
}

/// A principal as `parseBossPolicyPrincipal` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// `legacy-local-public`: a session outside every Boss run.
    Legacy {
        /// `principalId`.
        principal_id: String,
        /// `active` or `revoked`.
        state: &'static str,
    },
    /// `boss-private`: a participant of one Boss run.
    Private(PrivatePrincipal),
}

/// A `boss-private` principal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivatePrincipal {
    /// `principalId`.
    pub principal_id: String,
    /// `active`, `revoked` or `replaced`.
    pub state: &'static str,
    /// `bossRunId`.
    pub boss_run_id: String,
    /// `participantId`.
    pub participant_id: String,
    /// One of [`ROLES`].
    pub role: &'static str,
    /// `bindingEpoch`.
    pub binding_epoch: i64,
    /// `assignedManagerParticipantId` (exactly Workers and Scouts).
    pub assigned_manager: Option<String>,
    /// `assignedParticipantIds` (exactly Managers).
    pub assigned: Option<Vec<String>>,
    /// `requestingPrincipalId` (exactly Council).
    pub requesting: Option<String>,
}

impl Principal {
    /// `principalId`.
    pub fn principal_id(&self) -> &str {
        match self {
            Principal::Legacy { principal_id, .. } => principal_id,
            Principal::Private(p) => &p.principal_id,
        }
    }

    /// `state`.
    pub fn state(&self) -> &'static str {
        match self {
            Principal::Legacy { state, .. } => state,
            Principal::Private(p) => p.state,
        }
    }

    /// The record as JSON, its members in the contract's order.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"version\":");
        write_json_string(&mut out, PRINCIPAL_VERSION);
        let put = |out: &mut String, key: &str, value: &str| {
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":");
            write_json_string(out, value);
        };
        match self {
            Principal::Legacy {
                principal_id,
                state,
            } => {
                put(&mut out, "principalId", principal_id);
                put(&mut out, "principalClass", "legacy-local-public");
                put(&mut out, "state", state);
            }
            Principal::Private(p) => {
                put(&mut out, "principalId", &p.principal_id);
                put(&mut out, "principalClass", "boss-private");
                put(&mut out, "state", p.state);
                put(&mut out, "bossRunId", &p.boss_run_id);
                put(&mut out, "participantId", &p.participant_id);
                put(&mut out, "role", p.role);
                out.push_str(&format!(",\"bindingEpoch\":{}", p.binding_epoch));
                if let Some(manager) = &p.assigned_manager {
                    put(&mut out, "assignedManagerParticipantId", manager);
                }
                if let Some(assigned) = &p.assigned {
                    out.push_str(",\"assignedParticipantIds\":[");
                    for (i, id) in assigned.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write_json_string(&mut out, id);
                    }
                    out.push(']');
                }
                if let Some(requesting) = &p.requesting {
                    put(&mut out, "requestingPrincipalId", requesting);
                }
            }
        }
        out.push('}');
        out
    }
}

const PRIVATE_REQUIRED: [&str; 8] = [
    "version",
    "principalId",
    "principalClass",
    "state",
    "bossRunId",
    "participantId",
    "role",
    "bindingEpoch",
];
const PRIVATE_OPTIONAL: [&str; 3] = [
    "assignedManagerParticipantId",
    "assignedParticipantIds",
    "requestingPrincipalId",
];

/// `parseBossPolicyPrincipal`: the exact record, checked in the contract's order.
pub fn parse_principal(value: &Js) -> Read<Principal> {
    read::record(value, "$")?;
    let field = |key: &str| read::field(value, key);
    let version = read::string(field("version"), "$.version")?;
    if version != PRINCIPAL_VERSION {
        return read::fail("$.version", format!("unsupported version: {version}"));
    }
    let class = read::one_of(
        field("principalClass"),
        &["boss-private", "legacy-local-public"],
        "$.principalClass",
    )?;
    if class == "legacy-local-public" {
        read::exact_keys(
            value,
            &["version", "principalId", "principalClass", "state"],
            &[],
            "$",
        )?;
        return Ok(Principal::Legacy {
            principal_id: read::string(field("principalId"), "$.principalId")?.to_string(),
            state: read::one_of(field("state"), &["active", "revoked"], "$.state")?,
        });
    }
    read::exact_keys(value, &PRIVATE_REQUIRED, &PRIVATE_OPTIONAL, "$")?;
    let role = read::one_of(field("role"), &ROLES, "$.role")?;
    let assigned_manager = read::optional_string(
        field("assignedManagerParticipantId"),
        "$.assignedManagerParticipantId",
    )?;
    let assigned = match field("assignedParticipantIds") {
        Js::Undefined => None,
        v => Some(read::string_array(v, "$.assignedParticipantIds")?),
    };
    let requesting =
        read::optional_string(field("requestingPrincipalId"), "$.requestingPrincipalId")?;
    if matches!(role, "worker" | "scout") != assigned_manager.is_some() {
        return read::fail(
            "$.assignedManagerParticipantId",
            "is required exactly for Worker and Scout principals",
        );
    }
    if (role == "manager") != assigned.is_some() {
        return read::fail(
            "$.assignedParticipantIds",
            "is required exactly for Manager principals",
        );
    }
    if let Some(ids) = &assigned {
        let unique: std::collections::HashSet<&str> = ids.iter().copied().collect();
        if unique.len() != ids.len() {
            return read::fail("$.assignedParticipantIds", "must not contain duplicates");
        }
    }
    if (role == "council") != requesting.is_some() {
        return read::fail(
            "$.requestingPrincipalId",
            "is required exactly for Council principals",
        );
    }
    Ok(Principal::Private(PrivatePrincipal {
        principal_id: read::string(field("principalId"), "$.principalId")?.to_string(),
        state: read::one_of(
            field("state"),
            &["active", "revoked", "replaced"],
            "$.state",
        )?,
        boss_run_id: read::string(field("bossRunId"), "$.bossRunId")?.to_string(),
        participant_id: read::string(field("participantId"), "$.participantId")?.to_string(),
        role,
        binding_epoch: read::integer(field("bindingEpoch"), "$.bindingEpoch", 1)?,
        assigned_manager: assigned_manager.map(str::to_string),
        assigned: assigned.map(|ids| ids.into_iter().map(str::to_string).collect()),
        requesting: requesting.map(str::to_string),
    }))
}

/// What `authorizeBossPolicy` decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// `{allowed: true, reason}`: `legacy-local-public`, `self`, `communication-profile` or
    /// `structured-control`.
    Allowed(&'static str),
    /// `{allowed: false, code}`: one of the `BossAuthorizationDenialCode`s.
    Denied(&'static str),
}

impl Decision {
    /// The decision as the contract returns it, as JSON.
    pub fn to_json(self) -> String {
        match self {
            Decision::Allowed(reason) => format!(r#"{{"allowed":true,"reason":"{reason}"}}"#),
            Decision::Denied(code) => format!(r#"{{"allowed":false,"code":"{code}"}}"#),
        }
    }
}

/// A parsed `BossAuthorizationContext`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// `actorBindingEpoch`.
    pub actor_epoch: Option<i64>,
    /// `targetBindingEpoch`.
    pub target_epoch: Option<i64>,
    /// `controlKind` (control only).
    pub control_kind: Option<&'static str>,
    /// `correlated` (control only).
    pub correlated: Option<bool>,
}

/// The context of one action: a plain object of own data members, the two epochs, and for
/// `control` also `controlKind` and `correlated`.
fn parse_context(value: &Js, action: &str) -> Read<Context> {
    let Js::Object(JsObject {
        proto: Proto::Plain,
        members,
        symbols,
    }) = value
    else {
        return read::fail("$.context", "must be a plain object");
    };
    let permitted: &[&str] = if action == "control" {
        &[
            "actorBindingEpoch",
            "targetBindingEpoch",
            "controlKind",
            "correlated",
        ]
    } else {
        &["actorBindingEpoch", "targetBindingEpoch"]
    };
    for (key, item) in members {
        let path = read::member("$.context", &key.text);
        if matches!(item, Js::Hidden) {
            return read::fail(&path, "must be an enumerable data property");
        }
        if key.lone.is_some() || !permitted.contains(&key.text.as_str()) {
            return read::fail(&path, "is not supported");
        }
    }
    if *symbols {
        return read::fail("$.context", "symbol properties are not supported");
    }
    let field = |key: &str| read::field(value, key);
    let epoch = |key: &str| {
        read::optional(field(key), |v| {
            read::integer(v, &read::member("$.context", key), 1)
        })
    };
    Ok(Context {
        actor_epoch: epoch("actorBindingEpoch")?,
        target_epoch: epoch("targetBindingEpoch")?,
        control_kind: read::optional(field("controlKind"), |v| {
            read::one_of(v, &CONTROL_KINDS, "$.context.controlKind")
        })?,
        correlated: read::optional(field("correlated"), |v| {
            read::boolean(v, "$.context.correlated")
        })?,
    })
}

/// The members of `state.principals` when the state is exactly `{principals}` (plain objects,
/// own enumerable data, string keys only).
fn principal_map(state: &Js) -> Option<&[(JsStr, Js)]> {
    fn plain(v: &Js) -> Option<&JsObject> {
        match v {
            Js::Object(o) if o.proto == Proto::Plain && !o.symbols => Some(o),
            _ => None,
        }
    }
    let container = plain(state)?;
    let [(key, principals)] = container.members.as_slice() else {
        return None;
    };
    if key.lone.is_some() || key.text != "principals" {
        return None;
    }
    let map = plain(principals)?;
    if map.members.iter().any(|(_, v)| matches!(v, Js::Hidden)) {
        return None;
    }
    Some(&map.members)
}

/// The principal under `id`, when it is an own entry that parses and names itself `id`.
fn lookup(map: &[(JsStr, Js)], id: &JsStr) -> Option<Principal> {
    if id.lone.is_some() {
        // No principal can carry this id: readString refuses unpaired surrogates.
        return None;
    }
    let (_, entry) = map.iter().rev().find(|(key, _)| key == id)?;
    let principal = parse_principal(entry).ok()?;
    (principal.principal_id() == id.text).then_some(principal)
}

/// Exactly one active principal of the map is this run's participant.
fn unique_identity(map: &[(JsStr, Js)], expected: &PrivatePrincipal) -> bool {
    let mut matches = 0;
    for (key, _) in map {
        if let Some(Principal::Private(candidate)) = lookup(map, key)
            && candidate.state == "active"
            && candidate.boss_run_id == expected.boss_run_id
            && candidate.participant_id == expected.participant_id
        {
            matches += 1;
            if matches > 1 {
                return false;
            }
        }
    }
    matches == 1
}

fn is_assignable(role: &str) -> bool {
    role == "worker" || role == "scout"
}

/// Manager and Worker/Scout name each other.
fn assigned(actor: &PrivatePrincipal, target: &PrivatePrincipal) -> bool {
    let (manager, member) = if actor.role == "manager" && is_assignable(target.role) {
        (actor, target)
    } else if target.role == "manager" && is_assignable(actor.role) {
        (target, actor)
    } else {
        return false;
    };
    manager
        .assigned
        .as_ref()
        .is_some_and(|ids| ids.contains(&member.participant_id))
        && member.assigned_manager.as_deref() == Some(manager.participant_id.as_str())
}

fn communication_edge(actor: &PrivatePrincipal, target: &PrivatePrincipal) -> bool {
    let pair = |a: &str, b: &str| {
        (actor.role == a && target.role == b) || (actor.role == b && target.role == a)
    };
    if pair("boss", "manager") || pair("boss", "adversary") || pair("manager", "adversary") {
        return true;
    }
    if assigned(actor, target) {
        return true;
    }
    if actor.role == "council" || target.role == "council" {
        return false;
    }
    if actor.role == "controller" || target.role == "controller" {
        let other = if actor.role == "controller" {
            target.role
        } else {
            actor.role
        };
        return matches!(other, "boss" | "manager" | "adversary");
    }
    false
}

/// Whether [`CONTROL_MATRIX`] lets `actor` send `kind` to `target`.
pub fn matrix_allows(actor: &str, target: &str, kind: &str) -> bool {
    CONTROL_MATRIX
        .iter()
        .find(|(role, _)| *role == actor)
        .and_then(|(_, rows)| rows.iter().find(|(role, _)| *role == target))
        .is_some_and(|(_, kinds)| kinds.contains(&kind))
}

fn requester_edge(actor: &PrivatePrincipal, target: &PrivatePrincipal) -> bool {
    if target.role == "council" {
        return target.requesting.as_deref() == Some(actor.principal_id.as_str());
    }
    if actor.role == "council" {
        return actor.requesting.as_deref() == Some(target.principal_id.as_str());
    }
    true
}

fn structured_control_edge(
    actor: &PrivatePrincipal,
    target: &PrivatePrincipal,
    kind: &str,
) -> bool {
    if !matrix_allows(actor.role, target.role, kind) || !requester_edge(actor, target) {
        return false;
    }
    let managed = (actor.role == "manager" && is_assignable(target.role))
        || (target.role == "manager" && is_assignable(actor.role));
    !managed || assigned(actor, target)
}

/// `authorizeBossPolicy(state, actorId, action, targetId, context)`, over JavaScript values.
/// `context` `undefined` is `{}` (whose missing epochs are stale).
pub fn authorize(state: &Js, actor_id: &Js, action: &Js, target_id: &Js, context: &Js) -> Decision {
    use Decision::{Allowed, Denied};
    let Some(action) = action
        .as_str()
        .and_then(|a| ACTIONS.iter().find(|x| **x == a))
    else {
        return Denied("POLICY_DENIED");
    };
    let (Js::Str(actor_id), Js::Str(target_id)) = (actor_id, target_id) else {
        return Denied("UNKNOWN_PRINCIPAL");
    };
    let context = match context {
        Js::Undefined => Context::default(),
        value => match parse_context(value, action) {
            Ok(context) => context,
            Err(_) => return Denied("POLICY_DENIED"),
        },
    };
    let Some(map) = principal_map(state) else {
        return Denied("UNKNOWN_PRINCIPAL");
    };
    let actor = lookup(map, actor_id);
    let target = if actor_id == target_id {
        actor.clone()
    } else {
        lookup(map, target_id)
    };
    let (Some(actor), Some(target)) = (actor, target) else {
        return Denied("UNKNOWN_PRINCIPAL");
    };
    if actor.state() != "active" || target.state() != "active" {
        return Denied("REVOKED_OR_REPLACED_PRINCIPAL");
    }
    let (actor, target) = match (actor, target) {
        (Principal::Legacy { .. }, Principal::Legacy { .. }) => {
            return if *action == "control" {
                Denied("BOSS_LEGACY_ISOLATION")
            } else {
                Allowed("legacy-local-public")
            };
        }
        (Principal::Private(actor), Principal::Private(target)) => (actor, target),
        _ => return Denied("BOSS_LEGACY_ISOLATION"),
    };
    if context.actor_epoch != Some(actor.binding_epoch)
        || context.target_epoch != Some(target.binding_epoch)
    {
        return Denied("STALE_BINDING_EPOCH");
    }
    if actor.boss_run_id != target.boss_run_id {
        return Denied("CROSS_RUN_DENIED");
    }
    if !unique_identity(map, &actor) || !unique_identity(map, &target) {
        return Denied("AMBIGUOUS_PARTICIPANT_IDENTITY");
    }
    if *action == "control" {
        let (Some(true), Some(kind)) = (context.correlated, context.control_kind) else {
            return Denied("CONTROL_REQUIRES_CORRELATION");
        };
        return if structured_control_edge(&actor, &target, kind) {
            Allowed("structured-control")
        } else {
            Denied("CONTROL_KIND_DENIED")
        };
    }
    if actor.principal_id == target.principal_id {
        return Allowed("self");
    }
    if *action == "discover" && actor.role == "controller" {
        return Allowed("communication-profile");
    }
    if communication_edge(&actor, &target) {
        Allowed("communication-profile")
    } else {
        Denied("POLICY_DENIED")
    }
}

fn string_list(out: &mut String, items: &[&str]) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(out, item);
    }
    out.push(']');
}

/// The constants of `./boss/policy` as one JSON object (read once by the Node module).
fn constants_json() -> String {
    let mut out =
        format!("{{\"semanticsVersion\":{BOSS_POLICY_SEMANTICS_VERSION},\"principalVersion\":");
    write_json_string(&mut out, PRINCIPAL_VERSION);
    for (key, list) in [
        ("actions", &ACTIONS[..]),
        ("roles", &ROLES[..]),
        ("controlKinds", &CONTROL_KINDS[..]),
    ] {
        out.push_str(&format!(",\"{key}\":"));
        string_list(&mut out, list);
    }
    out.push_str(",\"controlMatrix\":{");
    for (i, (actor, rows)) in CONTROL_MATRIX.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"{actor}\":{{"));
        for (j, (target, kinds)) in rows.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&format!("\"{target}\":"));
            string_list(&mut out, kinds);
        }
        out.push('}');
    }
    out.push_str("}}");
    out
}

/// The corpus as the Node module reads it: `{semanticsHash, corpus}` with the file as shipped.
fn vectors_json() -> String {
    format!(
        "{{\"semanticsHash\":\"{}\",\"corpus\":{VECTORS_JSON}}}",
        semantics_hash()
    )
}

static BASE_PRINCIPALS: LazyLock<Vec<Js>> = LazyLock::new(|| {
    let doc = Js::parse_json(VECTORS_JSON).expect("the embedded corpus is JSON");
    match doc.get("principals") {
        Some(Js::Array(a)) => a.items.iter().flatten().cloned().collect(),
        _ => panic!("the Boss policy corpus has no principals"),
    }
});

fn no_property(what: &Js, key: &str) -> Failure {
    Failure::type_error(format!(
        "Cannot read properties of {} (reading '{key}')",
        what.js_string()
    ))
}

/// `bossPolicyStateForVector(vector)`: the corpus fixture with the vector's
/// `principalOverride` (replacing the principal of the same `principalId`) and
/// `additionalPrincipals` (appended), keyed by `principalId`, as JSON.
pub fn state_for_vector(vector: &Js) -> Result<String, Failure> {
    if matches!(vector, Js::Undefined | Js::Null) {
        return Err(no_property(vector, "principalOverride"));
    }
    let mut entries: Vec<Js> = BASE_PRINCIPALS.clone();
    let principal_id = |p: &Js| p.get("principalId").cloned().unwrap_or(Js::Undefined);
    // A primitive override names no principal (its principalId is undefined).
    if let Some(o @ (Js::Object(_) | Js::Array(_))) = vector.get("principalOverride") {
        let id = principal_id(o);
        if let Some(slot) = entries.iter_mut().find(|p| principal_id(p) == id) {
            *slot = o.clone();
        }
    }
    match vector.get("additionalPrincipals") {
        None | Some(Js::Undefined | Js::Null) => {}
        Some(Js::Array(list)) => entries.extend(
            list.items
                .iter()
                .map(|item| item.clone().unwrap_or(Js::Undefined)),
        ),
        Some(_) => {
            return Err(Failure::type_error(
                "vector.additionalPrincipals is not iterable",
            ));
        }
    }
    let mut members: Vec<(JsStr, Js)> = Vec::with_capacity(entries.len());
    for entry in entries {
        if matches!(entry, Js::Undefined | Js::Null) {
            return Err(no_property(&entry, "principalId"));
        }
        let key = JsStr {
            text: principal_id(&entry).js_string(),
            lone: None,
        };
        // Object.fromEntries: a repeated key keeps its first place and takes the last value.
        match members.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = entry,
            None => members.push((key, entry)),
        }
    }
    let map = Js::Object(JsObject {
        proto: Proto::Plain,
        members,
        symbols: false,
    });
    let state = Js::object(vec![("principals", map)]);
    state.to_json().ok_or_else(|| {
        Failure::error("DataCloneError: the vector's principals could not be cloned")
    })
}

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "boss.policyConstants",
        run: |_| Ok(Out::Json(constants_json())),
    },
    Op {
        name: "boss.policyVectors",
        run: |_| Ok(Out::Json(vectors_json())),
    },
    Op {
        name: "boss.parseBossPolicyPrincipal",
        run: |a| parse_principal(a.get(0)).map(|p| Out::Json(p.to_json())),
    },
    Op {
        name: "boss.authorizeBossPolicy",
        run: authorize_op,
    },
    Op {
        name: "boss.bossPolicyStateForVector",
        run: |a| state_for_vector(a.get(0)).map(Out::Json),
    },
];

fn authorize_op(a: Args<'_>) -> Result<Out, Failure> {
    let decision = authorize(a.get(0), a.get(1), a.get(2), a.get(3), a.get(4));
    Ok(Out::Json(decision.to_json()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> Js {
        Js::parse_snapshot(text).unwrap()
    }

    #[test]
    fn the_matrix_has_every_role_and_only_known_kinds() {
        let actors: Vec<&str> = CONTROL_MATRIX.iter().map(|(r, _)| *r).collect();
        assert_eq!(actors, ROLES);
        for (_, rows) in CONTROL_MATRIX {
            for (target, kinds) in rows {
                assert!(ROLES.contains(target));
                assert!(kinds.iter().all(|k| CONTROL_KINDS.contains(k)));
            }
        }
    }

    #[test]
    fn the_semantics_hash_is_computed_from_the_corpus() {
        assert_eq!(
            semantics_hash(),
            "5fe94cc2c81bba8b50c6d6cd31487231ebfa10ee2d05495c2b088b12e2958dfa"
        );
        let doc = canonical::parse(VECTORS_JSON).unwrap();
        assert_eq!(
            doc.get("semanticsHash").and_then(Value::as_str),
            Some(semantics_hash())
        );
    }

    #[test]
    fn principals_parse_in_the_contract_order() {
        let message = |text: &str| parse_principal(&js(text)).unwrap_err().to_string();
        assert_eq!(message("[]"), "$: must be a plain object");
        assert_eq!(
            message(r#"{"version":"v0"}"#),
            "$.version: unsupported version: v0"
        );
        assert_eq!(
            message(
                r#"{"version":"boss.policy-principal.v1","principalClass":"legacy-local-public",
                "principalId":"a","state":"active","role":"boss"}"#
            ),
            "$.role: is not supported"
        );
        let worker = r#"{"version":"boss.policy-principal.v1","principalId":"w",
            "principalClass":"boss-private","state":"active","bossRunId":"r",
            "participantId":"w","role":"worker","bindingEpoch":1}"#;
        assert_eq!(
            message(worker),
            "$.assignedManagerParticipantId: is required exactly for Worker and Scout principals"
        );
        let parsed = parse_principal(&js(&worker.replace(
            "\"bindingEpoch\":1",
            "\"assignedManagerParticipantId\":\"m\",\"bindingEpoch\":1",
        )))
        .unwrap();
        assert_eq!(
            parsed.to_json(),
            concat!(
                r#"{"version":"boss.policy-principal.v1","principalId":"w","#,
                r#""principalClass":"boss-private","state":"active","bossRunId":"r","#,
                r#""participantId":"w","role":"worker","bindingEpoch":1,"#,
                r#""assignedManagerParticipantId":"m"}"#
            )
        );
    }

    #[test]
    fn malformed_inputs_deny_in_order() {
        let state = js(r#"{"principals":{}}"#);
        let s = |t: &str| js(&format!("\"{t}\""));
        assert_eq!(
            authorize(&state, &s("a"), &s("fly"), &s("b"), &Js::Undefined),
            Decision::Denied("POLICY_DENIED")
        );
        assert_eq!(
            authorize(&state, &Js::Num(1.0), &s("send"), &s("b"), &js("p")),
            Decision::Denied("UNKNOWN_PRINCIPAL")
        );
        assert_eq!(
            authorize(
                &state,
                &s("a"),
                &s("send"),
                &s("b"),
                &js(r#"{"controlKind":"x"}"#)
            ),
            Decision::Denied("POLICY_DENIED")
        );
        assert_eq!(
            authorize(&js("p"), &s("a"), &s("send"), &s("b"), &Js::Undefined),
            Decision::Denied("UNKNOWN_PRINCIPAL")
        );
    }
}
