//! The blocking client (`agent_intercom_broker::client`) against the real broker, and against a
//! peer that sends what no broker would (oversized, torn or malformed frames, answers that do
//! not match the request) to prove each is refused with its stable code.

mod common;
#[path = "../../core/tests/support/vector_filter.rs"]
mod vector_filter;

use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use agent_intercom_broker::client::{self, Client};
use agent_intercom_broker::wire;
use agent_intercom_core::ErrorCode;
use common::{A, Broker, TempDir};
use serde_json::{Value, json};
use vector_filter::{Counts, Filter};

const WAIT: Duration = Duration::from_secs(5);

fn session(name: &str) -> Value {
    json!({ "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1, "name": name })
}

fn code<T>(result: Result<T, agent_intercom_core::Error>) -> ErrorCode {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.code(),
    }
}

/// A session credential with this generation.
fn cred(generation: Value) -> Value {
    json!({ "sessionCredential": "c", "sessionId": "s", "generation": generation })
}

/// An access_control_result of inspect_tree for this request id.
fn inspected(request_id: &Value) -> Value {
    json!({
        "type": "access_control_result", "requestId": request_id, "action": "inspect_tree",
        "principals": [],
    })
}

fn frame_bytes(value: &Value) -> Vec<u8> {
    wire::encode(value)
}

/// A peer on a socket of its own: `script` runs on the first connection it accepts.
struct Peer {
    _dir: TempDir,
    socket: PathBuf,
    thread: Option<thread::JoinHandle<()>>,
}

impl Peer {
    fn new(name: &str, script: impl FnOnce(UnixStream) + Send + 'static) -> Peer {
        let dir = TempDir::new(name);
        let socket = dir.0.join("peer.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let thread = thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            script(stream);
        });
        Peer {
            _dir: dir,
            socket,
            thread: Some(thread),
        }
    }

    /// A peer that reads the client's first frame, then answers with `answer(frame)`.
    fn answering(name: &str, answer: impl FnOnce(&Value) -> Vec<u8> + Send + 'static) -> Peer {
        Peer::new(name, move |mut stream| {
            let reader = Client::from_stream(stream.try_clone().unwrap()).unwrap();
            let request = reader.recv(WAIT).unwrap().expect("a request").value;
            let _ = stream.write_all(&answer(&request));
            // Keep the connection open until the client is done with it.
            let _ = reader.recv(WAIT);
        })
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn registers_locally_and_refusals_carry_the_broker_code() {
    let broker = Broker::start("c-local");
    let alice = Client::connect(&broker.socket).unwrap();
    let registered = alice
        .register(&json!({ "session": session("alice"), "sessionId": "alice", "scopeId": A }))
        .unwrap();
    assert_eq!(registered.value["type"], "registered");
    assert_eq!(registered.value["sessionId"], "alice");
    assert!(registered.value.get("access").is_none());
    // The text is the frame as the broker wrote it.
    assert_eq!(
        serde_json::from_str::<Value>(&registered.text).unwrap(),
        registered.value
    );

    // A second register on the same connection: the broker's INVALID_REQUEST, with its text
    // (and the broker ends that connection).
    let dup = Client::connect(&broker.socket).unwrap();
    dup.register(&json!({ "session": session("dup") })).unwrap();
    let again = dup
        .register(&json!({ "session": session("dup") }))
        .unwrap_err();
    assert_eq!(again.code(), ErrorCode::InvalidRequest);
    assert_eq!(again.message(), "Received duplicate register message");

    // The session id live in another runtime.
    let other = Client::connect(&broker.socket).unwrap();
    let mut s = session("alice");
    s["runtimeInstanceId"] = json!("another-runtime");
    let first = Client::connect(&broker.socket).unwrap();
    let mut mine = session("alice");
    mine["runtimeInstanceId"] = json!("rt-1");
    first
        .register(&json!({ "session": mine, "sessionId": "held" }))
        .unwrap();
    let taken = other
        .register(&json!({ "session": s, "sessionId": "held" }))
        .unwrap_err();
    assert_eq!(taken.code(), ErrorCode::SessionIdInUse, "{taken:?}");

    // A scope the broker refuses: its code, and the scope is not echoed.
    let scoped = Client::connect(&broker.socket).unwrap();
    let bad = scoped
        .register(&json!({ "session": session("s"), "scopeId": "not a scope" }))
        .unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidRequest);
    assert!(!bad.message().contains("not a scope"));

    // Frames as text both ways, with a reader waiting while another thread sends.
    let alice = Arc::new(alice);
    let reader = {
        let alice = Arc::clone(&alice);
        thread::spawn(move || alice.recv(WAIT))
    };
    alice
        .send_text(r#"{"type":"list","requestId":"r1"}"#)
        .unwrap();
    let sessions = reader.join().unwrap().unwrap().expect("sessions");
    assert_eq!(sessions.value["type"], "sessions");
    assert_eq!(sessions.value["requestId"], "r1");
    // Nothing more is due: a zero wait returns at once with no frame.
    assert!(alice.recv(Duration::ZERO).unwrap().is_none());
}

#[test]
fn a_protocol_mismatch_and_a_closed_connection() {
    let broker = Broker::start("c-mismatch");
    let c = Client::connect(&broker.socket).unwrap();
    c.send_text(r#"{"type":"register","protocol":"pi-intercom","version":3,"session":{}}"#)
        .unwrap();
    let refusal = c.recv(WAIT).unwrap().expect("an error frame");
    let error = client::broker_refusal(&refusal.value);
    assert_eq!(error.code(), ErrorCode::ProtocolMismatch);
    // The broker ends the connection after it.
    let closed = c.recv(WAIT).unwrap_err();
    assert_eq!(closed.code(), ErrorCode::NotConnected);
    assert_eq!(closed.message(), "the broker closed the connection");
    // Every later call says so, a send included (never a SIGPIPE).
    assert_eq!(code(c.recv(WAIT)), ErrorCode::NotConnected);
    assert_eq!(
        code(c.send_text(r#"{"type":"health","requestId":"x"}"#)),
        ErrorCode::NotConnected
    );
    assert_eq!(
        code(c.register(&json!({ "session": session("x") }))),
        ErrorCode::NotConnected
    );

    // Nothing listens.
    let gone = broker.dir.0.join("nothing.sock");
    assert_eq!(code(Client::connect(&gone)), ErrorCode::NotConnected);
    assert_eq!(
        code(Client::connect(std::path::Path::new(""))),
        ErrorCode::InvalidArgument
    );
}

#[test]
fn access_on_the_local_socket_is_refused_by_the_client() {
    // The local socket registers locally whatever `access` says (as the Pi broker does): a
    // remote registration answered without the contract is refused, and the connection the
    // broker registered is closed rather than kept on an answer the client does not trust.
    let broker = Broker::start("c-local-access");
    let c = Client::connect(&broker.socket).unwrap();
    let e = c
        .register(&json!({ "session": session("r"), "access": { "enrollmentToken": "tok" } }))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::RemoteAccessIncompatible, "{e:?}");
    assert_eq!(code(c.recv(Duration::ZERO)), ErrorCode::NotConnected);
}

#[test]
fn access_control_against_the_broker() {
    let broker = Broker::start("c-admin");
    let request = json!({
        "adminToken": "not-the-token", "action": "inspect_tree", "principalId": "p1",
    });
    let e = client::access_control(&broker.socket, &request, WAIT).unwrap_err();
    assert_eq!(e.code(), ErrorCode::AccessDenied, "{e:?}");
    assert_eq!(
        code(client::access_control(
            &broker.dir.0.join("none.sock"),
            &request,
            WAIT
        )),
        ErrorCode::NotConnected
    );
}

#[test]
fn requests_are_checked_before_anything_is_sent() {
    // Nothing listens: every refusal here comes before a connection is tried.
    let nowhere = std::path::Path::new("/nonexistent/aic.sock");
    let cases = [
        (json!([]), ErrorCode::InvalidArgument),
        (
            json!({ "action": "inspect_tree" }),
            ErrorCode::InvalidArgument,
        ),
        (json!({ "adminToken": "t" }), ErrorCode::InvalidArgument),
        (
            json!({ "adminToken": "t", "action": "" }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "adminToken": 1, "action": "a" }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "adminToken": "t", "action": "a", "requestId": 7 }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "adminToken": "t", "action": "a", "type": "x" }),
            ErrorCode::UnknownKey,
        ),
        (
            json!({ "adminToken": "t", "action": "a", "acess": {} }),
            ErrorCode::UnknownKey,
        ),
        (
            json!({ "adminToken": "t", "action": "a", "access": cred(json!(1)) }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "action": "a", "access": { "enrollmentToken": "t" } }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "action": "a", "access": cred(json!(0)) }),
            ErrorCode::InvalidArgument,
        ),
    ];
    for (request, expected) in cases {
        let got = code(client::access_control(nowhere, &request, WAIT));
        assert_eq!(got, expected, "{request}");
    }
    // A session credential reaches the connection step.
    let ok = json!({ "action": "inspect_tree", "access": cred(json!(1)) });
    assert_eq!(
        code(client::access_control(nowhere, &ok, WAIT)),
        ErrorCode::NotConnected
    );
}

#[test]
fn register_requests_are_checked() {
    use client::{Access, RegisterRequest};
    let s = session("x");
    let bad = [
        (json!("x"), ErrorCode::InvalidArgument),
        (json!({}), ErrorCode::InvalidArgument),
        (json!({ "session": [] }), ErrorCode::InvalidArgument),
        (
            json!({ "session": s, "sessionid": "a" }),
            ErrorCode::UnknownKey,
        ),
        (
            json!({ "session": s, "type": "register" }),
            ErrorCode::UnknownKey,
        ),
        (
            json!({ "session": s, "sessionId": 5 }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "scopeId": null }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": "tok" }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": {} }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": { "enrollmentToken": "" } }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": { "enrollmentToken": "a\u{0}b" } }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": { "enrollmentToken": 1 } }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": { "token": "t" } }),
            ErrorCode::UnknownKey,
        ),
        (
            json!({ "session": s, "access": { "enrollmentToken": "t", "sessionId": "x" } }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": { "sessionCredential": "c", "sessionId": "x" } }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": cred(json!(1.5)) }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": cred(json!(9007199254740992u64)) }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "access": cred(json!(-1)) }),
            ErrorCode::InvalidArgument,
        ),
        (
            json!({ "session": s, "sessionId": "x", "access": { "enrollmentToken": "t" } }),
            ErrorCode::InvalidArgument,
        ),
    ];
    for (request, expected) in bad {
        assert_eq!(
            code(RegisterRequest::parse(&request, "request")),
            expected,
            "{request}"
        );
    }
    let ok = RegisterRequest::parse(
        &json!({
            "session": s, "scopeId": A,
            "access": {
                "sessionCredential": "c", "sessionId": "x", "generation": 9007199254740991u64,
            },
        }),
        "request",
    )
    .unwrap();
    assert_eq!(
        ok.access(),
        Some(&Access::Session {
            credential: "c".into(),
            session_id: "x".into(),
            generation: (1 << 53) - 1
        })
    );
    assert_eq!(ok.frame()["type"], "register");
    assert_eq!(ok.frame()["version"], 4);
    assert_eq!(ok.frame()["scopeId"], A);
}

#[test]
fn frames_sent_as_text_are_checked() {
    let broker = Broker::start("c-text");
    let c = Client::connect(&broker.socket).unwrap();
    assert_eq!(code(c.send_text("{")), ErrorCode::InvalidJson);
    assert_eq!(code(c.send_text("[1]")), ErrorCode::InvalidArgument);
    assert_eq!(
        code(c.send_text(r#"{"type":1}"#)),
        ErrorCode::InvalidArgument
    );
    assert_eq!(code(c.send_text("")), ErrorCode::InvalidJson);
    // None of them reached the broker: the connection still works.
    c.send_text(r#"{"type":"health","requestId":"h"}"#).unwrap();
    let health = c.recv(WAIT).unwrap().expect("health_ok");
    assert_eq!(health.value["type"], "health_ok");
    assert_eq!(health.value["remoteAccess"], wire::remote_access_contract());
    // A lone surrogate escape, as JavaScript writes it, is text a frame may carry.
    c.send_text(r#"{"type":"health","requestId":"a\ud800b"}"#)
        .unwrap();
    let echoed = c.recv(WAIT).unwrap().expect("health_ok");
    assert!(echoed.text.contains(r#""a\ud800b""#), "{}", echoed.text);
}

#[test]
fn an_oversized_frame_loses_the_connection() {
    let limit = agent_intercom_broker::config::DEFAULT_MAX_FRAME_BYTES as u32;
    let peer = Peer::new("c-big", move |mut s| {
        let _ = s.write_all(&(limit + 1).to_be_bytes());
        thread::sleep(Duration::from_millis(200));
    });
    let c = Client::connect(&peer.socket).unwrap();
    let e = c.recv(WAIT).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    assert!(e.message().contains(&format!("{}", limit + 1)), "{e:?}");
    let after = c.recv(WAIT).unwrap_err();
    assert_eq!(after.code(), ErrorCode::NotConnected);
    assert!(
        after.message().contains("more than"),
        "the first reason stays: {after:?}"
    );
}

#[test]
fn torn_and_malformed_frames() {
    // A frame in two pieces, the second sent only after a wait for it ran out: nothing is lost.
    let (first_sent, first_seen) = std::sync::mpsc::channel();
    let (waited, wait_over) = std::sync::mpsc::channel::<()>();
    let peer = Peer::new("c-torn", move |mut s| {
        let frame = frame_bytes(&json!({ "type": "health_ok", "requestId": "x" }));
        s.write_all(&frame[..6]).unwrap();
        first_sent.send(()).unwrap();
        wait_over.recv().unwrap();
        s.write_all(&frame[6..]).unwrap();
        s.write_all(&[0, 0, 0, 3, b'{', b'"', b'a']).unwrap(); // not JSON
        thread::sleep(Duration::from_millis(300));
    });
    let c = Client::connect(&peer.socket).unwrap();
    first_seen.recv().unwrap();
    assert!(c.recv(Duration::from_millis(50)).unwrap().is_none());
    waited.send(()).unwrap();
    let whole = c.recv(WAIT).unwrap().expect("the whole frame");
    assert_eq!(whole.value["requestId"], "x");
    assert_eq!(code(c.recv(WAIT)), ErrorCode::InvalidFrame);
    drop(peer);

    let peer = Peer::new("c-utf8", |mut s| {
        s.write_all(&[0, 0, 0, 2, 0xff, 0xfe]).unwrap();
        thread::sleep(Duration::from_millis(200));
    });
    let c = Client::connect(&peer.socket).unwrap();
    assert_eq!(code(c.recv(WAIT)), ErrorCode::InvalidFrame);
    drop(peer);

    let peer = Peer::new("c-mid", |mut s| {
        s.write_all(&[0, 0, 0, 10, b'{']).unwrap();
    });
    let c = Client::connect(&peer.socket).unwrap();
    let e = c.recv(WAIT).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotConnected);
    assert!(e.message().contains("middle of a frame"), "{e:?}");
}

fn remote_registered(access: Value) -> Value {
    json!({
        "type": "registered", "sessionId": "p1", "protocol": "pi-intercom", "version": 4,
        "remoteAccess": wire::remote_access_contract(), "access": access,
    })
}

fn provenance() -> Value {
    json!({
        "origin": "remote", "remoteHostId": "host",
        "parentSessionId": "root", "rootSessionId": "root",
        "generation": 1, "canDelegate": true, "depth": 1, "maxDepth": 3, "maxChildren": 4,
        "sessionCredential": "cred",
    })
}

/// Registers with `access` against a peer answering `answer`.
fn register_against(
    name: &str,
    access: Value,
    answer: Value,
) -> Result<Value, agent_intercom_core::Error> {
    let peer = Peer::answering(name, move |request| {
        assert_eq!(request["type"], "register");
        frame_bytes(&answer)
    });
    let c = Client::connect(&peer.socket).unwrap();
    let result = c.register(&json!({ "session": session("r"), "access": access }));
    c.close();
    result.map(|r| r.value)
}

#[test]
fn remote_registration_answers_are_checked() {
    let enroll = json!({ "enrollmentToken": "tok" });
    let reconnect = json!({ "sessionCredential": "cred", "sessionId": "p1", "generation": 1 });
    // What the Pi broker answers: accepted.
    let ok = register_against("c-r-ok", enroll.clone(), remote_registered(provenance())).unwrap();
    assert_eq!(ok["access"]["sessionCredential"], "cred");
    let mut again = provenance();
    again.as_object_mut().unwrap().remove("sessionCredential");
    register_against(
        "c-r-re",
        reconnect.clone(),
        remote_registered(again.clone()),
    )
    .unwrap();

    let incompatible = |name: &str, access: &Value, answer: Value| {
        let e = register_against(name, access.clone(), answer).unwrap_err();
        assert_eq!(
            e.code(),
            ErrorCode::RemoteAccessIncompatible,
            "{name}: {e:?}"
        );
        e
    };
    let mut no_contract = remote_registered(provenance());
    no_contract.as_object_mut().unwrap().remove("remoteAccess");
    incompatible("c-r-nc", &enroll, no_contract);
    let mut other_hash = remote_registered(provenance());
    other_hash["remoteAccess"]["policySemanticsHash"] = json!("0".repeat(64));
    let e = incompatible("c-r-hash", &enroll, other_hash);
    assert!(e.message().contains("contract"), "{e:?}");
    let mut no_origin = provenance();
    no_origin["origin"] = json!("local");
    incompatible("c-r-origin", &enroll, remote_registered(no_origin));
    let mut bad_generation = provenance();
    bad_generation["generation"] = json!(0);
    incompatible("c-r-gen0", &enroll, remote_registered(bad_generation));
    let mut bad_depth = provenance();
    bad_depth["depth"] = json!("1");
    incompatible("c-r-depth", &enroll, remote_registered(bad_depth));
    // An enrollment must be answered with the credential for the reconnects.
    let e = incompatible("c-r-nocred", &enroll, remote_registered(again.clone()));
    assert!(e.message().contains("session credential"), "{e:?}");
    // A reconnect must come back as the same principal and generation.
    let mut moved = again.clone();
    moved["generation"] = json!(2);
    incompatible("c-r-moved", &reconnect, remote_registered(moved));
    let mut renamed = remote_registered(again);
    renamed["sessionId"] = json!("p2");
    incompatible("c-r-renamed", &reconnect, renamed);

    // Not a registered frame of protocol v4 at all.
    let e = register_against(
        "c-r-v3",
        enroll.clone(),
        json!({ "type": "registered", "sessionId": "p1", "protocol": "pi-intercom", "version": 3 }),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    let e = register_against(
        "c-r-sessions",
        enroll.clone(),
        json!({ "type": "sessions", "sessions": [] }),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    // The broker's refusal, as it words it.
    let e = register_against(
        "c-r-denied",
        enroll.clone(),
        json!({
            "type": "error", "code": "ACCESS_DENIED",
            "error": "Remote registration credential was rejected",
        }),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::AccessDenied);
    assert_eq!(e.message(), "Remote registration credential was rejected");
    // A code protocol v4 does not have.
    let e = register_against(
        "c-r-code",
        enroll,
        json!({ "type": "error", "code": "NOPE", "error": "x" }),
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    assert!(e.message().contains("NOPE"), "{e:?}");
}

#[test]
fn access_control_answers_must_match_the_request() {
    let run = |name: &str, answer: fn(&Value) -> Value| {
        let peer = Peer::answering(name, move |request| frame_bytes(&answer(request)));
        let request = json!({ "adminToken": "t", "action": "inspect_tree", "principalId": "p" });
        client::access_control(&peer.socket, &request, WAIT)
    };
    let ok = run("c-ac-ok", |r| {
        assert_eq!(r["type"], "access_control");
        assert!(r["requestId"].as_str().is_some_and(|id| !id.is_empty()));
        inspected(&r["requestId"])
    })
    .unwrap();
    assert_eq!(ok.value["principals"], json!([]));
    let e = run("c-ac-id", |_| inspected(&json!("other"))).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    let e = run("c-ac-action", |r| {
        json!({
            "type": "access_control_result", "requestId": r["requestId"],
            "action": "revoke_subtree", "changedPrincipalIds": [],
        })
    })
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    let e = run("c-ac-err", |_| {
        let text = "Invalid remote principal ID";
        json!({ "type": "error", "code": "INVALID_REQUEST", "error": text })
    })
    .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (ErrorCode::InvalidRequest, "Invalid remote principal ID")
    );

    // A given request id is kept; a peer that closes without answering is NOT_CONNECTED.
    let peer = Peer::new("c-ac-silent", drop);
    let request = json!({ "adminToken": "t", "action": "inspect_tree", "requestId": "mine" });
    assert_eq!(
        code(client::access_control(&peer.socket, &request, WAIT)),
        ErrorCode::NotConnected
    );
    let peer = Peer::answering("c-ac-given", |r| {
        assert_eq!(r["requestId"], "mine");
        frame_bytes(&inspected(&json!("mine")))
    });
    client::access_control(&peer.socket, &request, WAIT).unwrap();
}

#[test]
fn every_error_code_the_broker_sends_is_a_status() {
    use wire::error_code::*;
    for code in [
        PROTOCOL_MISMATCH,
        INVALID_REQUEST,
        SESSION_ID_IN_USE,
        ACCESS_DENIED,
        BOSS_FEATURE_UNAVAILABLE,
        RATE_LIMITED,
        TOO_MANY_SESSIONS,
    ] {
        let e = client::broker_refusal(&json!({ "type": "error", "code": code, "error": "text" }));
        assert_eq!(e.code().as_str(), code);
        assert_eq!(e.message(), "text");
    }
    let e = client::broker_refusal(&json!({ "type": "error", "code": "OK", "error": "text" }));
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    let e = client::broker_refusal(&json!({ "type": "error", "code": 5 }));
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
}

/// The bytes a case of vectors/broker-client-v1.json answers with: `frame` behind its length,
/// or `wireHex` as it is.
fn case_bytes(case: &Value) -> Vec<u8> {
    if let Some(frame) = case["frame"].as_str() {
        return wire::text_frame(frame);
    }
    let hex = case["wireHex"].as_str().expect("frame or wireHex");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

/// vectors/broker-client-v1.json through the Rust client (tests/c/client.c and
/// tests/node/client-answers.test.js run the same file through C and Node).
#[test]
fn answers_to_register_end_as_the_shared_cases_say() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../vectors/broker-client-v1.json"
    ))
    .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(doc["count"].as_u64(), Some(cases.len() as u64));
    let filter = Filter::from_env();
    let mut counts = Counts::new(cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap();
        if !filter.selects(id) {
            counts.filtered += 1;
            continue;
        }
        counts.executed += 1;
        let bytes = case_bytes(case);
        let access = case.get("access").cloned();
        let sent = access.clone();
        let peer = Peer::answering("c-case", move |request| {
            // What went out: a register frame, with the credential when the case has one.
            assert_eq!(request["type"], "register");
            assert_eq!(request.get("access"), sent.as_ref());
            bytes
        });
        let client = Client::connect(&peer.socket).unwrap();
        let mut request = json!({ "session": session("case") });
        if let Some(access) = access {
            request["access"] = access;
        }
        let (code, message) = match client.register(&request) {
            Ok(_) => ("OK".to_string(), String::new()),
            Err(e) => (e.code().as_str().to_string(), e.message().to_string()),
        };
        // The peer sends nothing more: only a connection the client closed fails now.
        let closes = client.recv(Duration::ZERO).is_err();
        client.close();
        drop(peer);
        let expected = &case["expected"];
        let got = json!({ "code": code, "message": message, "closes": closes });
        if &got != expected {
            failures.push(format!("{id}: got {got}, expected {expected}"));
        }
    }
    counts.report("broker-client-v1.json", &filter);
    assert!(failures.is_empty(), "{failures:#?}");
}
