//! The scratchpad store against real SQLite files: messages (read-once, privacy, expiry,
//! bounds, concurrent writers, events, team membership).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_intercom_scratchpad::{Config, NewMessage, Store};
use common::{ManualClock, Tmp, ids, msg, open};

#[test]
fn unread_returns_each_visible_message_once_in_order() {
    let tmp = Tmp::new("once");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut store = open(&tmp, &clock, Config::default());
    store.post(&msg("a", "first")).unwrap();
    clock.0.store(2_000, Ordering::SeqCst);
    store
        .post(&NewMessage {
            priority: Some("critical".into()),
            ..msg("a", "urgent")
        })
        .unwrap();
    store
        .post(&NewMessage {
            priority: Some("low".into()),
            ..msg("a", "later")
        })
        .unwrap();
    assert_eq!(
        ids(&store.read_unread("b", None).unwrap()),
        vec!["urgent", "first", "later"]
    );
    assert!(store.read_unread("b", None).unwrap().is_empty());
    // Another agent has its own cursor.
    assert_eq!(store.read_unread("c", None).unwrap().len(), 3);
    // list shows read messages too, paged in the same order.
    let page = store.list("b", None, None, None, 2, None).unwrap();
    assert_eq!(ids(&page.messages), vec!["urgent", "first"]);
    let rest = store
        .list("b", None, None, None, 2, page.next.as_deref())
        .unwrap();
    assert_eq!(ids(&rest.messages), vec!["later"]);
    assert_eq!(rest.next, None);
}

#[test]
fn privacy_team_and_project_are_enforced_by_the_store() {
    let tmp = Tmp::new("privacy");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut store = open(&tmp, &clock, Config::default());
    for (agent, team) in [
        ("s", Some("T1")),
        ("m", Some("T1")),
        ("o", Some("T2")),
        ("r", None),
    ] {
        store.register_agent(agent, Some("/p1"), team).unwrap();
    }
    let at = |privacy: &str, to: Option<&str>, content: &str| NewMessage {
        privacy: Some(privacy.into()),
        to: to.map(str::to_string),
        project_root: Some("/p1".into()),
        ..msg("s", content)
    };
    store.post(&at("private", Some("r"), "for r")).unwrap();
    store.post(&at("team", None, "for T1")).unwrap();
    store.post(&at("public", None, "for all")).unwrap();
    store
        .post(&NewMessage {
            project_root: Some("/p2".into()),
            ..msg("s", "other project")
        })
        .unwrap();
    let seen = |store: &mut Store, agent: &str, root: Option<&str>| {
        let mut v = ids(&store
            .list(agent, root, None, None, 100, None)
            .unwrap()
            .messages);
        v.sort();
        v
    };
    assert_eq!(seen(&mut store, "r", Some("/p1")), vec!["for all", "for r"]);
    assert_eq!(
        seen(&mut store, "m", Some("/p1")),
        vec!["for T1", "for all"]
    );
    assert_eq!(seen(&mut store, "o", Some("/p1")), vec!["for all"]);
    assert_eq!(
        seen(&mut store, "s", Some("/p1")),
        vec!["for T1", "for all", "for r"]
    );
    assert_eq!(seen(&mut store, "o", Some("/p2")), vec!["other project"]);
    assert_eq!(
        seen(&mut store, "o", None),
        vec!["for all", "other project"],
        "no active project: every project, privacy still applies"
    );
}

#[test]
fn expiry_hides_then_purges_and_bad_input_changes_nothing() {
    let tmp = Tmp::new("ttl");
    let clock = Arc::new(ManualClock(AtomicI64::new(0)));
    let mut store = open(
        &tmp,
        &clock,
        Config {
            max_content_bytes: 100,
            ..Config::default()
        },
    );
    let posted = store
        .post(&NewMessage {
            ttl_hours: Some(1),
            ..msg("a", "short")
        })
        .unwrap();
    assert_eq!(posted.expires_at, 3_600_000);
    store
        .post(&NewMessage {
            ttl_hours: Some(2),
            ..msg("a", "longer")
        })
        .unwrap();
    clock.0.store(3_600_000, Ordering::SeqCst);
    assert_eq!(
        ids(&store
            .list("b", None, None, None, 10, None)
            .unwrap()
            .messages),
        vec!["longer"]
    );
    let rows = || {
        let conn = rusqlite::Connection::open(tmp.db()).unwrap();
        conn.query_row("SELECT count(*) FROM messages", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(
        rows(),
        1,
        "the expired row was deleted by the read that observed it"
    );
    let refusals = [
        (
            NewMessage {
                ttl_hours: Some(0),
                ..msg("a", "x")
            },
            "INVALID_TTL",
        ),
        (
            NewMessage {
                ttl_hours: Some(100_000),
                ..msg("a", "x")
            },
            "INVALID_TTL",
        ),
        (
            NewMessage {
                privacy: Some("private".into()),
                ..msg("a", "x")
            },
            "PRIVATE_WITHOUT_RECIPIENT",
        ),
        (
            NewMessage {
                privacy: Some("secret".into()),
                ..msg("a", "x")
            },
            "INVALID_ARGUMENT",
        ),
        (
            NewMessage {
                priority: Some("urgent!".into()),
                ..msg("a", "x")
            },
            "INVALID_ARGUMENT",
        ),
        (msg("a", &"x".repeat(101)), "CONTENT_TOO_LARGE"),
        (
            NewMessage {
                metadata: Some("{not json".into()),
                ..msg("a", "x")
            },
            "INVALID_ARGUMENT",
        ),
        (msg("", "x"), "INVALID_ARGUMENT"),
    ];
    for (bad, code) in refusals {
        assert_eq!(store.post(&bad).unwrap_err().code().as_str(), code);
    }
    assert_eq!(rows(), 1, "refused posts changed nothing");
}

#[test]
fn bounds_evict_lowest_priority_then_oldest_and_say_so() {
    let tmp = Tmp::new("bounds");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let mut store = open(
        &tmp,
        &clock,
        Config {
            per_project_cap: 3,
            per_recipient_cap: 2,
            ..Config::default()
        },
    );
    let mut post = |content: &str, priority: &str, to: Option<&str>| {
        clock.0.fetch_add(1, Ordering::SeqCst);
        store
            .post(&NewMessage {
                priority: Some(priority.into()),
                to: to.map(str::to_string),
                ..msg("a", content)
            })
            .unwrap()
    };
    let high = post("high", "high", None);
    let low_old = post("low-old", "low", None);
    let _low_new = post("low-new", "low", None);
    let p = post("normal", "normal", None);
    assert_eq!(
        p.evicted,
        vec![low_old.id.clone()],
        "lowest priority, then oldest"
    );
    let to1 = post("to-b-1", "critical", Some("b"));
    assert_eq!(to1.evicted.len(), 1);
    post("to-b-2", "critical", Some("b"));
    let to3 = post("to-b-3", "critical", Some("b"));
    // The project bound takes the only message below critical (high); the recipient bound then
    // takes b's oldest.
    assert_eq!(to3.evicted, vec![high.id.clone(), to1.id.clone()]);
}

#[test]
fn concurrent_writers_lose_nothing_and_readers_see_each_message_once() {
    let tmp = Tmp::new("concurrent");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    drop(open(&tmp, &clock, Config::default()));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let path = tmp.db();
            std::thread::spawn(move || {
                let clock = Arc::new(agent_intercom_scratchpad::SystemClock);
                let mut store = Store::open(
                    &path,
                    Config {
                        per_project_cap: 100_000,
                        ..Config::default()
                    },
                    clock,
                )
                .unwrap();
                for i in 0..250 {
                    store
                        .post(&msg(&format!("w{w}"), &format!("{w}-{i}")))
                        .unwrap();
                }
            })
        })
        .collect();
    let reader_path = tmp.db();
    let reader = std::thread::spawn(move || {
        let mut store = Store::open(
            &reader_path,
            Config::default(),
            Arc::new(agent_intercom_scratchpad::SystemClock),
        )
        .unwrap();
        let mut seen = Vec::new();
        for _ in 0..2_000 {
            seen.extend(
                store
                    .read_unread("reader", None)
                    .unwrap()
                    .into_iter()
                    .map(|m| m.content),
            );
            if seen.len() == 1000 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        seen
    });
    for w in writers {
        w.join().unwrap();
    }
    let mut seen = reader.join().unwrap();
    let mut store = open(&tmp, &clock, Config::default());
    // Anything the reader had not caught yet is still unread.
    seen.extend(
        store
            .read_unread("reader", None)
            .unwrap()
            .into_iter()
            .map(|m| m.content),
    );
    let total = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(
        (total, seen.len()),
        (1000, 1000),
        "every message once, none lost"
    );
}

#[test]
fn events_poll_by_cursor_with_filters_and_directed_privacy() {
    use agent_intercom_scratchpad::EventFilter;
    let tmp = Tmp::new("events");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut store = open(&tmp, &clock, Config::default());
    store.post(&msg("a", "public note")).unwrap();
    store
        .post(&NewMessage {
            privacy: Some("private".into()),
            to: Some("b".into()),
            ..msg("a", "for b")
        })
        .unwrap();
    let task = store.create_task("a", Some("b"), "job", None).unwrap();
    store
        .transition_task(&task.id, "b", "working", None)
        .unwrap();
    let all = EventFilter::default();
    let (b_events, cursor) = store.poll_events("b", None, 0, &all, 100).unwrap();
    let kinds: Vec<&str> = b_events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec!["message.posted", "message.posted", "task.created"],
        "b sees the private message and the task addressed to it"
    );
    let (c_events, _) = store.poll_events("c", None, 0, &all, 100).unwrap();
    assert_eq!(
        c_events.len(),
        1,
        "c sees only the public message: directed events are for their targets"
    );
    let (a_events, _) = store.poll_events("a", None, 0, &all, 100).unwrap();
    assert_eq!(
        a_events.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        vec!["message.posted", "task.transition"]
    );
    // The cursor: nothing new after it, then only what follows.
    assert!(
        store
            .poll_events("b", None, cursor, &all, 100)
            .unwrap()
            .0
            .is_empty()
    );
    store.post(&msg("a", "later")).unwrap();
    let (next, _) = store.poll_events("b", None, cursor, &all, 100).unwrap();
    assert_eq!(next.len(), 1);
    // Filters.
    let only_tasks = EventFilter {
        kinds: vec!["task.created".into()],
        ..EventFilter::default()
    };
    assert_eq!(
        store
            .poll_events("b", None, 0, &only_tasks, 100)
            .unwrap()
            .0
            .len(),
        1
    );
    let by_actor = EventFilter {
        actors: vec!["b".into()],
        ..EventFilter::default()
    };
    assert_eq!(
        store
            .poll_events("a", None, 0, &by_actor, 100)
            .unwrap()
            .0
            .len(),
        1
    );
    // An expired message's event is not shown any more.
    clock.0.store(1_000 + 25 * 3_600_000, Ordering::SeqCst);
    assert!(
        store
            .poll_events("c", None, 0, &all, 100)
            .unwrap()
            .0
            .is_empty()
    );
}

#[test]
fn a_team_message_is_for_the_members_the_team_had_when_it_was_posted() {
    use agent_intercom_scratchpad::EventFilter;
    let tmp = Tmp::new("team-join");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut store = open(&tmp, &clock, Config::default());
    let team_post = |content: &str| NewMessage {
        privacy: Some("team".into()),
        project_root: Some("/p".into()),
        ..msg("a", content)
    };
    store.register_agent("a", Some("/p"), Some("red")).unwrap();
    let before = store.post(&team_post("before b joined")).unwrap();
    // b joins red afterwards, without ever having read (no cursor yet).
    store.register_agent("b", Some("/p"), Some("red")).unwrap();
    let listed = |store: &mut Store| {
        ids(&store
            .list("b", Some("/p"), None, None, 100, None)
            .unwrap()
            .messages)
    };
    let events = |store: &mut Store| -> Vec<String> {
        let (events, _) = store
            .poll_events("b", Some("/p"), 0, &EventFilter::default(), 100)
            .unwrap();
        events.into_iter().map(|e| e.ref_id).collect()
    };
    assert_eq!(listed(&mut store), Vec::<String>::new(), "list");
    assert!(!events(&mut store).contains(&before.id), "events");
    let export = store.export("b", Some("/p"), 100, false).unwrap();
    assert!(!export.contains("before b joined"), "export: {export}");
    assert_eq!(
        ids(&store.read_unread("b", Some("/p")).unwrap()),
        Vec::<String>::new(),
        "unread"
    );
    // What the team posts after b joined is for b, on every read path.
    let after = store.post(&team_post("after b joined")).unwrap();
    assert!(events(&mut store).contains(&after.id));
    assert_eq!(listed(&mut store), vec!["after b joined"]);
    assert_eq!(
        ids(&store.read_unread("b", Some("/p")).unwrap()),
        vec!["after b joined"]
    );
    // Registering again with the same team keeps it; leaving and rejoining starts afresh.
    store.register_agent("b", Some("/p"), Some("red")).unwrap();
    assert_eq!(listed(&mut store), vec!["after b joined"]);
    store.register_agent("b", Some("/p"), Some("blue")).unwrap();
    assert_eq!(listed(&mut store), Vec::<String>::new());
    store.register_agent("b", Some("/p"), Some("red")).unwrap();
    assert_eq!(
        listed(&mut store),
        Vec::<String>::new(),
        "rejoined: only what comes next"
    );
    // The sender always sees its own.
    assert_eq!(
        ids(&store
            .list("a", Some("/p"), None, None, 100, None)
            .unwrap()
            .messages),
        vec!["before b joined", "after b joined"]
    );
}
