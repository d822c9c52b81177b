//! A2A 1.0: SendMessage, GetTask, CancelTask, ListTasks and their errors.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{
    Tmp, call, config, delivered, err, in_background, local_store, message, ok, reason, start,
    start_waiting,
};

/// Asserts that no object in `value` has a `kind` member (1.0 has none).
fn no_kind(value: &Value) {
    match value {
        Value::Object(map) => {
            assert!(!map.contains_key("kind"), "a 1.0 answer with kind: {value}");
            map.values().for_each(no_kind);
        }
        Value::Array(items) => items.iter().for_each(no_kind),
        _ => {}
    }
}

fn send_now(addr: std::net::SocketAddr, id: &str, text: &str) -> Value {
    let result = ok(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message(id, text), "configuration": {"returnImmediately": true}}),
    );
    result["task"].clone()
}

#[test]
fn a_message_becomes_a_scratchpad_task_that_get_list_and_cancel_see() {
    let tmp = Tmp::new("v1-basic");
    let service = start(config(&tmp));
    let addr = service.addr();
    let task = send_now(addr, "m-1", "Fix the parser\nIt fails on empty input.");
    no_kind(&task);
    let id = task["id"].as_str().unwrap().to_string();
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED");
    let stamp = task["status"]["timestamp"].as_str().unwrap();
    assert!(stamp.ends_with('Z') && stamp.len() == 24, "{stamp}");
    assert!(!task["contextId"].as_str().unwrap().is_empty());
    let history = task["history"].as_array().unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["messageId"], "m-1");
    assert_eq!(history[0]["role"], "ROLE_USER");
    assert_eq!(history[0]["taskId"], id.as_str());
    assert_eq!(history[0]["contextId"], task["contextId"]);
    assert_eq!(
        history[0]["parts"],
        json!([{"text": "Fix the parser\nIt fails on empty input."}])
    );
    // The same task in the scratchpad: created by the A2A sender, assigned to the local agent,
    // titled from the text, and the request delivered to the agent.
    let mut store = local_store(&tmp);
    let local = store.task(&id, "a2a").unwrap();
    assert_eq!(local.creator, "a2a:anonymous");
    assert_eq!(local.title, "Fix the parser");
    assert_eq!(local.state, "submitted");
    let unread = store.read_unread("a2a", None).unwrap();
    assert_eq!(unread.len(), 1);
    assert_eq!(unread[0].task_id.as_deref(), Some(id.as_str()));
    assert!(unread[0].content.contains("It fails on empty input."));
    // GetTask, with and without history.
    let got = ok(addr, "1.0", "GetTask", json!({"id": id}));
    no_kind(&got);
    assert_eq!(got["id"], id.as_str());
    assert_eq!(got["history"].as_array().unwrap().len(), 1);
    let bare = ok(
        addr,
        "1.0",
        "GetTask",
        json!({"id": id, "historyLength": 0}),
    );
    assert!(bare.get("history").is_none(), "{bare}");
    // ListTasks sees it.
    let listed = ok(addr, "1.0", "ListTasks", json!({}));
    assert_eq!(listed["totalSize"], 1);
    assert_eq!(listed["pageSize"], 50);
    assert_eq!(listed["nextPageToken"], "");
    assert_eq!(listed["tasks"][0]["id"], id.as_str());
    assert!(listed["tasks"][0].get("artifacts").is_none());
    // CancelTask: canceled in the store when the answer says so; a second cancel is refused.
    let canceled = ok(addr, "1.0", "CancelTask", json!({"id": id}));
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    assert_eq!(store.task(&id, "a2a").unwrap().state, "canceled");
    let again = err(addr, "1.0", "CancelTask", json!({"id": id}), -32002);
    assert_eq!(reason(&again), "TASK_NOT_CANCELABLE");
    assert_eq!(
        again["data"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );
    // Unknown tasks.
    for method in ["GetTask", "CancelTask"] {
        let e = err(addr, "1.0", method, json!({"id": "no-such-task"}), -32001);
        assert_eq!(reason(&e), "TASK_NOT_FOUND");
    }
    let e = err(addr, "1.0", "GetTask", json!({}), -32602);
    assert_eq!(e["data"][1]["fieldViolations"][0]["field"], "id");
}

#[test]
fn a_repeated_message_id_returns_the_same_task_and_another_body_under_it_is_refused() {
    let tmp = Tmp::new("v1-idem");
    let service = start(config(&tmp));
    let addr = service.addr();
    let first = send_now(addr, "same-id", "do this once");
    let again = send_now(addr, "same-id", "do this once");
    assert_eq!(first["id"], again["id"]);
    // Key order does not make another message.
    let reordered = json!({"configuration": {"returnImmediately": true},
        "message": {"parts": [{"text": "do this once"}], "role": "ROLE_USER",
                    "messageId": "same-id"}});
    assert_eq!(
        ok(addr, "1.0", "SendMessage", reordered)["task"]["id"],
        first["id"]
    );
    let e = err(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("same-id", "do something else")}),
        -32602,
    );
    assert_eq!(reason(&e), "MESSAGE_ID_REUSED");
    assert_eq!(e["data"][0]["metadata"]["taskId"], first["id"]);
    assert_eq!(ok(addr, "1.0", "ListTasks", json!({}))["totalSize"], 1);
    // Nothing was delivered twice.
    let mut store = local_store(&tmp);
    assert_eq!(store.read_unread("a2a", None).unwrap().len(), 1);
    // A new messageId is a new task.
    let other = send_now(addr, "other-id", "do this once");
    assert_ne!(other["id"], first["id"]);
}

#[test]
fn a_blocking_send_waits_for_the_local_agent_to_complete_the_task() {
    let tmp = Tmp::new("v1-block");
    let service = start_waiting(&tmp);
    let addr = service.addr();
    let sender = in_background(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("b-1", "summarise the log")}),
    );
    // The local agent, on its own connection: picks the task up, works, answers, completes.
    let mut store = local_store(&tmp);
    delivered(&mut store, 1);
    let filter = agent_intercom_scratchpad::EventFilter {
        kinds: vec!["task.created".into()],
        ..Default::default()
    };
    let (events, _) = store.poll_events("a2a", None, 0, &filter, 10).unwrap();
    let id = events[0].ref_id.clone();
    store.transition_task(&id, "a2a", "working", None).unwrap();
    store
        .add_artifact(&id, "a2a", "summary", "3 errors, all timeouts")
        .unwrap();
    store
        .transition_task(&id, "a2a", "completed", Some("summarised"))
        .unwrap();
    let result = sender.join().unwrap();
    let task = &result["task"];
    assert_eq!(task["id"], id.as_str());
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(task["status"]["message"]["parts"][0]["text"], "summarised");
    let artifact = &task["artifacts"][0];
    assert_eq!(artifact["name"], "summary");
    assert_eq!(
        artifact["parts"],
        json!([{"text": "3 errors, all timeouts"}])
    );
    assert!(!artifact["artifactId"].as_str().unwrap().is_empty());
    let got = ok(addr, "1.0", "GetTask", json!({"id": id}));
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(got["artifacts"], task["artifacts"]);
    assert_eq!(got["history"][0]["parts"][0]["text"], "summarise the log");
    let listed = ok(
        addr,
        "1.0",
        "ListTasks",
        json!({"includeArtifacts": true, "status": "TASK_STATE_COMPLETED"}),
    );
    assert_eq!(listed["tasks"][0]["artifacts"], task["artifacts"]);
}

#[test]
fn input_required_interrupts_a_blocking_send_and_a_follow_up_continues_the_task() {
    let tmp = Tmp::new("v1-input");
    let service = start_waiting(&tmp);
    let addr = service.addr();
    let first = in_background(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("q-1", "rename the module")}),
    );
    let mut store = local_store(&tmp);
    delivered(&mut store, 1);
    let id = store
        .list("a2a", None, Some("a2a"), None, 10, None)
        .unwrap()
        .messages[0]
        .task_id
        .clone()
        .unwrap();
    store.transition_task(&id, "a2a", "working", None).unwrap();
    store
        .transition_task(&id, "a2a", "input-required", Some("to what name?"))
        .unwrap();
    let asked = first.join().unwrap()["task"].clone();
    assert_eq!(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        asked["status"]["message"]["parts"][0]["text"],
        "to what name?"
    );
    let context = asked["contextId"].as_str().unwrap().to_string();
    // The follow-up names the task; it waits for the next interruption or the end.
    let mut m = message("q-2", "call it lexer");
    m["taskId"] = json!(id);
    m["contextId"] = json!(context);
    let follow = in_background(addr, "1.0", "SendMessage", json!({"message": m}));
    delivered(&mut store, 1);
    store.transition_task(&id, "a2a", "working", None).unwrap();
    store
        .transition_task(&id, "a2a", "completed", None)
        .unwrap();
    let done = follow.join().unwrap()["task"].clone();
    assert_eq!(done["id"], id.as_str());
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["history"].as_array().unwrap().len(), 2);
    assert_eq!(done["history"][1]["messageId"], "q-2");
    let limited = ok(
        addr,
        "1.0",
        "GetTask",
        json!({"id": id, "historyLength": 1}),
    );
    assert_eq!(limited["history"].as_array().unwrap().len(), 1);
    assert_eq!(limited["history"][0]["messageId"], "q-2");
    // A terminal task takes no more messages; unknown tasks and other contexts are refused.
    let mut late = message("q-3", "and one more thing");
    late["taskId"] = json!(id);
    let e = err(addr, "1.0", "SendMessage", json!({"message": late}), -32004);
    assert_eq!(reason(&e), "TASK_TERMINAL");
    let mut unknown = message("q-4", "hello");
    unknown["taskId"] = json!("no-such-task");
    err(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": unknown}),
        -32001,
    );
    let live = send_now(addr, "q-5", "another job");
    let mut wrong = message("q-6", "more");
    wrong["taskId"] = live["id"].clone();
    wrong["contextId"] = json!("some-other-context");
    let e = err(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": wrong}),
        -32602,
    );
    assert_eq!(reason(&e), "CONTEXT_MISMATCH");
}

#[test]
fn a_blocking_send_is_bounded_and_then_answers_the_current_state() {
    let tmp = Tmp::new("v1-bound");
    let mut cfg = config(&tmp);
    cfg.blocking_timeout = Duration::from_millis(300);
    let service = start(cfg);
    let task = ok(
        service.addr(),
        "1.0",
        "SendMessage",
        json!({"message": message("w-1", "nobody will do this")}),
    );
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
}

#[test]
fn cancel_is_recorded_before_it_is_reported_and_work_cannot_overwrite_it() {
    let tmp = Tmp::new("v1-cancel");
    let service = start(config(&tmp));
    let addr = service.addr();
    let mut store = local_store(&tmp);
    let working = send_now(addr, "c-1", "long job");
    let id = working["id"].as_str().unwrap().to_string();
    store.transition_task(&id, "a2a", "working", None).unwrap();
    let canceled = ok(addr, "1.0", "CancelTask", json!({"id": id}));
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let history = store.task_history(&id, "a2a").unwrap();
    let last = history.last().unwrap();
    assert_eq!(
        (last.to.as_str(), last.by.as_str()),
        ("canceled", "a2a:anonymous")
    );
    // The local agent finishing late cannot turn the cancel into a success.
    let late = store
        .transition_task(&id, "a2a", "completed", None)
        .unwrap_err();
    assert_eq!(late.code().as_str(), "INVALID_TRANSITION");
    // Completed first: cancel is refused and nothing changes.
    let done = send_now(addr, "c-2", "short job");
    let done_id = done["id"].as_str().unwrap().to_string();
    store
        .transition_task(&done_id, "a2a", "working", None)
        .unwrap();
    store
        .transition_task(&done_id, "a2a", "completed", None)
        .unwrap();
    let e = err(addr, "1.0", "CancelTask", json!({"id": done_id}), -32002);
    assert_eq!(e["data"][0]["metadata"]["state"], "completed");
    assert_eq!(store.task(&done_id, "a2a").unwrap().state, "completed");
    // An interrupted task is cancelable too.
    let asking = send_now(addr, "c-3", "ask me");
    let asking_id = asking["id"].as_str().unwrap().to_string();
    store
        .transition_task(&asking_id, "a2a", "working", None)
        .unwrap();
    store
        .transition_task(&asking_id, "a2a", "input-required", None)
        .unwrap();
    let c = ok(addr, "1.0", "CancelTask", json!({"id": asking_id}));
    assert_eq!(c["status"]["state"], "TASK_STATE_CANCELED");
}

#[test]
fn list_tasks_filters_pages_newest_first_and_refuses_bad_parameters() {
    let tmp = Tmp::new("v1-list");
    let service = start(config(&tmp));
    let addr = service.addr();
    let mut ids = Vec::new();
    for i in 0..5 {
        let mut m = message(&format!("l-{i}"), &format!("job {i}"));
        m["contextId"] = json!(if i < 2 { "ctx-a" } else { "ctx-b" });
        let task = ok(
            addr,
            "1.0",
            "SendMessage",
            json!({"message": m, "configuration": {"returnImmediately": true}}),
        );
        ids.push(task["task"]["id"].as_str().unwrap().to_string());
        // Distinct status timestamps (milliseconds) make the order observable.
        std::thread::sleep(Duration::from_millis(3));
    }
    let mut store = local_store(&tmp);
    store
        .transition_task(&ids[0], "a2a", "working", None)
        .unwrap();
    let by_context = ok(addr, "1.0", "ListTasks", json!({"contextId": "ctx-a"}));
    assert_eq!(by_context["totalSize"], 2);
    let working = ok(
        addr,
        "1.0",
        "ListTasks",
        json!({"status": "TASK_STATE_WORKING"}),
    );
    assert_eq!(working["totalSize"], 1);
    assert_eq!(working["tasks"][0]["id"], ids[0].as_str());
    // Pages of two, newest status first, until the token is empty.
    let mut seen = Vec::new();
    let mut token = String::new();
    for _ in 0..5 {
        let page = ok(
            addr,
            "1.0",
            "ListTasks",
            json!({"pageSize": 2, "pageToken": token, "historyLength": 0}),
        );
        assert_eq!(page["totalSize"], 5);
        for t in page["tasks"].as_array().unwrap() {
            assert!(t.get("history").is_none());
            seen.push(t["id"].as_str().unwrap().to_string());
        }
        token = page["nextPageToken"].as_str().unwrap().to_string();
        if token.is_empty() {
            break;
        }
    }
    let expected: Vec<String> = [0, 4, 3, 2, 1].iter().map(|&i| ids[i].clone()).collect();
    assert_eq!(seen, expected);
    let with_artifacts = ok(addr, "1.0", "ListTasks", json!({"includeArtifacts": true}));
    assert_eq!(with_artifacts["tasks"][0]["artifacts"], json!([]));
    let none = ok(
        addr,
        "1.0",
        "ListTasks",
        json!({"status": "TASK_STATE_AUTH_REQUIRED"}),
    );
    assert_eq!(
        (none["totalSize"].clone(), none["tasks"].clone()),
        (json!(0), json!([]))
    );
    let future = ok(
        addr,
        "1.0",
        "ListTasks",
        json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}),
    );
    assert_eq!(future["totalSize"], 0);
    let past = ok(
        addr,
        "1.0",
        "ListTasks",
        json!({"statusTimestampAfter": "2000-01-01T00:00:00.000Z", "status": 1}),
    );
    assert_eq!(past["totalSize"], 4);
    for (params, field) in [
        (json!({"pageSize": 0}), "pageSize"),
        (json!({"pageSize": 101}), "pageSize"),
        (json!({"pageSize": "10"}), "pageSize"),
        (json!({"pageToken": "not-a-token"}), "pageToken"),
        (json!({"status": "TASK_STATE_RUNNING"}), "status"),
        (json!({"status": 9}), "status"),
        (json!({"historyLength": -1}), "historyLength"),
        (
            json!({"statusTimestampAfter": "yesterday"}),
            "statusTimestampAfter",
        ),
        (json!({"includeArtifacts": "yes"}), "includeArtifacts"),
        (json!({"contextId": 5}), "contextId"),
    ] {
        let e = err(addr, "1.0", "ListTasks", params.clone(), -32602);
        assert_eq!(
            e["data"][1]["fieldViolations"][0]["field"], field,
            "{params}: {e}"
        );
    }
}

#[test]
fn tasks_survive_a_restart_and_so_does_idempotency() {
    let tmp = Tmp::new("v1-restart");
    let service = start(config(&tmp));
    let task = send_now(service.addr(), "r-1", "keep me");
    let id = task["id"].as_str().unwrap().to_string();
    service.stop().unwrap();
    let mut store = local_store(&tmp);
    store.transition_task(&id, "a2a", "working", None).unwrap();
    drop(store);
    let again = start(config(&tmp));
    let got = ok(again.addr(), "1.0", "GetTask", json!({"id": id}));
    assert_eq!(got["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(got["history"][0]["messageId"], "r-1");
    assert_eq!(got["contextId"], task["contextId"]);
    // The lost-response retry after a restart still finds the task.
    assert_eq!(send_now(again.addr(), "r-1", "keep me")["id"], id.as_str());
}

#[test]
fn what_the_card_does_not_offer_is_refused_with_its_code() {
    let tmp = Tmp::new("v1-refused");
    let service = start(config(&tmp));
    let addr = service.addr();
    for (method, code) in [
        ("CreateTaskPushNotificationConfig", -32003),
        ("GetTaskPushNotificationConfig", -32003),
        ("ListTaskPushNotificationConfigs", -32003),
        ("DeleteTaskPushNotificationConfig", -32003),
        ("GetExtendedAgentCard", -32004),
    ] {
        err(addr, "1.0", method, json!({"id": "x"}), code);
    }
    let push = json!({"message": message("p-1", "x"),
        "configuration": {"taskPushNotificationConfig": {"url": "https://example.com/hook"}}});
    err(addr, "1.0", "SendMessage", push, -32003);
    assert_eq!(ok(addr, "1.0", "ListTasks", json!({}))["totalSize"], 0);
    err(addr, "1.0", "NoSuchMethod", json!({}), -32601);
    // Versions: unsupported, and methods of another version than the header's.
    for version in ["2.0", "1.1", "0.2", "banana"] {
        let e = err(addr, version, "GetTask", json!({"id": "x"}), -32009);
        assert_eq!(reason(&e), "VERSION_NOT_SUPPORTED");
    }
    err(
        addr,
        "",
        "SendMessage",
        json!({"message": message("v", "x")}),
        -32009,
    );
    err(addr, "0.3", "GetTask", json!({"id": "x"}), -32009);
    let e = err(addr, "1.0", "message/send", json!({}), -32009);
    assert!(e["message"].as_str().unwrap().contains("0.3"), "{e}");
    err(addr, "1.0.2", "GetTask", json!({"id": "x"}), -32001);
}

#[test]
fn parts_of_every_kind_are_kept_as_sent() {
    let tmp = Tmp::new("v1-parts");
    let service = start(config(&tmp));
    let addr = service.addr();
    let parts = json!([
        {"text": "see attached"},
        {"url": "https://example.com/a.pdf", "mediaType": "application/pdf",
         "filename": "a.pdf"},
        {"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "hello.txt"},
        {"data": {"answer": 42, "list": [1.5, true, null]}, "metadata": {"source": "test"}},
    ]);
    let m = json!({"messageId": "k-1", "role": "ROLE_USER", "parts": parts,
                   "metadata": {"trace": "abc"}, "referenceTaskIds": ["t-0"]});
    let task = ok(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": m, "configuration": {"returnImmediately": true}}),
    )["task"]
        .clone();
    let stored = &task["history"][0];
    assert_eq!(stored["parts"], parts);
    assert_eq!(stored["metadata"], json!({"trace": "abc"}));
    assert_eq!(stored["referenceTaskIds"], json!(["t-0"]));
    let v03 = ok(addr, "", "tasks/get", json!({"id": task["id"]}));
    let p = &v03["history"][0]["parts"];
    assert_eq!(p[0], json!({"kind": "text", "text": "see attached"}));
    assert_eq!(
        p[1],
        json!({"kind": "file", "file": {"uri": "https://example.com/a.pdf",
               "mimeType": "application/pdf", "name": "a.pdf"}})
    );
    assert_eq!(p[2]["file"]["bytes"], "aGVsbG8=");
    assert_eq!(p[3]["kind"], "data");
    assert_eq!(p[3]["data"]["answer"], 42);
    let e = err(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": {"messageId": "k-2", "role": "ROLE_USER",
               "parts": [{"raw": "not base64!"}]}}),
        -32602,
    );
    assert_eq!(
        e["data"][1]["fieldViolations"][0]["field"],
        "message.parts[0].raw"
    );
    // Too much text for the scratchpad: refused, nothing stored.
    let big = "x".repeat(70_000);
    let e = call(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("k-3", &big)}),
    );
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert_eq!(reason(&e["error"]), "CONTENT_TOO_LARGE");
    assert_eq!(ok(addr, "1.0", "ListTasks", json!({}))["totalSize"], 1);
}

#[test]
fn stopping_the_service_answers_a_waiting_blocking_send_with_the_current_state() {
    let tmp = Tmp::new("v1-stop");
    let service = start_waiting(&tmp);
    let addr = service.addr();
    let sender = in_background(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("s-1", "wait for me")}),
    );
    let mut store = local_store(&tmp);
    delivered(&mut store, 1);
    // The send is waiting now (its task exists); a graceful stop lets it answer.
    service.stop().unwrap();
    let task = sender.join().unwrap();
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
}
