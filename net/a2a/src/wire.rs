//! The A2A wire shapes of each version the service speaks, and the one internal form between
//! them. Messages are stored in the 1.0 shape (`ROLE_USER`, parts `{text}` / `{data}` / `{url}` /
//! `{raw}` with `mediaType`, `filename`, `metadata`); a 0.3 or 0.1 message is converted on the way
//! in and every answer is rendered in the shape of the version that was asked.

use agent_intercom_scratchpad::{A2aTask, A2aView, Artifact, MAX_A2A_ID_BYTES, Transition};
use serde_json::{Map, Value, json};

pub use crate::dialect::{Dialect, SUPPORTED_VERSIONS, header_version};
use crate::errors::RpcError;
use crate::fields::Fields;
use crate::json::{iso_ms, stable_text};

/// A client's message, converted to the internal (1.0) form.
#[derive(Clone, Debug)]
pub struct Inbound {
    /// The message as stored: `messageId`, `role`, `parts` and what else the client gave.
    pub message: Value,
    /// Its id.
    pub message_id: String,
    /// The context it names.
    pub context_id: Option<String>,
    /// The task it continues.
    pub task_id: Option<String>,
    /// Its parts as text (the delivery to the local agent).
    pub text: String,
    /// A title for a new task: the first line of its text.
    pub title: String,
}

impl Inbound {
    /// What a repeat of this message must match: the message with the task and context it names.
    pub fn digest_input(&self, legacy_id: Option<&str>) -> Value {
        json!({
            "message": self.message,
            "contextId": self.context_id,
            "taskId": self.task_id,
            "legacyTaskId": legacy_id,
        })
    }
}

/// Longest title of a task made from a message (in characters).
const TITLE_CHARS: usize = 120;

fn role_of(f: &Fields<'_>, dialect: Dialect) -> Result<(), RpcError> {
    let role = f.get("role");
    let user = match (dialect, role) {
        (Dialect::V1, Some(Value::String(r))) => r == "ROLE_USER",
        // ProtoJSON also accepts an enum's number.
        (Dialect::V1, Some(Value::Number(n))) => n.as_u64() == Some(1),
        (_, Some(Value::String(r))) => r == "user",
        (_, None) => return Err(RpcError::param(f.at("role"), "is required")),
        _ => false,
    };
    if user {
        Ok(())
    } else {
        let expected = if dialect == Dialect::V1 {
            "ROLE_USER"
        } else {
            "user"
        };
        Err(RpcError::param(
            f.at("role"),
            format!("must be {expected}: a client sends user messages"),
        ))
    }
}

/// Checks a base64 text (standard or URL-safe alphabet, padding optional) without decoding it.
fn is_base64(text: &str) -> bool {
    let body = text.trim_end_matches('=');
    text.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_'))
        && body.len() % 4 != 1
}

/// Parses one part of `dialect` into the internal form.
fn part_of(value: &Value, path: &str, dialect: Dialect) -> Result<Map<String, Value>, RpcError> {
    let f = Fields::of(value, path)?;
    let mut part = Map::new();
    let kind_key = match dialect {
        Dialect::V1 => None,
        Dialect::V03 => Some("kind"),
        Dialect::V01 => Some("type"),
    };
    let mut media_type = None;
    let mut filename = None;
    match kind_key {
        None => {
            let present: Vec<&str> = ["text", "raw", "url", "data"]
                .into_iter()
                .filter(|k| f.map.contains_key(*k))
                .collect();
            let [key] = present.as_slice() else {
                return Err(RpcError::param(
                    path,
                    "a part holds exactly one of text, raw, url or data",
                ));
            };
            match *key {
                "text" | "url" => {
                    let s = f
                        .str(key)?
                        .ok_or_else(|| RpcError::param(f.at(key), "is null"))?;
                    part.insert((*key).to_string(), Value::String(s.to_string()));
                }
                "raw" => {
                    let s = f.str("raw")?.unwrap_or("");
                    if !is_base64(s) {
                        return Err(RpcError::param(f.at("raw"), "must be base64"));
                    }
                    part.insert("raw".into(), Value::String(s.to_string()));
                }
                _ => {
                    part.insert("data".into(), f.map["data"].clone());
                }
            }
            media_type = f.str("mediaType")?.map(str::to_string);
            filename = f.str("filename")?.map(str::to_string);
        }
        Some(kind_key) => match f.str(kind_key)? {
            Some("text") => {
                let text = f
                    .str("text")?
                    .ok_or_else(|| RpcError::param(f.at("text"), "is required"))?;
                part.insert("text".into(), Value::String(text.to_string()));
            }
            Some("data") => {
                let data = f
                    .object("data")?
                    .ok_or_else(|| RpcError::param(f.at("data"), "is required"))?;
                part.insert("data".into(), Value::Object(data.clone()));
            }
            Some("file") => {
                let file = f
                    .object("file")?
                    .ok_or_else(|| RpcError::param(f.at("file"), "is required"))?;
                let file_path = f.at("file");
                let file = Fields {
                    map: file,
                    path: &file_path,
                };
                match (file.str("bytes")?, file.str("uri")?) {
                    (Some(bytes), None) if is_base64(bytes) => {
                        part.insert("raw".into(), Value::String(bytes.to_string()));
                    }
                    (Some(_), None) => {
                        return Err(RpcError::param(file.at("bytes"), "must be base64"));
                    }
                    (None, Some(uri)) => {
                        part.insert("url".into(), Value::String(uri.to_string()));
                    }
                    _ => {
                        return Err(RpcError::param(
                            file_path.as_str(),
                            "a file holds exactly one of bytes or uri",
                        ));
                    }
                }
                media_type = file.str("mimeType")?.map(str::to_string);
                filename = file.str("name")?.map(str::to_string);
            }
            Some(other) => {
                return Err(RpcError::param(
                    f.at(kind_key),
                    format!("{other:?} is not a part {kind_key}; one of text, file, data"),
                ));
            }
            None => return Err(RpcError::param(f.at(kind_key), "is required")),
        },
    }
    if let Some(m) = media_type.filter(|m| !m.is_empty()) {
        part.insert("mediaType".into(), Value::String(m));
    }
    if let Some(n) = filename.filter(|n| !n.is_empty()) {
        part.insert("filename".into(), Value::String(n));
    }
    if let Some(meta) = f.object("metadata")? {
        part.insert("metadata".into(), Value::Object(meta.clone()));
    }
    Ok(part)
}

/// The text a part stands for in the delivery and the title.
fn part_text(part: &Map<String, Value>) -> String {
    let name = part.get("filename").and_then(Value::as_str);
    let media = part.get("mediaType").and_then(Value::as_str);
    let described = |what: String| {
        let mut s = format!("[file {what}");
        if let Some(n) = name {
            s += &format!(", {n}");
        }
        if let Some(m) = media {
            s += &format!(", {m}");
        }
        s + "]"
    };
    if let Some(t) = part.get("text").and_then(Value::as_str) {
        t.to_string()
    } else if let Some(u) = part.get("url").and_then(Value::as_str) {
        described(u.to_string())
    } else if let Some(r) = part.get("raw").and_then(Value::as_str) {
        described(format!(
            "of about {} bytes, in the task's A2A history",
            r.len() / 4 * 3
        ))
    } else {
        part.get("data").map(stable_text).unwrap_or_default()
    }
}

fn title_of(text: &str, message_id: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let line = match line {
        Some(l) => l.to_string(),
        None => format!("A2A message {message_id}"),
    };
    if line.chars().count() > TITLE_CHARS {
        let cut: String = line.chars().take(TITLE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// Parses the message of a send request of `dialect` (`message_id` given for 0.1, whose
/// messages have none).
pub fn parse_message(
    value: Option<&Value>,
    path: &str,
    dialect: Dialect,
    message_id: Option<String>,
) -> Result<Inbound, RpcError> {
    let value = value.ok_or_else(|| RpcError::param(path, "is required"))?;
    let f = Fields::of(value, path)?;
    role_of(&f, dialect)?;
    let message_id = match message_id {
        Some(id) => id,
        None => f.id("messageId", MAX_A2A_ID_BYTES)?.to_string(),
    };
    let parts = f
        .array("parts")?
        .ok_or_else(|| RpcError::param(f.at("parts"), "is required"))?;
    if parts.is_empty() {
        return Err(RpcError::param(f.at("parts"), "needs at least one part"));
    }
    let mut stored_parts = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        stored_parts.push(Value::Object(part_of(
            p,
            &format!("{}[{i}]", f.at("parts")),
            dialect,
        )?));
    }
    let text = stored_parts
        .iter()
        .filter_map(Value::as_object)
        .map(part_text)
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut message = Map::new();
    message.insert("messageId".into(), Value::String(message_id.clone()));
    message.insert("role".into(), Value::String("ROLE_USER".into()));
    message.insert("parts".into(), Value::Array(stored_parts));
    if let Some(meta) = f.object("metadata")? {
        message.insert("metadata".into(), Value::Object(meta.clone()));
    }
    for key in ["extensions", "referenceTaskIds"] {
        if let Some(list) = f.strings(key)? {
            message.insert(key.into(), json!(list));
        }
    }
    let (context_id, task_id) = if dialect == Dialect::V01 {
        (None, None)
    } else {
        (
            f.opt_id("contextId", MAX_A2A_ID_BYTES)?,
            f.opt_id("taskId", MAX_A2A_ID_BYTES)?,
        )
    };
    Ok(Inbound {
        message: Value::Object(message),
        title: title_of(&text, &message_id),
        message_id,
        context_id: context_id.map(str::to_string),
        task_id: task_id.map(str::to_string),
        text,
    })
}

/// The name of a scratchpad state in `dialect`: 1.0 `TASK_STATE_*`, 0.3 the scratchpad's own
/// kebab-case names, 0.1 the same except `rejected` (which 0.1 lacks) as `failed`.
pub fn state_name(state: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::V1 => format!("TASK_STATE_{}", state.replace('-', "_").to_uppercase()),
        Dialect::V03 => state.to_string(),
        Dialect::V01 if state == "rejected" => "failed".to_string(),
        Dialect::V01 => state.to_string(),
    }
}

/// A stored (1.0) part in `dialect`.
fn render_part(part: &Value, dialect: Dialect) -> Value {
    let Some(p) = part.as_object() else {
        return part.clone();
    };
    if dialect == Dialect::V1 {
        return part.clone();
    }
    let kind_key = if dialect == Dialect::V03 {
        "kind"
    } else {
        "type"
    };
    let mut out = Map::new();
    if let Some(text) = p.get("text") {
        out.insert(kind_key.into(), json!("text"));
        out.insert("text".into(), text.clone());
    } else if let Some(data) = p.get("data") {
        out.insert(kind_key.into(), json!("data"));
        // 0.3 and 0.1 data parts hold an object.
        let data = match data {
            Value::Object(_) => data.clone(),
            other => json!({ "value": other }),
        };
        out.insert("data".into(), data);
    } else {
        let mut file = Map::new();
        if let Some(url) = p.get("url") {
            file.insert("uri".into(), url.clone());
        } else if let Some(raw) = p.get("raw") {
            file.insert("bytes".into(), raw.clone());
        }
        if let Some(m) = p.get("mediaType") {
            file.insert("mimeType".into(), m.clone());
        }
        if let Some(n) = p.get("filename") {
            file.insert("name".into(), n.clone());
        }
        out.insert(kind_key.into(), json!("file"));
        out.insert("file".into(), Value::Object(file));
    }
    if let Some(meta) = p.get("metadata") {
        out.insert("metadata".into(), meta.clone());
    }
    Value::Object(out)
}

/// A stored (1.0) message of `task` in `dialect`, with its task and context ids.
pub fn render_message(message: &Value, task: &A2aTask, dialect: Dialect) -> Value {
    let Some(m) = message.as_object() else {
        return message.clone();
    };
    let parts: Vec<Value> = m
        .get("parts")
        .and_then(Value::as_array)
        .map(|ps| ps.iter().map(|p| render_part(p, dialect)).collect())
        .unwrap_or_default();
    let agent = m.get("role").and_then(Value::as_str) == Some("ROLE_AGENT");
    let mut out = Map::new();
    if dialect == Dialect::V03 {
        out.insert("kind".into(), json!("message"));
    }
    if dialect != Dialect::V01 {
        if let Some(id) = m.get("messageId") {
            out.insert("messageId".into(), id.clone());
        }
        out.insert("contextId".into(), json!(task.context_id));
        out.insert("taskId".into(), json!(task.task.id));
    }
    let role = match (dialect, agent) {
        (Dialect::V1, true) => "ROLE_AGENT",
        (Dialect::V1, false) => "ROLE_USER",
        (_, true) => "agent",
        (_, false) => "user",
    };
    out.insert("role".into(), json!(role));
    out.insert("parts".into(), Value::Array(parts));
    let extra: &[&str] = if dialect == Dialect::V01 {
        &["metadata"]
    } else {
        &["metadata", "extensions", "referenceTaskIds"]
    };
    for key in extra {
        if let Some(v) = m.get(*key) {
            out.insert((*key).to_string(), v.clone());
        }
    }
    Value::Object(out)
}

/// The agent's status message after the `ordinal`-th transition of `task`: the reason a local
/// agent gave for it, when it was not the client's own.
fn status_message(task: &A2aTask, ordinal: i64, change: &Transition) -> Option<Value> {
    let reason = change.reason.as_deref().filter(|r| !r.is_empty())?;
    if ordinal <= 1 || change.by == task.task.creator {
        return None;
    }
    Some(json!({
        "messageId": format!("{}-status-{ordinal}", task.task.id),
        "role": "ROLE_AGENT",
        "parts": [{ "text": reason }],
    }))
}

/// The status after the `ordinal`-th transition of `task` in `dialect`: its state, the agent's
/// message and its time.
fn render_status(task: &A2aTask, ordinal: i64, change: &Transition, dialect: Dialect) -> Value {
    let mut status = Map::new();
    status.insert("state".into(), json!(state_name(&change.to, dialect)));
    if let Some(message) = status_message(task, ordinal, change) {
        status.insert("message".into(), render_message(&message, task, dialect));
    }
    status.insert("timestamp".into(), json!(iso_ms(change.at)));
    Value::Object(status)
}

/// Whether a rendered task carries its artifacts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArtifactsField {
    /// Never (`ListTasks` without `includeArtifacts`).
    Omit,
    /// When there are any (`GetTask`, sends, cancels).
    NonEmpty,
    /// Always, as an empty array if there are none (`ListTasks` with `includeArtifacts`).
    Always,
}

fn render_artifact(task: &A2aTask, index: usize, a: &Artifact, dialect: Dialect) -> Value {
    let part = render_part(&json!({ "text": a.content }), dialect);
    match dialect {
        Dialect::V01 => json!({ "name": a.name, "index": index, "parts": [part] }),
        _ => json!({
            "artifactId": format!("{}-artifact-{}", task.task.id, index + 1),
            "name": a.name,
            "parts": [part],
        }),
    }
}

/// A task in `dialect`: id, context, status (state, timestamp, the agent's message), artifacts
/// and history.
pub fn render_task(view: &A2aView, dialect: Dialect, artifacts: ArtifactsField) -> Value {
    let task = &view.task;
    let mut status = Map::new();
    status.insert("state".into(), json!(state_name(&task.task.state, dialect)));
    if let Some(message) = status_message(task, task.transitions, &task.last) {
        status.insert("message".into(), render_message(&message, task, dialect));
    }
    status.insert("timestamp".into(), json!(iso_ms(task.task.updated_at)));
    let mut out = Map::new();
    if dialect == Dialect::V03 {
        out.insert("kind".into(), json!("task"));
    }
    if dialect == Dialect::V01 {
        let id = task.legacy_id.as_deref().unwrap_or(&task.task.id);
        out.insert("id".into(), json!(id));
        out.insert("sessionId".into(), json!(task.context_id));
    } else {
        out.insert("id".into(), json!(task.task.id));
        out.insert("contextId".into(), json!(task.context_id));
    }
    out.insert("status".into(), Value::Object(status));
    let include = match artifacts {
        ArtifactsField::Omit => false,
        ArtifactsField::NonEmpty => !view.artifacts.is_empty(),
        ArtifactsField::Always => true,
    };
    if include {
        let list: Vec<Value> = view
            .artifacts
            .iter()
            .enumerate()
            .map(|(i, a)| render_artifact(task, i, a, dialect))
            .collect();
        out.insert("artifacts".into(), Value::Array(list));
    }
    if !view.history.is_empty() {
        let history: Vec<Value> = view
            .history
            .iter()
            .map(|text| {
                let stored = serde_json::from_str(text).unwrap_or(Value::Null);
                render_message(&stored, task, dialect)
            })
            .collect();
        out.insert("history".into(), Value::Array(history));
    }
    Value::Object(out)
}

/// A stream's first event: the task (1.0 `{"task": Task}`, 0.3 the Task with `kind: "task"`).
pub fn render_task_event(view: &A2aView, dialect: Dialect) -> Value {
    let task = render_task(view, dialect, ArtifactsField::NonEmpty);
    match dialect {
        Dialect::V1 => json!({ "task": task }),
        _ => task,
    }
}

/// A stream's event for the `ordinal`-th transition of `task`: 1.0 `{"statusUpdate":
/// {taskId, contextId, status}}`; 0.3 `{kind: "status-update", taskId, contextId, status,
/// final}`, `final` true on the stream's last event (1.0 has no `final`: the stream ends).
pub fn render_status_update(
    task: &A2aTask,
    ordinal: i64,
    change: &Transition,
    dialect: Dialect,
    last: bool,
) -> Value {
    let status = render_status(task, ordinal, change, dialect);
    match dialect {
        Dialect::V1 => json!({ "statusUpdate": {
            "taskId": task.task.id, "contextId": task.context_id, "status": status,
        }}),
        _ => json!({
            "kind": "status-update", "taskId": task.task.id, "contextId": task.context_id,
            "status": status, "final": last,
        }),
    }
}

/// A stream's event for the artifact `index` (from 0) of `task`, whole in one event: 1.0
/// `{"artifactUpdate": {taskId, contextId, artifact, append, lastChunk}}`; 0.3 the same with
/// `kind: "artifact-update"`.
pub fn render_artifact_update(
    task: &A2aTask,
    index: usize,
    artifact: &Artifact,
    dialect: Dialect,
) -> Value {
    let artifact = render_artifact(task, index, artifact, dialect);
    let (id, context) = (&task.task.id, &task.context_id);
    match dialect {
        Dialect::V1 => json!({ "artifactUpdate": {
            "taskId": id, "contextId": context, "artifact": artifact,
            "append": false, "lastChunk": true,
        }}),
        _ => json!({
            "kind": "artifact-update", "taskId": id, "contextId": context, "artifact": artifact,
            "append": false, "lastChunk": true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_of_each_version_meet_in_one_form() {
        let v1 = json!({"messageId": "m", "role": "ROLE_USER", "parts": [
            {"text": "hello\nworld"},
            {"url": "https://x/y.pdf", "mediaType": "application/pdf", "filename": "y.pdf"},
            {"data": {"k": 1}},
            {"raw": "aGk="},
        ]});
        let v03 = json!({"kind": "message", "messageId": "m", "role": "user", "parts": [
            {"kind": "text", "text": "hello\nworld"},
            {"kind": "file", "file": {"uri": "https://x/y.pdf", "mimeType": "application/pdf",
                                      "name": "y.pdf"}},
            {"kind": "data", "data": {"k": 1}},
            {"kind": "file", "file": {"bytes": "aGk="}},
        ]});
        let a = parse_message(Some(&v1), "message", Dialect::V1, None).unwrap();
        let b = parse_message(Some(&v03), "message", Dialect::V03, None).unwrap();
        assert_eq!(a.message, b.message);
        assert_eq!(a.title, "hello");
        assert!(
            a.text
                .starts_with("hello\nworld\n\n[file https://x/y.pdf, y.pdf")
        );
    }

    #[test]
    fn bad_messages_name_the_member_at_fault() {
        let cases = [
            (
                json!({"role": "ROLE_USER", "parts": [{"text": "x"}]}),
                "message.messageId",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}),
                "message.role",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_USER", "parts": []}),
                "message.parts",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_USER", "parts": "x"}),
                "message.parts",
            ),
            (
                json!({"messageId": 5, "role": "ROLE_USER", "parts": [{"text": "x"}]}),
                "message.messageId",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": 1}]}),
                "message.parts[0].text",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_USER",
                       "parts": [{"text": "a", "url": "b"}]}),
                "message.parts[0]",
            ),
            (
                json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"raw": "***"}]}),
                "message.parts[0].raw",
            ),
        ];
        for (value, field) in cases {
            let err = parse_message(Some(&value), "message", Dialect::V1, None).unwrap_err();
            assert_eq!(err.code, crate::errors::INVALID_PARAMS, "{value}");
            assert_eq!(
                err.field.as_deref(),
                Some(field),
                "{value}: {}",
                err.message
            );
        }
        let v03_without_kind = json!({"messageId": "m", "role": "user", "parts": [{"text": "x"}]});
        let err = parse_message(Some(&v03_without_kind), "message", Dialect::V03, None);
        assert_eq!(
            err.unwrap_err().field.as_deref(),
            Some("message.parts[0].kind")
        );
    }

    #[test]
    fn states_in_each_version() {
        assert_eq!(
            state_name("input-required", Dialect::V1),
            "TASK_STATE_INPUT_REQUIRED"
        );
        assert_eq!(state_name("input-required", Dialect::V03), "input-required");
        assert_eq!(state_name("rejected", Dialect::V01), "failed");
        assert!(is_base64("aGk=") && is_base64("aGk") && is_base64("") && !is_base64("a"));
    }
}
