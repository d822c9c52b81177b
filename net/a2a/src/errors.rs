//! The service's refusals: JSON-RPC errors (standard and A2A codes, each with a stable reason)
//! and the HTTP-level ones (`{"error":{"code","message"}}` with a stable scratchpad error code).

use serde_json::{Map, Value, json};

use crate::dialect::Dialect;

/// JSON-RPC: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request object (and: nesting deeper than the limit).
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the parameters are invalid.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the service failed.
pub const INTERNAL_ERROR: i64 = -32603;
/// A2A `TaskNotFoundError`.
pub const TASK_NOT_FOUND: i64 = -32001;
/// A2A `TaskNotCancelableError`.
pub const TASK_NOT_CANCELABLE: i64 = -32002;
/// A2A `PushNotificationNotSupportedError`.
pub const PUSH_NOT_SUPPORTED: i64 = -32003;
/// A2A `UnsupportedOperationError`.
pub const UNSUPPORTED_OPERATION: i64 = -32004;
/// A2A 0.3 `AuthenticatedExtendedCardNotConfiguredError` (1.0: `ExtendedAgentCardNotConfigured`).
pub const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
/// A2A `ExtensionSupportRequiredError`.
pub const EXTENSION_REQUIRED: i64 = -32008;
/// A2A `VersionNotSupportedError`.
pub const VERSION_NOT_SUPPORTED: i64 = -32009;

/// The domain of the `google.rpc.ErrorInfo` detail of 1.0 errors.
const ERROR_DOMAIN: &str = "agent-intercom";

/// A JSON-RPC error: its code, a message for people, a stable reason for programs (the
/// `ErrorInfo.reason` of 1.0, `data.reason` otherwise) and details.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// What went wrong.
    pub message: String,
    /// A stable name of the refusal (`TASK_NOT_FOUND`, `MESSAGE_ID_REUSED` ...).
    pub reason: &'static str,
    /// Details (string values, as `ErrorInfo.metadata` requires).
    pub metadata: Vec<(&'static str, String)>,
    /// The parameter at fault, for `-32602`.
    pub field: Option<String>,
}

impl RpcError {
    /// An error of `code` with a reason and a message.
    pub fn new(code: i64, reason: &'static str, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            reason,
            metadata: Vec::new(),
            field: None,
        }
    }

    /// `-32602` naming the parameter at fault.
    pub fn param(field: impl Into<String>, message: impl Into<String>) -> RpcError {
        let field = field.into();
        RpcError {
            code: INVALID_PARAMS,
            message: format!("invalid params: {field}: {}", message.into()),
            reason: "INVALID_PARAMS",
            metadata: Vec::new(),
            field: Some(field),
        }
    }

    /// `-32600`.
    pub fn request(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_REQUEST, "INVALID_REQUEST", message)
    }

    /// `-32603`: the service failed (the cause's stable code and message are kept).
    pub fn internal(error: &agent_intercom_core::Error) -> RpcError {
        RpcError::new(
            INTERNAL_ERROR,
            "INTERNAL_ERROR",
            format!("internal error: {} [{}]", error.message(), error.code()),
        )
        .with("code", error.code().as_str())
    }

    /// `-32001` for the task `id`.
    pub fn task_not_found(id: &str) -> RpcError {
        RpcError::new(
            TASK_NOT_FOUND,
            "TASK_NOT_FOUND",
            format!("task not found: {id}"),
        )
        .with("taskId", id)
    }

    /// The error with one more detail.
    pub fn with(mut self, key: &'static str, value: impl Into<String>) -> RpcError {
        self.metadata.push((key, value.into()));
        self
    }

    /// The `error` member of a response, in the shape of `dialect` (1.0: `data` is an array of
    /// typed details; before: an object).
    pub fn to_json(&self, dialect: Dialect) -> Value {
        let mut metadata = Map::new();
        for (k, v) in &self.metadata {
            metadata.insert((*k).to_string(), Value::String(v.clone()));
        }
        let data = match dialect {
            Dialect::V1 => {
                let mut details = vec![json!({
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": self.reason,
                    "domain": ERROR_DOMAIN,
                    "metadata": metadata,
                })];
                if let Some(field) = &self.field {
                    details.push(json!({
                        "@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [{ "field": field, "description": self.message }],
                    }));
                }
                Value::Array(details)
            }
            Dialect::V03 | Dialect::V01 => {
                let mut data = Map::new();
                data.insert("reason".into(), Value::String(self.reason.into()));
                if let Some(field) = &self.field {
                    data.insert("field".into(), Value::String(field.clone()));
                }
                data.extend(metadata);
                Value::Object(data)
            }
        };
        json!({ "code": self.code, "message": self.message, "data": data })
    }
}

/// The body of an HTTP-level refusal: `{"error":{"code":"<STABLE_CODE>","message":...}}`.
pub fn http_error_body(code: agent_intercom_core::ErrorCode, message: &str) -> Value {
    json!({ "error": { "code": code.as_str(), "message": message } })
}
