//! What the request handlers share: the application state (with the request limits and the
//! signature settings) and the shape of an HTTP-level refusal. A leaf below the router
//! (`http.rs`) and the handlers it routes to (`signed.rs`, `landing.rs`).

use std::sync::Arc;
use std::time::Duration;

use agent_intercom_core::ErrorCode;
use agent_intercom_core::envelope::Keyring;
use agent_intercom_scratchpad::Clock;
use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::auth::Token;
use crate::errors::http_error_body;
use crate::ops::Service;

/// The limits of requests.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest body of `POST /a2a` (bytes).
    pub rpc_body_bytes: usize,
    /// Largest body of `POST /v1/a2a/handoff` (bytes): an envelope of 2 MB and some margin.
    pub handoff_body_bytes: usize,
    /// Deepest JSON nesting of a JSON-RPC request.
    pub max_depth: usize,
    /// Most request header fields.
    pub max_headers: usize,
    /// Largest total size of the request header fields (names and values, bytes).
    pub header_bytes: usize,
    /// How long a connection may take to deliver a request head, from its accept and from each
    /// response (then it is closed without a response).
    pub head_timeout: Duration,
    /// How long a request body may take to arrive.
    pub body_timeout: Duration,
    /// How long a request may take, from its headers to its answer.
    pub request_timeout: Duration,
    /// Most connections at once.
    pub max_connections: usize,
    /// After a refusal that leaves the request body unread (`Connection: close`), how long the
    /// service goes on taking and discarding what the client sends, so that the client, still
    /// sending, is not reset before it reads the answer.
    pub linger_time: Duration,
    /// How many bytes it takes and discards so, at most.
    pub linger_bytes: usize,
    /// Most streams open at once (`SendStreamingMessage`, `SubscribeToTask`, `message/stream`,
    /// `tasks/resubscribe`), all clients together. A stream holds its connection, so this must
    /// be below `max_connections`: streams never hold every connection.
    pub max_streams: usize,
    /// Most streams one client (sender identity) has open at once.
    pub max_streams_per_client: usize,
    /// The longest a stream stays silent: then it sends a comment line, so that clients and
    /// proxies with a read timeout keep it (below the 5 s default of the Python SDK's client).
    pub stream_keep_alive: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rpc_body_bytes: 1024 * 1024,
            handoff_body_bytes: 2 * 1024 * 1024 + 64 * 1024,
            max_depth: 64,
            max_headers: 64,
            header_bytes: 16 * 1024,
            head_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_connections: 256,
            linger_time: Duration::from_secs(5),
            linger_bytes: 64 * 1024 * 1024,
            max_streams: 64,
            max_streams_per_client: 16,
            stream_keep_alive: Duration::from_secs(4),
        }
    }
}

/// What every request handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The A2A operations.
    pub service: Service,
    /// The Agent Card, rendered once.
    pub card: Arc<Value>,
    /// The bearer token required of every POST, if any.
    pub token: Option<Token>,
    /// Request limits.
    pub limits: Limits,
    /// The extension every JSON-RPC request must activate, if any.
    pub required_extension: Option<String>,
    /// The signature check of `POST /a2a` (`--require-signatures`), if required.
    pub signing: Option<Signing>,
    /// The enrolled keys (handoffs).
    pub keys: Keys,
    /// The store's clock (handoffs are checked at its time).
    pub clock: Arc<dyn agent_intercom_scratchpad::Clock>,
}

/// The identity a request was authenticated as (set by the intake layer, replaced by the
/// signature layer).
#[derive(Clone, Debug)]
pub struct Identity(pub String);

/// A request body read in full by the intake layer.
#[derive(Clone, Debug)]
pub struct Buffered(pub Bytes);

/// An HTTP-level refusal with the body `{"error":{"code","message"}}`. A 401 says which
/// authentication failed: `WWW-Authenticate: Bearer` for the token (`ACCESS_DENIED`),
/// `Signature` for a signature (of the request, or of a handoff's envelope).
pub fn refuse(status: StatusCode, code: ErrorCode, message: &str) -> Response {
    let mut response = (status, axum::Json(http_error_body(code, message))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        let scheme = if code == ErrorCode::AccessDenied {
            "Bearer"
        } else {
            "Signature"
        };
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(scheme));
    }
    response
}

/// Enrolled keys: the keys directory (`--keys DIR`, [`crate::keys::KeyDir`]), shared by the
/// threads of the service.
pub type Keys = Arc<dyn Keyring + Send + Sync>;

/// What the signature layer (`signed.rs`) needs besides the store.
#[derive(Clone)]
pub struct Signing {
    /// The public base URL (`scheme://authority[/prefix]`, no trailing slash): the target URI is
    /// this and the request's path and query.
    pub base_url: String,
    /// The enrolled keys (their Ed25519 public keys, by key id).
    pub keys: Keys,
    /// The store's clock: the verification time, so that the nonce store's expiry agrees.
    pub clock: Arc<dyn Clock>,
}
