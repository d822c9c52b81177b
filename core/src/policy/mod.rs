//! The remote-access policy kernel (`./policy`): who may reach whom, and the two ownership
//! transitions (revoking a subtree, adopting a subtree under a new parent).
//!
//! This is semantics version 2 of the TypeScript core's `policy.ts`, decision for decision:
//! [`authorize`] applies its checks in the same order and answers the same reasons and codes,
//! [`revoke_subtree`] and [`adopt_subtree`] list the changed principals in the same
//! (breadth-first) order, and the twelve golden vectors of [`vectors`] (the very file whose
//! SHA-256 is the published `POLICY_SEMANTICS_HASH`) pass. The typed API is below; the
//! operations the bindings call (`policy.authorize`, ...) read JavaScript values with
//! [`PolicyState::from_js`] and friends, which refuse a malformed state with a
//! `ContractValidationError` where TypeScript would read `undefined` and carry on (or throw a
//! `TypeError`). docs/policy.md lists those differences.
//!
//! ```
//! use agent_intercom_core::policy::{self, Decision, PolicyAction, PolicyState, Principal};
//!
//! let root = Principal::local("root");
//! let child = Principal::remote("child", "root", "root");
//! let state = PolicyState::from_principals([root, child]);
//! let any = Default::default();
//! let decision = policy::authorize(&state, "child", PolicyAction::Send, "root", &any);
//! assert_eq!(decision.label(), "direct-parent");
//! let revoked = policy::revoke_subtree(&state, "child").unwrap();
//! assert_eq!(revoked.changed_principal_ids, ["child"]);
//! assert_eq!(revoked.state.get("child").unwrap().generation, 2);
//! let after = policy::authorize(&revoked.state, "child", PolicyAction::Send, "root", &any);
//! assert_eq!(after, Decision::Denied(policy::DenialCode::RevokedPrincipal));
//! ```

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::contract::read::{self, Read, element, fail, member};
use crate::contract::value::{Js, Proto, array_index, write_json_string};
use crate::contract::{Args, Failure, Op, Out};

/// `POLICY_SEMANTICS_VERSION`: the version of these rules.
pub const POLICY_SEMANTICS_VERSION: u32 = 2;

/// The largest generation a principal may carry: `Number.MAX_SAFE_INTEGER`, so that every
/// generation is exact in JavaScript.
pub const MAX_GENERATION: u64 = 9_007_199_254_740_991;

/// Declares a string enum: its variants, their TypeScript spellings, `ALL`, `as_str`, `parse`.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in the order the TypeScript type lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// The TypeScript spellings, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($text,)+];

            /// The TypeScript spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value a TypeScript spelling names, exactly.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// Reads the value at `path` of a JavaScript value: one of [`Self::NAMES`].
            pub fn from_js(value: &Js, path: &str) -> Result<$name, Failure> {
                let text = read::one_of(value, Self::NAMES, path)?;
                Ok($name::parse(text).expect("NAMES and parse agree"))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum! {
    /// `PolicyAction`: what an actor asks to do to a target.
    PolicyAction {
        /// See the target in a listing.
        Discover = "discover",
        /// Send a message.
        Send = "send",
        /// Ask a question.
        Ask = "ask",
        /// Reply to a question.
        Reply = "reply",
        /// Inspect the target's subtree.
        InspectTree = "inspect_tree",
        /// Delegate a child under the target.
        DelegateChild = "delegate_child",
        /// Revoke the target's subtree.
        Revoke = "revoke",
        /// Adopt the target's subtree.
        Adopt = "adopt",
    }
}

string_enum! {
    /// `PrincipalKind`: where a principal runs.
    PrincipalKind {
        /// A session on this machine.
        Local = "local",
        /// A session enrolled from elsewhere.
        Remote = "remote",
    }
}

string_enum! {
    /// `PrincipalState`.
    PrincipalState {
        /// May act and be acted on.
        Active = "active",
        /// Fenced off: every decision about it is `REVOKED_PRINCIPAL`.
        Revoked = "revoked",
    }
}

string_enum! {
    /// `PrincipalPolicy`: carried with a principal; the version-2 decisions do not read it
    /// (they go by [`PrincipalKind`]).
    PrincipalPolicy {
        /// Every local session may reach every other.
        LocalPublic = "local-public",
        /// Reach follows the ownership tree.
        RemoteTree = "remote-tree",
    }
}

string_enum! {
    /// Why [`authorize`] allowed an action (`reason` of an allowed `AuthorizationDecision`).
    AllowReason {
        /// The actor is the target.
        SelfAccess = "self",
        /// Both are local sessions.
        LocalPublic = "local-public",
        /// One is the other's direct parent (communication actions).
        DirectParent = "direct-parent",
        /// One is an ancestor of the other (communication actions).
        AncestorChain = "ancestor-chain",
        /// The actor is an ancestor of the target (control actions).
        AncestorControl = "ancestor-control",
    }
}

string_enum! {
    /// `AuthorizationDenialCode`: why [`authorize`] refused.
    DenialCode {
        /// The actor or the target is not in the state.
        UnknownPrincipal = "UNKNOWN_PRINCIPAL",
        /// The actor or the target is not active.
        RevokedPrincipal = "REVOKED_PRINCIPAL",
        /// A generation in the context is not the principal's.
        StaleGeneration = "STALE_GENERATION",
        /// No rule allows it.
        PolicyDenied = "POLICY_DENIED",
    }
}

impl PolicyAction {
    /// discover, send, ask, reply: reach follows the whole ancestor chain, both ways.
    pub const fn communicates(self) -> bool {
        matches!(
            self,
            PolicyAction::Discover | PolicyAction::Send | PolicyAction::Ask | PolicyAction::Reply
        )
    }

    /// inspect_tree, revoke, adopt: only an ancestor controls a descendant.
    pub const fn controls(self) -> bool {
        matches!(
            self,
            PolicyAction::InspectTree | PolicyAction::Revoke | PolicyAction::Adopt
        )
    }
}

/// `PolicyPrincipal`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    /// `id`.
    pub id: String,
    /// `kind`.
    pub kind: PrincipalKind,
    /// `state`.
    pub state: PrincipalState,
    /// `generation`, at most [`MAX_GENERATION`]; raised by every transition, so a credential
    /// that names an older generation goes stale.
    pub generation: u64,
    /// `policy`.
    pub policy: PrincipalPolicy,
    /// `parentSessionId`: the owner, if any.
    pub parent_session_id: Option<String>,
    /// `rootSessionId`: the local session at the top of its tree.
    pub root_session_id: String,
}

/// The required keys of a `PolicyPrincipal`, in the interface's order.
pub const PRINCIPAL_KEYS: [&str; 6] = [
    "id",
    "kind",
    "state",
    "generation",
    "policy",
    "rootSessionId",
];
/// The optional keys of a `PolicyPrincipal`.
pub const PRINCIPAL_OPTIONAL_KEYS: [&str; 1] = ["parentSessionId"];

impl Principal {
    /// An active local session of generation 1, its own root, `local-public`.
    pub fn local(id: impl Into<String>) -> Principal {
        let id = id.into();
        Principal {
            root_session_id: id.clone(),
            id,
            kind: PrincipalKind::Local,
            state: PrincipalState::Active,
            generation: 1,
            policy: PrincipalPolicy::LocalPublic,
            parent_session_id: None,
        }
    }

    /// An active remote principal of generation 1 under `parent`, in the tree of `root`,
    /// `remote-tree`.
    pub fn remote(
        id: impl Into<String>,
        parent: impl Into<String>,
        root: impl Into<String>,
    ) -> Principal {
        Principal {
            id: id.into(),
            kind: PrincipalKind::Remote,
            state: PrincipalState::Active,
            generation: 1,
            policy: PrincipalPolicy::RemoteTree,
            parent_session_id: Some(parent.into()),
            root_session_id: root.into(),
        }
    }

    /// Whether the state is [`PrincipalState::Active`].
    pub fn is_active(&self) -> bool {
        self.state == PrincipalState::Active
    }

    /// Reads a `PolicyPrincipal` at `path`: a plain (or null-prototype) object of exactly the
    /// interface's keys (`parentSessionId` optional; `undefined` counts as absent), each of its
    /// type: the strings non-empty, `generation` a safe integer `>= 0`.
    pub fn from_js(value: &Js, path: &str) -> Read<Principal> {
        object(value, path)?;
        read::exact_keys(value, &PRINCIPAL_KEYS, &PRINCIPAL_OPTIONAL_KEYS, path)?;
        // Each member's path is formatted only if reading it fails.
        use read::read_at as at;
        Ok(Principal {
            id: at(value, path, "id", read::string)?.to_string(),
            kind: at(value, path, "kind", PrincipalKind::from_js)?,
            state: at(value, path, "state", PrincipalState::from_js)?,
            generation: at(value, path, "generation", generation)?,
            policy: at(value, path, "policy", PrincipalPolicy::from_js)?,
            parent_session_id: at(value, path, "parentSessionId", read::optional_string)?
                .map(str::to_string),
            root_session_id: at(value, path, "rootSessionId", read::string)?.to_string(),
        })
    }

    /// The principal as JSON, keys in the interface's order (`parentSessionId` only when set).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        out.push_str("{\"id\":");
        write_json_string(out, &self.id);
        out.push_str(",\"kind\":");
        write_json_string(out, self.kind.as_str());
        out.push_str(",\"state\":");
        write_json_string(out, self.state.as_str());
        out.push_str(",\"generation\":");
        out.push_str(&self.generation.to_string());
        out.push_str(",\"policy\":");
        write_json_string(out, self.policy.as_str());
        if let Some(parent) = &self.parent_session_id {
            out.push_str(",\"parentSessionId\":");
            write_json_string(out, parent);
        }
        out.push_str(",\"rootSessionId\":");
        write_json_string(out, &self.root_session_id);
        out.push('}');
    }
}

/// `PolicyState`: the principals by key, in JavaScript's enumeration order (array-index keys
/// ascending, then the others in insertion order), which decides the order of
/// `changedPrincipalIds`.
///
/// A principal is normally keyed by its own id ([`PolicyState::insert`]). TypeScript looks
/// principals up by key and compares them by `id`, and nothing there ties the two together, so
/// [`PolicyState::insert_keyed`] keeps that freedom for states read from JavaScript.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyState {
    entries: Vec<(String, Principal)>,
    /// Where each key is, once there are more than [`SCANNED`] entries; below that a lookup
    /// scans the entries (measured: building the map was a fifth of reading a two-principal
    /// state).
    index: HashMap<String, usize>,
}

/// Up to this many entries, a [`PolicyState`] is searched without its index.
const SCANNED: usize = 16;

impl PolicyState {
    /// No principals.
    pub fn new() -> PolicyState {
        PolicyState::default()
    }

    /// The principals, each keyed by its id (a later one with the same id replaces an earlier
    /// one in place, as assigning an object's key does).
    pub fn from_principals(principals: impl IntoIterator<Item = Principal>) -> PolicyState {
        let mut state = PolicyState::new();
        for principal in principals {
            state.insert(principal);
        }
        state
    }

    /// Keys `principal` by its id; returns the principal it replaced.
    pub fn insert(&mut self, principal: Principal) -> Option<Principal> {
        self.insert_keyed(principal.id.clone(), principal)
    }

    /// Keys `principal` by `key`; returns the principal it replaced (which keeps its place).
    pub fn insert_keyed(
        &mut self,
        key: impl Into<String>,
        principal: Principal,
    ) -> Option<Principal> {
        let key = key.into();
        if let Some(at) = self.position(&key) {
            return Some(std::mem::replace(&mut self.entries[at].1, principal));
        }
        match array_index(&key) {
            // An array-index key goes among the others of its kind, in numeric order.
            Some(n) => {
                let at = self
                    .entries
                    .iter()
                    .position(|(k, _)| array_index(k).is_none_or(|m| m > n))
                    .unwrap_or(self.entries.len());
                self.entries.insert(at, (key, principal));
                self.reindex();
            }
            None => {
                self.entries.push((key, principal));
                let len = self.entries.len();
                if len > SCANNED {
                    if self.index.len() + 1 == len {
                        self.index.insert(self.entries[len - 1].0.clone(), len - 1);
                    } else {
                        self.reindex();
                    }
                }
            }
        }
        None
    }

    /// Removes the principal keyed `key`.
    pub fn remove(&mut self, key: &str) -> Option<Principal> {
        let at = self.position(key)?;
        let (_, principal) = self.entries.remove(at);
        self.reindex();
        Some(principal)
    }

    fn reindex(&mut self) {
        self.index = if self.entries.len() > SCANNED {
            self.entries
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect()
        } else {
            HashMap::new()
        };
    }

    fn position(&self, key: &str) -> Option<usize> {
        if self.entries.len() > SCANNED {
            self.index.get(key).copied()
        } else {
            self.entries.iter().position(|(k, _)| k == key)
        }
    }

    /// The principal keyed `key` (never a prototype member: see docs/policy.md).
    pub fn get(&self, key: &str) -> Option<&Principal> {
        self.position(key).map(|at| &self.entries[at].1)
    }

    /// The principal keyed `key`, to change.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Principal> {
        self.position(key).map(|at| &mut self.entries[at].1)
    }

    /// Whether a principal is keyed `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// The entries, in JavaScript's enumeration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Principal)> {
        self.entries.iter().map(|(k, p)| (k.as_str(), p))
    }

    /// The principals, in JavaScript's enumeration order.
    pub fn principals(&self) -> impl ExactSizeIterator<Item = &Principal> {
        self.entries.iter().map(|(_, p)| p)
    }

    /// How many principals.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads a `PolicyState` at `path`: a plain (or null-prototype) object whose only key is
    /// `principals`, itself such an object of principals ([`Principal::from_js`]).
    pub fn from_js(value: &Js, path: &str) -> Read<PolicyState> {
        object(value, path)?;
        read::exact_keys(value, &["principals"], &[], path)?;
        read::read_at(value, path, "principals", |principals, path| {
            object(principals, path)?;
            let Js::Object(map) = principals else {
                unreachable!("object() accepted it")
            };
            let mut state = PolicyState::new();
            for (key, item) in &map.members {
                let at = || member(path, &key.text);
                read::lazily(at, |p| read::well_formed(key, p))?;
                let principal = read::lazily(at, |p| Principal::from_js(item, p))?;
                state.insert_keyed(key.text.clone(), principal);
            }
            Ok(state)
        })
    }

    /// The state as JSON: `{"principals":{key: principal, ...}}` in enumeration order.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"principals\":{");
        for (i, (key, principal)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json_string(&mut out, key);
            out.push(':');
            principal.write_json(&mut out);
        }
        out.push_str("}}");
        out
    }
}

impl FromIterator<Principal> for PolicyState {
    fn from_iter<T: IntoIterator<Item = Principal>>(iter: T) -> PolicyState {
        PolicyState::from_principals(iter)
    }
}

/// `AuthorizationContext`: the generations the caller believes the actor and target hold
/// (`None`: not checked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AuthorizationContext {
    /// `actorGeneration`.
    pub actor_generation: Option<u64>,
    /// `targetGeneration`.
    pub target_generation: Option<u64>,
}

impl AuthorizationContext {
    /// Reads an `AuthorizationContext` at `path`: `undefined` (no checks), or a plain (or
    /// null-prototype) object with no keys but `actorGeneration` and `targetGeneration`, each
    /// `undefined` or a safe integer `>= 0`. An unknown key (a misspelt generation, which
    /// TypeScript would silently not check) is refused.
    pub fn from_js(value: &Js, path: &str) -> Read<AuthorizationContext> {
        if matches!(value, Js::Undefined) {
            return Ok(AuthorizationContext::default());
        }
        object(value, path)?;
        read::exact_keys(value, &[], &["actorGeneration", "targetGeneration"], path)?;
        // The member's path is formatted only if reading it fails.
        let optional = |key: &str| {
            read::read_at(value, path, key, |v, p| {
                read::optional(v, |v| generation(v, p))
            })
        };
        Ok(AuthorizationContext {
            actor_generation: optional("actorGeneration")?,
            target_generation: optional("targetGeneration")?,
        })
    }

    /// The context as JSON (the keys that are set).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{");
        if let Some(g) = self.actor_generation {
            out.push_str(&format!("\"actorGeneration\":{g}"));
        }
        if let Some(g) = self.target_generation {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&format!("\"targetGeneration\":{g}"));
        }
        out.push('}');
        out
    }
}

/// `AuthorizationDecision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// `{allowed: true, reason}`.
    Allowed(AllowReason),
    /// `{allowed: false, code}`.
    Denied(DenialCode),
}

impl Decision {
    /// `allowed`.
    pub fn is_allowed(self) -> bool {
        matches!(self, Decision::Allowed(_))
    }

    /// The reason when allowed, the code when denied (what the vectors'
    /// `expectedReasonOrCode` names).
    pub fn label(self) -> &'static str {
        match self {
            Decision::Allowed(reason) => reason.as_str(),
            Decision::Denied(code) => code.as_str(),
        }
    }

    /// The decision as TypeScript returns it: `{"allowed":true,"reason":R}` or
    /// `{"allowed":false,"code":C}`.
    pub fn to_json(self) -> String {
        let (head, label) = match self {
            Decision::Allowed(r) => ("{\"allowed\":true,\"reason\":\"", r.as_str()),
            Decision::Denied(c) => ("{\"allowed\":false,\"code\":\"", c.as_str()),
        };
        [head, label, "\"}"].concat()
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Whether one of the two is the other's direct parent (`isDirectParentPair`).
pub fn is_direct_parent_pair(left: &Principal, right: &Principal) -> bool {
    left.parent_session_id.as_deref() == Some(right.id.as_str())
        || right.parent_session_id.as_deref() == Some(left.id.as_str())
}

/// Whether `ancestor_id` is on the parent chain above `descendant_id` (`isAncestor`); never
/// its own ancestor. The walk looks parents up by key, stops at a missing parent, and stops
/// when it meets a principal (by id) it has already passed, so a cycle ends it.
pub fn is_ancestor(state: &PolicyState, ancestor_id: &str, descendant_id: &str) -> bool {
    if ancestor_id == descendant_id {
        return false;
    }
    let mut visited = Visited::default();
    let mut current = state.get(descendant_id);
    while let Some(principal) = current {
        let Some(parent) = principal.parent_session_id.as_deref() else {
            break;
        };
        if parent.is_empty() || visited.contains(&principal.id) {
            break;
        }
        if parent == ancestor_id {
            return true;
        }
        visited.insert(&principal.id);
        current = state.get(parent);
    }
    false
}

/// The ids a parent walk has passed: scanned while few (most chains are a few links long, and
/// hashing was most of a short walk), hashed past [`SCANNED`].
#[derive(Default)]
struct Visited<'a> {
    few: Vec<&'a str>,
    many: HashSet<&'a str>,
}

impl<'a> Visited<'a> {
    fn contains(&self, id: &str) -> bool {
        if self.many.is_empty() {
            self.few.contains(&id)
        } else {
            self.many.contains(id)
        }
    }

    fn insert(&mut self, id: &'a str) {
        if !self.many.is_empty() {
            self.many.insert(id);
        } else if self.few.len() < SCANNED {
            self.few.push(id);
        } else {
            self.many.extend(self.few.drain(..));
            self.many.insert(id);
        }
    }
}

/// `authorize`: may `actor_id` do `action` to `target_id`?
///
/// In this order: either unknown gives `UNKNOWN_PRINCIPAL`; either not active,
/// `REVOKED_PRINCIPAL`; a context generation that is not the principal's, `STALE_GENERATION`;
/// the actor itself, `self`; two local sessions, `local-public`. Then, for discover, send, ask
/// and reply: a direct parent pair, `direct-parent`; an ancestor either way, `ancestor-chain`.
/// For inspect_tree, revoke and adopt: the actor an ancestor of the target,
/// `ancestor-control`. Anything else: `POLICY_DENIED`.
pub fn authorize(
    state: &PolicyState,
    actor_id: &str,
    action: PolicyAction,
    target_id: &str,
    context: &AuthorizationContext,
) -> Decision {
    let (Some(actor), Some(target)) = (state.get(actor_id), state.get(target_id)) else {
        return Decision::Denied(DenialCode::UnknownPrincipal);
    };
    if !actor.is_active() || !target.is_active() {
        return Decision::Denied(DenialCode::RevokedPrincipal);
    }
    let stale = |expected: Option<u64>, principal: &Principal| {
        expected.is_some_and(|g| g != principal.generation)
    };
    if stale(context.actor_generation, actor) || stale(context.target_generation, target) {
        return Decision::Denied(DenialCode::StaleGeneration);
    }
    if actor.id == target.id {
        return Decision::Allowed(AllowReason::SelfAccess);
    }
    if actor.kind == PrincipalKind::Local && target.kind == PrincipalKind::Local {
        return Decision::Allowed(AllowReason::LocalPublic);
    }
    if action.communicates() {
        if is_direct_parent_pair(actor, target) {
            return Decision::Allowed(AllowReason::DirectParent);
        }
        if is_ancestor(state, &actor.id, &target.id) || is_ancestor(state, &target.id, &actor.id) {
            return Decision::Allowed(AllowReason::AncestorChain);
        }
    }
    if action.controls() && is_ancestor(state, &actor.id, &target.id) {
        return Decision::Allowed(AllowReason::AncestorControl);
    }
    Decision::Denied(DenialCode::PolicyDenied)
}

/// `PolicyTransitionResult`: the new state (the input is never changed) and the keys of the
/// principals that changed, breadth-first from the subtree's root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// `state`.
    pub state: PolicyState,
    /// `changedPrincipalIds`.
    pub changed_principal_ids: Vec<String>,
}

impl Transition {
    /// `{"state":...,"changedPrincipalIds":[...]}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"state\":");
        out.push_str(&self.state.to_json());
        out.push_str(",\"changedPrincipalIds\":[");
        for (i, id) in self.changed_principal_ids.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json_string(&mut out, id);
        }
        out.push_str("]}");
        out
    }
}

/// Why a transition was refused. The messages are the TypeScript core's (`Error.message`),
/// but for [`PolicyError::GenerationOverflow`], which TypeScript does not check.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PolicyError {
    /// `Unknown principal: X` (adoption of a principal the state lacks).
    UnknownPrincipal(String),
    /// `Unknown parent principal: X`.
    UnknownParent(String),
    /// `Adoption would create an ownership cycle`: the new parent is the principal itself or
    /// one of its descendants.
    OwnershipCycle,
    /// The principal's generation is already [`MAX_GENERATION`], so raising it would lose
    /// exactness in JavaScript (and with it the fencing of old generations).
    GenerationOverflow(String),
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::UnknownPrincipal(id) => write!(f, "Unknown principal: {id}"),
            PolicyError::UnknownParent(id) => write!(f, "Unknown parent principal: {id}"),
            PolicyError::OwnershipCycle => f.write_str("Adoption would create an ownership cycle"),
            PolicyError::GenerationOverflow(id) => write!(
                f,
                "Generation of principal {id} would exceed Number.MAX_SAFE_INTEGER"
            ),
        }
    }
}

impl std::error::Error for PolicyError {}

impl From<PolicyError> for Failure {
    fn from(error: PolicyError) -> Failure {
        Failure::error(error.to_string())
    }
}

/// The keys of the subtree under `root_id`, breadth-first: the root (if present), then each
/// principal whose parent is one already listed, children in enumeration order.
fn subtree_ids(state: &PolicyState, root_id: &str) -> Vec<String> {
    let mut result = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut queue: VecDeque<&str> = VecDeque::from([root_id]);
    while let Some(id) = queue.pop_front() {
        if seen.contains(id) || !state.contains(id) {
            continue;
        }
        seen.insert(id);
        result.push(id.to_string());
        for principal in state.principals() {
            if principal.parent_session_id.as_deref() == Some(id) {
                queue.push_back(&principal.id);
            }
        }
    }
    result
}

fn bump(principal: &mut Principal, key: &str) -> Result<(), PolicyError> {
    if principal.generation >= MAX_GENERATION {
        return Err(PolicyError::GenerationOverflow(key.to_string()));
    }
    principal.generation += 1;
    Ok(())
}

/// `revokeSubtree`: a copy of `state` in which `principal_id` and all its descendants are
/// revoked, each one generation up. An unknown principal changes nothing (an empty list).
pub fn revoke_subtree(state: &PolicyState, principal_id: &str) -> Result<Transition, PolicyError> {
    let mut next = state.clone();
    let changed = subtree_ids(state, principal_id);
    for id in &changed {
        let principal = next.get_mut(id).expect("subtree_ids lists present keys");
        principal.state = PrincipalState::Revoked;
        bump(principal, id)?;
    }
    Ok(Transition {
        state: next,
        changed_principal_ids: changed,
    })
}

/// `adoptSubtree`: a copy of `state` in which `principal_id` has the parent
/// `new_parent_session_id`, and it and all its descendants have the root `new_root_session_id`
/// and are one generation up.
pub fn adopt_subtree(
    state: &PolicyState,
    principal_id: &str,
    new_parent_session_id: &str,
    new_root_session_id: &str,
) -> Result<Transition, PolicyError> {
    if !state.contains(principal_id) {
        return Err(PolicyError::UnknownPrincipal(principal_id.to_string()));
    }
    if !state.contains(new_parent_session_id) {
        return Err(PolicyError::UnknownParent(
            new_parent_session_id.to_string(),
        ));
    }
    if principal_id == new_parent_session_id
        || is_ancestor(state, principal_id, new_parent_session_id)
    {
        return Err(PolicyError::OwnershipCycle);
    }
    let mut next = state.clone();
    let changed = subtree_ids(state, principal_id);
    if let Some(principal) = next.get_mut(principal_id) {
        principal.parent_session_id = Some(new_parent_session_id.to_string());
    }
    for id in &changed {
        let principal = next.get_mut(id).expect("subtree_ids lists present keys");
        principal.root_session_id = new_root_session_id.to_string();
        bump(principal, id)?;
    }
    Ok(Transition {
        state: next,
        changed_principal_ids: changed,
    })
}

/// A plain or null-prototype object of enumerable data properties (what the policy functions
/// read members of).
fn object(value: &Js, path: &str) -> Read<()> {
    match value {
        Js::Object(o) if o.proto != Proto::Other => read::data_members(value, path),
        _ => fail(path, "must be a plain object"),
    }
}

fn generation(value: &Js, path: &str) -> Read<u64> {
    read::integer(value, path, 0).map(|n| n as u64)
}

/// An id argument: any well-formed string (an unknown one is a decision, not an error).
fn id_arg<'v>(value: &'v Js, path: &str) -> Read<&'v str> {
    match value {
        Js::Str(s) => {
            read::well_formed(s, path)?;
            Ok(&s.text)
        }
        _ => fail(path, "must be a string"),
    }
}

pub mod vectors;

/// The operations of this module: `./policy` and `./vectors`.
pub const OPS: &[Op] = &[
    Op {
        name: "policy.authorize",
        run: op_authorize,
    },
    Op {
        name: "policy.isAncestor",
        run: |a| {
            let state = PolicyState::from_js(a.get(0), "$.state")?;
            let ancestor = id_arg(a.get(1), "$.ancestorId")?;
            let descendant = id_arg(a.get(2), "$.descendantId")?;
            Ok(json_bool(is_ancestor(&state, ancestor, descendant)))
        },
    },
    Op {
        name: "policy.isDirectParentPair",
        run: |a| {
            let left = Principal::from_js(a.get(0), "$.left")?;
            let right = Principal::from_js(a.get(1), "$.right")?;
            Ok(json_bool(is_direct_parent_pair(&left, &right)))
        },
    },
    Op {
        name: "policy.revokeSubtree",
        run: |a| {
            let state = PolicyState::from_js(a.get(0), "$.state")?;
            let id = id_arg(a.get(1), "$.principalId")?;
            Ok(Out::Json(revoke_subtree(&state, id)?.to_json()))
        },
    },
    Op {
        name: "policy.adoptSubtree",
        run: |a| {
            let state = PolicyState::from_js(a.get(0), "$.state")?;
            let id = id_arg(a.get(1), "$.principalId")?;
            let parent = id_arg(a.get(2), "$.newParentSessionId")?;
            let root = read::string(a.get(3), "$.newRootSessionId")?;
            Ok(Out::Json(
                adopt_subtree(&state, id, parent, root)?.to_json(),
            ))
        },
    },
    Op {
        name: "policy.stateForVector",
        run: |a| {
            let vector = a.get(0);
            object(vector, "$.vector")?;
            let principals =
                vectors::principal_list(read::field(vector, "principals"), "$.vector.principals")?;
            Ok(Out::Json(
                PolicyState::from_principals(principals).to_json(),
            ))
        },
    },
    Op {
        name: "policy.constants",
        run: |_| Ok(Out::Json(constants_json())),
    },
];

fn op_authorize(a: Args<'_>) -> Result<Out, Failure> {
    let state = PolicyState::from_js(a.get(0), "$.state")?;
    let actor = id_arg(a.get(1), "$.actorId")?;
    let action = PolicyAction::from_js(a.get(2), "$.action")?;
    let target = id_arg(a.get(3), "$.targetId")?;
    let context = AuthorizationContext::from_js(a.get(4), "$.context")?;
    Ok(Out::Json(
        authorize(&state, actor, action, target, &context).to_json(),
    ))
}

fn json_bool(value: bool) -> Out {
    Out::Json(if value { "true" } else { "false" }.to_string())
}

/// What the bindings read once at load: the versions, the hash (computed from the embedded
/// corpus) and the corpus itself.
fn constants_json() -> String {
    format!(
        "{{\"POLICY_SEMANTICS_VERSION\":{POLICY_SEMANTICS_VERSION},\
         \"POLICY_VECTOR_SCHEMA_VERSION\":{},\"POLICY_SEMANTICS_HASH\":\"{}\",\"corpus\":{}}}",
        vectors::POLICY_VECTOR_SCHEMA_VERSION,
        vectors::semantics_hash(),
        vectors::VECTORS_JSON
    )
}

#[cfg(test)]
mod tests;
