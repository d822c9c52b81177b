//! A body over its route's limit is answered 413, and the answer reaches a client that sends the
//! whole body before reading: the service takes and discards the rest of the body (within its
//! bounds) instead of resetting the connection under the client's feet.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::client::{Reply, Tmp, config, connect, read_answer, send_after_answer, start};

const RPC_LIMIT: usize = 1024 * 1024;
const HANDOFF_LIMIT: usize = 2 * 1024 * 1024 + 64 * 1024;

/// The three ways in: JSON-RPC 1.0, JSON-RPC 0.3 (no version header) and the handoff route,
/// each with its path, extra headers and body limit.
const ROUTES: [(&str, &str, usize); 3] = [
    ("/a2a", "A2A-Version: 1.0\r\n", RPC_LIMIT),
    ("/a2a", "", RPC_LIMIT),
    ("/v1/a2a/handoff", "", HANDOFF_LIMIT),
];

fn head(addr: SocketAddr, path: &str, extra: &str, framing: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{extra}\
         {framing}\r\n"
    )
}

fn assert_413(reply: &Reply, limit: usize, what: &str) {
    assert_eq!(
        reply.status,
        413,
        "{what}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.header("connection"), Some("close"), "{what}");
    let error = &reply.json()["error"];
    assert_eq!(error["code"], "ENVELOPE_TOO_LARGE", "{what}");
    let text = error["message"].as_str().unwrap();
    assert!(text.contains(&limit.to_string()), "{what}: {text}");
}

#[test]
fn a_declared_body_over_the_limit_gets_its_413_after_sending_it_whole() {
    let tmp = Tmp::new("oversize-declared");
    let service = start(config(&tmp));
    let addr = service.addr();
    for (path, extra, limit) in ROUTES {
        for size in [limit + 1, 1_100_000.max(limit + limit / 10)] {
            let framing = format!("Content-Length: {size}\r\n");
            let head = head(addr, path, extra, &framing);
            let reply = send_after_answer(addr, head.as_bytes(), &vec![b' '; size]);
            assert_413(&reply, limit, &format!("{path} {extra:?} {size}"));
        }
    }
    // The service goes on.
    assert_eq!(crate::client::get(addr, "/v1/a2a/agent-card").status, 200);
}

#[test]
fn a_chunked_body_over_the_limit_gets_its_413_after_sending_it_whole() {
    let tmp = Tmp::new("oversize-chunked");
    let service = start(config(&tmp));
    let addr = service.addr();
    for (path, extra, limit) in ROUTES {
        let chunk = 64 * 1024;
        let chunks = |bytes: &mut Vec<u8>, n: usize| {
            for _ in 0..n {
                bytes.extend_from_slice(format!("{chunk:x}\r\n").as_bytes());
                bytes.resize(bytes.len() + chunk, b' ');
                bytes.extend_from_slice(b"\r\n");
            }
        };
        // Chunks past the limit, then (once refused) 8 MiB more: more than the sockets' buffers
        // hold, so that the service must take them.
        let mut first = head(addr, path, extra, "Transfer-Encoding: chunked\r\n").into_bytes();
        chunks(&mut first, limit / chunk + 1);
        let mut rest = Vec::new();
        chunks(&mut rest, 8 * 1024 * 1024 / chunk);
        rest.extend_from_slice(b"0\r\n\r\n");
        let reply = send_after_answer(addr, &first, &rest);
        assert_413(&reply, limit, &format!("{path} {extra:?} chunked"));
    }
}

#[test]
fn a_client_that_waits_for_100_continue_gets_the_413_instead() {
    let tmp = Tmp::new("oversize-expect");
    let service = start(config(&tmp));
    let addr = service.addr();
    for (path, extra, limit) in ROUTES {
        let framing = format!("Content-Length: {}\r\nExpect: 100-continue\r\n", limit * 8);
        let mut stream = connect(addr);
        stream
            .write_all(head(addr, path, extra, &framing).as_bytes())
            .unwrap();
        // Nothing of the body is sent: the first answer is the refusal, not 100 Continue.
        let reply = read_answer(&mut stream);
        assert_413(&reply, limit, &format!("{path} {extra:?} expect"));
    }
}

/// A refused request whose body never ends (declared as a terabyte), on a connection of its own.
fn endless(addr: SocketAddr) -> TcpStream {
    let mut stream = connect(addr);
    let framing = format!("Content-Length: {}\r\n", 1u64 << 40);
    stream
        .write_all(head(addr, "/a2a", "", &framing).as_bytes())
        .unwrap();
    stream
}

#[test]
fn the_discarding_is_bounded_in_bytes() {
    let tmp = Tmp::new("oversize-bytes");
    let mut cfg = config(&tmp);
    let bound = 16 * 1024 * 1024;
    cfg.limits.linger_bytes = bound;
    // Time enough for the bytes bound to be met first.
    cfg.limits.linger_time = Duration::from_secs(600);
    let service = start(cfg);
    let addr = service.addr();
    // A client that never stops sending is cut off: its writes fail once the service has
    // discarded its bound (and the sockets' buffers are full), not before.
    let mut stream = endless(addr);
    let block = vec![b' '; 64 * 1024];
    let mut sent = 0usize;
    let cut = loop {
        match stream.write(&block) {
            Ok(n) => sent += n,
            Err(e) => break e,
        }
        assert!(
            sent < 1 << 30,
            "the service took a gigabyte of a refused body"
        );
    };
    assert!(
        matches!(
            cut.kind(),
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
        ),
        "{cut}"
    );
    assert!(
        sent >= bound,
        "cut off after {sent} bytes, before the bound"
    );
    assert_eq!(crate::client::get(addr, "/v1/a2a/agent-card").status, 200);
}

#[test]
fn the_discarding_is_bounded_in_time() {
    let tmp = Tmp::new("oversize-time");
    let mut cfg = config(&tmp);
    cfg.limits.linger_time = Duration::from_millis(200);
    let service = start(cfg);
    let addr = service.addr();
    // A client that sends a byte now and then is cut off: the count of its writes is bounded,
    // not the time they take.
    let mut stream = endless(addr);
    let mut cut = None;
    for _ in 0..5000 {
        if let Err(e) = stream.write_all(b" ") {
            cut = Some(e);
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(cut.is_some(), "a trickling client held the connection");
    assert_eq!(crate::client::get(addr, "/v1/a2a/agent-card").status, 200);
}
