//! Signed requests (`--require-signatures`): every `POST /a2a` must carry an RFC 9421 signature
//! by an enrolled key (the profile of docs/http-signatures.md); an unsigned or badly signed one
//! is refused with HTTP 401 and the signature's stable code before it reaches JSON-RPC. One
//! layer, between the intake (token, content type, body) and the handler; a verified request
//! goes on with the identity `a2a:key:<key id>`.

use agent_intercom_core::ErrorCode;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use crate::http::{AppState, refuse};

/// Refuses every request without a valid signature when signatures are required.
pub async fn require_signature(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if state.required_extension.is_none() {
        return next.run(request).await;
    }
    let headers = request.headers();
    if !headers.contains_key("signature") || !headers.contains_key("signature-input") {
        return refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::SignatureMissing,
            "this service requires requests signed with RFC 9421 (Signature and Signature-Input; \
             docs/http-signatures.md)",
        );
    }
    // Until the RFC 9421 verifier (agent_intercom_core::httpsig) is part of this build, no
    // signature can be checked, so none is accepted: the layer fails closed.
    refuse(
        StatusCode::UNAUTHORIZED,
        ErrorCode::SignatureInvalid,
        "this build cannot verify RFC 9421 signatures; the request is refused",
    )
}
