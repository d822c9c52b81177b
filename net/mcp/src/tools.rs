//! The tools: their names, schemas (strict: no property beyond those listed) and annotations,
//! and the reading of their arguments, which refuses what the schema does not allow with a
//! stable code instead of guessing.

use agent_intercom_core::{Error, ErrorCode};
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

/// The longest `intercom_ask` wait, in ms (as the adapters' tools allow).
pub const MAX_ASK_TIMEOUT_MS: u64 = 120_000;
/// `intercom_ask`'s wait when none is given, in ms: under the 60 s after which the official
/// TypeScript SDK gives up on a request by default (it would cancel the ask, and the late reply
/// would be refused, instead of hearing ASK_TIMEOUT with the ask left open).
pub const DEFAULT_ASK_TIMEOUT_MS: u64 = 50_000;
/// The longest `intercom_wait` wait, in ms.
pub const MAX_WAIT_TIMEOUT_MS: u64 = 600_000;
/// `intercom_wait`'s wait when none is given, in ms (under that 60 s too).
pub const DEFAULT_WAIT_TIMEOUT_MS: u64 = 50_000;
/// The longest status summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 400;
/// Messages `intercom_pending` and `intercom_wait` show at most per call; the rest follow.
pub const PAGE: usize = 50;

/// The scratchpad operations offered as tools: `pad_<op>` with `.` as `_`.
pub const PAD_OPERATIONS: &[&str] = &[
    "register",
    "post",
    "unread",
    "list",
    "task.create",
    "task.get",
    "task.transition",
    "task.history",
    "task.artifact",
    "task.artifacts",
];

/// The tool name of a scratchpad operation.
pub fn pad_tool(op: &str) -> String {
    format!("pad_{}", op.replace('.', "_"))
}

fn attachments_schema() -> Value {
    json!({
        "type": "array",
        "description": "Files, snippets or context to carry with the message",
        "items": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["file", "snippet", "context"]},
                "name": {"type": "string"},
                "content": {"type": "string"},
                "language": {"type": "string"},
            },
            "required": ["type", "name", "content"],
            "additionalProperties": false,
        },
    })
}

fn queue_schema() -> Value {
    json!({"type": "boolean", "default": false, "description": "When `to` is the full id of a \
           known session that is away, the broker keeps the message until it is back \
           (queued: true in the answer)"})
}

fn receipts_schema() -> Value {
    json!({"type": "boolean", "default": false, "description": "Have the broker record when \
           the recipient's model was shown the message (see intercom_delivery_status)"})
}

/// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`.
fn hints(read_only: bool, idempotent: bool, open_world: bool) -> Value {
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": false,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    })
}

fn tool(name: &str, title: &str, description: &str, schema: Value, annotations: Value) -> Tool {
    let mut annotations = annotations;
    annotations["title"] = title.into();
    let mut schema = schema;
    schema["type"] = "object".into();
    schema["additionalProperties"] = false.into();
    if schema.get("properties").is_none() {
        schema["properties"] = json!({});
    }
    serde_json::from_value(json!({
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": schema,
        "annotations": annotations,
    }))
    .expect("a tool definition of ours is a Tool")
}

/// Every tool, the scratchpad's included; `intercom_team` when a team manifest is named.
pub fn all(team: bool) -> Vec<Tool> {
    let to = json!({"type": "string", "minLength": 1,
        "description": "The session: its name, full id, or a unique id prefix"});
    let message = json!({"type": "string", "description": "The message text"});
    let mut tools = vec![
        tool(
            "intercom_whoami",
            "Who am I",
            "This session's intercom identity: its full session id (what other sessions can \
             always address), name, working directory and model.",
            json!({}),
            hints(true, true, false),
        ),
        tool(
            "intercom_status",
            "Intercom status",
            "Whether this session is connected to the broker, how many other sessions are live, \
             and how many messages are unread, asks open and sends not yet confirmed.",
            json!({}),
            hints(true, true, false),
        ),
        tool(
            "intercom_list",
            "List sessions",
            "The sessions connected to the intercom now (only reachable ones), on this machine, \
             in this directory or in this repository.",
            json!({"properties": {
                "scope": {"type": "string", "enum": ["machine", "directory", "repo"],
                          "default": "machine"},
                "include_self": {"type": "boolean", "default": false},
            }}),
            hints(true, true, false),
        ),
        tool(
            "intercom_set_summary",
            "Set status summary",
            "Publish a short summary of what this session is doing, shown to the others.",
            json!({"properties": {
                "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS},
            }, "required": ["summary"]}),
            hints(false, true, false),
        ),
        tool(
            "intercom_send",
            "Send a message",
            "Send a message to another session. Returns once the receiver has stored it \
             (delivered), or with the reason it could not be.",
            json!({"properties": {
                "to": to, "message": message, "attachments": attachments_schema(),
                "queue": queue_schema(), "receipts": receipts_schema(),
            }, "required": ["to", "message"]}),
            hints(false, false, true),
        ),
        tool(
            "intercom_ask",
            "Ask and wait for the reply",
            "Ask another session something and wait for its reply (at most timeout_ms). Use it \
             only when the next step needs the answer; use intercom_send otherwise. When no \
             reply comes in time the ask stays open and its reply appears in intercom_pending. \
             Keep timeout_ms under the client's own request timeout: a request the client \
             gives up on cancels the ask.",
            json!({"properties": {
                "to": to, "message": message, "attachments": attachments_schema(),
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_ASK_TIMEOUT_MS,
                               "default": DEFAULT_ASK_TIMEOUT_MS},
                "queue": queue_schema(), "receipts": receipts_schema(),
            }, "required": ["to", "message"]}),
            hints(false, false, true),
        ),
        tool(
            "intercom_delivery_status",
            "Delivery status",
            "Where a message this session sent stands: accepted, queued, delivered, read, \
             failed, expired or unknown (for a broker with delivery status).",
            json!({"properties": {
                "message_id": {"type": "string", "minLength": 1,
                               "description": "The message_id intercom_send or intercom_ask \
                                               returned"},
            }, "required": ["message_id"]}),
            hints(true, true, false),
        ),
        tool(
            "intercom_pending",
            "Pending messages",
            "Unread messages and open asks to this session, oldest first (a page at a time). \
             With mark_read, the messages shown are not shown as unread again.",
            json!({"properties": {"mark_read": {"type": "boolean", "default": false}}}),
            hints(false, true, false),
        ),
        tool(
            "intercom_reply",
            "Reply to an ask",
            "Reply to an open ask: the one named by ask, or the oldest (or latest) from the \
             session to names, or the oldest of all.",
            json!({"properties": {
                "message": message,
                "to": {"type": "string", "description": "The asking session (name, id or \
                       unique id prefix), never a message id"},
                "which": {"type": "string", "enum": ["oldest", "latest"], "default": "oldest"},
                "ask": {"type": "string", "description": "The ask's id, as intercom_pending \
                        shows it"},
                "attachments": attachments_schema(),
            }, "required": ["message"]}),
            hints(false, false, true),
        ),
        tool(
            "intercom_wait",
            "Wait for a message",
            "Block until an unread message arrives (from the session `from` names, if given) or \
             timeout_ms passes; returns the unread messages without marking them read. For \
             harnesses that cannot be woken.",
            json!({"properties": {
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_WAIT_TIMEOUT_MS,
                               "default": DEFAULT_WAIT_TIMEOUT_MS},
                "from": {"type": "string", "description": "Only messages from this session \
                         (name, id or unique id prefix)"},
            }}),
            hints(true, true, false),
        ),
    ];
    if team {
        tools.push(tool(
            "intercom_team",
            "My team",
            "The team of the tmuxdeck manifest AGENT_INTERCOM_TEAM_MANIFEST names: its lead \
             (your manager) and its workers, each with whether it is connected now.",
            json!({}),
            hints(true, true, false),
        ));
    }
    for op in PAD_OPERATIONS {
        tools.push(pad_definition(op));
    }
    tools
}

/// A scratchpad operation as a tool: its argument keys from the scratchpad's own table, any
/// other refused.
fn pad_definition(op: &str) -> Tool {
    let properties: Map<String, Value> = agent_intercom_scratchpad::api::request_of(op)
        .map(|request| request.args)
        .unwrap_or_default()
        .iter()
        .map(|arg| (arg.key.to_string(), json!({})))
        .collect();
    let read_only = matches!(op, "list" | "task.get" | "task.history" | "task.artifacts");
    tool(
        &pad_tool(op),
        &format!("Scratchpad: {op}"),
        &format!(
            "The scratchpad operation `{op}` (docs/scratchpad.md) on the store the \
             agent-intercom CLI uses. The agent fields (from, agent, by, ...) default to this \
             session's name."
        ),
        json!({"properties": properties}),
        hints(read_only, read_only, false),
    )
}

/// The arguments of one call, each key read once; unknown keys are refused first.
pub struct Args<'a> {
    map: Option<&'a Map<String, Value>>,
    tool: &'a str,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

impl<'a> Args<'a> {
    /// Checks that `arguments` holds only `keys`.
    pub fn new(
        tool: &'a str,
        arguments: Option<&'a Map<String, Value>>,
        keys: &[&str],
    ) -> Result<Args<'a>, Error> {
        if let Some(map) = arguments
            && let Some(key) = map.keys().find(|k| !keys.contains(&k.as_str()))
        {
            let takes = if keys.is_empty() {
                "no arguments".to_string()
            } else {
                keys.join(", ")
            };
            return Err(Error::new(
                ErrorCode::UnknownKey,
                format!("{tool} does not take {key:?}; it takes {takes}"),
            ));
        }
        Ok(Args {
            map: arguments,
            tool,
        })
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key)).filter(|v| !v.is_null())
    }

    /// A required string.
    pub fn string(&self, key: &str) -> Result<&'a str, Error> {
        self.opt_string(key)?
            .ok_or_else(|| invalid(format!("{} needs {key} (a string)", self.tool)))
    }

    /// An optional string.
    pub fn opt_string(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(format!("{}: {key} must be a string", self.tool))),
        }
    }

    /// An optional boolean, `default` when absent.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, Error> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(format!("{}: {key} must be a boolean", self.tool))),
        }
    }

    /// An optional whole number from `min` to `max`, `default` when absent.
    pub fn integer(&self, key: &str, min: u64, max: u64, default: u64) -> Result<u64, Error> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| {
                    invalid(format!(
                        "{}: {key} must be a whole number from {min} to {max}",
                        self.tool
                    ))
                }),
        }
    }

    /// One of `choices`, `choices[0]` when absent.
    pub fn choice(&self, key: &str, choices: &[&'static str]) -> Result<&'static str, Error> {
        match self.opt_string(key)? {
            None => Ok(choices[0]),
            Some(s) => choices.iter().find(|c| **c == s).copied().ok_or_else(|| {
                invalid(format!(
                    "{}: {key} is one of {}",
                    self.tool,
                    choices.join(", ")
                ))
            }),
        }
    }

    /// The message content: `{text, attachments?}`, each attachment checked against its schema.
    pub fn content(&self, text_key: &str) -> Result<Value, Error> {
        let mut content = json!({"text": self.string(text_key)?});
        if let Some(list) = self.get("attachments") {
            let Value::Array(items) = list else {
                return Err(invalid(format!(
                    "{}: attachments must be an array",
                    self.tool
                )));
            };
            for (i, item) in items.iter().enumerate() {
                let at = format!("{}: attachments[{i}]", self.tool);
                let Value::Object(fields) = item else {
                    return Err(invalid(format!("{at} must be an object")));
                };
                if let Some(key) = fields
                    .keys()
                    .find(|k| !["type", "name", "content", "language"].contains(&k.as_str()))
                {
                    return Err(Error::new(
                        ErrorCode::UnknownKey,
                        format!(
                            "{at} does not take {key:?}; it takes type, name, content, \
                                 language"
                        ),
                    ));
                }
                match fields.get("type").and_then(Value::as_str) {
                    Some("file" | "snippet" | "context") => {}
                    _ => return Err(invalid(format!("{at}.type is file, snippet or context"))),
                }
                for key in ["name", "content"] {
                    if !fields.get(key).is_some_and(Value::is_string) {
                        return Err(invalid(format!("{at}.{key} must be a string")));
                    }
                }
                if fields.get("language").is_some_and(|v| !v.is_string()) {
                    return Err(invalid(format!("{at}.language must be a string")));
                }
            }
            content["attachments"] = list.clone();
        }
        Ok(content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_strict_and_every_tool_is_named_once() {
        let tools = all(true);
        assert!(tools.iter().any(|t| t.name == "intercom_team"));
        assert!(!all(false).iter().any(|t| t.name == "intercom_team"));
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), tools.len());
        for t in &tools {
            assert_eq!(t.input_schema["additionalProperties"], false, "{}", t.name);
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert!(t.annotations.is_some(), "{}", t.name);
        }
        let post = tools.iter().find(|t| t.name == "pad_post").unwrap();
        assert!(post.input_schema["properties"].get("content").is_some());
    }

    #[test]
    fn arguments_refuse_what_the_schema_does_not_allow() {
        let args = json!({"to": "x", "message": "hi", "extra": 1});
        let e = Args::new("t", args.as_object(), &["to", "message"])
            .err()
            .unwrap();
        assert_eq!(e.code(), ErrorCode::UnknownKey);
        assert!(e.message().contains("\"extra\""), "{e}");
        let args = json!({"to": 5, "timeout_ms": 0, "which": "middle", "mark_read": "yes"});
        let a = Args::new(
            "t",
            args.as_object(),
            &["to", "timeout_ms", "which", "mark_read"],
        )
        .unwrap();
        assert_eq!(
            a.string("to").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert!(a.integer("timeout_ms", 1, 10, 5).is_err());
        assert!(a.choice("which", &["oldest", "latest"]).is_err());
        assert!(a.flag("mark_read", false).is_err());
        let none = Args::new("t", None, &["to"]).unwrap();
        assert!(
            none.string("to")
                .unwrap_err()
                .message()
                .contains("needs to")
        );
        assert_eq!(none.integer("timeout_ms", 1, 10, 5).unwrap(), 5);
        let bad = json!({"message": "m", "attachments": [{"type": "file", "name": "a"}]});
        let a = Args::new("t", bad.as_object(), &["message", "attachments"]).unwrap();
        assert!(
            a.content("message")
                .unwrap_err()
                .message()
                .contains("content")
        );
        let good = json!({"message": "m", "attachments": [
            {"type": "snippet", "name": "a", "content": "x", "language": "rust"}]});
        let a = Args::new("t", good.as_object(), &["message", "attachments"]).unwrap();
        assert_eq!(
            a.content("message").unwrap()["attachments"][0]["language"],
            "rust"
        );
    }
}
