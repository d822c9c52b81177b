//! Secrets: drawn from the operating system, handed out once in base64url, kept only as SHA-256.

use std::io;

use sha2::{Digest, Sha256};

/// Bytes of randomness in every token and credential.
pub(crate) const SECRET_BYTES: usize = 32;

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding, as Node's `Buffer.toString("base64url")`.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        let symbols = chunk.len() + 1;
        for i in 0..symbols {
            out.push(BASE64URL[(n >> (18 - 6 * i) & 0x3f) as usize] as char);
        }
    }
    out
}

/// A fresh secret: 32 random bytes in base64url (43 characters).
pub(crate) fn new_secret() -> io::Result<String> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes)
        .map_err(|e| io::Error::other(format!("the system random source failed: {e}")))?;
    Ok(base64url(&bytes))
}

/// Lowercase hex SHA-256 of the secret's UTF-8, the only form a secret is stored in.
pub(crate) fn hash_secret(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

/// Decodes a stored digest: exactly 64 hex digits, either case (Node decodes both).
fn decode_digest(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi << 4 | lo) as u8;
    }
    Some(out)
}

/// Whether `secret` hashes to `expected_hash`, comparing the digests in constant time. A stored
/// digest that is not 64 hex digits matches nothing.
pub(crate) fn secret_matches(secret: &str, expected_hash: &str) -> bool {
    let Some(expected) = decode_digest(expected_hash) else {
        return false;
    };
    let actual = Sha256::digest(secret.as_bytes());
    let difference = actual
        .iter()
        .zip(expected.iter())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_node() {
        // Node: Buffer.from(x).toString("base64url")
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foob"), "Zm9vYg");
        assert_eq!(base64url(&[0xfb, 0xff, 0xbf]), "-_-_");
        assert_eq!(base64url(&[0u8; 32]).len(), 43);
    }

    #[test]
    fn secrets_are_fresh_43_character_base64url() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
    }

    #[test]
    fn hashes_are_lowercase_hex_sha256_and_compare_by_value() {
        // printf abc | sha256sum
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(hash_secret("abc"), abc);
        assert!(secret_matches("abc", abc));
        assert!(secret_matches("abc", &abc.to_uppercase()));
        assert!(!secret_matches("abd", abc));
        assert!(!secret_matches("abc", &abc[..62]));
        assert!(!secret_matches("abc", &format!("{abc}00")));
        assert!(!secret_matches("abc", &format!("{}zz", &abc[..62])));
        assert!(!secret_matches("abc", ""));
    }
}
