//! The scratchpad store against real SQLite files: tasks, rate limits and costs.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_intercom_scratchpad::{Config, Store};
use common::{ManualClock, Tmp, open};

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
