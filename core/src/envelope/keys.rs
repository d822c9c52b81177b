//! Keys: the [`Keyring`] a verifier looks keys up in, the [`Signer`] that signs, the HKDF
//! derivation of HMAC keys, and the key encodings (SPKI and PKCS#8, in PEM or DER).
//!
//! Ed25519 public keys are SPKI (`-----BEGIN PUBLIC KEY-----`, or its DER), private keys PKCS#8
//! v1 (`-----BEGIN PRIVATE KEY-----`) as RFC 8410 writes them, so OpenSSL and Node's `crypto`
//! read and write the same files. A key's fingerprint is `sha256:` and the lowercase hex SHA-256
//! of its SPKI DER.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::pkcs8::spki::SubjectPublicKeyInfoRef;
use ed25519_dalek::pkcs8::spki::der::Decode;
use ed25519_dalek::pkcs8::{ALGORITHM_OID, PrivateKeyInfoRef};
use ed25519_dalek::{SigningKey, VerifyingKey};
use hkdf::Hkdf;
use sha2::{Digest, Sha256};

use super::{HKDF_INFO_PREFIX, HKDF_SALT, MIN_HMAC_SECRET_BYTES, SignatureKind};
use crate::error::{Error, ErrorCode};

/// Where a verifier finds keys by id. Implementations: [`MemoryKeyring`]; the on-disk keys
/// directory of `agent-intercom keys` (`agent_intercom_a2a::keys`). A lookup that cannot be
/// answered (an unreadable or unsafe key file) is an error, which the verifier passes on.
pub trait Keyring {
    /// The enrolled Ed25519 public key (its 32 bytes) with this id, if any.
    fn ed25519_public_key(&self, key_id: &str) -> Result<Option<[u8; 32]>, Error>;
    /// The stored HMAC secret with this id (the HKDF input key material), if any.
    fn hmac_secret(&self, key_id: &str) -> Result<Option<Vec<u8>>, Error>;
}

/// A keyring in memory.
#[derive(Clone, Debug, Default)]
pub struct MemoryKeyring {
    ed25519: HashMap<String, [u8; 32]>,
    hmac: HashMap<String, Vec<u8>>,
}

impl MemoryKeyring {
    /// An empty keyring.
    pub fn new() -> MemoryKeyring {
        MemoryKeyring::default()
    }

    /// Enrolls an Ed25519 public key.
    pub fn add_ed25519(&mut self, key_id: &str, public_key: [u8; 32]) {
        self.ed25519.insert(key_id.to_string(), public_key);
    }

    /// Enrolls an HMAC secret (at least [`MIN_HMAC_SECRET_BYTES`] bytes).
    pub fn add_hmac(&mut self, key_id: &str, secret: &[u8]) -> Result<(), Error> {
        check_secret(secret)?;
        self.hmac.insert(key_id.to_string(), secret.to_vec());
        Ok(())
    }
}

impl Keyring for MemoryKeyring {
    fn ed25519_public_key(&self, key_id: &str) -> Result<Option<[u8; 32]>, Error> {
        Ok(self.ed25519.get(key_id).copied())
    }

    fn hmac_secret(&self, key_id: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.hmac.get(key_id).cloned())
    }
}

/// Refuses an HMAC secret shorter than [`MIN_HMAC_SECRET_BYTES`].
pub fn check_secret(secret: &[u8]) -> Result<(), Error> {
    if secret.len() < MIN_HMAC_SECRET_BYTES {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "an HMAC secret must be at least {MIN_HMAC_SECRET_BYTES} bytes (it is {})",
                secret.len()
            ),
        ));
    }
    Ok(())
}

/// What a [`Signer`] signs with.
pub(crate) enum Material {
    Ed25519(SigningKey),
    Hmac(Vec<u8>),
}

/// A signing key with its id.
pub struct Signer {
    key_id: String,
    material: Material,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key material.
        write!(f, "Signer({} {:?})", self.kind().as_str(), self.key_id)
    }
}

impl Signer {
    /// An Ed25519 signer from its 32-byte seed (the RFC 8032 private key).
    pub fn ed25519(key_id: &str, seed: &[u8; 32]) -> Signer {
        Signer {
            key_id: key_id.to_string(),
            material: Material::Ed25519(SigningKey::from_bytes(seed)),
        }
    }

    /// An Ed25519 signer from a PKCS#8 private key (PEM text or DER).
    pub fn ed25519_pkcs8(key_id: &str, encoded: &[u8]) -> Result<Signer, Error> {
        Ok(Signer::ed25519(key_id, &private_key_seed(encoded)?))
    }

    /// An HMAC-SHA256 signer from the stored secret (at least [`MIN_HMAC_SECRET_BYTES`] bytes).
    pub fn hmac_sha256(key_id: &str, secret: &[u8]) -> Result<Signer, Error> {
        check_secret(secret)?;
        Ok(Signer {
            key_id: key_id.to_string(),
            material: Material::Hmac(secret.to_vec()),
        })
    }

    /// Its kind.
    pub fn kind(&self) -> SignatureKind {
        match self.material {
            Material::Ed25519(_) => SignatureKind::Ed25519,
            Material::Hmac(_) => SignatureKind::HmacSha256,
        }
    }

    /// Its key id.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The Ed25519 public key, for an Ed25519 signer.
    pub fn public_key(&self) -> Option<[u8; 32]> {
        match &self.material {
            Material::Ed25519(key) => Some(key.verifying_key().to_bytes()),
            Material::Hmac(_) => None,
        }
    }

    pub(crate) fn material(&self) -> &Material {
        &self.material
    }
}

/// The HMAC-SHA256 key of `key_id`: 32 bytes of HKDF-SHA256 (RFC 5869) with the stored secret as
/// input key material, salt [`HKDF_SALT`] and info [`HKDF_INFO_PREFIX`] followed by the key id
/// (all UTF-8). A secret shared under two ids yields two unrelated keys.
pub fn hmac_key(secret: &[u8], key_id: &str) -> [u8; 32] {
    let hkdf = Hkdf::<Sha256>::new(Some(HKDF_SALT.as_bytes()), secret);
    let mut info = Vec::with_capacity(HKDF_INFO_PREFIX.len() + key_id.len());
    info.extend_from_slice(HKDF_INFO_PREFIX.as_bytes());
    info.extend_from_slice(key_id.as_bytes());
    let mut key = [0u8; 32];
    // 32 bytes is far below HKDF's limit of 255 * 32.
    let _ = hkdf.expand(&info, &mut key);
    key
}

/// Padded standard base64.
pub fn base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The bytes of canonical padded standard base64 (no whitespace, no stray bits); `None` for
/// anything else.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

/// The DER prefix of an Ed25519 SPKI structure (RFC 8410), before the 32 key bytes.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];
/// The DER prefix of an Ed25519 PKCS#8 v1 structure (RFC 8410), before the 32 seed bytes.
const PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// The SPKI DER of an Ed25519 public key.
pub fn public_key_der(public_key: &[u8; 32]) -> Vec<u8> {
    [&SPKI_PREFIX[..], public_key].concat()
}

/// The SPKI PEM of an Ed25519 public key.
pub fn public_key_pem(public_key: &[u8; 32]) -> String {
    pem("PUBLIC KEY", &public_key_der(public_key))
}

/// The PKCS#8 PEM of an Ed25519 seed.
pub fn private_key_pem(seed: &[u8; 32]) -> String {
    pem("PRIVATE KEY", &[&PKCS8_PREFIX[..], seed].concat())
}

/// `sha256:` and the hex SHA-256 of the key's SPKI DER.
pub fn fingerprint(public_key: &[u8; 32]) -> String {
    let digest = Sha256::digest(public_key_der(public_key));
    let mut out = String::from("sha256:");
    for byte in digest {
        out += &format!("{byte:02x}");
    }
    out
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = base64(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out += &String::from_utf8_lossy(line);
        out.push('\n');
    }
    out + &format!("-----END {label}-----\n")
}

fn bad_key(detail: &str) -> Error {
    Error::new(ErrorCode::InvalidArgument, detail.to_string())
}

/// The DER of the one PEM block of `text` with this label (whitespace around it allowed, nothing
/// else), or of `encoded` itself when it is DER (starts with a SEQUENCE tag).
fn der_of(encoded: &[u8], label: &str) -> Result<Vec<u8>, Error> {
    if encoded.first() == Some(&0x30) {
        return Ok(encoded.to_vec());
    }
    let text = std::str::from_utf8(encoded)
        .map_err(|_| bad_key("a key must be PEM text or DER"))?
        .trim();
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let body = text
        .strip_prefix(&begin)
        .and_then(|rest| rest.strip_suffix(&end))
        .ok_or_else(|| {
            if text.contains("PRIVATE KEY") && label == "PUBLIC KEY" {
                bad_key("this is a private key; a PUBLIC KEY (SPKI) is expected")
            } else {
                bad_key(&format!(
                    "a key must be one PEM block {begin} ... {end} (or its DER)"
                ))
            }
        })?;
    let body: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64_decode(&body).ok_or_else(|| bad_key("the PEM body is not base64"))
}

/// The 32 bytes of an Ed25519 public key given as SPKI (PEM text or DER), refusing another
/// algorithm, trailing data, a point that is not on the curve and a weak (small-order) key.
pub fn public_key_of(encoded: &[u8]) -> Result<[u8; 32], Error> {
    let der = der_of(encoded, "PUBLIC KEY")?;
    let info =
        SubjectPublicKeyInfoRef::from_der(&der).map_err(|_| bad_key("not an SPKI public key"))?;
    if info.algorithm.oid != ALGORITHM_OID || info.algorithm.parameters.is_some() {
        return Err(bad_key("not an Ed25519 public key"));
    }
    let bytes: [u8; 32] = info
        .subject_public_key
        .as_bytes()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| bad_key("an Ed25519 public key is 32 bytes"))?;
    match VerifyingKey::from_bytes(&bytes) {
        Ok(key) if !key.is_weak() => Ok(bytes),
        _ => Err(bad_key("not a usable Ed25519 public key")),
    }
}

/// The seed of an Ed25519 private key given as PKCS#8 (PEM text or DER).
pub fn private_key_seed(encoded: &[u8]) -> Result<[u8; 32], Error> {
    let der = der_of(encoded, "PRIVATE KEY")?;
    let info =
        PrivateKeyInfoRef::from_der(&der).map_err(|_| bad_key("not a PKCS#8 private key"))?;
    if info.algorithm.oid != ALGORITHM_OID {
        return Err(bad_key("not an Ed25519 private key"));
    }
    let key = SigningKey::try_from(info).map_err(|_| bad_key("not a usable Ed25519 key"))?;
    Ok(key.to_bytes())
}
