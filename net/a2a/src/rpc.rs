//! JSON-RPC 2.0 at `POST /a2a`: the request object, the method tables of A2A 1.0, 0.3 and the
//! legacy 0.1 `tasks/send`, version negotiation through `A2A-Version`, and the response.

use serde_json::{Value, json};

use crate::dialect::{Dialect, SUPPORTED_VERSIONS, header_version};
use crate::errors::{
    EXTENDED_CARD_NOT_CONFIGURED, EXTENSION_REQUIRED, INTERNAL_ERROR, METHOD_NOT_FOUND,
    PARSE_ERROR, PUSH_NOT_SUPPORTED, RpcError, UNSUPPORTED_OPERATION, VERSION_NOT_SUPPORTED,
};
use crate::json::{Parsed, too_deep};
use crate::ops::Service;
use crate::panics::CatchPanic;
use crate::stream::Opened;

/// What a method does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Send,
    Get,
    Cancel,
    List,
    /// A send answered with a stream of the task's changes.
    SendStreaming,
    /// A stream of an existing task's changes.
    Subscribe,
    /// Known, not offered: answered with this code, reason and message.
    Refused(i64, &'static str, &'static str),
}

const LEGACY_STREAMING: Op = Op::Refused(
    UNSUPPORTED_OPERATION,
    "UNSUPPORTED_OPERATION",
    "A2A 0.1 streaming (tasks/sendSubscribe) is not supported; stream with message/stream (A2A \
     0.3) or SendStreamingMessage (1.0)",
);
const PUSH: Op = Op::Refused(
    PUSH_NOT_SUPPORTED,
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "push notifications are not supported (the Agent Card says pushNotifications: false)",
);
const EXTENDED_CARD: Op = Op::Refused(
    UNSUPPORTED_OPERATION,
    "UNSUPPORTED_OPERATION",
    "there is no extended Agent Card (the Agent Card says extendedAgentCard: false)",
);

/// Every method name the service knows, with the version it belongs to.
const METHODS: &[(&str, Dialect, Op)] = &[
    ("SendMessage", Dialect::V1, Op::Send),
    ("GetTask", Dialect::V1, Op::Get),
    ("CancelTask", Dialect::V1, Op::Cancel),
    ("ListTasks", Dialect::V1, Op::List),
    ("SendStreamingMessage", Dialect::V1, Op::SendStreaming),
    ("SubscribeToTask", Dialect::V1, Op::Subscribe),
    ("CreateTaskPushNotificationConfig", Dialect::V1, PUSH),
    ("GetTaskPushNotificationConfig", Dialect::V1, PUSH),
    ("ListTaskPushNotificationConfigs", Dialect::V1, PUSH),
    ("DeleteTaskPushNotificationConfig", Dialect::V1, PUSH),
    ("GetExtendedAgentCard", Dialect::V1, EXTENDED_CARD),
    ("message/send", Dialect::V03, Op::Send),
    ("tasks/get", Dialect::V03, Op::Get),
    ("tasks/cancel", Dialect::V03, Op::Cancel),
    ("message/stream", Dialect::V03, Op::SendStreaming),
    ("tasks/resubscribe", Dialect::V03, Op::Subscribe),
    ("tasks/pushNotificationConfig/set", Dialect::V03, PUSH),
    ("tasks/pushNotificationConfig/get", Dialect::V03, PUSH),
    ("tasks/pushNotificationConfig/list", Dialect::V03, PUSH),
    ("tasks/pushNotificationConfig/delete", Dialect::V03, PUSH),
    (
        "agent/getAuthenticatedExtendedCard",
        Dialect::V03,
        Op::Refused(
            EXTENDED_CARD_NOT_CONFIGURED,
            "AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED",
            "there is no authenticated extended Agent Card",
        ),
    ),
    ("tasks/send", Dialect::V01, Op::Send),
    ("tasks/sendSubscribe", Dialect::V01, LEGACY_STREAMING),
    ("tasks/pushNotification/set", Dialect::V01, PUSH),
    ("tasks/pushNotification/get", Dialect::V01, PUSH),
];

/// What the HTTP layer knows of a request besides its body.
#[derive(Clone, Debug, Default)]
pub struct RpcContext {
    /// The sender identity (the creator of the tasks it sends).
    pub identity: String,
    /// The `A2A-Version` header (`None`: absent).
    pub version: Option<String>,
    /// The extension URIs the request activates (`A2A-Extensions`, `X-A2A-Extensions`).
    pub extensions: Vec<String>,
    /// An extension every request must activate (`--require-signatures`).
    pub required_extension: Option<String>,
    /// Deepest JSON nesting accepted.
    pub max_depth: usize,
}

/// The answer to a request: one JSON-RPC response, or a stream of them.
#[derive(Debug)]
pub enum Answer {
    /// One response object.
    Reply(Value),
    /// A stream (`stream.rs`) answering the request `id` in `dialect`.
    Stream {
        /// The request's id, in every event.
        id: Value,
        /// The version the events are shaped in.
        dialect: Dialect,
        /// The task followed.
        opened: Box<Opened>,
    },
}

fn reply(id: &Value, outcome: Result<Value, RpcError>, dialect: Dialect) -> Answer {
    Answer::Reply(match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(e) => json!({ "jsonrpc": "2.0", "id": id, "error": e.to_json(dialect) }),
    })
}

/// The request's `id`: a string, a whole number or null (absent counts as null); anything else
/// makes the request invalid.
fn request_id(object: &serde_json::Map<String, Value>) -> Result<Value, RpcError> {
    match object.get("id") {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) => Ok(Value::String(s.clone())),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Value::Number(n.clone())),
        Some(_) => Err(RpcError::request(
            "invalid request: id must be a string, a whole number or null",
        )),
    }
}

/// Answers one JSON-RPC request body: one response object (batches are refused), or a stream
/// for the streaming methods (a refused streaming request is one response object too).
pub async fn handle(service: &Service, ctx: &RpcContext, body: &[u8]) -> Answer {
    // `None`: a version this service does not speak.
    let header = header_version(ctx.version.as_deref());
    // Errors before the method is known are shaped by the version asked for.
    let asked = header.unwrap_or(Dialect::V1);
    let null = Value::Null;
    if let Some(depth) = too_deep(body, ctx.max_depth) {
        let e = RpcError::new(
            crate::errors::INVALID_REQUEST,
            "NESTING_TOO_DEEP",
            format!(
                "invalid request: JSON nested deeper than {} levels (at least {depth})",
                ctx.max_depth
            ),
        );
        return reply(&null, Err(e), asked);
    }
    // Valid JSON holding a value that cannot be read (a number out of range) is no parse error:
    // the request is read without the member holding it, and refused where that member counts.
    let (value, unreadable) = match crate::json::parse(body) {
        Parsed::Whole(value) => (value, None),
        Parsed::Invalid(why) => {
            let e = RpcError::new(PARSE_ERROR, "PARSE_ERROR", format!("invalid JSON: {why}"));
            return reply(&null, Err(e), asked);
        }
        Parsed::Unreadable(found) => {
            let rest = found
                .member()
                .and_then(|member| crate::json::object_without(body, member));
            match rest {
                Some(rest) => (rest, Some(found)),
                None => {
                    let e = RpcError::request(format!("invalid request: {found}"));
                    return reply(&null, Err(e), asked);
                }
            }
        }
    };
    if let Some(key) = crate::json::repeated_key(body) {
        let e = RpcError::new(
            crate::errors::INVALID_REQUEST,
            "DUPLICATE_KEY",
            format!("invalid request: the key {key:?} appears twice in one object"),
        );
        return reply(&null, Err(e), asked);
    }
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "batch requests are not supported"
        } else {
            "a request is a JSON object"
        };
        return reply(&null, Err(RpcError::request(what)), asked);
    };
    let id = match (&unreadable, request_id(object)) {
        (Some(found), _) if found.member() == Some("id") => {
            let e = RpcError::request(format!(
                "invalid request: {found}; id must be a string, a whole number or null"
            ));
            return reply(&null, Err(e), asked);
        }
        (_, Ok(id)) => id,
        (_, Err(e)) => return reply(&null, Err(e), asked),
    };
    // Outside the parameters, such a value makes the request invalid.
    if let Some(found) = &unreadable
        && found.member() != Some("params")
    {
        let e = RpcError::request(format!("invalid request: {found}"));
        return reply(&id, Err(e), asked);
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let e = RpcError::request("invalid request: jsonrpc must be exactly \"2.0\"");
        return reply(&id, Err(e), asked);
    }
    let method = match object.get("method") {
        Some(Value::String(m)) if !m.is_empty() => m.as_str(),
        _ => {
            let e = RpcError::request("invalid request: method must be a non-empty string");
            return reply(&id, Err(e), asked);
        }
    };
    let dialect = match header {
        Some(d) => d,
        None => {
            let e = RpcError::new(
                VERSION_NOT_SUPPORTED,
                "VERSION_NOT_SUPPORTED",
                format!(
                    "A2A-Version {:?} is not supported; supported: {}",
                    ctx.version.as_deref().unwrap_or(""),
                    SUPPORTED_VERSIONS.join(", ")
                ),
            )
            .with("supportedVersions", SUPPORTED_VERSIONS.join(","));
            return reply(&id, Err(e), asked);
        }
    };
    if let Some(uri) = &ctx.required_extension
        && !ctx.extensions.iter().any(|e| e == uri)
    {
        let header = if dialect == Dialect::V1 {
            "A2A-Extensions"
        } else {
            "X-A2A-Extensions"
        };
        let e = RpcError::new(
            EXTENSION_REQUIRED,
            "EXTENSION_SUPPORT_REQUIRED",
            format!("this agent requires the extension {uri}: name it in the {header} header"),
        )
        .with("extension", uri.clone());
        return reply(&id, Err(e), dialect);
    }
    let Some(&(_, belongs, op)) = METHODS.iter().find(|(name, _, _)| *name == method) else {
        let e = RpcError::new(
            METHOD_NOT_FOUND,
            "METHOD_NOT_FOUND",
            format!("method not found: {method}"),
        );
        return reply(&id, Err(e), dialect);
    };
    // 0.1's tasks/send goes with the 0.3 methods (0.1 clients send no header).
    let speaks = if belongs == Dialect::V01 {
        Dialect::V03
    } else {
        belongs
    };
    if speaks != dialect {
        let e = RpcError::new(
            VERSION_NOT_SUPPORTED,
            "VERSION_NOT_SUPPORTED",
            format!(
                "{method} is an A2A {} method but the request says A2A-Version {} (an absent \
                 or empty header means 0.3)",
                speaks.as_str(),
                dialect.as_str()
            ),
        )
        .with("supportedVersions", SUPPORTED_VERSIONS.join(","));
        return reply(&id, Err(e), dialect);
    }
    if let Some(found) = &unreadable {
        // In the parameters (the only place left): the member is named from within them.
        let e = match found.field(1).as_str() {
            "" => RpcError::param("params", format!("is {}", found.what)),
            field => RpcError::param(field, format!("is {}", found.what)),
        };
        return reply(&id, Err(e), belongs);
    }
    let empty = Value::Object(serde_json::Map::new());
    let params = match object.get("params") {
        None | Some(Value::Null) => &empty,
        Some(p @ Value::Object(_)) => p,
        Some(_) => {
            let e = RpcError::param("params", "must be an object (named parameters)");
            return reply(&id, Err(e), belongs);
        }
    };
    let sender = ctx.identity.as_str();
    let run = async {
        let streaming = match op {
            Op::Send => {
                return service
                    .send(sender, belongs, params)
                    .await
                    .map(Outcome::Reply);
            }
            Op::Get => {
                return service
                    .get(sender, belongs, params)
                    .await
                    .map(Outcome::Reply);
            }
            Op::Cancel => {
                return service
                    .cancel(sender, belongs, params)
                    .await
                    .map(Outcome::Reply);
            }
            Op::List => return service.list(sender, params).await.map(Outcome::Reply),
            Op::Refused(code, reason, message) => return Err(RpcError::new(code, reason, message)),
            Op::SendStreaming => service.send_streaming(sender, belongs, params).await,
            Op::Subscribe => service.subscribe(sender, belongs, params).await,
        };
        streaming.map(|opened| Outcome::Stream(Box::new(opened)))
    };
    let outcome = CatchPanic::new(run).await.unwrap_or_else(|()| {
        Err(RpcError::new(
            INTERNAL_ERROR,
            "INTERNAL_ERROR",
            "internal error: the request failed unexpectedly (a panic, caught)",
        ))
    });
    match outcome {
        Ok(Outcome::Reply(result)) => reply(&id, Ok(result), belongs),
        Ok(Outcome::Stream(opened)) => Answer::Stream {
            id,
            dialect: belongs,
            opened,
        },
        Err(e) => reply(&id, Err(e), belongs),
    }
}

/// What a method answers with.
enum Outcome {
    Reply(Value),
    Stream(Box<Opened>),
}
