//! Remote access (remote-access-v1): registrations through the gateway, the `access_control`
//! frame, the policy kernel over the live sessions, the expiry sweep, and what revoking,
//! adopting or expiring a principal does to the live sessions.
//!
//! The decisions, their order, codes and texts are the Pi broker's; the registry and the audit
//! log are [`crate::access`], the authorization is the core's policy kernel
//! ([`agent_intercom_core::policy::authorize`]).

use std::collections::HashSet;
use std::time::Duration;

use agent_intercom_core::asks::CancelReason;
use agent_intercom_core::policy::{
    self, AuthorizationContext, PolicyAction, PolicyState, Principal, PrincipalKind,
    PrincipalPolicy, PrincipalState as PolicyPrincipalState,
};
use serde_json::{Map, Value, json};

use super::sessions::Remote;
use super::{ConnId, Origin, State, Timer};
use crate::access::{
    AccessError, AuditEntry, AuditLog, ChildRequest, EnrollmentTemplate, PrincipalRecord,
    PrincipalState, Registry,
};
use crate::config::LogLevel;
use crate::wire::{self, Register, error_code};

/// The registry and the audit log of a broker that serves remote access.
pub(super) struct Access {
    pub(super) registry: Registry,
    pub(super) audit: AuditLog,
}

/// The policy kernel's view of the live sessions: `None` while every live session is local
/// (then every decision is `local-public`, and nothing is built).
pub(super) struct Policy(Option<PolicyState>);

impl Policy {
    /// Whether `actor` may do `action` to `target` (both live sessions).
    pub(super) fn allows(&self, actor: &str, action: PolicyAction, target: &str) -> bool {
        match &self.0 {
            None => true,
            Some(state) => policy::authorize(
                state,
                actor,
                action,
                target,
                &AuthorizationContext::default(),
            )
            .is_allowed(),
        }
    }
}

/// What an `access_control` frame is answered with: a result, or an error frame's code and text.
type Answer = Result<Value, (&'static str, String)>;

fn deny(text: &str) -> (&'static str, String) {
    (error_code::ACCESS_DENIED, text.to_string())
}

fn invalid(text: &str) -> (&'static str, String) {
    (error_code::INVALID_REQUEST, text.to_string())
}

/// A session id as the Pi broker accepts one in administration: a string that is not blank.
fn session_id(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

/// A JSON number that is a safe integer (`Number.isSafeInteger`).
fn safe_integer(value: &Value) -> Option<i64> {
    let n = value.as_f64()?;
    (n.fract() == 0.0 && n.abs() <= policy::MAX_GENERATION as f64).then_some(n as i64)
}

/// An optional member: absent is `Ok(None)`; present, it must satisfy `read`.
fn optional<'a, T>(
    map: &'a Map<String, Value>,
    key: &str,
    read: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => read(v).map(Some).ok_or(()),
    }
}

/// The optional members an enrollment request may carry, type-checked as the Pi broker does.
struct EnrollmentOptions {
    ttl_ms: Option<i64>,
    expires_at: Option<i64>,
    can_delegate: Option<bool>,
    max_depth: Option<u32>,
    max_children: Option<u32>,
}

/// A limit the registry bounds (depth, children): a safe integer; one outside `u32` can only
/// be refused, so it is kept as a value the registry refuses.
fn limit(value: &Value) -> Option<u32> {
    safe_integer(value).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

impl EnrollmentOptions {
    fn read(map: &Map<String, Value>) -> Result<EnrollmentOptions, ()> {
        Ok(EnrollmentOptions {
            ttl_ms: optional(map, "ttlMs", safe_integer)?,
            expires_at: optional(map, "expiresAt", safe_integer)?,
            can_delegate: optional(map, "canDelegate", Value::as_bool)?,
            max_depth: optional(map, "maxDepth", limit)?,
            max_children: optional(map, "maxChildren", limit)?,
        })
    }
}

/// The reconnect credential `{sessionCredential, sessionId, generation}`.
fn session_credential(access: &Map<String, Value>) -> Option<(&str, &str, i64)> {
    Some((
        access.get("sessionCredential")?.as_str()?,
        access.get("sessionId")?.as_str()?,
        safe_integer(access.get("generation")?)?,
    ))
}

impl State {
    /// Serves remote access from `registry`, recording decisions in `audit`.
    pub fn serve_remote(&mut self, registry: Registry, audit: AuditLog) {
        self.access = Some(Access { registry, audit });
        self.arm_sweep();
    }

    /// Appends to the audit log; a failure is logged, never shown to a client.
    pub(super) fn audit(&self, entry: AuditEntry<'_>) {
        let Some(access) = &self.access else { return };
        if let Err(e) = access.audit.record(&entry, self.clock.now_ms()) {
            self.log(LogLevel::Error, || {
                format!("cannot append to the audit log: {e}")
            });
        }
    }

    /// The policy kernel's state for the live sessions: a local session is an active
    /// `local-public` principal of generation 1, its own root; a remote one its `remote-tree`
    /// principal, revoked when the registry no longer holds it active at that generation.
    pub(super) fn policy(&self) -> Policy {
        self.policy_of(true)
    }

    /// The policy of the live sessions as they registered, the registry not consulted: what
    /// the sessions could see before a transition changed the registry.
    fn prior_policy(&self) -> Policy {
        self.policy_of(false)
    }

    fn policy_of(&self, current: bool) -> Policy {
        if self.remote_live == 0 {
            return Policy(None);
        }
        let mut state = PolicyState::new();
        for (id, entry) in &self.sessions {
            let principal = match &entry.remote {
                None => Principal::local(id.clone()),
                Some(remote) => Principal {
                    id: id.clone(),
                    kind: PrincipalKind::Remote,
                    state: if !current || self.is_current_principal(id) {
                        PolicyPrincipalState::Active
                    } else {
                        PolicyPrincipalState::Revoked
                    },
                    generation: remote.generation,
                    policy: PrincipalPolicy::RemoteTree,
                    parent_session_id: Some(remote.parent.clone()),
                    root_session_id: remote.root.clone(),
                },
            };
            state.insert(principal);
        }
        Policy(Some(state))
    }

    /// Whether a live session may go on: local sessions always; a remote one while its
    /// principal is active, unexpired and of the generation it registered with.
    pub(super) fn is_current_principal(&self, id: &str) -> bool {
        let Some(entry) = self.sessions.get(id) else {
            return false;
        };
        let Some(remote) = &entry.remote else {
            return true;
        };
        self.access.as_ref().is_some_and(|a| {
            a.registry
                .validate_principal(id, remote.generation, self.clock.now_ms())
                .is_ok()
        })
    }

    /// A `register` on the gateway: the session is the principal an enrollment token creates
    /// or a session credential names; the id and the name are the principal's.
    pub(super) fn register_remote(
        &mut self,
        conn: ConnId,
        register: Register,
        access: Option<&Value>,
    ) {
        if self.sessions.len() >= self.config.max_sessions {
            return self.refuse(
                conn,
                error_code::TOO_MANY_SESSIONS,
                "Too many registered intercom sessions",
            );
        }
        let Some(fields) = access.and_then(Value::as_object) else {
            self.audit_denied_credential("MISSING_CREDENTIAL");
            return self.refuse(
                conn,
                error_code::ACCESS_DENIED,
                "Remote registration requires an access credential",
            );
        };
        let now = self.clock.now_ms();
        let outcome = match self.access.as_mut() {
            None => Err(None),
            Some(access) => {
                if let Some(token) = fields.get("enrollmentToken").and_then(Value::as_str) {
                    access
                        .registry
                        .consume_enrollment(token, now)
                        .map(|(p, credential)| (p, Some(credential)))
                        .map_err(Some)
                } else if let Some((credential, id, generation)) = session_credential(fields) {
                    u64::try_from(generation)
                        .map_err(|_| None)
                        .and_then(|generation| {
                            access
                                .registry
                                .authenticate_session(id, generation, credential, now)
                                .map_err(Some)
                        })
                        .map(|p| (p, None))
                } else {
                    Err(None)
                }
            }
        };
        let (principal, credential) = match outcome {
            Ok(ok) => ok,
            Err(error) => {
                if let Some(AccessError::Io(e)) = &error {
                    self.log(LogLevel::Error, || {
                        format!("cannot store the access registry: {e}")
                    });
                }
                self.audit_denied_credential("INVALID_CREDENTIAL");
                return self.refuse(
                    conn,
                    error_code::ACCESS_DENIED,
                    "Remote registration credential was rejected",
                );
            }
        };
        let id = principal.id.clone();
        if self.sessions.contains_key(&id) {
            self.audit(AuditEntry {
                event: "credential_reuse_denied",
                outcome: "denied",
                actor_id: Some(&id),
                remote_host_id: Some(&principal.remote_host_id),
                generation: Some(principal.generation),
                reason: Some("ALREADY_ACTIVE"),
                ..AuditEntry::default()
            });
            return self.refuse(
                conn,
                error_code::ACCESS_DENIED,
                "Remote session credential is already active",
            );
        }
        for event in [
            if credential.is_some() {
                "enrollment_consumed"
            } else {
                "remote_reconnect"
            },
            "remote_connect",
        ] {
            self.audit(AuditEntry {
                event,
                outcome: "allowed",
                actor_id: Some(&id),
                target_id: Some(&principal.parent_session_id),
                remote_host_id: Some(&principal.remote_host_id),
                generation: Some(principal.generation),
                ..AuditEntry::default()
            });
        }
        let remote = Remote::of(&principal);
        let access = remote.access(credential.as_deref());
        let mut entry = self.new_entry(conn, &id, &register, Some(remote));
        entry.name = Some(principal.name.clone());
        entry.refresh(&id);
        self.install_new(
            conn,
            &id,
            entry,
            Some([
                ("remoteAccess", wire::remote_access_contract()),
                ("access", access),
            ]),
        );
        self.log(LogLevel::Info, || {
            format!("remote principal {id} connected")
        });
        self.arm_sweep();
    }

    /// An `access_control` frame on a fresh connection: answered, then the connection ends.
    pub(super) fn access_control(&mut self, conn: ConnId, origin: Origin, frame: &Value) {
        let empty = Map::new();
        let frame = frame.as_object().unwrap_or(&empty);
        let answer = match origin {
            Origin::Local => self.local_control(frame),
            Origin::Remote => self.gateway_control(frame),
        };
        match answer {
            Ok(result) => {
                self.send_value(conn, result);
                self.close(conn);
            }
            Err((code, text)) => self.refuse(conn, code, &text),
        }
    }

    fn request_id<'a>(&self, frame: &'a Map<String, Value>) -> Option<&'a str> {
        frame
            .get("requestId")
            .and_then(Value::as_str)
            .filter(|r| wire::js_len(r) <= self.config.max_message_id_len)
    }

    /// The local administrator's actions, authenticated by the admin token.
    fn local_control(&mut self, frame: &Map<String, Value>) -> Answer {
        let admitted =
            self.request_id(frame)
                .zip(
                    frame
                        .get("adminToken")
                        .and_then(Value::as_str)
                        .filter(|token| {
                            self.access
                                .as_ref()
                                .is_some_and(|a| a.registry.authenticate_admin(token))
                        }),
                );
        let Some((request_id, _)) = admitted else {
            return Err(deny(
                "Remote access control credential or request was rejected",
            ));
        };
        let result = |action: &str| {
            let mut map = Map::new();
            map.insert("type".into(), json!("access_control_result"));
            map.insert("requestId".into(), json!(request_id));
            map.insert("action".into(), json!(action));
            map
        };
        let now = self.clock.now_ms();
        match frame.get("action").and_then(Value::as_str) {
            Some("inspect_tree") => {
                let target = session_id(frame.get("principalId"))
                    .ok_or_else(|| invalid("Invalid remote principal ID"))?;
                let principals = self.summaries(&self.registry().inspect_subtree(target));
                self.audit(AuditEntry {
                    event: "tree_inspected",
                    outcome: "allowed",
                    actor_id: Some("local-admin"),
                    target_id: Some(target),
                    visible_count: Some(principals.len()),
                    ..AuditEntry::default()
                });
                let mut out = result("inspect_tree");
                out.insert("principals".into(), Value::Array(principals));
                Ok(Value::Object(out))
            }
            Some("adopt_subtree") => {
                let (Some(target), Some(parent)) = (
                    session_id(frame.get("principalId")),
                    session_id(frame.get("newParentSessionId")),
                ) else {
                    return Err(invalid("Invalid adoption request"));
                };
                let local_parent = self.sessions.get(parent).filter(|e| e.remote.is_none());
                let remote_parent = self
                    .registry()
                    .get(parent)
                    .filter(|p| p.state == PrincipalState::Active);
                let new_root = match (local_parent, remote_parent) {
                    (Some(_), _) => parent.to_string(),
                    (None, Some(p)) => p.root_session_id.clone(),
                    (None, None) => {
                        return Err(deny(
                            "Adoption parent must be an active local or remote principal",
                        ));
                    }
                };
                let prior = self.prior_policy();
                let changed = self
                    .access
                    .as_mut()
                    .expect("admitted")
                    .registry
                    .adopt_subtree(target, parent, &new_root, now)
                    .map_err(|e| self.stored_or(e, "Adoption would violate the ownership tree"))?;
                self.transition(&changed, &prior, "principal_adopted");
                let mut out = result("adopt_subtree");
                out.insert("principals".into(), Value::Array(self.summaries(&changed)));
                Ok(Value::Object(out))
            }
            Some("revoke_subtree") => {
                let target = session_id(frame.get("principalId"))
                    .ok_or_else(|| invalid("Invalid remote principal ID"))?;
                let prior = self.prior_policy();
                let changed = self
                    .access
                    .as_mut()
                    .expect("admitted")
                    .registry
                    .revoke(target, now)
                    .map_err(|e| self.stored_or(e, "Remote principal could not be revoked"))?;
                self.transition(&changed, &prior, "principal_revoked");
                let mut out = result("revoke_subtree");
                out.insert(
                    "changedPrincipalIds".into(),
                    changed.iter().map(|p| json!(p.id)).collect(),
                );
                Ok(Value::Object(out))
            }
            Some("issue_enrollment") => {
                let Some(enrollment) = frame.get("enrollment").and_then(Value::as_object) else {
                    return Err(invalid("Unknown remote access control action"));
                };
                let text = |key: &str| enrollment.get(key).and_then(Value::as_str);
                let (Some(name), Some(parent), Some(root), Some(host), Ok(options)) = (
                    text("name"),
                    text("parentSessionId"),
                    text("rootSessionId"),
                    text("remoteHostId"),
                    EnrollmentOptions::read(enrollment),
                ) else {
                    return Err(invalid("Invalid remote enrollment request"));
                };
                if !self
                    .sessions
                    .get(parent)
                    .is_some_and(|e| e.remote.is_none() && root == parent)
                {
                    return Err(deny(
                        "Enrollment parent must be an active local root session",
                    ));
                }
                let template = EnrollmentTemplate {
                    name: name.to_string(),
                    parent_session_id: parent.to_string(),
                    root_session_id: parent.to_string(),
                    remote_host_id: host.to_string(),
                    expires_at: options.expires_at,
                    can_delegate: options.can_delegate.unwrap_or(false),
                    depth: None,
                    max_depth: options.max_depth,
                    max_children: options.max_children,
                };
                let issued = self
                    .access
                    .as_mut()
                    .expect("admitted")
                    .registry
                    .issue_enrollment(template, options.ttl_ms, now)
                    .map_err(|e| match e {
                        AccessError::Invalid(text) => invalid(&text),
                        e => self.stored_or(e, "Invalid remote enrollment request"),
                    })?;
                self.audit(AuditEntry {
                    event: "enrollment_issued",
                    outcome: "allowed",
                    actor_id: Some(parent),
                    target_id: Some(name),
                    remote_host_id: Some(host),
                    reason: Some(&format!("expires:{}", issued.expires_at)),
                    ..AuditEntry::default()
                });
                let mut out = result("issue_enrollment");
                out.insert("enrollmentToken".into(), json!(issued.enrollment_token));
                out.insert("expiresAt".into(), json!(issued.expires_at));
                Ok(Value::Object(out))
            }
            // Not audited: it changes nothing, and a watcher reads every second.
            Some(crate::watch::ACTION) => {
                let mut out = result(crate::watch::ACTION);
                out.insert("snapshot".into(), self.watch_snapshot());
                Ok(Value::Object(out))
            }
            _ => Err(invalid("Unknown remote access control action")),
        }
    }

    /// A remote principal's actions on its own subtree, authenticated by its session
    /// credential and authorized by the policy kernel over the registry.
    fn gateway_control(&mut self, frame: &Map<String, Value>) -> Answer {
        let (Some(request_id), Some(access)) = (
            self.request_id(frame),
            frame.get("access").and_then(Value::as_object),
        ) else {
            return Err(deny("Remote control request was rejected"));
        };
        let Some((credential, id, generation)) = session_credential(access) else {
            return Err(deny("Remote control credential was rejected"));
        };
        let now = self.clock.now_ms();
        let authenticated = u64::try_from(generation).ok().and_then(|generation| {
            self.access.as_ref().and_then(|a| {
                a.registry
                    .authenticate_session(id, generation, credential, now)
                    .ok()
            })
        });
        let Some(parent) = authenticated else {
            self.audit_denied_credential("INVALID_CONTROL_CREDENTIAL");
            return Err(deny("Remote control credential was rejected"));
        };
        let state = self.registry_policy();
        let may = |action: PolicyAction, target: &str, target_generation: Option<u64>| {
            let context = AuthorizationContext {
                actor_generation: Some(parent.generation),
                target_generation,
            };
            policy::authorize(&state, &parent.id, action, target, &context).is_allowed()
        };
        let mut out = Map::new();
        out.insert("type".into(), json!("access_control_result"));
        out.insert("requestId".into(), json!(request_id));
        match frame.get("action").and_then(Value::as_str) {
            Some("inspect_tree") => {
                let target = frame
                    .get("principalId")
                    .and_then(Value::as_str)
                    .unwrap_or(&parent.id);
                if !may(PolicyAction::InspectTree, target, None) {
                    return Err(deny("Remote tree inspection policy denied the request"));
                }
                let visible: Vec<PrincipalRecord> = self
                    .registry()
                    .inspect_subtree(target)
                    .into_iter()
                    .filter(|p| may(PolicyAction::InspectTree, &p.id, None))
                    .collect();
                let principals = self.summaries(&visible);
                self.audit(AuditEntry {
                    event: "tree_inspected",
                    outcome: "allowed",
                    actor_id: Some(&parent.id),
                    target_id: Some(target),
                    remote_host_id: Some(&parent.remote_host_id),
                    generation: Some(parent.generation),
                    visible_count: Some(principals.len()),
                    ..AuditEntry::default()
                });
                out.insert("action".into(), json!("inspect_tree"));
                out.insert("principals".into(), Value::Array(principals));
                Ok(Value::Object(out))
            }
            Some("issue_child_enrollment") => {
                let Some(enrollment) = frame.get("enrollment").and_then(Value::as_object) else {
                    return Err(deny("Remote control action was rejected"));
                };
                let (Some(name), Ok(options)) = (
                    enrollment.get("name").and_then(Value::as_str),
                    EnrollmentOptions::read(enrollment),
                ) else {
                    return Err(deny("Remote delegation request was rejected"));
                };
                if !may(
                    PolicyAction::DelegateChild,
                    &parent.id,
                    Some(parent.generation),
                ) {
                    return Err(deny("Remote delegation policy denied the request"));
                }
                let request = ChildRequest {
                    name: name.to_string(),
                    expires_at: options.expires_at,
                    can_delegate: options.can_delegate.unwrap_or(false),
                    max_depth: options.max_depth,
                    max_children: options.max_children,
                };
                let issued = self
                    .access
                    .as_mut()
                    .expect("authenticated")
                    .registry
                    .issue_child_enrollment(
                        &parent.id,
                        parent.generation,
                        request,
                        options.ttl_ms,
                        now,
                    )
                    .map_err(|e| {
                        self.stored_or(e, "Remote delegation limits denied the request")
                    })?;
                self.audit(AuditEntry {
                    event: "enrollment_issued",
                    outcome: "allowed",
                    actor_id: Some(&parent.id),
                    target_id: Some(name),
                    remote_host_id: Some(&parent.remote_host_id),
                    generation: Some(parent.generation),
                    reason: Some(&format!("delegated-expires:{}", issued.expires_at)),
                    ..AuditEntry::default()
                });
                out.insert("action".into(), json!("issue_child_enrollment"));
                out.insert("enrollmentToken".into(), json!(issued.enrollment_token));
                out.insert("expiresAt".into(), json!(issued.expires_at));
                out.insert("parentSessionId".into(), json!(parent.id));
                Ok(Value::Object(out))
            }
            _ => Err(deny("Remote control action was rejected")),
        }
    }

    fn registry(&self) -> &Registry {
        &self
            .access
            .as_ref()
            .expect("remote access is served")
            .registry
    }

    /// The answer to a registry failure: a store failure is logged and reported as such
    /// (nothing changed); any other is refused with `text`.
    fn stored_or(&self, error: AccessError, text: &str) -> (&'static str, String) {
        match error {
            AccessError::Io(e) => {
                self.log(LogLevel::Error, || {
                    format!("cannot store the access registry: {e}")
                });
                invalid("Remote access state could not be stored; nothing was changed")
            }
            _ => deny(text),
        }
    }

    /// The policy kernel's state over the registry: every principal, and the local root of
    /// each tree as an active `local-public` principal.
    fn registry_policy(&self) -> PolicyState {
        let mut state = PolicyState::new();
        for record in self.registry().principals() {
            state.insert(Principal {
                id: record.id.clone(),
                kind: PrincipalKind::Remote,
                state: match record.state {
                    PrincipalState::Active => PolicyPrincipalState::Active,
                    PrincipalState::Revoked => PolicyPrincipalState::Revoked,
                },
                generation: record.generation,
                policy: PrincipalPolicy::RemoteTree,
                parent_session_id: Some(record.parent_session_id.clone()),
                root_session_id: record.root_session_id.clone(),
            });
            if !state.contains(&record.root_session_id) {
                state.insert(Principal::local(record.root_session_id.clone()));
            }
        }
        state
    }

    /// RemotePrincipalSummary: the record without its credential hash, and whether it is
    /// connected.
    fn summaries(&self, records: &[PrincipalRecord]) -> Vec<Value> {
        records
            .iter()
            .map(|record| {
                let mut summary = record.metadata_json();
                summary.insert(
                    "connected".into(),
                    Value::Bool(self.sessions.contains_key(&record.id)),
                );
                Value::Object(summary)
            })
            .collect()
    }

    /// After a revoke, an adoption or an expiry: each changed principal that is live loses its
    /// session. Those who could see it (by `prior`, the policy before the change) hear
    /// `session_left`, its pending deliveries fail, its asks are cancelled with
    /// `authorization_revoked`, its delivery results are forgotten (a replay is decided anew),
    /// and its connection is closed. Each is audited.
    fn transition(&mut self, changed: &[PrincipalRecord], prior: &Policy, event: &str) {
        let changed_ids: HashSet<&str> = changed.iter().map(|p| p.id.as_str()).collect();
        for principal in changed {
            let id = principal.id.as_str();
            let Some(live) = self.sessions.get(id) else {
                self.audit(AuditEntry {
                    event,
                    outcome: "allowed",
                    actor_id: Some(id),
                    remote_host_id: Some(&principal.remote_host_id),
                    generation: Some(principal.generation),
                    reason: Some("OFFLINE"),
                    ..AuditEntry::default()
                });
                continue;
            };
            let conn = live.conn;
            let former_parent = live.remote.as_ref().map(|r| r.parent.clone());
            let left = super::frame(&json!({ "type": "session_left", "sessionId": id }));
            for (recipient_id, recipient) in &self.sessions {
                if recipient_id != id
                    && !changed_ids.contains(recipient_id.as_str())
                    && agent_intercom_core::scope::same_scope(recipient.scope_id(), live.scope_id())
                    && prior.allows(recipient_id, PolicyAction::Discover, id)
                {
                    self.send(recipient.conn, left.clone());
                }
            }
            self.fail_pending_of(id, conn);
            self.cancel_edges_of(id, CancelReason::AuthorizationRevoked.as_str());
            self.remove_session(id);
            self.forget_results_of(id);
            if let Some(c) = self.conns.get_mut(&conn) {
                c.binding = None;
            }
            self.close(conn);
            self.audit(AuditEntry {
                event,
                outcome: "allowed",
                actor_id: Some(id),
                target_id: former_parent.as_deref(),
                remote_host_id: Some(&principal.remote_host_id),
                generation: Some(principal.generation),
                reason: Some("DISCONNECTED"),
                ..AuditEntry::default()
            });
            self.log(LogLevel::Info, || {
                format!("remote principal {id} disconnected ({event})")
            });
        }
        self.arm_idle();
    }

    /// Forgets the delivery results a session sent or received, in memory and in the store.
    fn forget_results_of(&mut self, id: &str) {
        self.recent.retain(|(from, _), r| from != id && r.to != id);
        self.persist(|s| s.delete_deliveries_of(id));
    }

    /// Revokes the subtrees of the principals that expired, and disconnects them.
    pub(super) fn expire_principals(&mut self) {
        let now = self.clock.now_ms();
        let prior = self.prior_policy();
        let Some(access) = self.access.as_mut() else {
            return;
        };
        match access.registry.expire(now) {
            Ok(changed) => self.transition(&changed, &prior, "principal_expired"),
            Err(e) => self.log(LogLevel::Error, || {
                format!("cannot store expired principals (retried at the next sweep): {e}")
            }),
        }
        self.arm_sweep();
    }

    /// Schedules the next expiry sweep: when the earliest active principal expires, and at
    /// most `remote_expiry_sweep` from now (the wall clock may jump); none while no principal
    /// is active.
    pub(super) fn arm_sweep(&mut self) {
        let Some(next) = self.access.as_ref().and_then(|a| a.registry.next_expiry()) else {
            return;
        };
        let wait = Duration::from_millis((next - self.clock.now_ms()).max(0) as u64)
            .min(self.config.remote_expiry_sweep);
        let at = self.clock.now() + wait;
        if self.sweep.is_some_and(|(due, _)| due <= at) {
            return;
        }
        if let Some(old) = self.sweep.take() {
            self.timers.remove(&old);
        }
        self.timer_seq += 1;
        let key = (at, self.timer_seq);
        self.timers.insert(key, Timer::AccessSweep(self.timer_seq));
        self.sweep = Some(key);
    }

    /// Audits a refused gateway credential (`reason`: MISSING_CREDENTIAL, INVALID_CREDENTIAL
    /// or INVALID_CONTROL_CREDENTIAL); the refused credential itself is never written.
    fn audit_denied_credential(&self, reason: &str) {
        self.audit(AuditEntry {
            event: "remote_registration_denied",
            outcome: "denied",
            reason: Some(reason),
            ..AuditEntry::default()
        });
    }

    /// Audits a remote session's leaving (`reason`: SOCKET_CLOSED or UNREGISTERED).
    pub(super) fn audit_remote_disconnect(&self, id: &str, reason: &str) {
        if let Some(remote) = self.sessions.get(id).and_then(|e| e.remote.as_ref()) {
            self.audit(AuditEntry {
                event: "remote_disconnect",
                outcome: "observed",
                actor_id: Some(id),
                remote_host_id: Some(&remote.host),
                generation: Some(remote.generation),
                reason: Some(reason),
                ..AuditEntry::default()
            });
        }
    }

    /// The audit entry of a send whose candidates the actor may not reach.
    pub(super) fn audit_delivery_denied(&self, actor: &str, candidates: &[&str]) {
        let me = self.sessions.get(actor).and_then(|e| e.remote.as_ref());
        let host = me.map(|r| r.host.as_str()).or_else(|| {
            candidates.iter().find_map(|c| {
                self.sessions
                    .get(*c)
                    .and_then(|e| e.remote.as_ref())
                    .map(|r| r.host.as_str())
            })
        });
        self.audit(AuditEntry {
            event: "remote_delivery_denied",
            outcome: "denied",
            actor_id: Some(actor),
            target_id: (candidates.len() == 1).then(|| candidates[0]),
            remote_host_id: host,
            generation: me.map(|r| r.generation),
            reason: Some("POLICY_DENIED"),
            ..AuditEntry::default()
        });
    }
}
