//! A small HTTP/1.1 client over a real TCP socket (no mocks), and the service started for a
//! test over a throwaway store.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_intercom_a2a::{Running, ServeConfig};
use agent_intercom_scratchpad::{Config, Store, SystemClock};
use serde_json::{Value, json};

/// An HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}), status {}: {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn decode_chunked(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size_text = String::from_utf8_lossy(&raw[..end]);
        let size =
            usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap_or(0);
        raw = &raw[end + 2..];
        if size == 0 || raw.len() < size {
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[(size + 2).min(raw.len())..];
    }
}

/// Parses a complete response (the connection was closed after it).
pub fn parse_reply(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head: {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let rest = &raw[split + 4..];
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        decode_chunked(rest)
    } else {
        rest.to_vec()
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// Sends raw bytes and reads the whole response (`Connection: close` is expected in them).
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    // The service may answer (413, 431) before it has read everything; a write error then is
    // expected, the answer is what counts.
    let _ = stream.write_all(bytes);
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    parse_reply(&out)
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
}

/// Writes `first`, waits until the answer has begun to arrive, then writes `rest` (a write
/// error fails the test: the service must take it all) and reads the answer up to the service's
/// end of stream (a reset fails the test). This is what a client does that sends its whole body
/// before it reads, when the refusal comes before the body is through.
pub fn send_after_answer(addr: SocketAddr, first: &[u8], rest: &[u8]) -> Reply {
    let mut stream = connect(addr);
    stream.write_all(first).unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(stream.peek(&mut byte).unwrap(), 1, "no answer");
    stream
        .write_all(rest)
        .unwrap_or_else(|e| panic!("the service did not take the rest of the body: {e}"));
    read_answer(&mut stream)
}

/// The whole answer, which must end cleanly and be complete (as long as its Content-Length).
pub fn read_answer(stream: &mut TcpStream) -> Reply {
    let mut out = Vec::new();
    if let Err(e) = stream.read_to_end(&mut out) {
        panic!(
            "the answer did not end cleanly ({e}) after {} bytes: {:?}",
            out.len(),
            String::from_utf8_lossy(&out)
        );
    }
    let reply = parse_reply(&out);
    let length: usize = reply
        .header("content-length")
        .expect("a Content-Length")
        .parse()
        .unwrap();
    assert_eq!(reply.body.len(), length, "a truncated answer");
    reply
}

/// One request with `headers` and `body`.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "\r\n";
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes)
}

pub fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, &[], b"")
}

/// A JSON-RPC POST to /a2a with `A2A-Version: version` (none when empty) and extra headers.
pub fn post_rpc(addr: SocketAddr, version: &str, extra: &[(&str, &str)], body: &Value) -> Reply {
    let mut headers = vec![("Content-Type", "application/json")];
    if !version.is_empty() {
        headers.push(("A2A-Version", version));
    }
    headers.extend_from_slice(extra);
    request(addr, "POST", "/a2a", &headers, body.to_string().as_bytes())
}

/// A JSON-RPC call: the response object (HTTP 200 expected).
pub fn call(addr: SocketAddr, version: &str, method: &str, params: Value) -> Value {
    let reply = post_rpc(
        addr,
        version,
        &[],
        &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let v = reply.json();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], 7);
    v
}

/// The `result` of a call that must succeed.
pub fn ok(addr: SocketAddr, version: &str, method: &str, params: Value) -> Value {
    let v = call(addr, version, method, params);
    assert!(v.get("error").is_none(), "{method}: {v}");
    v["result"].clone()
}

/// The `error` of a call that must fail, checked to carry `code`.
pub fn err(addr: SocketAddr, version: &str, method: &str, params: Value, code: i64) -> Value {
    let v = call(addr, version, method, params);
    assert_eq!(v["error"]["code"], code, "{method}: {v}");
    assert!(v.get("result").is_none());
    v["error"].clone()
}

/// The ErrorInfo reason of a 1.0 error.
pub fn reason(error: &Value) -> &str {
    error["data"][0]["reason"].as_str().unwrap_or("")
}

/// A throwaway directory, removed when dropped.
pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(name: &str) -> Tmp {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "aic-serve-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }

    pub fn db(&self) -> PathBuf {
        self.0.join("pad.sqlite")
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The default options over the store in `tmp`.
pub fn config(tmp: &Tmp) -> ServeConfig {
    ServeConfig::new(tmp.db())
}

/// A service whose blocking sends wait long enough for a test's local agent to act.
pub fn start_waiting(tmp: &Tmp) -> Running {
    let mut cfg = config(tmp);
    cfg.blocking_timeout = Duration::from_secs(25);
    start(cfg)
}

/// [`ok`] on a thread of its own: a blocking send that a local agent then answers.
pub fn in_background(
    addr: SocketAddr,
    version: &'static str,
    method: &'static str,
    params: Value,
) -> std::thread::JoinHandle<Value> {
    std::thread::spawn(move || ok(addr, version, method, params))
}

pub fn start(config: ServeConfig) -> Running {
    agent_intercom_a2a::spawn(config).unwrap_or_else(|e| panic!("the service did not start: {e}"))
}

/// A local agent's own connection to the store (another connection, as `pad` would open).
pub fn local_store(tmp: &Tmp) -> Store {
    Store::open(&tmp.db(), Config::default(), Arc::new(SystemClock)).unwrap()
}

/// Waits (bounded by a number of polls, not by a clock) until the assignee `a2a` has been
/// delivered `count` messages, as a local agent polling `unread` would; returns them.
pub fn delivered(store: &mut Store, count: usize) -> Vec<agent_intercom_scratchpad::Message> {
    let mut seen = Vec::new();
    for _ in 0..3000 {
        seen.extend(store.read_unread("a2a", None).unwrap());
        if seen.len() >= count {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!(
        "the local agent was delivered {} of {count} messages",
        seen.len()
    );
}

/// A 1.0 user message with one text part.
pub fn message(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// A 0.3 user message with one text part.
pub fn message03(id: &str, text: &str) -> Value {
    json!({"kind": "message", "messageId": id, "role": "user",
           "parts": [{"kind": "text", "text": text}]})
}

/// A clock that moves only when told (the service's and its store's): signature windows are
/// tested without waiting. It starts at the system time, so that what the service stores is
/// also current for a local agent's own connection.
pub struct Manual(std::sync::atomic::AtomicI64);

impl Manual {
    pub fn starting_now() -> Arc<Manual> {
        use agent_intercom_scratchpad::Clock;
        Arc::new(Manual(std::sync::atomic::AtomicI64::new(
            SystemClock.now_ms(),
        )))
    }

    pub fn ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }

    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl agent_intercom_scratchpad::Clock for Manual {
    fn now_ms(&self) -> i64 {
        self.ms()
    }
}

/// A keys directory in `tmp` (0700) under `name`.
pub fn key_dir(tmp: &Tmp, name: &str) -> agent_intercom_a2a::keys::KeyDir {
    agent_intercom_a2a::keys::KeyDir::create(&tmp.0.join(name)).unwrap()
}

/// A peer's own Ed25519 key `id`, generated in its keys directory `peer` and enrolled (its
/// public half) in the service's directory `service`: the peer's signing key.
pub fn enrolled_peer_key(
    tmp: &Tmp,
    peer: &str,
    service: &str,
    id: &str,
) -> agent_intercom_core::httpsig::SigningKey {
    use agent_intercom_core::envelope::SignatureKind;
    let own = key_dir(tmp, peer);
    own.generate(SignatureKind::Ed25519, id).unwrap();
    let public = own.export_public(id).unwrap();
    key_dir(tmp, service)
        .import_public(id, public.as_bytes())
        .unwrap();
    own_signing_key(tmp, peer, id)
}

/// The signing key of an own Ed25519 key of the directory `dir`.
pub fn own_signing_key(tmp: &Tmp, dir: &str, id: &str) -> agent_intercom_core::httpsig::SigningKey {
    let pem = std::fs::read_to_string(tmp.0.join(dir).join(format!("{id}.ed25519.key"))).unwrap();
    agent_intercom_core::httpsig::SigningKey::from_pem(&pem).unwrap()
}
