//! Signed requests (`--require-signatures`): every `POST /a2a` must carry an RFC 9421 signature
//! by an enrolled Ed25519 key, in the profile of docs/http-signatures.md
//! ([`Profile::a2a_request`]). One layer, between the intake (token, content type, body) and the
//! JSON-RPC handler:
//!
//! 1. the request is rebuilt as the signer saw it: the method, the target URI from the service's
//!    public scheme and authority (`--public-url`, or the bound address) with the request's path
//!    and query, the header lines as received, the body as read;
//! 2. [`verify_request`] checks it at the time of the store's clock, resolving key ids through
//!    the enrolled keys (refusals: HTTP 401 with the signature's stable code);
//! 3. its nonce is remembered in the store under the scope `http` until the signature could no
//!    longer be accepted (a replay: 401 `REPLAYED`);
//! 4. the request goes on with the identity `a2a:key:<key id>`.
//!
//! Without `--require-signatures` the layer is not there: signature headers are not looked at.

use agent_intercom_core::httpsig::{self, Profile, PublicKey, verify_request};
use agent_intercom_core::{Error, ErrorCode};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::app::{AppState, Buffered, Identity, refuse};
pub use crate::app::{Keys, Signing};
use crate::auth::KEY_PREFIX;

/// The scope of the nonces of signed requests in the store's nonce table.
pub const NONCE_SCOPE: &str = "http";

/// The `Accept-Signature` field (RFC 9421 §5.1) of a refusal: what the service asks for.
fn accept_signature() -> String {
    let profile = Profile::a2a_request();
    let components: Vec<String> = profile.components.iter().map(|c| c.serialize()).collect();
    format!(
        "{}=({});created;expires;nonce;keyid;alg=\"{}\";tag=\"{}\"",
        profile.label,
        components.join(" "),
        httpsig::ALGORITHM,
        profile.tag
    )
}

/// A 401 for a signature refusal, with `WWW-Authenticate: Signature` and `Accept-Signature`.
fn unauthorized(code: ErrorCode, message: &str) -> Response {
    let mut response = refuse(StatusCode::UNAUTHORIZED, code, message);
    if let Ok(value) = HeaderValue::from_str(&accept_signature()) {
        response.headers_mut().insert("accept-signature", value);
    }
    response
}

/// The request as the signer saw it, or why it cannot be rebuilt.
fn rebuild(base_url: &str, request: &Request) -> Result<httpsig::Request, String> {
    let path = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
    let target = format!("{base_url}{path}");
    let mut rebuilt = httpsig::Request::new(request.method().as_str(), &target)
        .map_err(|e| format!("the target URI {target:?} cannot be read: {}", e.message()))?;
    for (name, value) in request.headers() {
        rebuilt.headers.push(name.as_str(), value.as_bytes());
    }
    Ok(rebuilt)
}

/// What a verification came to.
enum Checked {
    Accepted(httpsig::Verified),
    Refused(Error),
    /// The enrolled keys could not be read.
    KeysFailed(Error),
}

fn check(signing: &Signing, request: &httpsig::Request, body: &[u8]) -> Checked {
    let failure = std::sync::Mutex::new(None::<Error>);
    let lookup = |keyid: &str| match signing.keys.ed25519_public_key(keyid) {
        Ok(Some(bytes)) => PublicKey::from_bytes(&bytes).ok(),
        Ok(None) => None,
        Err(e) => {
            if let Ok(mut slot) = failure.lock() {
                *slot = Some(e);
            }
            None
        }
    };
    let now_ms = signing.clock.now_ms();
    let outcome = verify_request(&Profile::a2a_request(), request, body, now_ms, lookup);
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Checked::KeysFailed(e);
    }
    match outcome {
        Ok(verified) => Checked::Accepted(verified),
        Err(e) => Checked::Refused(e),
    }
}

/// Refuses every request without a valid, fresh, first-seen signature when signatures are
/// required; a verified request goes on as `a2a:key:<key id>`.
pub async fn require_signature(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(signing) = state.signing.clone() else {
        return next.run(request).await;
    };
    let rebuilt = match rebuild(&signing.base_url, &request) {
        Ok(rebuilt) => rebuilt,
        Err(why) => return refuse(StatusCode::BAD_REQUEST, ErrorCode::InvalidRequest, &why),
    };
    let body = request
        .extensions()
        .get::<Buffered>()
        .map(|b| b.0.clone())
        .unwrap_or_default();
    // Key lookups read files: off the async threads.
    let checked = tokio::task::spawn_blocking(move || check(&signing, &rebuilt, &body)).await;
    let verified = match checked {
        Ok(Checked::Accepted(verified)) => verified,
        Ok(Checked::Refused(e)) => return unauthorized(e.code(), e.message()),
        Ok(Checked::KeysFailed(e)) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                e.code(),
                &format!(
                    "the enrolled keys could not be read, so the signature cannot be checked \
                     (refused): {}",
                    e.message()
                ),
            );
        }
        Err(_) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                "the signature check failed unexpectedly (refused)",
            );
        }
    };
    let Some(nonce) = verified.nonce.clone() else {
        // The profile requires a nonce; a verification without one is refused all the same.
        return unauthorized(ErrorCode::SignatureMalformed, "the signature has no nonce");
    };
    let keyid = verified.keyid.clone();
    let until = verified.replay_until_ms;
    let remembered = state
        .service
        .store
        .call(move |store| store.remember_nonce(NONCE_SCOPE, &keyid, &nonce, until))
        .await;
    match remembered {
        Ok(()) => {}
        Err(e) if matches!(e.code(), ErrorCode::Replayed | ErrorCode::SignatureExpired) => {
            return unauthorized(e.code(), e.message());
        }
        Err(e) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                e.code(),
                &format!(
                    "the nonce could not be recorded, so a replay cannot be ruled out \
                     (refused): {}",
                    e.message()
                ),
            );
        }
    }
    let (mut parts, body) = request.into_parts();
    parts
        .extensions
        .insert(Identity(format!("{KEY_PREFIX}{}", verified.keyid)));
    next.run(Request::from_parts(parts, body)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_signature_field_names_the_profile() {
        assert_eq!(
            accept_signature(),
            "a2a=(\"@method\" \"@target-uri\" \"content-type\" \"content-digest\");created;\
             expires;nonce;keyid;alg=\"ed25519\";tag=\"agent-intercom-a2a@1\""
        );
    }
}
