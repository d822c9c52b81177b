//! Sessions: registration and replacement, the scope index, listing, presence, and what
//! their audience hears when they come and go.

use std::sync::Arc;
use std::time::Instant;

use agent_intercom_core::policy::PolicyAction;
use agent_intercom_core::routing::{self, LifecycleKind, Session};
use agent_intercom_core::scope::ScopeId;
use serde_json::{Value, json};

use super::{ConnId, State, frame, js, text_frame};
use crate::access::AuditEntry;
use crate::config::LogLevel;
use crate::wire::{Register, error_code};

/// A registered session, keyed by its id in `State::sessions`.
pub(super) struct Entry {
    pub(super) conn: ConnId,
    pub(super) generation: u64,
    pub(super) seq: u64,
    pub(super) scope: Option<String>,
    pub(super) runtime_instance_id: Option<String>,
    pub(super) pid: f64,
    pub(super) started_at: f64,
    pub(super) name: Option<String>,
    pub(super) status: Option<String>,
    pub(super) model: String,
    pub(super) cwd: String,
    pub(super) pid_json: serde_json::Number,
    pub(super) started_json: serde_json::Number,
    pub(super) last_activity: Value,
    pub(super) last_presence: Instant,
    /// SessionInfo as JSON text, kept current: it goes into every message, list and event.
    pub(super) info_text: String,
    /// Set for a remote principal (registered through the gateway).
    pub(super) remote: Option<Remote>,
    /// `name` and `status` when a presence update first set them: the Pi broker adds them to
    /// the end of SessionInfo, in that order, and they stay there.
    pub(super) late: Vec<&'static str>,
    /// `trustedLocal`: a local session on the Unix socket (not remote, not over TCP).
    pub(super) trusted: bool,
}

/// What a remote session's SessionInfo carries from its principal record.
#[derive(Clone, Debug)]
pub(super) struct Remote {
    pub(super) host: String,
    pub(super) parent: String,
    pub(super) root: String,
    pub(super) generation: u64,
    pub(super) can_delegate: bool,
    pub(super) depth: u32,
    pub(super) max_depth: u32,
    pub(super) max_children: u32,
}

impl Remote {
    pub(super) fn of(principal: &crate::access::PrincipalRecord) -> Remote {
        Remote {
            host: principal.remote_host_id.clone(),
            parent: principal.parent_session_id.clone(),
            root: principal.root_session_id.clone(),
            generation: principal.generation,
            can_delegate: principal.can_delegate,
            depth: principal.depth,
            max_depth: principal.max_depth,
            max_children: principal.max_children,
        }
    }

    /// The provenance fields, in SessionInfo's order (after `origin`).
    fn write(&self, info: &mut serde_json::Map<String, Value>) {
        info.insert("remoteHostId".into(), Value::String(self.host.clone()));
        info.insert("parentSessionId".into(), Value::String(self.parent.clone()));
        info.insert("rootSessionId".into(), Value::String(self.root.clone()));
        info.insert("generation".into(), json!(self.generation));
        info.insert("canDelegate".into(), Value::Bool(self.can_delegate));
        info.insert("depth".into(), json!(self.depth));
        info.insert("maxDepth".into(), json!(self.max_depth));
        info.insert("maxChildren".into(), json!(self.max_children));
    }

    /// `registered.access`: origin, the provenance fields, and the session credential when
    /// this registration consumed an enrollment.
    pub(super) fn access(&self, credential: Option<&str>) -> Value {
        let mut access = serde_json::Map::new();
        access.insert("origin".into(), Value::String("remote".into()));
        self.write(&mut access);
        if let Some(credential) = credential {
            access.insert(
                "sessionCredential".into(),
                Value::String(credential.to_string()),
            );
        }
        Value::Object(access)
    }
}

impl Entry {
    pub(super) fn refresh(&mut self, id: &str) {
        self.info_text = self.info(id).to_string();
    }

    fn info(&self, id: &str) -> Value {
        let mut info = serde_json::Map::new();
        info.insert("id".into(), Value::String(id.into()));
        let on_time = |key: &str| !self.late.contains(&key);
        if let Some(name) = self.name.as_ref().filter(|_| on_time("name")) {
            info.insert("name".into(), Value::String(name.clone()));
        }
        info.insert("cwd".into(), Value::String(self.cwd.clone()));
        info.insert("model".into(), Value::String(self.model.clone()));
        info.insert("pid".into(), Value::Number(self.pid_json.clone()));
        info.insert("startedAt".into(), Value::Number(self.started_json.clone()));
        info.insert("lastActivity".into(), self.last_activity.clone());
        if let Some(status) = self.status.as_ref().filter(|_| on_time("status")) {
            info.insert("status".into(), Value::String(status.clone()));
        }
        info.insert("trustedLocal".into(), Value::Bool(self.trusted));
        match &self.remote {
            None => {
                info.insert("origin".into(), Value::String("local".into()));
            }
            Some(remote) => {
                info.insert("origin".into(), Value::String("remote".into()));
                remote.write(&mut info);
            }
        }
        for key in &self.late {
            let value = if *key == "name" {
                &self.name
            } else {
                &self.status
            };
            if let Some(value) = value {
                info.insert((*key).into(), Value::String(value.clone()));
            }
        }
        Value::Object(info)
    }

    pub(super) fn scope_id(&self) -> Option<ScopeId<'_>> {
        self.scope.as_deref().and_then(ScopeId::parse)
    }
}
fn number_f64(n: &serde_json::Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

impl State {
    /// A session leaves: left to its audience, pending deliveries failed, asks deferred (or
    /// cancelled with `cancel_reason`).
    pub(super) fn session_gone(&mut self, id: &str, conn: ConnId, cancel_reason: Option<&str>) {
        self.broadcast_about(
            id,
            frame(&json!({ "type": "session_left", "sessionId": id })),
        );
        self.remove_session(id);
        self.fail_pending_of(id, conn);
        match cancel_reason {
            Some(reason) => self.cancel_edges_of(id, reason),
            None => self.defer_edges_of(id),
        }
        self.arm_idle();
    }

    /// Sends `message` to everyone who hears lifecycle events about `subject_id`.
    fn broadcast_about(&self, subject_id: &str, bytes: Arc<Vec<u8>>) {
        let Some(subject) = self.sessions.get(subject_id) else {
            return;
        };
        let subject_scope = subject.scope_id();
        let policy = self.policy();
        for id in self
            .by_scope
            .get(&subject.scope)
            .into_iter()
            .flat_map(|b| b.values())
        {
            let entry = &self.sessions[id];
            let candidate = Session {
                id,
                name: entry.name.as_deref(),
                scope: entry.scope_id(),
            };
            if routing::hears(subject_id, subject_scope, &candidate)
                && policy.allows(id, PolicyAction::Discover, subject_id)
            {
                self.send(entry.conn, bytes.clone());
            }
        }
    }

    pub(super) fn register(&mut self, conn: ConnId, register: Register) {
        let id = match &register.session_id {
            Ok(id) => id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            Err(rejection) => return self.refuse(conn, rejection.code, &rejection.message),
        };
        let record = &register.session;
        let previous = self.sessions.get(&id);
        if previous.is_none() && self.sessions.len() >= self.config.max_sessions {
            return self.refuse(
                conn,
                error_code::TOO_MANY_SESSIONS,
                "Too many registered intercom sessions",
            );
        }
        if let Some(prev) = previous {
            // A remote principal's id is never taken over by a local registration.
            let same_runtime = prev.remote.is_none()
                && (if prev.runtime_instance_id.is_some() || record.runtime_instance_id.is_some() {
                    prev.runtime_instance_id.is_some()
                        && prev.runtime_instance_id == record.runtime_instance_id
                } else {
                    prev.pid == number_f64(&record.pid)
                        && prev.started_at == number_f64(&record.started_at)
                });
            if !same_runtime {
                return self.refuse(
                    conn,
                    error_code::SESSION_ID_IN_USE,
                    &format!(
                        "Session ID \"{id}\" is already active in another local runtime; \
                         close the existing session or use a different session ID"
                    ),
                );
            }
        }
        let mut entry = Some(self.new_entry(conn, &id, &register, None));
        let old = self.sessions.get(&id).map(|p| (p.conn, p.scope.clone()));
        let new_scope = register.scope.clone();
        match old {
            Some((old_conn, old_scope)) => {
                // Replacement: the plan orders old-scope `left` strictly before new-scope `joined`.
                let plan = routing::plan_replacement(
                    &id,
                    old_scope.as_deref().and_then(ScopeId::parse),
                    new_scope.as_deref().and_then(ScopeId::parse),
                );
                for event in plan.events {
                    match event.kind {
                        LifecycleKind::Left => {
                            self.broadcast_about(
                                &id,
                                frame(&json!({ "type": "session_left", "sessionId": id })),
                            );
                            self.fail_pending_of(&id, old_conn);
                            self.defer_edges_of(&id);
                            self.install(&id, entry.take().expect("one left event"));
                            self.registered(conn, &id);
                        }
                        LifecycleKind::Joined => {
                            let joined = format!(
                                r#"{{"type":"session_joined","session":{}}}"#,
                                self.sessions[&id].info_text
                            );
                            self.broadcast_about(&id, text_frame(&joined));
                        }
                    }
                }
                self.close(old_conn);
                self.log(LogLevel::Info, || {
                    format!("session {id} replaced its connection")
                });
            }
            None => {
                let entry = entry.take().expect("installed once");
                self.install_new(conn, &id, entry, None);
            }
        }
        // What waited for this id in the offline queue, before anything newer.
        self.hand_over_queue(&id, conn);
        self.idle_seq += 1; // cancels a pending idle exit
    }

    /// A session's entry, bound to `conn` under a fresh binding generation. A remote session
    /// keeps no runtime identity (its principal is its identity).
    pub(super) fn new_entry(
        &mut self,
        conn: ConnId,
        id: &str,
        register: &Register,
        remote: Option<Remote>,
    ) -> Entry {
        let record = &register.session;
        let generation = self.next_seq;
        self.next_seq += 1;
        let trusted = remote.is_none() && self.config.transport == crate::config::Transport::Unix;
        let mut entry = Entry {
            conn,
            generation,
            seq: generation,
            scope: register.scope.clone(),
            runtime_instance_id: record
                .runtime_instance_id
                .clone()
                .filter(|_| remote.is_none()),
            pid: number_f64(&record.pid),
            started_at: number_f64(&record.started_at),
            name: record.name.clone(),
            status: record.status.clone(),
            model: record.model.clone(),
            cwd: record.cwd.clone(),
            pid_json: record.pid.clone(),
            started_json: record.started_at.clone(),
            last_activity: Value::Number(record.last_activity.clone()),
            last_presence: self.clock.now(),
            info_text: String::new(),
            remote,
            late: Vec::new(),
            trusted,
        };
        entry.refresh(id);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.binding = Some((id.to_string(), generation));
            c.unregistered_since = None;
        }
        entry
    }

    /// Installs a session whose id was free: `registered` (with `extra` members: a remote
    /// session's contract and provenance), then `session_joined` to its audience.
    pub(super) fn install_new(
        &mut self,
        conn: ConnId,
        id: &str,
        entry: Entry,
        extra: Option<[(&str, Value); 2]>,
    ) {
        self.install(id, entry);
        let mut registered = self.registered_frame(id);
        if let (Some(extra), Value::Object(map)) = (extra, &mut registered) {
            for (key, value) in extra {
                map.insert(key.into(), value);
            }
        }
        self.send_value(conn, registered);
        let joined = format!(
            r#"{{"type":"session_joined","session":{}}}"#,
            self.sessions[id].info_text
        );
        self.broadcast_about(id, text_frame(&joined));
        self.log(LogLevel::Info, || format!("session {id} registered"));
        self.idle_seq += 1; // cancels a pending idle exit
    }

    /// Removes a session and its place in its scope's index.
    pub(super) fn remove_session(&mut self, id: &str) {
        let Some(old) = self.sessions.remove(id) else {
            return;
        };
        self.touch_session(id, old.remote.is_some());
        if old.remote.is_some() {
            self.remote_live -= 1;
        }
        if let Some(bucket) = self.by_scope.get_mut(&old.scope) {
            bucket.remove(&old.seq);
            if bucket.is_empty() {
                self.by_scope.remove(&old.scope);
            }
        }
    }

    fn install(&mut self, id: &str, entry: Entry) {
        self.remove_session(id);
        self.touch_session(id, entry.remote.is_some());
        if entry.remote.is_some() {
            self.remote_live += 1;
        }
        self.by_scope
            .entry(entry.scope.clone())
            .or_default()
            .insert(entry.seq, id.to_string());
        self.sessions.insert(id.to_string(), entry);
    }

    fn registered(&self, conn: ConnId, id: &str) {
        self.send_value(conn, self.registered_frame(id));
    }

    fn registered_frame(&self, id: &str) -> Value {
        json!({
            "type": "registered",
            "sessionId": id,
            "protocol": agent_intercom_core::protocol::PROTOCOL_NAME,
            "version": agent_intercom_core::protocol::PROTOCOL_VERSION,
        })
    }

    pub(super) fn list(&self, conn: ConnId, actor: &str, request_id: &str) {
        let Some(me) = self.sessions.get(actor) else {
            return;
        };
        let actor_scope = me.scope_id();
        let policy = self.policy();
        let sessions: Vec<&str> = self
            .by_scope
            .get(&me.scope)
            .into_iter()
            .flat_map(|b| b.values())
            .filter(|id| {
                let e = &self.sessions[*id];
                routing::lists(
                    actor,
                    actor_scope,
                    &Session {
                        id,
                        name: e.name.as_deref(),
                        scope: e.scope_id(),
                    },
                ) && policy.allows(actor, PolicyAction::Discover, id)
            })
            .map(|id| self.sessions[id].info_text.as_str())
            .collect::<Vec<_>>();
        if let Some(remote) = &me.remote
            && sessions.len() < self.sessions.len()
        {
            self.audit(AuditEntry {
                event: "remote_visibility_filtered",
                outcome: "observed",
                actor_id: Some(actor),
                remote_host_id: Some(&remote.host),
                generation: Some(remote.generation),
                visible_count: Some(sessions.len()),
                hidden_count: Some(self.sessions.len() - sessions.len()),
                ..AuditEntry::default()
            });
        }
        let text = format!(
            r#"{{"type":"sessions","requestId":{},"sessions":[{}]}}"#,
            js(request_id),
            sessions.join(",")
        );
        self.send(conn, text_frame(&text));
    }

    pub(super) fn presence(
        &mut self,
        id: &str,
        name: Option<String>,
        status: Option<String>,
        model: Option<String>,
    ) {
        let heartbeat = self.config.presence_heartbeat;
        let Some(e) = self.sessions.get_mut(id) else {
            return;
        };
        let mut changed = false;
        // A remote session's name is its principal's: presence does not rename it.
        if let Some(name) = name
            && e.remote.is_none()
            && e.name.as_deref() != Some(name.as_str())
        {
            if e.name.is_none() && !e.late.contains(&"name") {
                e.late.push("name");
            }
            e.name = Some(name);
            changed = true;
        }
        if let Some(status) = status
            && e.status.as_deref() != Some(status.as_str())
        {
            if e.status.is_none() && !e.late.contains(&"status") {
                e.late.push("status");
            }
            e.status = Some(status);
            changed = true;
        }
        if let Some(model) = model
            && e.model != model
        {
            e.model = model;
            changed = true;
        }
        e.last_activity = json!(self.clock.now_ms());
        let now = self.clock.now();
        if changed || now.duration_since(e.last_presence) >= heartbeat {
            e.last_presence = now;
        }
        e.refresh(id);
        if e.last_presence == now {
            let update = format!(r#"{{"type":"presence_update","session":{}}}"#, e.info_text);
            self.broadcast_about(id, text_frame(&update));
        }
    }
}
