//! The records an operator enrolls (docs/line.md, "Enrollment"): a peer's key record and its
//! endpoint. Both are checked here, with no network: the address is an IP literal (no DNS ever),
//! the hostname is kept for SNI and the certificate check only, the CA file is read, checked and
//! pinned by digest, and the key is an Ed25519 `PUBLIC KEY` bound to the peer and to this
//! workload. A refusal names the `field`; it never echoes a key, a PEM block or file bytes.

use std::io::Read;
use std::net::IpAddr;

use agent_intercom_core::canonical::Value;
use agent_intercom_core::httpsig::PublicKey;
use agent_intercom_core::time::parse_offset_time;
use base64::Engine;
use sha2::{Digest, Sha256};

use crate::config::check_key_id;
use crate::policy::{check_endpoint, exact_members};
use crate::secrets::hex;
use crate::{Code, LineError};

/// The one protocol a key record may name: the tag of the line's signatures (the core's).
pub const KEY_PROTOCOL: &str = agent_intercom_core::httpsig::LINE_TAG;
/// The one assurance a key record may name.
pub const KEY_ASSURANCE: &str = "operator-enrolled";
/// The members of a key record.
pub const KEY_MEMBERS: &[&str] = &[
    "key_id",
    "public_key_pem",
    "issuer",
    "protocol",
    "audience",
    "assurance",
    "valid_from",
    "expires_at",
];
/// The members of an endpoint record.
pub const ENDPOINT_MEMBERS: &[&str] = &["address", "hostname", "port", "path", "ca_file"];
/// The largest CA file read, in bytes.
pub const MAX_CA_FILE_BYTES: u64 = 256 * 1024;
/// The longest hostname, in bytes.
pub const MAX_HOSTNAME_BYTES: usize = 253;

/// A checked key record of a peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRecord {
    /// The key id a response's signature names.
    pub key_id: String,
    /// The raw Ed25519 public key.
    pub public_key_raw: [u8; 32],
    /// The peer UUID (equal to the enrolled `peer_id`).
    pub issuer: String,
    /// The workload UUID (equal to the configured `workload_id`).
    pub audience: String,
    /// As given (offset-bearing RFC 3339).
    pub valid_from: String,
    /// As given (offset-bearing RFC 3339).
    pub expires_at: String,
    /// `valid_from` in UNIX milliseconds.
    pub valid_from_ms: i64,
    /// `expires_at` in UNIX milliseconds.
    pub expires_at_ms: i64,
}

/// A checked endpoint record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointRecord {
    /// The IP literal connected to, in its one canonical spelling.
    pub address: String,
    /// The name sent as SNI and checked against the certificate; never resolved.
    pub hostname: String,
    /// The TCP port.
    pub port: u16,
    /// The request path.
    pub path: String,
    /// The absolute path of the CA file, the endpoint's only trust anchor.
    pub ca_file: String,
    /// SHA-256 of the CA file's bytes, hex (a later different file is refused).
    pub ca_sha256: String,
    /// `https://{hostname}:{port}{path}`: the exact target every command names.
    pub uri: String,
}

fn key_invalid(field: &str, why: &str) -> LineError {
    LineError::new(Code::KeyInvalid, format!("{field}: {why}")).with("field", field)
}

fn endpoint_invalid(field: &str, why: &str) -> LineError {
    LineError::new(Code::EndpointInvalid, format!("{field}: {why}")).with("field", field)
}

/// Checks a key record (`field` is where it sits): the exact members, an Ed25519 SPKI PEM,
/// `issuer == peer_id`, `audience == workload_id`, the exact protocol and assurance,
/// offset-bearing times with `valid_from < expires_at` and `now < expires_at`.
pub fn key_record(
    value: &Value<'_>,
    field: &str,
    peer_id: &str,
    workload_id: &str,
    now_ms: i64,
) -> Result<KeyRecord, LineError> {
    let v = exact_members(value, KEY_MEMBERS, field, key_invalid)?;
    let at = |i: usize| format!("{field}.{}", KEY_MEMBERS[i]);
    let text = |i: usize| {
        v[i].as_str()
            .ok_or_else(|| key_invalid(&at(i), "must be a string"))
    };
    let key_id = text(0)?;
    check_key_id(key_id).map_err(|why| key_invalid(&at(0), why))?;
    let pem = text(1)?;
    if pem.contains("PRIVATE KEY") {
        return Err(key_invalid(
            &at(1),
            "holds a private key: enroll only the peer's public key",
        ));
    }
    let public = PublicKey::from_pem(pem)
        .map_err(|_| key_invalid(&at(1), "must be one Ed25519 `PUBLIC KEY` PEM block"))?;
    let issuer = text(2)?;
    if issuer != peer_id {
        return Err(key_invalid(&at(2), "must be the enrolled peer_id"));
    }
    if text(3)? != KEY_PROTOCOL {
        return Err(key_invalid(&at(3), &format!("must be {KEY_PROTOCOL:?}")));
    }
    let audience = text(4)?;
    if audience != workload_id {
        return Err(key_invalid(&at(4), "must be this workload_id"));
    }
    if text(5)? != KEY_ASSURANCE {
        return Err(key_invalid(&at(5), "must be \"operator-enrolled\""));
    }
    let time = |i: usize| -> Result<(String, i64), LineError> {
        let t = text(i)?;
        let ms = parse_offset_time(t).ok_or_else(|| {
            key_invalid(
                &at(i),
                "must be an RFC 3339 date-time with its offset (Z or +HH:MM)",
            )
        })?;
        Ok((t.to_string(), ms))
    };
    let (valid_from, valid_from_ms) = time(6)?;
    let (expires_at, expires_at_ms) = time(7)?;
    if valid_from_ms >= expires_at_ms {
        return Err(key_invalid(&at(7), "must be later than valid_from"));
    }
    if now_ms >= expires_at_ms {
        return Err(key_invalid(&at(7), "has passed: the key record is expired"));
    }
    Ok(KeyRecord {
        key_id: key_id.to_string(),
        public_key_raw: public.to_bytes(),
        issuer: issuer.to_string(),
        audience: audience.to_string(),
        valid_from,
        expires_at,
        valid_from_ms,
        expires_at_ms,
    })
}

fn check_hostname(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_HOSTNAME_BYTES
        && text.parse::<IpAddr>().is_err()
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

fn check_path(text: &str) -> bool {
    text.starts_with('/')
        && text.len() <= 1024
        && text
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'?' && b != b'#')
}

/// Checks a CA file: absolute, a regular file of at most [`MAX_CA_FILE_BYTES`], one or more
/// `CERTIFICATE` PEM blocks of DER and nothing else (no key). Returns its SHA-256, hex.
pub fn ca_file_digest(path_text: &str, field: &str) -> Result<String, LineError> {
    ca_certificates(path_text, field).map(|(digest, _)| digest)
}

/// [`ca_file_digest`] and the DER of each certificate, in file order (the trust anchors of the
/// endpoint's TLS client).
pub fn ca_certificates(path_text: &str, field: &str) -> Result<(String, Vec<Vec<u8>>), LineError> {
    let path = std::path::Path::new(path_text);
    if !path.is_absolute() {
        return Err(endpoint_invalid(field, "must be an absolute path"));
    }
    let file =
        std::fs::File::open(path).map_err(|_| endpoint_invalid(field, "cannot be opened"))?;
    let meta = file
        .metadata()
        .map_err(|_| endpoint_invalid(field, "cannot be inspected"))?;
    if !meta.is_file() {
        return Err(endpoint_invalid(field, "is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CA_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| endpoint_invalid(field, "cannot be read"))?;
    if bytes.len() as u64 > MAX_CA_FILE_BYTES {
        return Err(endpoint_invalid(field, "is too large for a CA file"));
    }
    let not_ca = || endpoint_invalid(field, "must hold only PEM `CERTIFICATE` blocks");
    let text = std::str::from_utf8(&bytes).map_err(|_| not_ca())?;
    let mut lines = text.lines().map(str::trim_end);
    let mut certificates = Vec::new();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        if line != "-----BEGIN CERTIFICATE-----" {
            return Err(not_ca());
        }
        let mut body = String::new();
        loop {
            match lines.next() {
                Some("-----END CERTIFICATE-----") => break,
                Some(l) if !l.starts_with("-----") => body.push_str(l),
                _ => return Err(not_ca()),
            }
        }
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.as_bytes())
            .map_err(|_| not_ca())?;
        if der.len() < 16 || der[0] != 0x30 {
            return Err(not_ca());
        }
        certificates.push(der);
    }
    if certificates.is_empty() {
        return Err(not_ca());
    }
    Ok((hex(&Sha256::digest(&bytes)), certificates))
}

/// Checks an endpoint record (`field` is where it sits): exact members, an IP literal in its
/// canonical spelling, a DNS hostname (lowercase, never resolved), port 1 to 65535, a path with
/// no query or fragment, and the CA file ([`ca_file_digest`]).
pub fn endpoint_record(value: &Value<'_>, field: &str) -> Result<EndpointRecord, LineError> {
    let v = exact_members(value, ENDPOINT_MEMBERS, field, endpoint_invalid)?;
    let at = |i: usize| format!("{field}.{}", ENDPOINT_MEMBERS[i]);
    let text = |i: usize| {
        v[i].as_str()
            .ok_or_else(|| endpoint_invalid(&at(i), "must be a string"))
    };
    let address = text(0)?;
    let ip: IpAddr = address
        .parse()
        .map_err(|_| endpoint_invalid(&at(0), "must be a numeric IP address (no DNS)"))?;
    if ip.to_string() != address {
        return Err(endpoint_invalid(
            &at(0),
            "must be the address's canonical spelling",
        ));
    }
    let hostname = text(1)?;
    if !check_hostname(hostname) {
        return Err(endpoint_invalid(
            &at(1),
            "must be a lowercase DNS name (used for SNI and the certificate only)",
        ));
    }
    let port = match v[2].as_i64() {
        Some(p) if (1..=65_535).contains(&p) => p as u16,
        _ => {
            return Err(endpoint_invalid(
                &at(2),
                "must be an integer from 1 to 65535",
            ));
        }
    };
    let path = text(3)?;
    if !check_path(path) {
        return Err(endpoint_invalid(
            &at(3),
            "must start with / and hold no space, query or fragment",
        ));
    }
    let ca_file = text(4)?;
    let ca_sha256 = ca_file_digest(ca_file, &at(4))?;
    let uri = format!("https://{hostname}:{port}{path}");
    check_endpoint(&uri).map_err(|why| endpoint_invalid(field, why))?;
    Ok(EndpointRecord {
        address: address.to_string(),
        hostname: hostname.to_string(),
        port,
        path: path.to_string(),
        ca_file: ca_file.to_string(),
        ca_sha256,
        uri,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r13_offset_times_parse_and_naive_ones_refuse() {
        // Key record times are read by the core's one RFC 3339 reader.
        let z = parse_offset_time("2026-01-01T00:00:00Z").unwrap();
        assert_eq!(parse_offset_time("2026-01-01T01:00:00+01:00"), Some(z));
        assert_eq!(parse_offset_time("2025-12-31T23:00:00-01:00"), Some(z));
        assert_eq!(parse_offset_time("2026-01-01T00:00:00.5Z"), Some(z + 500));
        assert_eq!(
            parse_offset_time("2026-01-01T00:00:00.123456Z"),
            Some(z + 123)
        );
        for bad in [
            "2026-01-01T00:00:00",
            "2026-01-01 00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00+24:00",
            // More than nine fraction digits (accepted, and cut to milliseconds, before the one
            // reader).
            "2026-01-01T00:00:00.1234567890Z",
        ] {
            assert_eq!(parse_offset_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn r11_hostnames_are_dns_names_not_addresses() {
        assert!(check_hostname("peer.example"));
        assert!(check_hostname("a-1.b"));
        for bad in [
            "",
            "PEER.example",
            "127.0.0.1",
            "a..b",
            "-a.b",
            "a_b",
            "::1",
        ] {
            assert!(!check_hostname(bad), "{bad}");
        }
    }
}
