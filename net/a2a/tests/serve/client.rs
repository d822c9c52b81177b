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

/// One frame of a stream: an event (a JSON-RPC response) or a comment (a keep-alive).
#[derive(Debug)]
pub enum Frame {
    Event(Value),
    Comment(String),
}

/// An answer read as it comes, over a real socket: the head at once, then a stream's frames
/// one at a time (the chunked body decoded as it arrives), or the whole body of an answer that
/// is not a stream.
pub struct Sse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: std::io::BufReader<TcpStream>,
    text: Vec<u8>,
    ended: bool,
}

impl Sse {
    /// POSTs `body` to /a2a with `headers` and reads the answer's head.
    pub fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> Sse {
        use std::io::BufRead;
        let mut stream = connect(addr);
        let mut head = format!(
            "POST /a2a HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
             Content-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            head += &format!("{k}: {v}\r\n");
        }
        head += "\r\n";
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let mut reader = std::io::BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let status: u16 = line
            .split(' ')
            .nth(1)
            .unwrap_or_else(|| panic!("no status line: {line:?}"))
            .parse()
            .unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            let (k, v) = trimmed.split_once(':').unwrap();
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        Sse {
            status,
            headers,
            reader,
            text: Vec::new(),
            ended: false,
        }
    }

    /// A JSON-RPC call of `method` (request id 9) under `A2A-Version: version` (none if empty).
    pub fn call(addr: SocketAddr, version: &str, method: &str, params: Value) -> Sse {
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params});
        let mut headers = vec![("Content-Type", "application/json")];
        if !version.is_empty() {
            headers.push(("A2A-Version", version));
        }
        Sse::post(addr, &headers, body.to_string().as_bytes())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_stream(&self) -> bool {
        self.header("content-type") == Some("text/event-stream")
    }

    /// The whole JSON body of an answer that is not a stream.
    pub fn json(mut self) -> Value {
        assert!(!self.is_stream(), "a stream, not one answer");
        let length: usize = self.header("content-length").unwrap().parse().unwrap();
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Reads one chunk of the body into `text`; false at its end (the last chunk, or the
    /// connection closed).
    fn chunk(&mut self) -> bool {
        use std::io::BufRead;
        if self.ended {
            return false;
        }
        let mut line = String::new();
        let size = match self.reader.read_line(&mut line) {
            Ok(0) | Err(_) => 0,
            Ok(_) => usize::from_str_radix(line.trim(), 16).unwrap(),
        };
        if size == 0 {
            self.ended = true;
            return false;
        }
        let mut data = vec![0u8; size + 2];
        self.reader.read_exact(&mut data).unwrap();
        assert_eq!(&data[size..], b"\r\n", "a chunk ends in CRLF");
        self.text.extend_from_slice(&data[..size]);
        true
    }

    /// The next frame; `None` once the stream has ended.
    pub fn frame(&mut self) -> Option<Frame> {
        assert!(self.is_stream(), "not a stream: {:?}", self.headers);
        loop {
            if let Some(end) = self.text.windows(2).position(|w| w == b"\n\n") {
                let raw: Vec<u8> = self.text.drain(..end + 2).collect();
                let raw = String::from_utf8(raw).unwrap();
                let mut data = Vec::new();
                for line in raw.lines().filter(|l| !l.is_empty()) {
                    if let Some(comment) = line.strip_prefix(':') {
                        return Some(Frame::Comment(comment.trim().to_string()));
                    }
                    let value = line.strip_prefix("data:").expect("only data and comments");
                    data.push(value.strip_prefix(' ').unwrap_or(value));
                }
                let event = serde_json::from_str(&data.join("\n")).unwrap();
                return Some(Frame::Event(event));
            }
            if !self.chunk() {
                assert!(self.text.is_empty(), "a frame cut short: {:?}", self.text);
                return None;
            }
        }
    }

    /// The next event (JSON-RPC response), keep-alives skipped; `None` at the end.
    pub fn event(&mut self) -> Option<Value> {
        loop {
            match self.frame()? {
                Frame::Event(event) => return Some(event),
                Frame::Comment(_) => {}
            }
        }
    }

    /// The `result` of the next event, which must be there and a success for request 9.
    pub fn result(&mut self) -> Value {
        let event = self.event().expect("an event before the end of the stream");
        assert_eq!(event["jsonrpc"], "2.0");
        assert_eq!(event["id"], 9, "{event}");
        assert!(event.get("error").is_none(), "{event}");
        event["result"].clone()
    }

    /// Reads to the end of the stream, which must come with no further event.
    pub fn ends(&mut self) {
        if let Some(event) = self.event() {
            panic!("the stream goes on: {event}");
        }
    }
}
