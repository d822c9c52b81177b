//! HTTP Message Signatures (RFC 9421) with Ed25519, over structured fields (RFC 9651, on
//! `sfv`), with `Content-Digest` (RFC 9530: `sha-256`, `sha-512`).
//!
//! Two layers:
//!
//! * the RFC itself: component identifiers and their values in a neutral [`Request`] /
//!   [`Response`] ([`Component`], [`signature_base`]), the `Signature-Input` and `Signature`
//!   fields ([`parse_signature_input`], [`parse_signature`], [`SignatureParams::to_field`]),
//!   Ed25519 keys ([`PublicKey`], [`SigningKey`]), and [`sign`] / [`verify`] of one label;
//! * a [`Profile`]: what an application requires (components, parameters, tag, windows), with
//!   [`sign_request`] / [`verify_request`] and [`sign_response`] / [`verify_response`], whose
//!   every refusal has one stable code (`SIGNATURE_MISSING`, `SIGNATURE_MALFORMED`,
//!   `CONTENT_DIGEST_MISMATCH`, `UNKNOWN_SIGNING_KEY`, `SIGNATURE_INVALID`,
//!   `SIGNATURE_EXPIRED`, `SIGNATURE_NOT_YET_VALID`).
//!
//! No I/O and no clock: the caller gives the time, the nonce and the key lookup, and remembers
//! the nonce a verification returns (`Store::remember_nonce("http", ...)`). The profile of the
//! A2A service, byte for byte, and the reasons for each choice: `docs/http-signatures.md`.
//!
//! ```
//! use agent_intercom_core::httpsig::{self, Profile, Request, SignInput, SigningKey};
//!
//! let key = SigningKey::from_seed(&[7; 32]).unwrap();
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#;
//! let mut request = Request::new("POST", "https://peer.example/a2a")
//!     .unwrap()
//!     .with_header("Content-Type", "application/json");
//! let input = SignInput { key: &key, keyid: "k1", created: 1_700_000_000,
//!     expires: 1_700_000_060, nonce: "bm9uY2Utb2YtMTYtYnl0ZQ" };
//! let profile = Profile::a2a_request();
//! httpsig::sign_request(&profile, &request, body, &input).unwrap().apply(&mut request.headers);
//! let lookup = |id: &str| (id == "k1").then(|| key.public_key());
//! let ok = httpsig::verify_request(&profile, &request, body, 1_700_000_001_000, lookup).unwrap();
//! assert_eq!(ok.nonce.as_deref(), Some("bm9uY2Utb2YtMTYtYnl0ZQ"));
//! ```

mod component;
mod digest;
mod keys;
mod message;
pub mod ops;
mod params;
mod profile;
mod sf;
#[cfg(test)]
mod tests;

pub use component::{Component, ComponentParam, DERIVED};
pub use digest::{DigestAlgorithm, check_content_digest, content_digest};
pub use keys::{PublicKey, SigningKey};
pub use message::{Headers, Message, Request, Response};
pub use params::{
    Param, SignatureParams, parse_signature, parse_signature_input, signature_base, signature_field,
};
pub use profile::{
    PARAM_ORDER, Profile, SignInput, SignedHeaders, Verified, sign_request, sign_response,
    verify_request, verify_response,
};

use crate::error::{Error, ErrorCode};

/// The tag of the outbound line's signatures, requests and responses alike
/// ([`Profile::line_request`], [`Profile::line_response`]); also the `protocol` of an enrolled
/// peer key record.
pub const LINE_TAG: &str = "rfc9421-ed25519@1";

/// The URI of the A2A extension the outbound line's requests declare in `A2A-Extensions` (and a
/// peer lists as required in its card): requests and responses signed with
/// [`Profile::line_request`] and [`Profile::line_response`].
pub const LINE_EXTENSION_URI: &str =
    "https://github.com/ctliz/agent-intercom/ext/line-rfc9421-ed25519/v1";

/// The URI of the A2A extension a service advertises in its Agent Card
/// (`capabilities.extensions[].uri`) when it requires requests signed with
/// [`Profile::a2a_request`]. A2A extension ids are URIs and a breaking change gets a new one.
pub const EXTENSION_URI: &str = "https://github.com/ctliz/agent-intercom/ext/rfc9421-ed25519/v1";

/// The label of the one signature the A2A profiles carry.
pub const LABEL: &str = "a2a";

/// The `tag` of an A2A request signature.
pub const REQUEST_TAG: &str = "agent-intercom-a2a@1";

/// The `tag` of an A2A response signature (another tag, so that no request signature can be
/// taken for a response's, whatever the components).
pub const RESPONSE_TAG: &str = "agent-intercom-a2a-response@1";

/// The one algorithm (RFC 9421 §3.3.6).
pub const ALGORITHM: &str = "ed25519";

/// The length of an Ed25519 signature.
pub const SIGNATURE_BYTES: usize = 64;

/// The longest `Signature-Input`, `Signature` or `Content-Digest` field (its lines combined)
/// read; a longer one is refused before it is parsed.
pub const MAX_SIGNATURE_FIELD_BYTES: usize = 8192;

/// The most components one signature may cover.
pub const MAX_COMPONENTS: usize = 64;

/// The longest key id (what the nonce store keeps).
pub const MAX_KEYID_BYTES: usize = 256;

/// Signs `message` with `params` under `label`: answers the `Signature-Input` and `Signature`
/// field values and the base (`INVALID_ARGUMENT` when the base cannot be built).
pub fn sign(
    message: Message<'_>,
    label: &str,
    params: &SignatureParams,
    key: &SigningKey,
) -> Result<(String, String, String), Error> {
    let base = signature_base(message, params)?;
    let signature = key.sign(base.as_bytes());
    Ok((
        params.to_field(label)?,
        signature_field(label, &signature)?,
        base,
    ))
}

/// Verifies the signature labelled `label` of `message` with `key`, and nothing else: no
/// profile, no time, no digest (for the RFC's examples and for callers with their own rules).
/// Answers its parameters and base; refusals as [`verify_request`] codes them.
pub fn verify(
    message: Message<'_>,
    label: &str,
    key: &PublicKey,
) -> Result<(SignatureParams, String), Error> {
    let inputs = parse_signature_input(message.headers())?;
    let signatures = parse_signature(message.headers())?;
    let params = inputs
        .into_iter()
        .find(|(l, _)| l == label)
        .map(|(_, p)| p)
        .ok_or_else(|| malformed(format!("no Signature-Input {label}")))?;
    let signature = signatures
        .into_iter()
        .find(|(l, _)| l == label)
        .map(|(_, s)| s)
        .ok_or_else(|| malformed(format!("no Signature {label}")))?;
    if signature.len() != SIGNATURE_BYTES {
        return Err(malformed(format!(
            "the signature is {} bytes; an Ed25519 signature is {SIGNATURE_BYTES}",
            signature.len()
        )));
    }
    if params.alg().is_some_and(|a| a != ALGORITHM) {
        return Err(malformed("the signature's alg is not ed25519"));
    }
    let base =
        params::base(message, &params).map_err(|e| Error::new(ErrorCode::SignatureInvalid, e))?;
    if !key.verify(base.as_bytes(), &signature) {
        return Err(Error::new(
            ErrorCode::SignatureInvalid,
            "the signature does not verify",
        ));
    }
    Ok((params, base))
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

fn malformed(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::SignatureMalformed, message)
}

fn missing(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::SignatureMissing, message)
}

fn digest_mismatch(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::ContentDigestMismatch, message)
}
