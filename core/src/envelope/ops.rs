//! The envelope as contract operations, for C (`aic_contract_call`) and Node
//! (`@ctliz/agent-intercom-core/transport`). Every refusal is an `IntercomError` whose `code` is
//! the stable code of the refusal and whose message names where the problem is.
//!
//! - `envelope.constants()`: the limits and names of the format.
//! - `envelope.sign(fields, key)`: `fields` the envelope without `signature` (JSON text, or a
//!   plain object); `key` `{kind:"ed25519", key_id, private_key}` (PKCS#8 PEM) or
//!   `{kind:"hmac-sha256", key_id, secret}` (base64). Answers the signed envelope's text.
//! - `envelope.verify(text, keyring, now_ms, skew_ms?)`: `keyring` `{"ed25519": {id: SPKI PEM or
//!   base64 SPKI DER}, "hmac-sha256": {id: base64 secret}}` (both members optional); `skew_ms`
//!   defaults to [`DEFAULT_SKEW_MS`]. Answers [`Verified::to_json`].
//! - `envelope.verifySequence(texts, keyring, now_ms, skew_ms?)`: verifies each text in order
//!   against one fresh [`NonceSet`] (a nonce seen earlier in the sequence is `REPLAYED`);
//!   answers one `{ok:true, key_id, nonce}` or `{ok:false, code, message}` per text.
//! - `envelope.signingInput(text)`: `{text, sha256}`, the bytes a signed envelope's signature
//!   covers (UTF-8) and their hex SHA-256.

use sha2::{Digest, Sha256};

use super::keys::{self, MemoryKeyring, Signer};
use super::{
    ContentType, DEFAULT_SKEW_MS, FORMAT_VERSION, HKDF_INFO_PREFIX, HKDF_SALT, MAX_ENVELOPE_BYTES,
    MAX_LIFETIME_MS, MAX_SKEW_MS, NonceSet, SIGNING_DOMAIN, SignatureKind, Verified, quote,
};
use crate::contract::{Failure, Js, Op, Out};
use crate::error::{Error, ErrorCode};

/// The class of every refusal.
pub const ERROR_CLASS: &str = "IntercomError";

/// The operations of this module.
pub const OPS: &[Op] = &[
    Op {
        name: "envelope.constants",
        run: |_| Ok(Out::Json(constants_json())),
    },
    Op {
        name: "envelope.sign",
        run: |a| {
            let signer = signer(a.get(1)).map_err(refusal)?;
            let signed = match a.get(0) {
                Js::Str(_) => super::sign_text(text(a.get(0), "fields")?, &signer),
                other => match other.to_json() {
                    Some(json) if matches!(other, Js::Object(_)) => {
                        super::sign_text(&json, &signer)
                    }
                    _ => Err(invalid("fields must be JSON text or a plain object")),
                },
            };
            Ok(Out::Json(quote(&signed.map_err(refusal)?)))
        },
    },
    Op {
        name: "envelope.verify",
        run: |a| {
            let (keyring, now, skew) = context(a.get(1), a.get(2), a.get(3))?;
            let input = text(a.get(0), "the envelope")?;
            super::verify(input.as_bytes(), &keyring, now, skew)
                .map(|v| Out::Json(v.to_json()))
                .map_err(refusal)
        },
    },
    Op {
        name: "envelope.verifySequence",
        run: |a| {
            let (keyring, now, skew) = context(a.get(1), a.get(2), a.get(3))?;
            let Js::Array(list) = a.get(0) else {
                return Err(refusal(invalid("the envelopes must be an array of texts")));
            };
            let mut seen = NonceSet::new();
            let mut out = Vec::with_capacity(list.items.len());
            for item in &list.items {
                let input = text(item.as_ref().unwrap_or(&Js::Undefined), "each envelope")?;
                let outcome = super::verify(input.as_bytes(), &keyring, now, skew)
                    .and_then(|v| seen.remember(&v).map(|()| v));
                out.push(outcome_json(&outcome));
            }
            Ok(Out::Json(format!("[{}]", out.join(","))))
        },
    },
    Op {
        name: "envelope.signingInput",
        run: |a| {
            let input = text(a.get(0), "the envelope")?;
            let bytes = super::signing_input(input.as_bytes()).map_err(refusal)?;
            let digest = Sha256::digest(&bytes);
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            let text = String::from_utf8(bytes)
                .map_err(|_| refusal(Error::new(ErrorCode::Internal, "a frame is UTF-8")))?;
            Ok(Out::Json(format!(
                "{{\"text\":{},\"sha256\":{}}}",
                quote(&text),
                quote(&hex)
            )))
        },
    },
];

/// A refusal as the bindings raise it.
pub fn refusal(error: Error) -> Failure {
    Failure {
        class: ERROR_CLASS,
        path: None,
        detail: error.message().to_string(),
        code: Some(error.code().as_str().to_string()),
    }
}

fn invalid(detail: &str) -> Error {
    Error::new(ErrorCode::InvalidArgument, detail.to_string())
}

fn text<'v>(value: &'v Js, what: &str) -> Result<&'v str, Failure> {
    value
        .as_str()
        .ok_or_else(|| refusal(invalid(&format!("{what} must be a string"))))
}

fn outcome_json(outcome: &Result<Verified, Error>) -> String {
    match outcome {
        Ok(v) => format!(
            "{{\"ok\":true,\"key_id\":{},\"nonce\":{}}}",
            quote(&v.key_id),
            quote(&v.fields.nonce)
        ),
        Err(e) => format!(
            "{{\"ok\":false,\"code\":{},\"message\":{}}}",
            quote(e.code().as_str()),
            quote(e.message())
        ),
    }
}

fn integer(value: &Js, what: &str) -> Result<i64, Failure> {
    value
        .safe_integer()
        .ok_or_else(|| refusal(invalid(&format!("{what} must be a safe integer"))))
}

fn context(keyring: &Js, now: &Js, skew: &Js) -> Result<(MemoryKeyring, i64, i64), Failure> {
    let keyring = keyring_of(keyring).map_err(refusal)?;
    let now = integer(now, "now (milliseconds since the epoch)")?;
    let skew = match skew {
        Js::Undefined | Js::Null => DEFAULT_SKEW_MS,
        other => integer(other, "the skew (milliseconds)")?,
    };
    Ok((keyring, now, skew))
}

fn members(value: &Js, what: &str) -> Result<Vec<(String, String)>, Error> {
    let Js::Object(object) = value else {
        return Err(invalid(&format!("{what} must be an object")));
    };
    object
        .members
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(text) if k.lone.is_none() => Ok((k.text.clone(), text.to_string())),
            _ => Err(invalid(&format!(
                "{what}[{}] must be a string",
                quote(&k.text)
            ))),
        })
        .collect()
}

/// A keyring given as JSON (see the module documentation).
pub fn keyring_of(value: &Js) -> Result<MemoryKeyring, Error> {
    let Js::Object(object) = value else {
        return Err(invalid("the keyring must be an object"));
    };
    let mut keyring = MemoryKeyring::new();
    for (kind, entries) in &object.members {
        match SignatureKind::parse(&kind.text) {
            Some(SignatureKind::Ed25519) => {
                for (id, key) in members(entries, "keyring.ed25519")? {
                    let encoded = match keys::base64_decode(&key) {
                        Some(der) => der,
                        None => key.into_bytes(),
                    };
                    keyring.add_ed25519(&id, keys::public_key_of(&encoded)?);
                }
            }
            Some(SignatureKind::HmacSha256) => {
                for (id, secret) in members(entries, "keyring[\"hmac-sha256\"]")? {
                    let bytes = keys::base64_decode(&secret).ok_or_else(|| {
                        invalid(&format!("the HMAC secret of {} must be base64", quote(&id)))
                    })?;
                    keyring.add_hmac(&id, &bytes)?;
                }
            }
            None => {
                return Err(Error::new(
                    ErrorCode::UnknownKey,
                    format!(
                        "a keyring has members \"ed25519\" and \"hmac-sha256\", not {}",
                        quote(&kind.text)
                    ),
                ));
            }
        }
    }
    Ok(keyring)
}

/// A signing key given as JSON (see the module documentation).
pub fn signer(value: &Js) -> Result<Signer, Error> {
    let Js::Object(object) = value else {
        return Err(invalid("the key must be an object {kind, key_id, ...}"));
    };
    let get = |k: &str| value.get(k).and_then(Js::as_str);
    let kind = get("kind")
        .and_then(SignatureKind::parse)
        .ok_or_else(|| invalid("key.kind must be \"ed25519\" or \"hmac-sha256\""))?;
    let material = match kind {
        SignatureKind::Ed25519 => "private_key",
        SignatureKind::HmacSha256 => "secret",
    };
    if let Some((key, _)) = object
        .members
        .iter()
        .find(|(k, _)| !["kind", "key_id", material].contains(&k.text.as_str()))
    {
        return Err(Error::new(
            ErrorCode::UnknownKey,
            format!(
                "a {} key takes kind, key_id and {material}, not {}",
                kind.as_str(),
                quote(&key.text)
            ),
        ));
    }
    let key_id = get("key_id").ok_or_else(|| invalid("key.key_id must be a string"))?;
    let encoded = get(material).ok_or_else(|| invalid(&format!("key.{material} is required")))?;
    match kind {
        SignatureKind::Ed25519 => Signer::ed25519_pkcs8(key_id, encoded.as_bytes()),
        SignatureKind::HmacSha256 => {
            let secret =
                keys::base64_decode(encoded).ok_or_else(|| invalid("key.secret must be base64"))?;
            Signer::hmac_sha256(key_id, &secret)
        }
    }
}

fn constants_json() -> String {
    let list = |names: &[&str]| {
        let quoted: Vec<String> = names.iter().map(|n| quote(n)).collect();
        format!("[{}]", quoted.join(","))
    };
    let content_types: Vec<&str> = ContentType::ALL.iter().map(|c| c.as_str()).collect();
    let kinds: Vec<&str> = SignatureKind::ALL.iter().map(|k| k.as_str()).collect();
    format!(
        "{{\"FORMAT_VERSION\":{FORMAT_VERSION},\"MAX_ENVELOPE_BYTES\":{MAX_ENVELOPE_BYTES},\
         \"MAX_LIFETIME_MS\":{MAX_LIFETIME_MS},\"DEFAULT_SKEW_MS\":{DEFAULT_SKEW_MS},\
         \"MAX_SKEW_MS\":{MAX_SKEW_MS},\"SIGNING_DOMAIN\":{},\"HKDF_SALT\":{},\
         \"HKDF_INFO_PREFIX\":{},\"CONTENT_TYPES\":{},\"SIGNATURE_KINDS\":{}}}",
        quote(SIGNING_DOMAIN),
        quote(HKDF_SALT),
        quote(HKDF_INFO_PREFIX),
        list(&content_types),
        list(&kinds)
    )
}
