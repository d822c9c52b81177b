//! Accepting a signed envelope (`POST /v1/a2a/handoff`, `agent-intercom pack receive`): verify
//! it, refuse a replay, land it in the scratchpad as its sender's message or task.
//!
//! [`accept`] does, in this order, and stops at the first refusal (nothing is stored then):
//!
//! 1. `agent_intercom_core::envelope::verify` with the default skew (every refusal of
//!    docs/envelope.md, with its code);
//! 2. the payload read for the content type (below) and checked with the scratchpad's own rules
//!    (priority and privacy names, time to live, a private message needs a recipient), so what
//!    passes is what the store accepts;
//! 3. `Store::remember_nonce("envelope", key_id, nonce, expires_at)`: `REPLAYED` the second
//!    time;
//! 4. the message posted, or the task created, as `sender.agent_id`.
//!
//! A store failure at step 4 (a full disk) leaves the nonce taken: the sender signs again with
//! a new nonce.
//!
//! Payloads (JSON objects; an unknown member, a missing one or one of the wrong type is
//! `ENVELOPE_MALFORMED` naming `$.payload.<member>`):
//!
//! - `a2a_message`: `{content, category?, priority?, privacy?, project_root?, ttl_hours?,
//!   task_id?, metadata?}` becomes a message from the sender to the envelope's `recipient`
//!   (`null`: no recipient), with the category given (default `note`);
//! - `handoff_bundle` and `context_package`: the same members but `category`, which is the
//!   content type's name (`handoff_bundle`, `context_package`): a bundle's structured data goes
//!   in `metadata`, stored as given;
//! - `a2a_task`: `{title, project_root?}` becomes a task created by the sender, assigned to the
//!   envelope's `recipient`, in `submitted`.

use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::envelope::{self, ContentType, DEFAULT_SKEW_MS, Keyring, Verified};
use agent_intercom_core::scratchpad::{self, Priority, Privacy};
use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_scratchpad::{NewMessage, Store};

/// The nonce scope of envelopes in the store.
pub const NONCE_SCOPE: &str = "envelope";
/// The category of a message from an `a2a_message` that names none.
pub const DEFAULT_CATEGORY: &str = "note";

/// What an accepted envelope became.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A message.
    Message {
        /// Its id.
        id: String,
        /// Its category.
        category: String,
        /// When it expires (milliseconds since the epoch).
        expires_at: i64,
        /// Messages evicted to make room for it.
        evicted: Vec<String>,
    },
    /// A task.
    Task {
        /// Its id.
        id: String,
        /// Its title.
        title: String,
        /// Its state (`submitted`).
        state: String,
    },
}

/// An accepted envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Landed {
    /// Its content type.
    pub content_type: ContentType,
    /// `sender.agent_id`: whose message or task it is.
    pub sender: String,
    /// The key that signed it.
    pub key_id: String,
    /// Its nonce.
    pub nonce: String,
    /// What it became.
    pub item: Item,
}

impl Landed {
    /// `{content_type, sender, key_id, nonce, message: {id, category, expires_at, evicted}}` or
    /// `{..., task: {id, title, state}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::json!({
            "content_type": self.content_type.as_str(),
            "sender": self.sender,
            "key_id": self.key_id,
            "nonce": self.nonce,
        });
        match &self.item {
            Item::Message {
                id,
                category,
                expires_at,
                evicted,
            } => {
                out["message"] = serde_json::json!({
                    "id": id, "category": category, "expires_at": expires_at, "evicted": evicted,
                });
            }
            Item::Task { id, title, state } => {
                out["task"] = serde_json::json!({ "id": id, "title": title, "state": state });
            }
        }
        out
    }
}

/// Verifies `body` at `now_ms`, refuses a replay, and lands the envelope (see the module
/// documentation); the first refusal's error otherwise, with nothing landed.
pub fn accept(
    store: &mut Store,
    keys: &dyn Keyring,
    body: &[u8],
    now_ms: i64,
) -> Result<Landed, Error> {
    let verified = envelope::verify(body, keys, now_ms, DEFAULT_SKEW_MS)?;
    let plan = plan(&verified)?;
    let f = &verified.fields;
    store.remember_nonce(NONCE_SCOPE, &verified.key_id, &f.nonce, f.expires_at_ms)?;
    let item = match plan {
        Plan::Message(message) => {
            let posted = store.post(&message)?;
            Item::Message {
                id: posted.id,
                category: message.category,
                expires_at: posted.expires_at,
                evicted: posted.evicted,
            }
        }
        Plan::Task {
            title,
            project_root,
        } => {
            let task = store.create_task(
                &f.sender.agent_id,
                f.recipient.as_deref(),
                &title,
                project_root.as_deref(),
            )?;
            Item::Task {
                id: task.id,
                title: task.title,
                state: task.state,
            }
        }
    };
    Ok(Landed {
        content_type: f.content_type,
        sender: f.sender.agent_id.clone(),
        key_id: verified.key_id.clone(),
        nonce: f.nonce.clone(),
        item,
    })
}

enum Plan {
    Message(NewMessage),
    Task {
        title: String,
        project_root: Option<String>,
    },
}

fn malformed(member: &str, detail: &str) -> Error {
    Error::new(
        ErrorCode::EnvelopeMalformed,
        format!("$.payload.{member}: {detail}"),
    )
}

/// The payload's members, having refused one not in `known`.
fn payload<'v>(verified: &'v Verified, known: &[&str]) -> Result<&'v Members, Error> {
    let kind = verified.fields.content_type.as_str();
    let Value::Object(members) = &verified.fields.payload else {
        return Err(Error::new(
            ErrorCode::EnvelopeMalformed,
            format!("$.payload: the payload of {kind} is an object"),
        ));
    };
    if let Some((key, _)) = members.iter().find(|(k, _)| !known.contains(&k.as_ref())) {
        return Err(Error::new(
            ErrorCode::EnvelopeMalformed,
            format!(
                "$.payload: {} is not a member of the {kind} payload (it takes: {})",
                canonical::canonical_json(&Value::String(key.clone())).unwrap_or_default(),
                known.join(", ")
            ),
        ));
    }
    Ok(members)
}

type Members = [(std::borrow::Cow<'static, str>, Value<'static>)];

fn get<'v>(members: &'v Members, key: &str) -> Option<&'v Value<'static>> {
    members
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

fn string(members: &Members, key: &str, non_empty: bool) -> Result<Option<String>, Error> {
    match get(members, key) {
        None => Ok(None),
        Some(Value::String(s)) if non_empty && s.is_empty() => {
            Err(malformed(key, "must be a non-empty string"))
        }
        Some(Value::String(s)) => Ok(Some(s.to_string())),
        Some(_) => Err(malformed(key, "must be a string")),
    }
}

const MESSAGE_MEMBERS: [&str; 8] = [
    "content",
    "category",
    "priority",
    "privacy",
    "project_root",
    "ttl_hours",
    "task_id",
    "metadata",
];

fn plan(verified: &Verified) -> Result<Plan, Error> {
    let f = &verified.fields;
    if f.content_type == ContentType::A2aTask {
        let members = payload(verified, &["title", "project_root"])?;
        let title =
            string(members, "title", true)?.ok_or_else(|| malformed("title", "is required"))?;
        let project_root = string(members, "project_root", true)?;
        return Ok(Plan::Task {
            title,
            project_root,
        });
    }
    // A handoff bundle's or context package's category is its content type.
    let known: Vec<&str> = MESSAGE_MEMBERS
        .iter()
        .copied()
        .filter(|m| *m != "category" || f.content_type == ContentType::A2aMessage)
        .collect();
    let members = payload(verified, &known)?;
    let content =
        string(members, "content", false)?.ok_or_else(|| malformed("content", "is required"))?;
    let category = match f.content_type {
        ContentType::A2aMessage => {
            string(members, "category", true)?.unwrap_or_else(|| DEFAULT_CATEGORY.to_string())
        }
        other => other.as_str().to_string(),
    };
    let priority = string(members, "priority", false)?;
    let privacy = string(members, "privacy", false)?;
    let ttl_hours = match get(members, "ttl_hours") {
        None => None,
        Some(Value::Int(h)) => Some(*h),
        Some(_) => return Err(malformed("ttl_hours", "must be a whole number of hours")),
    };
    // The store's own rules, checked before the nonce is taken.
    Priority::parse(priority.as_deref().unwrap_or("normal"), "payload.priority")?;
    let level = Privacy::parse(privacy.as_deref().unwrap_or("public"), "payload.privacy")?;
    scratchpad::ttl_hours(ttl_hours)?;
    scratchpad::check_addressing(level, f.recipient.as_deref())?;
    let metadata = get(members, "metadata")
        .map(canonical::canonical_json)
        .transpose()?;
    Ok(Plan::Message(NewMessage {
        from: f.sender.agent_id.clone(),
        to: f.recipient.clone(),
        category,
        priority,
        privacy,
        content,
        metadata,
        task_id: string(members, "task_id", true)?,
        project_root: string(members, "project_root", true)?,
        ttl_hours,
    }))
}
