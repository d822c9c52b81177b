//! What the `watch` tests share: an agent directory, a real broker in this process, sessions in
//! two scopes and none, asks in flight (one deferred) and a queued message for an offline
//! session; and the byte scan that no scope value appears.

#![allow(dead_code)]

pub mod tty;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_intercom_broker::client::RawClient;
use agent_intercom_broker::{BrokerConfig, BrokerHandle};
use serde_json::{Value, json};

/// The two scopes. Never on the watcher's screen or in its JSON.
pub const SCOPE_A: &str = "WatchScopeAlpha_5eCr3tValue01";
pub const SCOPE_B: &str = "WatchScopeBravo_5eCr3tValue02";

pub const ALPHA: &str = "alpha-1111-aaaa";
pub const BETA: &str = "beta-2222-bbbb";
pub const GAMMA: &str = "gamma-3333-cccc";
pub const EPSILON: &str = "epsilon-5555-eeee";
pub const DELTA: &str = "delta-4444-dddd";
pub const OMEGA: &str = "omega-0000-ffff";

pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("aicw-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    pub fn config(&self) -> BrokerConfig {
        let mut config = BrokerConfig::for_agent_dir(&self.0);
        config.idle_exit = None;
        config
    }

    pub fn socket(&self) -> PathBuf {
        self.config().socket_path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn start(dir: &Dir) -> BrokerHandle {
    agent_intercom_broker::start(dir.config()).expect("the broker starts")
}

/// The next frame of `kind` (others skipped), within 10 s.
pub fn expect(client: &mut RawClient, kind: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.recv(left).unwrap() {
            Some(v) if v["type"] == kind => return v,
            Some(_) => continue,
            None => panic!("no {kind} frame"),
        }
    }
}

/// Registers `id` named `name` in `scope`.
pub fn join(socket: &Path, id: &str, name: &str, scope: Option<&str>) -> RawClient {
    let mut c = RawClient::connect(socket).unwrap();
    let mut frame = json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "sessionId": id,
        "session": {
            "name": name,
            "cwd": format!("/work/{name}"),
            "model": format!("model-{name}"),
            "status": format!("{name} is busy"),
            "pid": 4242,
            "startedAt": 1,
            "lastActivity": agent_intercom_broker::lifecycle::now_ms(),
            "runtimeInstanceId": format!("rt-{id}"),
        },
    });
    if let Some(scope) = scope {
        frame["scopeId"] = json!(scope);
    }
    c.send(&frame).unwrap();
    assert_eq!(expect(&mut c, "registered")["sessionId"], id);
    c
}

fn send(from: &mut RawClient, to: &str, id: &str, extra: Value) {
    let mut frame = json!({
        "type": "send",
        "to": to,
        "message": { "id": id, "timestamp": 1, "content": { "text": "hello" } },
    });
    for (k, v) in extra.as_object().unwrap() {
        frame[k] = v.clone();
    }
    from.send(&frame).unwrap();
}

/// `from` asks `to` (who acknowledges it); the ask stays open.
fn ask(from: &mut RawClient, to: &mut RawClient, to_id: &str, id: &str) {
    from.send(&json!({
        "type": "send",
        "to": to_id,
        "message": { "id": id, "timestamp": 1, "expectsReply": true, "content": { "text": "?" } },
    }))
    .unwrap();
    let message = expect(to, "message");
    to.send(&json!({ "type": "message_received", "deliveryId": message["deliveryId"] }))
        .unwrap();
    assert_eq!(expect(from, "delivered")["messageId"], id);
}

/// The sessions of a scenario, kept connected while it lives.
pub struct Scenario {
    pub alpha: RawClient,
    pub beta: RawClient,
    pub gamma: RawClient,
    pub delta: RawClient,
}

/// alpha and beta in scope A, gamma in scope B, delta unscoped; alpha asks beta (waiting);
/// epsilon (scope B) asks gamma and leaves (deferred); omega (unscoped) leaves and delta queues
/// a message for it.
pub fn scenario(socket: &Path) -> Scenario {
    let mut alpha = join(socket, ALPHA, "alpha", Some(SCOPE_A));
    let mut beta = join(socket, BETA, "beta", Some(SCOPE_A));
    let mut gamma = join(socket, GAMMA, "gamma", Some(SCOPE_B));
    let mut epsilon = join(socket, EPSILON, "epsilon", Some(SCOPE_B));
    let mut delta = join(socket, DELTA, "delta", None);
    let omega = join(socket, OMEGA, "omega", None);
    ask(&mut alpha, &mut beta, BETA, "ask-1");
    ask(&mut epsilon, &mut gamma, GAMMA, "ask-2");
    drop(epsilon);
    assert_eq!(expect(&mut gamma, "ask_deferred")["fromSessionId"], EPSILON);
    drop(omega);
    loop {
        if expect(&mut delta, "session_left")["sessionId"] == OMEGA {
            break;
        }
    }
    send(&mut delta, OMEGA, "queued-1", json!({ "queue": true }));
    assert_eq!(
        expect(&mut delta, "delivery_queued")["messageId"],
        "queued-1"
    );
    Scenario {
        alpha,
        beta,
        gamma,
        delta,
    }
}

/// Fails when either scope value, or the part both share, appears anywhere in `bytes`.
pub fn assert_no_scope(bytes: &[u8], what: &str) {
    for scope in [SCOPE_A, SCOPE_B, "5eCr3t"] {
        assert!(
            !bytes.windows(scope.len()).any(|w| w == scope.as_bytes()),
            "a scope value appears in {what}"
        );
    }
}
