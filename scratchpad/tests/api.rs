//! The JSON request facade that the CLI, the C ABI and Node all go through.

use std::sync::Arc;

use agent_intercom_core::ErrorCode;
use agent_intercom_scratchpad::{Config, Store, SystemClock, api};
use serde_json::{Value, json};

fn store(name: &str) -> (Store, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("aic-api-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let s = Store::open(
        &dir.join("pad.sqlite"),
        Config::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    (s, dir)
}

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn post_then_unread_once_through_the_facade() {
    let (mut s, dir) = store("roundtrip");
    let posted = api::handle(
        &mut s,
        "post",
        &json!({"from": "a", "to": "b", "privacy": "private", "content": "hi", "metadata": {"k": [1, 2]}}),
        &no_env,
    )
    .unwrap();
    assert!(posted["id"].as_str().is_some_and(|id| !id.is_empty()));
    let unread = api::handle(&mut s, "unread", &json!({"agent": "b"}), &no_env).unwrap();
    assert_eq!(unread.as_array().unwrap().len(), 1);
    assert_eq!(unread[0]["content"], "hi");
    assert_eq!(unread[0]["metadata"], json!({"k": [1, 2]}));
    let again = api::handle(&mut s, "unread", &json!({"agent": "b"}), &no_env).unwrap();
    assert_eq!(again, json!([]));
    let other = api::handle(&mut s, "list", &json!({"agent": "c"}), &no_env).unwrap();
    assert_eq!(
        other["messages"],
        json!([]),
        "private message leaked to a third agent"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_requests_get_stable_codes() {
    let (mut s, dir) = store("bad");
    let cases: &[(&str, Value, ErrorCode)] = &[
        (
            "post",
            json!({"from": 7, "content": "x"}),
            ErrorCode::InvalidArgument,
        ),
        ("post", json!({"from": "a"}), ErrorCode::InvalidArgument),
        ("post", json!([1]), ErrorCode::InvalidArgument),
        (
            "post",
            json!({"from": "a", "content": "x", "privacy": "private"}),
            ErrorCode::PrivateWithoutRecipient,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 100000}),
            ErrorCode::InvalidTtl,
        ),
        ("task.get", json!({"id": "nope"}), ErrorCode::NotFound),
        (
            "rate.take",
            json!({"agent": "a", "tool": "t", "agent_per_min": -1}),
            ErrorCode::InvalidArgument,
        ),
        (
            "rate.take",
            json!({"agent": "a", "tool": "t", "tool_per_min": 0}),
            ErrorCode::InvalidArgument,
        ),
        (
            "check.rate",
            json!({"per_minute": 0, "takes": [1]}),
            ErrorCode::InvalidArgument,
        ),
        (
            "check.transition",
            json!({"from": "completed", "to": "working"}),
            ErrorCode::InvalidTransition,
        ),
        (
            "check.visible",
            json!({"message": {}}),
            ErrorCode::InvalidArgument,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 1e300}),
            ErrorCode::InvalidTtl,
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 1.5}),
            ErrorCode::InvalidArgument,
        ),
        ("frobnicate", json!({}), ErrorCode::InvalidArgument),
    ];
    for (op, args, code) in cases {
        let err = api::handle(&mut s, op, args, &no_env).unwrap_err();
        assert_eq!(err.code(), *code, "{op} {args}: {}", err.message());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn task_lifecycle_and_rate_refusal() {
    let (mut s, dir) = store("task");
    let t = api::handle(
        &mut s,
        "task.create",
        &json!({"creator": "a", "assignee": "b", "title": "t"}),
        &no_env,
    )
    .unwrap();
    let id = t["id"].as_str().unwrap().to_string();
    assert_eq!(t["state"], "submitted");
    let err = api::handle(
        &mut s,
        "task.transition",
        &json!({"id": id, "by": "b", "to": "completed"}),
        &no_env,
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidTransition);
    let env = |k: &str| (k == "LEAN_CTX_RATE_LIMIT_AGENT_PER_MIN").then(|| "1".to_string());
    let first = api::handle(
        &mut s,
        "rate.take",
        &json!({"agent": "a", "tool": "t"}),
        &env,
    )
    .unwrap();
    assert_eq!(first["allowed"], true);
    let second = api::handle(
        &mut s,
        "rate.take",
        &json!({"agent": "a", "tool": "t"}),
        &env,
    )
    .unwrap();
    assert_eq!(second["allowed"], false);
    assert!(second["retry_after_ms"].as_u64().unwrap() > 0);
    std::fs::remove_dir_all(dir).unwrap();
}
