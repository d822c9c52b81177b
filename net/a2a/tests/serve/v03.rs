//! A2A 0.3 (`message/send`, `tasks/get`, `tasks/cancel`) and the legacy 0.1 `tasks/send`.

use serde_json::{Value, json};

use crate::client::{
    Tmp, config, delivered, err, in_background, local_store, message, message03, ok, start,
    start_waiting,
};

/// Asserts that no state in `value` is a 1.0 name.
fn no_1_0_names(value: &Value) {
    let text = value.to_string();
    assert!(
        !text.contains("TASK_STATE_") && !text.contains("ROLE_"),
        "{text}"
    );
}

#[test]
fn message_send_get_and_cancel_speak_0_3() {
    let tmp = Tmp::new("v03-basic");
    let service = start(config(&tmp));
    let addr = service.addr();
    for version in ["", "0.3", "0.3.0"] {
        let id = format!("m-{version}");
        let task = ok(
            addr,
            version,
            "message/send",
            json!({"message": message03(&id, "hello 0.3"), "configuration": {"blocking": false}}),
        );
        no_1_0_names(&task);
        assert_eq!(task["kind"], "task");
        assert_eq!(task["status"]["state"], "submitted");
        let m = &task["history"][0];
        assert_eq!(m["kind"], "message");
        assert_eq!(m["role"], "user");
        assert_eq!(m["parts"], json!([{"kind": "text", "text": "hello 0.3"}]));
        assert_eq!(m["taskId"], task["id"]);
        let got = ok(addr, version, "tasks/get", json!({"id": task["id"]}));
        assert_eq!(got["kind"], "task");
        assert_eq!(got["id"], task["id"]);
        let short = ok(
            addr,
            version,
            "tasks/get",
            json!({"id": task["id"], "historyLength": 0}),
        );
        assert!(short.get("history").is_none());
        let canceled = ok(addr, version, "tasks/cancel", json!({"id": task["id"]}));
        assert_eq!(canceled["status"]["state"], "canceled");
        let again = err(
            addr,
            version,
            "tasks/cancel",
            json!({"id": task["id"]}),
            -32002,
        );
        assert_eq!(again["data"]["reason"], "TASK_NOT_CANCELABLE");
    }
    let e = err(addr, "", "tasks/get", json!({"id": "nope"}), -32001);
    assert_eq!(e["data"]["reason"], "TASK_NOT_FOUND");
    err(addr, "", "tasks/cancel", json!({"id": "nope"}), -32001);
    for (method, code) in [
        ("tasks/pushNotificationConfig/set", -32003),
        ("tasks/pushNotificationConfig/get", -32003),
        ("tasks/pushNotificationConfig/list", -32003),
        ("tasks/pushNotificationConfig/delete", -32003),
        ("agent/getAuthenticatedExtendedCard", -32007),
    ] {
        err(addr, "", method, json!({"id": "x"}), code);
    }
    let push = json!({"message": message03("p", "x"),
                      "configuration": {"pushNotificationConfig": {"url": "https://e.com/h"}}});
    err(addr, "", "message/send", push, -32003);
    // 0.3 shapes only: a 1.0 message is refused in 0.3.
    let e = err(
        addr,
        "",
        "message/send",
        json!({"message": message("x", "y")}),
        -32602,
    );
    assert_eq!(e["data"]["field"], "message.role");
}

#[test]
fn a_blocking_0_3_send_returns_the_completed_task_with_its_artifacts() {
    let tmp = Tmp::new("v03-block");
    let service = start_waiting(&tmp);
    let addr = service.addr();
    let sender = in_background(
        addr,
        "",
        "message/send",
        json!({"message": message03("b", "count lines")}),
    );
    let mut store = local_store(&tmp);
    let id = delivered(&mut store, 1)[0].task_id.clone().unwrap();
    store.transition_task(&id, "a2a", "working", None).unwrap();
    store.add_artifact(&id, "a2a", "count", "120").unwrap();
    store
        .transition_task(&id, "a2a", "completed", None)
        .unwrap();
    let task = sender.join().unwrap();
    no_1_0_names(&task);
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(
        task["artifacts"][0]["parts"],
        json!([{"kind": "text", "text": "120"}])
    );
    assert_eq!(task["artifacts"][0]["name"], "count");
}

#[test]
fn the_same_message_in_1_0_and_0_3_is_one_task() {
    let tmp = Tmp::new("v03-idem");
    let service = start(config(&tmp));
    let addr = service.addr();
    let v1 = ok(
        addr,
        "1.0",
        "SendMessage",
        json!({"message": message("both", "same words"),
               "configuration": {"returnImmediately": true}}),
    );
    let v03 = ok(
        addr,
        "",
        "message/send",
        json!({"message": message03("both", "same words"), "configuration": {"blocking": false}}),
    );
    assert_eq!(v1["task"]["id"], v03["id"]);
    let e = err(
        addr,
        "",
        "message/send",
        json!({"message": message03("both", "other words")}),
        -32602,
    );
    assert_eq!(e["data"]["reason"], "MESSAGE_ID_REUSED");
}

#[test]
fn legacy_tasks_send_keeps_the_client_task_id_and_answers_in_0_1() {
    let tmp = Tmp::new("v01");
    let service = start(config(&tmp));
    let addr = service.addr();
    let params = |text: &str| {
        json!({"id": "client-task-1", "sessionId": "session-9",
               "message": {"role": "user", "parts": [{"type": "text", "text": text}]}})
    };
    let task = ok(addr, "", "tasks/send", params("legacy hello"));
    assert_eq!(task["id"], "client-task-1");
    assert_eq!(task["sessionId"], "session-9");
    assert_eq!(task["status"]["state"], "submitted");
    assert!(task.get("kind").is_none());
    assert_eq!(
        task["history"][0]["parts"],
        json!([{"type": "text", "text": "legacy hello"}])
    );
    // The same request again is the same task, unchanged; another message continues it.
    let again = ok(addr, "", "tasks/send", params("legacy hello"));
    assert_eq!(again["history"].as_array().unwrap().len(), 1);
    let more = ok(addr, "", "tasks/send", params("and more"));
    assert_eq!(more["history"].as_array().unwrap().len(), 2);
    let got = ok(addr, "", "tasks/get", json!({"id": "client-task-1"}));
    assert_eq!(got["id"], "client-task-1");
    assert_eq!(got["sessionId"], "session-9");
    // The scratchpad task is one task; a rejection reads as failed in 0.1 (which has no
    // rejected), as REJECTED in 1.0.
    let mut store = local_store(&tmp);
    let delivered = store.read_unread("a2a", None).unwrap();
    assert_eq!(delivered.len(), 2);
    let real_id = delivered[0].task_id.clone().unwrap();
    assert_eq!(delivered[1].task_id.as_deref(), Some(real_id.as_str()));
    store
        .transition_task(&real_id, "a2a", "rejected", Some("not mine"))
        .unwrap();
    let failed = ok(addr, "", "tasks/get", json!({"id": "client-task-1"}));
    assert_eq!(failed["status"]["state"], "failed");
    assert_eq!(failed["status"]["message"]["parts"][0]["text"], "not mine");
    let v1 = ok(addr, "1.0", "GetTask", json!({"id": real_id}));
    assert_eq!(v1["status"]["state"], "TASK_STATE_REJECTED");
    err(
        addr,
        "",
        "tasks/cancel",
        json!({"id": "client-task-1"}),
        -32002,
    );
    // A second legacy task can be canceled by its client id.
    let other = ok(
        addr,
        "",
        "tasks/send",
        json!({"id": "client-task-2", "message": {"role": "user",
               "parts": [{"type": "text", "text": "x"}]}}),
    );
    assert_eq!(other["id"], "client-task-2");
    let canceled = ok(addr, "", "tasks/cancel", json!({"id": "client-task-2"}));
    assert_eq!(canceled["status"]["state"], "canceled");
    assert_eq!(canceled["id"], "client-task-2");
    err(addr, "", "tasks/sendSubscribe", json!({}), -32004);
    err(addr, "", "tasks/pushNotification/set", json!({}), -32003);
    err(addr, "1.0", "tasks/send", params("x"), -32009);
    let e = err(
        addr,
        "",
        "tasks/send",
        json!({"message": {"role": "user", "parts": []}}),
        -32602,
    );
    assert_eq!(e["data"]["field"], "id");
}
