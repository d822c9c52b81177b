//! `TransportEnvelopeV1`: the signed, versioned wrapper that carries a message, a task, a handoff
//! bundle or a context package from one machine to another (docs/envelope.md).
//!
//! An envelope is one JSON object with exactly these members:
//!
//! ```text
//! {"format_version":1,"sent_at":"2026-05-01T12:00:00.000Z",
//!  "sender":{"agent_id":"..","agent_type":"..","daemon_fingerprint":"..","capabilities":[..]},
//!  "recipient":".." | null,"content_type":"a2a_message","payload":<JSON>,"metadata":{..},
//!  "nonce":"..","expires_at":"2026-05-01T12:10:00.000Z",
//!  "signature":{"kind":"ed25519" | "hmac-sha256","key_id":"..","value":"<base64>"}}
//! ```
//!
//! **What is signed**: the whole envelope without `signature.value` (so `signature.kind` and
//! `signature.key_id` are covered too), as the canonical frame ([`crate::canonical`]) of domain
//! [`SIGNING_DOMAIN`]: `agent-intercom-canonical-frame-v1:<L(domain)>:<domain>:<L(json)>:<json>`
//! with `json` the canonical JSON of that object. Canonical JSON has one text per value (sorted
//! keys, one escaping, integers only, no repeated key), every string is JSON-quoted and the frame
//! is length-prefixed, so two different envelopes never sign the same bytes. Unknown members are
//! refused, so nothing in an accepted envelope is left uncovered.
//!
//! **Keys**: Ed25519 (RFC 8032, verified strictly) with public keys enrolled by key id; or
//! HMAC-SHA256 whose key is derived from a stored secret with HKDF-SHA256 ([`keys::hmac_key`]:
//! salt [`HKDF_SALT`], info [`HKDF_INFO_PREFIX`] followed by the key id); the stored secret itself
//! never keys the MAC.
//!
//! **Verification** ([`verify`]) refuses with one stable code per refusal, checked in this order:
//!
//! 1. more than [`MAX_ENVELOPE_BYTES`] bytes of input: `ENVELOPE_TOO_LARGE` (before parsing);
//! 2. not UTF-8, not JSON, not canonical-JSON data (a fraction, a repeated key, nesting deeper
//!    than 128), not an object: `ENVELOPE_MALFORMED`;
//! 3. `format_version` missing or not an integer: `ENVELOPE_MALFORMED`; another integer:
//!    `UNSUPPORTED_FORMAT_VERSION`;
//! 4. an unknown member (at the top, in `sender` or in `signature`), a missing one or one of the
//!    wrong form, `expires_at` not after `sent_at` or more than [`MAX_LIFETIME_MS`] after it:
//!    `ENVELOPE_MALFORMED`, naming the member's path (`$.sender.agent_id`);
//! 5. no `signature`, `null`, or no or an empty `signature.value`: `SIGNATURE_MISSING`;
//! 6. `signature` not an object, a `kind` not in the list, a bad `key_id`, a `value` that is not
//!    canonical base64 of 64 (Ed25519) or 32 (HMAC-SHA256) bytes: `SIGNATURE_MALFORMED`;
//! 7. no key of that kind by that id in the [`Keyring`]: `UNKNOWN_SIGNING_KEY`;
//! 8. the signature does not verify: `SIGNATURE_INVALID`;
//! 9. `now >= expires_at`: `SIGNATURE_EXPIRED`;
//! 10. `sent_at > now + skew`: `SIGNATURE_NOT_YET_VALID`.
//!
//! Freshness is checked after the signature, so a forged time never yields anything but
//! `SIGNATURE_INVALID`. Replay is the caller's: it remembers `(key_id, nonce)` until
//! `expires_at` (the scratchpad's `Store::remember_nonce("envelope", ..)`, or a [`NonceSet`] in
//! memory) and refuses a second sight with `REPLAYED`.

pub mod keys;
pub mod ops;

mod fields;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

use ed25519_dalek::{Signature, Signer as _, VerifyingKey};
use hmac::{KeyInit, Mac};
use sha2::Sha256;

use crate::canonical::{self, Value};
use crate::error::{Error, ErrorCode};

pub use fields::{format_timestamp, parse_timestamp};
pub use keys::{Keyring, MemoryKeyring, Signer};

/// The `format_version` of this format.
pub const FORMAT_VERSION: i64 = 1;
/// The largest envelope accepted, in bytes of input (2 MiB): larger input is refused before it
/// is parsed.
pub const MAX_ENVELOPE_BYTES: usize = 2 * 1024 * 1024;
/// The longest an envelope may be valid: `expires_at` at most 24 hours after `sent_at`. It also
/// bounds how long a receiver keeps a nonce.
pub const MAX_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;
/// The clock skew allowed by default: `sent_at` up to 5 minutes ahead of the receiver's clock.
pub const DEFAULT_SKEW_MS: i64 = 5 * 60 * 1000;
/// The largest skew a caller may allow (1 hour).
pub const MAX_SKEW_MS: i64 = 60 * 60 * 1000;
/// The canonical-frame domain of the signing input.
pub const SIGNING_DOMAIN: &str = "agent-intercom-core/transport-envelope/v1";
/// The HKDF-SHA256 salt of HMAC keys.
pub const HKDF_SALT: &str = "agent-intercom-core/transport-envelope/v1/hkdf-salt";
/// The HKDF-SHA256 info of an HMAC key is this prefix followed by the key id (UTF-8).
pub const HKDF_INFO_PREFIX: &str = "agent-intercom-core/transport-envelope/v1/hmac-sha256-key:";
/// The longest identifier (agent id and type, daemon fingerprint, capability, recipient, key
/// id, nonce), in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// The shortest nonce, in bytes.
pub const MIN_NONCE_BYTES: usize = 16;
/// The most capabilities a sender may list.
pub const MAX_CAPABILITIES: usize = 64;
/// The shortest HMAC secret accepted, in bytes.
pub const MIN_HMAC_SECRET_BYTES: usize = 32;
/// The members of an envelope, in the order they are checked.
pub const MEMBERS: [&str; 10] = [
    "format_version",
    "sent_at",
    "sender",
    "recipient",
    "content_type",
    "payload",
    "metadata",
    "nonce",
    "expires_at",
    "signature",
];

/// What an envelope carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContentType {
    /// `handoff_bundle`.
    HandoffBundle,
    /// `context_package`.
    ContextPackage,
    /// `a2a_message`.
    A2aMessage,
    /// `a2a_task`.
    A2aTask,
}

impl ContentType {
    /// Every content type.
    pub const ALL: &'static [ContentType] = &[
        ContentType::HandoffBundle,
        ContentType::ContextPackage,
        ContentType::A2aMessage,
        ContentType::A2aTask,
    ];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ContentType::HandoffBundle => "handoff_bundle",
            ContentType::ContextPackage => "context_package",
            ContentType::A2aMessage => "a2a_message",
            ContentType::A2aTask => "a2a_task",
        }
    }

    /// The content type of this wire name.
    pub fn parse(name: &str) -> Option<ContentType> {
        ContentType::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == name)
    }
}

/// How an envelope is signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SignatureKind {
    /// `ed25519`: a 64-byte RFC 8032 signature.
    Ed25519,
    /// `hmac-sha256`: a 32-byte HMAC-SHA256 tag under an HKDF-derived key.
    HmacSha256,
}

impl SignatureKind {
    /// Every kind.
    pub const ALL: &'static [SignatureKind] = &[SignatureKind::Ed25519, SignatureKind::HmacSha256];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            SignatureKind::Ed25519 => "ed25519",
            SignatureKind::HmacSha256 => "hmac-sha256",
        }
    }

    /// The kind of this wire name.
    pub fn parse(name: &str) -> Option<SignatureKind> {
        SignatureKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == name)
    }

    /// The length of a signature value, in bytes.
    pub const fn value_len(self) -> usize {
        match self {
            SignatureKind::Ed25519 => 64,
            SignatureKind::HmacSha256 => 32,
        }
    }
}

/// Who sent an envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sender {
    /// The sending agent (whose messages and tasks the envelope becomes).
    pub agent_id: String,
    /// What kind of agent it is.
    pub agent_type: String,
    /// The sending daemon's fingerprint.
    pub daemon_fingerprint: String,
    /// What the sender can do (distinct strings, in the sender's order).
    pub capabilities: Vec<String>,
}

/// Every member of an envelope but `format_version` and `signature`: what [`sign`] signs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    /// `sent_at`, in milliseconds since the epoch.
    pub sent_at_ms: i64,
    /// `sender`.
    pub sender: Sender,
    /// `recipient` (`None` is `null`).
    pub recipient: Option<String>,
    /// `content_type`.
    pub content_type: ContentType,
    /// `payload`: any JSON value of the canonical data model.
    pub payload: Value<'static>,
    /// `metadata`: an object's members.
    pub metadata: Vec<(String, Value<'static>)>,
    /// `nonce`.
    pub nonce: String,
    /// `expires_at`, in milliseconds since the epoch.
    pub expires_at_ms: i64,
}

/// An envelope that verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Its members.
    pub fields: Fields,
    /// How it was signed.
    pub kind: SignatureKind,
    /// By which key.
    pub key_id: String,
    /// The envelope as canonical JSON.
    pub canonical: String,
}

impl Verified {
    /// The answer of the `envelope.verify` operation: `{envelope, kind, key_id, nonce,
    /// content_type, sender, sent_at_ms, expires_at_ms}` with `envelope` the parsed envelope.
    pub fn to_json(&self) -> String {
        let f = &self.fields;
        let mut out = String::from("{\"envelope\":");
        out += &self.canonical;
        for (key, value) in [
            ("kind", self.kind.as_str()),
            ("key_id", &self.key_id),
            ("nonce", &f.nonce),
            ("content_type", f.content_type.as_str()),
            ("sender", &f.sender.agent_id),
        ] {
            out += &format!(",{}:{}", quote(key), quote(value));
        }
        out += &format!(
            ",\"sent_at_ms\":{},\"expires_at_ms\":{}}}",
            f.sent_at_ms, f.expires_at_ms
        );
        out
    }
}

/// A JSON string.
pub(crate) fn quote(text: &str) -> String {
    canonical::canonical_json(&Value::String(text.into())).unwrap_or_default()
}

/// Verifies `input` (see the module documentation for the order of the checks): the envelope's
/// members, or the first refusal. `now_ms` is the receiver's clock; `skew_ms` (0 to
/// [`MAX_SKEW_MS`], else `INVALID_ARGUMENT`) how far ahead of it `sent_at` may be.
pub fn verify(
    input: &[u8],
    keyring: &dyn Keyring,
    now_ms: i64,
    skew_ms: i64,
) -> Result<Verified, Error> {
    if !(0..=MAX_SKEW_MS).contains(&skew_ms) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the clock skew must be 0 to {MAX_SKEW_MS} ms"),
        ));
    }
    let tree = fields::parse_input(input)?;
    let fields = fields::read_fields(&tree, true)?;
    let signature = fields::read_signature(&tree)?;
    let input = fields::signing_input(&tree)?;
    match signature.kind {
        SignatureKind::Ed25519 => {
            let Some(public) = keyring.ed25519_public_key(&signature.key_id)? else {
                return Err(unknown_key(&signature));
            };
            let bytes: [u8; 64] = signature.value.as_slice().try_into().map_err(|_| {
                Error::new(ErrorCode::SignatureMalformed, "signature length changed")
            })?;
            let valid = VerifyingKey::from_bytes(&public).is_ok_and(|key| {
                key.verify_strict(&input, &Signature::from_bytes(&bytes))
                    .is_ok()
            });
            if !valid {
                return Err(invalid(&signature));
            }
        }
        SignatureKind::HmacSha256 => {
            let Some(secret) = keyring.hmac_secret(&signature.key_id)? else {
                return Err(unknown_key(&signature));
            };
            let key = keys::hmac_key(&secret, &signature.key_id);
            let mut mac = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(&key)
                .map_err(|_| Error::new(ErrorCode::Internal, "an HMAC key of 32 bytes"))?;
            mac.update(&input);
            // Constant time.
            if mac.verify_slice(&signature.value).is_err() {
                return Err(invalid(&signature));
            }
        }
    }
    if now_ms >= fields.expires_at_ms {
        return Err(Error::new(
            ErrorCode::SignatureExpired,
            format!(
                "the envelope expired at {} (now {})",
                format_timestamp(fields.expires_at_ms),
                format_timestamp(now_ms)
            ),
        ));
    }
    if fields.sent_at_ms > now_ms.saturating_add(skew_ms) {
        return Err(Error::new(
            ErrorCode::SignatureNotYetValid,
            format!(
                "the envelope was sent at {}, more than {skew_ms} ms after now ({})",
                format_timestamp(fields.sent_at_ms),
                format_timestamp(now_ms)
            ),
        ));
    }
    let canonical = canonical::canonical_json(&tree)?;
    Ok(Verified {
        fields,
        kind: signature.kind,
        key_id: signature.key_id,
        canonical,
    })
}

fn unknown_key(signature: &fields::SignatureRef) -> Error {
    Error::new(
        ErrorCode::UnknownSigningKey,
        format!(
            "no {} key {:?} is enrolled here",
            signature.kind.as_str(),
            signature.key_id
        ),
    )
}

fn invalid(signature: &fields::SignatureRef) -> Error {
    Error::new(
        ErrorCode::SignatureInvalid,
        format!(
            "the {} signature by key {:?} does not verify over the envelope",
            signature.kind.as_str(),
            signature.key_id
        ),
    )
}

/// Signs `fields` with `signer`: the envelope as canonical JSON text. Fields that [`verify`]
/// would refuse as malformed are refused here with the same code and path.
pub fn sign(fields: &Fields, signer: &Signer) -> Result<String, Error> {
    let unsigned = fields::fields_value(fields);
    sign_value(unsigned, signer)
}

/// [`sign`] for an envelope given as JSON text without its `signature` member.
pub fn sign_text(text: &str, signer: &Signer) -> Result<String, Error> {
    let tree = fields::parse_input(text.as_bytes())?;
    fields::read_fields(&tree, false)?;
    sign_value(tree.owned(), signer)
}

fn sign_value(unsigned: Value<'static>, signer: &Signer) -> Result<String, Error> {
    let Value::Object(mut members) = unsigned else {
        return Err(fields::malformed("$", "an envelope is a JSON object"));
    };
    members.push((
        "signature".into(),
        Value::Object(vec![
            ("kind".into(), Value::String(signer.kind().as_str().into())),
            (
                "key_id".into(),
                Value::String(signer.key_id().to_string().into()),
            ),
        ]),
    ));
    let mut tree = Value::Object(members);
    // Checked as the verifier checks it, so nothing is signed that it would refuse.
    fields::read_fields(&tree, true)?;
    fields::check_key_id(signer.key_id(), ErrorCode::InvalidArgument)?;
    let input = fields::signing_input(&tree)?;
    let value = match signer.material() {
        keys::Material::Ed25519(key) => key.sign(&input).to_bytes().to_vec(),
        keys::Material::Hmac(secret) => {
            let key = keys::hmac_key(secret, signer.key_id());
            let mut mac = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(&key)
                .map_err(|_| Error::new(ErrorCode::Internal, "an HMAC key of 32 bytes"))?;
            mac.update(&input);
            mac.finalize().into_bytes().to_vec()
        }
    };
    if let Value::Object(members) = &mut tree
        && let Some((_, Value::Object(signature))) = members.last_mut()
    {
        signature.push(("value".into(), Value::String(keys::base64(&value).into())));
    }
    canonical::canonical_json(&tree)
}

/// The bytes an envelope's signature covers (the canonical frame of the envelope without
/// `signature.value`), for a structurally valid signed envelope; refusals as [`verify`]'s steps
/// 1 to 6.
pub fn signing_input(input: &[u8]) -> Result<Vec<u8>, Error> {
    let tree = fields::parse_input(input)?;
    fields::read_fields(&tree, true)?;
    fields::read_signature(&tree)?;
    fields::signing_input(&tree)
}

/// Nonces seen, in memory: the replay check of a caller without a store (the `envelope.
/// verifySequence` operation, tests). The scratchpad's `Store::remember_nonce` is the durable
/// one.
#[derive(Clone, Debug, Default)]
pub struct NonceSet {
    seen: HashSet<(String, String)>,
}

impl NonceSet {
    /// An empty set.
    pub fn new() -> NonceSet {
        NonceSet::default()
    }

    /// Records the envelope's `(key_id, nonce)`: `REPLAYED` when it was seen before.
    pub fn remember(&mut self, verified: &Verified) -> Result<(), Error> {
        let entry = (verified.key_id.clone(), verified.fields.nonce.clone());
        if self.seen.insert(entry) {
            Ok(())
        } else {
            Err(Error::new(
                ErrorCode::Replayed,
                format!(
                    "nonce already seen for key {:?}: a replay, refused",
                    verified.key_id
                ),
            ))
        }
    }
}
