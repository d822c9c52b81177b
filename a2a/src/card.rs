//! The Agent Card (A2A 1.0 shape, with the 0.3 top-level connection fields for older clients):
//! what it says is built from the service's options, never from local paths or secrets.

use serde_json::{Value, json};

/// The URI of the request-signing extension (RFC 9421, Ed25519): required of every client when
/// the service runs with `--require-signatures`.
pub const SIGNING_EXTENSION_URI: &str =
    "https://github.com/ctliz/agent-intercom/blob/main/docs/http-signatures.md#rfc9421-ed25519-v1";

/// Where the documentation of the service is.
pub const DOCUMENTATION_URL: &str = "https://github.com/ctliz/agent-intercom/blob/main/docs/a2a.md";

/// What the card says.
#[derive(Clone, Debug)]
pub struct CardOptions {
    /// The service's base URL (`--public-url`, or the bound address), without a trailing slash.
    pub base_url: String,
    /// Whether every request must be signed (the extension is then `required: true`).
    pub require_signatures: bool,
    /// Whether a bearer token is required (declared as a security scheme).
    pub bearer: bool,
}

/// The card as JSON.
pub fn agent_card(options: &CardOptions) -> Value {
    let rpc_url = format!("{}/a2a", options.base_url);
    let mut extensions = Vec::new();
    if options.require_signatures {
        extensions.push(json!({
            "uri": SIGNING_EXTENSION_URI,
            "description": "Every request is signed with RFC 9421 HTTP Message Signatures \
                (Ed25519 over @method, @target-uri, content-digest, with created, expires, \
                nonce and keyid) by a key enrolled here; unsigned or badly signed requests get \
                HTTP 401.",
            "required": true,
            "params": { "protocol": "rfc9421-ed25519@1", "alg": "ed25519" },
        }));
    }
    let mut card = json!({
        "name": "agent-intercom",
        "description": "Hands work to the coding agents on this machine: a message becomes a task \
            on the agents' shared scratchpad, which a local agent picks up, works on, answers \
            with artifacts and completes. Tasks are durable (SQLite) and survive restarts.",
        "supportedInterfaces": [
            { "url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
            { "url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3" },
        ],
        "provider": {
            "organization": "agent-intercom",
            "url": "https://github.com/ctliz/agent-intercom",
        },
        "version": env!("CARGO_PKG_VERSION"),
        "documentationUrl": DOCUMENTATION_URL,
        "capabilities": {
            "streaming": false,
            "pushNotifications": false,
            "extendedAgentCard": false,
            "extensions": extensions,
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{
            "id": "scratchpad-task",
            "name": "Task for a local agent",
            "description": "Creates a task on the scratchpad for a local coding agent; its \
                artifacts and state come back through GetTask (polling; no streaming).",
            "tags": ["task", "handoff", "coding-agent"],
            "examples": ["Review the failing test in the parser and propose a fix."],
            "inputModes": ["text/plain", "application/json"],
            "outputModes": ["text/plain"],
        }],
        // A2A 0.3 clients read the endpoint from these.
        "url": rpc_url,
        "protocolVersion": "0.3.0",
        "preferredTransport": "JSONRPC",
    });
    if options.bearer {
        card["securitySchemes"] = json!({
            "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer" } },
        });
        card["securityRequirements"] = json!([{ "schemes": { "bearer": { "list": [] } } }]);
    }
    card
}
