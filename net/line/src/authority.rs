//! The session's authority mutations: `enroll`, `rotate` and `revoke` (docs/line.md,
//! "Enrollment, rotation, revocation"). None of them makes any contact.
//!
//! Each mutation fences before it persists: the peer is fenced in this process's memory (and,
//! for `rotate`, the old key version retired there) before anything is written; a first
//! transaction writes the durable fence (`line_peer.pending_mutation`); a second makes the
//! change and lifts it. An uncertain second commit answers exactly
//! `{"error":"unknown","peer_id":...}` and the peer stays fenced, in memory for this session and
//! durably across a restart, until the operator repeats the same mutation.

use std::collections::HashSet;

use agent_intercom_core::canonical::Value;
use rusqlite::{Connection, Transaction};

use crate::config::PublicConfig;
use crate::custody;
use crate::custody::peers::{self, ActiveKey, NewEnrollment};
use crate::fault::Faults;
use crate::keyrec::{self, KeyRecord};
use crate::policy::{Action, check_name, check_uuid};
use crate::startup::check_live;
use crate::{Code, LineError};

pub use crate::custody::peers::{Enrollment, VerificationKey, find_enrollment};
pub use crate::policy::Selectors;

/// The fault point of `enroll`'s persisting commit.
pub const ENROLL_POINT: &str = "enroll-commit";
/// The fault point of `rotate`'s persisting commit.
pub const ROTATE_POINT: &str = "rotate-commit";
/// The fault point of `revoke`'s persisting commit.
pub const REVOKE_POINT: &str = "revoke-commit";
/// The category a command without one names.
pub const DEFAULT_CATEGORY: &str = "public-task";

/// This process's fences: peers with an uncertain or unfinished mutation, and key versions
/// retired before their retirement is durable. Never restored at startup (the durable
/// `pending_mutation` is).
#[derive(Debug, Default)]
pub struct Fences {
    peers: HashSet<String>,
    retired: HashSet<(String, String)>,
}

impl Fences {
    /// Whether `peer_id` is fenced in memory.
    pub fn is_fenced(&self, peer_id: &str) -> bool {
        self.peers.contains(peer_id)
    }

    /// Whether the key `key_id` of `peer_id` was retired in memory.
    pub fn is_retired(&self, peer_id: &str, key_id: &str) -> bool {
        self.retired
            .contains(&(peer_id.to_string(), key_id.to_string()))
    }
}

/// What a mutation is given besides its input line.
pub struct Context<'a> {
    /// The public configuration (workload id, live policy).
    pub config: &'a PublicConfig,
    /// SHA-256 of the workload's public key, hex (what an enrollment pins).
    pub workload_fingerprint: &'a str,
    /// Faults and clock.
    pub faults: &'a Faults,
}

pub(crate) fn invalid_field(field: &str, why: &str) -> LineError {
    LineError::new(Code::InvalidField, format!("{field}: {why}")).with("field", field)
}

/// The members of `value` other than `operation` must be exactly `required` plus any of
/// `optional`.
pub(crate) fn check_members(
    value: &Value<'_>,
    required: &[&str],
    optional: &[&str],
) -> Result<(), LineError> {
    let Value::Object(pairs) = value else {
        return Err(invalid_field("", "the input must be an object"));
    };
    for (name, _) in pairs {
        let name: &str = name.as_ref();
        if name != "operation" && !required.contains(&name) && !optional.contains(&name) {
            return Err(invalid_field(name, "is not a member of this operation"));
        }
    }
    for name in required {
        if value.get(name).is_none() {
            return Err(invalid_field(name, "is missing"));
        }
    }
    Ok(())
}

pub(crate) fn string<'v>(value: &'v Value<'_>, name: &str) -> Result<&'v str, LineError> {
    value
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_field(name, "must be a string"))
}

pub(crate) fn selectors(value: &Value<'_>) -> Result<Selectors, LineError> {
    let peer_id = string(value, "peer_id")?;
    check_uuid(peer_id).map_err(|why| invalid_field("peer_id", why))?;
    let mut names = Vec::new();
    for name in ["purpose", "task_schema"] {
        let text = string(value, name)?;
        check_name(text).map_err(|why| invalid_field(name, why))?;
        names.push(text.to_string());
    }
    let category = match value.get("category") {
        None => DEFAULT_CATEGORY.to_string(),
        Some(_) => {
            let text = string(value, "category")?;
            check_name(text).map_err(|why| invalid_field("category", why))?;
            text.to_string()
        }
    };
    let task_schema = names.pop().unwrap_or_default();
    let purpose = names.pop().unwrap_or_default();
    Ok(Selectors {
        peer_id: peer_id.to_string(),
        purpose,
        task_schema,
        category,
    })
}

pub(crate) fn deny_action(ctx: &Context<'_>, action: Action) -> Result<(), LineError> {
    if ctx.config.policy.actions.contains(&action) {
        return Ok(());
    }
    Err(
        LineError::new(Code::Denied, "the policy does not admit this action")
            .with("reason", "action"),
    )
}

fn unknown_peer(peer_id: &str) -> LineError {
    LineError::new(Code::Unknown, "").with("peer_id", peer_id)
}

/// The gate of every target-bearing command after enrollment: the exact enrollment exists
/// (`not_enrolled`), is not revoked (`revoked`), is not fenced (`fenced`, in memory or
/// durably) and pins the workload key in use (`workload_key_changed`).
pub fn target_gate(
    conn: &Connection,
    fences: &Fences,
    s: &Selectors,
    endpoint: &str,
    workload_fingerprint: &str,
) -> Result<Enrollment, LineError> {
    gate(conn, fences, s, endpoint, workload_fingerprint, None).map(|(row, _)| row)
}

/// [`target_gate`], letting the mutation `repeat` pass a fence of its own (an uncertain
/// `rotate` is finished by repeating it); also says whether the peer was fenced.
fn gate(
    conn: &Connection,
    fences: &Fences,
    s: &Selectors,
    endpoint: &str,
    workload_fingerprint: &str,
    repeat: Option<&str>,
) -> Result<(Enrollment, bool), LineError> {
    let Some(row) = find_enrollment(conn, s, endpoint)? else {
        return Err(LineError::new(
            Code::NotEnrolled,
            "no enrollment has exactly these selectors and endpoint",
        ));
    };
    let (revoked, pending) = peers::peer_state(conn, &s.peer_id)?;
    if revoked {
        return Err(
            LineError::new(Code::Revoked, "this peer is revoked").with("peer_id", &*s.peer_id)
        );
    }
    let fenced = fences.is_fenced(&s.peer_id) || pending.is_some();
    let passes = repeat.is_some() && pending.as_deref().is_none_or(|p| Some(p) == repeat);
    if fenced && !passes {
        return Err(LineError::new(
            Code::Fenced,
            "an authority mutation of this peer is uncertain: repeat it",
        )
        .with("peer_id", &*s.peer_id));
    }
    if row.workload_key_sha256 != workload_fingerprint {
        return Err(LineError::new(
            Code::WorkloadKeyChanged,
            "the workload key differs from the one this enrollment pinned",
        ));
    }
    Ok((row, fenced))
}

/// The key a response signed with `key_id` by `peer_id` verifies against at `now_ms`: the
/// active version, inside its validity, not retired in memory, the peer neither fenced nor
/// revoked. `None` otherwise.
pub fn verification_key(
    conn: &Connection,
    fences: &Fences,
    peer_id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<Option<VerificationKey>, LineError> {
    if fences.is_fenced(peer_id) || fences.is_retired(peer_id, key_id) {
        return Ok(None);
    }
    let (revoked, pending) = peers::peer_state(conn, peer_id)?;
    if revoked || pending.is_some() {
        return Ok(None);
    }
    peers::valid_key(conn, peer_id, key_id, now_ms)
}

fn same_key(active: &ActiveKey, key: &KeyRecord) -> bool {
    active.1 == key.key_id
        && active.2 == key.public_key_raw
        && active.3 == key.valid_from
        && active.4 == key.expires_at
}

/// Runs the persisting transaction `body` under the fault point `point`; an uncertain commit
/// is `unknown` with the peer id.
fn persist(
    conn: &mut Connection,
    ctx: &Context<'_>,
    point: &str,
    peer_id: &str,
    body: impl FnOnce(&Transaction<'_>) -> Result<(), LineError>,
) -> Result<(), LineError> {
    let tx = custody::begin(conn, "cannot begin the mutation")?;
    check_live(&tx, ctx.config.policy.generation)?;
    body(&tx)?;
    ctx.faults.commit(tx, point, || unknown_peer(peer_id))
}

/// Writes the durable fence of `peer_id` (every enrollment row of it).
fn durable_fence(
    conn: &mut Connection,
    ctx: &Context<'_>,
    peer_id: &str,
    mutation: &str,
) -> Result<(), LineError> {
    let tx = custody::begin(conn, "cannot begin the fence")?;
    check_live(&tx, ctx.config.policy.generation)?;
    peers::fence(&tx, peer_id, mutation, ctx.faults.now_ms())?;
    tx.commit().map_err(|_| unknown_peer(peer_id))
}

/// `enroll`: checks the line (L-08 to L-16), then records the enrollment and, for a peer not
/// yet enrolled, its key version 1. The answer carries the enrollment id, the selectors, the
/// canonical endpoint, the key id and version.
pub fn enroll(
    conn: &mut Connection,
    ctx: &Context<'_>,
    fences: &mut Fences,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    check_members(
        value,
        &["peer_id", "purpose", "task_schema", "key", "endpoint"],
        &["category"],
    )?;
    let s = selectors(value)?;
    deny_action(ctx, Action::Enroll)?;
    let now = ctx.faults.now_ms();
    let endpoint =
        keyrec::endpoint_record(value.get("endpoint").unwrap_or(&Value::Null), "endpoint")?;
    ctx.config
        .policy
        .authorize(Action::Enroll, &s.target(&endpoint.uri))?;
    let key = keyrec::key_record(
        value.get("key").unwrap_or(&Value::Null),
        "key",
        &s.peer_id,
        &ctx.config.workload_id,
        now,
    )?;
    check_live(conn, ctx.config.policy.generation)?;
    let (active, existing) = enrollable(conn, ctx, fences, &s, &endpoint.uri, &key)?;
    // Fence first (memory, then durably with the new row itself), persist second.
    fences.peers.insert(s.peer_id.clone());
    let enrollment_id = match &existing {
        Some(row) => row.enrollment_id.clone(),
        None => uuid::Uuid::new_v4().hyphenated().to_string(),
    };
    if existing.is_none() {
        let tx = custody::begin(conn, "cannot begin the enrollment")?;
        check_live(&tx, ctx.config.policy.generation)?;
        let row = NewEnrollment {
            enrollment_id: &enrollment_id,
            selectors: &s,
            endpoint: &endpoint,
            workload_id: &ctx.config.workload_id,
            workload_key_sha256: ctx.workload_fingerprint,
            generation: ctx.config.policy.generation,
            now_ms: now,
        };
        peers::insert_enrollment(&tx, &row)?;
        tx.commit().map_err(|_| unknown_peer(&s.peer_id))?;
    }
    let version = active.as_ref().map(|a| a.0).unwrap_or(1);
    persist(conn, ctx, ENROLL_POINT, &s.peer_id, |tx| {
        if active.is_none() {
            peers::insert_key(tx, &s.peer_id, 1, &key)?;
        }
        peers::complete_enrollment(tx, &enrollment_id, now)
    })?;
    fences.peers.remove(&s.peer_id);
    Ok(serde_json::json!({
        "enrollment_id": enrollment_id,
        "peer_id": s.peer_id,
        "purpose": s.purpose,
        "task_schema": s.task_schema,
        "category": s.category,
        "endpoint": endpoint.uri,
        "key_id": key.key_id,
        "key_version": version,
    }))
}

/// Whether `enroll` may record these selectors and key: the peer is not revoked, an active key
/// is this one, and the exact enrollment is new or the repeat of an uncertain one. The peer's
/// active key and the existing enrollment.
fn enrollable(
    conn: &Connection,
    ctx: &Context<'_>,
    fences: &Fences,
    s: &Selectors,
    endpoint: &str,
    key: &KeyRecord,
) -> Result<(Option<ActiveKey>, Option<Enrollment>), LineError> {
    let (revoked, pending) = peers::peer_state(conn, &s.peer_id)?;
    if revoked {
        return Err(
            LineError::new(Code::Revoked, "this peer is revoked").with("peer_id", &*s.peer_id)
        );
    }
    let active = peers::active_key(conn, &s.peer_id)?;
    if let Some(a) = &active
        && !same_key(a, key)
    {
        return Err(LineError::new(
            Code::AlreadyEnrolled,
            "this peer is enrolled with another key: its identity is immutable (rotate instead)",
        )
        .with("peer_id", &*s.peer_id));
    }
    let existing = find_enrollment(conn, s, endpoint)?;
    let fenced = || {
        LineError::new(
            Code::Fenced,
            "an authority mutation of this peer is uncertain: repeat it",
        )
        .with("peer_id", &*s.peer_id)
    };
    // A repeat completes an enrollment whose commit was uncertain.
    match (&existing, pending.as_deref()) {
        (Some(row), Some("enroll")) if row.pending_mutation.as_deref() == Some("enroll") => {}
        (_, Some(_)) => return Err(fenced()),
        (Some(_), None) if fences.is_fenced(&s.peer_id) => {}
        (Some(row), None) => {
            return Err(LineError::new(
                Code::AlreadyEnrolled,
                "an enrollment with exactly these selectors exists",
            )
            .with("peer_id", &*s.peer_id)
            .with("enrollment_id", &*row.enrollment_id));
        }
        (None, None) if fences.is_fenced(&s.peer_id) => return Err(fenced()),
        (None, None) => {}
    }
    if let Some(row) = &existing
        && row.workload_key_sha256 != ctx.workload_fingerprint
    {
        return Err(LineError::new(
            Code::WorkloadKeyChanged,
            "the workload key differs from the one this enrollment pinned",
        ));
    }
    Ok((active, existing))
}

pub(crate) fn target_input(
    value: &Value<'_>,
    extra: &[&str],
) -> Result<(Selectors, String), LineError> {
    let mut required = vec!["peer_id", "purpose", "task_schema", "endpoint"];
    required.extend_from_slice(extra);
    check_members(value, &required, &["category"])?;
    let s = selectors(value)?;
    let endpoint = string(value, "endpoint")?.to_string();
    Ok((s, endpoint))
}

/// `rotate`: the exact target and a new key record (a new `key_id` and new key bytes). The old
/// version is retired in memory and the peer fenced before anything is persisted.
pub fn rotate(
    conn: &mut Connection,
    ctx: &Context<'_>,
    fences: &mut Fences,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let (s, endpoint) = target_input(value, &["key"])?;
    ctx.config
        .policy
        .authorize(Action::Rotate, &s.target(&endpoint))?;
    check_live(conn, ctx.config.policy.generation)?;
    // Only a repeated rotation may pass a fence.
    let (_, fenced) = gate(
        conn,
        fences,
        &s,
        &endpoint,
        ctx.workload_fingerprint,
        Some("rotate"),
    )?;
    let now = ctx.faults.now_ms();
    let key = keyrec::key_record(
        value.get("key").unwrap_or(&Value::Null),
        "key",
        &s.peer_id,
        &ctx.config.workload_id,
        now,
    )?;
    let active = peers::active_key(conn, &s.peer_id)?
        .ok_or_else(|| LineError::new(Code::NotEnrolled, "this peer has no active key"))?;
    // A repeat of a rotation whose commit was uncertain but happened: the new key is active.
    if fenced && same_key(&active, &key) {
        let retired = peers::key_id_of(conn, &s.peer_id, active.0 - 1)?;
        persist(conn, ctx, ROTATE_POINT, &s.peer_id, |tx| {
            peers::clear_fence(tx, &s.peer_id, now)
        })?;
        fences.peers.remove(&s.peer_id);
        return Ok(serde_json::json!({
            "peer_id": s.peer_id,
            "retired_key_id": retired,
            "key_id": key.key_id,
            "key_version": active.0,
        }));
    }
    if let Some(key_id) = peers::reused_key(conn, &s.peer_id, &key.key_id, &key.public_key_raw)? {
        let field = if key_id == key.key_id {
            "key.key_id"
        } else {
            "key.public_key_pem"
        };
        return Err(LineError::new(
            Code::KeyInvalid,
            format!("{field}: a rotation needs a new key id and new key bytes"),
        )
        .with("field", field));
    }
    // Fence first: the old version is retired here before the persistence wait.
    fences.peers.insert(s.peer_id.clone());
    fences.retired.insert((s.peer_id.clone(), active.1.clone()));
    durable_fence(conn, ctx, &s.peer_id, "rotate")?;
    let version = active.0 + 1;
    persist(conn, ctx, ROTATE_POINT, &s.peer_id, |tx| {
        peers::retire_key(tx, &s.peer_id, active.0)?;
        peers::insert_key(tx, &s.peer_id, version, &key)?;
        peers::clear_fence(tx, &s.peer_id, now)
    })?;
    fences.peers.remove(&s.peer_id);
    Ok(serde_json::json!({
        "peer_id": s.peer_id,
        "retired_key_id": active.1,
        "key_id": key.key_id,
        "key_version": version,
    }))
}

/// `revoke`: the exact target. The peer (every enrollment of it and every key version) is
/// fenced in memory, then durably, then revoked. Revocation is final; repeating it answers the
/// same.
pub fn revoke(
    conn: &mut Connection,
    ctx: &Context<'_>,
    fences: &mut Fences,
    value: &Value<'_>,
) -> Result<serde_json::Value, LineError> {
    let (s, endpoint) = target_input(value, &[])?;
    ctx.config
        .policy
        .authorize(Action::Revoke, &s.target(&endpoint))?;
    check_live(conn, ctx.config.policy.generation)?;
    if find_enrollment(conn, &s, &endpoint)?.is_none() {
        return Err(LineError::new(
            Code::NotEnrolled,
            "no enrollment has exactly these selectors and endpoint",
        ));
    }
    let now = ctx.faults.now_ms();
    // Fence first: nothing of this peer is sent or adopted from here on.
    fences.peers.insert(s.peer_id.clone());
    let (revoked, _) = peers::peer_state(conn, &s.peer_id)?;
    if !revoked {
        durable_fence(conn, ctx, &s.peer_id, "revoke")?;
    }
    persist(conn, ctx, REVOKE_POINT, &s.peer_id, |tx| {
        peers::revoke(tx, &s.peer_id, now)
    })?;
    Ok(serde_json::json!({"peer_id": s.peer_id, "revoked": true}))
}
