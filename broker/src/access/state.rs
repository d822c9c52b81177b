//! `broker-access.json`: what it holds, how a loaded file is checked (Pi's `parseState`, a little
//! stricter), and how it is written back byte for byte as the Pi broker writes it.
//!
//! The Pi broker keeps loaded records as it found them and only adds what a newer version needs
//! (a version-1 principal gains `canDelegate`, `depth`, `maxDepth`, `maxChildren` after its own
//! keys); unknown members ride along. So each record remembers the member order it was loaded
//! with and any members this broker does not know, and is written in that order.

use std::collections::HashMap;

use super::json::{self, Object, ObjectWriter, Value};
use super::{MAX_CHILDREN, MAX_DEPTH, PRINCIPAL_POLICY, PrincipalRecord, PrincipalState};

/// A principal's members in the order a fresh record has them.
pub(crate) const PRINCIPAL_KEYS: &[&str] = &[
    "id",
    "name",
    "credentialHash",
    "parentSessionId",
    "rootSessionId",
    "remoteHostId",
    "generation",
    "policy",
    "canDelegate",
    "depth",
    "maxDepth",
    "maxChildren",
    "state",
    "expiresAt",
    "createdAt",
    "updatedAt",
];
/// What a loaded principal gains, in this order, when it lacks them.
const PRINCIPAL_ADDED_KEYS: &[&str] =
    &["policy", "canDelegate", "depth", "maxDepth", "maxChildren"];
const ENROLLMENT_KEYS: &[&str] = &["tokenHash", "template", "expiresAt", "createdAt"];
const TEMPLATE_KEYS: &[&str] = &[
    "name",
    "parentSessionId",
    "rootSessionId",
    "remoteHostId",
    "expiresAt",
    "canDelegate",
    "depth",
    "maxDepth",
    "maxChildren",
];
const TEMPLATE_ADDED_KEYS: &[&str] = &["canDelegate", "depth", "maxDepth", "maxChildren"];

/// Member order of a loaded record: `None` for the order a fresh record has; otherwise each key
/// with `None` for a member this broker knows (its value lives in the typed record) or the value
/// of a member it does not.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Layout(Option<Vec<(String, Option<Value>)>>);

impl Layout {
    /// The layout of `object` once it has gained the `added` keys it lacks.
    fn of(object: &Object, known: &[&str], added: &[&str]) -> Layout {
        let mut slots: Vec<(String, Option<Value>)> = object
            .iter()
            .map(|(k, v)| {
                let value = (!known.contains(&k)).then(|| v.clone());
                (k.to_owned(), value)
            })
            .collect();
        for key in added {
            if object.get(key).is_none() {
                slots.push(((*key).to_owned(), None));
            }
        }
        let canonical = slots.len() == known.len()
            && slots
                .iter()
                .zip(known)
                .all(|((k, v), want)| v.is_none() && k == want);
        Layout((!canonical).then_some(slots))
    }

    fn write(
        &self,
        out: &mut String,
        known: &[&str],
        mut field: impl FnMut(&mut ObjectWriter, &str),
    ) {
        let mut w = ObjectWriter::new(out);
        match &self.0 {
            None => known.iter().for_each(|key| field(&mut w, key)),
            Some(slots) => {
                for (key, extra) in slots {
                    match extra {
                        Some(value) => w.value(key, value),
                        None => field(&mut w, key),
                    }
                }
            }
        }
        w.finish();
    }
}

/// A map keyed as a JavaScript object is: array-index keys first, then insertion order.
#[derive(Clone, Debug)]
pub(crate) struct Entries<V> {
    items: Vec<(String, V)>,
    index: HashMap<String, usize>,
}

impl<V> Default for Entries<V> {
    fn default() -> Self {
        Entries {
            items: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<V> Entries<V> {
    fn reindex(&mut self) {
        self.index = self
            .items
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (k.clone(), i))
            .collect();
    }

    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        self.index.get(key).map(|&i| &self.items[i].1)
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.index.get(key).map(|&i| &mut self.items[i].1)
    }

    pub(crate) fn insert(&mut self, key: String, value: V) {
        if let Some(&i) = self.index.get(&key) {
            self.items[i].1 = value;
            return;
        }
        match json::array_index(&key) {
            // Array-index keys go before all others, in numeric order (rare: ids are UUIDs).
            Some(n) => {
                let at = self
                    .items
                    .iter()
                    .position(|(k, _)| json::array_index(k).is_none_or(|m| m > n))
                    .unwrap_or(self.items.len());
                self.items.insert(at, (key, value));
                self.reindex();
            }
            None => {
                self.index.insert(key.clone(), self.items.len());
                self.items.push((key, value));
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.index.get(key).copied()?;
        let (_, value) = self.items.remove(i);
        self.reindex();
        Some(value)
    }

    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        let before = self.items.len();
        self.items.retain(|(_, v)| keep(v));
        if self.items.len() != before {
            self.reindex();
        }
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.items.iter().map(|(_, v)| v)
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

#[derive(Clone, Debug)]
pub(crate) struct StoredPrincipal {
    pub(crate) record: PrincipalRecord,
    pub(crate) layout: Layout,
}

/// An enrollment's template, fully resolved (Pi's normalized `EnrollmentTemplate`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Template {
    pub(crate) name: String,
    pub(crate) parent_session_id: String,
    pub(crate) root_session_id: String,
    pub(crate) remote_host_id: String,
    pub(crate) expires_at: i64,
    pub(crate) can_delegate: bool,
    pub(crate) depth: u32,
    pub(crate) max_depth: u32,
    pub(crate) max_children: u32,
    pub(crate) layout: Layout,
}

#[derive(Clone, Debug)]
pub(crate) struct Enrollment {
    pub(crate) token_hash: String,
    pub(crate) template: Template,
    pub(crate) expires_at: i64,
    pub(crate) created_at: i64,
    pub(crate) layout: Layout,
}

/// Where `adminCredentialHash` is written: second if the loaded file had it, else after
/// `enrollments` (the Pi broker adds it to an in-memory object that already has the others).
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(crate) admin_hash: Option<String>,
    pub(crate) admin_hash_loaded: bool,
    pub(crate) principals: Entries<StoredPrincipal>,
    pub(crate) enrollments: Entries<Enrollment>,
}

impl State {
    pub(crate) fn empty() -> State {
        State {
            admin_hash: None,
            admin_hash_loaded: false,
            principals: Entries::default(),
            enrollments: Entries::default(),
        }
    }

    /// The file text, exactly as `JSON.stringify` of the Pi broker's state gives it.
    pub(crate) fn to_json(&self) -> String {
        let mut out = String::new();
        let mut w = ObjectWriter::new(&mut out);
        w.integer("version", super::STATE_VERSION);
        let admin = |w: &mut ObjectWriter| {
            if let Some(hash) = &self.admin_hash {
                w.string("adminCredentialHash", hash);
            }
        };
        if self.admin_hash_loaded {
            admin(&mut w);
        }
        {
            let buf = w.key("principals");
            let mut members = ObjectWriter::new(buf);
            for (id, p) in &self.principals.items {
                let buf = members.key(id);
                p.layout.write(buf, PRINCIPAL_KEYS, |w, key| {
                    write_principal_field(w, key, &p.record)
                });
            }
            members.finish();
        }
        {
            let buf = w.key("enrollments");
            let mut members = ObjectWriter::new(buf);
            for (hash, e) in &self.enrollments.items {
                let buf = members.key(hash);
                write_enrollment(buf, e);
            }
            members.finish();
        }
        if !self.admin_hash_loaded {
            admin(&mut w);
        }
        w.finish();
        out
    }
}

pub(crate) fn write_principal_field(w: &mut ObjectWriter, key: &str, p: &PrincipalRecord) {
    match key {
        "id" => w.string(key, &p.id),
        "name" => w.string(key, &p.name),
        "credentialHash" => w.string(key, &p.credential_hash),
        "parentSessionId" => w.string(key, &p.parent_session_id),
        "rootSessionId" => w.string(key, &p.root_session_id),
        "remoteHostId" => w.string(key, &p.remote_host_id),
        "generation" => w.integer(key, p.generation as i64),
        "policy" => w.string(key, PRINCIPAL_POLICY),
        "canDelegate" => w.bool(key, p.can_delegate),
        "depth" => w.integer(key, p.depth.into()),
        "maxDepth" => w.integer(key, p.max_depth.into()),
        "maxChildren" => w.integer(key, p.max_children.into()),
        "state" => w.string(key, p.state.as_str()),
        "expiresAt" => w.integer(key, p.expires_at),
        "createdAt" => w.integer(key, p.created_at),
        "updatedAt" => w.integer(key, p.updated_at),
        _ => {}
    }
}

fn write_template_field(w: &mut ObjectWriter, key: &str, t: &Template) {
    match key {
        "name" => w.string(key, &t.name),
        "parentSessionId" => w.string(key, &t.parent_session_id),
        "rootSessionId" => w.string(key, &t.root_session_id),
        "remoteHostId" => w.string(key, &t.remote_host_id),
        "expiresAt" => w.integer(key, t.expires_at),
        "canDelegate" => w.bool(key, t.can_delegate),
        "depth" => w.integer(key, t.depth.into()),
        "maxDepth" => w.integer(key, t.max_depth.into()),
        "maxChildren" => w.integer(key, t.max_children.into()),
        _ => {}
    }
}

fn write_enrollment(out: &mut String, e: &Enrollment) {
    e.layout.write(out, ENROLLMENT_KEYS, |w, key| match key {
        "tokenHash" => w.string(key, &e.token_hash),
        "template" => {
            let buf = w.key(key);
            e.template.layout.write(buf, TEMPLATE_KEYS, |w, key| {
                write_template_field(w, key, &e.template)
            });
        }
        "expiresAt" => w.integer(key, e.expires_at),
        "createdAt" => w.integer(key, e.created_at),
        _ => {}
    });
}

/// A JavaScript safe integer, or `None` for anything else (missing, a string, 1.5, 2^60).
fn safe_integer(value: Option<&Value>) -> Option<i64> {
    value
        .and_then(Value::as_integer)
        .filter(|&n| json::is_safe_integer(n))
}

/// Pi's `boundedInteger` over a loaded member: absent or `null` takes the fallback.
fn bounded(
    value: Option<&Value>,
    fallback: u32,
    field: &str,
    min: u32,
    max: u32,
) -> Result<u32, String> {
    let resolved = match value {
        None | Some(Value::Null) => i64::from(fallback),
        Some(v) => safe_integer(Some(v)).ok_or_else(|| format!("Invalid {field}"))?,
    };
    if resolved < i64::from(min) || resolved > i64::from(max) {
        return Err(format!("Invalid {field}"));
    }
    Ok(resolved as u32)
}

fn string_member(object: &Object, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn parse_principal(id: &str, value: &Value) -> Result<StoredPrincipal, String> {
    let invalid = || format!("invalid principal {id}");
    let p = value.as_object().ok_or_else(invalid)?;
    if p.get("id").and_then(Value::as_str) != Some(id) {
        return Err(invalid());
    }
    let text = |key| string_member(p, key).ok_or_else(invalid);
    let name = text("name")?;
    let credential_hash = text("credentialHash")?;
    let parent_session_id = text("parentSessionId")?;
    let root_session_id = text("rootSessionId")?;
    let remote_host_id = text("remoteHostId")?;
    let generation = safe_integer(p.get("generation"))
        .and_then(|g| u64::try_from(g).ok())
        .ok_or_else(invalid)?;
    let state = match p.get("state").and_then(Value::as_str) {
        Some("active") => PrincipalState::Active,
        Some("revoked") => PrincipalState::Revoked,
        _ => return Err(invalid()),
    };
    let time = |key| safe_integer(p.get(key)).ok_or_else(invalid);
    let expires_at = time("expiresAt")?;
    let created_at = time("createdAt")?;
    let updated_at = time("updatedAt")?;
    let depth = bounded(p.get("depth"), 1, "principal depth", 1, MAX_DEPTH)?;
    let max_depth = bounded(
        p.get("maxDepth"),
        depth,
        "maximum delegation depth",
        depth,
        MAX_DEPTH,
    )?;
    let max_children = bounded(
        p.get("maxChildren"),
        0,
        "maximum child count",
        0,
        MAX_CHILDREN,
    )?;
    Ok(StoredPrincipal {
        record: PrincipalRecord {
            id: id.to_owned(),
            name,
            credential_hash,
            parent_session_id,
            root_session_id,
            remote_host_id,
            generation,
            can_delegate: matches!(p.get("canDelegate"), Some(Value::Bool(true))),
            depth,
            max_depth,
            max_children,
            state,
            expires_at,
            created_at,
            updated_at,
        },
        layout: Layout::of(p, PRINCIPAL_KEYS, PRINCIPAL_ADDED_KEYS),
    })
}

fn parse_enrollment(hash: &str, value: &Value) -> Result<Enrollment, String> {
    let invalid = || format!("invalid enrollment {hash}");
    let e = value.as_object().ok_or_else(invalid)?;
    let t = e
        .get("template")
        .and_then(Value::as_object)
        .ok_or_else(invalid)?;
    let token_hash = string_member(e, "tokenHash").ok_or_else(invalid)?;
    let expires_at = safe_integer(e.get("expiresAt")).ok_or_else(invalid)?;
    let created_at = safe_integer(e.get("createdAt")).ok_or_else(invalid)?;
    let text = |key| string_member(t, key).ok_or_else(invalid);
    let name = text("name")?;
    let parent_session_id = text("parentSessionId")?;
    let root_session_id = text("rootSessionId")?;
    let remote_host_id = text("remoteHostId")?;
    let principal_expires_at = safe_integer(t.get("expiresAt")).ok_or_else(invalid)?;
    let depth = bounded(t.get("depth"), 1, "enrollment depth", 1, MAX_DEPTH)?;
    let max_depth = bounded(
        t.get("maxDepth"),
        depth,
        "enrollment maximum depth",
        depth,
        MAX_DEPTH,
    )?;
    let max_children = bounded(
        t.get("maxChildren"),
        0,
        "enrollment maximum children",
        0,
        MAX_CHILDREN,
    )?;
    Ok(Enrollment {
        token_hash,
        template: Template {
            name,
            parent_session_id,
            root_session_id,
            remote_host_id,
            expires_at: principal_expires_at,
            can_delegate: matches!(t.get("canDelegate"), Some(Value::Bool(true))),
            depth,
            max_depth,
            max_children,
            layout: Layout::of(t, TEMPLATE_KEYS, TEMPLATE_ADDED_KEYS),
        },
        expires_at,
        created_at,
        layout: Layout::of(e, ENROLLMENT_KEYS, &[]),
    })
}

/// Checks a loaded file as Pi's `parseState` does (and a little more: numbers must be integers,
/// every member an enrollment is consumed from must be there). The message is the reason only;
/// the caller names the file.
pub(crate) fn parse(text: &str) -> Result<State, String> {
    let raw = json::parse(text).map_err(|e| e.to_string())?;
    let top = raw.as_object().ok_or("expected object")?;
    match top.get("version") {
        Some(v) if matches!(v.as_integer(), Some(1 | 2)) => {}
        Some(Value::Number(n)) => {
            let mut shown = String::new();
            json::write_number(&mut shown, *n);
            return Err(format!(
                "unsupported version {shown} (this broker reads versions 1 and 2)"
            ));
        }
        _ => return Err("unsupported version (this broker reads versions 1 and 2)".into()),
    }
    let principals = top
        .get("principals")
        .and_then(Value::as_object)
        .ok_or("invalid principals")?;
    let enrollments = top
        .get("enrollments")
        .and_then(Value::as_object)
        .ok_or("invalid enrollments")?;
    let admin_hash = match top.get("adminCredentialHash") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("invalid admin credential hash".into()),
    };
    let mut state = State::empty();
    state.admin_hash_loaded = admin_hash.is_some();
    state.admin_hash = admin_hash;
    for (id, value) in principals.iter() {
        state
            .principals
            .insert(id.to_owned(), parse_principal(id, value)?);
    }
    for (hash, value) in enrollments.iter() {
        state
            .enrollments
            .insert(hash.to_owned(), parse_enrollment(hash, value)?);
    }
    Ok(state)
}
