//! `serve --broker`: A2A work to the live sessions. The service is a session of the broker (the
//! MCP server's link, `agent_intercom_mcp::Link`: one connection registered again after every
//! loss, a durable inbox in which a reply is committed before the broker is told it arrived, an
//! outbox replayed after each registration). Each A2A message becomes an ask to its target
//! session, recorded with its task in the store (`Store::a2a_receive` with a gateway target, the
//! table `a2a_asks`), so the bridge ([`crate::bridge`]) can carry it through any restart: the
//! task is `working` once the target acknowledged the ask, and the reply completes it.
//!
//! This module holds what the request handlers need: which target a message goes to
//! ([`Route::target`]) and how to wake the bridge.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use crate::errors::RpcError;

/// The session name of the gateway when none is given (`--as`).
pub const DEFAULT_NAME: &str = "a2a-gateway";
/// The metadata member of an A2A message naming its target session.
pub const TO_METADATA: &str = "agent-intercom/to";
/// How often the bridge checks, at the broker, the asks it has not heard of for a while.
pub const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_secs(30);

/// The options of `serve --broker`.
#[derive(Clone, Debug)]
pub struct BrokerOptions {
    /// The broker's socket.
    pub socket: PathBuf,
    /// How to start a broker when none answers (`PROGRAM broker [--agent-dir DIR]`); `None`:
    /// never start one.
    pub start: Option<(PathBuf, Option<PathBuf>)>,
    /// The gateway's session name (`--as`).
    pub name: String,
    /// Its session id (the same across restarts: replies queued for it come back to it).
    pub session_id: String,
    /// `AGENT_INTERCOM_SCOPE_ID`, read once (`None`: unscoped).
    pub scope: Option<String>,
    /// The target of a message that names none (`--assignee`).
    pub default_target: Option<String>,
    /// The targets a message may name in its metadata (`--targets`).
    pub targets: Vec<String>,
    /// The gateway's durable inbox and outbox (an MCP inbox file).
    pub inbox: PathBuf,
    /// How often asks not heard of are checked at the broker.
    pub probe_interval: Duration,
}

impl BrokerOptions {
    /// Checks what can be checked before anything starts.
    pub fn check(&self) -> Result<(), String> {
        let bad = |name: &str| name.is_empty() || name.chars().any(char::is_control);
        if bad(&self.name) {
            return Err("--as must be a non-empty name without control characters".into());
        }
        if let Some(target) = &self.default_target
            && bad(target)
        {
            return Err("--assignee must be a non-empty session name or id".into());
        }
        if let Some(target) = self.targets.iter().find(|t| bad(t)) {
            return Err(format!(
                "--targets holds {target:?}: each must be a non-empty session name or id"
            ));
        }
        if self.probe_interval.is_zero() {
            return Err("the probe interval must be above zero".into());
        }
        Ok(())
    }
}

/// What the request handlers of a gateway share.
#[derive(Clone, Debug)]
pub struct Route {
    /// The gateway's session name: the assignee of its tasks.
    pub name: String,
    /// The target of a message that names none.
    pub default_target: Option<String>,
    /// The targets a message may name.
    pub targets: Vec<String>,
    /// Wakes the bridge: a task was created or cancelled.
    pub wake: Arc<Notify>,
}

impl Route {
    /// The session `message` goes to: its `metadata["agent-intercom/to"]` when that is one of
    /// the targets, else the default target. A name not listed, not a string, or no target at
    /// all is refused (`-32602`), before anything is stored.
    pub fn target(&self, message: &Value) -> Result<String, RpcError> {
        let field = format!("message.metadata[{TO_METADATA:?}]");
        match message.get("metadata").and_then(|m| m.get(TO_METADATA)) {
            None | Some(Value::Null) => self.default_target.clone().ok_or_else(|| {
                RpcError::param(
                    "message.metadata",
                    format!(
                        "names no target session: set metadata[{TO_METADATA:?}] to one of {} \
                         (this gateway has no default target, --assignee)",
                        self.listed()
                    ),
                )
            }),
            Some(Value::String(name)) if self.targets.iter().any(|t| t == name) => Ok(name.clone()),
            Some(Value::String(name)) => Err(RpcError {
                reason: "TARGET_NOT_ALLOWED",
                ..RpcError::param(
                    &field,
                    format!(
                        "{name:?} is not a target of this gateway; it takes {}",
                        self.listed()
                    ),
                )
            }),
            Some(_) => Err(RpcError::param(&field, "must be a session name (a string)")),
        }
    }

    fn listed(&self) -> String {
        if self.targets.is_empty() {
            "none by name (--targets is empty)".into()
        } else {
            self.targets.join(", ")
        }
    }
}

/// The broker's bounds on an ask's attachments (its defaults of `max_attachments` and
/// `max_attachment_bytes`, read from its configuration): a file beyond them stays a mention in
/// the text.
fn attachment_bounds() -> (usize, usize) {
    static BOUNDS: std::sync::LazyLock<(usize, usize)> = std::sync::LazyLock::new(|| {
        let defaults =
            agent_intercom_broker::config::BrokerConfig::for_agent_dir(std::path::Path::new(""));
        (defaults.max_attachments, defaults.max_attachment_bytes)
    });
    *BOUNDS
}

/// The ask's `content` of a message (in the stored form, `wire::parse_message`), as JSON text:
/// its text (what the client's parts say), and each file part sent inline whose bytes are UTF-8
/// text as an attachment (`type: "file"`, named by its file name or `file-N`). Binary files and
/// files by URL stay the mention the text makes of them.
pub fn ask_content(message: &Value, text: &str) -> String {
    use base64::Engine;
    let (max_attachments, max_attachment_bytes) = attachment_bounds();
    let parts = message["parts"].as_array().map_or(&[][..], Vec::as_slice);
    let attachments: Vec<Value> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, part)| {
            let raw = part.get("raw")?.as_str()?;
            let bytes = base64::engine::general_purpose::STANDARD.decode(raw).ok()?;
            let content = String::from_utf8(bytes).ok()?;
            let name = part
                .get("filename")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map_or_else(|| format!("file-{}", i + 1), str::to_string);
            (content.len() <= max_attachment_bytes)
                .then(|| serde_json::json!({"type": "file", "name": name, "content": content}))
        })
        .take(max_attachments)
        .collect();
    let mut content = serde_json::json!({ "text": text });
    if !attachments.is_empty() {
        content["attachments"] = Value::Array(attachments);
    }
    content.to_string()
}

/// A stable session id for the gateway of the store `db` named `name` in `scope`: the same
/// after any restart, so the broker hands it the replies that waited for it.
pub fn session_id(db: &std::path::Path, name: &str, scope: Option<&str>) -> String {
    use sha2::Digest;
    let db = std::fs::canonicalize(db).unwrap_or_else(|_| db.to_path_buf());
    let mut hash = sha2::Sha256::new();
    for part in [db.to_string_lossy().as_ref(), name, scope.unwrap_or("")] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    format!("a2a-gateway-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn route(default: Option<&str>, targets: &[&str]) -> Route {
        Route {
            name: DEFAULT_NAME.into(),
            default_target: default.map(str::to_string),
            targets: targets.iter().map(|t| t.to_string()).collect(),
            wake: Arc::new(Notify::new()),
        }
    }

    #[test]
    fn a_message_goes_to_a_listed_target_or_the_default() {
        let r = route(Some("worker"), &["reviewer", "tester"]);
        assert_eq!(r.target(&json!({})).unwrap(), "worker");
        let named = json!({"metadata": {"agent-intercom/to": "tester"}});
        assert_eq!(r.target(&named).unwrap(), "tester");
        let other = json!({"metadata": {"agent-intercom/to": "worker"}});
        let e = r.target(&other).unwrap_err();
        assert_eq!(e.reason, "TARGET_NOT_ALLOWED");
        assert!(e.message.contains("reviewer, tester"), "{}", e.message);
        let e = r
            .target(&json!({"metadata": {"agent-intercom/to": 7}}))
            .unwrap_err();
        assert!(e.message.contains("must be a session name"));
        let e = route(None, &[]).target(&json!({})).unwrap_err();
        assert!(e.message.contains("no default target"), "{}", e.message);
    }

    #[test]
    fn text_files_sent_inline_become_attachments_and_binary_ones_stay_in_the_text() {
        use base64::Engine;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let message = json!({"parts": [
            {"text": "see attached"},
            {"raw": b64(b"fn main() {}"), "filename": "main.rs"},
            {"raw": b64(&[0xff, 0xfe, 0x00])},
            {"raw": b64(b"no name")},
            {"url": "https://example.com/x"},
        ]});
        let content: Value = serde_json::from_str(&ask_content(&message, "the text")).unwrap();
        assert_eq!(content["text"], "the text");
        assert_eq!(
            content["attachments"],
            json!([
                {"type": "file", "name": "main.rs", "content": "fn main() {}"},
                {"type": "file", "name": "file-4", "content": "no name"},
            ])
        );
        let plain: Value = serde_json::from_str(&ask_content(&json!({"parts": []}), "t")).unwrap();
        assert_eq!(plain, json!({"text": "t"}));
    }

    #[test]
    fn attachments_stay_within_the_broker_s_bounds_and_the_broker_takes_the_ask() {
        use agent_intercom_broker::config::BrokerConfig;
        use agent_intercom_broker::wire;
        use base64::Engine;
        let config = BrokerConfig::for_agent_dir(std::path::Path::new("/nowhere"));
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let mut parts: Vec<Value> = (0..config.max_attachments + 3)
            .map(|i| json!({"raw": b64(format!("file {i}").as_bytes())}))
            .collect();
        let big = "x".repeat(config.max_attachment_bytes + 1);
        parts.insert(
            0,
            json!({"raw": b64(big.as_bytes()), "filename": "big.txt"}),
        );
        let content = ask_content(&json!({ "parts": parts }), "t");
        let content: Value = serde_json::from_str(&content).unwrap();
        let attached = content["attachments"].as_array().unwrap();
        assert_eq!(attached.len(), config.max_attachments, "the broker's count");
        assert_eq!(
            attached[0]["name"], "file-2",
            "the file over the size stays out"
        );
        let send = json!({
            "type": "send", "to": "bob", "expectsReply": true,
            "message": {"id": "m", "timestamp": 1, "content": content},
        });
        assert!(wire::check_client_frame(&send, &config).is_ok());
    }

    #[test]
    fn the_session_id_is_stable_and_tells_stores_names_and_scopes_apart() {
        let p = std::path::Path::new("/nowhere/store.sqlite");
        let a = session_id(p, "a2a-gateway", None);
        assert_eq!(a, session_id(p, "a2a-gateway", None));
        assert_ne!(a, session_id(p, "other", None));
        assert_ne!(a, session_id(p, "a2a-gateway", Some("s")));
        assert_ne!(
            a,
            session_id(std::path::Path::new("/x"), "a2a-gateway", None)
        );
    }
}
