//! `POST /v1/a2a/handoff`: a signed transport envelope (docs/envelope.md), verified and landed
//! in the scratchpad by [`crate::handoff::accept`] on the store thread, at the store's time,
//! with the enrolled keys.
//!
//! - 201 and what landed (`Landed::to_json`): accepted;
//! - 401 and the code: `SIGNATURE_MISSING`, `SIGNATURE_MALFORMED`, `UNKNOWN_SIGNING_KEY`,
//!   `SIGNATURE_INVALID`, `SIGNATURE_EXPIRED`, `SIGNATURE_NOT_YET_VALID`, `REPLAYED`;
//! - 413 and the code: `ENVELOPE_TOO_LARGE` (the intake's limit, or the envelope's 2 MiB),
//!   `CONTENT_TOO_LARGE` (the store's limit of a message);
//! - 400 and the code: any other refusal of the envelope or its payload (`ENVELOPE_MALFORMED`,
//!   `UNSUPPORTED_FORMAT_VERSION`, the scratchpad's rules: `INVALID_ARGUMENT`, `INVALID_TTL`,
//!   `PRIVATE_WITHOUT_RECIPIENT`);
//! - 500 and the code: the store or the keys directory failed (`STORE_IO`, `STORE_CORRUPT`,
//!   `STORE_NEWER_SCHEMA`, `INTERNAL`).

use agent_intercom_core::ErrorCode;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::app::{AppState, Buffered, refuse};

/// The status of a refused handoff.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::SignatureMissing
        | ErrorCode::SignatureMalformed
        | ErrorCode::UnknownSigningKey
        | ErrorCode::SignatureInvalid
        | ErrorCode::SignatureExpired
        | ErrorCode::SignatureNotYetValid
        | ErrorCode::Replayed
        | ErrorCode::ContentDigestMismatch => StatusCode::UNAUTHORIZED,
        ErrorCode::EnvelopeTooLarge | ErrorCode::ContentTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::StoreIo
        | ErrorCode::StoreCorrupt
        | ErrorCode::StoreNewerSchema
        | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// Verifies and lands the envelope of the request's body.
pub async fn handoff_route(State(state): State<AppState>, request: Request) -> Response {
    let body = request
        .extensions()
        .get::<Buffered>()
        .map(|b| b.0.clone())
        .unwrap_or_default();
    let keys = state.keys.clone();
    let clock = state.clock.clone();
    let landed = state
        .service
        .store
        .call(move |store| crate::handoff::accept(store, keys.as_ref(), &body, clock.now_ms()))
        .await;
    match landed {
        Ok(landed) => (StatusCode::CREATED, axum::Json(landed.to_json())).into_response(),
        Err(e) => {
            let status = status_of(e.code());
            let message = if status == StatusCode::INTERNAL_SERVER_ERROR {
                format!("the envelope could not be landed: {}", e.message())
            } else {
                format!("the envelope is refused: {}", e.message())
            };
            refuse(status, e.code(), &message)
        }
    }
}
