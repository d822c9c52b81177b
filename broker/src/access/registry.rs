//! The registry's operations (Pi's `RemoteAccessRegistry`, with time passed in).
//!
//! Every mutation works on a copy of the state and swaps it in only once the file holds it, so a
//! failed write leaves the registry exactly as it was.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use super::json::{self, ObjectWriter, Value};
use super::secret::{hash_secret, new_secret, secret_matches};
use super::state::{self, Enrollment, Layout, State, StoredPrincipal, Template};
use super::{
    ACCESS_FILE_NAME, ADMIN_CREDENTIAL_VERSION, ADMIN_FILE_NAME, AccessError, ChildRequest,
    DEFAULT_ENROLLMENT_TTL_MS, DEFAULT_PRINCIPAL_TTL_MS, EnrollmentTemplate, Issued, MAX_CHILDREN,
    MAX_DEPTH, MAX_ENROLLMENT_TTL_MS, MIN_ADMIN_TOKEN_LENGTH, PrincipalRecord, PrincipalState,
    files,
};

/// The remote-access registry of one intercom directory.
#[derive(Debug)]
pub struct Registry {
    path: PathBuf,
    admin_path: PathBuf,
    state: State,
}

/// Trimmed, non-empty, at most `max` UTF-16 units, no C0 control or DEL: `Invalid <field>`.
fn require_text(value: &str, field: &str, max: usize) -> Result<String, AccessError> {
    let trimmed = agent_intercom_core::team::js_trim(value);
    if trimmed.is_empty()
        || trimmed.encode_utf16().count() > max
        || trimmed.chars().any(|c| c < ' ' || c == '\u{7f}')
    {
        return Err(AccessError::Invalid(format!("Invalid {field}")));
    }
    Ok(trimmed.to_owned())
}

/// `value` (or `fallback`) within `min..=max`: `Invalid <field>`.
fn bounded(
    value: Option<u32>,
    fallback: u32,
    field: &str,
    min: u32,
    max: u32,
) -> Result<u32, AccessError> {
    let resolved = value.unwrap_or(fallback);
    if resolved < min || resolved > max {
        return Err(AccessError::Invalid(format!("Invalid {field}")));
    }
    Ok(resolved)
}

fn invalid(message: &str) -> AccessError {
    AccessError::Invalid(message.to_owned())
}

/// The next generation, kept within what a JavaScript number holds exactly.
fn bumped(generation: u64) -> Option<u64> {
    generation
        .checked_add(1)
        .filter(|&g| g <= json::MAX_SAFE_INTEGER as u64)
}

/// The admin token `broker-admin.json` holds: `{version: 1, adminToken}` with a token of at
/// least [`MIN_ADMIN_TOKEN_LENGTH`] characters, else `None`; text that is not JSON is an error
/// naming the file.
fn admin_token_in(text: &str, path: &Path) -> Result<Option<String>, AccessError> {
    let parsed = json::parse(text).map_err(|e| {
        AccessError::Invalid(format!(
            "Invalid remote access admin credential at {}: {e}",
            path.display()
        ))
    })?;
    Ok(parsed
        .as_object()
        .filter(|o| o.get("version").and_then(Value::as_integer) == Some(ADMIN_CREDENTIAL_VERSION))
        .and_then(|o| o.get("adminToken"))
        .and_then(Value::as_str)
        .filter(|t| t.encode_utf16().count() >= MIN_ADMIN_TOKEN_LENGTH)
        .map(str::to_owned))
}

/// The admin token the broker of an intercom directory accepts, read from its
/// `broker-admin.json` (`path`) as the broker reads it: never through a symbolic link, only a
/// regular file. `Ok(None)` when there is no file or no valid token in it (a broker starting
/// there writes one).
pub fn read_admin_token(path: &Path) -> Result<Option<String>, AccessError> {
    match files::read_text(path)? {
        None => Ok(None),
        Some((text, _)) => admin_token_in(&text, path),
    }
}

impl Registry {
    /// Loads `<intercom_dir>/broker-access.json`. Absent: an empty registry. A version-1 file is
    /// migrated in memory (written as version 2 at the next change). Malformed, a symlink, not a
    /// regular file, or unreadable: an error naming the file, which is left untouched.
    pub fn open(intercom_dir: &Path) -> Result<Registry, AccessError> {
        let path = intercom_dir.join(ACCESS_FILE_NAME);
        let state = match files::read_text(&path)? {
            None => State::empty(),
            Some((text, _)) => state::parse(&text).map_err(|why| {
                AccessError::Invalid(format!(
                    "Invalid remote access registry at {}: {why}",
                    path.display()
                ))
            })?,
        };
        Ok(Registry {
            admin_path: intercom_dir.join(ADMIN_FILE_NAME),
            path,
            state,
        })
    }

    /// The registry file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The admin credential file's path.
    pub fn admin_credential_path(&self) -> &Path {
        &self.admin_path
    }

    /// The registry as the file holds it (hashes only, never a secret).
    pub fn snapshot_json(&self) -> String {
        self.state.to_json()
    }

    /// Writes `next` and only then makes it the state. On error the state stays as it was (if
    /// the error came from the directory fsync after the rename, the file already holds `next`;
    /// the next successful write replaces it with the state again).
    fn commit(&mut self, next: State) -> Result<(), AccessError> {
        files::write_durable(&self.path, next.to_json().as_bytes())?;
        self.state = next;
        Ok(())
    }

    /// Pi's start-up step: if `broker-admin.json` holds `{version: 1, adminToken}` with a token
    /// of at least 32 characters, its hash is recorded (persisted only if it changed) and the file
    /// set to 0600; otherwise a new token is drawn, written there durably and its hash recorded.
    /// A symlink or a non-file there, an unreadable file, or text that is not JSON is an error and
    /// the file is left alone.
    pub fn ensure_admin_credential(&mut self) -> Result<(), AccessError> {
        if let Some((text, file)) = files::read_text(&self.admin_path)?
            && let Some(token) = admin_token_in(&text, &self.admin_path)?
        {
            let hash = hash_secret(&token);
            if self.state.admin_hash.as_deref() != Some(hash.as_str()) {
                let mut next = self.state.clone();
                next.admin_hash = Some(hash);
                self.commit(next)?;
            }
            files::restrict(&file)?;
            return Ok(());
        }
        let token = new_secret()?;
        let mut text = String::new();
        let mut w = ObjectWriter::new(&mut text);
        w.integer("version", ADMIN_CREDENTIAL_VERSION);
        w.string("adminToken", &token);
        w.finish();
        files::write_durable(&self.admin_path, text.as_bytes())?;
        let mut next = self.state.clone();
        next.admin_hash = Some(hash_secret(&token));
        self.commit(next)
    }

    /// Whether `token` is the admin token (constant-time over the digests).
    pub fn authenticate_admin(&self, token: &str) -> bool {
        self.state
            .admin_hash
            .as_deref()
            .is_some_and(|hash| secret_matches(token, hash))
    }

    /// Issues a one-use enrollment token for a new principal (the administrator's
    /// `issue_enrollment`). `ttl_ms` defaults to 10 minutes and may not exceed 24 hours. Expired
    /// tokens are pruned in the same write.
    pub fn issue_enrollment(
        &mut self,
        t: EnrollmentTemplate,
        ttl_ms: Option<i64>,
        now: i64,
    ) -> Result<Issued, AccessError> {
        let ttl = ttl_ms.unwrap_or(DEFAULT_ENROLLMENT_TTL_MS);
        if ttl <= 0 || ttl > MAX_ENROLLMENT_TTL_MS {
            return Err(invalid("Invalid enrollment TTL"));
        }
        let expires_at = now.saturating_add(ttl);
        let principal_expires_at = t
            .expires_at
            .unwrap_or(now.saturating_add(DEFAULT_PRINCIPAL_TTL_MS));
        if !json::is_safe_integer(principal_expires_at) || principal_expires_at <= now {
            return Err(invalid("Invalid principal expiry"));
        }
        let depth = bounded(t.depth, 1, "principal depth", 1, MAX_DEPTH)?;
        let max_depth = bounded(
            t.max_depth,
            depth,
            "maximum delegation depth",
            depth,
            MAX_DEPTH,
        )?;
        let max_children = bounded(t.max_children, 0, "maximum child count", 0, MAX_CHILDREN)?;
        if t.can_delegate && (max_depth <= depth || max_children == 0) {
            return Err(invalid(
                "Delegating principals require remaining depth and child capacity",
            ));
        }
        let template = Template {
            name: require_text(&t.name, "principal name", 256)?,
            parent_session_id: require_text(&t.parent_session_id, "parent session ID", 512)?,
            root_session_id: require_text(&t.root_session_id, "root session ID", 512)?,
            remote_host_id: require_text(&t.remote_host_id, "remote host ID", 256)?,
            expires_at: principal_expires_at,
            can_delegate: t.can_delegate,
            depth,
            max_depth,
            max_children,
            layout: Layout::default(),
        };
        let enrollment_token = new_secret()?;
        let token_hash = hash_secret(&enrollment_token);
        let mut next = self.state.clone();
        next.enrollments.retain(|e| e.expires_at > now);
        next.enrollments.insert(
            token_hash.clone(),
            Enrollment {
                token_hash,
                template,
                expires_at,
                created_at: now,
                layout: Layout::default(),
            },
        );
        self.commit(next)?;
        Ok(Issued {
            enrollment_token,
            expires_at,
        })
    }

    /// Issues a child enrollment under an active, delegating principal (the gateway's
    /// `issue_child_enrollment`). The child's place in the tree comes from the parent; its limits
    /// may narrow the parent's, never widen them; active children plus unexpired pending
    /// enrollments may not exceed the parent's `max_children`.
    pub fn issue_child_enrollment(
        &mut self,
        parent_id: &str,
        parent_generation: u64,
        r: ChildRequest,
        ttl_ms: Option<i64>,
        now: i64,
    ) -> Result<Issued, AccessError> {
        let parent = self
            .validate_principal(parent_id, parent_generation, now)?
            .clone();
        if !parent.can_delegate {
            return Err(AccessError::InvalidEnrollment(
                "Parent principal cannot delegate children",
            ));
        }
        let active_children = self
            .principals()
            .filter(|p| {
                p.parent_session_id == parent.id
                    && p.state == PrincipalState::Active
                    && p.expires_at > now
            })
            .count();
        let pending_children = self
            .state
            .enrollments
            .values()
            .filter(|e| e.template.parent_session_id == parent.id && e.expires_at > now)
            .count();
        if active_children + pending_children >= parent.max_children as usize {
            return Err(AccessError::InvalidEnrollment(
                "Parent child limit is exhausted",
            ));
        }
        let depth = parent.depth + 1;
        if depth > parent.max_depth {
            return Err(AccessError::InvalidEnrollment(
                "Parent delegation depth is exhausted",
            ));
        }
        let max_depth = bounded(
            r.max_depth,
            depth,
            "child maximum depth",
            depth,
            parent.max_depth,
        )?;
        let max_children = bounded(
            r.max_children,
            0,
            "child maximum count",
            0,
            parent.max_children,
        )?;
        if r.can_delegate && (max_depth <= depth || max_children == 0) {
            return Err(invalid(
                "Delegating child requires remaining depth and child capacity",
            ));
        }
        let expires_at = r.expires_at.unwrap_or(parent.expires_at);
        if !json::is_safe_integer(expires_at) || expires_at <= now || expires_at > parent.expires_at
        {
            return Err(invalid("Child expiry must not exceed the parent expiry"));
        }
        self.issue_enrollment(
            EnrollmentTemplate {
                name: r.name,
                parent_session_id: parent.id,
                root_session_id: parent.root_session_id,
                remote_host_id: parent.remote_host_id,
                expires_at: Some(expires_at),
                can_delegate: r.can_delegate,
                depth: Some(depth),
                max_depth: Some(max_depth),
                max_children: Some(max_children),
            },
            ttl_ms,
            now,
        )
    }

    /// Consumes an enrollment token once: the new principal (generation 1, broker-assigned UUID)
    /// and its session credential, shown this once. An expired token is removed (durably) and
    /// refused; so is a token whose principal would already be expired or whose parent principal
    /// is no longer active.
    pub fn consume_enrollment(
        &mut self,
        token: &str,
        now: i64,
    ) -> Result<(PrincipalRecord, String), AccessError> {
        let token_hash = hash_secret(token);
        let Some(enrollment) = self.state.enrollments.get(&token_hash).cloned() else {
            return Err(AccessError::InvalidEnrollment(
                "Enrollment credential is invalid or already consumed",
            ));
        };
        let mut next = self.state.clone();
        next.enrollments.remove(&token_hash);
        let t = &enrollment.template;
        if enrollment.expires_at <= now || t.expires_at <= now {
            self.commit(next)?;
            return Err(AccessError::InvalidEnrollment(
                "Enrollment credential has expired",
            ));
        }
        let parent_gone = self
            .state
            .principals
            .get(&t.parent_session_id)
            .is_some_and(|p| {
                p.record.state != PrincipalState::Active || p.record.expires_at <= now
            });
        if parent_gone {
            self.commit(next)?;
            return Err(AccessError::InvalidEnrollment(
                "Enrollment parent is no longer active",
            ));
        }
        let session_credential = new_secret()?;
        let record = PrincipalRecord {
            id: uuid::Uuid::new_v4().to_string(),
            name: t.name.clone(),
            credential_hash: hash_secret(&session_credential),
            parent_session_id: t.parent_session_id.clone(),
            root_session_id: t.root_session_id.clone(),
            remote_host_id: t.remote_host_id.clone(),
            generation: 1,
            can_delegate: t.can_delegate,
            depth: t.depth,
            max_depth: t.max_depth,
            max_children: t.max_children,
            state: PrincipalState::Active,
            expires_at: t.expires_at,
            created_at: now,
            updated_at: now,
        };
        next.principals.insert(
            record.id.clone(),
            StoredPrincipal {
                record: record.clone(),
                layout: Layout::default(),
            },
        );
        self.commit(next)?;
        Ok((record, session_credential))
    }

    /// A reconnect: the exact broker-assigned id, its credential and current generation.
    pub fn authenticate_session(
        &self,
        id: &str,
        generation: u64,
        credential: &str,
        now: i64,
    ) -> Result<PrincipalRecord, AccessError> {
        match self.state.principals.get(id) {
            Some(p) if secret_matches(credential, &p.record.credential_hash) => {}
            _ => {
                return Err(AccessError::InvalidCredential(
                    "Session credential is invalid",
                ));
            }
        }
        self.validate_principal(id, generation, now).cloned()
    }

    /// Whether a principal may act now: it exists, is active, unexpired and at `generation`
    /// (checked in that order).
    pub fn validate_principal(
        &self,
        id: &str,
        generation: u64,
        now: i64,
    ) -> Result<&PrincipalRecord, AccessError> {
        let Some(p) = self.state.principals.get(id) else {
            return Err(AccessError::InvalidCredential(
                "Remote principal does not exist",
            ));
        };
        let p = &p.record;
        if p.state != PrincipalState::Active {
            return Err(AccessError::RevokedCredential);
        }
        if p.expires_at <= now {
            return Err(AccessError::ExpiredCredential);
        }
        if p.generation != generation {
            return Err(AccessError::StaleGeneration);
        }
        Ok(p)
    }

    /// A principal by id.
    pub fn get(&self, id: &str) -> Option<&PrincipalRecord> {
        self.state.principals.get(id).map(|p| &p.record)
    }

    /// Every principal, in the order the Pi broker lists them (JavaScript property order).
    pub fn principals(&self) -> impl Iterator<Item = &PrincipalRecord> {
        self.state.principals.values().map(|p| &p.record)
    }

    /// How many enrollment tokens are stored (expired ones included until pruned).
    pub fn enrollment_count(&self) -> usize {
        self.state.enrollments.len()
    }

    /// The earliest expiry among active principals, for scheduling the sweep.
    pub fn next_expiry(&self) -> Option<i64> {
        self.principals()
            .filter(|p| p.state == PrincipalState::Active)
            .map(|p| p.expires_at)
            .min()
    }

    /// Ids of `root` and its descendants, breadth first, children in registry order.
    fn subtree_ids(state: &State, root: &str) -> Vec<String> {
        let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
        for p in state.principals.values() {
            children
                .entry(p.record.parent_session_id.as_str())
                .or_default()
                .push(p.record.id.as_str());
        }
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([root]);
        while let Some(id) = queue.pop_front() {
            if !seen.insert(id) || state.principals.get(id).is_none() {
                continue;
            }
            out.push(id.to_owned());
            queue.extend(children.get(id).into_iter().flatten());
        }
        out
    }

    /// `id` and its descendants, breadth first (empty if `id` is unknown).
    pub fn inspect_subtree(&self, id: &str) -> Vec<PrincipalRecord> {
        Self::subtree_ids(&self.state, id)
            .iter()
            .filter_map(|id| self.get(id).cloned())
            .collect()
    }

    /// Moves a subtree under `new_parent` in the tree rooted at `new_root`: every principal in it
    /// takes the new root and a new generation (fencing old credentials), and pending enrollments
    /// issued by any of them are cancelled. Refuses an unknown principal and a cycle.
    pub fn adopt_subtree(
        &mut self,
        id: &str,
        new_parent: &str,
        new_root: &str,
        now: i64,
    ) -> Result<Vec<PrincipalRecord>, AccessError> {
        const CYCLE: &str = "Adoption would create an ownership cycle";
        if self.state.principals.get(id).is_none() {
            return Err(invalid("Unknown adopted principal"));
        }
        if id == new_parent {
            return Err(invalid(CYCLE));
        }
        let new_parent = require_text(new_parent, "new parent session ID", 512)?;
        let new_root = require_text(new_root, "new root session ID", 512)?;
        let mut seen = HashSet::new();
        let mut ancestor = self.state.principals.get(&new_parent);
        while let Some(a) = ancestor {
            if a.record.id == id {
                return Err(invalid(CYCLE));
            }
            if !seen.insert(a.record.id.as_str()) {
                break;
            }
            ancestor = self.state.principals.get(&a.record.parent_session_id);
        }
        let ids = Self::subtree_ids(&self.state, id);
        let mut next = self.state.clone();
        for (i, changed) in ids.iter().enumerate() {
            let Some(p) = next.principals.get_mut(changed) else {
                continue;
            };
            let r = &mut p.record;
            if i == 0 {
                r.parent_session_id = new_parent.clone();
            }
            r.root_session_id = new_root.clone();
            r.generation =
                bumped(r.generation).ok_or_else(|| invalid("Principal generation is exhausted"))?;
            r.updated_at = now;
        }
        let moved: HashSet<&str> = ids.iter().map(String::as_str).collect();
        next.enrollments
            .retain(|e| !moved.contains(e.template.parent_session_id.as_str()));
        let changed = ids
            .iter()
            .filter_map(|id| next.principals.get(id).map(|p| p.record.clone()))
            .collect();
        self.commit(next)?;
        Ok(changed)
    }

    /// Revokes `id` and its subtree on `state`: each member turns revoked with a new generation.
    fn revoke_in(state: &mut State, id: &str, now: i64) -> Vec<PrincipalRecord> {
        let ids = Self::subtree_ids(state, id);
        let mut changed = Vec::with_capacity(ids.len());
        for id in &ids {
            if let Some(p) = state.principals.get_mut(id) {
                let r = &mut p.record;
                r.state = PrincipalState::Revoked;
                // At the (unreachable) ceiling the generation stays; the state alone refuses it.
                r.generation = bumped(r.generation).unwrap_or(r.generation);
                r.updated_at = now;
                changed.push(r.clone());
            }
        }
        changed
    }

    /// Revokes a principal and its whole subtree (each takes a new generation, revoked ones
    /// again). Unknown: nothing changes and nothing is written.
    pub fn revoke(&mut self, id: &str, now: i64) -> Result<Vec<PrincipalRecord>, AccessError> {
        let mut next = self.state.clone();
        let changed = Self::revoke_in(&mut next, id, now);
        if !changed.is_empty() {
            self.commit(next)?;
        }
        Ok(changed)
    }

    /// Revokes every active principal whose expiry has passed, with its subtree, shallowest first;
    /// returns each changed principal once, in the order first changed, as it finally is. One
    /// write for the whole sweep, none if nothing expired.
    pub fn expire(&mut self, now: i64) -> Result<Vec<PrincipalRecord>, AccessError> {
        let mut roots: Vec<(u32, String)> = self
            .principals()
            .filter(|p| p.state == PrincipalState::Active && p.expires_at <= now)
            .map(|p| (p.depth, p.id.clone()))
            .collect();
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        roots.sort_by_key(|(depth, _)| *depth); // stable, as Array.prototype.sort
        let mut next = self.state.clone();
        let mut order: Vec<String> = Vec::new();
        let mut latest: HashMap<String, PrincipalRecord> = HashMap::new();
        for (_, id) in roots {
            if latest.contains_key(&id) {
                continue;
            }
            for record in Self::revoke_in(&mut next, &id, now) {
                if !latest.contains_key(&record.id) {
                    order.push(record.id.clone());
                }
                latest.insert(record.id.clone(), record);
            }
        }
        self.commit(next)?;
        Ok(order
            .into_iter()
            .filter_map(|id| latest.remove(&id))
            .collect())
    }
}
