//! Every frame kind carries its keys in the order the Pi adapter's TypeScript broker writes them
//! (broker-impl.ts builds each frame as an object literal; JSON.stringify keeps that order), and
//! a forwarded message keeps the order its sender wrote.

mod common;

use common::*;
use serde_json::{Value, json};

/// The frame's keys as they came over the wire (the workspace's serde_json keeps insertion
/// order, which `parsing_keeps_the_wire_order` pins), nested objects as `key.inner`.
fn keys(v: &Value) -> Vec<String> {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<String>) {
        if let Value::Object(map) = v {
            for (k, inner) in map {
                let path = format!("{prefix}{k}");
                out.push(path.clone());
                if k != "message" {
                    walk(&format!("{path}."), inner, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out
}

fn assert_keys(frame: &Value, expected: &[&str]) {
    assert_eq!(keys(frame), expected, "{frame}");
}

/// SessionInfo of a local session, as Pi builds it: id, name?, cwd, model, pid, startedAt,
/// lastActivity, status?, trustedLocal, origin.
fn info(prefix: &str, name: bool, status: bool) -> Vec<String> {
    let mut fields = vec!["id"];
    if name {
        fields.push("name");
    }
    fields.extend(["cwd", "model", "pid", "startedAt", "lastActivity"]);
    if status {
        fields.push("status");
    }
    fields.extend(["trustedLocal", "origin"]);
    fields.into_iter().map(|f| format!("{prefix}{f}")).collect()
}

fn with(head: &[&str], tail: Vec<String>) -> Vec<String> {
    head.iter().map(|s| s.to_string()).chain(tail).collect()
}

#[test]
fn parsing_keeps_the_wire_order() {
    let v: Value = serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":3}}"#).unwrap();
    assert_eq!(keys(&v), ["b", "a", "a.d", "a.c"]);
    assert_eq!(v.to_string(), r#"{"b":1,"a":{"d":2,"c":3}}"#);
}

#[test]
fn every_frame_kind_has_the_pi_brokers_key_order() {
    let broker = Broker::start("keys");
    let mut a = broker.connect();
    a.send(json!({ "type": "health", "requestId": "h1" }));
    let health = a.recv();
    assert_keys(
        &health,
        &[
            "type",
            "requestId",
            "protocol",
            "version",
            "endpoint",
            "remoteAccess",
            "remoteAccess.feature",
            "remoteAccess.policySemanticsVersion",
            "remoteAccess.policySemanticsHash",
        ],
    );
    let registered = a.register_with(Some("ka"), "alpha", Some(A), "rt-a");
    assert_keys(&registered, &["type", "sessionId", "protocol", "version"]);

    let mut b = broker.connect();
    b.send(json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": "kb",
        "scopeId": A,
        "session": {
            "cwd": "/w", "model": "m", "pid": 1, "startedAt": 2, "lastActivity": 3,
            "status": "idle", "runtimeInstanceId": "rt-b",
        },
    }));
    b.expect("registered");
    let joined = a.expect("session_joined");
    let info_b = || info("session.", false, true);
    assert_eq!(keys(&joined), with(&["type", "session"], info_b()));

    a.send(json!({ "type": "list", "requestId": "l1" }));
    let sessions = a.expect("sessions");
    assert_keys(&sessions, &["type", "requestId", "sessions"]);
    assert_eq!(keys(&sessions["sessions"][0]), info("", true, false));
    assert_eq!(keys(&sessions["sessions"][1]), info("", false, true));

    // A message in an order of the sender's own, forwarded as written.
    let sent = concat!(
        r#"{"content":{"attachments":[{"name":"n","type":"file","content":"c"}],"text":"?"},"#,
        r#""expectsReply":true,"timestamp":5,"id":"q1"}"#
    );
    let frame = format!(r#"{{"to":"kb","message":{sent},"type":"send"}}"#);
    let mut bytes = (frame.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(frame.as_bytes());
    a.send_raw(&bytes);
    let accepted = a.expect("delivery_accepted");
    assert_keys(&accepted, &["type", "messageId", "deliveryId"]);
    let message = b.expect("message");
    assert_eq!(
        keys(&message),
        with(
            &["type", "deliveryId", "from"],
            info("from.", true, false)
                .into_iter()
                .chain(["message".to_string()])
                .collect()
        )
    );
    let raw = String::from_utf8(b.last_raw.clone()).unwrap();
    assert!(raw.ends_with(&format!(r#","message":{sent}}}"#)), "{raw}");

    b.send(json!({ "type": "message_received", "deliveryId": message["deliveryId"] }));
    assert_keys(&a.expect("delivered"), &["type", "messageId", "deliveryId"]);

    a.send(json!({ "type": "defer_ask", "requestId": "d1", "messageId": "q1" }));
    let result = &["type", "requestId", "action", "messageId", "applied"];
    assert_keys(&a.expect("ask_control_result"), result);
    assert_keys(
        &b.expect("ask_deferred"),
        &["type", "messageId", "fromSessionId"],
    );
    a.send(json!({ "type": "cancel_ask", "requestId": "c1", "messageId": "q1" }));
    assert_keys(&a.expect("ask_control_result"), result);
    assert_keys(
        &b.expect("ask_cancelled"),
        &["type", "messageId", "fromSessionId", "reason"],
    );

    b.send(json!({ "type": "presence", "status": "busy" }));
    let update = a.expect("presence_update");
    assert_eq!(keys(&update), with(&["type", "session"], info_b()));

    a.send_message("nobody", "m9", "x");
    assert_keys(
        &a.expect("delivery_failed"),
        &["type", "messageId", "accepted", "code", "reason"],
    );

    b.send(json!({ "type": "unregister" }));
    assert_keys(&a.expect("session_left"), &["type", "sessionId"]);

    a.send(json!({ "type": "teleport" }));
    assert_keys(&a.expect("error"), &["type", "code", "error"]);
}

#[test]
fn a_name_or_status_first_set_by_presence_goes_last_and_stays_there() {
    let broker = Broker::start("late-fields");
    let mut a = broker.connect();
    a.register("watcher", None);
    let mut b = broker.connect();
    b.send(json!({
        "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": "quiet",
        "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1 },
    }));
    b.expect("registered");
    a.expect("session_joined");
    // Pi changes SessionInfo in place: a member it did not have is added at the end.
    b.send(json!({ "type": "presence", "status": "busy" }));
    let mut expected = with(&["type", "session"], info("session.", false, false));
    expected.push("session.status".into());
    assert_eq!(keys(&a.expect("presence_update")), expected);
    b.send(json!({ "type": "presence", "name": "late", "status": "idle" }));
    expected.push("session.name".into());
    assert_eq!(keys(&a.expect("presence_update")), expected);
    a.send(json!({ "type": "list", "requestId": "l" }));
    let list = a.expect("sessions");
    let quiet = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "quiet")
        .unwrap();
    let mut order = info("", false, false);
    order.extend(["status".to_string(), "name".to_string()]);
    assert_eq!(keys(quiet), order);
}
