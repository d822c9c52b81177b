//! Streams over real sockets, read as SSE bytes as they arrive: `SendStreamingMessage` and
//! `SubscribeToTask` (1.0), `message/stream` and `tasks/resubscribe` (0.3). A local agent moves
//! the task through its own connection to the store, as `agent-intercom pad` would, and the
//! stream shows each change; it ends with the terminal (or new input-required) status. Also:
//! resubscribing after a dropped connection, cancel during a stream, the limits, keep-alives,
//! the connection guard, the bearer token and a graceful stop.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{
    Frame, Sse, Tmp, config, delivered, err, local_store, message, message03, ok, reason, start,
};

/// The methods of each version: send, subscribe, and the version header.
const VERSIONS: [(&str, &str, &str); 2] = [
    ("1.0", "SendStreamingMessage", "SubscribeToTask"),
    ("", "message/stream", "tasks/resubscribe"),
];

fn message_of(version: &str, id: &str, text: &str) -> Value {
    if version == "1.0" {
        message(id, text)
    } else {
        message03(id, text)
    }
}

/// A stream's first event: the task (1.0 `{task}`, 0.3 the Task with `kind`).
fn task_of(version: &str, result: &Value) -> Value {
    if version == "1.0" {
        result["task"].clone()
    } else {
        assert_eq!(result["kind"], "task", "{result}");
        result.clone()
    }
}

/// A status event's inner object and its state, checked to be of `id` and, in 0.3, to carry
/// `final` as `last` (1.0 has no `final`).
fn status_of(version: &str, result: &Value, id: &str, last: bool) -> (Value, String) {
    let update = if version == "1.0" {
        assert!(result.get("kind").is_none(), "{result}");
        let update = result["statusUpdate"].clone();
        assert!(update.get("final").is_none(), "{update}");
        update
    } else {
        assert_eq!(result["kind"], "status-update", "{result}");
        assert_eq!(result["final"], last, "{result}");
        result.clone()
    };
    assert_eq!(update["taskId"], id, "{result}");
    assert!(update["contextId"].is_string(), "{result}");
    let state = update["status"]["state"].as_str().unwrap().to_string();
    (update, state)
}

fn state(version: &str, name: &str) -> String {
    if version == "1.0" {
        format!("TASK_STATE_{}", name.replace('-', "_").to_uppercase())
    } else {
        name.to_string()
    }
}

fn open_send(addr: SocketAddr, version: &str, method: &str, message: Value) -> (Sse, String) {
    let mut stream = Sse::call(addr, version, method, json!({"message": message}));
    assert_eq!(stream.status, 200);
    assert!(stream.is_stream(), "{:?}", stream.headers);
    assert_eq!(stream.header("cache-control"), Some("no-store"));
    assert_eq!(stream.header("connection"), Some("close"));
    let task = task_of(version, &stream.result());
    let id = task["id"].as_str().unwrap().to_string();
    (stream, id)
}

#[test]
fn a_streamed_send_shows_each_change_until_the_local_agent_completes_the_task() {
    let tmp = Tmp::new("stream-flow");
    let service = start(config(&tmp));
    let addr = service.addr();
    let mut agent = local_store(&tmp);
    for (version, send, _) in VERSIONS {
        let mut stream = Sse::call(
            addr,
            version,
            send,
            json!({"message": message_of(version, &format!("flow-{version}"), "stream me")}),
        );
        assert!(stream.is_stream(), "{:?}", stream.headers);
        let task = task_of(version, &stream.result());
        assert_eq!(task["status"]["state"], state(version, "submitted"));
        assert_eq!(task["history"][0]["parts"][0]["text"], "stream me");
        let id = task["id"].as_str().unwrap().to_string();
        let delivery = delivered(&mut agent, 1);
        assert_eq!(delivery[0].task_id.as_deref(), Some(id.as_str()));
        agent.transition_task(&id, "a2a", "working", None).unwrap();
        let (working, now) = status_of(version, &stream.result(), &id, false);
        assert_eq!(now, state(version, "working"));
        assert!(working["status"].get("message").is_none());
        agent.add_artifact(&id, "a2a", "answer", "42").unwrap();
        let result = stream.result();
        let update = if version == "1.0" {
            result["artifactUpdate"].clone()
        } else {
            assert_eq!(result["kind"], "artifact-update");
            result
        };
        assert_eq!(update["taskId"], id.as_str());
        assert_eq!(update["artifact"]["artifactId"], format!("{id}-artifact-1"));
        assert_eq!(update["artifact"]["name"], "answer");
        assert_eq!(update["artifact"]["parts"][0]["text"], "42");
        assert_eq!(
            (&update["append"], &update["lastChunk"]),
            (&json!(false), &json!(true))
        );
        agent
            .transition_task(&id, "a2a", "completed", Some("all done"))
            .unwrap();
        let (done, now) = status_of(version, &stream.result(), &id, true);
        assert_eq!(now, state(version, "completed"));
        assert_eq!(done["status"]["message"]["parts"][0]["text"], "all done");
        stream.ends();
        // What the stream said last is what GetTask says.
        let get = if version == "1.0" {
            "GetTask"
        } else {
            "tasks/get"
        };
        let got = ok(addr, version, get, json!({"id": id}));
        assert_eq!(got["status"], done["status"]);
        assert_eq!(got["artifacts"][0], update["artifact"]);
    }
}

#[test]
fn a_dropped_stream_is_resumed_from_the_current_state_and_a_terminal_task_is_refused() {
    let tmp = Tmp::new("stream-resume");
    let service = start(config(&tmp));
    let addr = service.addr();
    let mut agent = local_store(&tmp);
    for (version, send, subscribe) in VERSIONS {
        let message = message_of(version, &format!("resume-{version}"), "resume me");
        let (stream, id) = open_send(addr, version, send, message);
        // The connection drops; the local agent works on meanwhile.
        drop(stream);
        agent.transition_task(&id, "a2a", "working", None).unwrap();
        agent.add_artifact(&id, "a2a", "draft", "half").unwrap();
        let mut again = Sse::call(addr, version, subscribe, json!({"id": id}));
        assert!(again.is_stream(), "{:?}", again.headers);
        let task = task_of(version, &again.result());
        assert_eq!(task["id"], id.as_str());
        assert_eq!(task["status"]["state"], state(version, "working"));
        assert_eq!(task["artifacts"][0]["parts"][0]["text"], "half");
        assert_eq!(task["history"][0]["parts"][0]["text"], "resume me");
        agent.add_artifact(&id, "a2a", "final", "whole").unwrap();
        agent
            .transition_task(&id, "a2a", "completed", None)
            .unwrap();
        let result = again.result();
        let artifact = if version == "1.0" {
            &result["artifactUpdate"]["artifact"]
        } else {
            &result["artifact"]
        };
        assert_eq!(artifact["artifactId"], format!("{id}-artifact-2"));
        let (_, now) = status_of(version, &again.result(), &id, true);
        assert_eq!(now, state(version, "completed"));
        again.ends();
        // Nothing more can happen to a terminal task: no stream (A2A 1.0 §3.1.6).
        let refused = Sse::call(addr, version, subscribe, json!({"id": id}));
        assert!(!refused.is_stream());
        let e = refused.json()["error"].clone();
        assert_eq!(e["code"], -32004, "{e}");
        let unknown = err(addr, version, subscribe, json!({"id": "nope"}), -32001);
        assert!(unknown["message"].as_str().unwrap().contains("nope"));
    }
}

#[test]
fn a_cancel_during_a_stream_ends_it_with_the_canceled_status() {
    let tmp = Tmp::new("stream-cancel");
    let service = start(config(&tmp));
    let addr = service.addr();
    let mut agent = local_store(&tmp);
    for (version, send, subscribe) in VERSIONS {
        let message = message_of(version, &format!("cancel-{version}"), "cancel me");
        let (mut stream, id) = open_send(addr, version, send, message);
        agent.transition_task(&id, "a2a", "working", None).unwrap();
        status_of(version, &stream.result(), &id, false);
        // A second stream of the same task sees the same events.
        let mut watcher = Sse::call(addr, version, subscribe, json!({"id": id}));
        watcher.result();
        let cancel = if version == "1.0" {
            "CancelTask"
        } else {
            "tasks/cancel"
        };
        let canceled = ok(addr, version, cancel, json!({"id": id}));
        assert_eq!(canceled["status"]["state"], state(version, "canceled"));
        for s in [&mut stream, &mut watcher] {
            let (update, now) = status_of(version, &s.result(), &id, true);
            assert_eq!(now, state(version, "canceled"));
            assert_eq!(update["status"], canceled["status"]);
            s.ends();
        }
    }
}

#[test]
fn input_required_ends_a_stream_and_a_streamed_follow_up_continues_the_task() {
    let tmp = Tmp::new("stream-input");
    let service = start(config(&tmp));
    let addr = service.addr();
    let mut agent = local_store(&tmp);
    let (mut stream, id) = open_send(addr, "1.0", "SendStreamingMessage", message("q-1", "ask"));
    agent.transition_task(&id, "a2a", "working", None).unwrap();
    agent
        .transition_task(&id, "a2a", "input-required", Some("Which branch?"))
        .unwrap();
    status_of("1.0", &stream.result(), &id, false);
    let (asked, now) = status_of("1.0", &stream.result(), &id, true);
    assert_eq!(now, "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        asked["status"]["message"]["parts"][0]["text"],
        "Which branch?"
    );
    stream.ends();
    // The answer, streamed: the task as it stands (still waiting: the local agent resumes it),
    // then what the agent does, to the end.
    let mut follow_up = message("q-2", "main");
    follow_up["taskId"] = json!(id);
    let (mut stream, same) = open_send(addr, "1.0", "SendStreamingMessage", follow_up);
    assert_eq!(same, id);
    agent.transition_task(&id, "a2a", "working", None).unwrap();
    agent
        .transition_task(&id, "a2a", "completed", None)
        .unwrap();
    status_of("1.0", &stream.result(), &id, false);
    let (_, now) = status_of("1.0", &stream.result(), &id, true);
    assert_eq!(now, "TASK_STATE_COMPLETED");
    stream.ends();
    // A repeat of the first message is answered with the task as it now stands, and ends.
    let mut repeat = Sse::call(
        addr,
        "1.0",
        "SendStreamingMessage",
        json!({"message": message("q-1", "ask")}),
    );
    let task = repeat.result()["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let (_, now) = status_of("1.0", &repeat.result(), &id, true);
    assert_eq!(now, "TASK_STATE_COMPLETED");
    repeat.ends();
    // A message to the terminal task is refused before any stream.
    let mut late = message("q-3", "too late");
    late["taskId"] = json!(id);
    let e = Sse::call(
        addr,
        "1.0",
        "SendStreamingMessage",
        json!({"message": late}),
    )
    .json();
    assert_eq!(reason(&e["error"]), "TASK_TERMINAL");
}

#[test]
fn streams_are_bounded_per_client_and_in_all_and_a_refusal_stores_nothing() {
    let tmp = Tmp::new("stream-limits");
    let mut cfg = config(&tmp);
    cfg.limits.max_streams_per_client = 2;
    let service = start(cfg);
    let addr = service.addr();
    let (first, id) = open_send(addr, "1.0", "SendStreamingMessage", message("l-1", "one"));
    let mut second = Sse::call(addr, "1.0", "SubscribeToTask", json!({"id": id}));
    second.result();
    let third = Sse::call(
        addr,
        "1.0",
        "SendStreamingMessage",
        json!({"message": message("l-3", "three")}),
    );
    assert!(!third.is_stream(), "{:?}", third.headers);
    let e = third.json()["error"].clone();
    assert_eq!(e["code"], -32603, "{e}");
    assert_eq!(reason(&e), "TOO_MANY_STREAMS");
    assert_eq!(e["data"][0]["metadata"]["scope"], "client");
    assert_eq!(e["data"][0]["metadata"]["limit"], "2");
    let e = err(addr, "1.0", "SubscribeToTask", json!({"id": id}), -32603);
    assert_eq!(reason(&e), "TOO_MANY_STREAMS");
    // Nothing was stored for the refused send.
    assert_eq!(ok(addr, "1.0", "ListTasks", json!({}))["totalSize"], 1);
    // A client that goes away gives its stream back (once the service sees it gone).
    drop(first);
    let mut admitted = None;
    for _ in 0..500 {
        let mut s = Sse::call(addr, "1.0", "SubscribeToTask", json!({"id": id}));
        if s.is_stream() {
            s.result();
            admitted = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        admitted.is_some(),
        "the dropped stream was never given back"
    );
    drop(second);
    drop(admitted);

    // In all: a service of one stream refuses a second whoever asks.
    let tmp = Tmp::new("stream-limits-all");
    let mut cfg = config(&tmp);
    cfg.limits.max_streams = 1;
    let service = start(cfg);
    let addr = service.addr();
    let (_one, id) = open_send(addr, "", "message/stream", message03("a-1", "one"));
    let e = err(addr, "", "tasks/resubscribe", json!({"id": id}), -32603);
    assert_eq!(e["data"]["reason"], "TOO_MANY_STREAMS");
    assert_eq!(e["data"]["scope"], "service");
}

#[test]
fn a_long_quiet_stream_keeps_alive_past_the_head_timeout_and_is_never_evicted() {
    let tmp = Tmp::new("stream-guard");
    let mut cfg = config(&tmp);
    cfg.limits.head_timeout = Duration::from_millis(200);
    cfg.limits.stream_keep_alive = Duration::from_millis(40);
    cfg.limits.max_connections = 4;
    cfg.limits.max_streams = 2;
    let service = start(cfg);
    let addr = service.addr();
    let (mut stream, id) = open_send(addr, "1.0", "SendStreamingMessage", message("k-1", "wait"));
    // Keep-alive comments come while nothing happens, well past the head timeout.
    for _ in 0..12 {
        match stream.frame() {
            Some(Frame::Comment(text)) => assert_eq!(text, "keep-alive"),
            other => panic!("expected a keep-alive, got {other:?}"),
        }
    }
    // Silent connections fill every other slot and make room for one another; the stream's
    // connection is never the one closed.
    let silent: Vec<_> = (0..6)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    assert_eq!(
        ok(addr, "1.0", "GetTask", json!({"id": id}))["id"],
        id.as_str()
    );
    let mut agent = local_store(&tmp);
    agent.transition_task(&id, "a2a", "working", None).unwrap();
    agent
        .transition_task(&id, "a2a", "failed", Some("no"))
        .unwrap();
    status_of("1.0", &stream.result(), &id, false);
    let (_, now) = status_of("1.0", &stream.result(), &id, true);
    assert_eq!(now, "TASK_STATE_FAILED");
    stream.ends();
    drop(silent);
}

#[test]
fn stopping_the_service_ends_its_streams() {
    let tmp = Tmp::new("stream-stop");
    let service = start(config(&tmp));
    let addr = service.addr();
    let (mut stream, _) = open_send(addr, "1.0", "SendStreamingMessage", message("x-1", "stop"));
    let stopping = std::thread::spawn(move || service.stop());
    stream.ends();
    assert!(stopping.join().unwrap().is_ok());
}

#[test]
fn the_bearer_token_guards_streams_as_every_request() {
    let tmp = Tmp::new("stream-token");
    let token_file = tmp.0.join("token");
    std::fs::write(&token_file, "stream-token-0123456789\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut cfg = config(&tmp);
    cfg.token_file = Some(token_file);
    let service = start(cfg);
    let addr = service.addr();
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage",
                      "params": {"message": message("t-1", "guarded")}})
    .to_string();
    let base = [("Content-Type", "application/json"), ("A2A-Version", "1.0")];
    let denied = Sse::post(addr, &base, body.as_bytes());
    assert_eq!(denied.status, 401);
    assert_eq!(denied.header("www-authenticate"), Some("Bearer"));
    let mut headers = base.to_vec();
    headers.push(("Authorization", "Bearer stream-token-0123456789"));
    let mut stream = Sse::post(addr, &headers, body.as_bytes());
    assert!(stream.is_stream());
    let id = stream.result()["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        local_store(&tmp).task(&id, "a2a").unwrap().creator,
        "a2a:bearer"
    );
}

#[test]
fn stream_limits_that_could_take_every_connection_are_refused_at_start() {
    let tmp = Tmp::new("stream-config");
    let mut cfg = config(&tmp);
    cfg.limits.max_connections = 8;
    cfg.limits.max_streams = 8;
    match agent_intercom_a2a::spawn(cfg.clone()).err() {
        Some(agent_intercom_a2a::StartError::Config(m)) => assert!(m.contains("streams"), "{m}"),
        other => panic!("expected a usage error, got {other:?}"),
    }
    cfg.limits.max_streams = 4;
    cfg.limits.stream_keep_alive = Duration::ZERO;
    match agent_intercom_a2a::spawn(cfg).err() {
        Some(agent_intercom_a2a::StartError::Config(m)) => assert!(m.contains("keep-alive"), "{m}"),
        other => panic!("expected a usage error, got {other:?}"),
    }
    assert!(!tmp.db().exists(), "nothing is created by a refused start");
}
