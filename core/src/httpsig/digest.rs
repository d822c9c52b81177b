//! `Content-Digest` (RFC 9530): a Dictionary of algorithm to Byte Sequence, over the content as
//! sent (after any content coding: the exact body bytes).

use base64::Engine as _;
use sfv::BareItem;
use sha2::{Digest as _, Sha256, Sha512};

use super::message::Headers;
use super::sf::{self, Member};
use super::{MAX_SIGNATURE_FIELD_BYTES, digest_mismatch};
use crate::error::Error;

/// A digest algorithm of the RFC 9530 registry this implementation accepts (the two active
/// ones; the deprecated `md5`, `sha`, `unixsum`, `unixcksum`, `adler`, `crc32c` are refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DigestAlgorithm {
    /// `sha-256`.
    Sha256,
    /// `sha-512`.
    Sha512,
}

impl DigestAlgorithm {
    /// Both, in the order a verifier prefers them. (A function, not an associated constant:
    /// cbindgen would put the constant in the C header.)
    pub fn all() -> [DigestAlgorithm; 2] {
        [DigestAlgorithm::Sha256, DigestAlgorithm::Sha512]
    }

    /// The registry name (`sha-256`, `sha-512`).
    pub fn name(self) -> &'static str {
        match self {
            DigestAlgorithm::Sha256 => "sha-256",
            DigestAlgorithm::Sha512 => "sha-512",
        }
    }

    /// The algorithm of a registry name.
    pub fn from_name(name: &str) -> Option<DigestAlgorithm> {
        DigestAlgorithm::all()
            .into_iter()
            .find(|a| a.name() == name)
    }

    /// The digest of `body`.
    pub fn digest(self, body: &[u8]) -> Vec<u8> {
        match self {
            DigestAlgorithm::Sha256 => Sha256::digest(body).to_vec(),
            DigestAlgorithm::Sha512 => Sha512::digest(body).to_vec(),
        }
    }
}

/// The `Content-Digest` field value for `body`: `sha-256=:<base64>:`.
pub fn content_digest(algorithm: DigestAlgorithm, body: &[u8]) -> String {
    format!(
        "{}=:{}:",
        algorithm.name(),
        base64::engine::general_purpose::STANDARD.encode(algorithm.digest(body))
    )
}

/// Checks the `Content-Digest` lines of `headers` against `body`: present, a Dictionary whose
/// every member is an `accepted` algorithm with a Byte Sequence equal to the body's digest.
/// Anything else (absent, bad syntax, a repeated or unknown algorithm, a wrong digest) is
/// `CONTENT_DIGEST_MISMATCH`. Answers the algorithms checked.
pub fn check_content_digest(
    headers: &Headers,
    body: &[u8],
    accepted: &[DigestAlgorithm],
) -> Result<Vec<DigestAlgorithm>, Error> {
    let value = headers
        .combined("content-digest")
        .ok_or_else(|| digest_mismatch("the message has no Content-Digest field"))?;
    if value.len() > MAX_SIGNATURE_FIELD_BYTES {
        return Err(digest_mismatch("the Content-Digest field is too long"));
    }
    let dict =
        sf::dictionary(&value).map_err(|e| digest_mismatch(format!("Content-Digest: {e}")))?;
    if dict.is_empty() {
        return Err(digest_mismatch("the Content-Digest field is empty"));
    }
    let mut checked = Vec::with_capacity(dict.len());
    for (key, member) in &dict {
        let algorithm = DigestAlgorithm::from_name(key.as_str())
            .filter(|a| accepted.contains(a))
            .ok_or_else(|| {
                digest_mismatch(format!(
                    "Content-Digest algorithm {:?} is not accepted",
                    key.as_str()
                ))
            })?;
        let given = match member {
            Member::Item(sf::Item {
                bare: BareItem::ByteSequence(bytes),
                params,
            }) if params.is_empty() => bytes,
            _ => {
                return Err(digest_mismatch(format!(
                    "Content-Digest {}: not a Byte Sequence",
                    algorithm.name()
                )));
            }
        };
        if *given != algorithm.digest(body) {
            return Err(digest_mismatch(format!(
                "Content-Digest {} is not the digest of the body",
                algorithm.name()
            )));
        }
        checked.push(algorithm);
    }
    Ok(checked)
}
