//! The asks of `serve --broker` (schema step 8), against real SQLite files: a gateway task is
//! stored with its ask in one transaction and without a scratchpad message; it takes no second
//! message; delivery makes it working; a reply completes it with its artifacts in one
//! transaction; an ask that never got through rejects it; a reply to an ended task is not taken.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicI64;

use agent_intercom_core::scratchpad::TaskState;
use agent_intercom_scratchpad::{
    A2aInbound, AskState, Config, GatewayReply, GatewayTarget, Receipt, Store,
};
use common::{ManualClock, Tmp, open};

const GATEWAY: &str = "a2a-gateway";

fn inbound<'a>(message_id: &'a str, task_id: Option<&'a str>) -> A2aInbound<'a> {
    A2aInbound {
        sender: "a2a:anonymous",
        message_id,
        digest: message_id,
        context_id: None,
        task_id,
        legacy_id: None,
        dialect: "1.0",
        message: r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"do it"}]}"#,
        title: "do it",
        text: "do it",
        assignee: GATEWAY,
        project_root: None,
        gateway: Some(GatewayTarget {
            target: "worker",
            content: r#"{"text":"do it"}"#,
        }),
    }
}

#[test]
fn the_one_message_rule_follows_the_task_not_the_mode_of_the_server() {
    let (_tmp, mut s) = setup("gateway-mode");
    // A task made by a server without --broker (no ask) takes a second message from a server
    // with it, as a message to its assignee (not to the gateway, whom new tasks go to now).
    let local = |message_id, task_id| A2aInbound {
        gateway: None,
        assignee: "worker",
        ..inbound(message_id, task_id)
    };
    let id = match s.a2a_receive(&local("l1", None)).unwrap() {
        Receipt::Created(t) => t.task.id,
        other => panic!("expected a new task, got {other:?}"),
    };
    assert!(s.a2a_asks_open().unwrap().is_empty());
    assert!(matches!(
        s.a2a_receive(&inbound("l2", Some(&id))).unwrap(),
        Receipt::Appended(_)
    ));
    let delivered: Vec<String> = s
        .read_unread("worker", None)
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(
        delivered,
        ["do it", "do it"],
        "both messages to the task's assignee"
    );
    assert!(s.read_unread(GATEWAY, None).unwrap().is_empty());
    assert!(
        s.a2a_asks_open().unwrap().is_empty(),
        "no ask for a second message"
    );
    // A task made with --broker (an ask) takes no second message, also from a server without.
    let asked = new_task(&mut s, "g1");
    assert!(matches!(
        s.a2a_receive(&local("g2", Some(&asked))).unwrap(),
        Receipt::OneMessage(_)
    ));
    assert!(matches!(
        s.a2a_receive(&inbound("g3", Some(&asked))).unwrap(),
        Receipt::OneMessage(_)
    ));
}

fn new_task(s: &mut Store, message_id: &str) -> String {
    match s.a2a_receive(&inbound(message_id, None)).unwrap() {
        Receipt::Created(t) => t.task.id,
        other => panic!("expected a new task, got {other:?}"),
    }
}

fn reply<'a>(to: TaskState, artifacts: &'a [(String, String)]) -> GatewayReply<'a> {
    GatewayReply {
        by: GATEWAY,
        to,
        reason: "answered by worker",
        artifacts,
    }
}

fn setup(name: &str) -> (Tmp, Store) {
    let tmp = Tmp::new(name);
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let store = open(&tmp, &clock, Config::default());
    (tmp, store)
}

#[test]
fn a_gateway_task_is_stored_with_its_ask_and_completed_by_the_reply() {
    let (_tmp, mut s) = setup("gateway-reply");
    let id = new_task(&mut s, "m1");
    // No scratchpad message: the ask carries it.
    assert!(s.read_unread(GATEWAY, None).unwrap().is_empty());
    let asks = s.a2a_asks_open().unwrap();
    assert_eq!(asks.len(), 1);
    let ask = &asks[0];
    assert_eq!(ask.ask_id, format!("a2a-task-{id}"));
    assert_eq!(
        (ask.target.as_str(), ask.state),
        ("worker", AskState::Pending)
    );
    assert_eq!(ask.content, r#"{"text":"do it"}"#);
    // One message per task; a repeat of the first is still a repeat.
    assert!(matches!(
        s.a2a_receive(&inbound("m2", Some(&id))).unwrap(),
        Receipt::OneMessage(_)
    ));
    assert!(matches!(
        s.a2a_receive(&inbound("m1", None)).unwrap(),
        Receipt::Repeated(_)
    ));

    assert!(s.a2a_ask_queued(&ask.ask_id).unwrap());
    assert!(
        s.a2a_ask_delivered(&ask.ask_id, GATEWAY, "delivered")
            .unwrap()
    );
    assert!(
        !s.a2a_ask_delivered(&ask.ask_id, GATEWAY, "delivered")
            .unwrap()
    );
    assert_eq!(s.task(&id, GATEWAY).unwrap().state, "working");

    let artifacts = [
        ("reply".to_string(), "done".to_string()),
        ("out.txt".to_string(), "hello".to_string()),
    ];
    assert!(
        s.a2a_ask_finish(&ask.ask_id, &reply(TaskState::Completed, &artifacts))
            .unwrap()
    );
    assert_eq!(s.task(&id, GATEWAY).unwrap().state, "completed");
    let names: Vec<String> = s
        .artifacts(&id, GATEWAY)
        .unwrap()
        .into_iter()
        .map(|a| a.name)
        .collect();
    assert_eq!(names, ["reply", "out.txt"]);
    // Taken once: a second reply changes nothing.
    assert!(
        !s.a2a_ask_finish(&ask.ask_id, &reply(TaskState::Completed, &artifacts))
            .unwrap()
    );
    assert_eq!(s.artifacts(&id, GATEWAY).unwrap().len(), 2);
    assert!(s.a2a_asks_open().unwrap().is_empty());
    assert!(s.a2a_ask("a2a-task-nope").unwrap().is_none());
}

#[test]
fn an_ask_that_never_got_through_rejects_its_task_and_one_given_up_later_fails_it() {
    let (_tmp, mut s) = setup("gateway-give-up");
    let never = new_task(&mut s, "m1");
    let later = new_task(&mut s, "m2");
    let ask = |id: &str| format!("a2a-task-{id}");
    assert!(
        s.a2a_ask_finish(&ask(&never), &reply(TaskState::Rejected, &[]))
            .unwrap()
    );
    assert_eq!(s.task(&never, GATEWAY).unwrap().state, "rejected");
    assert!(
        s.a2a_ask_delivered(&ask(&later), GATEWAY, "delivered")
            .unwrap()
    );
    assert!(
        s.a2a_ask_finish(&ask(&later), &reply(TaskState::Rejected, &[]))
            .unwrap()
    );
    assert_eq!(s.task(&later, GATEWAY).unwrap().state, "failed");
    // A reply to a task still submitted (its delivery was never heard of) goes through working.
    let quick = new_task(&mut s, "m3");
    let text = [("reply".to_string(), "x".to_string())];
    assert!(
        s.a2a_ask_finish(&ask(&quick), &reply(TaskState::Completed, &text))
            .unwrap()
    );
    let history = s.task_history(&quick, GATEWAY).unwrap();
    let states: Vec<&str> = history.iter().map(|t| t.to.as_str()).collect();
    assert_eq!(states, ["submitted", "working", "completed"]);
}

#[test]
fn a_reply_to_a_cancelled_task_is_not_taken_and_a_too_large_one_changes_nothing() {
    let (_tmp, mut s) = setup("gateway-cancelled");
    let id = new_task(&mut s, "m1");
    let ask_id = format!("a2a-task-{id}");
    let huge = [(
        "reply".to_string(),
        "x".repeat(Config::default().max_content_bytes + 1),
    )];
    let e = s
        .a2a_ask_finish(&ask_id, &reply(TaskState::Completed, &huge))
        .unwrap_err();
    assert_eq!(e.code().as_str(), "CONTENT_TOO_LARGE");
    assert_eq!(s.a2a_asks_open().unwrap()[0].state, AskState::Pending);
    s.a2a_cancel(&id, "a2a:anonymous", "canceled by the A2A client")
        .unwrap();
    let open = s.a2a_asks_open().unwrap();
    assert!(
        open[0].task_done(),
        "the bridge sees it and cancels the ask"
    );
    let text = [("reply".to_string(), "late".to_string())];
    assert!(
        !s.a2a_ask_finish(&ask_id, &reply(TaskState::Completed, &text))
            .unwrap()
    );
    assert_eq!(s.task(&id, GATEWAY).unwrap().state, "canceled");
    assert!(s.artifacts(&id, GATEWAY).unwrap().is_empty());
    assert!(s.a2a_asks_open().unwrap().is_empty());
}
