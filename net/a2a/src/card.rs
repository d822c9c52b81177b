//! The Agent Card (A2A 1.0 shape, with the 0.3 top-level connection fields for older clients):
//! what it says is built from the service's options, never from local paths or secrets.

use agent_intercom_core::httpsig::{self, EXTENSION_URI, Profile};
use serde_json::{Value, json};

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
        let profile = Profile::a2a_request();
        let covered: Vec<String> = profile.components.iter().map(|c| c.serialize()).collect();
        let if_sent: Vec<String> = profile
            .components_if_present
            .iter()
            .map(|c| c.serialize())
            .collect();
        extensions.push(json!({
            "uri": EXTENSION_URI,
            "description": "Every request is signed with RFC 9421 HTTP Message Signatures \
                (Ed25519, label a2a, over @method, @target-uri, content-type and an RFC 9530 \
                content-digest, and the A2A-Version and A2A-Extensions headers when sent; with \
                created, expires, nonce, keyid, alg and tag) by a key enrolled with this \
                service. Name this extension in A2A-Extensions. Unsigned, badly signed, stale \
                or replayed requests get HTTP 401 with a stable code.",
            "required": true,
            "params": {
                "label": profile.label,
                "alg": httpsig::ALGORITHM,
                "tag": profile.tag,
                "components": covered,
                "componentsWhenSent": if_sent,
                "contentDigest": "sha-256",
                "maxLifetimeSeconds": profile.max_lifetime_secs,
                "maxSkewSeconds": profile.max_skew_secs,
                "maxAgeSeconds": profile.max_age_secs,
            },
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
            "streaming": true,
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
                artifacts and state come back as a stream (SendStreamingMessage, \
                SubscribeToTask) or through GetTask.",
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
