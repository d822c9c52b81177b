//! Connection slots cannot be held by clients that send no request: a connection must deliver
//! its request head within the head timeout (a trickle of bytes does not extend it), and when
//! every slot is held the connection waiting longest for a head makes room for a new one. A
//! request in progress, a slow body and a keep-alive client are not affected.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Reply, Tmp, config, delivered, local_store, message, parse_reply, start};

/// A bound on how long a test waits for anything: far above every limit the tests set, far
/// below the idle timeout (the request timeout plus 30 s), which must not be what closes.
const PATIENCE: Duration = Duration::from_secs(20);

fn get_task(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}})
}

/// A JSON-RPC 1.0 POST to /a2a, kept alive, with `extra` header lines (each ending in CRLF).
fn rpc_bytes(addr: SocketAddr, body: &Value, extra: &str) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST /a2a HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\n{extra}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A keep-alive connection: requests one after another, each answer read in full.
struct Conn {
    stream: TcpStream,
    pending: Vec<u8>,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        Conn {
            stream,
            pending: Vec::new(),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    fn fill(&mut self) {
        let mut chunk = [0u8; 4096];
        let n = self.stream.read(&mut chunk).unwrap();
        assert!(n > 0, "the connection closed before the whole answer");
        self.pending.extend_from_slice(&chunk[..n]);
    }

    /// The next response (with a `Content-Length` body, as all of the service's are).
    fn response(&mut self) -> Reply {
        let head_end = loop {
            if let Some(at) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            self.fill();
        };
        let head = parse_reply(&self.pending[..head_end]);
        let length: usize = head
            .header("content-length")
            .map_or(0, |v| v.parse().unwrap());
        while self.pending.len() < head_end + length {
            self.fill();
        }
        let reply = parse_reply(&self.pending[..head_end + length]);
        self.pending.drain(..head_end + length);
        reply
    }

    fn call(&mut self, addr: SocketAddr, body: &Value) -> Value {
        self.send(&rpc_bytes(addr, body, ""));
        let reply = self.response();
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        reply.json()
    }
}

/// Waits (up to [`PATIENCE`]) for the service to close `stream`; true if it did, with nothing
/// sent (an end of stream or a reset), false if it is still open then.
fn closed_without_answer(stream: &mut TcpStream) -> bool {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => panic!("the service answered a connection that sent no request"),
        Err(e) if e.kind() == ErrorKind::ConnectionReset => true,
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => false,
        Err(e) => panic!("reading the connection failed: {e}"),
    }
}

/// Whether `stream` is still open right now (no end of stream waiting to be read).
fn still_open(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let open = matches!(stream.read(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock);
    stream.set_nonblocking(false).unwrap();
    open
}

fn assert_task_not_found(v: &Value) {
    assert_eq!(v["error"]["code"], -32001, "{v}");
}

#[test]
fn silent_connections_make_room_for_a_request_but_a_request_in_progress_keeps_its_slot() {
    let tmp = Tmp::new("conn-evict");
    let mut cfg = config(&tmp);
    cfg.limits.max_connections = 8;
    cfg.limits.max_streams = 4;
    // Longer than the test: only eviction can free a slot.
    cfg.limits.head_timeout = Duration::from_secs(600);
    cfg.blocking_timeout = Duration::from_secs(2);
    let service = start(cfg);
    let addr = service.addr();
    // The oldest connection has a request in progress: a blocking send nobody answers.
    let mut busy = Conn::open(addr);
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": message("busy-1", "wait for me")}});
    busy.send(&rpc_bytes(addr, &send, ""));
    delivered(&mut local_store(&tmp), 1);
    let mut silent: Vec<TcpStream> = (0..7).map(|_| TcpStream::connect(addr).unwrap()).collect();
    // Every slot is held; a new client is answered all the same.
    let reply = crate::client::post_rpc(addr, "1.0", &[], &get_task("nope"));
    assert_eq!(reply.status, 200);
    assert_task_not_found(&reply.json());
    // The silent connection that waited longest made room; the others are still open.
    assert!(closed_without_answer(&mut silent[0]));
    for (i, stream) in silent.iter_mut().enumerate().skip(1) {
        assert!(still_open(stream), "silent connection {i} was closed too");
    }
    // The request in progress was not cut.
    let answer = busy.response();
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.json()["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );
    // Again and again: each new client evicts the next silent one.
    for round in 0..12 {
        let reply = crate::client::post_rpc(addr, "1.0", &[], &get_task("nope"));
        assert_eq!(reply.status, 200, "round {round}");
    }
}

#[test]
fn a_head_must_arrive_within_the_head_timeout_however_it_trickles() {
    let tmp = Tmp::new("conn-trickle");
    let mut cfg = config(&tmp);
    cfg.limits.head_timeout = Duration::from_millis(300);
    let service = start(cfg);
    let addr = service.addr();
    let mut trickle = TcpStream::connect(addr).unwrap();
    trickle
        .write_all(
            format!("GET /v1/a2a/agent-card HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes(),
        )
        .unwrap();
    let mut writer = trickle.try_clone().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    // One byte every 100 ms, never the end of the head: progress, but no request.
    let dripping = std::thread::spawn(move || {
        let mut sent = 0;
        while !stopped.load(Ordering::SeqCst) && writer.write_all(b"a").is_ok() {
            sent += 1;
            std::thread::sleep(Duration::from_millis(100));
        }
        sent
    });
    let mut quiet = TcpStream::connect(addr).unwrap();
    assert!(
        closed_without_answer(&mut trickle),
        "the trickle was not cut"
    );
    assert!(
        closed_without_answer(&mut quiet),
        "the silent connection was not cut"
    );
    stop.store(true, Ordering::SeqCst);
    assert!(dripping.join().unwrap() > 0);
    // A whole head, even one sent in pieces, is served.
    let mut pieces = Conn::open(addr);
    pieces.send(format!("GET /v1/a2a/agent-card HTTP/1.1\r\nHost: {addr}\r\n").as_bytes());
    pieces.send(b"Accept: application/json\r\n");
    pieces.send(b"\r\n");
    assert_eq!(pieces.response().status, 200);
}

#[test]
fn a_keep_alive_client_is_not_affected() {
    let tmp = Tmp::new("conn-keepalive");
    let mut cfg = config(&tmp);
    cfg.limits.head_timeout = Duration::from_millis(300);
    // A blocking send lasts longer than the head timeout.
    cfg.blocking_timeout = Duration::from_secs(1);
    let service = start(cfg);
    let addr = service.addr();
    let mut conn = Conn::open(addr);
    for i in 0..50 {
        assert_task_not_found(&conn.call(addr, &get_task(&format!("t-{i}"))));
        if i % 10 == 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let send = json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
                      "params": {"message": message("ka-1", "take your time")}});
    let task = conn.call(addr, &send);
    assert_eq!(
        task["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );
    let id = task["result"]["task"]["id"].as_str().unwrap().to_string();
    let got = conn.call(addr, &get_task(&id));
    assert_eq!(got["result"]["id"], id.as_str());
    // Idle after its answer for longer than the head timeout: closed, as idle keep-alives are.
    assert!(closed_without_answer(&mut conn.stream));
}

#[test]
fn a_slow_body_within_the_body_timeout_is_read_whatever_the_head_timeout() {
    let tmp = Tmp::new("conn-body");
    let mut cfg = config(&tmp);
    cfg.limits.head_timeout = Duration::from_millis(300);
    cfg.blocking_timeout = Duration::from_secs(1);
    let service = start(cfg);
    let addr = service.addr();
    let send = json!({"jsonrpc": "2.0", "id": 3, "method": "SendMessage",
                      "params": {"message": message("slow-1", "slowly")}});
    for expect in ["", "Expect: 100-continue\r\n"] {
        let bytes = rpc_bytes(addr, &send, expect);
        let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let mut conn = Conn::open(addr);
        conn.send(&bytes[..split]);
        if !expect.is_empty() {
            assert_eq!(conn.response().status, 100);
        }
        // Ten pieces, 100 ms apart: the body takes three head timeouts.
        for piece in bytes[split..].chunks(bytes[split..].len().div_ceil(10)) {
            std::thread::sleep(Duration::from_millis(100));
            conn.send(piece);
        }
        let reply = conn.response();
        assert_eq!(reply.status, 200, "{expect:?}");
        let v = reply.json();
        assert_eq!(
            v["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
            "{v}"
        );
        // The connection goes on.
        assert_task_not_found(&conn.call(addr, &get_task("nope")));
    }
}

#[test]
fn without_the_token_silent_connections_cannot_starve_an_authorized_client() {
    const TOKEN: &str = "conn-token-0123456789abcdef";
    let tmp = Tmp::new("conn-token");
    let token_file = tmp.0.join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut cfg = config(&tmp);
    cfg.token_file = Some(token_file);
    cfg.limits.max_connections = 8;
    cfg.limits.max_streams = 4;
    cfg.limits.head_timeout = Duration::from_secs(600);
    let service = start(cfg);
    let addr = service.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicUsize::new(0));
    let (stopped, counted) = (stop.clone(), opened.clone());
    // The attacker keeps opening connections: silent ones, and ones refused for want of the
    // token and then kept open.
    let attacker = std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        while !stopped.load(Ordering::SeqCst) {
            if let Ok(mut stream) = TcpStream::connect(addr) {
                if counted.fetch_add(1, Ordering::SeqCst) % 4 == 3 {
                    let _ = stream.write_all(&rpc_bytes(addr, &get_task("x"), ""));
                }
                held.push(stream);
                if held.len() > 32 {
                    held.remove(0);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    // Until the attacker has opened more connections than there are slots.
    for _ in 0..2000 {
        if opened.load(Ordering::SeqCst) > 12 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        opened.load(Ordering::SeqCst) > 12,
        "the attacker could not connect"
    );
    let bearer = format!("Bearer {TOKEN}");
    for i in 0..10 {
        let reply = crate::client::post_rpc(
            addr,
            "1.0",
            &[("Authorization", bearer.as_str())],
            &get_task(&format!("t-{i}")),
        );
        assert_eq!(reply.status, 200, "request {i}");
        assert_task_not_found(&reply.json());
        std::thread::sleep(Duration::from_millis(30));
    }
    stop.store(true, Ordering::SeqCst);
    attacker.join().unwrap();
}

#[test]
fn a_zero_head_timeout_is_refused_before_anything_is_bound() {
    let tmp = Tmp::new("conn-zero");
    let mut cfg = config(&tmp);
    cfg.limits.head_timeout = Duration::ZERO;
    match agent_intercom_a2a::spawn(cfg) {
        Err(agent_intercom_a2a::StartError::Config(m)) => assert!(m.contains("head"), "{m}"),
        other => panic!("started with a zero head timeout: {:?}", other.err()),
    }
    assert!(!tmp.db().exists());
}
