//! The protocol-v4 corpus executed against a live broker: every vector runs as real sessions
//! over the wire. Counts what ran; nothing is skipped.

mod common;
#[path = "../../core/tests/support/vector_filter.rs"]
mod vector_filter;

use std::collections::BTreeSet;

use agent_intercom_core::canonical::{self, Value as CValue};
use agent_intercom_core::corpus::{self, Vector};
use common::*;
use serde_json::{Value, json};
use vector_filter::{Counts, Filter};

struct Live {
    broker: Broker,
    clients: Vec<(String, Client)>,
}

impl Live {
    fn client(&mut self, id: &str) -> &mut Client {
        &mut self
            .clients
            .iter_mut()
            .find(|(i, _)| i == id)
            .unwrap_or_else(|| panic!("no session {id}"))
            .1
    }

    /// Registers a candidate as a real session (id, name, scope as the vector gives them).
    fn join(&mut self, id: &str, name: Option<&str>, scope: Option<&str>) {
        let mut c = self.broker.connect();
        let reply = c.register_with(
            Some(id),
            name.unwrap_or(""),
            scope,
            &format!("runtime-{id}"),
        );
        assert_eq!(reply["type"], "registered", "{reply}");
        self.clients.push((id.to_string(), c));
    }

    /// Every frame each session received since the last call, fenced by a `list` round trip
    /// (the broker answers in order, so anything emitted before is already in the socket).
    fn drain(&mut self) -> Vec<(String, Vec<Value>)> {
        let mut out = Vec::new();
        for (id, c) in self.clients.iter_mut() {
            c.send(json!({ "type": "list", "requestId": "fence" }));
            let mut frames: Vec<Value> = c.unclaimed.drain(..).collect();
            loop {
                let v = c.recv();
                if v["type"] == "sessions" && v["requestId"] == "fence" {
                    break;
                }
                frames.push(v);
            }
            out.push((id.clone(), frames));
        }
        out
    }

    fn heard(&mut self, kind: &str, about: &str) -> BTreeSet<String> {
        self.drain()
            .into_iter()
            .filter(|(_, frames)| {
                frames.iter().any(|f| {
                    f["type"] == kind && (f["sessionId"] == about || f["session"]["id"] == about)
                })
            })
            .map(|(id, _)| id)
            .collect()
    }
}

fn start(v: &Vector<'_>, skip: Option<&str>) -> Live {
    let mut live = Live {
        broker: Broker::start("corpus"),
        clients: Vec::new(),
    };
    for c in &v.candidates {
        if Some(c.id) != skip {
            live.join(c.id, c.name, c.scope);
        }
    }
    live.drain();
    live
}

fn ids(list: &Option<Vec<&str>>) -> BTreeSet<String> {
    list.as_ref()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default()
}

fn scope_of(v: Option<Option<&str>>) -> Option<&str> {
    v.flatten()
}

fn send(c: &mut Client, to: &str, id: &str, extra: Value) {
    let mut message = json!({ "id": id, "timestamp": 1, "content": { "text": "vector" } });
    for (k, val) in extra.as_object().unwrap() {
        message[k] = val.clone();
    }
    c.send(json!({ "type": "send", "to": to, "message": message }));
}

fn deliver(
    live: &mut Live,
    from: &str,
    to_selector: &str,
    id: &str,
    extra: Value,
) -> Result<String, String> {
    send(live.client(from), to_selector, id, extra);
    let first = {
        let c = live.client(from);
        loop {
            let v = c.recv();
            if v["type"] == "delivery_accepted" || v["type"] == "delivery_failed" {
                break v;
            }
            c.unclaimed.push_back(v);
        }
    };
    if first["type"] == "delivery_failed" {
        return Err(first["code"].as_str().unwrap().to_string());
    }
    // Find who got it, acknowledge, and wait for `delivered`.
    let delivery_id = first["deliveryId"].clone();
    let recipients: Vec<String> = live
        .drain()
        .into_iter()
        .filter(|(_, frames)| {
            frames
                .iter()
                .any(|f| f["type"] == "message" && f["deliveryId"] == delivery_id)
        })
        .map(|(id, _)| id)
        .collect();
    assert_eq!(recipients.len(), 1, "exactly one recipient");
    live.client(&recipients[0])
        .send(json!({ "type": "message_received", "deliveryId": delivery_id }));
    live.client(from).expect("delivered");
    Ok(recipients[0].clone())
}

fn label(scope: Option<&str>) -> &'static str {
    match scope {
        None => "U",
        Some(s) if s == A => "A",
        Some(s) if s == B => "B",
        Some(_) => "?",
    }
}

/// A registration carrying the vector's scope input: refused, unscoped or scoped.
fn validate_scope(v: &Vector<'_>) {
    let broker = Broker::start("scope");
    let mut c = broker.connect();
    let mut frame = json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "session": {
            "cwd": "/w",
            "model": "m",
            "pid": 1,
            "startedAt": 1,
            "lastActivity": 1,
        },
    });
    if let Some(input) = v.scope_input {
        frame["scopeId"] =
            serde_json::from_str(&canonical::canonical_json(input).unwrap()).unwrap();
    }
    c.send(frame);
    let reply = c.recv();
    let observed = match (reply["type"].as_str(), &v.scope_input) {
        (Some("registered"), None) | (Some("registered"), Some(CValue::String(_)))
            if matches!(
                v.scope_input,
                None | Some(CValue::String(std::borrow::Cow::Borrowed("")))
            ) =>
        {
            "valid_unscoped"
        }
        (Some("registered"), _) => "valid_scoped",
        (Some("error"), _) => {
            assert_eq!(reply["code"], "INVALID_REQUEST");
            "invalid_scope"
        }
        _ => panic!("{reply}"),
    };
    assert_eq!(observed, v.expected, "{}", v.name);
}

/// The actor's `list`: the sessions it sees, in order.
fn list(v: &Vector<'_>) {
    let actor = v.actor_id.unwrap_or("");
    let mut live = start(v, None);
    let c = live.client(actor);
    c.send(json!({ "type": "list", "requestId": "q" }));
    let list = c.expect("sessions");
    let got: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, v.expected_target_ids.clone().unwrap(), "{}", v.name);
}

/// Who hears the subject join.
fn session_joined(v: &Vector<'_>) {
    let subject = v.subject_id.unwrap_or("");
    let mut live = start(v, Some(subject));
    live.join(
        subject,
        v.candidates
            .iter()
            .find(|c| c.id == subject)
            .and_then(|c| c.name),
        scope_of(v.subject_scope),
    );
    assert_eq!(
        live.heard("session_joined", subject),
        ids(&v.expected_audience_ids),
        "{}",
        v.name
    );
}

/// Who hears the subject unregister.
fn session_left(v: &Vector<'_>) {
    let subject = v.subject_id.unwrap_or("");
    let mut live = start(v, None);
    live.client(subject).send(json!({ "type": "unregister" }));
    // Fence the trigger on its own connection: the broker has handled it once this answers.
    live.client(subject)
        .send(json!({ "type": "health", "requestId": "fence" }));
    live.client(subject).expect("health_ok");
    let at = live.clients.iter().position(|(i, _)| i == subject).unwrap();
    let _gone = live.clients.remove(at);
    let heard = live.heard("session_left", subject);
    assert_eq!(heard, ids(&v.expected_audience_ids), "{}", v.name);
}

/// Who hears the subject's presence change.
fn presence_update(v: &Vector<'_>) {
    let subject = v.subject_id.unwrap_or("");
    let mut live = start(v, None);
    live.client(subject)
        .send(json!({ "type": "presence", "status": "changed" }));
    live.client(subject)
        .send(json!({ "type": "health", "requestId": "fence" }));
    live.client(subject).expect("health_ok");
    assert_eq!(
        live.heard("presence_update", subject),
        ids(&v.expected_audience_ids),
        "{}",
        v.name
    );
}

/// Where the actor's message to the selector goes, or the code it is refused with.
fn resolve_or_send(v: &Vector<'_>) {
    let actor = v.actor_id.unwrap_or("");
    let selector = v.selector.unwrap_or("");
    let mut live = start(v, None);
    let outcome = deliver(&mut live, actor, selector, "m-1", json!({}));
    if selector.is_empty() {
        // The wire refuses an empty `to` before resolution (as the adapters' broker does).
        assert_eq!(outcome, Err("INVALID_MESSAGE".into()), "{}", v.name);
        return;
    }
    match (v.expected, outcome) {
        ("AMBIGUOUS_TARGET" | "SESSION_NOT_FOUND", Err(code)) => {
            assert_eq!(code, v.expected, "{}", v.name)
        }
        (_, Ok(recipient)) => assert_eq!(
            recipient,
            v.expected_target_ids.clone().unwrap()[0],
            "{}",
            v.name
        ),
        (expected, other) => panic!("{}: expected {expected}, got {other:?}", v.name),
    }
}

/// The actor asks the subject once; a second ask is refused.
fn ask(v: &Vector<'_>) {
    let actor = v.actor_id.unwrap_or("");
    let subject = v.subject_id.unwrap_or("");
    let selector = v.selector.unwrap_or("");
    let mut live = start(v, None);
    assert_eq!(
        deliver(
            &mut live,
            actor,
            selector,
            "q-1",
            json!({ "expectsReply": true })
        ),
        Ok(subject.to_string())
    );
    // The edge exists exactly from actor to subject: a second ask is refused.
    assert_eq!(
        deliver(
            &mut live,
            actor,
            selector,
            "q-2",
            json!({ "expectsReply": true })
        ),
        Err("ASK_ALREADY_PENDING".into())
    );
}

/// The actor answers the subject's ask once; a second reply is refused.
fn reply(v: &Vector<'_>) {
    let actor = v.actor_id.unwrap_or("");
    let subject = v.subject_id.unwrap_or("");
    let selector = v.selector.unwrap_or("");
    let mut live = start(v, None);
    assert_eq!(
        deliver(
            &mut live,
            subject,
            actor,
            "q-1",
            json!({ "expectsReply": true })
        ),
        Ok(actor.to_string())
    );
    assert_eq!(
        deliver(
            &mut live,
            actor,
            selector,
            "r-1",
            json!({ "replyTo": "q-1" })
        ),
        Ok(subject.to_string())
    );
    assert_eq!(
        deliver(
            &mut live,
            actor,
            selector,
            "r-2",
            json!({ "replyTo": "q-1" })
        ),
        Err("INVALID_REPLY_TARGET".into())
    );
}

/// The actor cancels or defers its ask, and the subject is told.
fn cancel_or_defer_ask(v: &Vector<'_>) {
    let actor = v.actor_id.unwrap_or("");
    let subject = v.subject_id.unwrap_or("");
    let selector = v.selector.unwrap_or("");
    let mut live = start(v, None);
    assert_eq!(
        deliver(
            &mut live,
            actor,
            selector,
            "q-1",
            json!({ "expectsReply": true })
        ),
        Ok(subject.to_string())
    );
    let cancel = v.operation == "cancel_ask";
    live.client(actor)
        .send(json!({ "type": v.operation, "requestId": "c", "messageId": "q-1" }));
    assert_eq!(
        live.client(actor).expect("ask_control_result")["applied"],
        true
    );
    let note = live.client(subject).expect(if cancel {
        "ask_cancelled"
    } else {
        "ask_deferred"
    });
    assert_eq!(note["fromSessionId"], actor);
}

/// The actor registered again from a new connection, with the old one kept aside.
struct Moved<'a> {
    live: Live,
    /// The superseded connection.
    old: Client,
    /// The replacing connection, kept open until the check is done.
    new: Client,
    /// What every other session received because of the move.
    frames: Vec<(String, Vec<Value>)>,
    old_scope: Option<&'a str>,
    new_scope: Option<&'a str>,
}

/// The setup `replace` and `late_frame` share: the actor (into the subject's scope when it is
/// its own subject, else into its old one) registers again while watchers listen in both scopes.
fn move_actor<'a>(v: &Vector<'a>) -> Moved<'a> {
    let actor = v.actor_id.unwrap_or("");
    let subject = v.subject_id.unwrap_or("");
    let mut live = start(v, None);
    let old_scope = scope_of(v.actor_scope);
    let new_scope = scope_of(v.subject_scope);
    // late_frame vectors carry no candidates: the actor (and a distinct subject) join here.
    if !live.clients.iter().any(|(i, _)| i == actor) {
        live.join(actor, Some("mover"), old_scope);
    }
    if subject != actor && !live.clients.iter().any(|(i, _)| i == subject) {
        live.join(subject, Some("target"), new_scope);
    }
    // Watchers make every emitted lifecycle event observable, even in a scope where the
    // vector's candidates have no other session.
    live.join("watcher-old", Some("watcher-old"), old_scope);
    if old_scope != new_scope {
        live.join("watcher-new", Some("watcher-new"), new_scope);
    }
    live.drain();
    let mover = actor;
    // The moving session's old connection, taken out so it is not fenced.
    let at = live
        .clients
        .iter()
        .position(|(i, _)| i == mover)
        .expect("the mover is registered");
    let (_, old) = live.clients.remove(at);
    let mut new = live.broker.connect();
    let move_to = if subject == actor {
        new_scope
    } else {
        old_scope
    };
    let registered = new.register_with(Some(mover), "moved", move_to, &format!("runtime-{mover}"));
    assert_eq!(registered["type"], "registered");
    let frames = live.drain();
    Moved {
        live,
        old,
        new,
        frames,
        old_scope,
        new_scope,
    }
}

/// The move as the others see it: left from the old scope, then joined in the new one.
fn replace(v: &Vector<'_>) {
    let Moved {
        frames,
        mut old,
        new: _new,
        old_scope,
        new_scope,
        ..
    } = move_actor(v);
    let mover = v.actor_id.unwrap_or("");
    let mut observed = Vec::new();
    for (_, fs) in &frames {
        for f in fs {
            if f["type"] == "session_left" && f["sessionId"] == mover {
                observed.push(format!("left:{mover}:{}", label(old_scope)));
            }
            if f["type"] == "session_joined" && f["session"]["id"] == mover {
                observed.push(format!("joined:{mover}:{}", label(new_scope)));
            }
        }
    }
    observed.sort();
    observed.dedup();
    let mut expected: Vec<String> = v
        .expected_events
        .clone()
        .unwrap()
        .iter()
        .map(|s| s.to_string())
        .collect();
    expected.sort();
    assert_eq!(observed, expected, "{}", v.name);
    // Within one audience the order is left, then joined.
    for (_, fs) in &frames {
        let left = fs
            .iter()
            .position(|f| f["type"] == "session_left" && f["sessionId"] == mover);
        let joined = fs
            .iter()
            .position(|f| f["type"] == "session_joined" && f["session"]["id"] == mover);
        if let (Some(l), Some(j)) = (left, joined) {
            assert!(l < j, "{}: joined before left", v.name);
        }
    }
    assert!(old.closed(), "the old connection ends");
}

/// A frame on the superseded connection: it is closed, and nothing is emitted or answered.
fn late_frame(v: &Vector<'_>) {
    let subject = v.subject_id.unwrap_or("");
    let Moved {
        mut live,
        mut old,
        new: _new,
        ..
    } = move_actor(v);
    let late = match v.name {
        n if n.contains("list") => json!({ "type": "list", "requestId": "late" }),
        n if n.contains("presence") => json!({ "type": "presence", "status": "late" }),
        n if n.contains("send") => {
            json!({
                "type": "send",
                "to": subject,
                "message": {
                    "id": "late",
                    "timestamp": 1,
                    "content": { "text": "late" },
                },
            })
        }
        _ => json!({ "type": "cancel_ask", "requestId": "late", "messageId": "none" }),
    };
    let before = old.seen.len();
    old.send(late);
    assert!(old.closed(), "the superseded connection is closed");
    let after = live.drain();
    assert!(
        after.iter().all(|(_, fs)| fs.is_empty()),
        "{}: a late frame emitted {after:?}",
        v.name
    );
    let answer_types: Vec<&str> = old.seen[before..]
        .iter()
        .map(|f| f["type"].as_str().unwrap_or(""))
        .collect();
    assert!(
        answer_types.iter().all(|t| ![
            "sessions",
            "ask_control_result",
            "delivery_accepted",
            "delivery_failed"
        ]
        .contains(t)),
        "{}: {answer_types:?}",
        v.name
    );
    assert_eq!(v.expected_events.as_ref().map(Vec::len), Some(0));
}

/// Runs one vector: one function per operation.
fn run(v: &Vector<'_>) {
    match v.operation {
        "validate_scope" => validate_scope(v),
        "list" => list(v),
        "session_joined" => session_joined(v),
        "session_left" => session_left(v),
        "presence_update" => presence_update(v),
        "resolve" | "send" => resolve_or_send(v),
        "ask" => ask(v),
        "reply" => reply(v),
        "cancel_ask" | "defer_ask" => cancel_or_defer_ask(v),
        "replace" => replace(v),
        "late_frame" => late_frame(v),
        other => panic!("unknown operation {other}"),
    }
}

/// Runs the selected vectors of a corpus document against live brokers.
fn run_file(file: &str, text: &str) {
    let doc = canonical::parse(text).unwrap();
    let vectors = corpus::parse_vectors(&doc).unwrap();
    let filter = Filter::from_env();
    let mut counts = Counts::new(vectors.len());
    for v in &vectors {
        if !filter.selects(v.name) {
            counts.filtered += 1;
            continue;
        }
        eprintln!("vector: {}", v.name);
        run(v);
        counts.executed += 1;
    }
    counts.report(&format!("{file} against a live broker"), &filter);
}

#[test]
fn protocol_v4_corpus_against_a_live_broker() {
    run_file("protocol-v4.json", corpus::CORPUS_JSON);
}

#[test]
fn local_vectors_against_a_live_broker() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../vectors/protocol-v4-local.json"
    ))
    .unwrap();
    run_file("protocol-v4-local.json", &text);
}
