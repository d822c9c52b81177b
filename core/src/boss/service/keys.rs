//! The broker trust stores (`BrokerPublicKeyTrustStore`) and Ed25519 verification over the
//! canonical frame of a record without its signature.
//!
//! A trust store maps key ids to public keys: PEM text, or a Node `KeyObject`. The core never
//! sees a `KeyObject` (the snapshot does not enter class instances), so the Node module hands
//! over, beside the arguments, a table of the `KeyObject`s it found at trust-store entries:
//! `[{field, id, type, spki}]` with `spki` the base64 of the key's SPKI DER when its `type` is
//! `public`. C and Rust callers give PEM text (or the same table).
//!
//! What PEM text resolves to a key follows what Node's `createPublicKey` accepts, as far as it
//! matters here: the first `-----BEGIN <label>-----` line (at the start of a line) up to its
//! matching `-----END <label>-----`, no header lines, the body's whitespace ignored. `PUBLIC KEY`
//! is an SPKI structure, `PRIVATE KEY` PKCS#8 (whose public half is taken, as `createPublicKey`
//! derives it); `RSA PUBLIC KEY`, `RSA PRIVATE KEY` and `EC PRIVATE KEY` are accepted when their
//! body is one DER structure. Only an Ed25519 key can verify a signature: any other public key
//! (RSA, EC, X25519, an Ed25519 encoding that is no curve point) is accepted into a store and
//! verifies nothing, as `crypto.verify(null, ...)` with it does for a 64-byte signature.

use ed25519_dalek::pkcs8::spki::SubjectPublicKeyInfoRef;
use ed25519_dalek::pkcs8::spki::der::Decode;
use ed25519_dalek::pkcs8::{ALGORITHM_OID, PrivateKeyInfoRef};
use ed25519_dalek::{Signature, SigningKey, Verifier, VerifyingKey};

use crate::canonical::FRAME_PREFIX;
use crate::contract::canonical::canonical_json;
use crate::contract::read::{self, fail, field, member, record, string, well_formed};
use crate::contract::{Failure, Js, JsObject, Proto};

/// A public key a trust store resolved.
#[derive(Clone, Debug)]
pub(crate) enum PublicKey {
    /// An Ed25519 key.
    Ed25519(Box<VerifyingKey>),
    /// Another public key: accepted into a store, verifies no signature here.
    Other,
}

/// A parsed trust store: each key id with its key, in the store's order.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrustStore {
    pub(crate) keys: Vec<(String, PublicKey)>,
}

impl TrustStore {
    /// `resolveTrustedPublicKey`: the key of `id`, when the store has it as its own entry.
    pub(crate) fn resolve(&self, id: &str) -> Option<&PublicKey> {
        self.keys
            .iter()
            .rev()
            .find(|(k, _)| k == id)
            .map(|(_, key)| key)
    }
}

/// One `KeyObject` the Node module found at `field[id]`.
#[derive(Clone, Debug)]
pub struct KeyObjectEntry<'v> {
    field: &'v str,
    id: &'v str,
    public: Option<PublicKey>,
}

/// The table of `KeyObject`s (an argument after the documented ones); anything not in its form
/// is an empty table.
pub fn key_objects(table: &Js) -> Vec<KeyObjectEntry<'_>> {
    let Js::Array(list) = table else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in list.items.iter().flatten() {
        let (Some(field), Some(id)) = (
            item.get("field").and_then(Js::as_str),
            item.get("id").and_then(Js::as_str),
        ) else {
            continue;
        };
        let public = match (item.get("type").and_then(Js::as_str), item.get("spki")) {
            (Some("public"), Some(spki)) => spki
                .as_str()
                .and_then(base64_decode)
                .and_then(|der| spki_key(&der))
                // A public KeyObject always exports an SPKI structure.
                .or(Some(PublicKey::Other)),
            _ => None,
        };
        out.push(KeyObjectEntry { field, id, public });
    }
    out
}

/// `parseBrokerPublicKeyTrustStore(value, path)` for the store in member `field` of a context.
pub(crate) fn trust_store(
    value: &Js,
    path: &str,
    field_name: &str,
    table: &[KeyObjectEntry<'_>],
) -> read::Read<TrustStore> {
    record(value, path)?;
    let Js::Object(JsObject { members, .. }) = value else {
        return Ok(TrustStore::default());
    };
    let mut keys = Vec::with_capacity(members.len());
    for (id, item) in members {
        let id_path = format!("{path}.[keyId]");
        if id.text.is_empty() {
            return fail(&id_path, "must be a non-empty string");
        }
        well_formed(id, &id_path)?;
        let key_path = member(path, &id.text);
        let key = match item {
            Js::Str(_) => {
                let text = string(item, &key_path)?;
                match pem_key(text) {
                    Some(key) => key,
                    None => return fail(&key_path, "must resolve to a public key"),
                }
            }
            Js::Object(o) if o.proto == Proto::Other => {
                let found = table
                    .iter()
                    .rev()
                    .find(|e| e.field == field_name && e.id == id.text);
                match found.and_then(|e| e.public.clone()) {
                    Some(key) => key,
                    None => return fail(&key_path, KEY_OBJECT_EXPECTED),
                }
            }
            _ => return fail(&key_path, KEY_OBJECT_EXPECTED),
        };
        keys.push((id.text.clone(), key));
    }
    Ok(TrustStore { keys })
}

const KEY_OBJECT_EXPECTED: &str = "must be a public KeyObject or encoded public key";

/// The key a PEM text resolves to (see the module documentation).
fn pem_key(text: &str) -> Option<PublicKey> {
    let (label, der) = pem_block(text)?;
    let der = first_structure(&der)?;
    match label {
        "PUBLIC KEY" => spki_key(der),
        "PRIVATE KEY" => {
            let info = PrivateKeyInfoRef::from_der(der).ok()?;
            if info.algorithm.oid != ALGORITHM_OID {
                return Some(PublicKey::Other);
            }
            let signing = SigningKey::try_from(info).ok()?;
            Some(PublicKey::Ed25519(Box::new(signing.verifying_key())))
        }
        "RSA PUBLIC KEY" | "RSA PRIVATE KEY" | "EC PRIVATE KEY" => Some(PublicKey::Other),
        _ => None,
    }
}

/// The key of an SPKI structure.
fn spki_key(der: &[u8]) -> Option<PublicKey> {
    let info = SubjectPublicKeyInfoRef::from_der(first_structure(der)?).ok()?;
    if info.algorithm.oid != ALGORITHM_OID {
        return Some(PublicKey::Other);
    }
    let bytes: [u8; 32] = info.subject_public_key.as_bytes()?.try_into().ok()?;
    Some(match VerifyingKey::from_bytes(&bytes) {
        Ok(key) => PublicKey::Ed25519(Box::new(key)),
        // OpenSSL takes any 32 bytes as an Ed25519 key; one that is no point verifies nothing.
        Err(_) => PublicKey::Other,
    })
}

/// The first PEM block: its label and decoded body.
fn pem_block(text: &str) -> Option<(&str, Vec<u8>)> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let label = lines
        .by_ref()
        .find_map(|line| line.strip_prefix("-----BEGIN ")?.strip_suffix("-----"))?;
    let end = format!("-----END {label}-----");
    let mut body = String::new();
    for line in lines {
        if line == end {
            return Some((label, base64_decode(&body)?));
        }
        if line.contains(':') {
            return None;
        }
        body.extend(line.chars().filter(|c| !c.is_ascii_whitespace()));
    }
    None
}

/// The first DER structure of `der` (OpenSSL ignores what follows it).
fn first_structure(der: &[u8]) -> Option<&[u8]> {
    let (&tag, rest) = der.split_first()?;
    if tag != 0x30 {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (length, header) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let length = rest[..count]
            .iter()
            .fold(0usize, |n, &b| (n << 8) | usize::from(b));
        (length, 2 + count)
    };
    der.get(..header.checked_add(length)?)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with optional padding.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim_end_matches('=');
    if text.len() - digits.len() > 2 || digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for c in digits.bytes() {
        let value = BASE64.iter().position(|&a| a == c)? as u32;
        buffer = (buffer << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Some(out)
}

/// Whether `signature` is the canonical padded base64 of exactly 64 bytes (what a
/// `Buffer.from(s, "base64")` round trip accepts).
pub(crate) fn canonical_signature(signature: &str) -> Option<Signature> {
    let b = signature.as_bytes();
    let index = |c: u8| BASE64.iter().position(|&a| a == c);
    let canonical = b.len() == 88
        && &b[86..] == b"=="
        && b[..85].iter().all(|&c| index(c).is_some())
        && index(b[85]).is_some_and(|i| i & 0xf == 0);
    if !canonical {
        return None;
    }
    let bytes: [u8; 64] = base64_decode(signature)?.try_into().ok()?;
    Some(Signature::from_bytes(&bytes))
}

/// `canonicalFrame(domain, record without "signature")`: `assertRecord`, then the frame of a
/// fresh object of the record's other entries.
pub(crate) fn signing_frame(domain: &str, value: &Js) -> read::Read<String> {
    record(value, "$")?;
    let Js::Object(object) = value else {
        return fail("$", "must be a plain object");
    };
    let payload = Js::Object(JsObject {
        proto: Proto::Plain,
        members: object
            .members
            .iter()
            .filter(|(k, _)| !(k.lone.is_none() && k.text == "signature"))
            .cloned()
            .collect(),
        symbols: false,
    });
    let json = canonical_json(&payload)?;
    Ok(format!(
        "{FRAME_PREFIX}:{}:{domain}:{}:{json}",
        domain.len(),
        json.len()
    ))
}

/// `verifyCanonicalEd25519Signature(domain, record, record.signature, key)`.
pub(crate) fn verifies(domain: &str, record_value: &Js, key: &PublicKey) -> bool {
    let Some(signature) = field(record_value, "signature")
        .as_str()
        .and_then(canonical_signature)
    else {
        return false;
    };
    let PublicKey::Ed25519(key) = key else {
        return false;
    };
    match signing_frame(domain, record_value) {
        Ok(frame) => key.verify(frame.as_bytes(), &signature).is_ok(),
        Err(_) => false,
    }
}

/// A failure whose path names the trust store `key` (how the verifiers tell a trust-store
/// problem from any other).
pub(crate) fn names(failure: &Failure, key: &str) -> bool {
    failure.class == "ContractValidationError"
        && failure.path.as_deref().is_some_and(|p| p.contains(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_signature_forms() {
        assert_eq!(base64_decode("TWFu").unwrap(), b"Man");
        assert_eq!(base64_decode("TWE=").unwrap(), b"Ma");
        assert_eq!(base64_decode("TQ").unwrap(), b"M");
        assert!(base64_decode("T").is_none() && base64_decode("TQ===").is_none());
        let zeros = format!("{}==", "A".repeat(86));
        assert!(canonical_signature(&zeros).is_some());
        let mut loose = "A".repeat(85);
        loose.push('B');
        loose.push_str("==");
        assert!(canonical_signature(&loose).is_none());
        assert!(canonical_signature(&"A".repeat(88)).is_none());
    }

    #[test]
    fn pem_forms() {
        let body = "MCowBQYDK2VwAyEAi2rhjfYAcw47eso3WUp6YIpwJSqiLn7P6d8D5tHCmjw=";
        let pem = format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n");
        assert!(matches!(pem_key(&pem), Some(PublicKey::Ed25519(_))));
        assert!(pem_key(&format!("junk\r\n{}", pem.replace('\n', "\r\n"))).is_some());
        assert!(pem_key(&format!(" {pem}")).is_none());
        assert!(pem_key(&pem.replace("PUBLIC KEY", "FOO KEY")).is_none());
        assert!(pem_key(&pem.replace("-----END PUBLIC", "-----END PRIVATE")).is_none());
        assert!(pem_key(body).is_none() && pem_key("").is_none());
    }
}
