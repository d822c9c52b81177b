//! What A2A adds to scratchpad tasks (schema step 7), against real SQLite files: idempotent
//! receipt per sender and messageId, follow-ups, honest cancel, listing, migration from v6.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_intercom_core::scratchpad::TaskState;
use agent_intercom_scratchpad::{
    A2aInbound, A2aQuery, Canceled, Config, MAX_A2A_ID_BYTES, Receipt, SCHEMA_VERSION, Store,
};
use common::{ManualClock, Tmp, open};

fn inbound<'a>(sender: &'a str, message_id: &'a str, digest: &'a str) -> A2aInbound<'a> {
    A2aInbound {
        sender,
        message_id,
        digest,
        context_id: None,
        task_id: None,
        legacy_id: None,
        dialect: "1.0",
        message: r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"do it"}]}"#,
        title: "do it",
        text: "do it",
        assignee: "worker",
        project_root: None,
        gateway: None,
    }
}

fn created(receipt: Receipt) -> agent_intercom_scratchpad::A2aTask {
    match receipt {
        Receipt::Created(task) => task,
        other => panic!("expected a new task, got {other:?}"),
    }
}

#[test]
fn a_message_becomes_a_task_delivered_to_the_assignee_and_a_repeat_returns_it() {
    let tmp = Tmp::new("a2a-receive");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut s = open(&tmp, &clock, Config::default());
    let task = created(s.a2a_receive(&inbound("a2a:anon", "m1", "d1")).unwrap());
    assert_eq!(task.task.state, "submitted");
    assert_eq!(task.task.creator, "a2a:anon");
    assert_eq!(task.task.assignee.as_deref(), Some("worker"));
    assert_eq!(task.task.title, "do it");
    assert_eq!(task.transitions, 1);
    assert!(!task.context_id.is_empty());
    // The assignee reads the request once, with the task id; the task is readable by it.
    let unread = s.read_unread("worker", None).unwrap();
    assert_eq!(unread.len(), 1);
    assert_eq!(unread[0].task_id.as_deref(), Some(task.task.id.as_str()));
    assert_eq!(unread[0].category, "a2a");
    assert_eq!(unread[0].privacy, "private");
    assert_eq!(unread[0].content, "do it");
    assert!(s.read_unread("someone-else", None).unwrap().is_empty());
    s.task(&task.task.id, "worker").unwrap();
    // Same sender, same messageId, same digest: the same task, nothing stored again.
    clock.0.fetch_add(5, Ordering::SeqCst);
    match s.a2a_receive(&inbound("a2a:anon", "m1", "d1")).unwrap() {
        Receipt::Repeated(again) => assert_eq!(again, task),
        other => panic!("{other:?}"),
    }
    assert!(s.read_unread("worker", None).unwrap().is_empty());
    // Another digest under the same messageId is refused and names the first task.
    match s.a2a_receive(&inbound("a2a:anon", "m1", "d2")).unwrap() {
        Receipt::Reused { task_id } => assert_eq!(task_id, task.task.id),
        other => panic!("{other:?}"),
    }
    // Another sender may use the same messageId: a task of its own.
    let other = created(s.a2a_receive(&inbound("a2a:other", "m1", "d2")).unwrap());
    assert_ne!(other.task.id, task.task.id);
    // Senders see only their own tasks.
    assert!(s.a2a_task(&task.task.id, "a2a:other").unwrap().is_none());
    assert!(s.a2a_task("no-such-task", "a2a:anon").unwrap().is_none());
    let view = s
        .a2a_view(&task.task.id, "a2a:anon", None, true)
        .unwrap()
        .unwrap();
    assert_eq!(view.history.len(), 1);
    assert!(view.artifacts.is_empty());
}

#[test]
fn follow_ups_continue_a_task_until_it_is_terminal_and_cancel_is_honest() {
    let tmp = Tmp::new("a2a-follow");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut s = open(&tmp, &clock, Config::default());
    let mut first = inbound("a2a:anon", "m1", "d1");
    first.context_id = Some("ctx-1");
    let task = created(s.a2a_receive(&first).unwrap());
    assert_eq!(task.context_id, "ctx-1");
    let id = task.task.id.clone();
    let mut next = inbound("a2a:anon", "m2", "d2");
    next.task_id = Some(&id);
    match s.a2a_receive(&next).unwrap() {
        Receipt::Appended(t) => assert_eq!(t.task.id, id),
        other => panic!("{other:?}"),
    }
    let mut wrong_context = inbound("a2a:anon", "m3", "d3");
    wrong_context.task_id = Some(&id);
    wrong_context.context_id = Some("ctx-2");
    assert!(matches!(
        s.a2a_receive(&wrong_context).unwrap(),
        Receipt::ContextMismatch(_)
    ));
    let mut unknown = inbound("a2a:anon", "m4", "d4");
    unknown.task_id = Some("nope");
    assert_eq!(s.a2a_receive(&unknown).unwrap(), Receipt::NoTask);
    let mut foreign = inbound("a2a:other", "m5", "d5");
    foreign.task_id = Some(&id);
    assert_eq!(s.a2a_receive(&foreign).unwrap(), Receipt::NoTask);
    // History keeps both messages, the most recent ones when limited.
    let view = s
        .a2a_view(&id, "a2a:anon", Some(1), false)
        .unwrap()
        .unwrap();
    assert_eq!(view.history.len(), 1);
    assert_eq!(
        s.a2a_view(&id, "a2a:anon", Some(0), false)
            .unwrap()
            .unwrap()
            .history
            .len(),
        0
    );
    // The local agent works and completes; then the task takes no message and no cancel.
    s.transition_task(&id, "worker", "working", None).unwrap();
    s.add_artifact(&id, "worker", "result", "42").unwrap();
    s.transition_task(&id, "worker", "completed", Some("done"))
        .unwrap();
    let mut late = inbound("a2a:anon", "m6", "d6");
    late.task_id = Some(&id);
    assert!(matches!(
        s.a2a_receive(&late).unwrap(),
        Receipt::Terminal(_)
    ));
    match s.a2a_cancel(&id, "a2a:anon", "client asked").unwrap() {
        Canceled::NotCancelable(t) => assert_eq!(t.task.state, "completed"),
        other => panic!("{other:?}"),
    }
    let view = s.a2a_view(&id, "a2a:anon", None, true).unwrap().unwrap();
    assert_eq!(view.artifacts.len(), 1);
    assert_eq!(view.task.last.reason.as_deref(), Some("done"));
    assert_eq!(view.task.transitions, 3);
    // A live task is canceled in the store before the answer says so.
    let live = created(s.a2a_receive(&inbound("a2a:anon", "m7", "d7")).unwrap());
    match s
        .a2a_cancel(&live.task.id, "a2a:anon", "client asked")
        .unwrap()
    {
        Canceled::Canceled(t) => assert_eq!(t.task.state, "canceled"),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.task(&live.task.id, "worker").unwrap().state, "canceled");
    assert_eq!(
        s.a2a_cancel(&live.task.id, "a2a:other", "x").unwrap(),
        Canceled::NoTask
    );
}

#[test]
fn changes_after_a_point_are_the_later_transitions_and_artifacts_in_order() {
    let tmp = Tmp::new("a2a-changes");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut s = open(&tmp, &clock, Config::default());
    let task = created(s.a2a_receive(&inbound("a2a:anon", "m1", "d1")).unwrap());
    let id = task.task.id.as_str();
    let view = s.a2a_view(id, "a2a:anon", None, true).unwrap().unwrap();
    let (seen, seen_artifacts) = (view.task.transitions, view.artifacts.len());
    let none = s
        .a2a_changes(id, "a2a:anon", seen, seen_artifacts)
        .unwrap()
        .unwrap();
    assert!(none.transitions.is_empty() && none.artifacts.is_empty());
    assert_eq!(none.task, task);
    clock.0.fetch_add(5, Ordering::SeqCst);
    s.transition_task(id, "worker", "working", None).unwrap();
    s.add_artifact(id, "worker", "a", "first").unwrap();
    s.add_artifact(id, "worker", "b", "second").unwrap();
    clock.0.fetch_add(5, Ordering::SeqCst);
    s.transition_task(id, "worker", "completed", Some("done"))
        .unwrap();
    let all = s
        .a2a_changes(id, "a2a:anon", seen, seen_artifacts)
        .unwrap()
        .unwrap();
    let states: Vec<&str> = all.transitions.iter().map(|t| t.to.as_str()).collect();
    assert_eq!(states, ["working", "completed"]);
    assert_eq!(all.transitions[1].reason.as_deref(), Some("done"));
    assert_eq!(all.transitions[1].at, 1_010);
    let names: Vec<&str> = all.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(all.task.transitions, 3);
    assert_eq!(all.task.task.state, "completed");
    // From a later point only what came after it.
    let later = s.a2a_changes(id, "a2a:anon", 2, 1).unwrap().unwrap();
    assert_eq!(later.transitions.len(), 1);
    assert_eq!(later.artifacts[0].content, "second");
    // Another sender's task, or none, is not told apart.
    assert!(s.a2a_changes(id, "a2a:other", 0, 0).unwrap().is_none());
    assert!(
        s.a2a_changes("no-such-task", "a2a:anon", 0, 0)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_client_chosen_id_of_the_0_1_dialect_names_one_task_per_sender() {
    let tmp = Tmp::new("a2a-legacy");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut s = open(&tmp, &clock, Config::default());
    let mut first = inbound("a2a:anon", "m1", "d1");
    first.legacy_id = Some("client-task");
    first.dialect = "0.1";
    let task = created(s.a2a_receive(&first).unwrap());
    assert_eq!(task.legacy_id.as_deref(), Some("client-task"));
    let mut again = inbound("a2a:anon", "m2", "d2");
    again.legacy_id = Some("client-task");
    match s.a2a_receive(&again).unwrap() {
        Receipt::Appended(t) => assert_eq!(t.task.id, task.task.id),
        other => panic!("{other:?}"),
    }
    let found = s
        .a2a_task_by_legacy_id("client-task", "a2a:anon")
        .unwrap()
        .unwrap();
    assert_eq!(found.task.id, task.task.id);
    assert!(
        s.a2a_task_by_legacy_id("client-task", "a2a:other")
            .unwrap()
            .is_none()
    );
}

#[test]
fn listing_pages_by_status_time_with_filters_and_bad_input_is_refused() {
    let tmp = Tmp::new("a2a-list");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut s = open(&tmp, &clock, Config::default());
    let mut ids = Vec::new();
    for i in 0..5 {
        clock.0.fetch_add(10, Ordering::SeqCst);
        let message_id = format!("m{i}");
        let mut m = inbound("a2a:anon", &message_id, "d");
        m.context_id = Some(if i % 2 == 0 { "even" } else { "odd" });
        ids.push(created(s.a2a_receive(&m).unwrap()).task.id);
    }
    created(s.a2a_receive(&inbound("a2a:other", "x", "d")).unwrap());
    clock.0.fetch_add(10, Ordering::SeqCst);
    s.transition_task(&ids[0], "worker", "working", None)
        .unwrap();
    let query = |after, limit| A2aQuery {
        sender: "a2a:anon",
        context_id: None,
        state: None,
        updated_after: None,
        limit,
        after,
        history: Some(0),
        artifacts: false,
    };
    let first = s.a2a_list(&query(None, 2)).unwrap();
    assert_eq!(first.total, 5);
    let order: Vec<&str> = first
        .tasks
        .iter()
        .map(|v| v.task.task.id.as_str())
        .collect();
    // Newest status first: the task that just moved, then the newest created.
    assert_eq!(order, [ids[0].as_str(), ids[4].as_str()]);
    let second = s.a2a_list(&query(first.next.clone(), 2)).unwrap();
    let third = s.a2a_list(&query(second.next.clone(), 2)).unwrap();
    assert_eq!(third.tasks.len(), 1);
    assert!(third.next.is_none());
    let mut filtered = query(None, 100);
    filtered.context_id = Some("even");
    filtered.state = Some(TaskState::Submitted);
    let even = s.a2a_list(&filtered).unwrap();
    assert_eq!(even.total, 2);
    filtered.updated_after = Some(1_060);
    filtered.state = None;
    assert_eq!(s.a2a_list(&filtered).unwrap().total, 1);
    for limit in [0, 101] {
        assert_eq!(
            s.a2a_list(&query(None, limit)).unwrap_err().code().as_str(),
            "INVALID_ARGUMENT"
        );
    }
    let long = "x".repeat(MAX_A2A_ID_BYTES + 1);
    let err = s.a2a_receive(&inbound("a2a:anon", &long, "d")).unwrap_err();
    assert_eq!(err.code().as_str(), "INVALID_ARGUMENT");
}

#[test]
fn a_schema_v6_store_migrates_and_keeps_its_tasks() {
    let tmp = Tmp::new("a2a-migrate");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let old_task = {
        let mut s = open(&tmp, &clock, Config::default());
        s.create_task("a", Some("b"), "older", None).unwrap().id
    };
    {
        let conn = rusqlite::Connection::open(tmp.db()).unwrap();
        conn.execute_batch(
            "DROP TABLE a2a_asks; DROP TABLE a2a_messages; DROP TABLE a2a_tasks;
             DROP INDEX tasks_updated;
             PRAGMA user_version = 6;",
        )
        .unwrap();
    }
    let mut s = Store::open(&tmp.db(), Config::default(), clock.clone()).unwrap();
    let version: i64 = rusqlite::Connection::open(tmp.db())
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(s.task(&old_task, "b").unwrap().title, "older");
    // Not an A2A task: no A2A client sees it.
    assert!(s.a2a_task(&old_task, "a").unwrap().is_none());
    created(s.a2a_receive(&inbound("a2a:anon", "m", "d")).unwrap());
    // The change marker moves with writes from this connection and from others.
    let before = s.change_marker().unwrap();
    assert_eq!(s.change_marker().unwrap(), before);
    let mut other = Store::open(&tmp.db(), Config::default(), clock.clone()).unwrap();
    other.create_task("c", None, "elsewhere", None).unwrap();
    assert_ne!(s.change_marker().unwrap(), before);
}
