//! One physical exchange of the line: an HTTPS POST of a signed A2A JSON-RPC request to the
//! enrolled endpoint, and the response read back within the exchange's network allowance.
//!
//! - **No name resolution.** The connection goes to the enrolled numeric address and port; the
//!   hostname is used only for SNI and for checking the certificate.
//! - **One trust anchor.** The TLS client trusts only the certificates of the enrolled CA file
//!   (its SHA-256 pinned at enrollment; a changed file is `ca_changed`, before any charge). No
//!   system roots, no client certificate. TLS 1.2 and 1.3 through rustls with the ring provider.
//! - **Signed requests** under [`Profile::line_request`]: `Content-Digest`, `created`, `expires`,
//!   a fresh 16-byte nonce and the workload's key id; the response is then verified by the caller
//!   against the same request ([`Signed::request`]).
//! - **Honest delivery.** A failure before the first request byte is written (connect, handshake,
//!   certificate) is [`Delivery::Undelivered`]; anything after that without a complete response
//!   (a reset, a timeout, a response over the allowance, a malformed head) is
//!   [`Delivery::Uncertain`]: the peer may have acted. Nothing is ever sent twice.
//! - **Bounds.** The whole exchange (connect to last byte) has the policy's `network_seconds`;
//!   request and response bytes together at most the 512 KiB allowance.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_intercom_core::httpsig::{self, Profile, Request, Response, SignInput};
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::fault::Faults;
use crate::http1::{self, Unframed};
use crate::secrets::hex;
use crate::{Code, LineError};

/// The fault point after the whole request was written, before the response is read.
pub const AFTER_SEND_POINT: &str = "after-send-before-response";

/// Where an exchange goes.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The numeric address connected to.
    pub address: IpAddr,
    /// The hostname (SNI and certificate name only).
    pub hostname: String,
    /// The port.
    pub port: u16,
    /// The path (with its query, if any).
    pub path: String,
    /// The DER certificates of the enrolled CA file.
    pub trust_anchors: Vec<Vec<u8>>,
}

impl Endpoint {
    /// `https://hostname:port/path`: the target URI the request is signed for.
    pub fn target_uri(&self) -> String {
        format!("https://{}:{}{}", self.hostname, self.port, self.path)
    }

    /// The `Host` field: the hostname, with the port unless it is 443.
    fn host_field(&self) -> String {
        if self.port == 443 {
            self.hostname.clone()
        } else {
            format!("{}:{}", self.hostname, self.port)
        }
    }
}

/// Who signs and for whom.
pub struct Signer<'a> {
    /// The workload's key.
    pub key: &'a httpsig::SigningKey,
    /// Its configured id (`signing_key_id`).
    pub key_id: &'a str,
    /// `Intercom-Issuer`: the workload UUID.
    pub issuer: &'a str,
    /// `Intercom-Audience`: the peer UUID.
    pub audience: &'a str,
}

/// A signed request, ready to send.
#[derive(Clone, Debug)]
pub struct Signed {
    /// The request as signed (its fields carry the signature), for verifying the response.
    pub request: Request,
    /// The bytes written: request line, fields, empty line, body.
    pub wire: Vec<u8>,
    /// The request's nonce.
    pub nonce: String,
    /// `created` of the request signature (UNIX seconds).
    pub created: i64,
    /// SHA-256 of the request's `Signature` field, hex.
    pub signature_sha256: String,
}

/// A fresh nonce: 16 random bytes, base64url without padding.
pub fn fresh_nonce() -> Result<String, LineError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|_| LineError::new(Code::StoreIo, "the system has no random source"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Signs `body` for `endpoint` at `now_s`, valid for `lifetime_s` seconds.
pub fn sign(
    endpoint: &Endpoint,
    body: &[u8],
    signer: &Signer<'_>,
    now_s: i64,
    lifetime_s: i64,
) -> Result<Signed, LineError> {
    let failed = |e: agent_intercom_core::Error| {
        LineError::new(Code::StoreIo, format!("cannot sign the request: {e}"))
    };
    let nonce = fresh_nonce()?;
    let mut request = Request::new("POST", &endpoint.target_uri())
        .map_err(failed)?
        .with_header("Content-Type", "application/json")
        .with_header("A2A-Version", "1.0")
        .with_header("A2A-Extensions", httpsig::LINE_EXTENSION_URI)
        .with_header("Intercom-Issuer", signer.issuer)
        .with_header("Intercom-Audience", signer.audience);
    let input = SignInput {
        key: signer.key,
        keyid: signer.key_id,
        created: now_s,
        expires: now_s + lifetime_s,
        nonce: &nonce,
    };
    let signed =
        httpsig::sign_request(&Profile::line_request(), &request, body, &input).map_err(failed)?;
    signed.apply(&mut request.headers);
    let mut wire = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        endpoint.path,
        endpoint.host_field(),
        body.len()
    )
    .into_bytes();
    for (name, value) in request.headers.iter() {
        wire.extend_from_slice(name.as_bytes());
        wire.extend_from_slice(b": ");
        wire.extend_from_slice(value);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"\r\n");
    wire.extend_from_slice(body);
    Ok(Signed {
        request,
        wire,
        nonce,
        created: now_s,
        signature_sha256: hex(&Sha256::digest(signed.signature.as_bytes())),
    })
}

/// A complete HTTP response, not yet authenticated.
#[derive(Clone, Debug)]
pub struct Received {
    /// The response (status and fields, as received).
    pub response: Response,
    /// The body.
    pub body: Vec<u8>,
    /// Request and response bytes on the wire (TLS framing excluded).
    pub bytes: u64,
}

/// What became of an exchange.
#[derive(Debug)]
pub enum Delivery {
    /// Nothing of the request was written (why, for people).
    Undelivered(String),
    /// The request was (perhaps partly) written and no complete response came back.
    Uncertain(String),
    /// A complete response.
    Received(Received),
}

/// Sends `signed` to `endpoint` and reads the response, within `deadline` and `allowance`
/// bytes (request and response together).
pub fn exchange(
    endpoint: &Endpoint,
    signed: &Signed,
    deadline: Duration,
    allowance: u64,
    faults: &Faults,
) -> Delivery {
    let end = Instant::now() + deadline;
    let remaining = || end.saturating_duration_since(Instant::now());
    let config = match client_config(&endpoint.trust_anchors) {
        Ok(c) => c,
        Err(why) => return Delivery::Undelivered(why),
    };
    let Ok(name) = rustls_pki_types::ServerName::try_from(endpoint.hostname.clone()) else {
        return Delivery::Undelivered("the hostname is not a DNS name".into());
    };
    let Ok(mut tls) = rustls::ClientConnection::new(config, name) else {
        return Delivery::Undelivered("cannot start TLS".into());
    };
    let addr = SocketAddr::new(endpoint.address, endpoint.port);
    let mut tcp = match TcpStream::connect_timeout(&addr, remaining().max(Duration::from_millis(1)))
    {
        Ok(s) => s,
        Err(e) => return Delivery::Undelivered(format!("cannot connect: {e}")),
    };
    let set_timeouts = |tcp: &TcpStream| {
        let left = Some(remaining().max(Duration::from_millis(1)));
        tcp.set_read_timeout(left).is_ok() && tcp.set_write_timeout(left).is_ok()
    };
    while tls.is_handshaking() {
        if remaining().is_zero() || !set_timeouts(&tcp) {
            return Delivery::Undelivered("the TLS handshake did not finish in time".into());
        }
        if let Err(e) = tls.complete_io(&mut tcp) {
            return Delivery::Undelivered(format!("the TLS handshake failed: {e}"));
        }
    }
    // From here on the peer may receive the request: every failure is uncertain.
    if signed.wire.len() as u64 > allowance {
        return Delivery::Undelivered("the request is larger than the allowance".into());
    }
    {
        if !set_timeouts(&tcp) {
            return Delivery::Uncertain("cannot set the socket's deadline".into());
        }
        let mut stream = rustls::Stream::new(&mut tls, &mut tcp);
        if let Err(e) = stream.write_all(&signed.wire).and_then(|()| stream.flush()) {
            return Delivery::Uncertain(format!("the request was cut: {e}"));
        }
    }
    faults.crash_at(AFTER_SEND_POINT);
    let budget = allowance - signed.wire.len() as u64;
    let mut source = |buf: &mut [u8], left: Duration| {
        tcp.set_read_timeout(Some(left))?;
        rustls::Stream::new(&mut tls, &mut tcp).read(buf)
    };
    match http1::read_response(&mut source, budget, &remaining, Unframed::Refused) {
        Ok(reply) => Delivery::Received(Received {
            response: reply.response,
            body: reply.body,
            bytes: signed.wire.len() as u64 + reply.bytes_read,
        }),
        Err(why) => Delivery::Uncertain(why.to_string()),
    }
}

fn client_config(anchors: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for der in anchors {
        roots
            .add(rustls_pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| format!("the enrolled CA certificate is unusable: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("no TLS version: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_signed_for_the_exact_endpoint() {
        let key = httpsig::SigningKey::from_seed(&[3; 32]).unwrap();
        let endpoint = Endpoint {
            address: "127.0.0.1".parse().unwrap(),
            hostname: "peer.example".into(),
            port: 443,
            path: "/a2a/jsonrpc".into(),
            trust_anchors: Vec::new(),
        };
        let signer = Signer {
            key: &key,
            key_id: "w1",
            issuer: "i",
            audience: "a",
        };
        let signed = sign(&endpoint, b"{}", &signer, 1_700_000_000, 30).unwrap();
        let text = String::from_utf8(signed.wire.clone()).unwrap();
        assert!(text.starts_with("POST /a2a/jsonrpc HTTP/1.1\r\nHost: peer.example\r\n"));
        assert!(text.contains("\r\nContent-Length: 2\r\n"));
        assert!(text.ends_with("\r\n\r\n{}"));
        assert_eq!(signed.nonce.len(), 22);
        let lookup = |id: &str| (id == "w1").then(|| key.public_key());
        let ok = httpsig::verify_request(
            &Profile::line_request(),
            &signed.request,
            b"{}",
            1_700_000_000_000,
            lookup,
        )
        .unwrap();
        assert_eq!(ok.nonce.as_deref(), Some(signed.nonce.as_str()));
        // Two requests never share a nonce.
        let again = sign(&endpoint, b"{}", &signer, 1_700_000_000, 30).unwrap();
        assert_ne!(again.nonce, signed.nonce);
    }

    #[test]
    fn nothing_written_before_a_refused_connection_is_undelivered() {
        // A port nobody listens on (bound, then closed).
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let endpoint = Endpoint {
            address: "127.0.0.1".parse().unwrap(),
            hostname: "peer.example".into(),
            port,
            path: "/".into(),
            trust_anchors: Vec::new(),
        };
        let key = httpsig::SigningKey::from_seed(&[3; 32]).unwrap();
        let signer = Signer {
            key: &key,
            key_id: "w1",
            issuer: "i",
            audience: "a",
        };
        let signed = sign(&endpoint, b"{}", &signer, 1_700_000_000, 30).unwrap();
        let got = exchange(
            &endpoint,
            &signed,
            Duration::from_secs(2),
            crate::NETWORK_ALLOWANCE,
            &Faults::none(),
        );
        assert!(matches!(got, Delivery::Undelivered(_)), "{got:?}");
    }
}
