//! `serve --broker` in process, over real sockets: a broker on its own thread, a session on the
//! raw wire, the service as a broker session. The session's reply completes the task with its
//! text and attachments; a target the broker does not know rejects the task with the broker's
//! code; a cancel reaches the session as `ask_cancelled`. (The official SDKs and Node sessions,
//! restarts and the offline queue: tests/a2a/python/test_gateway*.py.)

use std::path::Path;
use std::time::Duration;

use agent_intercom_a2a::gateway::{BrokerOptions, session_id};
use agent_intercom_broker::client::RawClient;
use serde_json::{Value, json};

use crate::client::{Tmp, config, message, ok, start};

/// Polls of a task (a bound on the number of polls, not a clock).
const POLLS: usize = 3000;

fn broker(dir: &Path) -> agent_intercom_broker::BrokerHandle {
    let config =
        agent_intercom_broker::embed::config(Some(dir), None, [("idle_exit_ms", "0")]).unwrap();
    agent_intercom_broker::embed::start(config).unwrap()
}

/// A session named `name` on the raw wire.
fn session(socket: &Path, name: &str) -> RawClient {
    let mut client = RawClient::connect(socket).unwrap();
    client
        .send(&json!({
            "type": "register", "protocol": "pi-intercom", "version": 4,
            "sessionId": format!("{name}-1"),
            "session": {"cwd": "/", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1,
                        "name": name},
        }))
        .unwrap();
    assert_eq!(
        next(&mut client, "registered")["sessionId"],
        format!("{name}-1")
    );
    client
}

/// The next frame of type `kind` (others are skipped).
fn next(client: &mut RawClient, kind: &str) -> Value {
    loop {
        let frame = client
            .recv(Duration::from_secs(30))
            .unwrap()
            .unwrap_or_else(|| panic!("no {kind} frame"));
        if frame["type"] == kind {
            return frame;
        }
    }
}

fn gateway(tmp: &Tmp, socket: &Path, target: &str) -> agent_intercom_a2a::Running {
    let mut cfg = config(tmp);
    cfg.broker = Some(BrokerOptions {
        socket: socket.to_path_buf(),
        start: None,
        name: "a2a-gateway".into(),
        session_id: session_id(&tmp.db(), "a2a-gateway", None),
        scope: None,
        default_target: Some(target.into()),
        targets: vec![],
        inbox: tmp.0.join("gateway-inbox.sqlite"),
        probe_interval: Duration::from_secs(30),
    });
    start(cfg)
}

/// The task once it is in `state`.
fn task_in(addr: std::net::SocketAddr, id: &str, state: &str) -> Value {
    for _ in 0..POLLS {
        let task = ok(addr, "1.0", "GetTask", json!({"id": id}));
        if task["status"]["state"] == state {
            return task;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("task {id} never became {state}");
}

fn send(addr: std::net::SocketAddr, text: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    let params =
        json!({"message": message(&id, text), "configuration": {"returnImmediately": true}});
    let sent = ok(addr, "1.0", "SendMessage", params);
    sent["task"]["id"].as_str().unwrap().to_string()
}

#[test]
fn the_reply_of_the_live_session_completes_the_task() {
    let tmp = Tmp::new("gateway-reply");
    let handle = broker(&tmp.0);
    let mut worker = session(handle.socket_path(), "worker");
    let service = gateway(&tmp, handle.socket_path(), "worker");
    let id = send(service.addr(), "review PR 3");
    let ask = next(&mut worker, "message");
    assert_eq!(ask["message"]["id"], format!("a2a-task-{id}"));
    assert_eq!(ask["message"]["expectsReply"], true);
    assert_eq!(ask["message"]["content"]["text"], "review PR 3");
    assert_eq!(ask["from"]["name"], "a2a-gateway");
    let delivery = ask["deliveryId"].clone();
    worker
        .send(&json!({"type": "message_received", "deliveryId": delivery}))
        .unwrap();
    task_in(service.addr(), &id, "TASK_STATE_WORKING");
    worker
        .send(
            &json!({"type": "send", "to": ask["from"]["id"], "message": {
                "id": "reply-1", "timestamp": 2, "replyTo": ask["message"]["id"],
                "content": {"text": "approved", "attachments": [
                    {"type": "snippet", "name": "notes.md", "content": "- fine"}]},
            }}),
        )
        .unwrap();
    assert_eq!(next(&mut worker, "delivered")["messageId"], "reply-1");
    let done = task_in(service.addr(), &id, "TASK_STATE_COMPLETED");
    let artifacts: Vec<(Value, Value)> = done["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].clone(), a["parts"][0]["text"].clone()))
        .collect();
    assert_eq!(
        artifacts,
        [
            (json!("reply"), json!("approved")),
            (json!("notes.md"), json!("- fine"))
        ]
    );
    assert_eq!(
        done["status"]["message"]["parts"][0]["text"],
        "answered by worker"
    );
    service.stop().unwrap();
}

#[test]
fn a_target_the_broker_does_not_know_rejects_the_task_with_its_code() {
    let tmp = Tmp::new("gateway-unknown");
    let handle = broker(&tmp.0);
    let service = gateway(&tmp, handle.socket_path(), "nobody");
    let id = send(service.addr(), "anyone there?");
    let task = task_in(service.addr(), &id, "TASK_STATE_REJECTED");
    let why = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("SESSION_NOT_FOUND") && why.contains("nobody"),
        "{why}"
    );
    service.stop().unwrap();
}

#[test]
fn a_cancel_reaches_the_session_as_ask_cancelled() {
    let tmp = Tmp::new("gateway-cancel");
    let handle = broker(&tmp.0);
    let mut worker = session(handle.socket_path(), "worker");
    let service = gateway(&tmp, handle.socket_path(), "worker");
    let id = send(service.addr(), "long job");
    let ask = next(&mut worker, "message");
    worker
        .send(&json!({"type": "message_received", "deliveryId": ask["deliveryId"]}))
        .unwrap();
    task_in(service.addr(), &id, "TASK_STATE_WORKING");
    let canceled = ok(service.addr(), "1.0", "CancelTask", json!({"id": id}));
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let cancelled = next(&mut worker, "ask_cancelled");
    assert_eq!(cancelled["messageId"], ask["message"]["id"]);
    assert_eq!(cancelled["reason"], "cancelled");
    service.stop().unwrap();
}
