//! The HTTP face: routes, and the layers every request passes (header limits, the request
//! timeout, caught panics; for a POST also the bearer token, the content type and the body read
//! within its size limit and time).

use std::time::Duration;

use agent_intercom_core::ErrorCode;
use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

pub use crate::app::{AppState, Buffered, Identity, Limits, refuse};
use crate::auth::{ANONYMOUS, BEARER};
use crate::errors::INTERNAL_ERROR;
use crate::listener::Conn;
use crate::panics::CatchPanic;
use crate::rpc::{self, Answer, RpcContext};
use crate::stream::{self, Sending};

/// The routes and their layers.
pub fn router(state: AppState) -> Router {
    let rpc_limit = state.limits.rpc_body_bytes;
    Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/.well-known/agent.json", get(card))
        .route("/v1/a2a/agent-card", get(card))
        .route(
            "/a2a",
            post(rpc_route)
                .layer(from_fn_with_state(
                    state.clone(),
                    crate::signed::require_signature,
                ))
                .layer(from_fn_with_state((state.clone(), rpc_limit), intake)),
        )
        .route(
            "/v1/a2a/handoff",
            post(crate::landing::handoff_route).layer(from_fn_with_state(
                (state.clone(), state.limits.handoff_body_bytes),
                intake,
            )),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

async fn card(State(state): State<AppState>) -> Response {
    let mut response = axum::Json(state.card.as_ref().clone()).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=60"),
    );
    response
}

async fn not_found(request: Request) -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        ErrorCode::NotFound,
        &format!("no such route: {}", request.uri().path()),
    )
}

async fn method_not_allowed(request: Request) -> Response {
    let allowed = if request.uri().path().starts_with("/.well-known/")
        || request.uri().path() == "/v1/a2a/agent-card"
    {
        "GET"
    } else {
        "POST"
    };
    let mut response = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::InvalidRequest,
        &format!("{} is not allowed here; use {allowed}", request.method()),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allowed));
    response
}

/// Header limits, the request timeout and caught panics, for every request; and a refusal that
/// closes the connection (`Connection: close`, the body perhaps unread) has it closed gently.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let conn = request
        .extensions()
        .get::<ConnectInfo<Conn>>()
        .map(|info| info.0.clone());
    let response = guarded(state, request, next).await;
    if let Some(conn) = conn
        && response.headers().get(header::CONNECTION) == Some(&CLOSE)
        && !conn.is_streaming()
    {
        conn.linger();
    }
    response
}

const CLOSE: HeaderValue = HeaderValue::from_static("close");

async fn guarded(state: AppState, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let size: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if headers.len() > state.limits.max_headers || size > state.limits.header_bytes {
        return refuse(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ErrorCode::InvalidRequest,
            &format!(
                "request headers too large: at most {} fields and {} bytes",
                state.limits.max_headers, state.limits.header_bytes
            ),
        );
    }
    let rpc = request.uri().path() == "/a2a";
    let timeout = state.limits.request_timeout;
    match tokio::time::timeout(timeout, CatchPanic::new(next.run(request))).await {
        Ok(Ok(response)) => response,
        Ok(Err(())) if rpc => {
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": INTERNAL_ERROR,
                "message": "internal error: the request failed unexpectedly (a panic, caught)",
            }});
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
        }
        Ok(Err(())) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            "the request failed unexpectedly (a panic, caught)",
        ),
        Err(_) => closing(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Internal,
            &format!(
                "the request was not answered within {} (the request timeout, \
                 --request-timeout) and was abandoned; what it asked may still have been done: \
                 repeating a send with the same messageId answers its task without storing it \
                 twice, and a handoff already landed is refused as REPLAYED",
                shown(timeout)
            ),
        )),
    }
}

/// A duration for people: whole seconds, or milliseconds below a second or between seconds.
pub fn shown(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// The response with `Connection: close` (the rest of the request may not have been read: the
/// connection is then closed gently, [`guard`]).
fn closing(mut response: Response) -> Response {
    response.headers_mut().insert(header::CONNECTION, CLOSE);
    response
}

/// Whether a `Content-Type` names JSON (`application/json` or `application/a2a+json`, any
/// parameters).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence.eq_ignore_ascii_case("application/a2a+json")
}

/// Reads a body in full, refusing one over `limit` bytes or slower than `within`.
async fn read_body(body: Body, limit: usize, within: Duration) -> Result<Bytes, Response> {
    let too_large = || {
        closing(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::EnvelopeTooLarge,
            &format!("the request body is larger than {limit} bytes"),
        ))
    };
    let mut body = body;
    let read = async {
        let mut collected = Vec::new();
        while let Some(frame) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame = frame.map_err(|e| {
                refuse(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::InvalidRequest,
                    &format!("the request body could not be read: {e}"),
                )
            })?;
            if let Ok(data) = frame.into_data() {
                if collected.len() + data.len() > limit {
                    return Err(too_large());
                }
                collected.extend_from_slice(&data);
            }
        }
        Ok(Bytes::from(collected))
    };
    match tokio::time::timeout(within, read).await {
        Ok(result) => result,
        Err(_) => Err(closing(refuse(
            StatusCode::REQUEST_TIMEOUT,
            ErrorCode::InvalidRequest,
            &format!(
                "the request body did not arrive within {} (the body timeout); the request was \
                 not read and nothing was done: send it again, whole",
                shown(within)
            ),
        ))),
    }
}

/// For a POST: the bearer token (when one is required), a JSON content type, and the body read
/// within `limit` bytes; the request goes on with its body buffered and its identity.
pub async fn intake(
    State((state, limit)): State<(AppState, usize)>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let identity = match &state.token {
        Some(token) => {
            let authorization = request
                .headers()
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes);
            if !token.accepts(authorization) {
                // Answered before the body is read: the connection is not reused, so a pooling
                // client never sends its next request into a connection the server drops.
                return closing(refuse(
                    StatusCode::UNAUTHORIZED,
                    ErrorCode::AccessDenied,
                    "this service requires Authorization: Bearer <token>",
                ));
            }
            BEARER
        }
        None => ANONYMOUS,
    };
    if !is_json(request.headers()) {
        return closing(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::InvalidRequest,
            "Content-Type must be application/json",
        ));
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return closing(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::EnvelopeTooLarge,
            &format!("the request body is larger than {limit} bytes"),
        ));
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match read_body(body, limit, state.limits.body_timeout).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    parts.extensions.insert(Identity(identity.to_string()));
    parts.extensions.insert(Buffered(bytes.clone()));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The extension URIs a request activates (`A2A-Extensions`, and 0.3's `X-A2A-Extensions`).
fn extensions(headers: &HeaderMap) -> Vec<String> {
    ["a2a-extensions", "x-a2a-extensions"]
        .iter()
        .flat_map(|name| headers.get_all(*name))
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|uri| uri.trim().to_string())
        .filter(|uri| !uri.is_empty())
        .collect()
}

async fn rpc_route(State(state): State<AppState>, request: Request) -> Response {
    let conn = request
        .extensions()
        .get::<ConnectInfo<Conn>>()
        .map(|info| info.0.clone());
    let identity = request
        .extensions()
        .get::<Identity>()
        .map_or_else(|| ANONYMOUS.to_string(), |i| i.0.clone());
    let body = request
        .extensions()
        .get::<Buffered>()
        .map(|b| b.0.clone())
        .unwrap_or_default();
    let headers = request.headers();
    let version = headers.get("a2a-version").map(|v| match v.to_str() {
        Ok(text) => text.to_string(),
        Err(_) => "(not visible ASCII)".to_string(),
    });
    let activated = extensions(headers);
    let echo = state
        .required_extension
        .as_ref()
        .filter(|uri| activated.contains(uri))
        .and_then(|uri| HeaderValue::from_str(uri).ok());
    let ctx = RpcContext {
        identity,
        version,
        extensions: activated,
        required_extension: state.required_extension.clone(),
        max_depth: state.limits.max_depth,
    };
    let answer = rpc::handle(&state.service, &ctx, &body).await;
    let mut response = match answer {
        Answer::Reply(value) => axum::Json(value).into_response(),
        Answer::Stream {
            id,
            dialect,
            opened,
        } => {
            if let Some(conn) = &conn {
                conn.stream();
            }
            let sending = Sending {
                keep_alive: state.limits.stream_keep_alive,
                shutdown: state.service.shutdown.clone(),
            };
            stream::respond(id, dialect, *opened, sending)
        }
    };
    if let Some(uri) = echo {
        response.headers_mut().insert("a2a-extensions", uri);
    }
    response
}
