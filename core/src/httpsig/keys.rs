//! Ed25519 keys (RFC 8032; `alg="ed25519"`, RFC 9421 §3.3.6) from PEM, DER or raw bytes.
//!
//! Only the two standard encodings are read: SPKI (`-----BEGIN PUBLIC KEY-----`) for a public
//! key and PKCS#8 (`-----BEGIN PRIVATE KEY-----`, v1 or v2) for a private one, or the raw 32
//! bytes. Anything else (another algorithm, trailing data, PEM headers) is `INVALID_ARGUMENT`.

use std::fmt;

use base64::Engine as _;
use ed25519_dalek::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _};
use ed25519_dalek::{Signature, Signer as _};

use super::{SIGNATURE_BYTES, invalid};
use crate::error::Error;

/// An Ed25519 public key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl PublicKey {
    /// From the raw 32 bytes (refused when they are no curve point).
    pub fn from_bytes(raw: &[u8]) -> Result<PublicKey, Error> {
        let raw: [u8; 32] = raw
            .try_into()
            .map_err(|_| invalid("an Ed25519 public key is 32 bytes"))?;
        ed25519_dalek::VerifyingKey::from_bytes(&raw)
            .map(PublicKey)
            .map_err(|_| invalid("not an Ed25519 public key"))
    }

    /// From an SPKI DER structure.
    pub fn from_spki_der(der: &[u8]) -> Result<PublicKey, Error> {
        ed25519_dalek::VerifyingKey::from_public_key_der(der)
            .map(PublicKey)
            .map_err(|_| invalid("not an Ed25519 SubjectPublicKeyInfo"))
    }

    /// From PEM text holding one `PUBLIC KEY` block.
    pub fn from_pem(text: &str) -> Result<PublicKey, Error> {
        PublicKey::from_spki_der(&pem(text, "PUBLIC KEY")?)
    }

    /// The raw 32 bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// Whether `signature` is this key's signature of `message` (strict RFC 8032 verification:
    /// no small-order key or `R`, canonical `S`).
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(bytes) = <[u8; SIGNATURE_BYTES]>::try_from(signature) else {
            return false;
        };
        self.0
            .verify_strict(message, &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex: String = self.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
        write!(f, "PublicKey({hex})")
    }
}

/// An Ed25519 private key. Its `Debug` shows the public half only.
#[derive(Clone)]
pub struct SigningKey(ed25519_dalek::SigningKey);

impl SigningKey {
    /// From the 32-byte seed (RFC 8032's private key).
    pub fn from_seed(seed: &[u8]) -> Result<SigningKey, Error> {
        let seed: [u8; 32] = seed
            .try_into()
            .map_err(|_| invalid("an Ed25519 private key seed is 32 bytes"))?;
        Ok(SigningKey(ed25519_dalek::SigningKey::from_bytes(&seed)))
    }

    /// From a PKCS#8 DER structure (when it also holds the public key, it must match).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<SigningKey, Error> {
        ed25519_dalek::SigningKey::from_pkcs8_der(der)
            .map(SigningKey)
            .map_err(|_| invalid("not an Ed25519 PKCS#8 private key"))
    }

    /// From PEM text holding one `PRIVATE KEY` block.
    pub fn from_pem(text: &str) -> Result<SigningKey, Error> {
        SigningKey::from_pkcs8_der(&pem(text, "PRIVATE KEY")?)
    }

    /// The public half.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The signature of `message` (deterministic, RFC 8032).
    pub fn sign(&self, message: &[u8]) -> [u8; SIGNATURE_BYTES] {
        self.0.sign(message).to_bytes()
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey(public {:?})", self.public_key())
    }
}

/// The DER body of the one PEM block labelled `label`: text before `BEGIN` and after `END` is
/// ignored (a file may carry comments), the block itself may hold nothing but base64 lines.
fn pem(text: &str, label: &str) -> Result<Vec<u8>, Error> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let mut lines = text.lines().map(str::trim);
    if !lines.by_ref().any(|line| line == begin) {
        return Err(invalid(format!("no {begin} line")));
    }
    let mut body = String::new();
    for line in lines.by_ref() {
        if line == end {
            if text.matches("-----BEGIN ").count() != 1 {
                return Err(invalid("more than one PEM block"));
            }
            return base64::engine::general_purpose::STANDARD
                .decode(body)
                .map_err(|_| invalid(format!("the {label} block is not base64")));
        }
        if line.contains(':') || line.starts_with("-----") {
            return Err(invalid(format!("the {label} block is malformed")));
        }
        body.push_str(line);
    }
    Err(invalid(format!("no {end} line")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\n\
        MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n\
        -----END PUBLIC KEY-----\n";
    const RFC_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----\n\
        MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n\
        -----END PRIVATE KEY-----\n";

    #[test]
    fn the_rfc_test_key_reads_in_every_form() {
        let public = PublicKey::from_pem(RFC_PUBLIC).unwrap();
        let private = SigningKey::from_pem(RFC_PRIVATE).unwrap();
        assert_eq!(private.public_key(), public);
        let hex: String = public
            .to_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "26b40b8f93fff3d897112f7ebc582b232dbd72517d082fe83cfb30ddce43d1bb"
        );
        assert_eq!(PublicKey::from_bytes(&public.to_bytes()).unwrap(), public);
        let signature = private.sign(b"m");
        assert!(public.verify(b"m", &signature));
        assert!(!public.verify(b"n", &signature));
        assert!(!public.verify(b"m", &signature[..63]));
        assert!(format!("{private:?}").starts_with("SigningKey(public PublicKey(26b4"));
    }

    #[test]
    fn other_material_is_refused() {
        assert!(PublicKey::from_pem(RFC_PRIVATE).is_err());
        assert!(SigningKey::from_pem(RFC_PUBLIC).is_err());
        assert!(PublicKey::from_pem(&format!("{RFC_PUBLIC}{RFC_PUBLIC}")).is_err());
        assert!(
            PublicKey::from_pem("-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----")
                .is_err()
        );
        assert!(PublicKey::from_bytes(&[0; 31]).is_err());
        assert!(SigningKey::from_seed(&[0; 33]).is_err());
        assert!(PublicKey::from_spki_der(b"\x30\x00").is_err());
        // An X25519 SPKI (OID 1.3.101.110) is not an Ed25519 key.
        let x25519 = base64::engine::general_purpose::STANDARD
            .decode("MCowBQYDK2VuAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=")
            .unwrap();
        assert!(PublicKey::from_spki_der(&x25519).is_err());
    }
}
