//! Boss participant registration and typed Boss control, refused as the Pi adapter's broker
//! refuses them: its codes, its texts, its order of checks (each answer here was compared with
//! that broker's, live, frame for frame).

mod common;

use agent_intercom_core::boss::feature::semantics;
use agent_intercom_core::boss::wire;
use common::*;
use serde_json::{Value, json};

/// A valid `session.boss`: the exact feature contract and digest, a valid boss-run-v1
/// enrollment credential (the Pi adapter's test request).
fn boss_request() -> Value {
    json!({
        "featureContract": serde_json::from_str::<Value>(&semantics::feature_contract_json())
            .unwrap(),
        "capabilityDigest": semantics::capability_feature_digest(),
        "credential": {
            "version": wire::BOSS_PARTICIPANT_CREDENTIAL_VERSION,
            "namespace": wire::BOSS_RUN_FEATURE,
            "credentialKind": "enrollment",
            "credentialId": "credential-worker",
            "credential": "secret-material",
            "bossRunId": "run-a",
            "participantId": "worker-participant",
            "role": "worker",
            "communicationProfile": "worker",
            "bindingEpoch": 2,
            "issuedAt": "2026-07-28T12:00:00.000Z",
            "expiresAt": "2026-07-28T13:00:00.000Z",
            "nonce": "nonce-a",
        },
    })
}

fn register(id: &str, boss: Option<Value>) -> Value {
    let mut frame = json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": id,
        "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 2, "lastActivity": 3 },
    });
    if let Some(boss) = boss {
        frame["session"]["boss"] = boss;
    }
    frame
}

fn error(code: &str, text: &str) -> Value {
    json!({ "type": "error", "code": code, "error": text })
}

fn denied() -> Value {
    error(
        "BOSS_FEATURE_UNAVAILABLE",
        "Boss registration denied: BOSS_FEATURE_NOT_ADVERTISED",
    )
}

fn invalid_register() -> Value {
    error("INVALID_REQUEST", "Invalid register message")
}

/// `edit` applied to a copy of the valid request.
fn boss_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut boss = boss_request();
    edit(&mut boss);
    boss
}

#[test]
fn a_valid_boss_request_is_denied_as_not_advertised() {
    let broker = Broker::start("boss-ok");
    let mut c = broker.connect();
    c.send(register("b1", Some(boss_request())));
    assert_eq!(c.recv(), denied());
    assert!(c.closed());
}

#[test]
fn an_invalid_boss_request_is_an_invalid_register_message() {
    let broker = Broker::start("boss-bad");
    let digest = semantics::capability_feature_digest();
    let cases: Vec<(&str, Value)> = vec![
        ("empty", json!({})),
        ("null", Value::Null),
        ("an array", json!([])),
        ("an extra key", boss_with(|b| b["extra"] = json!(1))),
        (
            "no credential",
            boss_with(|b| {
                b.as_object_mut().unwrap().remove("credential");
            }),
        ),
        (
            "another digest",
            boss_with(|b| b["capabilityDigest"] = json!("0".repeat(64))),
        ),
        (
            "an uppercase digest",
            boss_with(|b| b["capabilityDigest"] = json!(digest.to_uppercase())),
        ),
        (
            "another semantics hash",
            boss_with(|b| b["featureContract"]["semanticsHash"] = json!("0".repeat(64))),
        ),
        (
            "another feature version",
            boss_with(|b| b["featureContract"]["version"] = json!(2)),
        ),
        (
            "another namespace",
            boss_with(|b| b["credential"]["namespace"] = json!("boss-run-v2")),
        ),
        (
            "an expiry before issue",
            boss_with(|b| b["credential"]["expiresAt"] = json!("2026-07-28T11:00:00.000Z")),
        ),
        (
            "a role unlike its profile",
            boss_with(|b| b["credential"]["communicationProfile"] = json!("manager")),
        ),
    ];
    for (what, boss) in cases {
        let mut c = broker.connect();
        c.send(register("b1", Some(boss)));
        assert_eq!(c.recv(), invalid_register(), "{what}");
        assert!(c.closed(), "{what}: closed");
    }
    let mut ok = broker.connect();
    ok.register("still-serving", None);
}

/// Pi's order: envelope keys, protocol, scope, the session record with its Boss request, the
/// Boss negotiation, then (for a registered connection) the duplicate check, then the session id.
#[test]
fn boss_refusals_come_in_the_pi_brokers_order() {
    let broker = Broker::start("boss-order");
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut f = register("b1", Some(boss_request()));
        edit(&mut f);
        f
    };
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "an unknown envelope key first",
            with(&|f| f["extra"] = json!(1)),
            invalid_register(),
        ),
        (
            "the protocol before the session",
            with(&|f| {
                f["version"] = json!(3);
                f["session"]["boss"] = json!({});
            }),
            error(
                "PROTOCOL_MISMATCH",
                "Unsupported intercom protocol; expected pi-intercom v4",
            ),
        ),
        (
            "the scope before the session",
            with(&|f| {
                f["scopeId"] = json!("bad scope!");
                f["session"]["boss"] = json!({});
            }),
            error("INVALID_REQUEST", "Registration metadata is invalid"),
        ),
        (
            "the rest of the session with the Boss request",
            with(&|f| f["session"]["cwd"] = json!("")),
            invalid_register(),
        ),
        (
            "an unknown session key with it",
            with(&|f| f["session"]["peerUid"] = json!(0)),
            invalid_register(),
        ),
        (
            "the negotiation before the session id",
            with(&|f| f["sessionId"] = json!("   ")),
            denied(),
        ),
    ];
    for (what, frame, expected) in cases {
        let mut c = broker.connect();
        c.send(frame);
        assert_eq!(c.recv(), expected, "{what}");
        assert!(c.closed(), "{what}: closed");
    }
    // On a registered connection the Boss checks come before the duplicate check.
    for (boss, expected) in [(boss_request(), denied()), (json!({}), invalid_register())] {
        let mut c = broker.connect();
        c.register("registered-first", None);
        c.send(register("again", Some(boss)));
        assert_eq!(c.recv(), expected);
        assert!(c.closed());
    }
}

/// A valid Boss control envelope for message `id`, as the Pi adapter's integration test sends it.
fn control(message_id: &str) -> Value {
    json!({
        "type": "boss.assignment.created",
        "version": 1,
        "messageId": message_id,
        "bossRunId": "run-a",
        "participantId": "manager-participant",
        "bindingEpoch": 2,
        "idempotencyKey": "stable-boss-idempotency",
        "payload": {},
    })
}

fn message(id: &str, control: Value) -> Value {
    json!({
        "id": id,
        "timestamp": 1,
        "content": { "text": "t", "control": control },
    })
}

fn send(to: &str, message: Value) -> Value {
    json!({ "type": "send", "to": to, "message": message })
}

fn failed(id: &str, code: &str, reason: &str) -> Value {
    json!({
        "type": "delivery_failed",
        "messageId": id,
        "accepted": false,
        "code": code,
        "reason": reason,
    })
}

#[test]
fn boss_control_is_unavailable_when_valid_and_correlated_and_invalid_otherwise() {
    let broker = Broker::start("boss-control");
    let mut s = broker.connect();
    s.register("sender", None);
    let mut t = broker.connect();
    let target = t.register("target", None);
    s.expect("session_joined");
    let unavailable = |id: &str| {
        failed(
            id,
            "CONTROL_DISPATCH_UNAVAILABLE",
            "Boss typed control is unavailable until the durable Controller delivery authority \
             is installed",
        )
    };
    let invalid = |id: &str| failed(id, "INVALID_MESSAGE", "Invalid message format");
    let mut extra = control("m5");
    extra["extra"] = json!(1);
    let mut unknown_type = control("m6");
    unknown_type["type"] = json!("boss.run");
    let mut replying = message("m7", control("m7"));
    replying["replyTo"] = json!("q");
    let mut asking = message("m8", control("m8"));
    asking["expectsReply"] = json!(true);
    let mut not_asking = message("m9", control("m9"));
    not_asking["expectsReply"] = json!(false);
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "valid and correlated",
            send(&target, message("m1", control("m1"))),
            unavailable("m1"),
        ),
        (
            "before target resolution",
            send("nobody-at-all", message("m2", control("m2"))),
            unavailable("m2"),
        ),
        (
            "uncorrelated",
            send(&target, message("m3", control("other"))),
            invalid("m3"),
        ),
        (
            "not an envelope",
            send(
                &target,
                message("m4", json!({ "type": "boss.run", "version": 1 })),
            ),
            invalid("m4"),
        ),
        (
            "an extra key",
            send(&target, message("m5", extra)),
            invalid("m5"),
        ),
        (
            "an unknown Boss type",
            send(&target, message("m6", unknown_type)),
            invalid("m6"),
        ),
        ("with replyTo", send(&target, replying), invalid("m7")),
        ("expecting a reply", send(&target, asking), invalid("m8")),
        (
            "expectsReply false",
            send(&target, not_asking),
            unavailable("m9"),
        ),
        (
            "an invalid message around it",
            send(
                &target,
                json!({ "id": "m10", "timestamp": 1, "content": { "control": control("m10") } }),
            ),
            invalid("m10"),
        ),
        (
            "an empty target",
            send("", message("m11", control("m11"))),
            invalid("m11"),
        ),
    ];
    for (what, frame, expected) in cases {
        s.send(frame);
        assert_eq!(s.recv(), expected, "{what}");
    }
    // A lone surrogate in the payload is not canonical JSON: the envelope is invalid.
    let envelope = control("m12")
        .to_string()
        .replace(r#""payload":{}"#, r#""payload":{"x":"\ud800"}"#);
    let raw = format!(r#"{{"type":"send","to":"{target}","message":{{"id":"m12","timestamp":1,"#)
        + &format!(r#""content":{{"text":"t","control":{envelope}}}}}}}"#);
    let mut frame = (raw.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(raw.as_bytes());
    s.send_raw(&frame);
    assert_eq!(s.recv(), invalid("m12"));
    // The connection stays, and nothing reached the target.
    s.send(json!({ "type": "list", "requestId": "still-open" }));
    s.expect("sessions");
    assert!(t.quiet(std::time::Duration::from_millis(100)));
}

#[test]
fn a_boss_control_before_register_is_a_frame_before_register() {
    let broker = Broker::start("boss-early");
    let mut c = broker.connect();
    c.send(send(
        "x",
        json!({ "id": "m1", "timestamp": 1, "content": { "text": "t", "control": control("m1") } }),
    ));
    assert_eq!(
        c.recv(),
        error("INVALID_REQUEST", "Received send before register")
    );
    assert!(c.closed());
}

/// The Claude adapter's reason for a typed Boss control in `message.control`.
const CLAUDE_UNAVAILABLE: &str = concat!(
    "Typed Boss control dispatch is unavailable without authoritative correlation and ",
    "durable dispatch"
);

/// A message carrying `control` where the Claude adapter puts it: `message.control`, empty text.
fn claude_message(id: &str, control: Value) -> Value {
    json!({ "id": id, "timestamp": 1, "control": control, "content": { "text": "" } })
}

#[test]
fn a_control_in_message_control_is_never_forwarded() {
    let broker = Broker::start("claude-control");
    let mut s = broker.connect();
    s.register("sender", None);
    let mut t = broker.connect();
    let target = t.register("target", None);
    s.expect("session_joined");
    let unavailable = |id: &str| failed(id, "CONTROL_DISPATCH_UNAVAILABLE", CLAUDE_UNAVAILABLE);
    let invalid = |id: &str| failed(id, "INVALID_MESSAGE", "Invalid message format");
    let with = |id: &str, edit: &dyn Fn(&mut Value)| {
        let mut m = claude_message(id, control(id));
        edit(&mut m);
        m
    };
    let ordinary = json!({ "type": "note", "version": 1, "data": {} });
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "valid and correlated",
            send(&target, claude_message("c1", control("c1"))),
            unavailable("c1"),
        ),
        (
            "before target resolution",
            send("nobody-at-all", claude_message("c2", control("c2"))),
            unavailable("c2"),
        ),
        (
            "uncorrelated",
            send(&target, claude_message("c3", control("other"))),
            invalid("c3"),
        ),
        (
            "an ordinary envelope",
            send(&target, claude_message("c4", ordinary)),
            invalid("c4"),
        ),
        (
            "not an object",
            send(&target, claude_message("c5", json!("boss.worker.health"))),
            invalid("c5"),
        ),
        (
            "with text",
            send(&target, with("c6", &|m| m["content"]["text"] = json!("t"))),
            invalid("c6"),
        ),
        (
            "with attachments",
            send(
                &target,
                with("c7", &|m| m["content"]["attachments"] = json!([])),
            ),
            invalid("c7"),
        ),
        (
            "expectsReply false",
            send(&target, with("c8", &|m| m["expectsReply"] = json!(false))),
            invalid("c8"),
        ),
        (
            "with replyTo",
            send(&target, with("c9", &|m| m["replyTo"] = json!("q"))),
            invalid("c9"),
        ),
    ];
    for (what, frame, expected) in cases {
        s.send(frame);
        assert_eq!(s.recv(), expected, "{what}");
    }
    // The connection stays, and nothing reached the target.
    s.send(json!({ "type": "list", "requestId": "still-open" }));
    s.expect("sessions");
    assert!(t.quiet(std::time::Duration::from_millis(100)));
}

fn local_register(id: &str, name: &str, pid: u64, started_at: u64, runtime: Option<&str>) -> Value {
    let mut frame = json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": id,
        "session": {
            "name": name, "cwd": "/w", "model": "m", "pid": pid, "startedAt": started_at,
            "lastActivity": 3,
        },
    });
    if let Some(runtime) = runtime {
        frame["session"]["runtimeInstanceId"] = json!(runtime);
    }
    frame
}

/// The Claude adapter's session-collision scenario: a typed control in `message.control` to a
/// contested id is refused without disturbing its incumbent, which keeps its id against other
/// runtimes while an ordinary message to it is pending.
#[test]
fn a_contested_id_keeps_its_incumbent_and_gets_no_typed_control() {
    let broker = Broker::start("collision");
    let mut sender = broker.connect();
    sender.register("sender", None);
    let mut owner = broker.connect();
    owner.send(local_register(
        "contested-id",
        "owner",
        11,
        101,
        Some("owner-runtime"),
    ));
    assert_eq!(owner.recv()["type"], "registered");
    sender.expect("session_joined");
    sender.send(send(
        "contested-id",
        claude_message("typed", control("typed")),
    ));
    assert_eq!(
        sender.recv(),
        failed("typed", "CONTROL_DISPATCH_UNAVAILABLE", CLAUDE_UNAVAILABLE)
    );
    sender.send_message("contested-id", "pending", "preserve me");
    assert_eq!(sender.expect("delivery_accepted")["messageId"], "pending");
    // The first frame the owner sees is the ordinary message, not the control.
    let incoming = owner.recv();
    assert_eq!(
        (
            incoming["type"].as_str(),
            incoming["message"]["id"].as_str()
        ),
        (Some("message"), Some("pending"))
    );
    let mut contender = broker.connect();
    contender.send(local_register(
        "contested-id",
        "contender",
        22,
        202,
        Some("other"),
    ));
    let refused = contender.recv();
    assert_eq!(refused["code"], "SESSION_ID_IN_USE");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("already active in another local runtime")
    );
    owner.send(json!({ "type": "message_received", "deliveryId": incoming["deliveryId"] }));
    assert_eq!(
        sender.expect("delivered")["deliveryId"],
        incoming["deliveryId"]
    );
    owner.send(json!({ "type": "list", "requestId": "l" }));
    let sessions = owner.expect("sessions");
    let incumbent = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "contested-id")
        .unwrap()
        .clone();
    assert_eq!(
        (incumbent["name"].clone(), incumbent["pid"].clone()),
        (json!("owner"), json!(11))
    );
    assert!(incumbent.get("runtimeInstanceId").is_none());
    // Without runtime ids, pid and start time decide; a runtime id never takes a legacy id.
    let mut legacy = broker.connect();
    legacy.send(local_register("legacy-id", "legacy", 33, 303, None));
    assert_eq!(legacy.recv()["type"], "registered");
    for (pid, started_at, runtime) in [(44, 404, None), (33, 303, Some("new-token"))] {
        let mut c = broker.connect();
        c.send(local_register(
            "legacy-id",
            "contender",
            pid,
            started_at,
            runtime,
        ));
        assert_eq!(c.recv()["code"], "SESSION_ID_IN_USE");
    }
    let mut same = broker.connect();
    same.send(local_register("legacy-id", "legacy-new", 33, 303, None));
    assert_eq!(same.recv()["type"], "registered");
}
