//! `PeerPolicy`: the line's public policy record, exactly its members, and the checks every
//! operation makes against it.
//!
//! Selectors are lists of exact byte strings: an empty list admits nothing, `"*"` is just the
//! one-character name `*`, and nothing is case-folded or normalised. Peers are UUIDs in their
//! one lowercase hyphenated spelling and endpoints are `https://host:port/path` with the port
//! always written, so a peer or an endpoint has one spelling and capacity keyed by it cannot be
//! split by spelling it differently.

use agent_intercom_core::canonical::{self, Value};

use crate::{Code, LineError};

/// The members of a policy record, in the order documented.
pub const MEMBERS: &[&str] = &[
    "generation",
    "actions",
    "purposes",
    "categories",
    "task_schemas",
    "peers",
    "endpoints",
    "limits",
    "declaration_seconds",
    "task_seconds",
    "network_seconds",
];
/// The scope kinds of `limits`, each a [`Limit`].
pub const LIMIT_KINDS: &[&str] = &["host", "purpose", "peer", "task"];
/// The members of a [`Limit`].
pub const LIMIT_MEMBERS: &[&str] = &["uses", "application_bytes", "network_bytes"];
/// Bounds of `declaration_seconds`.
pub const DECLARATION_SECONDS: (i64, i64) = (1, 3600);
/// Bounds of `task_seconds`.
pub const TASK_SECONDS: (i64, i64) = (1, 86_400);
/// Bounds of `network_seconds` (also at most `task_seconds`).
pub const NETWORK_SECONDS: (i64, i64) = (1, 120);
/// The longest purpose, category or task schema name, in bytes.
pub const MAX_NAME_BYTES: usize = 128;
/// The longest endpoint, in bytes.
pub const MAX_ENDPOINT_BYTES: usize = 2048;
/// The largest integer of a limit or generation (2^53 - 1, canonical JSON's safe range).
pub const MAX_SAFE: i64 = (1 << 53) - 1;
/// The domain of a policy's digest.
pub const DIGEST_DOMAIN: &str = "agent-intercom-line/peer-policy-v1";

/// An action a policy grants. Each is independent: none implies another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Enroll a peer.
    Enroll,
    /// Declare text public (`declare-public`).
    ClassifyPublic,
    /// Send a declared task.
    Submit,
    /// Ask the peer for a task's state.
    Poll,
    /// Close adoption and ask the peer to cancel.
    Cancel,
    /// Read a retained result (local).
    Read,
    /// Replace a peer's key.
    Rotate,
    /// Revoke a peer.
    Revoke,
    /// Native lab: admit a run.
    Admit,
    /// Native lab: adopt a correlated terminal.
    Adopt,
    /// Native lab: resume the workflow.
    Resume,
    /// Native lab: inspect a run.
    Inspect,
}

impl Action {
    /// Every action: the eight of the outbound profile, then the four of the native lab.
    pub const ALL: &'static [Action] = &[
        Action::Enroll,
        Action::ClassifyPublic,
        Action::Submit,
        Action::Poll,
        Action::Cancel,
        Action::Read,
        Action::Rotate,
        Action::Revoke,
        Action::Admit,
        Action::Adopt,
        Action::Resume,
        Action::Inspect,
    ];

    /// The name in a policy.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Enroll => "enroll",
            Action::ClassifyPublic => "classify_public",
            Action::Submit => "submit",
            Action::Poll => "poll",
            Action::Cancel => "cancel",
            Action::Read => "read",
            Action::Rotate => "rotate",
            Action::Revoke => "revoke",
            Action::Admit => "admit",
            Action::Adopt => "adopt",
            Action::Resume => "resume",
            Action::Inspect => "inspect",
        }
    }

    /// The action of this exact name.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.as_str() == name)
    }
}

/// A ceiling of one scope: every exchange charges one use, its application bytes and the
/// network allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// Exchanges.
    pub uses: u64,
    /// Request body bytes.
    pub application_bytes: u64,
    /// Network bytes reserved (512 KiB per exchange).
    pub network_bytes: u64,
}

/// The four ceilings, one per scope kind (each purpose, peer and peer-plus-schema has its own
/// counters under the ceiling of its kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The installation.
    pub host: Limit,
    /// Each exact purpose.
    pub purpose: Limit,
    /// Each peer identity.
    pub peer: Limit,
    /// Each (peer, task schema) task family.
    pub task: Limit,
}

/// What an operation targets, as the operator wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target<'a> {
    /// The peer UUID.
    pub peer_id: &'a str,
    /// The purpose.
    pub purpose: &'a str,
    /// The task schema.
    pub task_schema: &'a str,
    /// The category (`public-task` when the operator leaves it out).
    pub category: &'a str,
    /// The exact HTTPS URI, when the operation has one.
    pub endpoint: Option<&'a str>,
}

/// The selectors of a target-bearing command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selectors {
    /// The peer UUID.
    pub peer_id: String,
    /// The purpose.
    pub purpose: String,
    /// The task schema.
    pub task_schema: String,
    /// The category (`public-task` when not given).
    pub category: String,
}

impl Selectors {
    /// The policy target of these selectors at `endpoint`.
    pub fn target<'s>(&'s self, endpoint: &'s str) -> Target<'s> {
        Target {
            peer_id: &self.peer_id,
            purpose: &self.purpose,
            task_schema: &self.task_schema,
            category: &self.category,
            endpoint: Some(endpoint),
        }
    }
}

/// A policy record, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerPolicy {
    /// The generation (1 or more; a newer one invalidates the older at once).
    pub generation: u64,
    /// The granted actions.
    pub actions: Vec<Action>,
    /// Admitted purposes.
    pub purposes: Vec<String>,
    /// Admitted categories.
    pub categories: Vec<String>,
    /// Admitted task schemas.
    pub task_schemas: Vec<String>,
    /// Admitted peer UUIDs.
    pub peers: Vec<String>,
    /// Admitted endpoints (exact HTTPS URIs).
    pub endpoints: Vec<String>,
    /// The four ceilings.
    pub limits: Limits,
    /// How long a declaration lives.
    pub declaration_seconds: u32,
    /// How long a task lives after submit.
    pub task_seconds: u32,
    /// The deadline of one network exchange.
    pub network_seconds: u32,
    /// The canonical JSON of the record.
    pub canonical: String,
    /// The domain-separated canonical hash of the record (what a host establishes).
    pub digest: String,
}

fn invalid(field: &str, why: &str) -> LineError {
    LineError::new(Code::PolicyInvalid, format!("{field}: {why}")).with("field", field)
}

/// The members of an object, refusing any missing or additional one.
pub(crate) fn exact_members<'v, 'a>(
    value: &'v Value<'a>,
    members: &[&str],
    field: &str,
    err: impl Fn(&str, &str) -> LineError,
) -> Result<Vec<&'v Value<'a>>, LineError> {
    let Value::Object(pairs) = value else {
        return Err(err(field, "must be an object"));
    };
    for (name, _) in pairs {
        if !members.contains(&name.as_ref()) {
            return Err(err(
                &format!("{field}.{name}"),
                "is not a member of this record",
            ));
        }
    }
    members
        .iter()
        .map(|m| {
            value
                .get(m)
                .ok_or_else(|| err(&format!("{field}.{m}"), "is missing"))
        })
        .collect()
}

fn integer(value: &Value<'_>, field: &str, (low, high): (i64, i64)) -> Result<i64, LineError> {
    match value.as_i64() {
        Some(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(invalid(
            field,
            &format!("must be an integer from {low} to {high}"),
        )),
    }
}

fn names(
    value: &Value<'_>,
    field: &str,
    check: impl Fn(&str) -> Result<(), &'static str>,
) -> Result<Vec<String>, LineError> {
    let items = value
        .as_array()
        .ok_or_else(|| invalid(field, "must be an array of strings"))?;
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let text = item
            .as_str()
            .ok_or_else(|| invalid(&at, "must be a string"))?;
        check(text).map_err(|why| invalid(&at, why))?;
        if out.iter().any(|seen| seen == text) {
            return Err(invalid(&at, "is listed twice"));
        }
        out.push(text.to_string());
    }
    Ok(out)
}

/// A purpose, category or task schema: 1 to 128 bytes of printable ASCII without spaces.
pub fn check_name(text: &str) -> Result<(), &'static str> {
    if text.is_empty()
        || text.len() > MAX_NAME_BYTES
        || !text.bytes().all(|b| (0x21..=0x7e).contains(&b))
    {
        return Err("must be 1 to 128 bytes of printable ASCII without spaces");
    }
    Ok(())
}

/// A UUID in its lowercase hyphenated spelling (the only one accepted).
pub fn check_uuid(text: &str) -> Result<(), &'static str> {
    match uuid::Uuid::parse_str(text) {
        Ok(id) if id.hyphenated().to_string() == text => Ok(()),
        _ => Err("must be a UUID, lowercase and hyphenated"),
    }
}

/// An endpoint: `https://host:port/path`, the host lowercase letters, digits, dots and hyphens
/// (or a bracketed IPv6 literal), the port written (1 to 65535, no leading zero), the path
/// starting with `/`, no query, fragment or user information.
pub fn check_endpoint(text: &str) -> Result<(), &'static str> {
    const WHY: &str = "must be https://host:port/path with the port written, a lowercase host, \
                       and no query, fragment or user information";
    if text.len() > MAX_ENDPOINT_BYTES || !text.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(WHY);
    }
    let rest = text.strip_prefix("https://").ok_or(WHY)?;
    let slash = rest.find('/').ok_or(WHY)?;
    let (authority, path) = rest.split_at(slash);
    if path.contains(['?', '#']) || authority.contains('@') {
        return Err(WHY);
    }
    let colon = authority.rfind(':').ok_or(WHY)?;
    let (host, port) = (&authority[..colon], &authority[colon + 1..]);
    let port_ok = !port.is_empty()
        && !port.starts_with('0')
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p));
    let host_ok = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        inner.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
    };
    if port_ok && host_ok { Ok(()) } else { Err(WHY) }
}

fn limit(value: &Value<'_>, field: &str) -> Result<Limit, LineError> {
    let v = exact_members(value, LIMIT_MEMBERS, field, invalid)?;
    let n = |i: usize| {
        integer(
            v[i],
            &format!("{field}.{}", LIMIT_MEMBERS[i]),
            (0, MAX_SAFE),
        )
        .map(|n| n as u64)
    };
    Ok(Limit {
        uses: n(0)?,
        application_bytes: n(1)?,
        network_bytes: n(2)?,
    })
}

impl PeerPolicy {
    /// Checks a policy record (`field` is where it sits, e.g. `policy`).
    pub fn from_value(value: &Value<'_>, field: &str) -> Result<PeerPolicy, LineError> {
        let v = exact_members(value, MEMBERS, field, invalid)?;
        let at = |m: &str| format!("{field}.{m}");
        let generation = integer(v[0], &at("generation"), (1, MAX_SAFE))? as u64;
        let mut actions = Vec::new();
        for name in names(v[1], &at("actions"), |_| Ok(()))? {
            actions.push(
                Action::from_name(&name).ok_or_else(|| {
                    invalid(&at("actions"), &format!("{name:?} is not an action"))
                })?,
            );
        }
        let purposes = names(v[2], &at("purposes"), check_name)?;
        let categories = names(v[3], &at("categories"), check_name)?;
        let task_schemas = names(v[4], &at("task_schemas"), check_name)?;
        let peers = names(v[5], &at("peers"), check_uuid)?;
        let endpoints = names(v[6], &at("endpoints"), check_endpoint)?;
        let l = exact_members(v[7], LIMIT_KINDS, &at("limits"), invalid)?;
        let limits = Limits {
            host: limit(l[0], &at("limits.host"))?,
            purpose: limit(l[1], &at("limits.purpose"))?,
            peer: limit(l[2], &at("limits.peer"))?,
            task: limit(l[3], &at("limits.task"))?,
        };
        let declaration_seconds =
            integer(v[8], &at("declaration_seconds"), DECLARATION_SECONDS)? as u32;
        let task_seconds = integer(v[9], &at("task_seconds"), TASK_SECONDS)? as u32;
        let network_seconds = integer(v[10], &at("network_seconds"), NETWORK_SECONDS)? as u32;
        if network_seconds > task_seconds {
            return Err(invalid(
                &at("network_seconds"),
                "must not exceed task_seconds",
            ));
        }
        let canonical =
            canonical::canonical_json(value).map_err(|e| invalid(field, e.message()))?;
        let digest = canonical::canonical_hash(DIGEST_DOMAIN, value)
            .map_err(|e| invalid(field, e.message()))?;
        Ok(PeerPolicy {
            generation,
            actions,
            purposes,
            categories,
            task_schemas,
            peers,
            endpoints,
            limits,
            declaration_seconds,
            task_seconds,
            network_seconds,
            canonical,
            digest,
        })
    }

    /// Checks a policy record given as JSON text.
    pub fn from_json(text: &str) -> Result<PeerPolicy, LineError> {
        let value = canonical::parse(text).map_err(|e| {
            LineError::new(Code::PolicyInvalid, format!("policy: {}", e.message()))
                .with("field", "policy")
        })?;
        PeerPolicy::from_value(&value, "policy")
    }

    /// Whether the policy grants `action` for `target`: `denied` with the `reason` (`action`,
    /// `peer`, `purpose`, `task_schema`, `category` or `endpoint`) of the first thing it does
    /// not list. Matching is byte for byte.
    pub fn authorize(&self, action: Action, target: &Target<'_>) -> Result<(), LineError> {
        let deny = |reason: &str| {
            Err(LineError::new(
                Code::Denied,
                format!("the policy does not admit this {reason}"),
            )
            .with("reason", reason))
        };
        let listed =
            |list: &[String], item: &str| list.iter().any(|x| x.as_bytes() == item.as_bytes());
        if !self.actions.contains(&action) {
            return deny("action");
        }
        if !listed(&self.peers, target.peer_id) {
            return deny("peer");
        }
        if !listed(&self.purposes, target.purpose) {
            return deny("purpose");
        }
        if !listed(&self.task_schemas, target.task_schema) {
            return deny("task_schema");
        }
        if !listed(&self.categories, target.category) {
            return deny("category");
        }
        if let Some(endpoint) = target.endpoint
            && !listed(&self.endpoints, endpoint)
        {
            return deny("endpoint");
        }
        Ok(())
    }

    /// The capacity scopes this policy names, with their ceilings: the host, each purpose, each
    /// peer and each (peer, task schema). `host_key` is the installation's id.
    pub fn scopes(&self, host_key: &str) -> Vec<(ScopeKind, String, Limit)> {
        let mut out = vec![(ScopeKind::Host, host_key.to_string(), self.limits.host)];
        out.extend(
            self.purposes
                .iter()
                .map(|p| (ScopeKind::Purpose, p.clone(), self.limits.purpose)),
        );
        out.extend(
            self.peers
                .iter()
                .map(|p| (ScopeKind::Peer, p.clone(), self.limits.peer)),
        );
        for peer in &self.peers {
            for schema in &self.task_schemas {
                out.push((
                    ScopeKind::Task,
                    task_scope_key(peer, schema),
                    self.limits.task,
                ));
            }
        }
        out
    }
}

/// The key of a task-family scope: the peer UUID, `/`, the task schema (a UUID has no `/`).
pub fn task_scope_key(peer_id: &str, task_schema: &str) -> String {
    format!("{peer_id}/{task_schema}")
}

/// A kind of capacity scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// The installation.
    Host,
    /// An exact purpose.
    Purpose,
    /// A peer identity.
    Peer,
    /// A (peer, task schema) family.
    Task,
}

impl ScopeKind {
    /// Every kind, in the order charged.
    pub const ALL: [ScopeKind; 4] = [
        ScopeKind::Host,
        ScopeKind::Purpose,
        ScopeKind::Peer,
        ScopeKind::Task,
    ];

    /// The name (`host`, `purpose`, `peer`, `task`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ScopeKind::Host => "host",
            ScopeKind::Purpose => "purpose",
            ScopeKind::Peer => "peer",
            ScopeKind::Task => "task",
        }
    }

    /// The kind of this name.
    pub fn from_name(name: &str) -> Option<ScopeKind> {
        ScopeKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// This kind's ceiling in `limits`.
    pub fn limit(self, limits: &Limits) -> Limit {
        match self {
            ScopeKind::Host => limits.host,
            ScopeKind::Purpose => limits.purpose,
            ScopeKind::Peer => limits.peer,
            ScopeKind::Task => limits.task,
        }
    }
}
