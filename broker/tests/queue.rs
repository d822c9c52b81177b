//! The opt-in extensions over real sockets (docs/hub.md): the offline queue (`send.queue`),
//! read receipts (`send.receipts`, `message_read`) and `delivery_status`; that the queue
//! survives a kill -9 of the broker; and that a client that never opts in sees none of it.

mod common;

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// A send with the extensions' members (`extra`: `{"queue": true}`, `{"receipts": true}` ...).
fn send_with(c: &mut Client, to: &str, id: &str, text: &str, extra: Value) {
    let mut frame = json!({
        "type": "send",
        "to": to,
        "message": { "id": id, "timestamp": 1, "content": { "text": text } },
    });
    for (k, v) in extra.as_object().unwrap() {
        frame[k] = v.clone();
    }
    c.send(frame);
}

fn queue(c: &mut Client, to: &str, id: &str, text: &str) {
    send_with(c, to, id, text, json!({ "queue": true }));
}

/// An ask (`expectsReply`, its id as its text) sent with `queue` and the members of `extra`.
fn queue_ask(c: &mut Client, to: &str, id: &str, extra: Value) {
    let mut frame = json!({
        "type": "send",
        "to": to,
        "queue": true,
        "message": { "id": id, "timestamp": 1, "expectsReply": true, "content": { "text": id } },
    });
    for (k, v) in extra.as_object().unwrap() {
        frame[k] = v.clone();
    }
    c.send(frame);
}

fn ack(c: &mut Client, message: &Value) {
    c.send(json!({ "type": "message_received", "deliveryId": message["deliveryId"] }));
}

/// Every frame the client has received and not claimed, up to a list round trip: the broker
/// answers a connection's frames in order, so nothing else is on its way to it then.
fn fence(c: &mut Client) -> Vec<Value> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let rid = format!(
        "fence-{}",
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    c.send(json!({ "type": "list", "requestId": rid }));
    let mut seen: Vec<Value> = c.unclaimed.drain(..).collect();
    loop {
        let v = c.recv();
        if v["type"] == "sessions" && v["requestId"] == rid.as_str() {
            return seen;
        }
        seen.push(v);
    }
}

fn types(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .map(|f| f["type"].as_str().unwrap_or("?").to_string())
        .collect()
}

fn status(c: &mut Client, message_id: &str) -> String {
    c.send(json!({ "type": "delivery_status", "requestId": "st", "messageId": message_id }));
    let v = c.expect("delivery_status");
    assert_eq!(v["requestId"], "st");
    assert_eq!(v["messageId"], message_id);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "requestId", "messageId", "state"], "{v}");
    v["state"].as_str().unwrap().to_string()
}

/// Registers `id` on a fresh connection in scope A.
fn join(broker_socket: &Path, id: &str, name: &str) -> Client {
    let mut c = Client::connect(broker_socket);
    let reply = c.register_with(Some(id), name, Some(A), &format!("rt-{id}-{}", uuid_like()));
    assert_eq!(reply["type"], "registered", "{reply}");
    c
}

/// Session `asker` connected, and `asked` known to the broker but away.
fn asker_with_asked_away(broker: &Broker) -> Client {
    let mut a = join(&broker.socket, "asker", "asker");
    drop(join(&broker.socket, "asked", "asked"));
    gone(&mut a, "asked");
    a
}

/// `watcher` sees `id` leave (so the broker has handled the disconnect).
fn gone(watcher: &mut Client, id: &str) {
    loop {
        let left = watcher.expect("session_left");
        if left["sessionId"] == id {
            return;
        }
    }
}

#[test]
fn a_queued_message_waits_for_its_recipient_and_arrives_before_anything_newer() {
    let broker = Broker::start("q-basic");
    let mut a = join(&broker.socket, "alice", "alice");
    let b = join(&broker.socket, "bob-1234", "bob");
    drop(b);
    gone(&mut a, "bob-1234");
    queue(&mut a, "bob-1234", "q1", "first");
    let queued = a.expect("delivery_queued");
    assert_eq!(queued["messageId"], "q1");
    let delivery_id = queued["deliveryId"].as_str().unwrap().to_string();
    queue(&mut a, "bob-1234", "q2", "second");
    a.expect("delivery_queued");
    // A repeat is answered as queued (same delivery id); another payload is refused.
    queue(&mut a, "bob-1234", "q1", "first");
    assert_eq!(
        a.expect("delivery_queued")["deliveryId"],
        delivery_id.as_str()
    );
    queue(&mut a, "bob-1234", "q1", "changed");
    assert_eq!(a.expect("delivery_failed")["code"], "DUPLICATE_MESSAGE_ID");
    assert_eq!(status(&mut a, "q1"), "queued");

    // Back in another scope (exact ids cross scopes): the queue first, in order.
    let mut b = Client::connect(&broker.socket);
    let reply = b.register_with(Some("bob-1234"), "bob", Some(B), "rt-bob-back");
    assert_eq!(reply["type"], "registered");
    let first = b.recv();
    let second = b.recv();
    assert_eq!(first["type"], "message");
    assert_eq!(first["deliveryId"], delivery_id.as_str());
    assert_eq!(first["from"]["id"], "alice");
    assert_eq!(first["message"]["content"]["text"], "first");
    assert_eq!(second["message"]["content"]["text"], "second");
    ack(&mut b, &first);
    let delivered = a.expect("delivered");
    assert_eq!(delivered["messageId"], "q1");
    assert_eq!(delivered["deliveryId"], delivery_id.as_str());
    assert_eq!(status(&mut a, "q1"), "delivered");
    assert_eq!(
        status(&mut a, "q2"),
        "queued",
        "handed out, not acknowledged"
    );
    // The recipient leaves before acknowledging q2: it waits again, and comes again.
    drop(b);
    let mut b = join(&broker.socket, "bob-1234", "bob");
    let again = b.recv();
    assert_eq!(again["message"]["id"], "q2");
    assert_eq!(again["deliveryId"], second["deliveryId"]);
    ack(&mut b, &again);
    a.expect("delivered");
    assert!(fence(&mut b).is_empty(), "q1 came once");
    // A repeat after delivery gets the result, and is not delivered again.
    queue(&mut a, "bob-1234", "q1", "first");
    assert_eq!(
        a.expect("delivery_accepted")["deliveryId"],
        delivery_id.as_str()
    );
    assert_eq!(a.expect("delivered")["deliveryId"], delivery_id.as_str());
    assert!(fence(&mut b).is_empty());
}

/// The result of a send with `queue` outlives `recent_delivery_ttl_ms` (the store keeps it for
/// the retention window): a repeat after the in-memory window is answered, not delivered again.
#[test]
fn a_repeat_of_a_queued_send_is_answered_after_the_duplicate_window() {
    let broker = Broker::start_with("q-kept", |c| {
        c.set("recent_delivery_ttl_ms", "1").unwrap();
    });
    let mut a = join(&broker.socket, "alice", "alice");
    drop(join(&broker.socket, "bob", "bob"));
    gone(&mut a, "bob");
    queue(&mut a, "bob", "k1", "once");
    let queued = a.expect("delivery_queued");
    let mut b = join(&broker.socket, "bob", "bob");
    let m = b.expect("message");
    ack(&mut b, &m);
    a.expect("delivered");
    drop(b);
    gone(&mut a, "bob");
    // Past the 1 ms window (memory has let it go, or lets it go now): the store answers.
    std::thread::sleep(Duration::from_millis(5));
    queue(&mut a, "bob", "k1", "once");
    assert_eq!(
        a.expect("delivery_accepted")["deliveryId"],
        queued["deliveryId"]
    );
    assert_eq!(a.expect("delivered")["deliveryId"], queued["deliveryId"]);
    assert_eq!(status(&mut a, "k1"), "delivered");
    let mut b = join(&broker.socket, "bob", "bob");
    assert!(
        types(&fence(&mut b)).iter().all(|t| t != "message"),
        "not again"
    );
    // A send without `queue` keeps protocol v4's window: decided anew (bob is here now).
    send_with(&mut a, "bob", "p1", "plain", json!({}));
    let m = b.expect("message");
    ack(&mut b, &m);
    a.expect("delivered");
    std::thread::sleep(Duration::from_millis(5));
    send_with(&mut a, "bob", "p1", "plain", json!({}));
    a.expect("delivery_accepted");
    assert_eq!(b.expect("message")["message"]["id"], "p1");
}

#[test]
fn names_prefixes_and_unknown_ids_never_queue() {
    let broker = Broker::start("q-names");
    let mut a = join(&broker.socket, "alice", "alice");
    drop(join(&broker.socket, "worker-7f3a", "bee"));
    gone(&mut a, "worker-7f3a");
    for to in ["bee", "worker", "worker-7f", "nobody-ever"] {
        queue(&mut a, to, &format!("m-{to}"), "x");
        let failed = a.expect("delivery_failed");
        assert_eq!(failed["code"], "SESSION_NOT_FOUND", "{to}");
        assert_eq!(failed["accepted"], false);
    }
    // Without `queue`, an offline id is not found, as in protocol v4.
    send_with(&mut a, "worker-7f3a", "plain", "x", json!({}));
    assert_eq!(a.expect("delivery_failed")["code"], "SESSION_NOT_FOUND");
    assert_eq!(status(&mut a, "plain"), "unknown");
    // Invalid members are an invalid message.
    send_with(&mut a, "worker-7f3a", "bad", "x", json!({ "queue": "yes" }));
    assert_eq!(a.expect("delivery_failed")["code"], "INVALID_MESSAGE");
    send_with(&mut a, "worker-7f3a", "bad2", "x", json!({ "receipts": 1 }));
    assert_eq!(a.expect("delivery_failed")["code"], "INVALID_MESSAGE");
}

/// The prefix hazard: while `job-1` is away and `job-12` is live, protocol v4's unique-prefix
/// rule sends `to: "job-1"` to `job-12`. With `queue` the full id always means `job-1`.
#[test]
fn soak_a_briefly_absent_id_is_taken_for_a_prefix_unless_the_send_queues() {
    let broker = Broker::start("q-prefix");
    let mut a = join(&broker.socket, "sender", "sender");
    let mut job12 = join(&broker.socket, "job-12", "twelve");
    let mut job1 = join(&broker.socket, "job-1", "one");
    let rounds = 25;
    let (mut misdelivered, mut queued_right) = (0, 0);
    for round in 0..rounds {
        // Present: the exact id wins either way.
        send_with(&mut a, "job-1", &format!("here-{round}"), "x", json!({}));
        let m = job1.expect("message");
        ack(&mut job1, &m);
        a.expect("delivered");
        // Briefly away.
        drop(job1);
        gone(&mut a, "job-1");
        send_with(
            &mut a,
            "job-1",
            &format!("plain-{round}"),
            "for job-1",
            json!({}),
        );
        a.expect("delivery_accepted");
        let m = job12.expect("message");
        if m["message"]["id"] == format!("plain-{round}").as_str() {
            misdelivered += 1;
        }
        ack(&mut job12, &m);
        a.expect("delivered");
        queue(&mut a, "job-1", &format!("queued-{round}"), "for job-1");
        a.expect("delivery_queued");
        job1 = join(&broker.socket, "job-1", "one");
        let m = job1.expect("message");
        if m["message"]["id"] == format!("queued-{round}").as_str() {
            queued_right += 1;
        }
        ack(&mut job1, &m);
        a.expect("delivered");
        assert!(
            types(&fence(&mut job12)).iter().all(|t| t != "message"),
            "job-12 got nothing queued for job-1"
        );
    }
    assert_eq!(
        misdelivered, rounds,
        "without queue, every send went to job-12"
    );
    assert_eq!(queued_right, rounds, "with queue, every send reached job-1");
}

#[test]
fn a_full_queue_refuses_and_what_was_queued_still_arrives() {
    let broker = Broker::start_with("q-full", |c| {
        c.set("offline_queue_max_messages", "2").unwrap();
        c.set("offline_queue_max_bytes", "4096").unwrap();
    });
    let mut a = join(&broker.socket, "alice", "alice");
    drop(join(&broker.socket, "bob", "bob"));
    drop(join(&broker.socket, "carol", "carol"));
    gone(&mut a, "bob");
    gone(&mut a, "carol");
    for id in ["m1", "m2"] {
        queue(&mut a, "bob", id, id);
        a.expect("delivery_queued");
    }
    queue(&mut a, "bob", "m3", "m3");
    let full = a.expect("delivery_failed");
    assert_eq!(full["code"], "QUEUE_FULL");
    assert_eq!(full["accepted"], false);
    assert_eq!(status(&mut a, "m3"), "unknown", "refused, never accepted");
    // The byte bound: carol's queue takes 4096 bytes at most.
    queue(&mut a, "carol", "big", &"x".repeat(5000));
    assert_eq!(a.expect("delivery_failed")["code"], "QUEUE_FULL");
    let mut b = join(&broker.socket, "bob", "bob");
    let got: Vec<Value> = (0..2).map(|_| b.expect("message")).collect();
    assert_eq!(got[0]["message"]["id"], "m1");
    assert_eq!(got[1]["message"]["id"], "m2");
    for m in &got {
        ack(&mut b, m);
    }
    a.expect("delivered");
    a.expect("delivered");
    // Room again.
    drop(b);
    gone(&mut a, "bob");
    queue(&mut a, "bob", "m3", "m3");
    a.expect("delivery_queued");
}

#[test]
fn an_expired_message_is_reported_to_its_sender_connected_or_not() {
    let broker = Broker::start_with("q-ttl", |c| c.set("offline_ttl_ms", "30").unwrap());
    let mut a = join(&broker.socket, "alice", "alice");
    drop(join(&broker.socket, "bob", "bob"));
    gone(&mut a, "bob");
    queue(&mut a, "bob", "t1", "soon stale");
    a.expect("delivery_queued");
    let expired = a.expect("delivery_failed");
    assert_eq!(expired["messageId"], "t1");
    assert_eq!(expired["code"], "QUEUE_EXPIRED");
    assert_eq!(expired["accepted"], true);
    assert_eq!(status(&mut a, "t1"), "expired");
    // A repeat is answered with the result, not queued again.
    queue(&mut a, "bob", "t1", "soon stale");
    assert_eq!(a.expect("delivery_failed")["code"], "QUEUE_EXPIRED");

    // The sender away when it expires: it learns from delivery_status when it is back.
    queue(&mut a, "bob", "t2", "also stale");
    a.expect("delivery_queued");
    drop(a);
    let mut a = join(&broker.socket, "alice", "alice");
    let deadline = Instant::now() + Duration::from_secs(10);
    while status(&mut a, "t2") != "expired" {
        assert!(Instant::now() < deadline, "t2 never expired");
        std::thread::sleep(Duration::from_millis(10));
    }
    queue(&mut a, "bob", "t2", "also stale");
    assert_eq!(a.expect("delivery_failed")["code"], "QUEUE_EXPIRED");
    let mut b = join(&broker.socket, "bob", "bob");
    assert!(
        types(&fence(&mut b)).iter().all(|t| t != "message"),
        "nothing expired is delivered"
    );
}

#[test]
fn read_receipts_and_every_state() {
    let broker = Broker::start("q-read");
    let mut a = join(&broker.socket, "alice", "alice");
    let mut b = join(&broker.socket, "bob", "bob");
    a.expect("session_joined");
    send_with(&mut a, "bob", "r1", "read me", json!({ "receipts": true }));
    let accepted = a.expect("delivery_accepted");
    let m = b.expect("message");
    assert_eq!(status(&mut a, "r1"), "accepted");
    ack(&mut b, &m);
    a.expect("delivered");
    assert_eq!(status(&mut a, "r1"), "delivered");
    b.send(json!({ "type": "message_read", "deliveryId": m["deliveryId"] }));
    let read = a.expect("message_read");
    assert_eq!(
        read,
        json!({ "type": "message_read", "messageId": "r1", "deliveryId": accepted["deliveryId"] })
    );
    let keys: Vec<&String> = read.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "messageId", "deliveryId"]);
    assert_eq!(status(&mut a, "r1"), "read");
    // Once: a second read, or a read by another session, says nothing more.
    b.send(json!({ "type": "message_read", "deliveryId": m["deliveryId"] }));
    a.send(json!({ "type": "message_read", "deliveryId": m["deliveryId"] }));
    assert!(types(&fence(&mut b)).is_empty());
    assert!(!types(&fence(&mut a)).contains(&"message_read".to_string()));
    // Only the sender can ask: another session's message id is unknown to bob.
    assert_eq!(status(&mut b, "r1"), "unknown");
    assert_eq!(status(&mut a, "never-sent"), "unknown");

    // Read before acknowledged: the read acknowledges it.
    send_with(&mut a, "bob", "r2", "x", json!({ "receipts": true }));
    let m = b.expect("message");
    b.send(json!({ "type": "message_read", "deliveryId": m["deliveryId"] }));
    a.expect("delivered");
    a.expect("message_read");
    assert_eq!(status(&mut a, "r2"), "read");

    // Without receipts nothing is said; an untracked send is known while its result is kept.
    send_with(&mut a, "bob", "plain", "x", json!({}));
    let m = b.expect("message");
    ack(&mut b, &m);
    a.expect("delivered");
    b.send(json!({ "type": "message_read", "deliveryId": m["deliveryId"] }));
    assert!(!types(&fence(&mut a)).contains(&"message_read".to_string()));
    assert_eq!(status(&mut a, "plain"), "delivered");

    // failed: the recipient leaves before acknowledging a send without queue.
    send_with(&mut a, "bob", "r3", "x", json!({ "receipts": true }));
    b.expect("message");
    drop(b);
    assert_eq!(
        a.expect("delivery_failed")["code"],
        "RECIPIENT_DISCONNECTED"
    );
    assert_eq!(status(&mut a, "r3"), "failed");
}

#[test]
fn a_live_send_with_queue_is_queued_when_its_recipient_leaves_before_acknowledging() {
    let broker = Broker::start("q-requeue");
    let mut a = join(&broker.socket, "alice", "alice");
    let mut b = join(&broker.socket, "bob", "bob");
    queue(&mut a, "bob", "live", "x");
    let accepted = a.expect("delivery_accepted");
    let m = b.expect("message");
    drop(b);
    let queued = a.expect("delivery_queued");
    assert_eq!(queued["deliveryId"], accepted["deliveryId"]);
    assert_eq!(status(&mut a, "live"), "queued");
    let mut b = join(&broker.socket, "bob", "bob");
    let again = b.expect("message");
    assert_eq!(again["deliveryId"], m["deliveryId"]);
    ack(&mut b, &again);
    assert_eq!(a.expect("delivered")["deliveryId"], accepted["deliveryId"]);
}

#[test]
fn a_queued_ask_keeps_its_edge_and_is_answered_after_delivery() {
    let broker = Broker::start("q-ask");
    let mut a = asker_with_asked_away(&broker);
    queue_ask(&mut a, "asked", "q1", json!({}));
    a.expect("delivery_queued");
    queue_ask(&mut a, "asked", "q2", json!({}));
    assert_eq!(a.expect("delivery_failed")["code"], "ASK_ALREADY_PENDING");
    let mut b = join(&broker.socket, "asked", "asked");
    let ask = b.expect("message");
    assert_eq!(ask["message"]["expectsReply"], true);
    ack(&mut b, &ask);
    a.expect("delivered");
    b.send(json!({
        "type": "send",
        "to": "asker",
        "message": { "id": "r1", "timestamp": 2, "replyTo": "q1", "content": { "text": "!" } },
    }));
    let reply = a.expect("message");
    assert_eq!(reply["message"]["replyTo"], "q1");
    ack(&mut a, &reply);
    b.expect("delivered");
    // The reply closed the ask: a second reply has no target.
    b.send(json!({
        "type": "send",
        "to": "asker",
        "message": { "id": "r2", "timestamp": 3, "replyTo": "q1", "content": { "text": "!!" } },
    }));
    assert_eq!(b.expect("delivery_failed")["code"], "INVALID_REPLY_TARGET");
}

#[test]
fn a_queued_ask_its_asker_cancels_is_never_delivered() {
    let broker = Broker::start("q-cancel");
    let mut a = asker_with_asked_away(&broker);
    let receipts = || json!({ "receipts": true });
    queue_ask(&mut a, "asked", "q1", receipts());
    a.expect("delivery_queued");
    a.send(json!({ "type": "cancel_ask", "requestId": "c1", "messageId": "q1" }));
    let frames: Vec<Value> = fence(&mut a)
        .into_iter()
        .filter(|f| !f["type"].as_str().unwrap_or("").starts_with("session_"))
        .collect();
    assert_eq!(
        types(&frames),
        ["delivery_failed", "ask_control_result"],
        "{frames:?}"
    );
    assert_eq!(frames[0]["messageId"], "q1");
    assert_eq!(frames[0]["accepted"], true);
    assert_eq!(frames[0]["code"], "ASK_CANCELLED");
    assert_eq!(frames[1]["applied"], true);
    assert_eq!(status(&mut a, "q1"), "failed");
    // A repeat of the send (an outbox replaying) is answered with the failure, not queued again.
    queue_ask(&mut a, "asked", "q1", receipts());
    let repeat = a.expect("delivery_failed");
    assert_eq!(repeat["code"], "ASK_CANCELLED", "{repeat}");
    // The pair is free again: a new ask queues, and only it reaches the session when it is back.
    queue_ask(&mut a, "asked", "q2", receipts());
    a.expect("delivery_queued");
    let mut b = join(&broker.socket, "asked", "asked");
    let got = b.expect("message");
    assert_eq!(got["message"]["id"], "q2", "{got}");
    ack(&mut b, &got);
    a.expect("delivered");
    let rest = fence(&mut b);
    assert!(!types(&rest).contains(&"message".to_string()), "{rest:?}");
    assert_eq!(status(&mut a, "q1"), "failed");
}

#[test]
fn a_queued_ask_cancelled_while_handed_out_is_not_handed_out_again() {
    let broker = Broker::start("q-cancel-flight");
    let mut a = asker_with_asked_away(&broker);
    queue_ask(&mut a, "asked", "q1", json!({}));
    a.expect("delivery_queued");
    // Handed out, not acknowledged; then cancelled: the recipient is told.
    let mut b = join(&broker.socket, "asked", "asked");
    assert_eq!(b.expect("message")["message"]["id"], "q1");
    a.send(json!({ "type": "cancel_ask", "requestId": "c1", "messageId": "q1" }));
    assert_eq!(a.expect("ask_control_result")["applied"], true);
    assert_eq!(b.expect("ask_cancelled")["messageId"], "q1");
    // It leaves without acknowledging: the ask does not wait for it again.
    drop(b);
    let failed = a.expect("delivery_failed");
    assert_eq!(
        (failed["messageId"].as_str(), failed["code"].as_str()),
        (Some("q1"), Some("ASK_CANCELLED")),
        "{failed}"
    );
    assert_eq!(status(&mut a, "q1"), "failed");
    let mut b = join(&broker.socket, "asked", "asked");
    let rest = fence(&mut b);
    assert!(!types(&rest).contains(&"message".to_string()), "{rest:?}");
}

#[test]
fn a_reply_is_queued_for_an_asker_that_left() {
    let broker = Broker::start("q-reply");
    let mut a = join(&broker.socket, "asker", "asker");
    let mut b = join(&broker.socket, "asked", "asked");
    a.send(json!({
        "type": "send",
        "to": "asked",
        "message": { "id": "q1", "timestamp": 1, "expectsReply": true, "content": { "text": "?" } },
    }));
    let ask = b.expect("message");
    ack(&mut b, &ask);
    a.expect("delivered");
    drop(a);
    gone(&mut b, "asker");
    b.send(json!({
        "type": "send",
        "to": "asker",
        "queue": true,
        "message": { "id": "r1", "timestamp": 2, "replyTo": "q1", "content": { "text": "!" } },
    }));
    b.expect("delivery_queued");
    let mut a = join(&broker.socket, "asker", "asker");
    let reply = a.expect("message");
    assert_eq!(reply["message"]["replyTo"], "q1");
    ack(&mut a, &reply);
    b.expect("delivered");
}

/// A client of protocol v4 that never opts in, beside one that does: every frame it receives
/// is one protocol v4 has, byte for byte as before (checked literally for the delivery path).
#[test]
fn a_client_that_never_opts_in_sees_only_protocol_v4() {
    let broker = Broker::start("q-plain");
    let mut plain = join(&broker.socket, "plain", "plain");
    let mut peer = join(&broker.socket, "peer", "peer");
    let mut hub = join(&broker.socket, "hub", "hub");
    drop(join(&broker.socket, "away", "away"));
    gone(&mut plain, "away");
    // The hub uses every extension around the plain client.
    queue(&mut hub, "away", "h1", "x");
    hub.expect("delivery_queued");
    send_with(
        &mut hub,
        "plain",
        "h2",
        "to plain",
        json!({ "receipts": true, "queue": true }),
    );
    hub.expect("delivery_accepted");
    let (m, raw) = expect_raw(&mut plain, "message");
    let from = peer_info(&broker, "hub");
    assert_eq!(
        raw,
        format!(
            concat!(
                r#"{{"type":"message","deliveryId":{},"from":{},"#,
                r#""message":{{"id":"h2","timestamp":1,"content":{{"text":"to plain"}}}}}}"#
            ),
            m["deliveryId"], from
        )
    );
    ack(&mut plain, &m);
    hub.expect("delivered");
    // The plain client's own send: the frames of protocol v4, literally.
    send_with(&mut plain, "peer", "p1", "hi", json!({}));
    let (accepted, raw) = expect_raw(&mut plain, "delivery_accepted");
    let d = accepted["deliveryId"].clone();
    assert_eq!(
        raw,
        format!(r#"{{"type":"delivery_accepted","messageId":"p1","deliveryId":{d}}}"#)
    );
    let m = peer.expect("message");
    ack(&mut peer, &m);
    let (_, raw) = expect_raw(&mut plain, "delivered");
    assert_eq!(
        raw,
        format!(r#"{{"type":"delivered","messageId":"p1","deliveryId":{d}}}"#)
    );
    let extension = ["delivery_queued", "message_read", "delivery_status"];
    let seen = types(&plain.seen);
    assert!(
        seen.iter().all(|t| !extension.contains(&t.as_str())),
        "{seen:?}"
    );
    assert!(
        types(&fence(&mut plain))
            .iter()
            .all(|t| !extension.contains(&t.as_str()))
    );
}

/// The next frame of this type as parsed and as its bytes came (none of it may be waiting
/// unclaimed).
fn expect_raw(c: &mut Client, kind: &str) -> (Value, String) {
    assert!(c.unclaimed.iter().all(|v| v["type"] != kind));
    loop {
        let v = c.recv();
        if v["type"] == kind {
            return (v, String::from_utf8(c.last_raw.clone()).unwrap());
        }
        c.unclaimed.push_back(v);
    }
}

/// SessionInfo of `id` as the broker writes it (from a list).
fn peer_info(broker: &Broker, id: &str) -> String {
    let mut c = join(&broker.socket, "lister", "lister");
    c.send(json!({ "type": "list", "requestId": "l" }));
    let sessions = c.expect("sessions");
    let raw = String::from_utf8(c.last_raw.clone()).unwrap();
    let at = raw.find(&format!(r#"{{"id":"{id}""#)).unwrap();
    let n = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap()
        .to_string()
        .len();
    raw[at..at + n].to_string()
}

/// Set by the kill -9 test: the agent directory `child_broker` runs a broker in.
const CHILD: &str = "AIC_QUEUE_CHILD_DIR";

/// In a child process of the kill -9 test only: a broker until the process is killed.
#[test]
fn child_broker() {
    let Some(dir) = std::env::var_os(CHILD) else {
        return;
    };
    let handle = agent_intercom_broker::start(config(Path::new(&dir))).expect("starts");
    handle.wait();
}

fn spawn_broker(dir: &Path) -> Child {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["child_broker", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let socket = config(dir).socket_path;
    let deadline = Instant::now() + Duration::from_secs(20);
    while agent_intercom_broker::health(&socket, Duration::from_millis(200))
        != agent_intercom_broker::Health::Compatible
    {
        assert!(Instant::now() < deadline, "the child broker never answered");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn kill_9(mut child: Child) {
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn the_queue_survives_kill_9_and_the_message_arrives_exactly_once() {
    let dir = TempDir::new("q-kill9");
    let socket = config(&dir.0).socket_path;
    let child = spawn_broker(&dir.0);
    let mut a = join(&socket, "alice", "alice");
    drop(join(&socket, "bob", "bob"));
    gone(&mut a, "bob");
    send_with(
        &mut a,
        "bob",
        "k1",
        "durable",
        json!({ "queue": true, "receipts": true }),
    );
    let queued = a.expect("delivery_queued");
    kill_9(child);

    let child = spawn_broker(&dir.0);
    let mut a = join(&socket, "alice", "alice");
    assert_eq!(status(&mut a, "k1"), "queued");
    let mut b = join(&socket, "bob", "bob");
    let m = b.expect("message");
    assert_eq!(m["deliveryId"], queued["deliveryId"]);
    assert_eq!(m["message"]["content"]["text"], "durable");
    assert_eq!(m["from"]["id"], "alice");
    ack(&mut b, &m);
    assert_eq!(a.expect("delivered")["deliveryId"], queued["deliveryId"]);
    assert!(types(&fence(&mut b)).iter().all(|t| t != "message"), "once");
    b.send(json!({ "type": "message_read", "deliveryId": m["deliveryId"] }));
    a.expect("message_read");
    kill_9(child);

    // After another kill -9: nothing comes again, and the states stand.
    let child = spawn_broker(&dir.0);
    let mut b = join(&socket, "bob", "bob");
    assert!(types(&fence(&mut b)).iter().all(|t| t != "message"));
    let mut a = join(&socket, "alice", "alice");
    assert_eq!(status(&mut a, "k1"), "read");
    // The outbox replay of a sender that was away is answered, not delivered twice.
    send_with(
        &mut a,
        "bob",
        "k1",
        "durable",
        json!({ "queue": true, "receipts": true }),
    );
    a.expect("delivered");
    assert!(types(&fence(&mut b)).iter().all(|t| t != "message"));
    kill_9(child);
}

/// A client finds the extensions with `health` `extensions: true`; the adapters' `health`
/// answer is unchanged (no `extensions` member).
#[test]
fn health_lists_the_extensions_only_to_a_client_that_asks() {
    const WAIT: Duration = Duration::from_secs(5);
    let broker = Broker::start("q-health");
    let asked = agent_intercom_broker::client::extensions(&broker.socket, WAIT);
    assert_eq!(asked, ["offline-queue", "read-receipts", "delivery-status"]);
    let mut raw = agent_intercom_broker::client::RawClient::connect(&broker.socket).unwrap();
    raw.send(&json!({"type": "health", "requestId": "h"}))
        .unwrap();
    let answer = raw.recv(WAIT).unwrap().unwrap();
    assert_eq!(answer["type"], "health_ok");
    assert!(answer.get("extensions").is_none(), "{answer}");
    assert_eq!(
        agent_intercom_broker::health(&broker.socket, WAIT),
        agent_intercom_broker::Health::Compatible
    );
}
