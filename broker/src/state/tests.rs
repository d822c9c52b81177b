//! Unit tests of the state machine, driven by events without a socket.

use super::*;

fn register(id: &str, runtime: &str, scope: Option<&str>) -> Value {
    let mut f = json!({ "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": id,
        "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1, "runtimeInstanceId": runtime } });
    if let Some(scope) = scope {
        f["scopeId"] = json!(scope);
    }
    f
}

fn outputs(rx: &mut mpsc::UnboundedReceiver<Out>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(o) = rx.try_recv() {
        out.push(match o {
            Out::Frame(bytes) => serde_json::from_slice::<Value>(&bytes[4..]).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string(),
            Out::Close => "CLOSE".into(),
        });
    }
    out
}

/// Frames that were already in flight on a superseded connection when the replacement
/// happened are discarded: no answer, no broadcast, and the connection is closed.
#[test]
fn late_frames_from_a_superseded_connection_are_discarded() {
    let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
    config.idle_exit = None;
    config.log_level = LogLevel::Off;
    let mut state = State::new(config, None);
    let mut rxs = Vec::new();
    for conn in 1..=3 {
        let (tx, rx) = mpsc::unbounded_channel();
        state.handle(Event::Accepted {
            conn,
            tx,
            queued: Default::default(),
            kill: Default::default(),
        });
        rxs.push(rx);
    }
    state.handle(Event::Frame {
        conn: 3,
        value: register("watcher", "w", Some("Scope_AAAAAAAAAA")),
    });
    state.handle(Event::Frame {
        conn: 1,
        value: register("mover", "rt", Some("Scope_AAAAAAAAAA")),
    });
    state.handle(Event::Frame {
        conn: 2,
        value: register("mover", "rt", Some("Scope_BBBBBBBBBB")),
    });
    state.flush();
    for rx in rxs.iter_mut() {
        outputs(rx);
    }
    let late = [
        json!({ "type": "list", "requestId": "late" }),
        json!({ "type": "presence", "status": "late" }),
        json!({ "type": "send", "to": "watcher", "message": { "id": "late", "timestamp": 1, "content": { "text": "x" } } }),
        json!({ "type": "defer_ask", "requestId": "late", "messageId": "none" }),
    ];
    for frame in late {
        state.handle(Event::Frame {
            conn: 1,
            value: frame,
        });
    }
    state.flush();
    assert_eq!(outputs(&mut rxs[0]), vec!["CLOSE"; 4]);
    assert!(
        outputs(&mut rxs[1]).is_empty(),
        "the new binding hears nothing"
    );
    assert!(
        outputs(&mut rxs[2]).is_empty(),
        "the old scope hears nothing more"
    );
}

#[test]
fn a_rejected_connection_gets_its_frames_in_order_even_when_it_closes_in_the_same_batch() {
    let mut config = BrokerConfig::for_agent_dir(std::path::Path::new("/nonexistent"));
    config.idle_exit = None;
    config.log_level = LogLevel::Off;
    let mut state = State::new(config, None);
    let (tx, mut rx) = mpsc::unbounded_channel();
    state.handle(Event::Accepted {
        conn: 1,
        tx,
        queued: Default::default(),
        kill: Default::default(),
    });
    state.handle(Event::Frame {
        conn: 1,
        value: json!({ "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": "a",
            "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1 } }),
    });
    state.flush();
    while rx.try_recv().is_ok() {}
    state.handle(Event::Frame {
        conn: 1,
        value: json!({ "type": "list", "requestId": "r0" }),
    });
    state.handle(Event::Reject {
        conn: 1,
        code: "RATE_LIMITED",
        message: "slow down".into(),
    });
    state.handle(Event::Closed { conn: 1 });
    state.flush();
    let mut kinds = Vec::new();
    while let Ok(out) = rx.try_recv() {
        kinds.push(match out {
            Out::Frame(bytes) => serde_json::from_slice::<Value>(&bytes[4..]).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string(),
            Out::Close => "CLOSE".into(),
        });
    }
    assert_eq!(kinds, vec!["sessions", "error", "CLOSE"]);
}
