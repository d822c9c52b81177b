//! The scratchpad store against real SQLite files.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_intercom_scratchpad::{Clock, Config, NewMessage, Store};

struct ManualClock(AtomicI64);

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        static N: AtomicI64 = AtomicI64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "aic-pad-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }
    fn db(&self) -> PathBuf {
        self.0.join("pad.sqlite")
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(tmp: &Tmp, clock: &Arc<ManualClock>, config: Config) -> Store {
    Store::open(&tmp.db(), config, clock.clone()).unwrap()
}

fn msg(from: &str, content: &str) -> NewMessage {
    NewMessage {
        from: from.into(),
        category: "note".into(),
        content: content.into(),
        ..NewMessage::default()
    }
}

fn ids(messages: &[agent_intercom_scratchpad::Message]) -> Vec<String> {
    messages.iter().map(|m| m.content.clone()).collect()
}

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
fn newer_or_corrupt_stores_are_refused_and_left_untouched() {
    let tmp = Tmp::new("refuse");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    drop(open(&tmp, &clock, Config::default()));
    rusqlite::Connection::open(tmp.db())
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = Store::open(&tmp.db(), Config::default(), clock.clone())
        .err()
        .unwrap();
    assert_eq!(err.code().as_str(), "STORE_NEWER_SCHEMA");
    let corrupt = tmp.0.join("corrupt.sqlite");
    let garbage =
        b"this is not an SQLite database, just some bytes that are long enough to be a header...."
            .repeat(8);
    std::fs::write(&corrupt, &garbage).unwrap();
    let err = Store::open(&corrupt, Config::default(), clock)
        .err()
        .unwrap();
    assert_eq!(err.code().as_str(), "STORE_CORRUPT", "{err}");
    assert_eq!(std::fs::read(&corrupt).unwrap(), garbage, "never replaced");
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
fn tasks_follow_the_table_with_participants_and_history() {
    let tmp = Tmp::new("tasks");
    let clock = Arc::new(ManualClock(AtomicI64::new(10)));
    let mut store = open(&tmp, &clock, Config::default());
    let task = store
        .create_task("creator", Some("worker"), "write the report", Some("/p"))
        .unwrap();
    assert_eq!(task.state, "submitted");
    let code = |r: Result<agent_intercom_scratchpad::Task, agent_intercom_core::Error>| {
        r.unwrap_err().code().as_str()
    };
    assert_eq!(
        code(store.transition_task(&task.id, "stranger", "working", None)),
        "FORBIDDEN"
    );
    assert_eq!(
        code(store.transition_task(&task.id, "worker", "completed", None)),
        "INVALID_TRANSITION"
    );
    assert_eq!(
        code(store.transition_task(&task.id, "worker", "sleeping", None)),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        code(store.transition_task("no-such-task", "worker", "working", None)),
        "NOT_FOUND"
    );
    store
        .transition_task(&task.id, "worker", "working", Some("on it"))
        .unwrap();
    assert_eq!(
        code(store.transition_task(&task.id, "worker", "canceled", None)),
        "FORBIDDEN"
    );
    store
        .add_artifact(&task.id, "worker", "draft.md", "# Draft")
        .unwrap();
    assert_eq!(
        store
            .add_artifact(&task.id, "stranger", "x", "y")
            .unwrap_err()
            .code()
            .as_str(),
        "FORBIDDEN"
    );
    store
        .transition_task(&task.id, "worker", "completed", Some("done"))
        .unwrap();
    let err = store
        .transition_task(&task.id, "creator", "working", None)
        .unwrap_err();
    assert!(
        err.message().contains("completed") && err.message().contains("working"),
        "{err}"
    );
    let history: Vec<(Option<String>, String, String)> = store
        .task_history(&task.id, "creator")
        .unwrap()
        .into_iter()
        .map(|t| (t.from, t.to, t.by))
        .collect();
    assert_eq!(
        history,
        vec![
            (None, "submitted".into(), "creator".into()),
            (Some("submitted".into()), "working".into(), "worker".into()),
            (Some("working".into()), "completed".into(), "worker".into()),
        ]
    );
    assert_eq!(
        store.artifacts(&task.id, "creator").unwrap()[0].name,
        "draft.md"
    );
    // Reads are for participants only, on every read path.
    assert_eq!(store.task(&task.id, "worker").unwrap().state, "completed");
    assert_eq!(code(store.task(&task.id, "stranger")), "FORBIDDEN");
    assert_eq!(code(store.task("no-such-task", "creator")), "NOT_FOUND");
    let forbidden = |e: agent_intercom_core::Error| e.code().as_str();
    assert_eq!(
        forbidden(store.task_history(&task.id, "stranger").unwrap_err()),
        "FORBIDDEN"
    );
    assert_eq!(
        forbidden(store.artifacts(&task.id, "stranger").unwrap_err()),
        "FORBIDDEN"
    );
    assert_eq!(
        forbidden(store.artifacts(&task.id, "").unwrap_err()),
        "FORBIDDEN"
    );
    let other = store.create_task("creator", None, "maybe", None).unwrap();
    assert_eq!(
        store
            .transition_task(&other.id, "creator", "canceled", Some("not needed"))
            .unwrap()
            .state,
        "canceled"
    );
}

#[test]
fn rate_limits_refuse_without_consuming_and_say_when() {
    use agent_intercom_scratchpad::{RateDecision, RateLimits};
    let tmp = Tmp::new("rate");
    let clock = Arc::new(ManualClock(AtomicI64::new(0)));
    let mut store = open(&tmp, &clock, Config::default());
    let limits = RateLimits {
        global_per_min: Some(100),
        agent_per_min: Some(2),
        tool_per_min: Some(60),
    };
    assert_eq!(
        store.take_rate("a", "read", &limits).unwrap(),
        RateDecision::Allowed
    );
    assert_eq!(
        store.take_rate("a", "read", &limits).unwrap(),
        RateDecision::Allowed
    );
    match store.take_rate("a", "read", &limits).unwrap() {
        RateDecision::Refused {
            retry_after_ms,
            levels,
        } => {
            assert_eq!(levels, vec!["agent"]);
            assert_eq!(retry_after_ms, 30_000, "2 per minute: one token every 30 s");
        }
        other => panic!("{other:?}"),
    }
    // The refusal consumed nothing: another agent still gets the tool's 58 remaining tokens.
    for _ in 0..58 {
        assert_eq!(
            store
                .take_rate(
                    "b",
                    "read",
                    &RateLimits {
                        agent_per_min: None,
                        ..limits
                    }
                )
                .unwrap(),
            RateDecision::Allowed
        );
    }
    match store
        .take_rate(
            "b",
            "read",
            &RateLimits {
                agent_per_min: None,
                ..limits
            },
        )
        .unwrap()
    {
        RateDecision::Refused {
            retry_after_ms,
            levels,
        } => assert_eq!((retry_after_ms, levels), (1000, vec!["tool"])),
        other => panic!("{other:?}"),
    }
    clock.0.store(1, Ordering::SeqCst);
    match store
        .take_rate(
            "b",
            "read",
            &RateLimits {
                agent_per_min: None,
                ..limits
            },
        )
        .unwrap()
    {
        RateDecision::Refused { retry_after_ms, .. } => {
            assert_eq!(retry_after_ms, 999, "rounded up, never 0")
        }
        other => panic!("{other:?}"),
    }
    clock.0.store(30_000, Ordering::SeqCst);
    assert_eq!(
        store.take_rate("a", "write", &limits).unwrap(),
        RateDecision::Allowed
    );
    // Limits from the environment, with the LCTX_ aliases.
    let env = |name: &str| match name {
        "LCTX_RATE_LIMIT_GLOBAL_PER_MIN" => Some("500".to_string()),
        "LEAN_CTX_RATE_LIMIT_AGENT_PER_MIN" => Some("7".to_string()),
        "LCTX_RATE_LIMIT_AGENT_PER_MIN" => Some("999".to_string()),
        _ => None,
    };
    assert_eq!(
        RateLimits::from_env(env).unwrap(),
        RateLimits {
            global_per_min: Some(500),
            agent_per_min: Some(7),
            tool_per_min: None
        }
    );
    let bad = RateLimits::from_env(|n| {
        (n == "LEAN_CTX_RATE_LIMIT_TOOL_PER_MIN").then(|| "lots".to_string())
    })
    .unwrap_err();
    assert!(bad.message().contains("LEAN_CTX_RATE_LIMIT_TOOL_PER_MIN"));
}

#[test]
fn concurrent_cost_recorders_lose_no_update() {
    use agent_intercom_scratchpad::{Pricing, Usage};
    let tmp = Tmp::new("costs");
    let clock = Arc::new(ManualClock(AtomicI64::new(0)));
    drop(open(&tmp, &clock, Config::default()));
    let pricing = Pricing {
        input_per_million_micros: 3_000_000,
        output_per_million_micros: 15_000_000,
        cached_per_million_micros: 300_000,
    };
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = tmp.db();
            std::thread::spawn(move || {
                let mut store = Store::open(
                    &path,
                    Config::default(),
                    Arc::new(agent_intercom_scratchpad::SystemClock),
                )
                .unwrap();
                for _ in 0..200 {
                    let usage = Usage {
                        input_tokens: 1000,
                        output_tokens: 100,
                        cached_tokens: 10,
                    };
                    store
                        .record_cost(&format!("agent{}", t % 2), "search", &usage, &pricing)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut store = open(&tmp, &clock, Config::default());
    let rows = store.costs().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row.calls, 400);
        assert_eq!(row.usage.input_tokens, 400_000);
        // 1000*3 + 100*15 + 10*0.3 = 4503 micro-dollars per call.
        assert_eq!(row.cost_micros, 400 * 4503);
    }
}

#[test]
fn export_is_bounded_ordered_redacted_and_written_atomically() {
    let tmp = Tmp::new("export");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    let mut store = open(&tmp, &clock, Config::default());
    store
        .register_agent("me", Some("/work/proj"), Some("T"))
        .unwrap();
    for i in 0..5 {
        clock.0.fetch_add(10, Ordering::SeqCst);
        let content = format!("note {i}: password=hunter{i} in /work/proj/src/lib.rs");
        store
            .post(&NewMessage {
                project_root: Some("/work/proj".into()),
                ..msg("me", &content)
            })
            .unwrap();
    }
    store
        .post(&NewMessage {
            privacy: Some("private".into()),
            to: Some("someone".into()),
            project_root: Some("/work/proj".into()),
            ..msg("other", "not for me")
        })
        .unwrap();
    let task = store
        .create_task("me", None, "token=abcd", Some("/work/proj"))
        .unwrap();
    let json = store.export("me", Some("/work/proj"), 3, false).unwrap();
    let doc: agent_intercom_core::canonical::Value =
        agent_intercom_core::canonical::parse(&json).unwrap();
    use agent_intercom_core::canonical::Value;
    assert_eq!(
        doc.get("schema").and_then(Value::as_str),
        Some("a2a-snapshot-v1")
    );
    assert_eq!(doc.get("schema_version").and_then(Value::as_i64), Some(1));
    let messages = doc.get("messages").and_then(Value::as_array).unwrap();
    assert_eq!(messages.len(), 3, "bounded");
    let contents: Vec<&str> = messages
        .iter()
        .map(|m| m.get("content").and_then(Value::as_str).unwrap())
        .collect();
    assert_eq!(
        contents,
        vec![
            "note 4: password=[REDACTED] in ./src/lib.rs",
            "note 3: password=[REDACTED] in ./src/lib.rs",
            "note 2: password=[REDACTED] in ./src/lib.rs"
        ]
    );
    assert!(
        !json.contains("hunter")
            && !json.contains("/work/proj")
            && !json.contains("not for me")
            && !json.contains("abcd"),
        "{json}"
    );
    let tasks = doc.get("tasks").and_then(Value::as_array).unwrap();
    assert_eq!(
        tasks[0].get("id").and_then(Value::as_str),
        Some(task.id.as_str())
    );
    assert!(
        store
            .export("me", None, 3, false)
            .unwrap()
            .contains("\"agents\"")
    );
    assert_eq!(
        store
            .export("me", None, 3, true)
            .unwrap_err()
            .code()
            .as_str(),
        "FORBIDDEN"
    );
    assert_eq!(
        store
            .export("me", None, 0, false)
            .unwrap_err()
            .code()
            .as_str(),
        "INVALID_ARGUMENT"
    );
    // Same state, same bytes (deterministic).
    assert_eq!(
        store.export("me", Some("/work/proj"), 3, false).unwrap(),
        json
    );
    let out = tmp.0.join("snapshot.json");
    store
        .export_to_file(&out, "me", Some("/work/proj"), 3, false)
        .unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("{json}\n"));
    let leftovers: Vec<_> = std::fs::read_dir(&tmp.0)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
    let mut full = Store::open(
        &tmp.db(),
        Config {
            allow_full_export: true,
            ..Config::default()
        },
        clock.clone(),
    )
    .unwrap();
    assert!(
        full.export("me", Some("/work/proj"), 3, true)
            .unwrap()
            .contains("hunter4")
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
fn a_schema_v3_store_migrates_keeping_messages_and_read_marks() {
    let tmp = Tmp::new("migrate");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000_000)));
    {
        let mut s = open(&tmp, &clock, Config::default());
        for i in 0..5 {
            clock.0.fetch_add(1, Ordering::SeqCst);
            let mut m = msg("a", &format!("m{i}"));
            m.to = (i == 4).then(|| "b".to_string());
            s.post(&m).unwrap();
        }
        assert_eq!(ids(&s.read_unread("b", None).unwrap()).len(), 5);
        clock.0.fetch_add(1, Ordering::SeqCst);
        s.post(&msg("a", "m5")).unwrap();
    }
    // Turn the file back into what schema v3 looked like (no sequence, cursors or counts).
    {
        let conn = rusqlite::Connection::open(tmp.db()).unwrap();
        conn.execute_batch(
            "DROP TRIGGER messages_counted; DROP TRIGGER messages_uncounted;
             DROP TABLE message_counts; DROP TABLE read_cursors; DROP TABLE counters;
             DROP INDEX messages_seq; DROP INDEX messages_project_seq;
             ALTER TABLE messages DROP COLUMN seq; ALTER TABLE agents DROP COLUMN team_seq;
             PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let mut s = Store::open(
        &tmp.db(),
        Config {
            per_recipient_cap: 1,
            ..Config::default()
        },
        clock.clone(),
    )
    .unwrap();
    // What b read before stays read; what it had not read is delivered once.
    assert_eq!(ids(&s.read_unread("b", None).unwrap()), ["m5"]);
    assert!(s.read_unread("b", None).unwrap().is_empty());
    assert_eq!(ids(&s.read_unread("c", None).unwrap()).len(), 6);
    // New posts continue the sequence and the backfilled counts still bound the recipient.
    clock.0.fetch_add(1, Ordering::SeqCst);
    let mut m = msg("a", "m6");
    m.to = Some("b".into());
    let posted = s.post(&m).unwrap();
    assert_eq!(
        posted.evicted.len(),
        1,
        "the one message already addressed to b was counted"
    );
    assert_eq!(ids(&s.read_unread("b", None).unwrap()), ["m6"]);
    assert_eq!(ids(&s.read_unread("c", None).unwrap()), ["m6"]);
}

#[cfg(unix)]
#[test]
fn planted_symlinks_at_the_store_or_its_side_files_are_refused_and_nothing_is_written_outside() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    // A new store is created 0600 (its -wal and -shm take the same mode).
    let tmp = Tmp::new("mode");
    drop(open(&tmp, &clock, Config::default()));
    let mode = std::fs::metadata(tmp.db()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    for side in ["", "-wal", "-shm", "-journal"] {
        for dangling in [true, false] {
            let tmp = Tmp::new("symlink");
            let outside = tmp.0.join("outside");
            if !dangling {
                std::fs::write(&outside, b"keep me").unwrap();
            }
            if !side.is_empty() {
                // An existing store, with a side file planted next to it.
                drop(open(&tmp, &clock, Config::default()));
                for s in ["-wal", "-shm", "-journal"] {
                    let _ = std::fs::remove_file(format!("{}{s}", tmp.db().display()));
                }
            }
            let link = PathBuf::from(format!("{}{side}", tmp.db().display()));
            symlink(&outside, &link).unwrap();
            let err = Store::open(&tmp.db(), Config::default(), clock.clone())
                .err()
                .unwrap_or_else(|| panic!("{side} (dangling: {dangling}) was followed"));
            assert_eq!(err.code().as_str(), "STORE_IO", "{side}: {err}");
            assert!(err.message().contains("symbolic link"), "{side}: {err}");
            if dangling {
                assert!(!outside.exists(), "{side}: created a file through the link");
            } else {
                assert_eq!(std::fs::read(&outside).unwrap(), b"keep me", "{side}");
            }
            assert!(
                std::fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{side}: the link was left as it was"
            );
        }
    }
}

#[test]
fn an_empty_store_path_is_refused() {
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let err = Store::open(std::path::Path::new(""), Config::default(), clock)
        .err()
        .unwrap();
    assert_eq!(err.code().as_str(), "INVALID_ARGUMENT", "{err}");
}

#[cfg(unix)]
#[test]
fn export_does_not_follow_planted_symlinks() {
    use std::os::unix::fs::symlink;
    let tmp = Tmp::new("export-links");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let mut store = open(&tmp, &clock, Config::default());
    store.post(&msg("me", "hello")).unwrap();
    let outside = tmp.0.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // At the destination: the link is replaced by the export, its target is not written.
    let victim = outside.join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let dest = tmp.0.join("snapshot.json");
    symlink(&victim, &dest).unwrap();
    // At the temporary files' names: never followed.
    let planted = outside.join("planted");
    for name in [
        format!(".snapshot.json.tmp-{}", std::process::id()),
        format!(".snapshot.json.tmp-{}-0", std::process::id()),
    ] {
        symlink(&planted, tmp.0.join(name)).unwrap();
    }
    store.export_to_file(&dest, "me", None, 10, false).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(
        !planted.exists(),
        "a temporary file was written through a link"
    );
    let meta = std::fs::symlink_metadata(&dest).unwrap();
    assert!(meta.file_type().is_file(), "the export replaced the link");
    assert!(std::fs::read_to_string(&dest).unwrap().contains("hello"));
    let err = store
        .export_to_file(std::path::Path::new(""), "me", None, 10, false)
        .unwrap_err();
    assert_eq!(err.code().as_str(), "INVALID_ARGUMENT", "{err}");
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

#[test]
fn a_schema_v4_store_migrates_keeping_what_team_members_could_read() {
    let tmp = Tmp::new("migrate-v4");
    let clock = Arc::new(ManualClock(AtomicI64::new(1_000)));
    {
        let mut s = open(&tmp, &clock, Config::default());
        s.register_agent("b", None, Some("red")).unwrap();
        s.register_agent("a", None, Some("red")).unwrap();
        s.post(&NewMessage {
            privacy: Some("team".into()),
            ..msg("a", "old team news")
        })
        .unwrap();
    }
    {
        let conn = rusqlite::Connection::open(tmp.db()).unwrap();
        conn.execute_batch("ALTER TABLE agents DROP COLUMN team_seq; PRAGMA user_version = 4;")
            .unwrap();
    }
    let mut s = open(&tmp, &clock, Config::default());
    // Registrations older than the join record count from the start: nothing is taken away.
    assert_eq!(
        ids(&s.list("b", None, None, None, 10, None).unwrap().messages),
        ["old team news"]
    );
    s.register_agent("c", None, Some("red")).unwrap();
    assert!(
        s.list("c", None, None, None, 10, None)
            .unwrap()
            .messages
            .is_empty()
    );
}

#[test]
fn cost_totals_saturate_instead_of_turning_into_unreadable_floats() {
    use agent_intercom_scratchpad::{Pricing, Usage};
    let tmp = Tmp::new("cost-overflow");
    let clock = Arc::new(ManualClock(AtomicI64::new(1)));
    let mut store = open(&tmp, &clock, Config::default());
    let usage = Usage {
        input_tokens: 1 << 53,
        ..Usage::default()
    };
    let pricing = Pricing {
        input_per_million_micros: 1 << 53,
        ..Pricing::default()
    };
    for _ in 0..3 {
        store.record_cost("a", "t", &usage, &pricing).unwrap();
    }
    for _ in 0..1100 {
        store
            .record_cost("a", "t", &usage, &Pricing::default())
            .unwrap();
    }
    let rows = store.costs().unwrap();
    assert_eq!(rows[0].calls, 1103);
    assert_eq!(rows[0].usage.input_tokens, i64::MAX as u64, "saturated");
    assert_eq!(rows[0].cost_micros, i64::MAX as u64, "saturated");
}
