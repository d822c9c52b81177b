//! Raw frames against a live broker: every bullet of the wire, every error and failure code.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

#[test]
fn health_ok_carries_the_remote_access_contract() {
    let broker = Broker::start("health");
    let mut c = broker.connect();
    c.send(json!({ "type": "health", "requestId": "r1" }));
    let v = c.recv();
    assert_eq!(
        v,
        json!({
            "type": "health_ok",
            "requestId": "r1",
            "protocol": "pi-intercom",
            "version": 4,
            "endpoint": "local",
            "remoteAccess": {
                "feature": "remote-access-v1",
                "policySemanticsVersion": 2,
                "policySemanticsHash": concat!(
                    "f3b00e503631bc91123aedfbcf1df72c",
                    "c9913e1893c09728b2c598f3dcdfdfe0",
                ),
            },
        })
    );
}

#[test]
fn registration_list_and_scope_privacy() {
    let broker = Broker::start("reg");
    let mut a1 = broker.connect();
    let a1_id = a1.register("alpha", Some(A));
    let mut b1 = broker.connect();
    let b1_id = b1.register("beta", Some(B));
    let mut a2 = broker.connect();
    let a2_id = a2.register("worker", Some(A));
    let joined = a1.expect("session_joined");
    assert_eq!(joined["session"]["id"], a2_id.as_str());
    assert_eq!(joined["session"]["name"], "worker");
    assert!(
        b1.quiet(Duration::from_millis(200)),
        "another scope hears nothing"
    );
    a1.send(json!({ "type": "list", "requestId": "l1" }));
    let list = a1.expect("sessions");
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![a1_id.as_str(), a2_id.as_str()]);
    b1.send(json!({ "type": "list", "requestId": "l2" }));
    let list = b1.expect("sessions");
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["id"], b1_id.as_str());
    let info = &list["sessions"][0];
    for key in info.as_object().unwrap().keys() {
        assert!(
            [
                "id",
                "name",
                "cwd",
                "model",
                "pid",
                "startedAt",
                "lastActivity",
                "status",
                "trustedLocal",
                "origin"
            ]
            .contains(&key.as_str()),
            "{key}"
        );
    }
    for client in [&a1, &b1, &a2] {
        let text = serde_json::to_string(&client.seen).unwrap();
        assert!(
            !text.contains(A) && !text.contains(B),
            "a scope leaked into {text}"
        );
    }
    // The administrator's snapshot (`agent-intercom watch`) labels the groups instead.
    let snapshot =
        agent_intercom_broker::watch::snapshot(&config(&broker.dir.0), Duration::from_secs(5))
            .unwrap();
    let text = snapshot.to_string();
    assert!(
        !text.contains(A) && !text.contains(B),
        "a scope leaked into {text}"
    );
    let labels: Vec<&str> = snapshot["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["group"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["scope 1", "scope 1", "scope 2"]);
}

#[test]
fn registration_refusals() {
    let broker = Broker::start("refuse");
    let base = || {
        json!({
            "type": "register",
            "protocol": "pi-intercom",
            "version": 4,
            "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1 },
        })
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut f = base();
                f["protocol"] = json!("pi-intercom-x");
                f
            },
            "PROTOCOL_MISMATCH",
        ),
        (
            {
                let mut f = base();
                f["version"] = json!(3);
                f
            },
            "PROTOCOL_MISMATCH",
        ),
        (
            {
                let mut f = base();
                f["version"] = json!(4.5);
                f
            },
            "PROTOCOL_MISMATCH",
        ),
        (
            {
                let mut f = base();
                f["scopeId"] = json!("Secret.Scope.Value");
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["scopeId"] = json!(42);
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["extra"] = json!(1);
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["session"]["extra"] = json!(1);
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["session"].as_object_mut().unwrap().remove("cwd");
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["session"]["cwd"] = json!("");
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["session"]["pid"] = json!("1");
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["session"]["name"] = json!("n".repeat(257));
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["session"]["boss"] = json!({});
                f
            },
            "INVALID_REQUEST",
        ),
        (
            {
                let mut f = base();
                f["sessionId"] = json!("   ");
                f
            },
            "INVALID_REQUEST",
        ),
        (
            json!({ "type": "send", "to": "x", "message": {} }),
            "INVALID_REQUEST",
        ),
        (json!({ "type": "teleport" }), "INVALID_REQUEST"),
        (json!({ "no": "type" }), "INVALID_REQUEST"),
        (json!([1, 2]), "INVALID_REQUEST"),
        (
            json!({
                "type": "access_control",
                "requestId": "r",
                "adminToken": "t",
                "action": "inspect_tree",
            }),
            "ACCESS_DENIED",
        ),
    ];
    for (frame, code) in cases {
        let mut c = broker.connect();
        c.send(frame.clone());
        let v = c.recv();
        assert_eq!(
            (v["type"].as_str(), v["code"].as_str()),
            (Some("error"), Some(code)),
            "{frame} -> {v}"
        );
        assert!(!v["error"].as_str().unwrap().contains("Secret.Scope.Value"));
        assert!(c.closed(), "closed after {frame}");
    }
    // The broker still serves.
    let mut ok = broker.connect();
    ok.register("still-here", None);
}

#[test]
fn send_deliver_acknowledge_and_resolution() {
    let broker = Broker::start("send");
    let mut alpha = broker.connect();
    let alpha_id = alpha.register("alpha", Some(A));
    let mut worker = broker.connect();
    let worker_id = worker.register("Worker", Some(A));
    let mut other = broker.connect();
    let other_id = other.register("worker", Some(B));

    alpha.send_message("Worker", "m1", "hello");
    let accepted = alpha.expect("delivery_accepted");
    let message = worker.expect("message");
    assert_eq!(message["from"]["id"], alpha_id.as_str());
    assert_eq!(message["message"]["content"]["text"], "hello");
    assert_eq!(message["deliveryId"], accepted["deliveryId"]);
    worker.send(json!({ "type": "message_received", "deliveryId": message["deliveryId"] }));
    let delivered = alpha.expect("delivered");
    assert_eq!(delivered["messageId"], "m1");

    // Names are case-sensitive and scoped: "worker" names only a session in B.
    alpha.send_message("worker", "m2", "x");
    let failed = alpha.expect("delivery_failed");
    assert_eq!(
        (failed["code"].as_str(), failed["accepted"].as_bool()),
        (Some("SESSION_NOT_FOUND"), Some(false))
    );
    // A full id crosses scopes.
    alpha.send_message(&other_id, "m3", "cross");
    alpha.expect("delivery_accepted");
    let m = other.expect("message");
    other.send(json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
    alpha.expect("delivered");
    // A unique prefix within the scope.
    alpha.send_message(&worker_id[..8], "m4", "prefix");
    alpha.expect("delivery_accepted");
    worker.expect("message");
    // Ambiguous names.
    let mut twin = broker.connect();
    twin.register("Worker", Some(A));
    alpha.send_message("Worker", "m5", "which?");
    assert_eq!(alpha.expect("delivery_failed")["code"], "AMBIGUOUS_TARGET");
    // Invalid messages keep the connection.
    alpha.send(json!({
        "type": "send",
        "to": "Worker",
        "message": { "id": "m6", "timestamp": "now", "content": { "text": "x" } },
    }));
    let f = alpha.expect("delivery_failed");
    assert_eq!(
        (f["code"].as_str(), f["messageId"].as_str()),
        (Some("INVALID_MESSAGE"), Some("m6"))
    );
    alpha.send(json!({
        "type": "send",
        "to": &worker_id,
        "message": {
            "id": "m7",
            "timestamp": 1,
            "content": { "text": "x", "control": { "type": "boss.run", "version": 1 } },
        },
    }));
    // Not a Boss control envelope (broker/tests/boss.rs has the valid ones).
    assert_eq!(alpha.expect("delivery_failed")["code"], "INVALID_MESSAGE");
    alpha.send(json!({
        "type": "send",
        "to": &worker_id,
        "message": {
            "id": "m8",
            "timestamp": 1,
            "content": { "text": "x".repeat(256 * 1024 + 1) },
        },
    }));
    assert_eq!(alpha.expect("delivery_failed")["code"], "INVALID_MESSAGE");
    alpha.send(json!({ "type": "list", "requestId": "still-open" }));
    alpha.expect("sessions");
}

#[test]
fn duplicate_suppression() {
    let broker = Broker::start("dup");
    let mut a = broker.connect();
    a.register("a", None);
    let mut b = broker.connect();
    let b_id = b.register("b", None);
    a.send_message(&b_id, "same", "payload");
    let first = a.expect("delivery_accepted");
    let m = b.expect("message");
    b.send(json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
    a.expect("delivered");
    // The same id and payload again: the earlier result, no second delivery.
    a.send_message(&b_id, "same", "payload");
    assert_eq!(
        a.expect("delivery_accepted")["deliveryId"],
        first["deliveryId"]
    );
    assert_eq!(a.expect("delivered")["deliveryId"], first["deliveryId"]);
    assert!(b.quiet(Duration::from_millis(200)));
    // The same id with another payload.
    a.send_message(&b_id, "same", "different");
    assert_eq!(a.expect("delivery_failed")["code"], "DUPLICATE_MESSAGE_ID");
    // Receiver rejects a conflicting id.
    a.send_message(&b_id, "conflict", "x");
    a.expect("delivery_accepted");
    let m = b.expect("message");
    b.send(json!({
        "type": "message_rejected",
        "deliveryId": m["deliveryId"],
        "code": "CONFLICTING_MESSAGE_ID",
        "reason": "seen",
    }));
    let f = a.expect("delivery_failed");
    assert_eq!(
        (f["code"].as_str(), f["accepted"].as_bool()),
        (Some("CONFLICTING_MESSAGE_ID"), Some(true))
    );
}

fn ask(from: &mut Client, to: &str, id: &str) {
    from.send(json!({
        "type": "send",
        "to": to,
        "message": { "id": id, "timestamp": 1, "expectsReply": true, "content": { "text": "?" } },
    }));
}

fn reply(from: &mut Client, to: &str, id: &str, reply_to: &str) {
    from.send(json!({
        "type": "send",
        "to": to,
        "message": { "id": id, "timestamp": 1, "replyTo": reply_to, "content": { "text": "!" } },
    }));
}

fn ack(c: &mut Client) -> Value {
    let m = c.expect("message");
    c.send(json!({ "type": "message_received", "deliveryId": m["deliveryId"] }));
    m
}

#[test]
fn asks_pending_mutual_reply_defer_cancel() {
    let broker = Broker::start("ask");
    let mut a = broker.connect();
    let a_id = a.register("a", Some(A));
    let mut b = broker.connect();
    let b_id = b.register("b", Some(B));
    ask(&mut a, &b_id, "q1");
    a.expect("delivery_accepted");
    ack(&mut b);
    a.expect("delivered");
    ask(&mut a, &b_id, "q2");
    assert_eq!(a.expect("delivery_failed")["code"], "ASK_ALREADY_PENDING");
    ask(&mut b, &a_id, "q3");
    assert_eq!(b.expect("delivery_failed")["code"], "MUTUAL_ASK");
    reply(&mut b, &a_id, "r-wrong", "nope");
    assert_eq!(b.expect("delivery_failed")["code"], "INVALID_REPLY_TARGET");
    reply(&mut a, &b_id, "r-self", "q1");
    assert_eq!(a.expect("delivery_failed")["code"], "INVALID_REPLY_TARGET");
    // Defer: the asked session is told; the edge stays replyable.
    a.send(json!({ "type": "defer_ask", "requestId": "d1", "messageId": "q1" }));
    let result = a.expect("ask_control_result");
    assert_eq!(
        (result["action"].as_str(), result["applied"].as_bool()),
        (Some("defer"), Some(true))
    );
    let deferred = b.expect("ask_deferred");
    assert_eq!(
        (
            deferred["messageId"].as_str(),
            deferred["fromSessionId"].as_str()
        ),
        (Some("q1"), Some(a_id.as_str()))
    );
    // A deferred ask no longer blocks the reverse direction.
    ask(&mut b, &a_id, "q4");
    b.expect("delivery_accepted");
    ack(&mut a);
    b.expect("delivered");
    reply(&mut b, &a_id, "r1", "q1");
    b.expect("delivery_accepted");
    let m = ack(&mut a);
    assert_eq!(m["message"]["replyTo"], "q1");
    b.expect("delivered");
    // The edge closed with the reply.
    reply(&mut b, &a_id, "r2", "q1");
    assert_eq!(b.expect("delivery_failed")["code"], "INVALID_REPLY_TARGET");
    // Cancel q4 (b asked a): a is told.
    b.send(json!({ "type": "cancel_ask", "requestId": "c1", "messageId": "q4" }));
    assert_eq!(b.expect("ask_control_result")["applied"], true);
    let cancelled = a.expect("ask_cancelled");
    assert_eq!(
        (
            cancelled["messageId"].as_str(),
            cancelled["reason"].as_str()
        ),
        (Some("q4"), Some("cancelled"))
    );
    b.send(json!({ "type": "cancel_ask", "requestId": "c2", "messageId": "q4" }));
    assert_eq!(b.expect("ask_control_result")["applied"], false);
}

#[test]
fn too_many_pending_asks_and_deliveries() {
    let broker = Broker::start_with("caps", |c| {
        c.max_pending_asks_per_session = 2;
        c.max_pending_deliveries_per_session = 3;
    });
    let mut a = broker.connect();
    a.register("a", None);
    let mut ids = Vec::new();
    for i in 0..3 {
        let mut t = broker.connect();
        ids.push(t.register(&format!("t{i}"), None));
        std::mem::forget(t);
    }
    ask(&mut a, &ids[0], "q0");
    a.expect("delivery_accepted");
    ask(&mut a, &ids[1], "q1");
    a.expect("delivery_accepted");
    ask(&mut a, &ids[2], "q2");
    assert_eq!(a.expect("delivery_failed")["code"], "TOO_MANY_PENDING_ASKS");
    a.send_message(&ids[2], "s1", "x");
    a.expect("delivery_accepted");
    a.send_message(&ids[2], "s2", "x");
    assert_eq!(
        a.expect("delivery_failed")["code"],
        "TOO_MANY_PENDING_DELIVERIES"
    );
}

#[test]
fn timeouts_and_disconnects_fail_deliveries() {
    let broker = Broker::start_with("timeouts", |c| {
        c.delivery_ack_timeout = Duration::from_millis(300)
    });
    let mut a = broker.connect();
    a.register("a", None);
    let mut silent = broker.connect();
    let silent_id = silent.register("silent", None);
    ask(&mut a, &silent_id, "q");
    a.expect("delivery_accepted");
    silent.expect("message");
    let f = a.expect("delivery_failed");
    assert_eq!(
        (f["code"].as_str(), f["accepted"].as_bool()),
        (Some("DELIVERY_TIMEOUT"), Some(true))
    );
    assert_eq!(silent.expect("ask_cancelled")["reason"], "delivery_failed");
    // A receiver that dies before acknowledging.
    a.send_message(&silent_id, "m2", "x");
    a.expect("delivery_accepted");
    silent.expect("message");
    drop(silent);
    assert_eq!(
        a.expect("delivery_failed")["code"],
        "RECIPIENT_DISCONNECTED"
    );
    let left = a.expect("session_left");
    assert_eq!(left["sessionId"], silent_id.as_str());
}

#[test]
fn replacement_orders_left_before_joined_and_discards_late_frames() {
    let broker = Broker::start("replace");
    let mut watcher_a = broker.connect();
    watcher_a.register("wa", Some(A));
    let mut watcher_b = broker.connect();
    watcher_b.register("wb", Some(B));
    let mut old = broker.connect();
    assert_eq!(
        old.register_with(Some("sess-1"), "mover", Some(A), "runtime-1")["type"],
        "registered"
    );
    watcher_a.expect("session_joined");
    let mut new = broker.connect();
    assert_eq!(
        new.register_with(Some("sess-1"), "mover", Some(B), "runtime-1")["type"],
        "registered"
    );
    assert_eq!(watcher_a.expect("session_left")["sessionId"], "sess-1");
    assert_eq!(
        watcher_b.expect("session_joined")["session"]["id"],
        "sess-1"
    );
    // The old connection is ended; anything it still sends is discarded.
    old.send(json!({ "type": "presence", "status": "late" }));
    assert!(old.closed());
    assert!(
        watcher_b.quiet(Duration::from_millis(200)),
        "a late frame emitted nothing"
    );
    // A different live runtime may not take the id.
    let mut thief = broker.connect();
    let v = thief.register_with(Some("sess-1"), "thief", None, "runtime-2");
    assert_eq!(
        (v["type"].as_str(), v["code"].as_str()),
        (Some("error"), Some("SESSION_ID_IN_USE"))
    );
}

#[test]
fn registration_timeout_and_unregistered_cap() {
    let broker = Broker::start_with("regtimeout", |c| {
        c.registration_timeout = Duration::from_millis(300)
    });
    let mut idle = broker.connect();
    let v = idle.recv();
    assert_eq!(v["code"], "INVALID_REQUEST");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("No register frame within 300 ms")
    );
    assert!(idle.closed());
    let broker = Broker::start_with("unregcap", |c| c.max_unregistered = 3);
    let mut crowd: Vec<Client> = (0..4).map(|_| broker.connect()).collect();
    std::thread::sleep(Duration::from_millis(100));
    let first = crowd[0]
        .recv_opt(Duration::from_millis(200))
        .expect("the oldest is told");
    assert_eq!(first["code"], "INVALID_REQUEST");
    assert!(first["error"].as_str().unwrap().contains("Too many"));
    let mut ok = broker.connect();
    ok.register("fine", None);
}

#[test]
fn malformed_input_gets_an_error_and_a_close_while_others_keep_working() {
    let broker = Broker::start("malformed");
    let mut a = broker.connect();
    a.register("a", None);
    let mut b = broker.connect();
    let b_id = b.register("b", None);
    let mut huge = broker.connect();
    huge.send_raw(&(2u32 * 1024 * 1024).to_be_bytes());
    assert!(
        huge.recv()["error"]
            .as_str()
            .unwrap()
            .contains("exceeds maximum")
    );
    assert!(huge.closed());
    let mut utf8 = broker.connect();
    utf8.send_raw(&[0, 0, 0, 3, b'"', 0xff, b'"']);
    assert!(utf8.recv()["error"].as_str().unwrap().contains("UTF-8"));
    let mut json_bad = broker.connect();
    json_bad.send_raw(&[0, 0, 0, 2, b'{', b'x']);
    assert_eq!(json_bad.recv()["code"], "INVALID_REQUEST");
    let mut deep = broker.connect();
    let nested = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let mut frame = (nested.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(nested.as_bytes());
    deep.send_raw(&frame);
    assert_eq!(deep.recv()["code"], "INVALID_REQUEST");
    let mut types = broker.connect();
    types.send(json!({ "type": "health", "requestId": 5 }));
    assert_eq!(types.recv()["code"], "INVALID_REQUEST");
    // A registered client sending garbage is closed too, and the others keep working.
    a.send(json!({ "type": "presence", "name": 7 }));
    assert_eq!(a.expect("error")["code"], "INVALID_REQUEST");
    let mut c = broker.connect();
    c.register("c", None);
    c.send_message(&b_id, "after", "still works");
    c.expect("delivery_accepted");
    ack(&mut b);
    c.expect("delivered");
}

#[test]
fn rate_limit_spares_acknowledgements() {
    let broker = Broker::start_with("rate", |c| {
        c.rate_capacity = 20.0;
        c.rate_refill_per_second = 1.0;
        c.max_pending_deliveries_per_session = 1000;
        c.max_pending_deliveries = 10_000;
    });
    let mut sender = broker.connect();
    sender.register("sender", None);
    let mut receiver = broker.connect();
    let receiver_id = receiver.register("receiver", None);
    // The receiver acknowledges far more messages than its bucket holds.
    for i in 0..15 {
        sender.send_message(&receiver_id, &format!("m{i}"), "x");
    }
    for _ in 0..15 {
        ack(&mut receiver);
    }
    for _ in 0..15 {
        sender.expect("delivered");
    }
    // The sender is over its budget: refused and closed.
    for i in 0..30 {
        sender.send_message(&receiver_id, &format!("n{i}"), "x");
    }
    sender.expect("error");
    assert!(sender.seen.iter().any(error_frame("RATE_LIMITED")));
    assert!(sender.closed());
    receiver.send(json!({ "type": "list", "requestId": "alive" }));
    receiver.expect("sessions");
}

#[test]
fn unregister_cancels_or_preserves_asks() {
    let broker = Broker::start("unreg");
    let mut a = broker.connect();
    a.register("a", None);
    let mut b = broker.connect();
    let b_id = b.register("b", None);
    ask(&mut a, &b_id, "q1");
    a.expect("delivery_accepted");
    ack(&mut b);
    a.expect("delivered");
    a.send(json!({ "type": "unregister" }));
    let cancelled = b.expect("ask_cancelled");
    assert_eq!(cancelled["reason"], "session_disconnected");
    b.expect("session_left");
    // The connection may register again.
    let again = a.register("a-again", None);
    assert!(!again.is_empty());
}

#[test]
fn presence_updates_go_to_the_scope() {
    let broker = Broker::start("presence");
    let mut a = broker.connect();
    a.register("a", Some(A));
    let mut b = broker.connect();
    b.register("b", Some(A));
    a.expect("session_joined");
    b.send(json!({ "type": "presence", "status": "busy" }));
    let p = a.expect("presence_update");
    assert_eq!(p["session"]["status"], "busy");
    b.send(json!({ "type": "presence", "status": "busy" }));
    assert!(
        a.quiet(Duration::from_millis(200)),
        "unchanged presence within a second is not rebroadcast"
    );
}

#[test]
fn a_session_that_stops_reading_is_closed_instead_of_buffered_for_ever() {
    let broker = Broker::start_with("slow", |c| {
        c.max_outbound_bytes = 256 * 1024;
        c.max_pending_deliveries_per_session = 1000;
        // 40 frames of 200 KiB cost 1,000 tokens: without room the sender could be refused as
        // rate limited (and closed) before the sleeper's departure reaches it.
        c.rate_capacity = 100_000.0;
    });
    let mut sender = broker.connect();
    sender.register("sender", None);
    let mut sleeper = broker.connect();
    let sleeper_id = sleeper.register("sleeper", None);
    let big = "x".repeat(200 * 1024);
    for i in 0..40 {
        sender.send_message(&sleeper_id, &format!("m{i}"), &big);
    }
    // The sleeper never reads: the broker drops it rather than holding 8 MB for it.
    let left = sender.expect("session_left");
    assert_eq!(left["sessionId"], sleeper_id.as_str());
    assert_eq!(
        sender.expect("delivery_failed")["code"],
        "RECIPIENT_DISCONNECTED"
    );
}

#[test]
fn duplicate_suppression_outlives_the_in_memory_window() {
    let broker = Broker::start_with("dupstore", |c| c.max_recent_in_memory = 1);
    let mut a = broker.connect();
    a.register("a", None);
    let mut b = broker.connect();
    let b_id = b.register("b", None);
    for id in ["old", "newer"] {
        a.send_message(&b_id, id, "payload");
        a.expect("delivery_accepted");
        ack(&mut b);
        a.expect("delivered");
    }
    // "old" left memory when "newer" arrived; the store still answers for it.
    a.send_message(&b_id, "old", "payload");
    a.expect("delivery_accepted");
    a.expect("delivered");
    assert!(b.quiet(Duration::from_millis(200)), "not delivered twice");
    a.send_message(&b_id, "old", "changed");
    assert_eq!(a.expect("delivery_failed")["code"], "DUPLICATE_MESSAGE_ID");
}

#[test]
fn asks_expire_close_defers_and_preserve_keeps() {
    let broker = Broker::start_with("askexpiry", |c| c.ask_timeout = Duration::from_millis(400));
    let mut a = broker.connect();
    a.register_with(Some("asker"), "a", None, "rt-a");
    let mut b = broker.connect();
    let b_id = b.register("b", None);
    // Expiry: the asked session is told.
    ask(&mut a, &b_id, "q1");
    a.expect("delivery_accepted");
    ack(&mut b);
    a.expect("delivered");
    let expired = b.expect("ask_cancelled");
    assert_eq!(
        (expired["messageId"].as_str(), expired["reason"].as_str()),
        (Some("q1"), Some("expired"))
    );
    // A closed asker's asks are deferred, not dropped.
    ask(&mut a, &b_id, "q2");
    a.expect("delivery_accepted");
    ack(&mut b);
    a.expect("delivered");
    drop(a);
    let deferred = b.expect("ask_deferred");
    assert_eq!(deferred["messageId"], "q2");
    // The asker comes back and unregisters keeping its asks: the edge stays replyable.
    let mut a = broker.connect();
    a.register_with(Some("asker"), "a", None, "rt-a2");
    a.send(json!({ "type": "unregister", "preserveAsks": true }));
    a.send(json!({ "type": "health", "requestId": "fence" }));
    a.expect("health_ok");
    let mut a = broker.connect();
    a.register_with(Some("asker"), "a", None, "rt-a3");
    reply(&mut b, "asker", "r2", "q2");
    b.expect("delivery_accepted");
    let r = ack(&mut a);
    assert_eq!(r["message"]["replyTo"], "q2");
    b.expect("delivered");
}

#[test]
fn a_half_sent_frame_cannot_hold_a_connection() {
    let broker = Broker::start_with("partial", |c| c.frame_timeout = Duration::from_millis(300));
    let mut a = broker.connect();
    a.register("a", None);
    // Two bytes of a header, then nothing.
    a.send_raw(&[0, 0]);
    let v = a.expect("error");
    assert!(
        v["error"].as_str().unwrap().contains("Incomplete frame"),
        "{v}"
    );
    assert!(a.closed());
    let mut b = broker.connect();
    b.register("b", None);
}
