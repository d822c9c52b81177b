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

use agent_intercom_core::httpsig::{self, Headers, Profile, Request, Response, SignInput};
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::fault::Faults;
use crate::secrets::hex;
use crate::{Code, LineError};

/// The fault point after the whole request was written, before the response is read.
pub const AFTER_SEND_POINT: &str = "after-send-before-response";

/// The longest response head (status line and fields) read.
const MAX_HEAD_BYTES: usize = 64 * 1024;

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
    match read_response(&mut source, budget, &remaining) {
        Ok((response, body, read)) => Delivery::Received(Received {
            response,
            body,
            bytes: signed.wire.len() as u64 + read,
        }),
        Err(why) => Delivery::Uncertain(why),
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

/// Where response bytes come from: fills the buffer within the time left (`Ok(0)` at the end).
type Source<'a> = dyn FnMut(&mut [u8], Duration) -> std::io::Result<usize> + 'a;

/// Reads one HTTP/1.1 response of at most `budget` bytes: the head, then a body framed by
/// `Content-Length` or chunked.
fn read_response(
    source: &mut Source<'_>,
    budget: u64,
    remaining: &dyn Fn() -> Duration,
) -> Result<(Response, Vec<u8>, u64), String> {
    let mut reader = Reader {
        source,
        buf: Vec::new(),
        budget,
        read: 0,
    };
    let head_end = loop {
        if let Some(i) = find(&reader.buf, b"\r\n\r\n") {
            break i;
        }
        if reader.buf.len() > MAX_HEAD_BYTES {
            return Err("the response head is too long".into());
        }
        reader.more(remaining)?;
    };
    let head = reader.buf[..head_end].to_vec();
    let mut rest = reader.buf.split_off(head_end + 4);
    reader.buf.clear();
    let (status, headers) = parse_head(&head)?;
    let length = headers
        .values("content-length")
        .map(|v| {
            std::str::from_utf8(v)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
        })
        .collect::<Vec<_>>();
    let chunked = headers
        .values("transfer-encoding")
        .any(|v| std::str::from_utf8(v).is_ok_and(|t| t.to_ascii_lowercase().contains("chunked")));
    let body = if chunked {
        read_chunked(&mut reader, rest, remaining)?
    } else {
        let n = match length.as_slice() {
            [Some(n)] => *n,
            _ => return Err("the response has no single valid Content-Length".into()),
        };
        if n > budget {
            return Err("the response is larger than the allowance".into());
        }
        while (rest.len() as u64) < n {
            reader.more(remaining)?;
            rest.append(&mut reader.buf);
        }
        if rest.len() as u64 != n {
            return Err("the response body is longer than its Content-Length".into());
        }
        rest
    };
    let mut response =
        Response::new(status).map_err(|_| "the response status is invalid".to_string())?;
    response.headers = headers;
    Ok((response, body, reader.read))
}

struct Reader<'a, 'b> {
    source: &'a mut Source<'b>,
    buf: Vec<u8>,
    budget: u64,
    read: u64,
}

impl Reader<'_, '_> {
    /// Appends what arrives next to `buf`; an error at the end of the stream, the deadline or
    /// the budget.
    fn more(&mut self, remaining: &dyn Fn() -> Duration) -> Result<(), String> {
        let left = remaining();
        if left.is_zero() {
            return Err("the response did not arrive in time".into());
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = match (self.source)(&mut chunk, left) {
            Ok(0) => return Err("the connection closed before the response was complete".into()),
            Ok(n) => n,
            Err(e) => return Err(format!("the response was cut: {e}")),
        };
        self.read += n as u64;
        if self.read > self.budget {
            return Err("the response is larger than the allowance".into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(head: &[u8]) -> Result<(u16, Headers), String> {
    let text = std::str::from_utf8(head).map_err(|_| "the response head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err("the response is not HTTP/1.x".into());
    }
    let status: u16 = code
        .parse()
        .ok()
        .filter(|c| (100..=599).contains(c))
        .ok_or("the response status is invalid")?;
    let mut headers = Headers::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err("a response field has no colon".into());
        };
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !valid_name {
            return Err("a response field name is invalid".into());
        }
        headers.push(name, value.trim_matches([' ', '\t']).as_bytes().to_vec());
    }
    Ok((status, headers))
}

fn read_chunked(
    reader: &mut Reader<'_, '_>,
    mut data: Vec<u8>,
    remaining: &dyn Fn() -> Duration,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = find(&data, b"\r\n") {
                break i;
            }
            if data.len() > 1024 {
                return Err("a chunk size line is too long".into());
            }
            reader.more(remaining)?;
            data.append(&mut reader.buf);
        };
        let size_text = std::str::from_utf8(&data[..line_end]).map_err(|_| "bad chunk size")?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size_text, 16).map_err(|_| "bad chunk size")?;
        if size > reader.budget {
            return Err("the response is larger than the allowance".into());
        }
        data.drain(..line_end + 2);
        if size == 0 {
            // The trailer section: only its end is accepted (no trailer fields).
            while data.len() < 2 {
                reader.more(remaining)?;
                data.append(&mut reader.buf);
            }
            if &data[..2] != b"\r\n" {
                return Err("chunked trailers are not accepted".into());
            }
            return Ok(body);
        }
        let need = size as usize + 2;
        while data.len() < need {
            reader.more(remaining)?;
            data.append(&mut reader.buf);
        }
        if &data[size as usize..need] != b"\r\n" {
            return Err("a chunk is not followed by CRLF".into());
        }
        body.extend_from_slice(&data[..size as usize]);
        data.drain(..need);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `wire` as a response arriving in pieces of `piece` bytes, within `budget`.
    fn read_from(wire: &[u8], piece: usize, budget: u64) -> Result<(u16, Vec<u8>), String> {
        let mut at = 0;
        let mut source = |buf: &mut [u8], _left: Duration| {
            let n = piece.min(buf.len()).min(wire.len() - at);
            buf[..n].copy_from_slice(&wire[at..at + n]);
            at += n;
            Ok(n)
        };
        let forever = || Duration::from_secs(60);
        read_response(&mut source, budget, &forever).map(|(r, body, _)| (r.status(), body))
    }

    #[test]
    fn bodies_are_framed_by_length_or_chunks() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        for piece in [1, 3, 4096] {
            assert_eq!(
                read_from(plain, piece, 1 << 20),
                Ok((200, b"hello".to_vec()))
            );
        }
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                        5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        for piece in [1, 7, 4096] {
            assert_eq!(
                read_from(chunked, piece, 1 << 20),
                Ok((200, b"hello world".to_vec()))
            );
        }
        let refused: [&[u8]; 7] = [
            // no length, two lengths, a body longer than its length, cut short
            b"HTTP/1.1 200 OK\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello",
            // trailers, a chunk without its CRLF, a bad size
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ];
        for wire in refused {
            assert!(
                read_from(wire, 4096, 1 << 20).is_err(),
                "{}",
                String::from_utf8_lossy(wire)
            );
        }
        // Over the budget: a declared length, a chunk size, or what actually arrives.
        let big = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
        assert!(read_from(big, 4096, 64).is_err());
        assert!(read_from(plain, 4096, 10).is_err());
        let big_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffff\r\n";
        assert!(read_from(big_chunk, 4096, 1 << 10).is_err());
        // A head that never ends is cut at its limit.
        let mut endless = b"HTTP/1.1 200 OK\r\n".to_vec();
        endless.extend(std::iter::repeat_n(b'a', MAX_HEAD_BYTES + 10));
        assert!(read_from(&endless, 4096, 1 << 20).is_err());
    }

    #[test]
    fn heads_parse_strictly() {
        let (status, headers) =
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX:  a \t").unwrap();
        assert_eq!(status, 200);
        assert_eq!(headers.values("x").next(), Some(&b"a"[..]));
        for bad in [
            &b"HTTP/2 200 OK"[..],
            b"HTTP/1.1 99 X",
            b"HTTP/1.1 200 OK\r\nno colon",
            b"HTTP/1.1 200 OK\r\nbad name: v",
            b"HTTP/1.1 abc OK",
            b"\xff",
        ] {
            assert!(parse_head(bad).is_err(), "{bad:?}");
        }
    }

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
