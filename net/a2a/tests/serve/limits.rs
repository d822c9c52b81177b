//! Bad input of every kind: wrong content, sizes, nesting, headers, slow bodies, and a stream of
//! garbage that must always get an answer (never a dropped connection).

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Tmp, config, message, post_rpc, raw, request, start};

fn rpc_body(reply: &crate::client::Reply) -> Value {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

fn post_bytes(addr: std::net::SocketAddr, body: &[u8]) -> crate::client::Reply {
    request(
        addr,
        "POST",
        "/a2a",
        &[("Content-Type", "application/json"), ("A2A-Version", "1.0")],
        body,
    )
}

#[test]
fn malformed_requests_get_the_json_rpc_codes() {
    let tmp = Tmp::new("limits-rpc");
    let service = start(config(&tmp));
    let addr = service.addr();
    let cases: Vec<(&[u8], i64)> = vec![
        (b"{", -32700),
        (b"", -32700),
        (b"{\"jsonrpc\": \"2.0\", \"method\": \"GetTask\",}", -32700),
        (b"\xff\xfe{}", -32700),
        (b"42", -32600),
        (b"\"text\"", -32600),
        (b"[]", -32600),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\"}]",
            -32600,
        ),
        (b"{\"id\": 1, \"method\": \"GetTask\"}", -32600),
        (
            b"{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"GetTask\"}",
            -32600,
        ),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1}", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": 5}", -32600),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": {}, \"method\": \"GetTask\"}",
            -32600,
        ),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"GetTask\"}",
            -32600,
        ),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"Nope\"}",
            -32601,
        ),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"GetTask\", \"params\": [1]}",
            -32602,
        ),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"GetTask\", \"params\": 3}",
            -32602,
        ),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"GetTask\", \"params\": {\"id\": 3}}",
            -32602,
        ),
    ];
    for (body, code) in cases {
        let v = rpc_body(&post_bytes(addr, body));
        assert_eq!(
            v["error"]["code"],
            code,
            "{}: {v}",
            String::from_utf8_lossy(body)
        );
        assert_eq!(v["jsonrpc"], "2.0");
        if code == -32700 {
            assert_eq!(v["id"], Value::Null);
        }
    }
    // Wrong types in a message name the member.
    for (m, field) in [
        (
            json!({"messageId": "m", "role": "ROLE_USER", "parts": "text"}),
            "message.parts",
        ),
        (
            json!({"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}),
            "message.role",
        ),
        (
            json!({"messageId": ["m"], "role": "ROLE_USER", "parts": [{"text": "x"}]}),
            "message.messageId",
        ),
        (
            json!({"messageId": "m", "role": "ROLE_USER", "parts": [{}]}),
            "message.parts[0]",
        ),
        (json!("just text"), "message"),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": "s", "method": "SendMessage",
                          "params": {"message": m}});
        let v = rpc_body(&post_rpc(addr, "1.0", &[], &body));
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert_eq!(v["id"], "s");
        assert_eq!(
            v["error"]["data"][1]["fieldViolations"][0]["field"], field,
            "{v}"
        );
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": message("m", "x"), "configuration": {"returnImmediately": "yes"}}});
    let v = rpc_body(&post_rpc(addr, "1.0", &[], &body));
    assert_eq!(v["error"]["code"], -32602);
}

#[test]
fn a_repeated_key_is_refused_rather_than_read_one_way() {
    let tmp = Tmp::new("limits-repeat");
    let service = start(config(&tmp));
    let addr = service.addr();
    // Last-wins would run ListTasks; first-wins GetTask: neither runs.
    let twice = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"ListTasks","params":{}}"#;
    let v = rpc_body(&post_bytes(addr, twice));
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["error"]["data"][0]["reason"], "DUPLICATE_KEY");
    let nested =
        br#"{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"pageSize":1,"pageSize":2}}"#;
    let v = rpc_body(&post_bytes(addr, nested));
    assert_eq!(v["error"]["data"][0]["reason"], "DUPLICATE_KEY", "{v}");
    // The same request without the repeat is answered.
    let once = br#"{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"pageSize":1}}"#;
    let v = rpc_body(&post_bytes(addr, once));
    assert!(v.get("result").is_some(), "{v}");
}

#[test]
fn deep_nesting_huge_bodies_and_other_content_types_are_refused() {
    let tmp = Tmp::new("limits-size");
    let service = start(config(&tmp));
    let addr = service.addr();
    // 65 levels: refused before parsing; 64: parsed (and then refused for what it says).
    let deep = |n: usize| {
        let mut s =
            String::from("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":");
        s += &"[".repeat(n - 1);
        s += &"]".repeat(n - 1);
        s.push('}');
        s
    };
    let v = rpc_body(&post_bytes(addr, deep(65).as_bytes()));
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["error"]["data"][0]["reason"], "NESTING_TOO_DEEP");
    let v = rpc_body(&post_bytes(addr, deep(64).as_bytes()));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let very_deep = "[".repeat(100_000);
    let v = rpc_body(&post_bytes(addr, very_deep.as_bytes()));
    assert_eq!(v["error"]["code"], -32600);
    // Over 1 MiB: 413 with a JSON body, declared or not.
    let huge = vec![b' '; 1024 * 1024 + 1];
    let reply = post_bytes(addr, &huge);
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["code"], "ENVELOPE_TOO_LARGE");
    let mut chunked = format!(
        "POST /a2a HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..20 {
        chunked.extend_from_slice(format!("{:x}\r\n", 64 * 1024).as_bytes());
        chunked.extend(std::iter::repeat_n(b' ', 64 * 1024));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let reply = raw(addr, &chunked);
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["code"], "ENVELOPE_TOO_LARGE");
    // Just under the limit is read (and answered as JSON-RPC).
    let mut near = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})
        .to_string()
        .into_bytes();
    near.resize(1024 * 1024, b' ');
    assert_eq!(rpc_body(&post_bytes(addr, &near))["error"]["code"], -32001);
    // Content types.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}});
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut headers = vec![("A2A-Version", "1.0")];
        if let Some(ct) = content_type {
            headers.push(("Content-Type", ct));
        }
        let reply = request(addr, "POST", "/a2a", &headers, body.to_string().as_bytes());
        assert_eq!(reply.status, 415, "{content_type:?}");
        assert_eq!(reply.json()["error"]["code"], "INVALID_REQUEST");
    }
    for content_type in [
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
        "application/a2a+json",
    ] {
        let headers = [("A2A-Version", "1.0"), ("Content-Type", content_type)];
        let reply = request(addr, "POST", "/a2a", &headers, body.to_string().as_bytes());
        assert_eq!(rpc_body(&reply)["error"]["code"], -32001, "{content_type}");
    }
}

#[test]
fn routes_methods_headers_and_slow_bodies() {
    let tmp = Tmp::new("limits-http");
    let mut cfg = config(&tmp);
    cfg.limits.body_timeout = Duration::from_millis(300);
    let service = start(cfg);
    let addr = service.addr();
    let reply = request(addr, "GET", "/a2a", &[], b"");
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST"));
    assert_eq!(reply.json()["error"]["code"], "INVALID_REQUEST");
    let reply = request(addr, "POST", "/.well-known/agent-card.json", &[], b"{}");
    assert_eq!(reply.status, 405);
    let reply = request(addr, "GET", "/nothing/here", &[], b"");
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["code"], "NOT_FOUND");
    let big = "x".repeat(20 * 1024);
    let reply = request(
        addr,
        "GET",
        "/.well-known/agent-card.json",
        &[("X-Big", &big)],
        b"",
    );
    assert_eq!(reply.status, 431);
    let names: Vec<String> = (0..70).map(|i| format!("X-H{i}")).collect();
    let many: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
    assert_eq!(
        request(addr, "GET", "/v1/a2a/agent-card", &many, b"").status,
        431
    );
    // A body that stops arriving is answered 408, and the service goes on.
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .write_all(
            format!(
                "POST /a2a HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Content-Length: 100\r\n\r\n{{\"jsonrpc\""
            )
            .as_bytes(),
        )
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut out = Vec::new();
    let _ = std::io::Read::read_to_end(&mut stream, &mut out);
    let reply = crate::client::parse_reply(&out);
    assert_eq!(reply.status, 408);
    assert_eq!(reply.header("connection"), Some("close"));
    let error = &reply.json()["error"];
    assert_eq!(error["code"], "INVALID_REQUEST");
    let text = error["message"].as_str().unwrap();
    assert!(
        text.contains("within 300 ms") && text.contains("nothing was done"),
        "{text}"
    );
    assert_eq!(crate::client::get(addr, "/v1/a2a/agent-card").status, 200);
}

/// A body that stops arriving, on a connection of its own: the whole answer.
fn stalled_post(addr: std::net::SocketAddr, path: &str) -> crate::client::Reply {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .write_all(
            format!(
                "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                 Content-Length: 100\r\n\r\n{{\"jsonrpc\""
            )
            .as_bytes(),
        )
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut out = Vec::new();
    let _ = std::io::Read::read_to_end(&mut stream, &mut out);
    crate::client::parse_reply(&out)
}

#[test]
fn a_request_over_its_time_gets_503_saying_what_may_have_happened() {
    let tmp = Tmp::new("limits-503");
    let mut cfg = config(&tmp);
    // The request's limit (1 s) before the body's (10 s): a stalled body meets the first.
    cfg.blocking_timeout = Duration::ZERO;
    cfg.limits.request_timeout = Duration::from_secs(1);
    let service = start(cfg);
    let addr = service.addr();
    for path in ["/a2a", "/v1/a2a/handoff"] {
        let reply = stalled_post(addr, path);
        assert_eq!(reply.status, 503, "{path}");
        assert_eq!(reply.header("connection"), Some("close"));
        let error = &reply.json()["error"];
        assert_eq!(error["code"], "INTERNAL");
        let text = error["message"].as_str().unwrap();
        assert!(
            text.contains("within 1 s") && text.contains("--request-timeout"),
            "{text}"
        );
    }
    assert_eq!(crate::client::get(addr, "/v1/a2a/agent-card").status, 200);
}

/// Deterministic bytes (a linear congruential generator): the same garbage on every run.
fn garbage(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let alphabet = b"{}[]\":,0123456789.-+eEtrufalsn \\u\xff\x00abcXYZ";
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            alphabet[(x >> 33) as usize % alphabet.len()]
        })
        .collect()
}

#[test]
fn any_input_gets_an_answer() {
    let tmp = Tmp::new("limits-fuzz");
    let service = start(config(&tmp));
    let addr = service.addr();
    let valid = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "f", "role": "ROLE_USER", "parts": [
            {"text": "a"}, {"data": {"x": [1, {"y": null}]}}, {"url": "u", "mediaType": "m"}]},
        "configuration": {"returnImmediately": true, "historyLength": 2}}})
    .to_string();
    let mut bodies: Vec<Vec<u8>> = (0..valid.len())
        .step_by(3)
        .map(|cut| valid.as_bytes()[..cut].to_vec())
        .collect();
    for seed in 0..120u64 {
        bodies.push(garbage(seed, (seed as usize * 7) % 300 + 1));
    }
    for (i, body) in bodies.iter().enumerate() {
        for version in ["1.0", ""] {
            let mut headers = vec![("Content-Type", "application/json")];
            if !version.is_empty() {
                headers.push(("A2A-Version", version));
            }
            let reply = request(addr, "POST", "/a2a", &headers, body);
            assert_eq!(
                reply.status,
                200,
                "body {i}: {:?}",
                String::from_utf8_lossy(body)
            );
            let v = reply.json();
            assert!(
                v.get("error").is_some() || v.get("result").is_some(),
                "body {i}: {v}"
            );
        }
    }
    // Every method with every kind of wrong parameter value.
    let methods = ["SendMessage", "GetTask", "CancelTask", "ListTasks"];
    let values = [
        json!(null),
        json!(1),
        json!(-1),
        json!(1e300),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
        json!({"a": [1]}),
    ];
    let keys = [
        "message",
        "id",
        "historyLength",
        "configuration",
        "pageSize",
        "pageToken",
        "status",
        "contextId",
        "statusTimestampAfter",
        "includeArtifacts",
        "metadata",
    ];
    for method in methods {
        for key in keys {
            for value in &values {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": method,
                                  "params": {key: value}});
                let v = rpc_body(&post_rpc(addr, "1.0", &[], &body));
                assert!(
                    v.get("error").is_some() || v.get("result").is_some(),
                    "{body}: {v}"
                );
                if let Some(code) = v["error"]["code"].as_i64() {
                    assert_ne!(code, -32603, "{body}: {v}");
                }
            }
        }
    }
}
